"""The LMNN proofs on the span of the point differences (issue 27): raw pixels leave directions in
which no two points differ — not only constant pixels, but e.g. two pixels non-zero in one image only
— exact null vectors of P and of every C(α) that no eigenvalue test with rounding margins can prove
PSD. ``spanning_coordinates`` finds, in exact arithmetic, coordinates that determine every
difference; the bounds test there, and the solvers solve there."""

from __future__ import annotations

import functools
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sdpembed.problems import LMNNInstance, MultiMetricLMNNInstance
from sdpembed.problems import lmnn as lmnn_module
from sdpembed.problems.lmnn import (
    lmnn_dual_bound,
    loss_with_error,
    multi_metric_dual_bound,
    spanning_coordinates,
    triplet_outer_sum,
    varying_coordinates,
)
from sdpembed.registry import PROBLEMS, solve

from ..validation.test_proofs_numax_lmnn import corrupt


def exact_pivots(X: np.ndarray) -> list[int]:
    """The pivot columns of the rows x_i − x_0, by Gaussian elimination in Fractions (the reference)."""
    rows = [[Fraction(a) - Fraction(b) for a, b in zip(x, X[0], strict=True)] for x in X[1:]]
    pivots, r = [], 0
    for col in range(X.shape[1]):
        pivot = next((i for i in range(r, len(rows)) if rows[i][col] != 0), None)
        if pivot is None:
            continue
        rows[r], rows[pivot] = rows[pivot], rows[r]
        for i in range(r + 1, len(rows)):
            f = rows[i][col] / rows[r][col]
            rows[i] = [a - f * b for a, b in zip(rows[i], rows[r], strict=True)]
        pivots.append(col)
        r += 1
    return pivots


def dependent_data(seed: int, n: int = 12, scale: float = 1 / 16, lone: bool = True) -> np.ndarray:
    """Dyadic points (multiples of ``scale``) with every kind of exact dependence among the coordinates:
    a constant one, two that are non-zero in one point only (raw digits' pixels 40 and 48; zero with
    ``lone=False``), and one that is the sum of two others."""
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 17, size=(n, 3)) * scale
    pixels = rng.integers(1, 17, size=2) * scale
    single = np.zeros((n, 2))
    single[int(rng.integers(n))] = pixels if lone else 0.0
    return np.column_stack([base[:, 0], np.full(n, 3 * scale), single[:, 0], base[:, 1], single[:, 1],
                            base[:, 0] + base[:, 1], base[:, 2]])


@pytest.mark.parametrize("seed", range(6))
def test_spanning_coordinates_are_the_exact_pivot_columns(seed):
    rng = np.random.default_rng(seed)
    cases = [dependent_data(seed),
             rng.integers(-5, 6, size=(9, 4)) @ rng.integers(-3, 4, size=(4, 7)) / 8.0,   # rank ≤ 4 of 7
             rng.standard_normal((10, 6)) * 2.0 ** rng.integers(-30, 30, size=6)]       # full rank, wide exponents
    for X in cases:
        assert spanning_coordinates(X).tolist() == exact_pivots(X)


def test_many_rows_and_the_elimination_budget(monkeypatch):
    X = np.random.default_rng(2).integers(0, 17, size=(100, 5)) / 16.0
    assert spanning_coordinates(X).tolist() == [0, 1, 2, 3, 4]          # proved on the first rows alone
    dependent = np.column_stack([X, X[:, 0] + X[:, 1]])
    assert spanning_coordinates(dependent).tolist() == exact_pivots(dependent) == [0, 1, 2, 3, 4]
    monkeypatch.setattr(lmnn_module, "EXACT_ELIMINATION_BUDGET", 0.0)  # no elimination: every varying one
    assert spanning_coordinates(dependent).tolist() == [0, 1, 2, 3, 4, 5]


def test_rounded_dependence_is_no_dependence():
    """x₂ = fl(0.1·x₀) is not an exact multiple of x₀ in every row: only an exact rank may drop a
    coordinate (a floating-point rank test would, and the proof would then be unsound)."""
    X = np.random.default_rng(3).standard_normal((8, 2))
    X = np.column_stack([X, 0.1 * X[:, 0]])
    assert np.linalg.matrix_rank(X[1:] - X[0]) == 2
    assert spanning_coordinates(X).tolist() == exact_pivots(X) == [0, 1, 2]


def test_digits_pattern_keeps_one_of_the_lone_pixels():
    X = dependent_data(0)
    assert varying_coordinates(X).tolist() == [0, 2, 3, 4, 5, 6]
    assert spanning_coordinates(X).tolist() == [0, 2, 3, 6]        # 4 ∝ 2 and 5 = 0 + 3 are dropped


