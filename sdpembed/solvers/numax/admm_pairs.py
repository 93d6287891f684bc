"""NuMax ADMM on pair secants with implicit iterates and a warm-started partial eigensolver.

The same iteration as :func:`~sdpembed.solvers.numax.admm.box_trace_admm` (NuMax Algorithm 1
with the exact least-squares step (12)–(13)), for the secants of pairs of points — the
restricted problems of column generation (Algorithm 2). It produces the same iterates (up to
rounding and the accuracy of the partial eigensolver, see below) at a fraction of the cost per
iteration when the span dimension r is in the hundreds and the solution has low rank:

* **Implicit iterates.** With W = P − Λ and c = (I + 𝒜𝒜*)⁻¹(q + ω − 𝒜(W)), the updates are
  L⁺ = P − Λ + 𝒜*(c) and Λ⁺ = (1 − η)Λ + η𝒜*(c), so Λ stays of the form a·Λ₀ + 𝒜*(z)
  (Λ₀ the warm start, a a scalar, z ∈ Rˢ) and L⁺ + Λ⁺ = P + α·Λ₀ + 𝒜*(u). P is low rank and
  kept as a factor; 𝒜*(u) = X_aᵀ Lap(u/d²) X_a is applied through the n_a points the pairs
  touch with a sparse Laplacian. No r×r matrix is formed in a normal iteration.
* **Values for free.** 𝒜(P) comes from the factor (O(n_a r k)); 𝒜(L⁺) = q + ω − c and
  𝒜(Λ⁺) = 𝒜(Λ) − η(𝒜(P) − 𝒜(L⁺)) are updated exactly; Frobenius norms of 𝒜*(v) come from
  ‖𝒜*(v)‖² = vᵀ𝒜𝒜*v = vᵀ(Kv − v), with K = I + 𝒜𝒜* and Kz tracked through Kc = the
  least-squares right-hand side (O(S) per iteration).
* **Partial eigensolver.** The shrinkage (11) needs only the eigenpairs of L + Λ above 1/β.
  A block of Ritz vectors (the rank plus a margin) is carried from one iteration to the next:
  Rayleigh–Ritz on it, then, while a Ritz pair above the threshold has a residual above
  ``eig_tol``·max(e₁, e₂)·‖M‖ (the projection error shrinks with the ADMM's own residual), on the
  block expanded by its residual directions (at most three times). The block must also hold
  every eigenvalue above the threshold (its smallest Ritz value lies below). Otherwise — and every
  ``refresh_every`` iterations — a full eigendecomposition is made. With a tight ``eig_tol`` the
  iterates match the explicit ADMM's to rounding, and at the default the runs reach the same
  certified optimum in the same number of iterations (tests/solvers/numax/test_admm_pairs.py).

Nothing here weakens the result: the returned P is PSD by construction, and its violation
and certified gap are evaluated from the explicit secant rows exactly as in
:func:`~sdpembed.solvers.numax.admm.box_trace_admm`. A certified run's checks take the values of
*short* pairs (points far closer than their norms) from those rows too, so that a stop at the
tolerance's edge holds on the certificate. When P has full rank r the cone is inactive and, with
more active pairs than r(r+1)/2, the problem is degenerate and the ADMM slow: a certified run that
still violates at full rank after 500 iterations solves the linear program without the cone once
(:func:`~sdpembed.solvers.numax.admm.full_rank_linear_program`, exact when its P is definite) and
keeps its P if the tolerances hold.

References
----------
.. [1] C. Hegde, A. C. Sankaranarayanan, W. Yin and R. G. Baraniuk, "NuMax: A convex approach for
   learning near-isometric linear embeddings", IEEE Transactions on Signal Processing 63(22),
   6109–6121, 2015. Implemented here: Algorithm 1 with the shrinkage (11) and the least-squares
   step (12)–(13), on the restricted problems of Algorithm 2.
"""

from __future__ import annotations

import numbers
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..._validate import check_positive_int
from ...problems.numax_certificate import (
    box_violation,
    certified_lower_bound,
    check_bounds,
    secant_span,
    signed_multipliers,
)
from ...problems.numax_operator import PairSecantOperator
from ...results import SolveResult, build_result, relative_gap
from .admm import (
    LINEAR_PROGRAM_FROM,
    ADMMState,
    check_constraint_count,
    end_by_linear_program,
    full_rank_linear_program,
    warm_start_iterates,
)
from .admm_control import (
    BALANCE_EVERY,
    MAX_CONSTRAINTS,
    ADMMControl,
    ADMMPenalty,
    ADMMStopping,
    AndersonMixing,
    announce_setup,
    check_bundle,
)
from .factor_polish import polish_with_system, polished_objective_estimate
from .pair_linalg import (
    ImplicitMatrix,
    LeastSquaresSteps,
    PairGeometry,
    PartialShrink,
    SpanCoordinates,
    approximate_bound,
    factor_in_original_coordinates,
    holds_secants,
    range_corrected_multipliers,
)

__all__ = ["LEAST_SQUARES_MODES", "OutsideMonitor", "PairNumerics", "pair_trace_admm"]

