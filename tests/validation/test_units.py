"""The oracle judges an answer at the data's scale: an instance and its answer scaled together by a power of
two get the same grades, bit for bit, and a wrong answer fails at every scale (the units of
``certify``: ``objective_unit``, ``matrix_unit``)."""

from __future__ import annotations

import dataclasses
from functools import cache

import numpy as np
import pytest

from sdpembed._files import save_npz
from sdpembed.problems import LMNNInstance, MVUInstance, MVUOOSInstance, NuMaxInstance
from sdpembed.registry import solve
from sdpembed.validation.suite import grade_solution, load_suite
from sdpembed.validation.verify import verify_solution

EXPONENTS = (-250, -100, -30, 0, 1, 30, 100)
VARIANTS = ("equality", "inequality", "slack", "min_trace")


@cache
def _mvu(variant: str) -> tuple[MVUInstance, np.ndarray]:
    """A 10-point MVU instance of ``variant`` at unit scale, its certified optimum stored, and its optimal K."""
    X = np.random.default_rng(3).standard_normal((10, 3))
    instance = MVUInstance.from_points(X, n_neighbors=4, variant=variant,
                                       omega=0.9 if variant == "slack" else None)
    result = solve(instance, method="ipm")
    assert result.status == "optimal"
    return dataclasses.replace(instance, optimum=result.objective), result.solution


def _scaled(instance: MVUInstance, e: int) -> MVUInstance:
    """The instance with every squared distance and its optimum scaled exactly by 4^e."""
    return dataclasses.replace(instance, sqdist=np.ldexp(instance.sqdist, 2 * e),
                               optimum=float(np.ldexp(instance.optimum, 2 * e)))


def _grades(cert) -> tuple[float, ...]:
    return cert.objective_error, cert.max_violation, cert.asymmetry, cert.psd_violation


@pytest.mark.parametrize("variant", VARIANTS)
def test_mvu_answers_are_graded_alike_at_every_scale(variant):
    """The optimal K scaled by 4^e passes with the grades of e = 0, bit for bit; K = 0 and K off by 10 %
    fail at every scale (before the units, the absolute objective floor 1 passed K = 0 and 0.9 K of the
    inequality variant at 4^-30: every objective lay within 1e-4 of an optimum of ~1e-16)."""
    instance, K = _mvu(variant)
    reference = _grades(verify_solution(instance, K))
    for e in EXPONENTS:
        scaled = _scaled(instance, e)
        cert = verify_solution(scaled, np.ldexp(K, 2 * e))
        assert cert.passed, (e, cert.reasons)
        assert _grades(cert) == reference, e
        for wrong in (np.zeros_like(K), 0.9 * K, 1.1 * K):
            cert = verify_solution(scaled, np.ldexp(wrong, 2 * e))
            assert not cert.passed, (e, _grades(cert))


def test_mvu_psd_and_symmetry_are_judged_at_the_data_scale():
    """K made indefinite or asymmetric by a tenth of its own size fails at 4^-30 as at unit scale (relative
    to max(1, λ_max) both passed there: λ_max ~ 1e-17)."""
    instance, K = _mvu("inequality")
    top = float(np.linalg.eigvalsh(K)[-1])
    v = np.linalg.eigh(K)[1][:, 0]                     # a null direction of the optimum (rank-deficient)
    indefinite = K - 0.1 * top * np.outer(v, v)
    asymmetric = K.copy()
    asymmetric[0, 1] += 0.1 * np.abs(K).max()
    for e in (-30, 0, 30):
        scaled = _scaled(instance, e)
        cert = verify_solution(scaled, np.ldexp(indefinite, 2 * e))
        assert not cert.passed and any("PSD violation" in r for r in cert.reasons), (e, cert.reasons)
        cert = verify_solution(scaled, np.ldexp(asymmetric, 2 * e))
        assert not cert.passed and any("asymmetric" in r for r in cert.reasons), (e, cert.reasons)