def test_outer_sum_error_bounds_the_spectral_norm():
    """triplet_outer_sum's error is a bound on ‖D − exact‖₂ (certified_min_eig subtracts it once)."""
    rng = np.random.default_rng(1)
    X = rng.standard_normal((30, 5)) * 1e3
    triplets = rng.integers(0, 30, size=(500, 3))
    w = rng.uniform(0.0, 1.0, 500)
    D, error = triplet_outer_sum(X, triplets, w)
    exact = [[Fraction(0)] * 5 for _ in range(5)]
    for (i, j, l), wt in zip(triplets, w, strict=True):
        u = [Fraction(X[i, a]) - Fraction(X[j, a]) for a in range(5)]
        v = [Fraction(X[i, a]) - Fraction(X[l, a]) for a in range(5)]
        for a in range(5):
            for b in range(5):
                exact[a][b] += Fraction(wt) * (u[a] * u[b] - v[a] * v[b])
    difference = np.array([[float(Fraction(D[a, b]) - exact[a][b]) for b in range(5)] for a in range(5)])
    assert 0.0 < np.linalg.norm(difference, 2) <= error


def span_instance(kind, seed: int = 0):
    """Three classes of eight points, with lone pixels. In the multi-metric instance a pixel non-zero in
    one point only is also a direction that the pull matrix P_c of every other class misses while its
    impostor pairs see it — an exact null vector of P_c inside the span of all differences, which
    multi_metric_dual_bound removes by testing each metric on the span of its own target differences."""
    y = np.repeat([0, 1, 2], 8)
    return kind.from_data(dependent_data(seed, n=y.size), y, k=2, mu=0.5)


@pytest.mark.parametrize("kind", [LMNNInstance, MultiMetricLMNNInstance])
def test_a_non_coordinate_null_direction_no_longer_voids_the_proof(kind, monkeypatch):
    instance = span_instance(kind)
    result = solve(instance)
    truth = solve(instance, "cvxpy")
    bound = PROBLEMS[instance.problem].dual_from_result(instance, result)
    proven = PROBLEMS[instance.problem].verified_bound(instance, bound, result.solution)
    assert result.status == "optimal" and result.relative_gap <= 1e-5
    assert 0.0 < proven <= truth.objective + 1e-7 * max(1.0, truth.objective)
    assert proven == pytest.approx(result.objective, rel=1e-5)
    # on the varying coordinates alone (the proof before) the same multipliers prove nothing
    monkeypatch.setattr(lmnn_module, "spanning_coordinates", varying_coordinates)
    fresh = span_instance(kind)
    assert PROBLEMS[instance.problem].verified_bound(fresh, bound, result.solution) == 0.0


def test_the_solver_is_not_optimal_when_its_certificate_cannot_close_the_gap(monkeypatch):
    monkeypatch.setattr(lmnn_module, "spanning_coordinates", varying_coordinates)
    result = solve(span_instance(LMNNInstance))
    assert result.status != "optimal" and result.dual_bound == 0.0


def test_the_solution_is_one_of_the_full_problem():
    """Solved on the spanning coordinates, the metric is padded with zeros: its loss on the full data is
    the reported objective, and the multipliers refer to the instance's own triplets."""
    instance = span_instance(LMNNInstance)
    result = solve(instance)
    dropped = np.setdiff1d(np.arange(instance.dim), instance.spanning_coordinates)
    assert np.all(result.solution[dropped] == 0.0) and np.all(result.solution[:, dropped] == 0.0)
    loss, error = loss_with_error(instance, result.solution)
    assert loss == result.objective and instance.objective(result.solution) == pytest.approx(loss, rel=1e-13)
    assert lmnn_dual_bound(instance, result.extra["triplets"], result.extra["alpha"],
                           upper_bound=result.objective + error) == result.dual_bound


@functools.cache
def truth_and_multipliers(problem: str, seed: int):
    kind = LMNNInstance if problem == "lmnn" else MultiMetricLMNNInstance
    rng = np.random.default_rng(seed)
    n_classes = int(rng.integers(2, 4))
    y = np.repeat(np.arange(n_classes), int(rng.integers(3, 5)))
    instance = kind.from_data(dependent_data(seed, n=y.size), y, k=int(rng.integers(1, 3)),
                              mu=float(rng.uniform(0.2, 0.8)))
    truth, result = solve(instance, "cvxpy"), solve(instance)
    optimum = min(truth.objective, result.objective)
    return instance, optimum, PROBLEMS[problem].dual_from_result(instance, result), result.solution


@pytest.mark.parametrize("problem", ["lmnn"])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 19), how=st.sampled_from(["none", "scaled", "perturbed", "sign", "indices"]),
       factor=st.floats(0.01, 100.0), noise=st.integers(0, 2**32 - 1))
