"""Shared machinery of the non-convex near-isometric methods of Luo et al. [1]:
FroMax (Algorithm 1), NILE-Pro (Algorithm 2), rank adjustment (Algorithm 3) and column
generation (Algorithm 4).

* :class:`NearIsometricResult` — the result of every non-convex run. These methods have no
  certificate: ``status`` is ``"converged"`` when the map *reached the requested δ* on the
  secants of the run (a feasible point of NuMax (4) of rank M, not an optimum), never
  ``"optimal"``; ``dual_bound`` is NaN.
* :class:`FactorOps` — 𝒜 of NuMax evaluated on a factor, 𝒜(ΨᵀΨ) = (‖Ψv_k‖²)_k, and the factor
  adjoint Ψ𝒜*(w) = Σ_k w_k (Ψv_k) v_kᵀ, in O(S N M) from explicit secants, or in
  O(n_a N M + S M) through the points of a pair set (:class:`~sdpembed.problems.numax_operator.PairSecantOperator`):
  no N×N matrix is ever formed.
* :func:`project_l1_ball` — the ℓ₁-ball projection of NILE-Pro's Moreau step (4.6).
* :func:`start_map`, :func:`pca_feasible_rank` — starting maps: the leading principal
  directions of the secants, scaled so that their distortions are centred on 1.

References
----------
.. [1] J. Luo, K. Shapiro, H.-J. M. Shi, Q. Yang and K. Zhu, "Practical algorithms for learning
   near-isometric linear embeddings", SIAM Undergraduate Research Online 9, 2016
   (arXiv:1601.00062). Implemented here: the box (2.8), the truncation (2.9), the ℓ₁-ball
   projection of (4.6), the starting rank of Algorithm 3.
.. [2] C. Hegde, A. C. Sankaranarayanan, W. Yin and R. G. Baraniuk, "NuMax: A convex approach for
   learning near-isometric linear embeddings", IEEE Transactions on Signal Processing 63(22),
   6109–6121, 2015. Implemented here: the secant operator of Sec. 3.1 on a factor, the SDP (4)
   whose feasible points the results are.
"""

from __future__ import annotations

import numbers
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse

from ..._deadline import Deadline
from ..._validate import as_matrix, check_delta, check_positive_int
from ...problems.numax_operator import PairSecantOperator, SecantOperator

__all__ = [
    "ACCEPT_RTOL",
    "NONCONVEX_STATUSES",
    "NearIsometricResult",
    "FactorOps",
    "project_l1_ball",
    "start_map",
    "pca_feasible_rank",
    "truncate_map",
    "BestMap",
]

#: A map is accepted when its distortion is at most δ(1 − ACCEPT_RTOL): the tiny margin keeps
#: the claim "isometry ≤ δ" true under any later re-evaluation (another summation order, the
#: all-pairs scan), whose rounding is far below it.
ACCEPT_RTOL = 1e-10

#: Statuses of a non-convex run. ``converged``: the map meets the requested δ on every secant
#: of the run (feasible — not a claim of optimality, these methods have no certificate);
#: ``stalled``: the iterates stopped moving (the ADMM residuals fell below ``tol``) with the
#: map still distorting some secant by more than δ — a stationary point that is not feasible;
#: ``max_iterations``: the iteration (or round, or time) limit was reached first.
NONCONVEX_STATUSES = ("converged", "stalled", "max_iterations")


