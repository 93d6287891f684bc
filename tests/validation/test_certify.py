"""validation.certify: passes a correct solution, fails wrong ones, and says why."""

import numpy as np
import pytest

from sdpembed import certify
from sdpembed.validation import Tolerances


def test_admm_solution_passes_with_computed_ground_truth(instances, solved):
    cert = certify(instances["gaussian"], solved["gaussian"]["admm"], ground_truth=True)
    assert cert.passed, cert.reasons
    assert cert.optimum_source.startswith("computed with CVXPY")
    assert cert.objective_error <= 1e-4
    assert cert.rank == solved["gaussian"]["admm"].extra["rank"]
    assert np.isfinite(cert.dual_bound) and 0 <= cert.relative_gap <= 1e-4


def test_matrix_without_optimum_only_checks_feasibility(instances, solved):
    cert = certify(instances["squares49"], solved["squares49"]["admm"].solution)
    assert cert.passed and cert.optimum_source == "unknown" and np.isnan(cert.objective_error)


def test_perturbed_solutions_fail(instances, solved):
    instance, result = instances["digits"], solved["digits"]["admm"]
    optimum = solved["digits"]["clarabel"].objective
    scaled = certify(instance, 1.01 * result.solution, optimum=optimum)
    assert not scaled.passed and any("violation" in r for r in scaled.reasons)
    not_psd = result.solution - 1e-3 * np.eye(instance.dim)
    cert = certify(instance, not_psd, optimum=optimum, tolerances=Tolerances(feasibility=1.0, objective=1.0))
    assert not cert.passed and any("not PSD" in r for r in cert.reasons)
    identity = certify(instance, np.eye(instance.dim), optimum=optimum)
    assert not identity.passed and any("objective error" in r for r in identity.reasons)


def test_false_dual_bound_is_caught(instances, solved):
    optimum = solved["gaussian"]["clarabel"].objective
    cert = certify(instances["gaussian"], solved["gaussian"]["admm"].solution, optimum=optimum, dual_bound=optimum + 1)
    assert not cert.passed and any("not a bound" in r for r in cert.reasons)


def test_bad_shapes(instances):
    with pytest.raises(ValueError, match="shape"):
        certify(instances["gaussian"], np.eye(3))
    with pytest.raises(ValueError, match="NaN"):
        certify(instances["gaussian"], np.full((20, 20), np.nan))
    with pytest.raises(ValueError, match="unknown problem"):
        certify(object(), np.eye(2))


@pytest.mark.parametrize("ground_truth", [None, "CLARABEL"])
def test_an_objective_that_cannot_be_checked_is_said_before_the_scan(ground_truth, monkeypatch, capsys):
    """No optimum stored, none computable (beyond CVXPY's size, or not asked for) and no
    multipliers: the note comes before the scan of all pairs, which reports its progress."""
    from sdpembed import NuMaxInstance
    from sdpembed.datasets import gaussian_points
    from sdpembed.validation.verify import verify_solution

    instance = NuMaxInstance(delta=0.2, X=gaussian_points(220, 4, random_state=0))   # 24,090 pairs
    events, scanned = [], []
    real = NuMaxInstance.check_violation

    def scan(self, P, *args, progress=None, **kwargs):
        events.append("scan")
        return real(self, P, *args, progress=lambda k: scanned.append(k) or progress(k), **kwargs)

    monkeypatch.setattr(NuMaxInstance, "check_violation", scan)
    cert = verify_solution(instance, 0.5 * np.eye(4), ground_truth=ground_truth, note=events.append, progress=True)
    assert events[-1] == "scan" and len(events) >= 2 and "could not be checked" in events[0]
    assert not cert.passed and any("could not be checked" in reason for reason in cert.reasons)
    assert sum(scanned) == instance.n_constraints
    assert "scanning all pairs" in capsys.readouterr().err                 # the bar, on stderr, as asked
    verify_solution(instance, 0.5 * np.eye(4), ground_truth=ground_truth)
    assert capsys.readouterr().err == ""                                    # not asked: no bar
