"""The fast kernels of variational MVU (thesis Sec. 3.1.8): the refinement's objective and gradient
against the edge-by-edge formula and finite differences, the sparse shift-invert basis against a
dense eigendecomposition, and the refinement against a plain L-BFGS on the textbook gradient."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.linalg import subspace_angles

from sdpembed.datasets import sensor_network, swiss_roll
from sdpembed.graphs import graph_laplacian, neighborhood_graph
from sdpembed.problems.mvu import incidence_matrix
from sdpembed.solvers.lbfgs import minimize_lbfgs
from sdpembed.solvers.mvu.variational import _EdgeEnergy, bottom_eigenvectors, local_energy, refine_outputs


def _plain(Y: np.ndarray, edges: np.ndarray, D: np.ndarray, omega: float) -> tuple[float, np.ndarray]:
    """ω Σ_e (‖y_i − y_j‖² − D_e)² − (1 − ω) Σ‖y_i‖² over centred Y, gradient 4ω Bᵀ(e ∘ BY) − 2(1 − ω)Y."""
    Y = Y - Y.mean(axis=0)
    B = incidence_matrix(Y.shape[0], edges)
    BY = B @ Y
    e = np.sum(BY * BY, axis=1) - D
    grad = 4.0 * omega * (B.T @ (e[:, None] * BY)) - 2.0 * (1.0 - omega) * Y
    return omega * float(e @ e) - (1.0 - omega) * float(np.sum(Y * Y)), grad - grad.mean(axis=0)


def _network(n: int = 300, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    positions, edges, D = sensor_network(n, radius=0.15, max_neighbors=8, noise=0.1, random_state=seed)
    return positions, edges, D / D.max()


@pytest.mark.parametrize(("r", "omega"), [(1, 1.0), (2, 1.0), (5, 0.99)])
def test_edge_energy_matches_the_edge_by_edge_formula_and_finite_differences(r: int, omega: float) -> None:
    _, edges, D = _network()
    n = 300
    rng = np.random.default_rng(r)
    Y = rng.normal(scale=0.3, size=(n, r))
    energy = _EdgeEnergy(n, r, edges, D, omega)
    np.testing.assert_array_equal(energy.unpack(energy.pack(Y)), Y)
    value, grad = energy(energy.pack(Y))
    expected_value, expected_grad = _plain(Y, edges, D, omega)
    assert value == pytest.approx(expected_value, rel=1e-12)
    np.testing.assert_allclose(energy.unpack(grad), expected_grad, rtol=1e-10, atol=1e-12 * np.abs(expected_grad).max())
    # central differences along random directions
    z = energy.pack(Y)
    for _ in range(3):
        v = rng.normal(size=z.size)
        v -= v.reshape(r, n).mean(axis=1, keepdims=True).repeat(n, axis=1).ravel()   # centred directions
        h = 1e-6
        numeric = (energy(z + h * v)[0] - energy(z - h * v)[0]) / (2 * h)
        assert numeric == pytest.approx(float(grad @ v), rel=1e-6)


def test_edge_energy_does_not_depend_on_the_order_or_orientation_of_the_edges() -> None:
    _, edges, D = _network(seed=1)
    n, r = 300, 3
    rng = np.random.default_rng(0)
    Y = rng.normal(size=(n, r))
    order = rng.permutation(len(edges))
    a = _EdgeEnergy(n, r, edges, D, 0.9)
    b = _EdgeEnergy(n, r, edges[order][:, ::-1], D[order], 0.9)
    va, ga = a(a.pack(Y))
    vb, gb = b(b.pack(Y))
    assert va == pytest.approx(vb, rel=1e-12)
    np.testing.assert_allclose(a.unpack(ga), b.unpack(gb), rtol=1e-10, atol=1e-12 * np.abs(ga).max())


def test_sparse_bottom_eigenvectors_span_the_dense_ones() -> None:
    X, _ = swiss_roll(900, noise=0.05, random_state=3)          # n > 600: the shift-invert path
    edges, _ = neighborhood_graph(X, 6, angles=False)
    L = graph_laplacian(len(X), edges)
    Q = bottom_eigenvectors(L, 10)
    w, U = np.linalg.eigh(L.toarray())
    assert w[11] - w[10] > 1e-3 * w[10]                         # the wanted subspace is well separated
    assert np.max(subspace_angles(Q, U[:, 1:11])) < 1e-8
    np.testing.assert_allclose(Q.T @ Q, np.eye(10), atol=1e-12)
    np.testing.assert_allclose(Q.sum(axis=0), 0.0, atol=1e-10)


@pytest.mark.parametrize("omega", [1.0, 0.999])
def test_refinement_reaches_the_objective_of_a_plain_lbfgs(omega: float) -> None:
    positions, edges, D = _network(400, seed=2)
    n = 400
    rng = np.random.default_rng(5)
    r = 2 if omega == 1.0 else 4
    Y0 = np.hstack([positions, np.zeros((n, r - 2))]) + rng.normal(scale=0.02, size=(n, r))
    # the same L-BFGS on the same function: the iterates agree but for rounding, which a
    # non-convex energy amplifies over many iterations (so: the first 25)
    Y, trace = refine_outputs(Y0, edges, D, omega=omega, max_iter=25, precondition=False)

    def fun(z):
        value, grad = _plain(z.reshape(n, r), edges, D, omega)
        return value, grad.ravel()

    reference = minimize_lbfgs(fun, (Y0 - Y0.mean(axis=0)).ravel(), max_iter=25, ftol=1e-5, window=10, memory=20)
    np.testing.assert_allclose(trace, reference.trace, rtol=1e-9)
    np.testing.assert_allclose(Y, reference.x.reshape(n, r), rtol=0, atol=1e-8 * np.abs(Y).max())
    assert _plain(Y, edges, D, omega)[0] == pytest.approx(trace[-1], rel=1e-12)
    np.testing.assert_allclose(Y.mean(axis=0), 0.0, atol=1e-12)
    if omega == 1.0:
        assert local_energy(Y, edges, D) < 0.2 * local_energy(Y0, edges, D)


def test_blockwise_qr_compression_gives_the_same_variational_sdp(monkeypatch: pytest.MonkeyPatch) -> None:
    from sdpembed.formulations import mvu as formulation
    from sdpembed.problems import mvu as problem

    _, edges, D = _network(250, seed=4)
    Q = bottom_eigenvectors(graph_laplacian(250, edges), 6)
    whole, status = formulation.solve_variational_sdp(Q, edges, D, 0.99)
    monkeypatch.setattr(problem, "VARIATIONAL_QR_BLOCK", 37)             # many blocks, a short last one
    assert len(edges) % 37 and len(edges) > 10 * 37
    blocks, status_blocks = formulation.solve_variational_sdp(Q, edges, D, 0.99)
    assert status == status_blocks == "optimal"
    np.testing.assert_allclose(blocks, whole, rtol=0, atol=1e-6 * np.abs(whole).max())



def test_laplacian_preconditioning_reaches_a_lower_energy_in_fewer_iterations() -> None:
    X, params = swiss_roll(1500, noise=0.05, random_state=1)
    edges, D = neighborhood_graph(X, 5)
    rng = np.random.default_rng(0)
    truth = np.column_stack([params[:, 0] * 5.0, params[:, 1]])       # a crude, distorted start
    Y0 = truth + rng.normal(scale=0.5, size=truth.shape)
    plain, plain_trace = refine_outputs(Y0, edges, D, max_iter=300, precondition=False)
    fast, fast_trace = refine_outputs(Y0, edges, D, max_iter=300)
    assert len(fast_trace) < 0.5 * len(plain_trace)
    assert local_energy(fast, edges, D) < local_energy(plain, edges, D)
    assert local_energy(fast, edges, D) == pytest.approx(fast_trace[-1], rel=1e-10)
