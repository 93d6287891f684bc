"""MVU by a primal–dual interior-point method with a certified dual bound (thesis Sec. 3.1.4,
3.1.6, 3.1.11) — the hand-written solver of every :class:`~sdpembed.problems.mvu.MVUInstance`
variant.

The SDP, its Lagrange dual min yᵀD s.t. L(y) + t·11ᵀ ⪰ c·I, y ∈ 𝒴, and the certificate
(:func:`sdpembed.problems.mvu.dual_bound`) that turns any multipliers y into an upper bound are
in :mod:`sdpembed.problems.mvu`; the notation (𝒜, L(y), c, 𝒴, y₀) is that of its docstring.

The algorithm
-------------
The centering 1ᵀK1 = 0 leaves the PSD cone without interior points (K1 = 0), which interior
methods cannot tolerate, so it is eliminated: K = V X Vᵀ with V ∈ Rⁿˣ⁽ⁿ⁻¹⁾ an orthonormal
basis of 1⊥, X ⪰ 0 of order n − 1, tr K = tr X, and 𝒜(K)_e = b̃_eᵀ X b̃_e with b̃_e the
difference of rows i and j of V (B̃ = BV, B the E × n incidence matrix). The variants become
one conic program in (X, x) with x ≥ 0 the inequality slacks (𝒜 + x = D) or the split
slacks ξ = ξ⁺ − ξ⁻ (x = (ξ⁺, ξ⁻), objective −ω1ᵀx), and dual slacks Z = VᵀL(y)V − cI ⪰ 0,
z = Gᵀy − c_x ≥ 0 — exactly the certificate's condition.

We solve it by an infeasible primal–dual path-following method with the HKM search direction
and Mehrotra's predictor–corrector ([2]; SDPT3 [3]): each iteration solves the Schur-complement system

    (M + G diag(x/z) Gᵀ) Δy = 𝒜(T) + G t − r_p,      M = (B̃XB̃ᵀ) ∘ (B̃Z⁻¹B̃ᵀ)   (E × E),

by Cholesky, twice with the same factor (predictor and corrector). An iteration costs
O(E³/3 + E² + n³) — M read off VXVᵀ and VZ⁻¹Vᵀ by indexing (``edge_gram``), and on all of 1⊥ 𝒜 and 𝒜*
through the Helmert basis by prefix sums in O(n² + E), not with the dense B̃; MVU needs 20–40 of
them to a gap of 1e-8, far fewer than first-order
methods, which is why this is an interior-point method: its accuracy is what the
certificate needs. (A Burer–Monteiro augmented Lagrangian costs only O(Er) an iteration and,
with Newton steps on the factor, certifies as well: :mod:`sdpembed.solvers.mvu.lowrank`, the
default for large inequality instances.) The dual start is strictly feasible
(the point y₀ of the certificate), so dual iterates stay feasible and the certificate rarely needs to scale.

Stopping: the constraint violation of K (relative to τ = max D, (3.11)) is at most
``feas_tol`` and the certified relative gap at most ``gap_tol``. For the equality and min_trace variants the
K judged and returned is then polished onto the equalities (:mod:`sdpembed.solvers.mvu.polish`: on a thin face a
K met to ``feas_tol`` can lie above the optimum), and certified only at a violation of at most
min(feas_tol, gap_tol²) with a gap that is not negative. Locked-up instances
(Sec. 3.1.12): when an equality graph is rigid the feasible set has no interior and the dual
optimum is not attained; the iteration stalls (tiny steps, growing multipliers) and the run
ends ``inaccurate`` with a message saying so — never ``optimal``. Facial reduction
(:mod:`sdpembed.solvers.mvu.facial`) restricts such an SDP to the face of the PSD cone that holds
its feasible set and runs this interior point there
(:func:`sdpembed.solvers.mvu.ipm.solve_in_face`).

References
----------
.. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
   Pennsylvania, 2007. Implemented here: the MVU SDP (3.11)–(3.15) of Sec. 3.1.4, the relaxations
   of Sec. 3.1.6, the minimum-trace variant of Sec. 3.1.11, locked-up graphs (Sec. 3.1.12).
.. [2] C. Helmberg, F. Rendl, R. J. Vanderbei and H. Wolkowicz, "An interior-point method for
   semidefinite programming", SIAM Journal on Optimization 6(2), 342–361, 1996. Implemented here:
   the HKM search direction.
.. [3] K. C. Toh, M. J. Todd and R. H. Tütüncü, "SDPT3 — a MATLAB software package for semidefinite
   programming, version 1.3", Optimization Methods and Software 11(1–4), 545–581, 1999. Implemented
   here: the infeasible path-following method with Mehrotra's predictor–corrector.
"""

