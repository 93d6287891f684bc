"""LMNN's loss rounding bound (``loss_with_error``) at every data scale an instance accepts.

The metric of points X·2⁻ˢ is M·2²ˢ with the same loss, so at small data scales (down to the least an
instance takes, squared differences of 2⁻⁹⁷⁰) a metric's entries reach far beyond 1e154, where squaring
them overflows; the bound must stay that of the unscaled problem, scaled exactly.
"""

import numpy as np
import pytest

from sdpembed.problems.lmnn import LMNNInstance, MultiMetricLMNNInstance, loss_scan_threshold, loss_with_error
from sdpembed.solvers.lmnn.fast import solve_lmnn_fast, solve_multi_metric_fast


def _instance(kind, shift: int):
    rng = np.random.default_rng(5)
    X = rng.standard_normal((24, 3))
    y = np.arange(24) % 3
    return kind.from_data(np.ldexp(X, -shift), y, k=2, mu=0.5)


def _metrics(kind) -> np.ndarray:
    rng = np.random.default_rng(6)
    B = rng.standard_normal((3, 3, 3))
    Ms = np.einsum("cij,ckj->cik", B, B)
    return Ms[0] if kind is LMNNInstance else Ms


@pytest.mark.parametrize("kind", [LMNNInstance, MultiMetricLMNNInstance])
@pytest.mark.parametrize("shift", [300, 460])
def test_the_loss_and_its_bound_are_those_of_the_unscaled_data_scaled_exactly(kind, shift):
    # X·2^-s with M·2^2s: every difference, product and hinge is that of X with M scaled by powers of two (no
    # rounding), so the loss and its bound are bit for bit those of the unscaled data; the bound was inf where
    # the metric's entries (~2^600, 2^920) overflowed their squares in the Frobenius norm
    Ms = _metrics(kind)
    loss, error = loss_with_error(_instance(kind, 0), Ms)
    scaled_loss, scaled_error = loss_with_error(_instance(kind, shift), np.ldexp(Ms, 2 * shift))
    assert np.isfinite(error) and 0.0 < error < 1e-10 * loss
    assert (scaled_loss, scaled_error) == (loss, error)
    assert (loss_scan_threshold(_instance(kind, shift), np.ldexp(Ms, 2 * shift))
            == loss_scan_threshold(_instance(kind, 0), Ms))


@pytest.mark.parametrize("solver, kind", [(solve_lmnn_fast, LMNNInstance),
                                          (solve_multi_metric_fast, MultiMetricLMNNInstance)])
def test_data_at_a_tiny_scale_is_solved_to_optimal(solver, kind):
    # points at 2^-300 (~5e-91): the optimal metrics have entries ~2^600; the solvers work on the points scaled to
    # unit size, and the loss's rounding bound on the full instance must not be inf (status inaccurate, gap inf)
    reference = solver(_instance(kind, 0))
    result = solver(_instance(kind, 300))
    assert reference.status == "optimal" and result.status == "optimal", result.message
    assert abs(result.objective - reference.objective) <= 1e-6 * reference.objective
    assert np.isfinite(result.relative_gap) and abs(result.relative_gap) <= 1e-5