#: the polish is tried only when the working pairs' violation is at most this many times feas_tol
POLISH_FROM = 100.0
#: iterations between two attempts at the polish
POLISH_EVERY = 5
#: an outside monitor scans before its 20-iteration cadence once the working pairs' accuracy is within
#: this factor of its ratio times the last scan's outside violation
MONITOR_LOOKAHEAD = 2.0
#: "mixed" least squares go to double precision when the violation or gap shrank by less than
#: a tenth over this many iterations
STALL_SPAN = 10
#: the means of the least-squares step (12)–(13) (:class:`PairNumerics`)
LEAST_SQUARES_MODES = ("auto", "mixed", "inverse", "cholesky", "cholesky-single")


@dataclass(frozen=True)
class PairNumerics:
    """How :func:`pair_trace_admm` computes its steps: the partial eigensolver, the least squares,
    the polish. None of these changes the problem or the certificate, only the cost and the path.

    Parameters
    ----------
    eig_tol : float
        Largest accepted residual ‖Mu − θu‖ of a Ritz pair above the threshold, relative to ‖M‖
        and to the current ADMM residual max(e₁, e₂) (the projection errors shrink with it).
    refresh_every : int
        A full eigendecomposition at least every this many iterations.
    eig_precision : {"double", "single"}
        Precision of the partial eigensolver's Rayleigh–Ritz steps. With ``"single"`` their
        products run in single precision (their QR and small eigenproblems in double, as NumPy
        computes float32 input; :class:`~sdpembed.solvers.numax.pair_linalg.PartialShrink`), and a
        Ritz residual is asked down to 1e-5·‖M‖ only: for inexact runs such as column generation's
        loose rounds (1e-3 accuracy), never for a run that is certified to 1e-5.
    least_squares : {"auto", "mixed", "inverse", "cholesky", "cholesky-single"}
        How the least-squares step (12)–(13) applies (I + 𝒜𝒜*)⁻¹: the explicit inverse (one
        ``symv`` an iteration; updated from ``warm_start.K_inv`` when given), or the Cholesky
        factor alone (two triangular solves an iteration, about twice as slow, but no
        inversion: the cheaper choice for a few iterations on a changed set of pairs), in
        double or single precision (twice as fast again, relative errors ≈ 10⁻⁶: for the
        inexact loose rounds of column generation). ``"auto"`` updates a given inverse, and
        otherwise starts with the factor and inverts it (``potri`` only) after max(50, S/25)
        iterations, when the slower solves would have cost as much. ``"mixed"`` starts with the
        single-precision factor and refactorises in double precision (then as ``"auto"``) after
        max(50, S/25) iterations, or as soon as max(e₁, e₂), the violation or the approximate
        gap, above its tolerance, shrinks by less than a tenth over 10 iterations:
        single precision leaves noise of ≈ 10⁻⁶ in the iterates, at which they stall (with
        ``polish``, the violation is often settled anyway). Column generation's tight rounds use
        it: the same iteration counts at a lower cost per iteration. 𝒜𝒜* of the pairs that
        ``warm_start.gram`` covers is reused, unless the pairs join fewer points than there are
        pairs: then it is made afresh from the points' Gram matrix and factorised in place
        (:mod:`~sdpembed.solvers.numax.least_squares`).
    polish : bool
        Once max(e₁, e₂) ≤ ``tol`` and the working pairs' violation is at most
        100·``feas_tol``, at most every 5 iterations: bound the gap with the multipliers β·ω
        corrected on the range of P
        (:func:`~sdpembed.solvers.numax.pair_linalg.range_corrected_multipliers`) when β·ω alone
        does not prove it, and try to settle the violation by Gauss–Newton steps on the factor of P
        (:func:`~sdpembed.solvers.numax.factor_polish.polish_with_system`) that also move the values
        within 100·``feas_tol`` of the bound their multiplier prices onto it, provided the gap and
        its first-order estimate after the polish
        (:func:`~sdpembed.solvers.numax.factor_polish.polished_objective_estimate`) are within
        ``gap_tol`` and the S constraints are fewer than the factor's rank·r entries (otherwise the
        steps' equations are overdetermined; a failed attempt doubles the wait for the next); the
        polished P is kept only if its own violation and gap meet the tolerances (it is PSD and of
        the same rank by construction). Neither is tried while a ``monitor`` would end the run first
        (its ratio times the last outside violation above 100·``feas_tol``). The run's certificate
        is then made from the multipliers whose bound it stopped on. On the last restricted problem
        of column generation this ends the run in a fraction of the iterations.
    anderson : int
        Memory of an Anderson acceleration of the iteration's fixed-point map
        (:class:`~sdpembed.solvers.numax.admm_control.AndersonMixing`, safeguarded); 0 (the default)
        runs the plain iteration. The accelerated state is (𝒜(L), ω, Λ's coefficients a and z,
        M = L + Λ as P′ + μΛ₀ + 𝒜*(u), 𝒜(P′), K z, 𝒜(Λ)), with P′ a combination of the last
        ``anderson`` + 1 projections kept as their stacked factors; the fixed-point residual is
        measured on (𝒜(L), ω, z, u, 𝒜(P′), a, μ). No extrapolation is made into an iteration that
        balances the penalty, and a rescaling of the multipliers clears the memory. It changes the
        path, never the problem or the certificate.
    """

    eig_tol: float = 1e-1
    refresh_every: int = 50
    eig_precision: str = "double"
    least_squares: str = "auto"
    polish: bool = True
    anderson: int = 0

    def __post_init__(self) -> None:
        if isinstance(self.eig_tol, bool) or not isinstance(self.eig_tol, numbers.Real) or not self.eig_tol > 0.0:
            raise ValueError(f"eig_tol must be a positive real number, got {self.eig_tol!r}")
        check_positive_int(self.refresh_every, "refresh_every")
        if self.eig_precision not in ("double", "single"):
            raise ValueError(f"eig_precision must be 'double' or 'single', got {self.eig_precision!r}")
        if self.least_squares not in LEAST_SQUARES_MODES:
            raise ValueError(f"least_squares must be one of {LEAST_SQUARES_MODES}, got {self.least_squares!r}")
        if not isinstance(self.polish, bool | np.bool_):
            raise ValueError(f"polish must be a bool, got {self.polish!r}")
        check_positive_int(self.anderson, "anderson", minimum=0)