from __future__ import annotations

import time

import numpy as np
from threadpoolctl import threadpool_limits

from ..._deadline import Deadline
from ..._progress import say
from ..._validate import check_positive_int
from ...problems.mvu import (
    DUAL_DENSE_LIMIT,
    EXTENDED_GOAL,
    connectivity_interval,
    dual_bound,
    slack_verdict,
)
from ...results import SolveResult, build_result
from ..lapack import cho_factor, cho_solve, solve_triangular
from .polish import PolishSchedule, polished_verdict

__all__ = [
    "LOCK_UP_HINT",
    "centered_basis",
    "edge_gram",
    "solve_in_face",
    "solve_mvu_ipm",
]


#: Over a face with a lifted ``certificate`` (:func:`solve_in_face`): the magnitude of the reduced SDP's own relative
#: gap, as a share of ``gap_tol``, below which an iterate whose lift proves no gap within the tolerance counts as a
#: futile lift.
REDUCED_GAP_SHARE = 1e-2

#: Over a face with a lifted ``certificate``: the futile lifts (:data:`REDUCED_GAP_SHARE`) after which the run stops,
#: the reduced SDP solved, and leaves its certificate to the caller (facial reduction's final certificate).
FUTILE_LIFTS = 3

#: What an unconverged equality or min_trace run adds to its message (Sec. 3.1.12).
LOCK_UP_HINT = ("; an equality MVU whose neighbourhood graph is rigid 'locks up' (Sec. 3.1.12): the SDP has no "
                "interior point and the dual optimum is not attained — try fewer neighbours or the "
                "inequality/slack variant")


def centered_basis(n: int) -> np.ndarray:
    """V (n × (n−1)) with orthonormal columns spanning 1⊥ (the Helmert basis, closed form)."""
    k = np.arange(1, n)                                       # column k−1: (e_1 + … + e_k − k e_{k+1}) / √(k(k+1))
    V = np.triu(np.ones((n, n - 1)))
    V[k, k - 1] = -k
    return V / np.sqrt(k * (k + 1.0))


def _helmert_apply(U: np.ndarray) -> np.ndarray:
    """V U for the Helmert basis V of :func:`centered_basis` (U of n − 1 rows) in O(n) per column: row r of
    V U is Σ_{k>r} s_k U_{k−1} − r·s_r U_{r−1}, s_k = 1/√(k(k+1)), a suffix sum."""
    n = U.shape[0] + 1
    k = np.arange(1.0, n)
    a = U * (1.0 / np.sqrt(k * (k + 1.0)))[:, None]
    out = np.zeros((n, U.shape[1]))
    out[:-1] = np.cumsum(a[::-1], axis=0)[::-1]
    out[1:] -= k[:, None] * a
    return out


def _helmert_adjoint(W: np.ndarray) -> np.ndarray:
    """Vᵀ W for the Helmert basis V of :func:`centered_basis` (W of n rows) in O(n) per column: row k − 1 of
    Vᵀ W is s_k (Σ_{r<k} W_r − k·W_k), a prefix sum."""
    n = W.shape[0]
    k = np.arange(1.0, n)
    return (1.0 / np.sqrt(k * (k + 1.0)))[:, None] * (np.cumsum(W, axis=0)[:-1] - k[:, None] * W[1:])