def test_corrupted_multipliers_on_the_span_never_prove_more_than_the_optimum(problem, seed, how, factor, noise):
    instance, optimum, multipliers, solution = truth_and_multipliers(problem, seed)
    bad = multipliers if how == "none" else corrupt(multipliers, how, factor, np.random.default_rng(noise))
    try:
        bound = PROBLEMS[problem].verified_bound(instance, bad, solution)
    except ValueError:
        return                                        # refused: foreign or repeated triplets
    assert np.isfinite(bound)
    assert bound <= optimum + 1e-6 * max(1.0, abs(optimum)), (how, bound, optimum)


def test_multi_metric_bound_uses_the_span_too():
    instance = span_instance(MultiMetricLMNNInstance)
    result = solve(instance)
    assert multi_metric_dual_bound(instance, result.extra["triplets"], result.extra["alpha"],
                                   upper_bound=result.objective) == result.dual_bound > 0.0


def pair_pivots(X: np.ndarray, pairs: np.ndarray) -> list[int]:
    """The pivot columns of the rows x_i − x_j of the listed pairs, in Fractions (the reference)."""
    return exact_pivots(np.vstack([np.zeros(X.shape[1]), X[pairs[:, 0]] - X[pairs[:, 1]]])) if pairs.size else []


@pytest.mark.parametrize("seed", range(6))
def test_spanning_coordinates_of_pairs_are_the_exact_pivot_columns(seed):
    # the differences of dyadic points are exact floats, so the reference may form them in floating point
    rng = np.random.default_rng(seed)
    X = dependent_data(seed, n=14)
    X = np.vstack([X, X[:3] + rng.integers(-4, 5, size=(3, X.shape[1])) / 16.0])
    for m in (1, 3, 8, 20):
        pairs = rng.integers(0, X.shape[0], size=(m, 2))
        assert spanning_coordinates(X, pairs).tolist() == pair_pivots(X, pairs)
        assert varying_coordinates(X, pairs).tolist() == np.flatnonzero(
            np.any(X[pairs[:, 0]] != X[pairs[:, 1]], axis=0)).tolist()
    star = np.column_stack([np.arange(1, X.shape[0]), np.zeros(X.shape[0] - 1, dtype=np.int64)])
    assert spanning_coordinates(X, star).tolist() == spanning_coordinates(X).tolist()