def test_suite_grading_refuses_a_wrong_answer_of_a_tiny_instance(tmp_path):
    """The suite's grading of a solution file (``grade_solution``, as ``sdpembed suite run``) at 4^-30: the
    right K passes, K = 0 fails."""
    entry = load_suite().select(names=["mvu-inequality-swiss10"])[0]
    instance, K = _mvu("inequality")
    scaled = _scaled(instance, -30)
    for name, matrix, expected in (("right", np.ldexp(K, -60), "pass"), ("zero", np.zeros_like(K), "fail")):
        path = save_npz(tmp_path / f"{name}.npz", {"K": matrix}, "solution file")
        assert grade_solution(entry, path, None, instance=scaled).result == expected, name


def test_mvu_units_are_powers_of_two_of_tau():
    instance, _ = _mvu("equality")
    for e in (-500, 0, 400):
        scaled = _scaled(instance, e)
        unit = scaled.objective_unit
        assert unit == scaled.matrix_unit and unit <= scaled.tau < 2 * unit
        assert np.frexp(unit)[0] == 0.5                 # a power of two: division by it is exact


def test_oos_objective_is_judged_at_the_data_scale():
    """MVU out-of-sample: Y → cY, D → c²D scales the objective by c²; a wrong answer (y = 0, s = 0) fails at
    c = 2^-40 as at c = 1, the right one passes with the same objective error."""
    rng = np.random.default_rng(1)
    Y = rng.standard_normal((6, 2))
    y_true = rng.standard_normal(2)
    D = np.sum((Y - y_true) ** 2, axis=1) * (1.0 + 0.05 * rng.standard_normal(6))
    instance = MVUOOSInstance(Y=Y, sqdist=D)
    result = solve(instance)
    assert result.status == "optimal"
    instance = dataclasses.replace(instance, optimum=result.objective)
    reference = verify_solution(instance, result.solution).objective_error
    r = Y.shape[1]
    for e in (-40, 0, 40):
        scaled = MVUOOSInstance(Y=np.ldexp(Y, e), sqdist=np.ldexp(D, 2 * e),
                                optimum=float(np.ldexp(result.objective, 2 * e)))
        S = result.solution.copy()
        S[:r, r] = S[r, :r] = np.ldexp(S[:r, r], e)
        S[r, r] = np.ldexp(S[r, r], 2 * e)
        cert = verify_solution(scaled, S)
        assert cert.passed and cert.objective_error == reference, (e, cert.reasons)
        assert not verify_solution(scaled, MVUOOSInstance.matrix(np.zeros(r), 0.0)).passed, e


def test_lmnn_metric_is_judged_at_the_data_scale():
    """LMNN's metric of X·2^e is M·4^-e: a metric made indefinite along a direction no difference of the data
    spans (the loss unchanged) fails at X·2^200 as at unit scale (relative to max(1, λ_max) it passed there:
    λ_max ~ 1e-120), and the right metric passes with the same grades."""
    rng = np.random.default_rng(0)
    X = np.hstack([rng.standard_normal((18, 2)) + np.repeat(np.eye(3, 2) * 3, 6, axis=0), np.zeros((18, 1))])
    y = np.repeat(np.arange(3), 6)
    instance = LMNNInstance.from_data(X, y, k=2)
    result = solve(instance)
    assert result.status == "optimal"
    instance = dataclasses.replace(instance, optimum=result.objective)
    M = result.solution
    wrong = M.copy()
    wrong[2, 2] = -0.5 * float(np.linalg.eigvalsh(M)[-1])  # the third coordinate: 0 in every point
    reference = _grades(verify_solution(instance, M))
    for e in (-200, 0, 200):
        scaled = dataclasses.replace(instance, X=np.ldexp(X, e))
        cert = verify_solution(scaled, np.ldexp(M, -2 * e))
        assert cert.passed and _grades(cert) == reference, (e, cert.reasons)
        cert = verify_solution(scaled, np.ldexp(wrong, -2 * e))
        assert not cert.passed and any("PSD violation" in r for r in cert.reasons), (e, cert.reasons)


def test_units_of_scale_free_problems_are_one():
    X = np.random.default_rng(0).standard_normal((6, 3))
    assert NuMaxInstance(delta=0.2, X=np.ldexp(X, -300)).objective_unit == 1.0
    assert NuMaxInstance(delta=0.2, X=np.ldexp(X, 300)).matrix_unit == 1.0
    lmnn = LMNNInstance.from_data(X, np.array([0, 0, 0, 1, 1, 1]), k=1)
    assert lmnn.objective_unit == 1.0