def edge_gram(K: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """B K Bᵀ (E × E) for the incidence matrix B of ``edges``: entry (e, f) is
    K_ik − K_il − K_jk + K_jl for e = (i, j), f = (k, l), read off K by indexing in O(E·n + E²)
    instead of the O(E²n) of a dense product."""
    rows = K[edges[:, 0]] - K[edges[:, 1]]
    return rows[:, edges[:, 0]] - rows[:, edges[:, 1]]


#: The status message of a run whose Newton direction is not finite: the slack SDP with ω·λ₂ within rounding of
#: 1 − ω (bounded, but its dual's interior thinner than double precision: the start's slacks ω − y_e are 0 or a
#: few ulps), or iterates that far from the central path.
_NO_DIRECTION = ("the Newton direction is not finite (numerical breakdown: the dual has no strictly feasible point "
                 "that double precision resolves)")


def _finite(*arrays: np.ndarray) -> bool:
    """Whether every entry of every array is finite."""
    return all(bool(np.all(np.isfinite(a))) for a in arrays)


def _max_step(L_factor: np.ndarray, dM: np.ndarray) -> float:
    """Largest α with M + α dM ⪰ 0, given the Cholesky factor M = LLᵀ (∞ when dM ⪰ 0)."""
    W = solve_triangular(L_factor, dM, lower=True)
    W = solve_triangular(L_factor, W.T, lower=True)
    lam = float(np.linalg.eigvalsh(0.5 * (W + W.T))[0])
    return -1.0 / lam if lam < 0 else np.inf


def distances_from_first(n: int, edges: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Shortest-path distances from node 0 in the undirected graph of ``edges`` with nonnegative
    ``weights`` (∞ where unreachable), by Dijkstra's method with a dense selection, O(n² + E):
    the values of ``scipy.sparse.csgraph.shortest_path(W, directed=False, indices=[0])``."""
    heads = np.concatenate([edges[:, 0], edges[:, 1]])
    order = np.argsort(heads, kind="stable")
    tails = np.concatenate([edges[:, 1], edges[:, 0]])[order]
    lengths = np.concatenate([weights, weights])[order]
    first = np.searchsorted(heads[order], np.arange(n + 1))
    dist = np.full(n, np.inf)
    dist[0] = 0.0
    settled = np.zeros(n, dtype=bool)
    for _ in range(n):
        u = int(np.argmin(np.where(settled, np.inf, dist)))
        if settled[u] or not np.isfinite(dist[u]):
            break
        settled[u] = True
        near = tails[first[u]:first[u + 1]]
        dist[near] = np.minimum(dist[near], dist[u] + lengths[first[u]:first[u + 1]])
    return dist


class _Slacks:
    """G of the linear block: I (inequality slacks x) or [−I, I] (split slacks ξ = ξ⁺ − ξ⁻), applied
    without forming it (``G(x)`` = Gx, ``G.T(y)`` = Gᵀy, ``weighted_gram(w)`` = the diagonal of G diag(w) Gᵀ)."""

    def __init__(self, E: int, split: bool) -> None:
        self.E, self.split = E, split

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return x[self.E:] - x[:self.E] if self.split else x

    def T(self, y: np.ndarray) -> np.ndarray:
        return np.concatenate([-y, y]) if self.split else y

    def weighted_gram(self, w: np.ndarray) -> np.ndarray:
        return w[:self.E] + w[self.E:] if self.split else w


def _factor(K: np.ndarray) -> np.ndarray:
    """Y with YYᵀ = K's PSD part (columns of the positive eigenvalues), centred."""
    w, U = np.linalg.eigh(0.5 * (K + K.T))
    keep = w > 0
    Y = U[:, keep] * np.sqrt(w[keep])
    return Y - Y.mean(axis=0)


def _max_step_linear(x: np.ndarray, dx: np.ndarray) -> float:
    neg = dx < 0
    return float(np.min(-x[neg] / dx[neg])) if np.any(neg) else np.inf


def solve_mvu_ipm(
    instance,
    *,
    gap_tol: float = 1e-6,
    feas_tol: float = 1e-6,
    max_iter: int = 100,
    step_fraction: float | None = None,
    verbose: bool | int = False,
    time_limit: float | None = None,
    blas_threads: int | None = -1,
    cpu_time_limit: float | None = None,
) -> SolveResult:
    """Solve an :class:`~sdpembed.problems.MVUInstance` by the primal–dual interior-point method
    of the module docstring and certify the answer.

    Parameters
    ----------
    instance : MVUInstance
    gap_tol : float
        Largest certified relative gap (bound − objective)/max(|objective|, |bound|) for status
        ``optimal``.
    feas_tol : float
        Largest constraint violation of K, relative to τ (:meth:`~sdpembed.problems.mvu.MVUInstance.max_violation`).
    max_iter : int
        Interior-point iterations; reaching it gives ``max_iterations``.
    step_fraction : float or None
        Fraction γ of the step to the boundary of the cones, in (0, 1). ``None`` (default): the
        adaptive rule of SDPT3 [3], γ = 0.9 + 0.09·min(1, α_p, α_d).
    verbose : bool or int
        Print one line per iteration (an int: every that many).
    time_limit : float, optional
        Wall-clock seconds; reaching it gives ``max_iterations``.
    blas_threads : int or None
        BLAS threads during the solve (restored afterwards, ``threadpoolctl``); ``-1`` (default)
        means one thread below n = 300 — where threads only add overhead, and on a loaded machine
        a great deal of it — and the library's default above; ``None`` leaves
        the setting alone.
    cpu_time_limit : float, optional
        CPU seconds of the process (all threads, BLAS's included; ``sdpembed._deadline``), which the
        machine's load does not change; reaching it gives ``max_iterations``. With ``time_limit`` too, the
        first reached stops the run.

    Returns
    -------
    SolveResult
        ``solution`` is K = τ V X Vᵀ (n × n, PSD and centred by construction); ``dual_bound`` an
        upper bound on the optimum; ``extra`` holds the dual-feasible multipliers ``y`` of the
        edge constraints and the embedding ``Y`` = K's factor (V X^½).
    """
    limit = (1 if instance.n < 300 else None) if blas_threads == -1 else blas_threads
    with threadpool_limits(limits=limit, user_api="blas"):
        return solve_in_face(instance, gap_tol=gap_tol, feas_tol=feas_tol, max_iter=max_iter,
                             step_fraction=step_fraction, verbose=verbose, time_limit=time_limit,
                             cpu_time_limit=cpu_time_limit)


def solve_in_face(instance, *, basis: np.ndarray | None = None, certificate=None, gap_tol: float = 1e-6,
                  feas_tol: float = 1e-6, max_iter: int = 100, step_fraction: float | None = None,
                  verbose: bool | int = False, time_limit: float | None = None, t0: float | None = None,
                  method: str = "ipm", rows: np.ndarray | None = None, cpu_time_limit: float | None = None,
                  deadline: Deadline | None = None) -> SolveResult:
    """The interior point of :func:`solve_mvu_ipm` over K = V X Vᵀ for an orthonormal ``basis`` V
    (n × q, columns ⊥ 1; default the Helmert basis of 1⊥, :func:`centered_basis`): the SDP
    restricted to a face of the PSD cone, as facial reduction (:mod:`sdpembed.solvers.mvu.facial`)
    leaves it. ``certificate(y, goal=...)`` turns the reduced dual iterate y (VᵀL(y)V ⪰ cI) into
    ``(bound, proved multipliers)`` for the *original* problem (default
    :func:`~sdpembed.problems.mvu.dual_bound`, valid for V = the basis of 1⊥); ``goal``, the iterate's objective
    and :data:`~sdpembed.problems.mvu.EXTENDED_GOAL` gap tolerances, says which bounds are worth an
    extended-precision proof, and in which precision (the ``goal`` of :func:`~sdpembed.problems.mvu.dual_bound`).
    Over a face with a ``certificate`` an iterate is lifted and proved only where that can pay: the first (a proved
    bound from the start) and those meeting ``feas_tol`` whose reduced gap τ·yᵀD − objective (the reduced dual is
    kept feasible, VᵀL(y)V − cI = Z ≻ 0) is within ``gap_tol`` — a lifted bound is at best about the reduced one
    —; iterates whose proved gaps tie (none within the tolerance) rank by the reduced gap, and the run stops
    ``inaccurate`` after :data:`FUTILE_LIFTS` lifts that proved no gap within the tolerance at a reduced gap whose
    magnitude is below :data:`REDUCED_GAP_SHARE` of it: the reduced SDP is solved, and more iterations do not change
    its multipliers' lift. Runs under the
    caller's BLAS thread limit; other parameters as :func:`solve_mvu_ipm`. ``rows`` (optional) selects
    the edge constraints the interior point keeps — those the others depend on in the face, whose
    Schur complement would otherwise be singular; ``certificate`` then receives multipliers of those
    rows only. ``deadline`` (a caller's, e.g. started before facial reduction) replaces ``time_limit``,
    ``cpu_time_limit`` and ``t0``'s budget.
    """
    t0 = time.perf_counter() if t0 is None else t0
    deadline = Deadline.of(time_limit, cpu_time_limit, wall_start=t0) if deadline is None else deadline
    n, edges = instance.n, instance.edges
    sqdist = instance.sqdist
    if rows is not None:
        edges, sqdist = edges[rows], sqdist[rows]
    E = edges.shape[0]
    max_iter = check_positive_int(max_iter, "max_iter")
    if step_fraction is not None and not 0.0 < step_fraction < 1.0:
        raise ValueError(f"step_fraction must lie in (0, 1), got {step_fraction!r}")
    report_every = 1 if verbose is True else int(verbose or 0)
    tau = instance.tau
    D = sqdist / tau                          # work at the scale τ = 1 (K scales by τ, y does not)
    c = instance.trace_weight
    variant = instance.variant
    hist: dict[str, list[float]] = {k: [] for k in ("objective", "dual_bound", "relative_gap", "violation",
                                                     "mu", "step_primal", "step_dual")}

    def result(K, status, message, bound, y_feas, iteration, extra):
        objective = instance.objective(K)
        rgap = instance.relative_gap(bound, objective) if np.isfinite(bound) else float("nan")
        return build_result(
            instance.problem, instance.variable, K, objective, bound, sense="max", rgap=rgap, status=status,
            message=message, method=method, solver=f"mvu_{method}", max_violation=float(instance.max_violation(K)),
            iterations=iteration, start=t0, history={k: np.asarray(v) for k, v in hist.items()},
            extra={**extra, "y": y_feas},
        )

    if n > DUAL_DENSE_LIMIT:
        raise ValueError(f"the interior-point method is dense in n; n = {n} exceeds {DUAL_DENSE_LIMIT}: use "
                         "variational MVU (sdpembed.solvers.mvu.variational) at this size")
    V = centered_basis(n) if basis is None else np.asarray(basis, dtype=np.float64)
    Bt = None if basis is None else V[edges[:, 0]] - V[edges[:, 1]]        # B̃ = BV, rows b̃_e (a face's basis)
    m = V.shape[1]
    # λ₂ bracketed once, for the start and the slack verdict: on the face, λ_min of the unit weights (≥ λ₂),
    # its estimate; on all of 1⊥ the estimate lowered by its margin (algebraic_connectivity's value)
    lower, upper = connectivity_interval(n, edges, None if basis is None else Bt)
    lam2 = lower if basis is None else 0.5 * (lower + upper)
    bound_of = (lambda w, goal: dual_bound(instance, w, goal=goal)) if certificate is None else certificate
    verdict = None if variant != "slack" else slack_verdict(instance.omega, lower, upper)
    if verdict is not None:                            # unbounded, or undecided within the estimate's error
        return result(np.zeros((n, n)), *verdict, float("inf"), np.zeros(E), 0, {})

    if report_every:
        say(f"mvu ipm: n = {n}, {E} edges ({variant}); each iteration factorises an {E} x {E} Schur complement")

    if basis is None:
        # the Helmert basis applied by prefix and suffix sums: VXVᵀ and VᵀLV in O(n²) instead of two products of
        # O(n³), and 𝒜, 𝒜* through them instead of the O(En²) of the dense B̃
        def full(X):                                   # V X Vᵀ
            return _helmert_apply(_helmert_apply(X).T).T

        def face(L):                                   # Vᵀ L V
            return _helmert_adjoint(_helmert_adjoint(L).T).T

        i, j = edges[:, 0], edges[:, 1]
        laplacian_index = np.concatenate([i * n + j, j * n + i, i * (n + 1), j * (n + 1)])

        def A(X):                                      # 𝒜(VXVᵀ)_e = W_ii + W_jj − W_ij − W_ji, W = VXVᵀ
            W = full(X)
            d = np.diagonal(W)
            return (d[i] + d[j]) - (W[i, j] + W[j, i])

        def At(w):                                     # Vᵀ L(w) V
            L = np.bincount(laplacian_index, weights=np.concatenate([-w, -w, w, w]), minlength=n * n)
            return face(L.reshape(n, n))
    else:
        def full(X):
            return V @ X @ V.T

        def A(X):                                      # 𝒜(VXVᵀ) = (b̃_eᵀ X b̃_e)_e
            return np.einsum("ij,ij->i", Bt @ X, Bt)

        def At(w):                                     # Vᵀ L(w) V = B̃ᵀ diag(w) B̃
            return Bt.T @ (w[:, None] * Bt)

    # linear block: G (E × p), cost c_x
    if variant == "inequality":
        G = _Slacks(E, split=False)
        cost = np.zeros(E)
    elif variant == "slack":
        G = _Slacks(E, split=True)
        cost = np.full(2 * E, -instance.omega)
    else:
        G, cost = None, np.zeros(0)
    p = cost.size

    # starting point: a strictly feasible dual y₀ (module docstring) and X = ξI, x = 1
    if c < 0:
        y = np.zeros(E)
    elif variant == "slack":
        y = np.full(E, 0.5 * (instance.omega + c / lam2))
    else:
        y = np.full(E, 2.0 * c / lam2)
    Z = At(y) - c * np.eye(m)
    z = (G.T(y) - cost) if G is not None else np.zeros(0)
    ecc = float(np.max(distances_from_first(n, instance.edges, np.sqrt(instance.sqdist / tau))))
    # a perfectly centred start, XZ = μ₀I and x∘z = μ₀, scaled so that tr X = m·ecc² (ecc: the
    # eccentricity of node 0 in the graph metric, a guess of the unfolded size)
    Zinv = cho_solve((np.linalg.cholesky(Z), True), np.eye(m))
    mu0 = m * max(1.0, ecc**2) / float(np.trace(Zinv))
    X = mu0 * 0.5 * (Zinv + Zinv.T)
    x = mu0 / z if p else np.zeros(0)
    status, message = "max_iterations", f"reached max_iter={max_iter} without meeting the tolerances"
    best_bound, best_y = float("inf"), y
    best_score, best_X = (float("inf"), float("inf")), X
    iteration = 0
    stalls = 0
    futile = 0
    # equality and min_trace on all of 1⊥ judge a polished K (.polish); a face's K (facial reduction) is judged
    # as it is
    polish = PolishSchedule() if variant in ("equality", "min_trace") and basis is None else None
    polished, uncertified = None, None
    for iteration in range(1, max_iter + 1):
        # judged on the K it returns: duplicates merged, the inequality variant shrunk onto its constraints
        # (feasible_point)
        K = instance.feasible_point(tau * full(X))
        objective = instance.objective(K)
        violation = float(instance.max_violation(K))
        # an iterate whose multipliers cannot come within EXTENDED_GOAL gap tolerances of its objective is proved in
        # double: the extended-precision proof (O(n³) in interpreted blocks) pays only near the end
        # over a face with a lifted certificate, the reduced dual's own gap decides whether the lift can pay
        reduced = instance.relative_gap(tau * float(y @ D), objective) if certificate is not None else None
        lifted = reduced is None or iteration == 1 or (violation <= feas_tol and reduced <= gap_tol)
        if lifted:
            bound, y_feas = bound_of(y, goal=(objective, EXTENDED_GOAL * gap_tol))
            if bound < best_bound:
                best_bound, best_y = bound, y_feas
        rgap = instance.relative_gap(best_bound, objective)
        # the reduced SDP solved: its own gap near 0 from either side (a negative one is a primal iterate still
        # beyond the reduced dual value, not converged)
        if lifted and reduced is not None and abs(reduced) <= REDUCED_GAP_SHARE * gap_tol and rgap > gap_tol:
            futile += 1
        mu = (float(np.sum(X * Z)) + float(x @ z)) / (m + p)
        for key, value in zip(hist, (objective, best_bound, rgap, violation, mu), strict=False):
            hist[key].append(value)
        if report_every and (iteration - 1) % report_every == 0:
            steps = (f"  steps {hist['step_primal'][-1]:.2f}/{hist['step_dual'][-1]:.2f}"
                     if hist["step_primal"] else "")
            say(f"mvu ipm it {iteration:3d}  obj {objective:.10g}  bound {best_bound:.10g}  gap {rgap:.2e}  "
                f"viol {violation:.2e}  mu {mu:.2e}{steps}  {time.perf_counter() - t0:7.1f}s")
        # without a proved bound yet (a face's lifted certificate), the violation alone ranks the iterates; an
        # iterate with a proved gap ranks before every one without (a gap of 0.97 scored against a violation
        # of 0.93 kept the starting point of a face whose first bound came at the second iterate)
        closeness = max(violation / feas_tol, abs(rgap if reduced is None else reduced) / gap_tol)
        score = (0.0, max(violation / feas_tol, abs(rgap) / gap_tol), closeness) if np.isfinite(rgap) else \
            (1.0, violation / feas_tol, closeness)
        if score < best_score:
            best_score, best_X = score, X.copy()
        if violation <= feas_tol and rgap <= gap_tol and polish is not None:
            # an equality K met to feas_tol can lie above the optimum (a thin face, Sec. 3.1.12): the K judged
            # and returned is polished onto the equalities, and a negative gap is never accepted (.polish)
            verdict = polished_verdict(instance, _factor(K), best_bound, gap_tol=gap_tol, feas_tol=feas_tol) \
                if polish.due() else None
            if verdict is not None and verdict.failure is not None:
                uncertified = verdict.failure
                polish.failed()
            elif verdict is not None:
                polished, status = verdict, "optimal"
                message = (f"polished onto the equalities: violation {verdict.violation:.2e} <= {feas_tol:g}, "
                           f"certified relative gap {verdict.relative_gap:.2e} <= {gap_tol:g}")
                break
        elif violation <= feas_tol and abs(rgap) <= gap_tol:     # a negative gap: K too infeasible to trust
            status = "optimal"
            message = f"violation {violation:.2e} <= {feas_tol:g}, certified relative gap {rgap:.2e} <= {gap_tol:g}"
            break
        if futile >= FUTILE_LIFTS:
            status = "inaccurate"
            message = (f"the SDP over the face is solved (violation {violation:.2e}, its own relative gap "
                       f"{reduced:.2e}), but {futile} lifts of its multipliers proved no gap within {gap_tol:g}")
            break
        if deadline is not None and deadline.passed():
            message = deadline.reached()
            break
        # residuals
        r_p = D - A(X) - (G(x) if G is not None else 0.0)
        R_d = At(y) - c * np.eye(m) - Z
        r_d = (G.T(y) - cost - z) if G is not None else np.zeros(0)
        try:
            LZ = np.linalg.cholesky(Z)
            LX = np.linalg.cholesky(X)
            if not (np.all(np.isfinite(LZ)) and np.all(np.isfinite(LX))):
                # iterates overflowed (a dual diverging on an infeasible instance): numpy's Cholesky passes NaN on
                raise np.linalg.LinAlgError
        except np.linalg.LinAlgError:
            message = "the iterates left the interior of the cone (numerical breakdown)"
            status = "inaccurate"
            break
        Zi = cho_solve((LZ, True), np.eye(m))
        M = edge_gram(full(X), edges)                                        # HKM: (B̃XB̃ᵀ)∘(B̃Z⁻¹B̃ᵀ)
        M *= edge_gram(full(Zi), edges)
        ratio = x / z if p else np.zeros(0)
        if G is not None:
            M[np.diag_indices_from(M)] += G.weighted_gram(ratio)
        M = 0.5 * (M + M.T)
        try:
            factor = cho_factor(M, lower=True, check_finite=False)
        except np.linalg.LinAlgError:
            M[np.diag_indices_from(M)] += 1e-14 * np.abs(np.diag(M)).max()
            try:
                factor = cho_factor(M, lower=True, check_finite=False)
            except np.linalg.LinAlgError:
                status, message = "inaccurate", "the Schur complement lost positive definiteness (stalled)"
                break
        XRZ = X @ R_d @ Zi

        def direction(sigma_mu, corr_X, corr_x, X=X, x=x, z=z, R_d=R_d, XRZ=XRZ, Zi=Zi, r_p=r_p, r_d=r_d, ratio=ratio,
                      factor=factor):
            T = sigma_mu * Zi - X - XRZ - corr_X
            rhs = A(0.5 * (T + T.T)) - r_p
            if G is not None:
                t = (sigma_mu - corr_x) / z - x - ratio * r_d
                rhs = rhs + G(t)
            dy = cho_solve(factor, rhs, check_finite=False)
            Ady = At(dy)
            dZ = Ady + R_d
            dX = T - X @ Ady @ Zi                       # T already carries −X R_d Z⁻¹
            dX = 0.5 * (dX + dX.T)
            if G is not None:
                Gdy = G.T(dy)
                dz = Gdy + r_d
                dx = t - ratio * Gdy                    # t already carries −(x/z) r_d
            else:
                dz = dx = np.zeros(0)
            return dX, dx, dy, dZ, dz

        def steps(dX, dx, dZ, dz, x=x, z=z, LX=LX, LZ=LZ):
            ap = min(_max_step(LX, dX), _max_step_linear(x, dx) if p else np.inf)
            ad = min(_max_step(LZ, dZ), _max_step_linear(z, dz) if p else np.inf)
            return ap, ad

        # predictor (σ = 0), then Mehrotra's corrector
        dXa, dxa, dya, dZa, dza = direction(0.0, 0.0, 0.0)
        if not _finite(dXa, dxa, dya, dZa, dza):
            status, message = "inaccurate", _NO_DIRECTION
            break
        ap, ad = steps(dXa, dxa, dZa, dza)
        ap, ad = min(1.0, ap), min(1.0, ad)
        mu_aff = (float(np.sum((X + ap * dXa) * (Z + ad * dZa))) + float((x + ap * dxa) @ (z + ad * dza))) / (m + p)
        sigma = min(1.0, (mu_aff / mu) ** 3) if mu > 0 else 0.0
        dX, dx, dy, dZ, dz = direction(sigma * mu, dXa @ dZa @ Zi, dxa * dza if p else 0.0)
        if not _finite(dX, dx, dy, dZ, dz):
            status, message = "inaccurate", _NO_DIRECTION
            break
        ap, ad = steps(dX, dx, dZ, dz)
        # SDPT3's adaptive fraction to the boundary: short steps mean poorly centred iterates,
        # and stepping back further from the boundary re-centres them (fewer iterations than a
        # fixed 0.98, and no stalls on slack instances; BENCHMARKS.md, "MVU")
        gamma = 0.9 + 0.09 * min(1.0, ap, ad) if step_fraction is None else step_fraction
        ap, ad = min(1.0, gamma * ap), min(1.0, gamma * ad)
        hist["step_primal"].append(ap)
        hist["step_dual"].append(ad)
        X = X + ap * dX
        X = 0.5 * (X + X.T)
        y = y + ad * dy
        Z = Z + ad * dZ
        Z = 0.5 * (Z + Z.T)
        if p:
            x = x + ap * dx
            z = z + ad * dz
        stalls = stalls + 1 if max(ap, ad) < 1e-6 else 0
        if stalls >= 3:
            status, message = "inaccurate", "the interior-point steps stalled (step lengths below 1e-6)"
            break
    else:
        iteration = max_iter
    if status != "optimal" and uncertified is not None:
        message += f"; at the last candidate iterate {uncertified}"
    if status != "optimal" and variant in ("equality", "min_trace"):
        message += LOCK_UP_HINT
    if polished is not None:
        return result(polished.solution, status, message, best_bound, best_y, iteration,
                      {"Y": polished.factor, "multipliers_raw": y})
    if status != "optimal":
        X = best_X                                     # the iterate closest to the tolerances
        message += " (returning the iterate closest to the tolerances)"
    K_raw = tau * full(X)
    K = instance.feasible_point(K_raw)
    if instance.variant != "slack" and instance.has_duplicates:
        w, U = np.linalg.eigh(K)                       # duplicates merged: K is no longer a multiple of K_raw
        Y = (U * np.sqrt(np.maximum(w, 0.0)))[:, ::-1]
    else:
        w, U = np.linalg.eigh(0.5 * (X + X.T))
        shrink = instance.feasible_shrink(instance.edge_values(K_raw))      # 1 unless inequality
        Y = np.sqrt(shrink * tau) * (V @ (U * np.sqrt(np.maximum(w, 0.0))))[:, ::-1]
    return result(K, status, message, best_bound, best_y, iteration, {"Y": Y, "multipliers_raw": y})
