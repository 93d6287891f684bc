"""Solutions at the edges of the doubles get a verdict, never a traceback (issue 24, review): entries near
the largest double (an eigenvalue, a trace or a form beyond it), subnormal ones, and forms that overflow
to NaN, for every problem, through ``verify_solution``, ``sdpembed verify`` and the suite's grading.

Before, ``certify``'s ``eigvalsh`` of such a matrix stopped with ``LinAlgError: Eigenvalues did not
converge`` (``sdpembed verify`` exit 2, the suite's BAD SOLUTION), LMNN's symmetrisation (M + Mᵀ)/2
overflowed into "M contains NaN or infinite entries" for a finite M, and a NaN violation or objective
(inf − inf) passed its check (every comparison with NaN is false). The exact values are checked with
:class:`fractions.Fraction`.
"""

from __future__ import annotations

import json
import warnings
from fractions import Fraction

import numpy as np
import pytest

from sdpembed import get_problem
from sdpembed.cli import main
from sdpembed.validation.certify import Tolerances
from sdpembed.validation.suite import load_suite
from sdpembed.validation.suite.runner import grade_solution
from sdpembed.validation.verify import verify_solution

#: One small suite instance per problem, secant and point form for the NuMax family.
CASES = ["numax-squares5", "numax-squares6-points", "numax_class-shapes6", "numax_class-clusters3x8-points",
         "lmnn-iris8", "lmnn_multi-iris8", "mvu-equality-swiss10", "mvu-slack-swiss10", "mvu_oos-swiss-k3"]

BIG = 1.7e308                       # finite; 2·BIG and any sum of two such entries are not


def _entry(name):
    return next(entry for entry in load_suite().entries if entry.name == name)


def _extremes(shape):
    """Finite matrices of the variable's shape at the edges of the doubles."""
    n = shape[-1]
    eye = np.broadcast_to(np.eye(n), shape)
    signs = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    return {
        "ones": np.full(shape, BIG),                                   # an eigenvalue n·BIG beyond the doubles
        "diagonal": BIG * eye,                                         # a trace beyond them
        "signed": BIG * eye * signs,                                   # λ = ±BIG: not PSD
        "triangle": np.broadcast_to(np.triu(np.full((n, n), BIG)), shape).copy(),     # asymmetric
        "subnormal": 5e-324 * eye,
    }


@pytest.mark.parametrize("name", CASES)
def test_extreme_matrices_get_a_verdict_without_warnings(name):
    """Every extreme matrix gets a certificate (FAIL: none is the optimum) with no exception and no
    RuntimeWarning, its checks computed on the matrix scaled by a power of two; the spectrum's
    verdicts agree with the exact ones."""
    entry = _entry(name)
    instance = entry.load()
    shape = instance.variable_shape
    for kind, matrix in _extremes(shape).items():
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            cert = verify_solution(instance, matrix)
        assert not cert.passed and cert.reasons, (name, kind)
        if kind == "ones":
            # eigenvalues of BIG·11ᵀ (block by block): n·BIG, beyond the largest double, and 0
            assert Fraction(shape[-1]) * Fraction(BIG) > Fraction(float(np.finfo(np.float64).max))
            # the least is 0 up to the eigen-solver's rounding, relative to the largest
            assert cert.psd_violation < 1e-13 and cert.asymmetry == 0.0
        if kind == "signed":
            assert cert.min_eigenvalue == -BIG and cert.psd_violation == 1.0      # BIG / max(1, BIG), exactly
            assert any("PSD violation" in reason for reason in cert.reasons)
        if kind == "triangle":
            # max |X − Xᵀ| / max(1, max |X|) = BIG / BIG exactly: the difference BIG − 0 needs no sum
            assert cert.asymmetry == float(Fraction(BIG) / max(Fraction(1), Fraction(BIG))) == 1.0
        if kind == "subnormal":
            assert cert.asymmetry == 0.0 and cert.psd_violation == 0.0 and cert.min_eigenvalue == 5e-324


@pytest.mark.parametrize("name", ["numax-squares5", "lmnn-iris8", "mvu-equality-swiss10"])
def test_sdpembed_verify_and_the_suite_fail_an_overflowing_solution(name, tmp_path, capsys):
    """``sdpembed verify`` exits 1 with strict JSON (it exited 2 on LinAlgError), and the suite grades
    the file FAIL (it was BAD SOLUTION)."""
    entry = _entry(name)
    instance = entry.load()
    variable = get_problem(instance.problem).variable
    path = tmp_path / "solution.npz"
    np.savez(path, **{variable: _extremes(instance.variable_shape)["ones"]})
    instance_path = tmp_path / "instance.npz"
    from sdpembed.io import save_instance

    save_instance(instance, instance_path)
    assert main(["verify", str(instance_path), str(path), "--json"]) == 1
    out = capsys.readouterr().out
    report = json.loads(out, parse_constant=lambda constant: pytest.fail(f"not JSON: {constant}"))
    assert report["passed"] is False
    record = grade_solution(entry, path, Tolerances())
    assert record.result == "fail" and record.reasons


def test_a_nan_violation_fails_and_says_why():
    """MVU's edge distances of K = BIG·11ᵀ are inf − inf = NaN: the violation is not within the tolerance
    (NaN > tol was false, so that check passed)."""
    instance = _entry("mvu-equality-swiss10").load()
    cert = verify_solution(instance, np.full(instance.variable_shape, BIG))
    assert np.isnan(cert.max_violation)
    assert any(reason.startswith("constraint violation nan") for reason in cert.reasons), cert.reasons


def test_a_nan_objective_fails_and_says_why():
    """The multi-metric LMNN loss of BIG·11ᵀ metrics is NaN (inf − inf in its hinges): reported as such,
    not as a relative error 'nan exceeds' the tolerance."""
    instance = _entry("lmnn_multi-iris8").load()
    cert = verify_solution(instance, np.full(instance.variable_shape, BIG))
    assert np.isnan(cert.objective)
    assert any(reason.startswith("objective nan") for reason in cert.reasons), cert.reasons


def test_lmnn_symmetrises_a_finite_metric_near_the_largest_double():
    """(M + Mᵀ)/2 overflowed for entries near the largest double, so a finite M was refused as containing
    NaN or infinite entries; 0.5M + 0.5Mᵀ is the same double elsewhere, and finite here."""
    instance = _entry("lmnn-iris8").load()
    M = np.triu(np.full(instance.variable_shape, BIG))
    with np.errstate(over="ignore", invalid="ignore"):
        value = instance.objective(M)
    assert np.isinf(value) and value > 0
    rng = np.random.default_rng(0)
    A = rng.normal(size=instance.variable_shape)
    assert instance.objective(A) == instance.objective(0.5 * (A + A.T))