@dataclass
class NearIsometricResult:
    """Outcome of FroMax, NILE-Pro, their rank adjustment or their column generation.

    Attributes
    ----------
    Psi : ndarray of shape (M, N)
        The linear map; M (= ``rank``) is the embedding dimension.
    delta : float
        The requested isometry constant δ.
    isometry : float
        The achieved one, max_k |‖Ψv_k‖² − 1| over the secants of the run (for column
        generation: over *all* pairs, from the final exact scan).
    status : str
        One of :data:`NONCONVEX_STATUSES`. Never ``optimal``: the problems are non-convex.
    message : str
    method : str
        ``"fromax"``, ``"nilepro"``, with suffix ``"_ra"`` (Algorithm 3) or ``"_cg"``
        (Algorithm 4).
    iterations : int
        Iterations of the inner ADMM, summed over rank steps and rounds.
    wall_time : float
        Seconds.
    history : dict of str to ndarray
        Per-iteration (or per-step, per-round) traces.
    n_secants : int
        Secants (or pairs) the achieved isometry is measured on.
    max_violation : float
        max(isometry − δ, 0).
    dual_bound : float
        Always NaN: no certificate exists for these non-convex problems. Compare with the
        NuMax optimum instead: ‖Ψ‖_F² = tr ΨᵀΨ is at least the NuMax optimal trace whenever
        ``isometry ≤ δ`` (ΨᵀΨ is then feasible for NuMax's SDP (4) [2], the box (2.8) of [1]).
    extra : dict
        Method-specific data (warm-start ``state``, multipliers ``y``, working ``pairs``...).
    """

    Psi: np.ndarray
    delta: float
    isometry: float
    status: str
    message: str = ""
    method: str = ""
    iterations: int = 0
    wall_time: float = 0.0
    history: dict[str, np.ndarray] = field(default_factory=dict)
    n_secants: int = 0
    max_violation: float = float("nan")
    dual_bound: float = float("nan")
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.status not in NONCONVEX_STATUSES:
            raise ValueError(f"status must be one of {NONCONVEX_STATUSES}, got {self.status!r}")
        if np.isnan(self.max_violation):
            self.max_violation = max(float(self.isometry) - float(self.delta), 0.0)

    @property
    def rank(self) -> int:
        """M, the number of rows of Ψ."""
        return int(self.Psi.shape[0])

    @property
    def P(self) -> np.ndarray:
        """ΨᵀΨ (N, N), the PSD matrix of the map (a feasible point of NuMax (4) when converged)."""
        return self.Psi.T @ self.Psi

    @property
    def frobenius2(self) -> float:
        """‖Ψ‖_F² = tr ΨᵀΨ, comparable with NuMax's optimal trace (a lower bound on it if feasible)."""
        return float(np.sum(self.Psi * self.Psi))

    @property
    def feasible(self) -> bool:
        """True when the achieved isometry constant is at most the requested δ."""
        return bool(self.isometry <= self.delta)

    @property
    def success(self) -> bool:
        """True for status ``converged`` (δ reached; not optimality)."""
        return self.status == "converged"

    def summary(self) -> dict[str, Any]:
        """The scalar fields as a JSON-serialisable dict."""
        out: dict[str, Any] = {
            "method": self.method, "status": self.status, "message": self.message, "delta": float(self.delta),
            "isometry": float(self.isometry), "rank": self.rank, "frobenius2": self.frobenius2,
            "max_violation": float(self.max_violation), "dual_bound": float(self.dual_bound),
            "iterations": int(self.iterations), "wall_time": float(self.wall_time), "n_secants": int(self.n_secants),
        }
        return out

    def __repr__(self) -> str:
        return (f"NearIsometricResult({self.method}: status={self.status}, rank={self.rank}, "
                f"isometry={self.isometry:.6g} (delta {self.delta:g}), ||Psi||_F^2={self.frobenius2:.6g}, "
                f"iterations={self.iterations}, wall_time={self.wall_time:.3f}s)")


def check_unit_secants(secants: object, name: str = "secants") -> np.ndarray:
    """Finite (S, N) array of unit rows, or a ValueError naming ``name``."""
    V = as_matrix(secants, name)
    norms = np.linalg.norm(V, axis=1)
    if np.any(np.abs(norms - 1.0) > 1e-6):
        bad = int(np.argmax(np.abs(norms - 1.0)))
        raise ValueError(f"{name} must have unit rows (normalised secants, NuMax eq. (1)); row {bad} has norm "
                         f"{norms[bad]:.6g} (use sdpembed.secants.all_secants / normalize_rows)")
    return V


def check_rank(rank: object, dim: int, name: str = "rank") -> int:
    """An integer in [1, dim]."""
    if isinstance(rank, bool) or not isinstance(rank, numbers.Integral) or not 1 <= int(rank) <= dim:
        raise ValueError(f"{name} must be an integer in [1, {dim}] (the data dimension), got {rank!r}")
    return int(rank)


