"""The certificate of the variational SDP (3.25) (thesis Sec. 3.1.8): the proved bound lies above
the objective of every PSD Z of the basis, is tight at the SDP's solution, weak for a poor Z, and
variational MVU reports it."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from sdpembed.datasets import sensor_network, swiss_roll
from sdpembed.formulations.mvu import solve_variational_sdp
from sdpembed.graphs import neighborhood_graph
from sdpembed.problems.mvu import variational_dual_bound
from sdpembed.solvers.mvu.variational import laplacian_basis, variational_mvu


def _roll(n: int = 300) -> tuple[np.ndarray, np.ndarray]:
    X, _ = swiss_roll(n, noise=0.05, random_state=0)
    edges, D = neighborhood_graph(X, 6)
    return edges, D / D.max()


@pytest.mark.parametrize(("m", "omega"), [(8, 0.9), (12, 0.5), (16, 0.99)])
def test_bound_is_above_every_psd_z_and_tight_at_the_sdp_solution(m: int, omega: float) -> None:
    edges, D = _roll()
    Q = laplacian_basis(300, edges, m)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        Z, _ = solve_variational_sdp(Q, edges, D, omega)
    bound, objective = variational_dual_bound(Q, edges, D, omega, Z)
    # the gap is that of the multipliers Z implies: Clarabel's Z leaves about 1e-4
    assert objective <= bound <= objective + 2e-4 * abs(bound)
    rng = np.random.default_rng(m)
    for scale in (0.5, 0.9, 1.0, 1.1, 2.0):
        G = rng.standard_normal((m, m)) * 0.05 * np.sqrt(np.abs(Z).max())
        other = scale * Z + G @ G.T
        assert variational_dual_bound(Q, edges, D, omega, other)[1] <= bound
    # a poor Z yields a valid but weak bound
    weak, weak_objective = variational_dual_bound(Q, edges, D, omega, 0.5 * Z)
    assert weak >= bound - 1e-9 * abs(bound) and weak - weak_objective > 10 * (bound - objective)


def test_the_bound_is_proved_not_estimated() -> None:
    # multipliers exactly at the feasibility edge are moved strictly inside before the proof: the
    # bound comes from a point whose QᵀL(u)Q − (1 − ω)I is factorised with a positive shift
    edges, D = _roll(120)
    Q = laplacian_basis(120, edges, 6)
    omega = 0.8
    bound, objective = variational_dual_bound(Q, edges, D, omega, np.zeros((6, 6)))
    # Z = 0: objective −ω‖D‖², and u = −2ωD is not dual feasible (QᵀL(u)Q is negative definite), so the
    # bound must come from adding a multiple of 1
    assert objective == pytest.approx(-omega * float(D @ D))
    assert np.isfinite(bound) and bound >= objective


def test_variational_mvu_reports_the_certified_gap() -> None:
    _, edges, D = sensor_network(400, radius=0.15, max_neighbors=8, noise=0.1, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = variational_mvu(edges, D, 400, solve_sdp=solve_variational_sdp, n_basis=10, omega=0.9,
                              n_components=2)
    assert np.isfinite(res.sdp_bound) and res.sdp_objective <= res.sdp_bound
    assert 0.0 <= res.sdp_gap <= 1e-4
