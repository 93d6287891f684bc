"""FroMax — Frobenius-norm minimisation with max-norm constraints (Luo et al. [1], Sec. 3, Algorithm 1).

For a rank M, FroMax looks for a PSD-like P that is close to a factorisation XY and meets
the box of NuMax (2.8):

    minimise ½‖P − XY‖_F²   s.t.   𝒜(P) = q,  Y = Xᵀ,  ‖q − 1_S‖_∞ ≤ δ            (3.2)–(3.3)

with X ∈ R^{N×M}, Y = Ψ ∈ R^{M×N}. The augmented Lagrangian (3.4), with unscaled multipliers
λ ∈ Rˢ and Γ ∈ R^{M×N}, is

    ½‖P − XY‖² + λᵀ(𝒜(P) − q) + ⟨Γ, Y − Xᵀ⟩ + (β₁/2)‖𝒜(P) − q‖² + (β₂/2)‖Y − Xᵀ‖² + ι(q),

and one ADMM sweep (Algorithm 1) is

1. q ← 1 + clip(𝒜(P) + λ/β₁ − 1, −δ, δ)                          (3.5)–(3.6)
2. P ← (I + β₁𝒜*𝒜)⁻¹ (sym(XY) + 𝒜*(β₁q − λ))                        (3.7)–(3.9)
3. X ← (Γᵀ + β₂Yᵀ + PYᵀ)(YYᵀ + β₂I)⁻¹                               (3.10)
4. Y ← (XᵀX + β₂I)⁻¹(XᵀP − Γ + β₂Xᵀ)                                (3.11)
5. λ ← λ + ηβ₁(𝒜(P) − q),  Γ ← Γ + ηβ₂(Y − Xᵀ)                       (3.12)–(3.13)

Rederivations and departures (formulas of [1] are partly garbled in the PDF text):

* **q-step.** (3.6) prints "z = 𝒜(P_k) λ_k 1_S"; minimising (3.5) gives q = Π_box(𝒜(P) + λ/β₁),
  i.e. z = 𝒜(P) + λ/β₁ − 1_S and q = 1_S + sign(z)·min(|z|, δ) — what we use.
* **P-step in closed form, P never formed.** I + β₁𝒜*𝒜 is positive definite, so the
  pseudo-inverse of (3.9) is an inverse. As in our NuMax ADMM, its solution is
  P = sym(XY) + 𝒜*(w) with (I + β₁𝒜𝒜*)w = c − β₁𝒜(sym XY), c = β₁q − λ: an S×S system with
  𝒜𝒜* = (VVᵀ)∘(VVᵀ) (VVᵀ read off the points' Gram matrix for pairs of points,
  :func:`~sdpembed.solvers.numax.least_squares.secant_cosines`), factorised once by Cholesky
  (in column generation once per round, cheaper here than extending an explicit inverse as our
  NuMax-CG does; after 600 solves with one factor it is replaced by the explicit inverse, one
  ``symv`` per solve), or solved by
  conjugate gradients (relative residual 1e-10, warm-started; much slower) when S exceeds
  ``exact_max``. Then 𝒜(P) = 𝒜(sym XY) + 𝒜𝒜*w, with β₁𝒜𝒜*w = c − β₁𝒜(sym XY) − w for free.
  P is kept *implicitly*: the X- and Y-steps need only PYᵀ and PX, i.e. 𝒜*(w)A =
  Vᵀ diag(w)(VA) for (N, M) matrices A, and ½‖P − XY‖² is assembled from M×M products,
  wᵀ𝒜𝒜*w and wᵀ𝒜(·). An iteration costs O(S² + S N M) (O(S² + n_a N M) on the pairs of n_a
  points), not O(S N²).
* **P-step in single precision.** From ``single_from`` secants on (:data:`SINGLE_FROM`), the
  S×S matrix is formed, factorised and solved in single precision: the solves are bound by
  reading the factor, which then takes half the bytes (at S = 6,000 two ``strsv`` take about half
  the time of two ``dtrsv`` and ``spotrf`` half that of ``dpotrf``). I + β₁𝒜𝒜* has its
  eigenvalues in [1, 1 + β₁S], so w is accurate to about 10⁻⁶ relatively; 𝒜(P) is taken from the
  same w, so each iteration is an ADMM sweep on a system perturbed at that level, and nothing
  accumulates (P is rebuilt from XY and w every iteration). Whether a map meets δ is always judged
  in double precision on the map itself, so the precision changes the path of the iterates, never
  what a result claims. The fixed-point stall test (``tol``) is not met below that accuracy, so
  such runs stop as ``stalled`` by the ``patience`` rule and the forecast instead.
* **Symmetric P.** XY is not symmetric; we take P symmetric (the paper's "P ⪰ 0, symmetric"),
  which replaces XY by sym(XY) in (3.9) — the same minimiser over symmetric P.
* **Which Ψ.** The paper returns Y = Ψ. At every iteration we test Y, Xᵀ and the best rank-M
  factor of sym(XY) and return the first that meets δ (they agree at a fixed point).
* **Stopping.** Algorithm 1 stops when ½‖P − XY‖² < ε. We stop as ``converged`` as soon as
  one of the candidate maps meets δ on every secant (distortion ≤ δ(1 − 10⁻¹⁰)), and as ``stalled`` when the ADMM has
  reached a fixed point without that (relative ‖P − XY‖_F, ‖Y − Xᵀ‖_F and ‖𝒜(P) − q‖_∞ all
  below ``tol``: the paper's rule), or when ``patience`` iterations shrank the excess of the
  least distortion over δ by less than 1%.
* **Margin.** The box of step 1 is shrunk to δ(1 − ``margin``): ADMM reaches its box only
  in the limit, so at a rank where the limit sits exactly on the δ-boundary the run would
  otherwise creep towards δ for ever; the stopping test uses δ itself.
* **Parameters.** [1] leaves β₁, β₂, η open; the defaults β₁ = β₂ = η = 1 reach δ on the
  translating squares of the tests and benchmarks. The start Ψ₀ (X = Ψ₀ᵀ, Y = Ψ₀, P = Ψ₀ᵀΨ₀) defaults to
  the scaled leading principal directions of the secants.

Non-convex: reaching δ is not guaranteed and nothing certifies optimality.

References
----------
.. [1] J. Luo, K. Shapiro, H.-J. M. Shi, Q. Yang and K. Zhu, "Practical algorithms for learning
   near-isometric linear embeddings", SIAM Undergraduate Research Online 9, 2016
   (arXiv:1601.00062). Implemented here: FroMax, (3.2)–(3.13) and Algorithm 1 of Sec. 3.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.sparse.linalg

from ..._validate import check_positive_int, check_random_state
from ...problems.numax_operator import SecantOperator
from ..numax.least_squares import cholesky_factor, secant_cosines
from .nonconvex import (
    BestMap,
    FactorOps,
    NearIsometricResult,
    Progress,
    check_common,
    check_positive_float,
    check_rank,
    start_map,
)

__all__ = ["FroMaxState", "fromax"]


@dataclass
class FroMaxState:
    """Iterates that warm-start a later run: X (N, M), Y (M, N), Γ (M, N) and λ (one per
    secant; column generation restricts and pads it). P restarts from sym(XY)."""

    X: np.ndarray
    Y: np.ndarray
    Gamma: np.ndarray
    lam: np.ndarray

    def restricted(self, keep: np.ndarray, n_added: int) -> FroMaxState:
        """The state for a new working set: the secants ``keep`` (mask) of this one, then ``n_added`` new ones."""
        return FroMaxState(self.X, self.Y, self.Gamma, np.concatenate([self.lam[keep], np.zeros(n_added)]))


def _sym_factor(X: np.ndarray, Y: np.ndarray, rank: int) -> np.ndarray:
    """The best rank-``rank`` PSD factor Ψ (Ψ ᵀΨ ≈ sym(XY)) through a QR of [X, Yᵀ], O(N M²)."""
    Q, R = np.linalg.qr(np.hstack([X, Y.T]))
    m = X.shape[1]
    R1, R2 = R[:, :m], R[:, m:]
    C = R1 @ R2.T
    w, U = np.linalg.eigh(0.5 * (C + C.T))
    w, U = w[::-1][:rank], U[:, ::-1][:, :rank]
    return np.sqrt(np.maximum(w, 0.0))[:, None] * (Q @ U).T


#: Working sets of at least this many secants solve the P-step in single precision (module
#: docstring, "P-step in single precision"): the capped working sets of 800 MNIST images (4,000 to
#: 6,000 pairs) are where it was measured; the translating squares' 3,240 secants stay in double.
SINGLE_FROM = 4000


class _LeastSquares:
    """w = (I + β₁𝒜𝒜*)⁻¹ b for the P-step (3.9): a Cholesky factor of the S×S matrix, or
    warm-started conjugate gradients (matrix-free).

    The exact solve is the bulk of a FroMax iteration. Two triangular solves (BLAS ``trsv``; LAPACK's
    ``potrs``, behind ``cho_solve``, goes through ``trsm`` with one right-hand side, several times
    slower) read the S×S factor twice; after ``invert_after`` solves with the same matrix (a run
    that is going to be long), the factor is turned into the explicit inverse (LAPACK ``potri``,
    about two Cholesky factorisations) and each further solve is one symmetric matrix-vector
    product (BLAS ``symv``, half the matrix read once), cheaper than the two triangular solves and
    equal to them to rounding (the inverse of this SPD matrix, whose condition number is at most
    1 + β₁S, is as accurate as the factor). With ``single``, the matrix, its factor and inverse
    are single precision (``strsv``, ``ssymv``); w is returned in double precision.
    """

    #: CG accuracy of the P-step. Looser solves (1e-6, like the 10 CG steps of the NuMax MATLAB
    #: code) keep the iteration consistent — 𝒜(P) is recomputed exactly — but cost FroMax many
    #: more iterations and fail at ranks the exact solve reaches
    rtol, maxiter = 1e-10, 500
    #: Exact solves with one factor before it is replaced by the explicit inverse: ``potri`` costs
    #: about as much as 300 pairs of ``trsv``, and a ``symv`` saves about half a pair, so the
    #: inverse pays for itself after about this many solves (the rent-or-buy threshold).
    invert_after = 600

    def __init__(self, ops: FactorOps, beta1: float, method: str, exact_max: int, single: bool = False) -> None:
        if method not in ("auto", "exact", "cg"):
            raise ValueError(f"least_squares must be 'auto', 'exact' or 'cg', got {method!r}")
        self.exact = method == "exact" or (method == "auto" and ops.S <= exact_max)
        # Only the secant operator is kept, never ``ops``: ``fromax`` caches this object in
        # ``ops.__dict__``, and a reference back to ``ops`` would make a cycle that reference
        # counting cannot free. numpy arrays do not trigger the cyclic collector, so every
        # column-generation round (a new FactorOps) would leave its S×S factor behind until a rare
        # full collection, and gigabytes of dead factors pile up on a few hundred points.
        self.op, self.beta1 = ops.op, beta1
        self.single = bool(single) and self.exact
        if self.exact:
            dtype = np.float32 if self.single else np.float64
            # VVᵀ (from the points' Gram matrix for pairs of points), built in place: one S×S array
            K = secant_cosines(ops.op, dtype=dtype)
            np.square(K, out=K)                             # 𝒜𝒜* = (VVᵀ)∘(VVᵀ)
            K *= beta1
            K[np.diag_indices_from(K)] += 1.0
            # K is symmetric: LAPACK factorises it in place in whichever order it is stored
            self.factor: np.ndarray | None = cholesky_factor(K)
            del K
            self.inverse: np.ndarray | None = None          # lower triangle of (I + β₁𝒜𝒜*)⁻¹, once formed
            self.n_solves = 0
        else:
            op = ops.op
            self.operator = scipy.sparse.linalg.LinearOperator(
                (ops.S, ops.S), matvec=lambda u: u + beta1 * op.apply(op.adjoint(u)), dtype=np.float64)
        self.last = np.zeros(ops.S)

    def H_times(self, w: np.ndarray) -> np.ndarray:
        """𝒜𝒜* w through the operator (matrix-free)."""
        return self.op.apply(self.op.adjoint(w))

    def solve(self, b: np.ndarray) -> np.ndarray:
        if self.exact:
            # looked up, not stored: SciPy's BLAS wrappers do not pickle
            blas, lapack = scipy.linalg.blas, scipy.linalg.lapack
            symv, trsv, potri = ((blas.ssymv, blas.strsv, lapack.spotri) if self.single
                                 else (blas.dsymv, blas.dtrsv, lapack.dpotri))
            if self.single:
                b = b.astype(np.float32)
            if self.inverse is None:
                self.n_solves += 1
                if self.n_solves >= self.invert_after:
                    inverse, info = potri(self.factor, lower=1, overwrite_c=1)
                    if info != 0:                            # impossible after a successful Cholesky
                        raise RuntimeError(f"LAPACK potri failed (info = {info})")
                    self.inverse, self.factor = inverse, None    # the factor may be overwritten: keep the inverse
            if self.inverse is not None:
                w = symv(1.0, self.inverse, b, lower=1)
            else:
                L = self.factor                              # lower triangle (Fortran order)
                w = trsv(L, trsv(L, b, lower=1), lower=1, trans=1)
            return w.astype(np.float64, copy=False)
        w, _ = scipy.sparse.linalg.cg(self.operator, b, x0=self.last, rtol=self.rtol, atol=0.0, maxiter=self.maxiter)
        self.last = w
        return w


def _p_step(ls: _LeastSquares, AXY: np.ndarray, q: np.ndarray, lam: np.ndarray,
            beta1: float) -> tuple[np.ndarray, np.ndarray, float]:
    """The P-step (3.7)–(3.9): w with P = sym(XY) + 𝒜*(w), and 𝒜(P), ‖𝒜*(w)‖_F².

    (I + β₁𝒜*𝒜)P = sym(XY) + 𝒜*(β₁q − λ) is solved by P = sym(XY) + 𝒜*(w) with
    (I + β₁𝒜𝒜*)w = β₁q − λ − β₁𝒜(sym XY); ``AXY`` is 𝒜(sym XY).
    """
    rhs = beta1 * q - lam - beta1 * AXY
    w = ls.solve(rhs)
    Hw = (rhs - w) / beta1 if ls.exact else ls.H_times(w)       # 𝒜𝒜*w (for free when exact)
    return w, AXY + Hw, float(w @ Hw)


def _P_times(ops: FactorOps, X: np.ndarray, Y: np.ndarray, w: np.ndarray, A: np.ndarray,
             VA: np.ndarray) -> np.ndarray:
    """P A for the implicit P = sym(XY) + 𝒜*(w) and an (N, r) matrix A with images VA = V A."""
    return 0.5 * (X @ (Y @ A) + Y.T @ (X.T @ A)) + ops.factor_adjoint(VA, w).T


def _half_residual2(X_old: np.ndarray, Y_old: np.ndarray, w: np.ndarray, AXY_old: np.ndarray, wHw: float,
                    X: np.ndarray, Y: np.ndarray, AXY: np.ndarray) -> float:
    """½‖P − XY‖² for P = sym(X_old Y_old) + 𝒜*(w), without forming P.

    ‖sym(X_old Y_old) − XY‖² = ‖L Rᵀ‖² = ⟨LᵀL, RᵀR⟩ with L = [X_old/2, Y_oldᵀ/2, −X],
    R = [Y_oldᵀ, X_old, Yᵀ]; the cross term is 2wᵀ𝒜(sym(X_old Y_old) − XY) and ‖𝒜*(w)‖² = wᵀ𝒜𝒜*w.
    """
    L = np.hstack([0.5 * X_old, 0.5 * Y_old.T, -X])
    R = np.hstack([Y_old.T, X_old, Y.T])
    low_rank = float(np.sum((L.T @ L) * (R.T @ R)))
    return 0.5 * max(low_rank + 2.0 * float(w @ (AXY_old - AXY)) + wHw, 0.0)


def fromax(
    secants: np.ndarray | SecantOperator,
    delta: float,
    rank: int | None = None,
    *,
    initial_map: np.ndarray | str = "pca",
    beta1: float = 1.0,
    beta2: float = 1.0,
    eta: float = 1.0,
    margin: float = 1e-3,
    max_iter: int = 5000,
    tol: float = 1e-8,
    patience: int = 200,
    least_squares: str = "auto",
    exact_max: int = 6000,
    single_from: int | None = SINGLE_FROM,
    warm_start: FroMaxState | None = None,
    random_state=None,
    verbose: bool | int = False,
    time_limit: float | None = None,
    forecast: bool = False,
    cpu_time_limit: float | None = None,
) -> NearIsometricResult:
    """FroMax (Luo et al., Algorithm 1): a rank-``rank`` map Ψ with ‖𝒜(ΨᵀΨ) − 1‖_∞ ≤ δ, if it finds one.

    Parameters
    ----------
    secants : ndarray of shape (S, N) or SecantOperator
        Unit secants v_k (rows), or the operator of a pair set (faster for many pairs).
    delta : float
        Requested isometry constant δ ∈ (0, 1).
    rank : int, optional
        M = r of (3.2); by default the rows of ``initial_map`` or of ``warm_start.Y``.
    initial_map : {"pca", "random"} or ndarray of shape (M, N)
        Ψ₀; ignored with ``warm_start``.
    beta1, beta2 : float
        Penalties β₁ (on 𝒜(P) = q) and β₂ (on Y = Xᵀ) of (3.4).
    eta : float
        Multiplier step η of (3.12)–(3.13).
    margin : float
        Relative shrinkage of the box in the q-step (see the module docstring), in [0, 1).
    max_iter : int
        Iteration limit m (0: only evaluate Ψ₀).
    tol : float
        Fixed-point tolerance of the stall test (Algorithm 1's ε, made relative).
    patience : int
        Stop as ``stalled`` when this many iterations shrank the excess of the least
        distortion over δ by less than 1%; 0 switches the test off.
    least_squares : {"auto", "exact", "cg"}
        How the S×S system of the P-step is solved; ``auto`` factorises it when S ≤ ``exact_max``.
    exact_max : int
        Largest S factorised by ``auto`` (the factor takes 8·S² bytes).
    single_from : int or None
        Factorise and solve the P-step's S×S system in single precision from this many secants on
        (None: never; see the module docstring, "P-step in single precision").
    warm_start : FroMaxState, optional
        Start from these iterates (λ must have one entry per secant).
    random_state : None, int or Generator
        Seed of ``initial_map="random"``.
    verbose : bool or int
        Print progress every ``verbose`` iterations (``True``: 100).
    time_limit : float, optional
        Wall-clock seconds; reaching it gives status ``max_iterations``.
    cpu_time_limit : float, optional
        CPU seconds of the process (all threads, BLAS's included; ``sdpembed._deadline``), which the machine's
        load does not change; reaching it gives status ``max_iterations``.
    forecast : bool
        Also stop as ``stalled`` when, at a ``patience`` checkpoint, the excess of the least
        distortion over δ would need more than the iterations left of ``max_iter`` to vanish at
        the pace of the last ``patience`` iterations (:class:`~sdpembed.solvers.near_isometric.nonconvex.BestMap`;
        the rank adjustments switch it on).

    Returns
    -------
    NearIsometricResult
        ``Psi``: the first candidate map that met δ (``converged``), else the least distorting
        one seen. ``extra``: ``state`` (:class:`FroMaxState`), ``y`` = λ (the multipliers of
        𝒜(P) = q). ``history``: ``isometry`` (best candidate per iteration), ``objective``
        (½‖P − XY‖²), ``e_box`` (‖𝒜(P) − q‖_∞), ``e_sym`` (‖Y − Xᵀ‖_F/‖Y‖_F).
    """
    start = time.perf_counter()
    ops = secants if isinstance(secants, FactorOps) else FactorOps(secants)
    delta, max_iter, tol = check_common(delta, max_iter, tol)
    beta1, beta2, eta = (check_positive_float(v, n) for v, n in ((beta1, "beta1"), (beta2, "beta2"), (eta, "eta")))
    margin = check_positive_float(margin, "margin", allow_zero=True)
    if margin >= 1.0:
        raise ValueError(f"margin must lie in [0, 1), got {margin}")
    patience = check_positive_int(patience, "patience", minimum=0)
    exact_max = check_positive_int(exact_max, "exact_max")
    if single_from is not None:
        single_from = check_positive_int(single_from, "single_from")
    rng = check_random_state(random_state)
    S, N = ops.S, ops.N
    if warm_start is not None:
        X, Y = np.array(warm_start.X, dtype=np.float64), np.array(warm_start.Y, dtype=np.float64)
        Gam, lam = np.array(warm_start.Gamma, dtype=np.float64), np.array(warm_start.lam, dtype=np.float64)
        M = Y.shape[0]
        if Y.shape != (M, N) or X.shape != (N, M) or Gam.shape != (M, N):
            raise ValueError(f"warm_start must hold X (N, M), Y and Gamma (M, N) with N = {N}")
        if lam.shape != (S,):
            raise ValueError(f"warm_start.lam must have one entry per secant ({S}), got {lam.shape}")
        if rank is not None and check_rank(rank, N) != M:
            raise ValueError(f"rank must equal the rows of warm_start.Y ({M}), got {rank}")
    else:
        if rank is None:
            if isinstance(initial_map, str):
                raise ValueError("rank must be given (an integer >= 1) unless initial_map is an array")
            rank = np.asarray(initial_map).shape[0]
        M = check_rank(rank, N)
        Psi0 = start_map(ops, M, initial_map, rng)
        X, Y, Gam, lam = Psi0.T.copy(), Psi0.copy(), np.zeros((M, N)), np.zeros(S)
    lo_box, hi_box = 1.0 - delta * (1.0 - margin), 1.0 + delta * (1.0 - margin)
    progress = Progress(verbose, "fromax")

    def candidates(X: np.ndarray, Y: np.ndarray, BX: np.ndarray, BY: np.ndarray) -> tuple[np.ndarray, float]:
        """The least distorting of Y, Xᵀ and the rank-M factor of sym(XY), from the images BX = VX, BY = VYᵀ."""
        best, best_d = None, np.inf
        F = _sym_factor(X, Y, M)
        for Psi, B in ((Y, BY), (X.T, BX), (F, ops.images(F))):
            d = float(np.max(np.abs(ops.values(B) - 1.0)))
            if d < best_d:
                best, best_d = Psi, d
        return best, best_d

    BX, BY = ops.matrix_images(X), ops.images(Y)           # VX and VYᵀ, (S, M)
    Psi, d0 = candidates(X, Y, BX, BY)
    tracker = BestMap(Psi, d0, delta, patience, time_limit, start, max_iter if forecast else None,
                      cpu_time_limit=cpu_time_limit)
    hist: dict[str, list[float]] = {"isometry": [d0], "objective": [np.nan], "e_box": [np.nan], "e_sym": [np.nan]}
    status, message, iteration = "max_iterations", f"reached max_iter={max_iter} with distortion above delta", 0
    if d0 <= tracker.accept:
        status, message = "converged", f"the initial map already meets delta ({d0:.6g} <= {delta:g})"
    elif max_iter > 0:                                     # max_iter = 0 only evaluates Ψ₀: no S×S factor
        # the factorisation depends only on the secants and β₁: rank adjustment reuses it across runs
        cache = ops.__dict__.setdefault("_fromax_least_squares", {})
        single = single_from is not None and S >= single_from
        key = (beta1, least_squares, exact_max, single)
        ls = cache.get(key) or cache.setdefault(key, _LeastSquares(ops, beta1, least_squares, exact_max, single))

        AXY = np.einsum("ij,ij->i", BX, BY)               # 𝒜(sym(XY)) = ((Xᵀv_k)·(Yv_k))_k
        AP = AXY.copy()                                    # P₀ = sym(X₀Y₀)
        for iteration in range(1, max_iter + 1):
            q = np.clip(AP + lam / beta1, lo_box, hi_box)                       # (3.5)-(3.6)
            w, AP, wHw = _p_step(ls, AXY, q, lam, beta1)                       # (3.7)-(3.9)
            AXY_old, X_old, Y_old = AXY, X, Y
            PY = _P_times(ops, X_old, Y_old, w, Y.T, BY)
            X = np.linalg.solve(Y @ Y.T + beta2 * np.eye(M), (Gam.T + beta2 * Y.T + PY).T).T            # (3.10)
            BX = ops.matrix_images(X)
            PX = _P_times(ops, X_old, Y_old, w, X, BX)
            Y = np.linalg.solve(X.T @ X + beta2 * np.eye(M), PX.T - Gam + beta2 * X.T)                  # (3.11)
            BY = ops.images(Y)
            lam += eta * beta1 * (AP - q)                                                                # (3.12)
            Gam += eta * beta2 * (Y - X.T)                                                               # (3.13)
            AXY = np.einsum("ij,ij->i", BX, BY)
            objective = _half_residual2(X_old, Y_old, w, AXY_old, wHw, X, Y, AXY)
            xy_norm = float(np.sqrt(max(float(np.sum((X.T @ X) * (Y @ Y.T))), 1e-300)))
            e_box = float(np.max(np.abs(AP - q)))
            e_sym = float(np.linalg.norm(Y - X.T)) / max(float(np.linalg.norm(Y)), 1e-300)

            Psi, d0 = candidates(X, Y, BX, BY)
            if not np.isfinite(d0):
                status, message = "stalled", f"the iterates diverged at iteration {iteration} (non-finite values)"
                break
            for key, value in zip(hist, (d0, objective, e_box, e_sym), strict=True):
                hist[key].append(value)
            tracker.record(Psi, d0)
            progress(iteration, f"distortion {d0:.6f}  1/2||P-XY||^2 {objective:.3e}  "
                                f"box residual {e_box:.2e}  ||Y-X'||/||Y|| {e_sym:.2e}")
            met = tracker.converged(d0, iteration)
            if met:
                status, message = "converged", met
                break
            if max(np.sqrt(2.0 * objective) / xy_norm, e_sym, e_box) <= tol:
                status = "stalled"
                message = (f"ADMM fixed point after {iteration} iteration(s) (the stopping rule of Luo et al.'s "
                           f"Algorithm 1) with distortion {d0:.6g} > delta {delta:g}")
                break
            stop = tracker.gave_up(iteration)
            if stop:
                status, message = stop
                break
    progress(iteration, f"{status}: {message}", force=True)
    return tracker.result(Psi, d0, status, message, "fromax", iteration, hist, S,
                          {"state": FroMaxState(X, Y, Gam, lam), "y": lam.copy()})