def check_positive_float(value: object, name: str, *, allow_zero: bool = False) -> float:
    """A finite float > 0 (or ≥ 0)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(float(value)) or (
        float(value) < 0.0 if allow_zero else float(value) <= 0.0
    ):
        raise ValueError(f"{name} must be a finite real number {'>=' if allow_zero else '>'} 0, got {value!r}")
    return float(value)


def check_common(delta: object, max_iter: object, tol: object) -> tuple[float, int, float]:
    """δ ∈ (0, 1), max_iter ≥ 0 (0: only evaluate the start), tol ≥ 0."""
    return (check_delta(delta), check_positive_int(max_iter, "max_iter", minimum=0),
            check_positive_float(tol, "tol", allow_zero=True))


class FactorOps:
    """𝒜 on factors: 𝒜(ΨᵀΨ) = (‖Ψv_k‖²)_k and Ψ𝒜*(w) = Σ_k w_k (Ψv_k) v_kᵀ, plus 𝒜, 𝒜* on matrices.

    Parameters
    ----------
    secants : ndarray of shape (S, N) with unit rows, or SecantOperator
        A :class:`~sdpembed.problems.numax_operator.PairSecantOperator` (secants of pairs of points) makes
        the factor operations cost O(n_a N M + S M) instead of O(S N M).
    """

    def __init__(self, secants: np.ndarray | SecantOperator) -> None:
        if isinstance(secants, SecantOperator):
            self.op = secants
            as_matrix(secants.V, "secants")
        else:
            self.op = SecantOperator(check_unit_secants(secants))
        self.V = self.op.V
        self.S, self.N = self.V.shape
        self.pairs = isinstance(self.op, PairSecantOperator)
        self._point_gram: np.ndarray | None = None
        if self.pairs:
            op = self.op
            n_a, k = op.points.shape[0], np.arange(self.S)
            signed = np.concatenate([1.0 / op.norms, -1.0 / op.norms])
            rows, cols = np.concatenate([k, k]), np.concatenate([op.i, op.j])
            # D (S, n_a): ±1/d_k at (k, i_k), (k, j_k), so that D Z has rows (z_i − z_j)/d_k; its transpose
            # (n_a, S) scatters pair rows onto points. Sparse products read and write each (S, M) array once.
            self._differences = scipy.sparse.csr_matrix((signed, (rows, cols)), shape=(self.S, n_a))
            self._incidence = scipy.sparse.csr_matrix((signed, (cols, rows)), shape=(n_a, self.S))

    def images(self, Psi: np.ndarray) -> np.ndarray:
        """B (S, M) with rows Ψv_k."""
        if self.pairs:
            return self.pair_images(self.op.points @ Psi.T)
        return self.V @ Psi.T

    def pair_images(self, Z: np.ndarray) -> np.ndarray:
        """Rows (z_{i_k} − z_{j_k}) / d_k (S, M) of the point images Z = X_a Ψᵀ (n_a, M) (pair operators only)."""
        return self._differences @ Z

    def scatter(self, B: np.ndarray, w: np.ndarray) -> np.ndarray:
        """A = Inc (w∘B / d) (n_a, M): Σ_k ± w_k b_k / d_k per point, so that Σ_k w_k b_k v_kᵀ = Aᵀ X_a (pair
        operators only)."""
        inc = self._incidence
        weighted = scipy.sparse.csr_matrix((inc.data * w[inc.indices], inc.indices, inc.indptr), shape=inc.shape)
        return weighted @ B

    def point_gram(self) -> np.ndarray:
        """K = X_a X_aᵀ (n_a, n_a) of the (centred) points of a pair operator, computed once."""
        if self._point_gram is None:
            self._point_gram = self.op.points @ self.op.points.T
        return self._point_gram

    @staticmethod
    def values(B: np.ndarray) -> np.ndarray:
        """𝒜(ΨᵀΨ) = (‖Ψv_k‖²)_k from the images B."""
        return np.einsum("ij,ij->i", B, B)

    def factor_adjoint(self, B: np.ndarray, w: np.ndarray) -> np.ndarray:
        """Ψ𝒜*(w) = Σ_k w_k (Ψv_k) v_kᵀ (M, N) from the images B = VΨᵀ."""
        if self.pairs:
            return self.scatter(B, w).T @ self.op.points       # (n_a, M): Σ_k ± w_k Ψv_k / d_k per point
        return (B * w[:, None]).T @ self.V

    def matrix_images(self, A: np.ndarray) -> np.ndarray:
        """(S, r) rows v_kᵀA for an (N, r) matrix A (V A)."""
        if self.pairs:
            return self.pair_images(self.op.points @ A)
        return self.V @ A

    def adjoint_times(self, w: np.ndarray, A: np.ndarray) -> np.ndarray:
        """𝒜*(w) A = Σ_k w_k v_k (v_kᵀ A) (N, r) without forming 𝒜*(w)."""
        return self.factor_adjoint(self.matrix_images(A), w).T

    def isometry(self, Psi: np.ndarray) -> float:
        """max_k |‖Ψv_k‖² − 1|."""
        return float(np.max(np.abs(self.values(self.images(Psi)) - 1.0)))

    def gram(self) -> np.ndarray:
        """VᵀV = 𝒜*(1) (N, N), the (unnormalised) covariance of the secants."""
        G = self.op.adjoint(np.ones(self.S))
        return 0.5 * (G + G.T)


def project_l1_ball(v: np.ndarray, radius: float) -> np.ndarray:
    """Euclidean projection of ``v`` onto {x : ‖x‖₁ ≤ radius} (sort-based, O(S log S)).

    With θ the threshold solving Σ(|v_i| − θ)₊ = radius, the projection is
    sign(v)(|v| − θ)₊ (Duchi et al. 2008); ``v`` itself when already inside.
    """
    a = np.abs(v)
    if a.sum() <= radius:
        return v.copy()
    u = np.sort(a)[::-1]
    css = np.cumsum(u)
    k = np.arange(1, u.size + 1)
    rho = int(np.nonzero(u * k > css - radius)[0][-1])
    theta = (css[rho] - radius) / (rho + 1)
    return np.sign(v) * np.maximum(a - theta, 0.0)


def centre_scale(values: np.ndarray) -> float:
    """The factor c with c²·(min + max)/2 = 1: scaling Ψ by c centres the squared-norm ratios on 1."""
    lo, hi = float(values.min()), float(values.max())
    return float(np.sqrt(2.0 / (lo + hi))) if hi > 0.0 else 1.0


def start_map(ops: FactorOps, rank: int, init: str | np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Starting map Ψ₀ (rank, N): the leading principal directions of the secants (``"pca"``),
    or a Gaussian matrix (``"random"``), or a given (rank, N) array; then scaled by
    :func:`centre_scale` so that min and max of ‖Ψ₀v‖² straddle 1 symmetrically."""
    if isinstance(init, np.ndarray) or not isinstance(init, str):
        Psi = as_matrix(init, "initial_map", n_cols=ops.N)
        if Psi.shape[0] != rank:
            raise ValueError(f"initial_map must have {rank} rows (the rank), got {Psi.shape[0]}")
        return Psi.copy()
    if init == "pca":
        w, U = np.linalg.eigh(ops.gram())
        Psi = U[:, ::-1][:, :rank].T.copy()
    elif init == "random":
        Psi = rng.standard_normal((rank, ops.N)) / np.sqrt(rank)
    else:
        raise ValueError(f"init must be 'pca', 'random' or an array, got {init!r}")
    return Psi * centre_scale(ops.values(ops.images(Psi)))