@dataclass(frozen=True)
class OutsideMonitor:
    """Stop refining a restricted problem that pairs outside it will change anyway.

    Parameters
    ----------
    scan : callable
        ``scan(factor) -> float``: for the current Ψ (k, N), the worst violation among the
        pairs *outside* this problem (column generation passes a scan of all pairs). At a
        check, once the working pairs' accuracy max(violation, e₁, e₂) is at most ``ratio``
        times that outside violation (and it exceeds ``feas_tol``), the run stops with status
        ``max_iterations``, uncertified (as with ``certify`` False: bound and gap NaN, values through
        the points). It is called every 20 iterations, and at a check sooner once the working
        pairs' accuracy is within ``MONITOR_LOOKAHEAD`` (2) of ``ratio`` times the last call's outside
        violation (whether the stop holds is then decided on the current Ψ); always so that its
        counted work (``work``) stays within a tenth of the ADMM's (the cadence counts floating-point
        operations, never the clock, so a run's iterates do not depend on the machine's load).
    ratio : float
        See ``scan``.
    work : callable, optional
        ``work(k)``: the floating-point operations of one ``scan`` of a factor of ``k`` rows;
        None counts a scan as free (it is then called every 20 iterations).
    """

    scan: Callable[[np.ndarray], float]
    ratio: float = 0.1
    work: Callable[[int], float] | None = None

    def __post_init__(self) -> None:
        if not callable(self.scan):
            raise ValueError(f"scan must be callable, got {self.scan!r}")
        if self.work is not None and not callable(self.work):
            raise ValueError(f"work must be callable or None, got {self.work!r}")
        if isinstance(self.ratio, bool) or not isinstance(self.ratio, numbers.Real) or not self.ratio > 0.0:
            raise ValueError(f"ratio must be a positive real number, got {self.ratio!r}")


def _anderson_step(mixing: AndersonMixing, plain: tuple, x_in: np.ndarray | None, rescaled: bool, n_measured: int,
                   no_extrapolation: bool) -> tuple[np.ndarray, list | None]:
    """The next point of an accelerated run and the parts (γ, U, s) of its P′ = Σ γ U diag(s) Uᵀ:
    ``plain`` = (T(x), (U, s) of its projection) is recorded against the input ``x_in`` (not after
    a rescaling of the multipliers, which changes the map, nor on the first iteration, whose input
    is the warm start's); parts None: the safeguard rejected x_in, go on from ``mixing.fallback``."""
    output, factor = plain
    if x_in is None or rescaled:
        mixing.reset()
        return output, [(1.0, *factor)]
    if not mixing.record(output, (output - x_in)[:n_measured], factor):
        return mixing.fallback[0], None
    gamma = None if no_extrapolation else mixing.weights()
    if gamma is None:
        return output, [(1.0, *factor)]
    return mixing.combine(gamma), [(g, U, s) for g, (U, s) in zip(gamma, mixing.payloads, strict=True)]


def _warm_values(op: PairSecantOperator, L0: np.ndarray, Lam0: np.ndarray,
                 carried: tuple[np.ndarray, np.ndarray] | None) -> tuple[np.ndarray, np.ndarray]:
    """𝒜(L₀) and 𝒜(Λ₀) of a warm start: those of the first secants from ``carried`` (what the run that
    ended with L₀ and Λ₀ tracked for them, in the same basis), the others' as v_kᵀ L₀ v_k from their
    rows, O(S_new r²), or, when the S_new new pairs outnumber the n_a points, through the points'
    images X_a L₀ and X_a Λ₀, O(n_a r² + S_new r)."""
    if carried is None or carried[0].size > op.n_constraints:
        return op.apply(L0), op.apply(Lam0)
    n_known = carried[0].size
    S_new = op.n_constraints - n_known
    if S_new == 0:
        return carried[0].copy(), carried[1].copy()
    r = L0.shape[0]
    if S_new <= op.points.shape[0]:
        # both matrices in one product: (S_new, r) × (r, 2r)
        V_new = op.unit_secants(slice(n_known, None))
        B = V_new @ np.hstack([L0, Lam0])
        return (np.concatenate([carried[0], np.einsum("ij,ij->i", B[:, :r], V_new)]),
                np.concatenate([carried[1], np.einsum("ij,ij->i", B[:, r:], V_new)]))
    # more new pairs than points: through the points' images, (n_a, r) × (r, 2r), then per pair
    # ((y_i − y_j)·(x_i − x_j)) / d²
    Y = op.points @ np.hstack([L0, Lam0])
    i, j = op.i[n_known:], op.j[n_known:]
    D = op.points[i] - op.points[j]
    B = Y[i] - Y[j]
    inv_d2 = 1.0 / op.norms[n_known:] ** 2
    return (np.concatenate([carried[0], np.einsum("ij,ij->i", B[:, :r], D) * inv_d2]),
            np.concatenate([carried[1], np.einsum("ij,ij->i", B[:, r:], D) * inv_d2]))


