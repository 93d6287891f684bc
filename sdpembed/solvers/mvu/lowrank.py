"""MVU by a low-rank augmented Lagrangian (Burer–Monteiro) with a certified dual bound — the
hand-written solver of every :class:`~sdpembed.problems.mvu.MVUInstance` variant at sizes
where the interior point's E × E Schur complement is too expensive.

The SDP, its Lagrange dual min yᵀD s.t. L(y) + t·11ᵀ ⪰ c·I, y ∈ 𝒴, and the certificate
(:func:`sdpembed.problems.mvu.dual_bound`) that turns any multipliers y into an upper bound are
in :mod:`sdpembed.problems.mvu`; the notation (𝒜, L(y), c, 𝒴) is that of its docstring.

Why a low-rank method
---------------------
MVU's optimal K has low rank (the unfolded manifold's dimension, a few more for an inequality
graph), while the interior point (:mod:`sdpembed.solvers.mvu.ipm`) pays O(E²n + E³) an
iteration for its Schur complement on all E edges. Writing K = YYᵀ with Y ∈ Rⁿˣʳ (Burer and
Monteiro [2]) removes the cone: 𝒜(YYᵀ)_e = ‖y_i − y_j‖², K1 = 0 is Yᵀ1 = 0 (Y is kept
centred), and one evaluation of the augmented Lagrangian and its gradient costs O(E·r).

The algorithm
-------------
Every variant is the same augmented Lagrangian: with g(Y) = 𝒜(YYᵀ) − D, multipliers y ∈ 𝒴 and
a penalty σ > 0, the proximal form [3] ::

    f(Y) = −c‖Y‖²_F + max_{z ∈ 𝒴} [ zᵀg(Y) − ‖z − y‖²/(2σ) ],      z(Y) = Π_𝒴(y + σ g(Y)),

with 𝒴 = Rᴱ (equality, min_trace: the quadratic penalty), R₊ᴱ (inequality: its one-sided
version) or [−ω, ω]ᴱ (slack: the Moreau envelope of ω‖g‖₁, so the slacks need no variables of
their own); its gradient is 2(L(z(Y)) − cI)Y, one sparse product each way with the incidence
matrix. Each outer iteration minimises f over Y, sets y ← z(Y) — the multipliers stay in 𝒴 by
construction — and raises σ tenfold when the residual (y⁺ − y)/σ fell by less than a quarter
(up to a cap: a penalty the inner solve cannot meet only ruins its conditioning). For the
equality and inequality variants σ starts at 10c/λ₂(L₁): their multipliers are of the order of
1/λ₂ (the strictly feasible dual point of the certificate is (2c/λ₂)·1), so the first solve
already stretches the edges by only about a tenth of D; a penalty of order one, blind to n,
spends most of the run raising σ by L-BFGS solves. The inner solves are first L-BFGS (scipy),
which finds the basin of the unfolded solution and, unlike Newton's method, is not drawn to
saddle points; once the residual is below 0.3 (1e-2 for slack and min_trace) the factor is
cut to its numerical rank plus two spare columns and the solves become damped semismooth Newton
steps on f (where σ is raised unless the residual fell a hundredfold). The spare columns give the
Newton phase room to unfold a dimension the first-order phase had not yet grown; once the
residual is below a thirtieth of the switch (equality, inequality) the columns still below the
numerical rank are dropped, unless a rank increase has happened: along a zero column the Hessian
is 2S, S = L(z) − cI the dual slack, which is singular near the optimum (S vanishes on range(K)),
and each column adds n unknowns to every factorisation. The generalised Hessian of f,
2(L(z) − cI) ⊗ I_r + σJ_FᵀJ_F (J_F the Jacobian of the edges where Π_𝒴 is the identity), is
sparse — its structure (r × r blocks on the graph's pattern) and SuperLU's symmetric ordering
are computed once per rank and only its values are refilled each step, the translation term by
Woodbury's identity — so the large σ that accurate multipliers need does not slow the inner
solves as it slows L-BFGS. Where that Hessian is
indefinite, the shift λ of the damped step jumps to a Gershgorin bound that makes it definite
(``_minimise``), the line search measures f's change from the residuals' own changes (not as a difference of two
rounded values of f, which near the optimum hides the decrease of a Newton step), and the inner tolerance stops at
the gradient's rounding floor.

The certificate and the rank: at a minimiser of f whose Y has rank below r, the dual slack
S = L(z) − cI is PSD on 1⊥ (a direction v in a null column of Y lowers f unless vᵀSv ≥ 0 [2]),
so once the violation is small, S's least eigenpairs on 1⊥ decide (dense below 400 points,
else shift-invert Lanczos on the sparse L(y), so that the test costs no O(n³)): a negative
eigenvalue means r is too small or Y a saddle, and its eigenvectors are appended to Y as new
columns (the rank increase) — for slack and min_trace σ is lowered, so that they can grow out of
the saddle; for equality and inequality it is kept, as lowering it undoes the feasibility
reached and the Newton steps grow the new columns along the negative curvature at any σ, each
new column then sized by the search along f of ``_pad_column`` (a size fixed by the eigenvalue
alone stretches the edges by σ·t²((Bv)_e)², which at the large σ of a nearly rank-one optimum
Newton did not recover from); where the constraints are
already met, the equality and inequality variants first try the certificate on multipliers raised as below
(``_raise_multipliers``): near a nearly rank-one optimum (an open chain straightened into a line) their support is a
spanning tree, zero around a node whose edges are all slack, so that the negative eigenvalue is −c on a cut of the
graph — a defect of the multipliers, which the raise repairs for a few short edges' D, rather than of the rank, whose
new columns barely grow there; the
same test runs when the residual stalls at the penalty's cap (a local minimiser of the violation at
this rank, where every outer iteration has added σ·g to y: the multipliers then restart from those of the
last penalty at most the lowered one, so that the solve continues from the padded current point);
the slack variant's test also runs at every Newton iteration (its residual lags far behind K), on
the dense least eigenpairs: its multipliers there can be far from dual feasible, with eigenvalues
near −1 on two or three nodes (pairs folded onto each other) below a cluster near 0, at which the
shift-invert Lanczos aims and which it returns instead; the negative eigenvectors are then summed
into one column (being S-orthogonal, the sum has the curvature Σ λ_k < 0) of the size that minimises f
along it (``_pad_column``), with σ and y kept; otherwise y is handed to
:func:`~sdpembed.problems.mvu.dual_bound`, which repairs its small infeasibility and *proves*
the bound. The status is ``optimal`` only when that proved bound is within ``gap_tol`` of the
returned K's objective and the residual within ``feas_tol`` — except for the slack variant, which has
no edge constraints: every K = YYᵀ is feasible, its residual measures only the multipliers, and the
bound is tried at every Newton iteration, its proved gap alone certifying K; the K returned is the
iterate of highest objective (not monotone in the Newton phase). Where the slack variant's y is not
dual feasible, the certificate's mixing with the strictly feasible ω·1 gains only ωλ₂(L₁) − c per
unit of weight — nothing as ω nears its least valid value — while every multiplier moves towards ω,
so the bound jumps towards ωΣD; the multipliers are then first raised where the offending
eigenvectors of the dual slack vary, by a small linear programme per round (``_raise_multipliers``:
L(y) is increasing in y, so the raise lowers no eigenvalue), and the smaller proved bound is kept.

What the gap means: the augmented Lagrangian meets the edge constraints only approximately, and
a K that stretches an edge a little can have an objective *above* the optimum, beyond any proved
bound. For the inequality variant the returned K is
therefore YYᵀ shrunk by the largest s² ≤ 1 with 𝒜(s²YYᵀ) ≤ D on every edge of positive
length: it is feasible, and bound − objective ≥ optimum − objective ≥ 0 is a proved bound on its
suboptimality (the run continues until that holds within ``gap_tol``; short edges make this
stricter than the violation relative to τ). The slack variant has no edge constraints. For
equality and min_trace a K met to ``feas_tol`` can lie above the optimum on a thin face, so the K judged and
returned is the factor polished onto the equalities by Gauss–Newton steps
(:mod:`sdpembed.solvers.mvu.polish`), certified only with a violation of at most min(feas_tol, gap_tol²) and a
gap that is not negative. Where points are joined by edges of length 0 (duplicates), the K
judged and returned has them merged (:meth:`~sdpembed.problems.MVUInstance.feasible_point`, every variant
but slack): a factor meets those edges only to the tolerance, off a face where tr K moves like the square
root of the violation.

The proof's own limit: the Cholesky proof of dual feasibility subtracts a rounding shift
δ ≈ γ_{n+1}·tr L(y) (Demmel's bound), and the bound it proves exceeds yᵀD by about 2δ/c of
itself (:func:`~sdpembed.problems.mvu.proof_margin`); tr L(y) = 2Σy grows like n/λ₂, so on a
2,500-point swiss roll this alone is about 1e-6 — the default ``gap_tol``. Up to
:data:`~sdpembed.problems.mvu.EXTENDED_PROOF_MAX_N` points the proof runs in extended precision where
double's margin would exceed 1e-6 (a long cycle such as the trefoil knot of thesis Fig. 3.8, whose small λ₂
makes tr L(y) large); it costs O(n³) in interpreted blocks, so an iterate's multipliers get it only when their
bound could come within ``EXTENDED_GOAL`` gap tolerances of its objective (``goal`` of
:func:`~sdpembed.problems.mvu.dual_bound`), the others the proof in double. When the certified
gap is within four such margins, the margin exceeds half of ``gap_tol`` and the violation is
met, the run stops ``inaccurate`` with a message naming the margin, instead of iterating on a
gap that more iterations do not shrink; a ``gap_tol`` above the margin certifies.

Where it does not converge: the slack variant with ω near 1 (ω = 0.995 on the 1,000-point swiss roll
of BENCHMARKS.md, "Exact MVU at scale"; the 200-point roll certifies at ω = 0.987 and 0.995, the 1,000-point
roll at 0.987, barely) can end ``max_iterations``. Its Newton phase takes ``max_inner`` steps at most outer
iterations without meeting its tolerance, about half of them cut by the line search — also at σ = 100, and also where
no edge changes sides of the box between steps and full steps of the exact generalised Hessian are
taken (solved to a relative residual of 1e-14, and lowering f by half the model's slope, as a
quadratic would), so neither the kinks of Π_𝒴 nor the linear algebra: the steps keep their length
and the gradient does not fall, as along a curved valley, where the step's own second-order change
of the residuals, σ‖(BΔ)_e‖², moves the gradient by as much as the step removes — so σ is not
raised and the residual (y⁺ − y)/σ and the proved gap fall slowly too; fewer Newton
steps per outer iteration advance K faster but leave multipliers that are not dual feasible.
Near the least valid ω the factor is also nearly rank one (its first singular value 150 times the
second at ω = 0.987), with its other columns each on a few dozen nodes, and the dual slack has
eigenvalues of 1e-5 – 1e-4 outside range(Y): a step of the multipliers that keeps it PSD is tiny.
The registry keeps the interior point as the slack variant's default at every size.
The inequality variant on the trefoil knot of thesis Fig. 3.8 at noise 0.01 without angle edges (k = 4, an open chain
once linked) ends ``max_iterations`` too: at the penalty's cap the Newton steps stop without converging (∇f of 1e2 –
4e3 after ``max_inner`` steps), and the multipliers y + σg, dual feasible, are not complementary to K (the dual slack's
least eigenvalue 1e-7 – 5e-4 where it should vanish on range(K)), so the proved gap wanders between 1e-5 and 7e-2; a
least-squares fit of stationarity on the tight edges does not help there, as those edges form a spanning tree on
which no y ≥ 0 is stationary (relative residual 7e-3).

The start is classical scaling of the graph's shortest-path distances (an unfolded guess, as in
Isomap) for the maximisation variants and a small random Y for min_trace, whose optimum folds
the graph up. Locked-up instances (Sec. 3.1.12): when an equality graph is rigid the dual
optimum is not attained, the multipliers grow without bound and the proved gap stalls; the run
then ends ``max_iterations`` or ``inaccurate`` with a message saying so — never ``optimal``.

References
----------
.. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
   Pennsylvania, 2007. Implemented here: the MVU SDP (3.11)–(3.15) of Sec. 3.1.4, the relaxations
   of Sec. 3.1.6, the minimum-trace variant of Sec. 3.1.11, locked-up graphs (Sec. 3.1.12).
.. [2] S. Burer and R. D. C. Monteiro, "A nonlinear programming algorithm for solving semidefinite
   programs via low-rank factorization", Mathematical Programming 95(2), 329–357, 2003.
   Implemented here: the factorisation K = YYᵀ, the augmented Lagrangian on the factor, the
   second-order test of the dual slack for the rank.
.. [3] R. T. Rockafellar, "Augmented Lagrangians and applications of the proximal point algorithm
   in convex programming", Mathematics of Operations Research 1(2), 97–116, 1976. Implemented
   here: the proximal form of the augmented Lagrangian for inequality and box-constrained
   multipliers.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.linalg
import scipy.optimize
from scipy.sparse.csgraph import shortest_path
from scipy.sparse.linalg import ArpackNoConvergence, eigsh
from threadpoolctl import threadpool_limits

from ..._deadline import Deadline
from ..._validate import check_positive_int
from ...problems.mvu import (
    DUAL_DENSE_LIMIT,
    connectivity_interval,
    dual_bound,
    incidence_matrix,
    proof_margin,
    slack_verdict,
)
from ...results import SolveResult, build_result
from .ipm import EXTENDED_GOAL, LOCK_UP_HINT
from .polish import PolishSchedule, polished_verdict

#: Up to this many points, the dual slack's least eigenpairs fall back to a dense eigensolver when
#: shift-invert Lanczos does not converge (its memory, 8n² bytes, is then at most 128 MB).
DENSE_SLACK_FALLBACK_N = 4000

# The penalty's cap relative to its start (a penalty the inner solve cannot meet only ruins its conditioning).
_PENALTY_CAP = 1e9

__all__ = ["solve_mvu_lowrank"]


def _project_box(variant: str, omega: float | None, y: np.ndarray) -> np.ndarray:
    """Π_𝒴 of the module docstring."""
    if variant == "inequality":
        return np.maximum(y, 0.0)
    if variant == "slack":
        return np.clip(y, -omega, omega)
    return y


def _classical_scaling(n: int, edges: np.ndarray, D: np.ndarray, r: int) -> np.ndarray:
    """The top r coordinates of classical scaling of the shortest-path distances (Isomap's start)."""
    import scipy.sparse as sp

    W = sp.coo_matrix((np.sqrt(D), (edges[:, 0], edges[:, 1])), shape=(n, n)).tocsr()
    G = shortest_path(W, directed=False) ** 2
    G -= G.mean(axis=0)
    G -= G.mean(axis=1)[:, None]
    G *= -0.5
    w, U = eigsh(G, k=r, which="LA", v0=np.ones(n) / np.sqrt(n) + 1e-3 * np.arange(n) / n)
    return U * np.sqrt(np.maximum(w, 0.0))


def _laplacian_lambda2(L1) -> float:
    """λ₂ of the unit-weight Laplacian by shift-invert Lanczos (its two eigenvalues nearest a
    small negative shift are 0 and λ₂): the scale 1/λ₂ of the multipliers (the strictly feasible
    dual point of :func:`~sdpembed.problems.mvu.dual_bound` is (2c/λ₂)·1)."""
    n = L1.shape[0]
    if n <= 400:
        return float(np.linalg.eigvalsh(L1.toarray())[1])
    shift = -1e-8 * float(L1.diagonal().max())
    w = eigsh(L1.tocsc(), k=2, sigma=shift, which="LM", return_eigenvectors=False,
              v0=np.ones(n) + np.arange(n) / n)
    return float(np.max(w))


def _least_slack(B, Bt, y, c, k, direct=False):
    """The k least eigenpairs of the dual slack S = L(y) − cI on 1⊥ (dense below n = 400, else by
    shift-invert Lanczos on L(y) + a·11ᵀ/n, a = c + 1, which moves the eigenvalue of 1 above the
    others; the solves with L(y) + δI use Woodbury's identity for the rank-one term, as L(y)1 = 0).
    Where Lanczos does not converge (a cluster of eigenvalues at the shift), dense up to
    :data:`DENSE_SLACK_FALLBACK_N` points, else ``ArpackNoConvergence`` for the caller to report.

    The shift at 0 finds the eigenvalues of L(y) *nearest* 0, which are its least only when L(y) is
    nearly PSD; ``direct=True`` (dense up to :data:`DENSE_SLACK_FALLBACK_N` points) is for multipliers far from
    dual feasible, whose L(y) can have eigenvalues of order −1 below a cluster near 0."""
    import scipy.sparse as sp
    from scipy.sparse.linalg import LinearOperator, splu

    n = B.shape[1]
    L = (Bt @ sp.diags(y) @ B).tocsc()
    a = abs(c) + 1.0

    def dense():
        S = L.toarray()
        S[np.diag_indices(n)] -= c
        S += a / n
        return scipy.linalg.eigh(S, subset_by_index=[0, min(k, n) - 1])

    if n <= 400 or (direct and n <= DENSE_SLACK_FALLBACK_N):
        return dense()
    delta = 1e-6 * max(1.0, abs(c))
    try:
        lu = splu((L + delta * sp.identity(n, format="csc")).tocsc(), permc_spec="MMD_AT_PLUS_A")
    except RuntimeError as exc:                        # L(y) + δI exactly singular: no shift-invert at δ
        if n > DENSE_SLACK_FALLBACK_N:
            raise ArpackNoConvergence(f"L(y) + {delta:g} I is singular ({exc})", np.zeros(0), np.zeros((n, 0))) \
                from exc
        return dense()
    u = np.ones(n) / np.sqrt(n)

    def inverse(b):
        x = lu.solve(np.asarray(b, dtype=np.float64).reshape(n))
        return x - u * ((u @ x) * a / (delta + a))

    def product(x):
        x = np.asarray(x, dtype=np.float64).reshape(n)
        return L @ x + u * (a * (u @ x))

    M = LinearOperator((n, n), matvec=product, dtype=np.float64)
    Minv = LinearOperator((n, n), matvec=inverse, dtype=np.float64)
    try:
        w, U = eigsh(M, k=k, sigma=-delta, which="LM", OPinv=Minv, v0=np.ones(n) + np.arange(n) / n, tol=1e-10)
    except ArpackNoConvergence:
        if n > DENSE_SLACK_FALLBACK_N:
            raise
        return dense()
    order = np.argsort(w)
    return w[order] - c, U[:, order]


def _raise_multipliers(B, y: np.ndarray, D: np.ndarray, c: float, omega: float, rounds: int = 16,
                       margin: float | None = None) -> np.ndarray:
    """Slack variant: multipliers y ∈ [−ω, ω]ᴱ raised, edge by edge, towards dual feasibility
    λ_min(L(y)|₁⊥) ≥ c at a small cost in the dual objective yᵀD — the repair that replaces the
    certificate's mixing with ω·1 where it is expensive.

    L(y) is increasing in y in the PSD order (L(d) ⪰ 0 for d ≥ 0), so raising entries never
    lowers an eigenvalue. Each round takes the eigenpairs (λ_k, v_k) of L(y) on 1⊥ below the
    target c + η (η above the proof's rounding shift, :func:`~sdpembed.problems.mvu.proof_margin`)
    and raises y by the d of the linear programme

        minimise Dᵀd   s.t.   Σ_e d_e (v_k,i − v_k,j)² ≥ 2(c + η − λ_k) for each such k,   0 ≤ d ≤ ω − y,

    its constraints the first-order gains dλ_k/dy_e = ((Be)ᵀv_k)², doubled as λ_min is concave (the
    linear model overestimates the gain of a large step); where the doubled gains do not fit in the box
    (near the least valid ω), the plain ones. Mixing with the strictly feasible ω·1
    (:func:`~sdpembed.problems.mvu.dual_bound`) raises every multiplier towards ω and gains only
    ωλ₂(L₁) − c, which vanishes as ω approaches its least valid value; the programme raises the few
    edges across which the offending eigenvectors vary. The result is not proved here: the caller
    hands it to :func:`~sdpembed.problems.mvu.dual_bound`, which proves (or repairs the rest of) it.

    The equality and inequality variants (𝒴 = Rᴱ, R₊ᴱ: ``omega`` = ∞) use it where the augmented Lagrangian's
    multipliers meet the constraints but vanish on a cut of the graph: at a nearly rank-one optimum (an open chain
    straightened into a line) their support is a spanning tree, and a node near the line's centre whose edges are all
    slack leaves L(y) singular on 1⊥. The strictly feasible point there is (2c/λ₂)·1, of the order of tr L(y) itself
    for a chain (small λ₂), and the certificate's scaling costs c/λ_min − 1; the raise puts about c on a short edge
    of each such node. Their multipliers are large (tr L(y) = 2Σy), so the eigensolver's worst-case backward error
    would set η far above the eigenvalue c of range(K) (1 + 5e-7 on the trefoil of thesis Fig. 3.8) and raise it at a
    cost of 1e-5 of the bound a round: ``margin`` (the proof's own relative margin,
    :func:`~sdpembed.problems.mvu.proof_margin`) sets the target c·(1 + 2·margin + 1e-9) instead, the rest being left
    to the certificate's scaling.

    Parameters
    ----------
    B : sparse matrix of shape (E, n)
        The incidence matrix (:func:`~sdpembed.problems.mvu.incidence_matrix`).
    y : ndarray of shape (E,)
        Multipliers (clipped into [−ω, ω]).
    D : ndarray of shape (E,)
        The squared lengths (any positive scale).
    c : float
        The trace weight 1 − ω.
    omega : float
        The box's half-width (``np.inf`` for the equality and inequality variants).
    rounds : int
        Eigendecompositions at most (each dense, O(n³)).
    margin : float, optional
        The proof's relative margin at y; ``None``: η as above.

    Returns
    -------
    ndarray of shape (E,)
        Multipliers in [−ω, ω]ᴱ at least y entrywise.

    References
    ----------
    .. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
       Pennsylvania, 2007. The dual of the slack SDP of Sec. 3.1.6, in the notation of
       :mod:`sdpembed.problems.mvu`.
    """
    import scipy.sparse as sp

    n = B.shape[1]
    y = np.clip(y, -omega, omega)
    eps = np.finfo(float).eps
    shift = abs(c) + 1.0                       # moves the eigenvalue of 1 (L(y)1 = 0) above the target
    for _ in range(rounds):
        # η: four times the proof's rounding shift γ_{n+1}·tr L(y) plus the eigensolver's backward error
        # (Gershgorin: ‖L(y)‖ ≤ 2 max_i Σ_{e∋i} |y_e|)
        if margin is None:
            norm = 2.0 * float(np.max(abs(B).T @ np.abs(y)))
            target = c + 8.0 * (n + 1) * eps * float(np.abs(y).sum()) + 32.0 * n * eps * max(1.0, norm + shift)
        else:
            target = c * (1.0 + 2.0 * margin + 1e-9)
        M = (B.T @ sp.diags(y) @ B).toarray()
        M += shift / n
        w, V = scipy.linalg.eigh(M, subset_by_value=[-np.inf, target], driver="evr")
        if w.size == 0:
            break
        gains = np.asarray(B @ V) ** 2         # E × k: dλ_k/dy_e
        for factor in (2.0, 1.0):
            # near the least valid ω the doubled gains may not fit in the box: the plain first-order ones then
            lp = scipy.optimize.linprog(D, A_ub=-gains.T, b_ub=-factor * (target - w),
                                        bounds=np.column_stack([np.zeros_like(y), omega - y]), method="highs")
            if lp.status == 0:
                break
        if lp.status != 0:
            break                              # infeasible even with every multiplier at ω: nothing to gain
        y = np.minimum(y + np.maximum(lp.x, 0.0), omega)
    return y


def solve_mvu_lowrank(
    instance,
    *,
    rank: int | None = None,
    gap_tol: float = 1e-6,
    feas_tol: float = 1e-6,
    max_iter: int = 60,
    max_inner: int = 50,
    verbose: bool | int = False,
    time_limit: float | None = None,
    blas_threads: int | None = -1,
    random_state: int | None = 0,
    cpu_time_limit: float | None = None,
) -> SolveResult:
    """Solve an :class:`~sdpembed.problems.MVUInstance` by the low-rank augmented Lagrangian of
    the module docstring and certify the answer.

    Parameters
    ----------
    instance : MVUInstance
    rank : int, optional
        Starting number of columns r of the factor Y (K = YYᵀ); raised when the dual slack has
        negative eigenvalues. Default: 8 (at most n − 1).
    gap_tol : float
        Largest certified relative gap (bound − objective)/max(|objective|, |bound|) for status
        ``optimal``.
    feas_tol : float
        Largest constraint violation of K, relative to τ (:meth:`~sdpembed.problems.mvu.MVUInstance.max_violation`).
    max_iter : int
        Outer (multiplier) iterations; reaching it gives ``max_iterations``.
    max_inner : int
        Newton steps per outer iteration.
    verbose : bool or int
        Print one line per outer iteration (an int: every that many).
    time_limit : float, optional
        Wall-clock seconds; reaching it gives ``max_iterations``.
    blas_threads : int or None
        BLAS threads during the solve (restored afterwards, ``threadpoolctl``); ``-1`` (default)
        means one thread below n = 300 and the library's default above; ``None`` leaves the
        setting alone.
    random_state : int, optional
        Seed of the min_trace start and of the rank increase's fallback directions.
    cpu_time_limit : float, optional
        CPU seconds of the process (all threads, BLAS's included; ``sdpembed._deadline``); reaching it gives
        ``max_iterations``. With ``time_limit`` too, the first reached stops the run.

    Returns
    -------
    SolveResult
        ``solution`` is K = YYᵀ (n × n, PSD and centred by construction); ``dual_bound`` an
        upper bound on the optimum; ``extra`` holds the proved dual-feasible multipliers ``y``
        of the edge constraints, the factor ``Y``, the final ``rank`` and the ``residual``
        (y⁺ − y)/σ of the last outer iteration (with the violation for equality and inequality).
    """
    limit = (1 if instance.n < 300 else None) if blas_threads == -1 else blas_threads
    with threadpool_limits(limits=limit, user_api="blas"):
        return _solve(instance, rank, gap_tol, feas_tol, max_iter, max_inner, verbose,
                      Deadline.of(time_limit, cpu_time_limit), random_state)


class _Lagrangian:
    """The augmented Lagrangian f(Y) of the module docstring for fixed (y, σ), plus the term
    (κ/2)‖1ᵀY‖², κ = 2(c + 1)/n, which gives translations positive curvature (f itself is
    invariant to them only through the centring); at a centred Y it changes neither f nor ∇f."""

    def __init__(self, B, Bt, D, c, variant, omega, n, edges):
        self.B, self.Bt, self.D, self.c, self.variant, self.omega, self.n = B, Bt, D, c, variant, omega, n
        self.edges = np.asarray(edges)
        self._patterns: dict[int, dict] = {}
        absB = abs(B).T.tocsr()
        self.node_sum = lambda w: float(np.max(absB @ w))
        # the rounding floor of the gradient (_minimise): Σ_{e∋i} D_e^{3/2} and Σ_{e∋i} D_e^{1/2}
        self.noise_weight = self.node_sum(np.abs(D) ** 1.5)
        self.root_weight = self.node_sum(np.sqrt(np.abs(D)))
        self.kappa = 2.0 * (c + 1.0) / n

    def residual(self, Y):
        BY = self.B @ Y
        return BY, np.einsum("ij,ij->i", BY, BY) - self.D

    def value(self, Y, y, sigma):
        _, g = self.residual(Y)
        return self._value_at(Y, g, _project_box(self.variant, self.omega, y + sigma * g), y, sigma)

    def value_and_gradient(self, Y, y, sigma):
        """f(Y) and ∇f(Y) from one evaluation of the residuals."""
        grad, _, g, z = self.gradient(Y, y, sigma)
        return self._value_at(Y, g, z, y, sigma), grad

    def _value_at(self, Y, g, z, y, sigma):
        s = Y.sum(axis=0)
        return (-self.c * float(np.sum(Y * Y)) + 0.5 * self.kappa * float(s @ s) + float(z @ g)
                - float((z - y) @ (z - y)) / (2.0 * sigma))

    def values_along_column(self, Y, g, Bv2, t, y, sigma):
        """f(Y | t·v) for each entry of t, v a centred unit column with ((Bv)_e)² = ``Bv2`` and g = 𝒜(YYᵀ) − D:
        the new column adds t² to ‖Y‖² and t²((Bv)_e)² to each residual, and nothing to the translation term."""
        gt = g[None, :] + (t * t)[:, None] * Bv2[None, :]
        z = _project_box(self.variant, self.omega, y[None, :] + sigma * gt)
        s = Y.sum(axis=0)
        return (-self.c * (float(np.sum(Y * Y)) + t * t) + 0.5 * self.kappa * float(s @ s)
                + np.einsum("ij,ij->i", z, gt) - np.einsum("ij,ij->i", z - y, z - y) / (2.0 * sigma))

    def change_along(self, Y, BY, g, d, y, sigma):
        """t ↦ f(Y + t·d) − f(Y), computed from the changes themselves rather than as a difference of two values of
        f: near a minimiser f is a sum of terms far larger than its change along a Newton step, and the difference
        of its rounded values hides a decrease that the gradient still resolves. With Bd the edges of d, each
        residual changes by t·2(BY)_e·(Bd)_e + t²((Bd)_e)², and each edge's term of f by ∫ Π_𝒴 over the change of
        u = y + σg, divided by σ (``_box_integral``)."""
        Bd = self.B @ d
        first, second = 2.0 * np.einsum("ij,ij->i", BY, Bd), np.einsum("ij,ij->i", Bd, Bd)
        u = y + sigma * g
        Yd, dd = float(np.sum(Y * d)), float(np.sum(d * d))
        s, sd = Y.sum(axis=0), d.sum(axis=0)
        ssd, sdsd = float(s @ sd), float(sd @ sd)

        def change(t: float) -> float:
            du = sigma * (t * first + (t * t) * second)
            return (-self.c * (2.0 * t * Yd + t * t * dd) + 0.5 * self.kappa * (2.0 * t * ssd + t * t * sdsd)
                    + _box_integral(self.variant, self.omega, u, du) / sigma)

        return change

    def gradient(self, Y, y, sigma):
        BY, g = self.residual(Y)
        z = _project_box(self.variant, self.omega, y + sigma * g)
        grad = 2.0 * (self.Bt @ (z[:, None] * BY)) - 2.0 * self.c * Y + self.kappa * Y.sum(axis=0)
        return grad, BY, g, z

    def _pattern(self, r, position=None):
        """The CSC structure of the generalised Hessian at rank r, built once per rank: its nonzeros
        are the r × r blocks (i, i), (i, j), (j, i), (j, j) of every edge, so every Newton step only
        refills the values (:meth:`newton_direction`). ``position`` (unknown → row of the
        symmetrically permuted matrix) is SuperLU's fill-reducing ordering, found at the first
        factorisation of the rank and then applied to the structure itself, so that later steps
        factorise in the natural order without recomputing it."""
        cached = self._patterns.get(r)
        if cached is not None and (position is None or cached["position"] is position):
            return cached
        n, E = self.n, self.edges.shape[0]
        i, j = self.edges[:, 0], self.edges[:, 1]
        k = np.arange(r)
        # block rows/columns: edges (i,i), (j,j), (i,j), (j,i), then each node's diagonal block
        bi = np.concatenate([i, j, i, j, np.arange(n)])
        bj = np.concatenate([i, j, j, i, np.arange(n)])
        rows = (bi[:, None, None] * r + k[:, None]).repeat(r, axis=2).ravel()
        cols = (bj[:, None, None] * r + k[None, :]).repeat(r, axis=1).ravel()
        if position is not None:
            rows, cols = position[rows], position[cols]
        N = n * r
        key, where = np.unique(cols.astype(np.int64) * N + rows, return_inverse=True)
        indices = (key % N).astype(np.int32)
        indptr = np.searchsorted(key // N, np.arange(N + 1)).astype(np.int32)
        cached = {"where": where.ravel(), "indices": indices, "indptr": indptr, "nnz": key.size,
                  "position": position,
                  "diagonal": np.arange(4 * E * r * r, (4 * E + n) * r * r)[np.tile(np.eye(r, dtype=bool).ravel(), n)]}
        self._patterns[r] = cached
        return cached

    def newton_direction(self, Y, grad, BY, g, z, y, sigma, lam):
        """Solve (H + λI) d = −∇f for the generalised Hessian H = 2(L(z) − cI) ⊗ I_r + σ J_Fᵀ J_F
        + κ (11ᵀ) ⊗ I_r (F: the edges whose y + σg lies inside 𝒴, J_e(Δ) = 2(BY)_e·(BΔ)_e), the
        sparse part by LU and the rank-r translation term by Woodbury's identity. Edge e adds the
        block M_e = σ[e ∈ F]·4(BY)_e(BY)_eᵀ + 2z_e I_r at (i, i) and (j, j) and −M_e at (i, j) and
        (j, i); the blocks are summed into the fixed structure of :meth:`_pattern`."""
        import scipy.sparse as sp
        from scipy.sparse.linalg import splu

        n, r = Y.shape
        pattern = self._pattern(r)
        inside = _inside_box(self.variant, self.omega, y + sigma * g)
        w = np.where(inside, 4.0 * sigma, 0.0)
        M = (w[:, None, None] * BY[:, :, None]) * BY[:, None, :]
        M[:, np.arange(r), np.arange(r)] += 2.0 * z[:, None]
        blocks = np.zeros((4 * self.edges.shape[0] + n) * r * r)
        flat = M.reshape(-1)
        m = flat.size
        blocks[:m], blocks[m:2 * m], blocks[2 * m:3 * m], blocks[3 * m:4 * m] = flat, flat, -flat, -flat
        blocks[pattern["diagonal"]] = lam - 2.0 * self.c
        data = np.bincount(pattern["where"], weights=blocks, minlength=pattern["nnz"])
        A = sp.csc_matrix((data, pattern["indices"], pattern["indptr"]), shape=(n * r, n * r))
        # a symmetric ordering and diagonal pivots keep the fill of this symmetric system low; an
        # unstable factorisation shows as a direction that does not descend, and λ is raised
        options = {"diag_pivot_thresh": 0.0, "options": {"SymmetricMode": True}}
        if pattern["position"] is None:
            lu = splu(A, permc_spec="MMD_AT_PLUS_A", **options)
            position = lu.perm_c.copy()
            self._pattern(r, position)
        else:
            position = pattern["position"]
            lu = splu(A, permc_spec="NATURAL", **options)
        # the right-hand side and the translation term's r columns (U: √κ·(1 ⊗ e_k)) in one solve
        U = np.zeros((n * r, r + 1))
        U[:, 0] = -grad.ravel()
        k = np.arange(r)
        U[(np.arange(n)[:, None] * r + k).ravel(), np.tile(k, n) + 1] = np.sqrt(self.kappa)
        if pattern["position"] is None:
            X = lu.solve(U)
        else:
            # the permuted system: row position[a] of it is row a of (H + λI)
            Up = np.empty_like(U)
            Up[position] = U
            X = lu.solve(Up)[position]
        x, AU = X[:, 0], X[:, 1:]
        if self.kappa > 0.0:
            x = x - AU @ np.linalg.solve(np.eye(r) + U[:, 1:].T @ AU, U[:, 1:].T @ x)
        return x.reshape(n, r)


def _box_integral(variant: str, omega: float | None, u: np.ndarray, du: np.ndarray) -> float:
    """Σ_e ∫ Π_𝒴 from u_e to u_e + du_e, with no cancellation between large terms: Π_𝒴 = clip(·, lo, hi) has
    the antiderivative clip(s)²/2 + hi·(s − hi)₊ + lo·min(s − lo, 0), and each of its three parts changes by
    du itself wherever both ends lie on one linear piece of it; only an edge whose u crosses a kink takes the
    difference of the part's values, each then at most |du| from the kink."""
    v = u + du
    lo, hi = (0.0, np.inf) if variant == "inequality" else (-omega, omega) if variant == "slack" else (-np.inf, np.inf)
    p, q = np.clip(u, lo, hi), np.clip(v, lo, hi)
    inside = (np.minimum(u, v) > lo) & (np.maximum(u, v) < hi)
    total = float(np.where(inside, du, q - p) @ (p + q)) / 2.0
    if hi < np.inf:
        above = (u >= hi) & (v >= hi)
        total += hi * float(np.sum(np.where(above, du, np.maximum(v - hi, 0.0) - np.maximum(u - hi, 0.0))))
    if lo > -np.inf and lo != 0.0:
        below = (u <= lo) & (v <= lo)
        total += lo * float(np.sum(np.where(below, du, np.minimum(v - lo, 0.0) - np.minimum(u - lo, 0.0))))
    return total


def _inside_box(variant: str, omega: float | None, u: np.ndarray) -> np.ndarray:
    """Where Π_𝒴 is the identity near u (its derivative is 1 there, 0 elsewhere)."""
    if variant == "inequality":
        return u > 0.0
    if variant == "slack":
        return np.abs(u) < omega
    return np.ones(u.shape, dtype=bool)


def _pad_column(lag: _Lagrangian, Y: np.ndarray, direction: np.ndarray, y: np.ndarray, sigma: float) -> np.ndarray:
    """Y with the column t·v appended, v the centred ``direction`` and t minimising f(Y | t·v) over a
    logarithmic grid about the t at which v's most stretched edge has the median edge's length (f along the
    new column is a function of t² alone: each edge's residual grows by t²((Bv)_e)²). Where no t of the grid
    lowers f, the least one (the Newton steps grow the column along its negative curvature)."""
    v = direction - direction.mean()
    v /= np.linalg.norm(v)
    Bv2 = np.asarray(lag.B @ v) ** 2
    base = float(np.sqrt(np.median(lag.D) / np.max(Bv2)))
    t = base * np.logspace(-3.0, 1.0, 41)
    _, g = lag.residual(Y)
    values = lag.values_along_column(Y, g, Bv2, t, y, sigma)
    best = int(np.argmin(values))
    step = t[best] if values[best] < lag.value(Y, y, sigma) else t[0]
    return np.hstack([Y, step * v[:, None]])


def _numerical_rank_factor(Y: np.ndarray, spare: int) -> np.ndarray:
    """Y's columns in the basis of its singular vectors, cut to its numerical rank (singular values
    above 1e-3 of the largest) plus ``spare`` columns: the same K = YYᵀ up to the cut."""
    U, s_values, _ = np.linalg.svd(Y, full_matrices=False)
    keep = min(Y.shape[1], int(np.sum(s_values > 1e-3 * s_values[0])) + spare)
    return U[:, :keep] * s_values[:keep]


def _minimise(lag: _Lagrangian, Y, y, sigma, tol, max_steps):
    """Minimise f over Y by damped semismooth Newton with an Armijo backtracking line search;
    returns Y, the number of Newton steps and the final gradient's largest entry.

    The line search judges f's change along the step by :meth:`_Lagrangian.change_along`, from the change of
    each residual: near a minimiser the difference of two rounded values of f is noise at the size of a Newton
    step's decrease while the gradient still resolves it, and the steps would be cut to nothing there.

    The shift λ: when H + λI is indefinite (the direction does not descend), λ jumps to a shift
    that makes it positive definite by Gershgorin's bound, H ⪰ −2(c + 2 max_i Σ_{e∋i} z_e⁻) I
    (σJᵀJ and the translation term are PSD), instead of growing by factors with one
    factorisation each. The tolerance is raised to the gradient's rounding floor: z = y + σg
    carries an error of about ε·σ·D_e, which 2Bᵀ(z ∘ BY) spreads over each node's edges."""
    lam = 1e-10
    steps = 0
    gmax = np.inf
    eps = np.finfo(float).eps
    tol = max(tol, 16.0 * eps * (sigma * lag.noise_weight + float(np.max(np.abs(y))) * lag.root_weight))
    for steps in range(1, max_steps + 1):
        grad, BY, g, z = lag.gradient(Y, y, sigma)
        gmax = float(np.max(np.abs(grad)))
        if gmax <= tol:
            return Y, steps - 1, gmax
        scale = float(np.max(np.abs(z))) * 8.0 + 2.0 * abs(lag.c) + 1.0
        safe = 1.01 * (2.0 * abs(lag.c) + 4.0 * lag.node_sum(np.maximum(-z, 0.0))) + 1e-12 * scale
        for attempt in range(12):
            try:
                d = lag.newton_direction(Y, grad, BY, g, z, y, sigma, lam * scale)
            except RuntimeError:
                # SuperLU's "Factor is exactly singular": with diagonal pivots only, H + λI met a zero pivot; a
                # larger shift moves it off, as for a direction that does not descend
                d = None
            if d is not None:
                slope = float(np.sum(grad * d))
                if slope < -1e-12 * np.linalg.norm(grad) * np.linalg.norm(d):
                    break
            lam = max(lam * 100.0, 1e-8, safe / scale if attempt == 0 else 0.0)
        else:
            d, slope = -grad, -float(np.sum(grad * grad))
        change = lag.change_along(Y, BY, g, d, y, sigma)
        t = 1.0
        for _ in range(40):
            if change(t) <= 1e-4 * t * slope:
                break
            t *= 0.5
        else:
            return Y, steps, gmax
        Y = Y + t * d
        # a full step lowers λ; a step cut below half raises it (by 3: ×10 made λ alternate about
        # the right value, one rejected full step each time)
        lam = max(lam * 0.1, 1e-12) if t == 1.0 else (lam * 3.0 if t < 0.5 else lam)
    return Y, steps, gmax


def _solve(instance, rank, gap_tol, feas_tol, max_iter, max_inner, verbose, deadline, random_state) -> SolveResult:
    """The body of :func:`solve_mvu_lowrank`."""

    t0 = time.perf_counter()
    n, edges = instance.n, instance.edges
    E = edges.shape[0]
    max_iter = check_positive_int(max_iter, "max_iter")
    max_inner = check_positive_int(max_inner, "max_inner")
    r = min(check_positive_int(8 if rank is None else rank, "rank"), n - 1)
    report_every = 1 if verbose is True else int(verbose or 0)
    if n > DUAL_DENSE_LIMIT:
        raise ValueError(f"the certificate is dense in n; n = {n} exceeds {DUAL_DENSE_LIMIT}: use "
                         "variational MVU (sdpembed.solvers.mvu.variational) at this size")
    tau = instance.tau
    D = instance.sqdist / tau                          # work at the scale τ = 1 (K scales by τ, y does not)
    c = instance.trace_weight
    variant, omega = instance.variant, instance.omega
    rng = np.random.default_rng(random_state)
    hist: dict[str, list[float]] = {k: [] for k in ("objective", "dual_bound", "relative_gap", "violation",
                                                     "sigma", "rank", "inner_iterations")}

    def feasible_scale(Y):
        """s ≤ 1 with 𝒜(s²YYᵀ) ≤ D on every edge of positive length (inequality variant; 1 otherwise):
        the returned K is then feasible and its certified gap bounds its own suboptimality."""
        if variant != "inequality":
            return 1.0
        BY = incidence_matrix(n, edges) @ Y
        return float(np.sqrt(instance.feasible_shrink(tau * np.einsum("ij,ij->i", BY, BY))))

    # duplicates (edges of length 0): the K judged and returned has them merged (MVUInstance.feasible_point), as
    # the factor meets those edges only to the tolerance, off a face where tr K moves like the root of the violation
    merged = variant != "slack" and instance.has_duplicates

    def result(Y, status, message, bound, y_feas, iteration, residual=float("nan")):
        if merged:
            K = instance.feasible_point(tau * (Y @ Y.T))
            w, U = np.linalg.eigh(K)
            Y = (U * np.sqrt(np.maximum(w, 0.0)))[:, ::-1][:, :max(Y.shape[1], 1)] / np.sqrt(tau)
        else:
            Y = Y * feasible_scale(Y)
            K = tau * (Y @ Y.T)
        objective = instance.objective(K)
        rgap = instance.relative_gap(bound, objective) if np.isfinite(bound) else float("nan")
        return build_result(
            instance.problem, instance.variable, K, objective, bound, sense="max", rgap=rgap, status=status,
            message=message, method="lowrank", solver="mvu_lowrank", max_violation=float(instance.max_violation(K)),
            iterations=iteration, start=t0, history={k: np.asarray(v) for k, v in hist.items()},
            extra={"y": y_feas, "Y": np.sqrt(tau) * Y, "rank": Y.shape[1], "residual": residual},
        )

    verdict = slack_verdict(omega, *connectivity_interval(n, edges)) if variant == "slack" else None
    if verdict is not None:                            # unbounded, or undecided within the estimate's error
        return result(np.zeros((n, 1)), *verdict, float("inf"), np.zeros(E), 0)

    B = incidence_matrix(n, edges)
    Bt = B.T.tocsr()
    lag = _Lagrangian(B, Bt, D, c, variant, omega, n, edges)

    def violation_of(g):
        if variant == "inequality":
            return float(np.max(np.maximum(g, 0.0)))
        if variant == "slack":
            return 0.0
        return float(np.max(np.abs(g)))

    # the start (module docstring), scaled so that no edge is stretched
    if c > 0:
        Y = _classical_scaling(n, edges, D, min(r, n - 1))
        if Y.shape[1] < r:
            Y = np.hstack([Y, np.zeros((n, r - Y.shape[1]))])
        Y += 1e-3 * np.sqrt(np.mean(Y**2)) * rng.standard_normal(Y.shape)
    else:
        Y = rng.standard_normal((n, r)) * np.sqrt(np.mean(D))
    Y -= Y.mean(axis=0)
    _, a = lag.residual(Y)
    a += D
    # edges of length 0 (duplicate points) are left stretched: scaled by them the start would be Y = 0, whose
    # rank test adds zero columns (sized by its trace) and whose gradient stays 0
    kept = (a > 0) & (D > 0)
    if np.any(kept):
        Y *= np.sqrt(np.min(D[kept] / a[kept]))

    y = y_soft = np.zeros(E)
    trace0 = float(np.sum(Y * Y))
    # the maximisation variants' multipliers are of the order of 1/λ₂ (the strict dual point (2c/λ₂)·1,
    # _laplacian_lambda2): a penalty ten times that stretches the edges by about a tenth of D at the
    # first solve. The slack variant's multipliers are bounded by ω, and min_trace's are not of that
    # order: there the penalty starts at the scale of the start's trace over ΣD.
    scaled_penalty = variant in ("equality", "inequality")
    if scaled_penalty:
        sigma = 10.0 * c / _laplacian_lambda2((Bt @ B).tocsr())
    else:
        sigma = max(1.0, trace0 / max(float(D.sum()), 1e-300))
    sigma_start, sigma_cap = 1e3 * sigma, _PENALTY_CAP * sigma
    # the residual at which Newton takes over, and the fall of the residual below which an outer
    # iteration raises the penalty in the Newton phase (Newton meets a large penalty at little extra
    # cost; L-BFGS does not)
    switch, newton_fall = (0.3, 0.01) if scaled_penalty else (0.01, 0.25)
    # the residual below which the Newton phase drops the spare columns (maximisation variants only)
    prune_below = switch / 30.0 if scaled_penalty else 0.0
    grown = False

    status, message = "max_iterations", f"reached max_iter={max_iter} without meeting the tolerances"
    # the iterate to return when none is certified: the slack variant's of highest objective (every K = YYᵀ is
    # feasible there), the other variants' of least residual relative to feas_tol
    best_bound, best_y, best_Y = float("inf"), y, Y
    best_objective, least_residual = -float("inf"), float("inf")
    previous_violation = float("inf")
    # equality and min_trace judge a K polished onto their equalities (.polish); why the last candidate failed
    polish = PolishSchedule() if variant in ("equality", "min_trace") else None
    uncertified = None
    iteration = 0
    newton = False
    inner_tol = 1e-3

    def fun(flat, y, sigma, r):
        value, grad = lag.value_and_gradient(flat.reshape(n, r), y, sigma)
        return value, grad.ravel()

    for iteration in range(1, max_iter + 1):
        if newton:
            tol = 1e-9 * max(1.0, float(np.max(np.abs(y))))
            Y, inner, gmax = _minimise(lag, Y, y, sigma, tol, max_inner)
        else:
            lbfgs_scale = max(1.0, float(np.max(np.abs(Y))))
            opt = scipy.optimize.minimize(fun, Y.ravel(), args=(y, sigma, Y.shape[1]), jac=True, method="L-BFGS-B",
                                          options={"maxiter": 20 * max_inner, "gtol": inner_tol * lbfgs_scale,
                                                   "ftol": 1e-15, "maxcor": 20})
            Y, inner, gmax = opt.x.reshape(n, -1), opt.nit, float(np.max(np.abs(opt.jac)))
        Y -= Y.mean(axis=0)
        _, g = lag.residual(Y)
        y_new = _project_box(variant, omega, y + sigma * g)
        # the augmented Lagrangian's own residual (y⁺ − y)/σ: g for equalities, max(g, −y/σ) for
        # inequalities (complementarity included), g − ξ for the slack variant's split
        violation = max(violation_of(g), float(np.max(np.abs(y_new - y))) / sigma)
        y = y_new
        objective = c * float(np.sum(Y * Y)) - (omega * float(np.abs(g).sum()) if variant == "slack" else 0.0)
        bound, rgap = float("nan"), float("nan")
        added = 0
        # stalled: the penalty is at its cap and the residual does not fall — a local minimiser of the
        # violation at this rank, which the dual slack's negative eigenvectors lead out of; a stalled run has
        # violation (not a run whose violation already meets feas_tol: its certificate is tried instead)
        stalled = sigma >= sigma_cap and violation > max(feas_tol, 0.25 * previous_violation)
        # the slack variant's multipliers are tested at every Newton iteration (early): its residual lags, and a
        # dual slack with negative eigenvalues there means a rank the factor lacks (module docstring)
        early = variant == "slack" and newton and not (violation <= 10 * feas_tol or stalled)
        rank_test = violation <= 10 * feas_tol or stalled or early
        # the slack variant's K is feasible at any residual, so its proved gap alone certifies it: the bound is
        # tried at every Newton iteration (the residual, which measures the multipliers, can lag far behind)
        certify = rank_test or (variant == "slack" and newton)
        # the residual a certificate needs: none for the slack variant (no edge constraints)
        met = violation <= feas_tol or variant == "slack"
        grow = False
        if variant == "slack" and objective > best_objective:
            # every K of the slack variant is feasible: the iterate to return is the one of highest objective,
            # whose gap to the least bound proved is the least (the Newton phase's objective is not monotone)
            best_objective, best_Y = objective, Y.copy()
        if rank_test:
            # the dual slack on 1⊥ (1 moved to the eigenvalue 1): negative eigenvectors raise the rank
            try:
                w, U = _least_slack(B, Bt, y, c, min(6 if early else 3, n - 1), direct=variant == "slack")
            except ArpackNoConvergence as exc:
                status, message = "inaccurate", (f"the dual slack's least eigenvalues did not converge ({exc}); "
                                                 "neither the rank nor the certificate can be decided")
                break
            negative = w < -0.1 * gap_tol * max(1.0, abs(c))
            if np.any(negative) and early:
                # one column for all of them (eigenvectors are S-orthogonal: their sum has the curvature Σ w_k < 0), at
                # the size that minimises f along it; σ and y are kept, as the rest of the factor is near its optimum
                added = 1
                Y = _pad_column(lag, Y, U[:, negative] @ np.sqrt(-w[negative]), y, sigma)
                certify = False
            elif np.any(negative):
                # the columns are added after the certificate, which the maximisation variants try first where the
                # constraints are met: a dual slack singular on a cut of zero multipliers (a nearly rank-one
                # optimum) is what the raise of _raise_multipliers repairs at little cost
                grow = True
                certify = met and scaled_penalty
            elif stalled:
                status, message = "inaccurate", (f"the augmented Lagrangian stalled at violation {violation:.2e} "
                                                 f"with a dual slack that is PSD (penalty {sigma:.1e})")
                break
        if certify:
            # the gap of the K that would be returned (shrunk to feasibility for the inequality variant)
            returned = tau * best_objective if variant == "slack" else tau * objective * feasible_scale(Y) ** 2
            if merged:
                K_returned = instance.feasible_point(tau * (Y @ Y.T))
                returned = instance.objective(K_returned)
                met = met and float(instance.max_violation(K_returned)) <= feas_tol
            # multipliers that cannot prove a bound within EXTENDED_GOAL gap tolerances of it are proved in double
            # (dual_bound's goal): the extended-precision proof, O(n³) in interpreted blocks, is paid near the end only
            goal = (returned, EXTENDED_GOAL * gap_tol)
            if grow:
                # y is not dual feasible (the rank test's negative eigenvalues), and mixing it with (2c/λ₂)·1 costs
                # far more than the raise
                bound_t, y_feas = dual_bound(instance, _raise_multipliers(B, y, D, c, np.inf,
                                                                          margin=proof_margin(instance, y)), goal=goal)
            else:
                bound_t, y_feas = dual_bound(instance, y, goal=goal)
            if variant == "slack" and (tau * float(np.clip(y, -omega, omega) @ D) + 1e-9 * abs(bound_t)
                                       < min(bound_t, best_bound)):
                # the certificate mixed y with ω·1 (y was not dual feasible) and cost more than yᵀD; the
                # targeted raise (_raise_multipliers) costs less, and more so as ω nears its least value
                bound_r, y_r = dual_bound(instance, _raise_multipliers(B, y, D, c, omega), goal=goal)
                if bound_r < bound_t:
                    bound_t, y_feas = bound_r, y_r
            bound = bound_t
            rgap = instance.relative_gap(bound_t, returned)
            if bound_t < best_bound:
                best_bound, best_y = bound_t, y_feas
            best_gap = instance.relative_gap(best_bound, returned)
            if met and best_gap <= gap_tol and polish is not None:
                # an equality K met to feas_tol can lie above the optimum (a thin face, Sec. 3.1.12): the K judged
                # and returned is polished onto the equalities, and a negative gap is never accepted (.polish)
                verdict = polished_verdict(instance, np.sqrt(tau) * Y, best_bound, gap_tol=gap_tol,
                                           feas_tol=feas_tol) if polish.due() else None
                if verdict is not None and verdict.failure is not None:
                    uncertified = verdict.failure
                    polish.failed()
                elif verdict is not None:
                    status, rgap = "optimal", verdict.relative_gap
                    message = (f"polished onto the equalities: violation {verdict.violation:.2e} <= {feas_tol:g}, "
                               f"certified relative gap {rgap:.2e} <= {gap_tol:g}")
                    Y = verdict.factor / np.sqrt(tau)
                    break
            elif met and abs(best_gap) <= gap_tol:
                status = "optimal"
                rgap = best_gap
                message = (f"{'residual' if variant == 'slack' else 'violation'} {violation:.2e}"
                           f"{'' if variant == 'slack' else f' <= {feas_tol:g}'}, certified relative gap "
                           f"{rgap:.2e} <= {gap_tol:g}")
                best_Y = best_Y if variant == "slack" else Y
                break
            margin = proof_margin(instance, y, goal=goal)
            if met and margin > 0.5 * gap_tol and best_gap <= 4.0 * margin:
                # the gap left is the proof's own rounding margin, which more iterations do not shrink
                status, message = "inaccurate", (
                    f"certified relative gap {best_gap:.2e} > gap_tol = {gap_tol:g}: at n = {n} the rounding "
                    f"margin of the proof alone is {margin:.1e} of the bound (problems.mvu.proof_margin); a "
                    "gap_tol above it certifies")
                best_Y = best_Y if variant == "slack" else Y
                break
        if grow:
            added = int(negative.sum())
            if scaled_penalty:
                # σ is kept here, often large: each column at the size that minimises f along it
                for column in U[:, negative].T:
                    Y = _pad_column(lag, Y, column, y, sigma)
            else:
                step = np.sqrt(np.abs(w[negative]) * trace0 / n)
                Y = np.hstack([Y, U[:, negative] * step])
            if not scaled_penalty:
                # a soft penalty lets the new columns grow out of the saddle; with the scaled penalty
                # it is kept, as lowering it undoes the feasibility reached
                sigma = min(sigma, sigma_start)
                if stalled:
                    # at the cap every outer iteration added σ·g to y: restart from the multipliers of the
                    # last soft penalty, which the padded point nearly minimises (with the inflated ones the
                    # next solve left for a point at violation 13.8)
                    y = y_soft
        if variant != "slack" and violation / feas_tol < least_residual:
            least_residual, best_Y = violation / feas_tol, Y.copy()
        for key, value in zip(hist, (tau * objective, bound, rgap, violation, sigma, Y.shape[1], inner),
                              strict=True):
            hist[key].append(value)
        if report_every and (iteration - 1) % report_every == 0:
            print(f"mvu lowrank it {iteration:3d}  obj {tau * objective:.10g}  bound {bound:.10g}  gap {rgap:.2e}  "
                  f"viol {violation:.2e}  sigma {sigma:.1e}  rank {Y.shape[1]}{f' (+{added})' if added else ''}  "
                  f"newton {inner} |grad| {gmax:.1e}  {time.perf_counter() - t0:.2f}s")
        if deadline is not None and deadline.passed():
            message = deadline.reached()
            break
        # L-BFGS stops at gtol = inner_tol·max(1, max|Y|): its solve has converged at ten times that, also
        # where max|Y| exceeds the multipliers (slack: |y| <= omega < 1), or sigma would never rise
        converged = gmax <= (1e-6 * max(1.0, float(np.max(np.abs(y)))) if newton
                             else 10.0 * inner_tol * max(1.0, float(np.max(np.abs(y))), lbfgs_scale))
        fall = newton_fall if newton else 0.25
        if violation > fall * previous_violation and converged and sigma < sigma_cap:
            sigma *= 10.0                      # a penalty the inner solve cannot meet only ruins its conditioning
        previous_violation = violation
        if sigma <= sigma_start:
            y_soft = y
        inner_tol = max(1e-10, min(inner_tol, 0.1 * violation))
        grown = grown or added > 0
        if newton and violation <= prune_below and not grown:
            # the spare columns have stayed near zero: drop them (module docstring); never after a rank
            # increase, whose new columns start small
            Y = _numerical_rank_factor(Y, 0)
        if not newton and violation <= switch:
            # the first-order phase has found the basin: keep the columns that carry K, two spare, and
            # polish by Newton
            Y = _numerical_rank_factor(Y, 2)
            newton = True
    if status != "optimal" and uncertified is not None:
        message += f"; at the last candidate iterate {uncertified}"
    if status != "optimal" and variant in ("equality", "min_trace"):
        message += LOCK_UP_HINT
    if status != "optimal" or variant == "slack":
        Y = best_Y
    if status != "optimal":
        message += (" (returning the iterate of highest objective)" if variant == "slack"
                    else " (returning the iterate closest to the tolerances)")
    return result(Y, status, message, best_bound, best_y, iteration, violation)