def duplicated_instance(kind, seed: int):
    """Points drawn with repetition from a few dyadic points in 2 or 3 dimensions, labelled at random,
    one target neighbour (the fuzz of review r21 found these): a class whose points repeat has target
    differences that span less than the points do, so its metric — and, in one metric, P — is singular on
    the span of all differences, while the impostor differences it would have to price lie outside."""
    rng = np.random.default_rng(seed)
    d, C, n = int(rng.integers(2, 4)), int(rng.integers(2, 4)), int(rng.integers(8, 14))
    base = rng.integers(-8, 9, size=(n // 2, d)) / 8.0
    X = base[rng.integers(0, base.shape[0], size=n)]
    y = np.arange(n) % C
    rng.shuffle(y)
    return kind.from_data(X, y, k=1, mu=0.5)


@pytest.mark.parametrize(("kind", "seed"), [(MultiMetricLMNNInstance, seed) for seed in (0, 4, 9, 16)]
                         + [(LMNNInstance, seed) for seed in (0, 4, 8, 16)])
def test_a_metric_whose_target_pairs_miss_a_direction_is_certified(kind, seed, tmp_path):
    # before: bound 0 on every one of these (review r21's fuzz: 19 multi-metric instances, tiny classes, and
    # single-metric ones whose target pairs miss a difference)
    from sdpembed.io import read_solution, write_solution
    from sdpembed.validation.verify import verify_solution

    instance = duplicated_instance(kind, seed)
    assert any(span.coordinates.size < instance.spanning_coordinates.size for span in instance.pull_spans)
    result, truth = solve(instance), solve(instance, "cvxpy", solver="CLARABEL")
    assert result.status == "optimal" and result.relative_gap <= 1e-5
    scale = max(1.0, instance.gap_scale, abs(truth.objective))
    assert result.dual_bound <= truth.objective + 1e-9 * scale             # a bound of the SDP (2.17)
    assert truth.dual_bound <= result.objective + 1e-9 * scale
    assert abs(result.objective - truth.objective) <= 1e-5 * scale
    path = tmp_path / "solution.npz"
    write_solution(path, instance, result)
    certificate = verify_solution(instance, read_solution(path, instance))
    assert certificate.passed, certificate.reasons
    assert certificate.dual_bound == pytest.approx(result.dual_bound, rel=1e-9)


@pytest.mark.parametrize("kind", [MultiMetricLMNNInstance, LMNNInstance])
@pytest.mark.parametrize("seed", range(8))
def test_multipliers_on_every_triplet_never_prove_more_than_the_optimum(kind, seed):
    """The bound is a lower bound of (2.17) — or (2.11) — whatever the multipliers: every triplet at μ, at
    random in [0, μ], or the solver's — compared with the loss of CVXPY's and the solver's metrics, and of the
    solver's metrics grown along the directions their target pairs miss (where the multipliers of impostor
    pairs must be 0)."""
    instance = duplicated_instance(kind, seed)
    bound = multi_metric_dual_bound if kind is MultiMetricLMNNInstance else lmnn_dual_bound
    result, truth = solve(instance), solve(instance, "cvxpy", solver="CLARABEL")
    grown = result.solution.copy().reshape(-1, instance.dim, instance.dim)
    for c, span in enumerate(instance.pull_spans):
        if span.basis is not None:
            free = np.linalg.svd(span.basis.T)[2][span.basis.shape[1]:]       # an orthonormal basis of T_c's complement
            grown[c] += 1e3 * free.T @ free
    least = min(truth.objective, result.objective, instance.objective(grown.reshape(result.solution.shape)))
    triplets = instance.triplets()
    rng = np.random.default_rng(seed)
    for alpha in (np.full(triplets.shape[0], instance.mu), rng.uniform(0.0, instance.mu, triplets.shape[0])):
        assert bound(instance, triplets, alpha, upper_bound=least) <= least * (1.0 + 1e-9)
    assert bound(instance, result.extra["triplets"], result.extra["alpha"], upper_bound=least) <= least * (1.0 + 1e-9)


def exact_null_directions(rows: list[list[Fraction]], d: int) -> list[list[Fraction]]:
    """A basis of the vectors orthogonal to every row (reduced row echelon form in Fractions)."""
    R, pivots = [row[:] for row in rows], []
    for col in range(d):
        p = next((t for t in range(len(pivots), len(R)) if R[t][col] != 0), None)
        if p is None:
            continue
        r = len(pivots)
        R[r], R[p] = R[p], R[r]
        R[r] = [x / R[r][col] for x in R[r]]
        for t in range(len(R)):
            if t != r and R[t][col] != 0:
                f = R[t][col]
                R[t] = [a - f * b for a, b in zip(R[t], R[r], strict=True)]
        pivots.append(col)
    basis = []
    for free in (c for c in range(d) if c not in pivots):
        w = [Fraction(0)] * d
        w[free] = Fraction(1)
        for t, col in enumerate(pivots):
            w[col] = -R[t][free]
        basis.append(w)
    return basis


def test_data_of_rank_two_up_to_rounding_are_not_certified_and_rightly_so():
    """X = Z B with Z (10 × 2), B (2 × 4) in floating point: rank 2 up to rounding, exactly of full rank. The
    classes' target differences span 3, 2 and 2 dimensions exactly, and the impostor differences leave those
    spans by ≈ 10⁻¹⁶ relative, so M^c can grow there at no pull cost and drive their hinges to 0: in exact
    arithmetic the loss of the solver's metrics grown by 10⁴⁰ along those directions is far below the loss
    both the fast solver and CVXPY find. No bound is claimed (status not optimal) — which is right."""
    rng = np.random.default_rng(0)
    instance = MultiMetricLMNNInstance.from_data(rng.standard_normal((10, 2)) @ rng.standard_normal((2, 4)),
                                                 np.arange(10) % 3, k=2, mu=0.5)
    result = solve(instance)
    assert result.status != "optimal" and result.dual_bound == 0.0
    X = [[Fraction(v) for v in row] for row in instance.X]
    n, d, mu = instance.n_points, instance.dim, Fraction(instance.mu)
    blk, cls, targets = instance.block.tolist(), instance.class_index.tolist(), instance.targets.tolist()

    def diff(a, b):
        return [X[a][t] - X[b][t] for t in range(d)]

    def quad(M, u):
        return sum(u[a] * M[a][b] * u[b] for a in range(d) for b in range(d))

    def loss(Ms):                                    # (2.17) in exact arithmetic
        pull = push = Fraction(0)
        for i in range(n):
            for j in targets[i]:
                near = quad(Ms[blk[j]], diff(i, j))
                pull += near
                push += sum(max(Fraction(0), 1 + near - quad(Ms[blk[l]], diff(i, l))) for l in range(n)
                            if cls[l] != cls[i])
        return (1 - mu) * pull + mu * push

    Ms = [[[Fraction(float(v)) for v in row] for row in M] for M in result.solution]
    assert float(loss(Ms)) == pytest.approx(result.objective, rel=1e-9)
    for c in range(instance.n_blocks):
        for w in exact_null_directions([diff(i, j) for i in range(n) for j in targets[i] if blk[j] == c], d):
            for a in range(d):
                for b in range(d):
                    Ms[c][a][b] += Fraction(10) ** 40 * w[a] * w[b]
    assert float(loss(Ms)) < 0.5 * result.objective