def pair_trace_admm(
    operator: PairSecantOperator,
    lo: np.ndarray,
    hi: np.ndarray,
    *,
    problem: str = "numax",
    stopping: ADMMStopping | None = None,
    penalty: ADMMPenalty | None = None,
    numerics: PairNumerics | None = None,
    warm_start: ADMMState | None = None,
    basis: np.ndarray | None = None,
    span: SpanCoordinates | None = None,
    monitor: OutsideMonitor | None = None,
    certify: bool = True,
    keep_polish_system: bool = False,
    max_constraints: int = MAX_CONSTRAINTS,
    verbose: bool | int = False,
) -> SolveResult:
    """ADMM (NuMax Algorithm 1) for min tr P s.t. lo ≤ 𝒜(P) ≤ hi, P ⪰ 0, on pair secants.

    Same problem, options, stopping rule and result as
    :func:`~sdpembed.solvers.numax.admm.box_trace_admm` (always in the span of the secants),
    computed with implicit iterates and a partial eigensolver (module docstring).

    Parameters
    ----------
    operator : PairSecantOperator
        The pairs (their secants define 𝒜).
    lo, hi, problem, stopping, penalty, warm_start, max_constraints, verbose
        As for :func:`~sdpembed.solvers.numax.admm.box_trace_admm`.
    numerics : PairNumerics, optional
        The partial eigensolver, the least-squares means and the polish (default
        ``PairNumerics()``).
    basis : ndarray of shape (N, r), optional
        An orthonormal basis of a subspace that holds every secant (e.g. the span of all
        centred points, computed once by column generation for all its rounds); used if it
        reproduces every secant to 1e-10, otherwise the span of the secants is computed.
    span : SpanCoordinates, optional
        The coordinates of the points of ``operator``'s pairs in a basis of their span, computed
        once for many problems on pairs of the same points (column generation's rounds): its basis
        replaces ``basis``, and the points' coordinates in it are read off instead of computed.
    monitor : OutsideMonitor, optional
        A scan of the pairs outside this problem, which ends a run whose accuracy on the working
        pairs is wasted (column generation's rounds).
    certify : bool
        Compute the certified dual bound of the result from the explicit secants (O(S N² + N³)).
        Column generation's loose rounds skip it (their bound is never used); without it the
        bound and gap are NaN, ``extra["y"]`` holds the unscaled multipliers, the status is
        never ``optimal``, and the values 𝒜(P) and the violation are computed through the points'
        coordinates in the basis (the pair route, O(n_a r k + S k) for P of rank k), so that the
        explicit secants (S × N) are not formed. A run that ``monitor`` ends is not certified either.
    keep_polish_system : bool
        Keep the factorised normal system of the polish that settled P in ``extra["polish_system"]``
        (a :class:`~sdpembed.solvers.numax.factor_polish.NormalSystem`, S × S in single precision;
        None if P was not polished): column generation borders it to settle a few more pairs
        without a restricted solve.

    Returns
    -------
    SolveResult
        As :func:`~sdpembed.solvers.numax.admm.box_trace_admm`; ``extra`` also holds
        ``factor`` Ψ (k, N) with ΨᵀΨ = P, the counts of full and partial eigensolves,
        ``double_precision_from`` (the iteration at which ``"mixed"`` least squares went to
        double precision, None if it did not) and ``polished`` (whether P is a polished one).
    """
    start = time.perf_counter()
    stopping, penalty = check_bundle(stopping, ADMMStopping, "stopping"), check_bundle(penalty, ADMMPenalty, "penalty")
    numerics = check_bundle(numerics, PairNumerics, "numerics")
    if monitor is not None:
        check_bundle(monitor, OutsideMonitor, "monitor")
    if not isinstance(operator, PairSecantOperator):
        raise TypeError("pair_trace_admm needs a PairSecantOperator; use box_trace_admm for explicit secants")
    S = operator.n_constraints
    lo, hi = check_bounds(lo, hi, S)
    check_constraint_count(S, max_constraints)
    eta, tol, feas_tol, gap_tol = penalty.eta, stopping.tol, stopping.feas_tol, stopping.gap_tol

    op = None
    if span is not None:
        basis = span.basis
        op = span.reduced(operator)
    if op is None and basis is not None and np.ndim(basis) == 2 and np.shape(basis)[0] == operator.dim:
        op = operator.in_basis(basis)
        if not holds_secants(operator, basis, op.points):
            op = None
    if op is None:
        basis = secant_span(operator.V)
        op = operator if basis is None else operator.in_basis(basis)
    r = op.dim
    geom = PairGeometry(op)
    announce_setup(verbose, S, r)
    steps = LeastSquaresSteps(op, numerics.least_squares, warm_start, basis, keep_cosines=numerics.polish)
    same_basis = warm_start is not None and (warm_start.basis is basis or (
        basis is not None and warm_start.basis is not None and np.array_equal(warm_start.basis, basis)))
    if warm_start is not None:
        L0, Lam0, omega, beta = warm_start_iterates(warm_start, basis, operator.dim, S)
        AL, A_Lam0 = _warm_values(op, L0, Lam0, warm_start.values if same_basis else None)
        norm_Lam0 = float(np.linalg.norm(Lam0))
    else:
        L0 = Lam0 = None
        omega, AL, A_Lam0, norm_Lam0 = np.zeros(S), np.zeros(S), np.zeros(S), 0.0
        beta = penalty.beta
    a, z, A_Lam = 1.0, np.zeros(S), A_Lam0.copy()            # Λ = a Λ₀ + 𝒜*(z)
    Kz = np.zeros(S)                                          # (I + 𝒜𝒜*) z, tracked exactly
    single = numerics.eig_precision == "single"
    constants_single = tuple(None if A is None else A.astype(np.float32) for A in (Lam0, L0)) if single else None
    M = ImplicitMatrix(geom, None, None, 1.0, Lam0, 1.0, L0, np.zeros(S), constants_single)   # L + Λ
    shrink = PartialShrink(r, numerics.eig_tol, numerics.refresh_every, single=single)
    if same_basis:
        shrink.start_from(warm_start.eig_block)

    def combo_norm2(alpha: float, v: np.ndarray, Kv: np.ndarray) -> float:
        """‖α Λ₀ + 𝒜*(v)‖², given Kv = (I + 𝒜𝒜*) v: ‖𝒜*(v)‖² = vᵀ𝒜𝒜*v = vᵀ(Kv − v)."""
        out = float(v @ (Kv - v))
        if alpha != 0.0 and Lam0 is not None:
            out += alpha * alpha * norm_Lam0**2 + 2.0 * alpha * float(v @ A_Lam0)
        return max(out, 0.0)

    # short pairs' values through the points differ from their explicit rows' by ≈ ε·|x|/d (≈ 10⁻⁹ for
    # pairs 10⁻⁷ apart), enough to tip a stop at the tolerance's edge over it on the certificate: a
    # certified run's checks read those values off the rows the certificate reads (no short pairs, no work)
    short = operator.short if certify else np.zeros(0, dtype=np.int64)

    def checked_violation(values: np.ndarray, U: np.ndarray, s: np.ndarray) -> float:
        """The box violation of 𝒜(P) = ``values`` with the short pairs' from their explicit rows."""
        if short.size:
            values = values.copy()
            B = operator.short_rows @ factor_in_original_coordinates(U, s, basis).T
            values[short] = np.einsum("ij,ij->i", B, B)
        return box_violation(values, lo, hi)

    control = ADMMControl(stopping, penalty, beta, verbose, start)
    U_P, s_P, AP = np.zeros((r, 0)), np.zeros(0), np.zeros(S)
    prev = None                       # the previous iteration's P, 𝒜(P), ⟨P, Λ₀⟩, c, z, a, rhs, Kz: for ‖ΔL‖
    bound, violation, rgap, rank, objective = 0.0, float("inf"), float("inf"), 0, 0.0
    last_monitor, last_correction = 0, -POLISH_EVERY
    outside_seen = 0.0                # the monitor's last worst violation outside the working pairs
    ended_by_monitor = False
    program_tried = False             # the full-rank linear program is tried at most once
    y_acted = None                    # multipliers other than β·ω whose bound the last check acted on
    last_polish, polish_failures, polish_note, polish_system = -POLISH_EVERY, 0, "", None
    # the normal system of the last polish that reached the box but not the gap: the next attempt,
    # a few iterations on, refines with it instead of factorising J Jᵀ (S × S) afresh
    retry_system = None
    # [iteration, value] of the last reference of the stall test, for max(e₁, e₂), violation, gap
    residual_seen, violation_seen, gap_seen = [None, np.inf], [None, np.inf], [None, np.inf]

    def stalled(seen: list, value: float, tolerance: float, now: int) -> bool:
        """Whether ``value`` (above ``tolerance``) has shrunk by less than a tenth since ``seen``,
        ``STALL_SPAN`` or more iterations before iteration ``now`` (``seen`` is updated in place)."""
        if not np.isfinite(value) or value <= tolerance:
            return False
        if seen[0] is None or now - seen[0] >= STALL_SPAN:
            stuck = seen[0] is not None and value > 0.9 * seen[1]
            seen[:] = now, value
            return stuck
        return False
    # the ADMM's work and the monitor's, in floating-point operations: the least-squares step
    # (2S² for the inverse's symv or the two triangular solves) and the eigen step's products
    # through the n_a points (a few blocks of rank-many vectors, 20·n_a·r·rank in all)
    admm_work, monitor_work = 0.0, 0.0
    n_active = geom.points.shape[0]
    c, residual = np.zeros(S), 1.0
    # Anderson acceleration (numerics.anderson): the state x = (𝒜(L), ω, z, u, 𝒜(P'), a, μ, Kz, 𝒜(Λ))
    # with M = L + Λ = P' + μ Λ₀ + 𝒜*(u) and P' a combination of earlier projections (their factors
    # stacked); the fixed-point residual is measured on its first 5S + 2 entries
    mixing = AndersonMixing(numerics.anderson) if numerics.anderson else None
    x_in, rescaled, n_measured = None, False, 5 * S + 2
    for iteration in control.iterations():
        beta = control.beta
        q = np.clip(AL - omega, lo, hi)                                          # (10)
        theta, vectors = shrink(M, 1.0 / beta, residual)                        # (11)
        s_P, U_P = theta - 1.0 / beta, vectors
        rank = s_P.size
        AP = geom.factor_values(U_P * np.sqrt(s_P), shrink.vector_images * np.sqrt(s_P))   # X_a U_P carried
        b = q + omega
        rhs = b - (AP - A_Lam)
        c = steps(rhs, iteration)                                                # (12)-(13); K c = rhs
        AL_new = b - c
        r_q = AL_new - q
        # r_P = P − L⁺ = Λ − 𝒜*(c) = a Λ₀ + 𝒜*(z − c)
        norm_rP = np.sqrt(combo_norm2(a, z - c, Kz - rhs))
        norm_P2 = float(s_P @ s_P)
        P_dot_Lam0 = float(np.einsum("ij,ij->", U_P * s_P, Lam0 @ U_P)) if (Lam0 is not None and a != 0.0) else 0.0
        P_dot_rP = a * P_dot_Lam0 + float((z - c) @ AP)
        norm_L = np.sqrt(max(norm_P2 - 2.0 * P_dot_rP + norm_rP**2, 0.0))
        a_old, z_old = a, z
        a, z = (1.0 - eta) * a, (1.0 - eta) * z + eta * c                       # Λ⁺ = Λ − η r_P
        Kz_old, Kz = Kz, (1.0 - eta) * Kz + eta * rhs
        A_Lam = A_Lam - eta * (AP - AL_new)
        omega = omega - eta * r_q
        dAL = AL_new - AL
        AL = AL_new

        norm_rq = np.linalg.norm(r_q)
        e1 = 2.0 * norm_rP / max(np.sqrt(norm_P2) + norm_L, 1e-300)
        e2 = 2.0 * norm_rq / max(np.linalg.norm(q) + np.linalg.norm(AL), 1e-300)
        objective = float(np.sum(s_P))
        admm_work += 2.0 * S * S + 20.0 * n_active * r * max(rank, 1)
        control.record(objective, e1, e2, rank)
        residual = control.residual

        rescaled = False
        if control.balance_due() and prev is not None:
            # ‖L⁺ − L‖ with L⁺ = P − Λ + 𝒜*(c) and L = P' − Λ' + 𝒜*(c'), Λ − Λ' = −η(a' Λ₀ + 𝒜*(z' − c'))
            U0, s0, AP0, P0_dot_Lam0, c0, z0, a0, rhs0, Kz0 = prev
            v = c - c0 + eta * (z0 - c0)
            Kv = rhs - rhs0 + eta * (Kz0 - rhs0)
            alpha = eta * a0
            cross = (U_P * np.sqrt(s_P)).T @ (U0 * np.sqrt(s0))
            dP2 = norm_P2 + float(s0 @ s0) - 2.0 * float(np.sum(cross * cross))
            dL2 = dP2 + combo_norm2(alpha, v, Kv) + 2.0 * float(v @ (AP - AP0))
            if alpha != 0.0 and Lam0 is not None:
                dL2 += 2.0 * alpha * (P_dot_Lam0 - P0_dot_Lam0)
            factor = control.balance(norm_rP, norm_rq, np.sqrt(max(dL2, 0.0)), np.linalg.norm(dAL))
            if factor != 1.0:
                a, z, Kz, A_Lam, omega = a / factor, z / factor, Kz / factor, A_Lam / factor, omega / factor
            rescaled = factor != 1.0
        prev = (U_P, s_P, AP, P_dot_Lam0, c, z_old, a_old, rhs, Kz_old)
        # L⁺ + Λ⁺ = P + (a⁺ − a) Λ₀ + 𝒜*(c − z + z⁺)  (Λ⁺ after any rescaling)
        M = ImplicitMatrix(geom, U_P, s_P, a - a_old, Lam0, 0.0, None, c - z_old + z, constants_single)
        if mixing is not None:
            # T(x): the plain step's state, before the check (which may polish P)
            plain = (np.concatenate([AL, omega, z, c - z_old + z, AP, [a, a - a_old], Kz, A_Lam]), (U_P, s_P))
        if abs(a) < 1e-18:
            a = 0.0

        if control.check_due():
            violation = checked_violation(AP, U_P, s_P)
            decides = control.small and violation <= feas_tol              # the bound decides only then
            if decides or control.reporting:
                bound = approximate_bound(geom, lo, hi, control.beta * omega)
                rgap = relative_gap(objective, bound)
            else:
                bound, rgap = float("nan"), float("inf")
            # the gap the run acts on: a bound computed only to be printed must not change the iterates
            acted_gap = rgap if decides else float("inf")
            control.record_check(violation, bound, rgap)
            y_acted = None
            # neither the corrected bound nor the polish is worth its cost when the monitor will end the
            # run (at ratio·outside) before the working pairs reach the polish's range: column generation
            # then adds the pairs outside whatever this problem's gap
            settling = numerics.polish and control.small and (
                monitor is None or monitor.ratio * outside_seen <= POLISH_FROM * feas_tol)
            if settling and violation <= POLISH_FROM * feas_tol and iteration - last_correction >= POLISH_EVERY:
                # near the optimum the multipliers lag the iterate: a bound from them corrected on the
                # range of P (O(S k²) a step, :func:`.range_corrected_multipliers`) often proves the gap
                # tens of iterations before β·ω does
                last_correction = iteration
                if not np.isfinite(bound):
                    bound = approximate_bound(geom, lo, hi, control.beta * omega)
                    rgap = relative_gap(objective, bound)
                if rgap > gap_tol:
                    y_corrected = range_corrected_multipliers(geom, U_P, control.beta * omega)
                    corrected = approximate_bound(geom, lo, hi, y_corrected)
                    if corrected > bound:
                        bound, rgap, y_acted = corrected, relative_gap(objective, corrected), y_corrected
                acted_gap = rgap if decides else acted_gap
            if (settling and feas_tol < violation <= POLISH_FROM * feas_tol
                    and S < rank * r and iteration - last_polish >= POLISH_EVERY * 2**polish_failures):
                # the gap is often met long before the working pairs' violation: settle that tail
                # by Gauss–Newton steps on the factor (:mod:`.factor_polish`) if the gap allows.
                # Its S equations need fewer than the factor's rank·r unknowns; each failure
                # doubles the wait for the next attempt
                last_polish = iteration
                if not np.isfinite(bound):                   # not yet evaluated at this check
                    bound = approximate_bound(geom, lo, hi, control.beta * omega)
                    rgap = relative_gap(objective, bound)
                acted_gap = rgap
                polished = None
                # the values the bound's multipliers price are moved onto their bounds too (complementary
                # slackness), so the polished tr P lands near g(y); the first-order estimate of that tr P
                # skips a factorisation of J Jᵀ whose P would miss the gap anyway
                y_bound = control.beta * omega if y_acted is None else y_acted
                reach = POLISH_FROM * feas_tol
                if rgap <= gap_tol and relative_gap(polished_objective_estimate(
                        objective, AP, lo, hi, y_bound, reach), bound) <= gap_tol:
                    polished, system = polish_with_system(op.V, U_P * np.sqrt(s_P), lo, hi, tol=0.5 * feas_tol,
                                                          cosines=steps.take_cosines,
                                                          system=retry_system, multipliers=y_bound, reach=reach)
                    polish_failures += polished is None
                    retry_system = system if polished is not None else None
                if polished is not None:
                    U_new, sigma, _ = np.linalg.svd(polished, full_matrices=False)
                    polished_gap = relative_gap(float(sigma @ sigma), bound)
                    if polished_gap <= gap_tol:
                        U_P, s_P, was_violation = U_new, sigma**2, violation
                        AP = geom.factor_values(polished)
                        objective, violation, rgap = float(np.sum(s_P)), checked_violation(AP, U_P, s_P), polished_gap
                        acted_gap = rgap
                        polish_note = f" (after a polish of the factor from violation {was_violation:.1e})"
                        polish_system = system if keep_polish_system else None
            if steps.refinable:
                # a single-precision factor leaves ≈ 10⁻⁶ noise in the iterates: once the residual,
                # the violation or the gap stalls above its tolerance, refactorise in double precision
                # a list, not any(generator): every reference is brought up to date
                stalls = [stalled(seen, value, limit, iteration) for seen, value, limit in
                          ((residual_seen, control.residual, tol), (violation_seen, violation, feas_tol),
                           (gap_seen, acted_gap, gap_tol))]
                if any(stalls):
                    steps.to_double(iteration)
            if (certify and not program_tried and rank == r and iteration >= LINEAR_PROGRAM_FROM
                    and violation > feas_tol):
                # full rank: the cone is inactive, and with more active pairs than r(r+1)/2 the problem is
                # degenerate (the ADMM crawls, the polish's system is singular); its linear program is exact
                program_tried = True
                solved = full_rank_linear_program(op.V, lo, hi)
                if solved is not None:
                    s_lp, U_lp = np.linalg.eigh(solved[0])
                    AP_lp = geom.factor_values(U_lp * np.sqrt(s_lp))
                    violation_lp = checked_violation(AP_lp, U_lp, s_lp)
                    rgap_lp = relative_gap(float(np.sum(s_lp)), approximate_bound(geom, lo, hi, solved[1]))
                    if violation_lp <= feas_tol and rgap_lp <= gap_tol:
                        U_P, s_P, AP, y_acted = U_lp, s_lp, AP_lp, solved[1]
                        objective, violation, rgap = float(np.sum(s_lp)), violation_lp, rgap_lp
                        end_by_linear_program(control, violation, rgap)
                        break
            if control.stop(violation, rgap, polish_note):
                break
            # a scan every 20 iterations, and one sooner (at the next check) once the working pairs' accuracy
            # comes within MONITOR_LOOKAHEAD of the ratio against the last scan's outside violation (which grows
            # as P moves): the stop then waits no longer for the 20-iteration cadence
            if monitor is not None and admm_work >= 10.0 * monitor_work and (
                    iteration - last_monitor >= 20 or (feas_tol < outside_seen and max(violation, e1, e2)
                                                       <= MONITOR_LOOKAHEAD * monitor.ratio * outside_seen)):
                last_monitor = iteration
                outside = outside_seen = float(monitor.scan(factor_in_original_coordinates(U_P, s_P, basis)))
                monitor_work += 0.0 if monitor.work is None else float(monitor.work(rank))
                if outside > feas_tol and max(violation, e1, e2) <= monitor.ratio * outside:
                    control.message = (
                        f"stopped at iteration {iteration}: pairs outside the problem violate by "
                        f"{outside:.2e}, the working pairs only by {violation:.2e} (e1 {e1:.1e}, e2 {e2:.1e})")
                    ended_by_monitor = True
                    break
        if mixing is not None:
            state_next, parts = _anderson_step(mixing, plain, x_in, rescaled, n_measured, no_extrapolation=(
                control.penalty.adaptive and iteration + 1 <= control.penalty.adapt_until
                and (iteration + 1) % BALANCE_EVERY == 0))
            if parts is None:                # a rejected extrapolation: the balancing's ‖ΔL‖ has no reference
                prev, parts = None, [(1.0, *mixing.fallback[1])]
            x_in = state_next
            AL, omega, z, u_in, _, (a, mu_in), Kz, A_Lam = np.split(state_next, [S, 2 * S, 3 * S, 4 * S, 5 * S,
                                                                                5 * S + 2, 6 * S + 2])
            a, mu_in = float(a), float(mu_in)
            M = ImplicitMatrix(geom, np.hstack([U for _, U, _ in parts]),
                               np.concatenate([g * s for g, _, s in parts]), mu_in, Lam0, 0.0, None, u_in,
                               constants_single)

    # the iterates, formed once, for a warm start; P and its certificate from the explicit secants
    Lam = geom.adjoint(z) + (a * Lam0 if (Lam0 is not None and a != 0.0) else 0.0)
    L = M.dense() - Lam
    state = ADMMState(L, Lam, omega, control.beta, basis, steps.K_inv, steps.gram, factor=steps.cholesky,
                      eig_block=shrink.block, values=(AL.copy(), A_Lam.copy()))
    factor = factor_in_original_coordinates(U_P, s_P, basis)
    # a run the monitor ended is never optimal (pairs outside violate), and column generation solves
    # again with them: its certificate from the explicit secants (S × N) would only be printed
    certify = certify and not ended_by_monitor
    if certify:
        explicit = operator.explicit()
        B = explicit.V @ factor.T
        values = np.einsum("ij,ij->i", B, B)
    else:
        # an uncertified run's values only guide (column generation's keep rule, its loose scans'
        # selection); the points' images of P's factor in double precision, not the tracked 𝒜(P)
        values = geom.factor_values(U_P * np.sqrt(s_P))
    violation = box_violation(values, lo, hi)
    P = factor.T @ factor
    objective = float(np.trace(P))
    if certify:
        bound, y_feasible = certified_lower_bound(explicit, lo, hi,
                                                  control.beta * omega if y_acted is None else y_acted)
        rgap = relative_gap(objective, bound)
        control.demote(violation, rgap, "converged on the pair operator, but on the explicit secants")
    else:
        bound, rgap = float("nan"), float("nan")
        y_feasible = signed_multipliers(control.beta * omega if y_acted is None else y_acted, lo, hi)
        if control.status == "optimal":
            control.status, control.message = "inaccurate", f"{control.message}; not certified (certify=False)"
    # the spectrum of P = ΨᵀΨ is that of ΨΨᵀ (k × k) and N − k zeros
    spectrum = np.linalg.eigvalsh(factor @ factor.T) if factor.shape[0] else np.zeros(0)
    min_eigenvalue = float(np.min(spectrum, initial=0.0 if factor.shape[0] < P.shape[0] else np.inf))
    return build_result(
        problem, "P", P, objective, bound, rgap=rgap, status=control.status, message=control.message,
        method="admm", solver="numax_admm_pairs", max_violation=violation, min_eigenvalue=min_eigenvalue,
        iterations=control.iteration, start=start, history=control.traces(),
        extra={"y": y_feasible, "rank": rank, "state": state, "reduced_dim": r, "factor": factor,
               "values": values, "full_eigensolves": shrink.full_count, "partial_eigensolves": shrink.partial_count,
               "double_precision_from": steps.doubled_at, "polished": bool(polish_note),
               "factor_extended": steps.extended, "polish_system": polish_system,
               "anderson": None if mixing is None else (mixing.accepted, mixing.rejected)},
    )