def pca_feasible_rank(ops: FactorOps, delta: float) -> tuple[int, np.ndarray]:
    """Smallest M at which the scaled leading principal directions of the secants meet δ.

    With U_M the M leading eigenvectors of VᵀV, ‖U_Mᵀv‖² grows with M for every v, and
    c·U_Mᵀ meets δ for some scale c iff min_k ‖U_Mᵀv_k‖² ≥ (1 − δ)/(1 + δ) (its max is ≤ 1):
    a monotone test, so M is found by bisection. Returns (M, c·U_Mᵀ); M = N always works
    when the secants are unit vectors. An upper bound from which rank adjustment can start
    at a feasible map (Algorithm 3 of Luo et al. needs "a sufficiently large rank R₀").
    """
    _, U = np.linalg.eigh(ops.gram())
    U = U[:, ::-1]
    need = (1.0 - delta) / (1.0 + delta)

    def ok(M: int) -> bool:
        return float(ops.values(ops.images(U[:, :M].T)).min()) >= need

    lo, hi = 1, ops.N
    while lo < hi:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid + 1
    Psi = U[:, :lo].T.copy()
    return lo, Psi * centre_scale(ops.values(ops.images(Psi)))


def truncate_map(Psi: np.ndarray, rank: int) -> np.ndarray:
    """Γ_r^½ U_rᵀ from P = ΨᵀΨ = UΓUᵀ (Luo et al. (2.9), Algorithm 3): the best rank-r factor of P."""
    _, s, Wt = np.linalg.svd(Psi, full_matrices=False)
    r = min(rank, s.size)
    out = s[:r, None] * Wt[:r]
    if r < rank:                       # Ψ had fewer rows: pad with zero rows
        out = np.vstack([out, np.zeros((rank - r, Psi.shape[1]))])
    return out


class Progress:
    """Verbose progress lines every ``every`` iterations (``True`` means 100)."""

    def __init__(self, verbose: bool | int, name: str) -> None:
        self.every = 100 if verbose is True else int(verbose or 0)
        self.name = name
        self.start = time.perf_counter()

    def __call__(self, iteration: int, text: str, force: bool = False) -> None:
        if self.every and (force or iteration % self.every == 0):
            print(f"{self.name} it {iteration:6d}  {text}  {time.perf_counter() - self.start:7.2f}s")


class BestMap:
    """The least distorting map of a FroMax or NILE-Pro run and the stopping rules they share.

    ``record`` keeps the best map seen; ``converged`` says when a distortion meets δ (up to
    :data:`ACCEPT_RTOL`); ``gave_up`` applies the ``patience`` rule (``stalled`` when the excess
    of the least distortion over δ shrank by less than 1% in ``patience`` iterations), the
    forecast and the time limit; ``result`` builds the :class:`NearIsometricResult` (the last map
    if it met δ, otherwise the best one).

    The forecast (with ``max_iter``, the iterations the run may take): at every ``patience``
    checkpoint, the excess e of the least distortion over δ and what it shrank by in the last
    ``patience`` iterations, s, give the iterations it would need at that pace, e/s·``patience``;
    when they exceed the iterations left, the run stops as ``stalled``. It is a forecast, not a
    proof: the excess of these methods usually shrinks ever more slowly, so a run whose pace does
    not reach δ within its budget is taken for one that will not, and a rank that cannot reach δ
    is given up after a few checkpoints instead of at the end of the budget.
    """

    def __init__(self, Psi: np.ndarray, d0: float, delta: float, patience: int, time_limit: float | None,
                 start: float, max_iter: int | None = None, cpu_time_limit: float | None = None) -> None:
        self.best, self.best_d, self.checkpoint = Psi, d0, d0
        self.delta, self.accept = delta, delta * (1.0 - ACCEPT_RTOL)
        self.patience, self.time_limit, self.start = patience, time_limit, start
        # wall time from ``start`` (a time.perf_counter() reading), CPU time from here
        self.deadline = Deadline.of(time_limit, cpu_time_limit, wall_start=start)
        self.max_iter = max_iter

    def record(self, Psi: np.ndarray, d0: float) -> None:
        if d0 < self.best_d:
            self.best, self.best_d = Psi, d0

    def converged(self, d0: float, iteration: int) -> str | None:
        """The ``converged`` message if the distortion ``d0`` meets δ, else None."""
        if d0 <= self.accept:
            return f"distortion {d0:.6g} <= delta {self.delta:g} after {iteration} iteration(s)"
        return None

    def gave_up(self, iteration: int) -> tuple[str, str] | None:
        """(status, message) when the patience rule or the time limit ends the run, else None."""
        if self.patience and iteration % self.patience == 0:
            shrink = self.checkpoint - self.best_d
            if shrink < 0.01 * (self.checkpoint - self.delta):
                return "stalled", (f"the least distortion {self.best_d:.6g} > delta {self.delta:g}: its excess over "
                                   f"delta shrank by less than 1% in the last {self.patience} iterations")
            if self.max_iter is not None:
                needed = (self.best_d - self.accept) / shrink * self.patience
                left = self.max_iter - iteration
                if needed > left:
                    return "stalled", (f"the least distortion {self.best_d:.6g} > delta {self.delta:g}: at the pace of "
                                       f"the last {self.patience} iterations its excess would need about "
                                       f"{needed:.0f} more iterations, {left} are left of max_iter")
            self.checkpoint = self.best_d
        if self.deadline is not None and self.deadline.passed():
            return "max_iterations", (f"{self.deadline.reached()} with distortion "
                                      f"{self.best_d:.6g} > delta {self.delta:g}")
        return None

    def result(self, Psi: np.ndarray, d0: float, status: str, message: str, method: str, iterations: int,
               history: dict[str, list[float]], n_secants: int, extra: dict) -> NearIsometricResult:
        converged = status == "converged"
        return NearIsometricResult(
            Psi=Psi if converged else self.best, delta=self.delta, isometry=d0 if converged else self.best_d,
            status=status, message=message, method=method, iterations=iterations,
            wall_time=time.perf_counter() - self.start, history={k: np.asarray(v) for k, v in history.items()},
            n_secants=n_secants, extra=extra)
