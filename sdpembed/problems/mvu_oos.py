"""The MVU out-of-sample SDP (Weinberger, thesis Sec. 3.1.10) as numpy: the instance type of one new
point, the objective of its reduced problem (P) and the certified dual bound (:func:`dual_bound`)
that the batched interior-point solver (:mod:`sdpembed.solvers.mvu.oos`) and the CVXPY
formulation (:mod:`sdpembed.formulations.mvu_oos`) share.

The SDP
-------
A new input x_t with k nearest training neighbours x_1..x_k, whose embedding coordinates are
y_1..y_k ∈ Rʳ, is placed by the SDP that follows (3.33) in the thesis, ::

    minimise    Σ_i |ξ_i| + e_{r+1}ᵀ S e_{r+1}
    subject to  ŷ_iᵀ S ŷ_i = D_i + ξ_i,   D_i = ‖x_i − x_t‖²,       i = 1..k     (1)
                S[:r, :r] = I                                                      (2)
                S ⪰ 0,                                                             (3)

with ŷ_i = (y_i, −1) and S = [[I, y], [yᵀ, s]] as in (3.31). Because the identity block is
fixed, the only free entries are y ∈ Rʳ and s, and

    ŷ_iᵀ S ŷ_i − D_i = ‖y_i‖² − 2 y_iᵀ y + s − D_i =: a_i − 2 y_iᵀ y + s = ρ_i(y, s),

(the identity below (3.31)), while S ⪰ 0 ⇔ s ≥ ‖y‖² by the Schur complement lemma (3.30).
The thesis writes constraint (2) as e_iᵀSe_i = 1, i ≤ r (the diagonal only), but states that
it makes "the top left corner ... the identity matrix"; for r ≥ 2 the diagonal alone would
admit any correlation matrix there and a different problem, so (2) is stated in full, as in
the file contract of DESIGN.md.
Eliminating ξ_i = ρ_i, the SDP is the convex problem in r + 1 unknowns (≤ 4 for r ≤ 3)

    (P)   minimise  f(y, s) = Σ_i |a_i − 2 y_iᵀ y + s| + s   subject to   s ≥ ‖y‖².

It is not translation invariant: the term s ≥ ‖y‖² pulls the new point towards the origin
of the embedding (the centre of an MVU embedding, which is centred by ΣK = 0).

The dual and the certified bound
--------------------------------
For any λ ∈ [−1, 1]ᵏ, Σ_i |ρ_i| ≥ Σ_i λ_i ρ_i, and for any μ ≥ 0 with μ ≤ 1 + 1ᵀλ every
feasible (y, s) (so s ≥ ‖y‖² ≥ 0) satisfies

    f(y, s) ≥ Σ λ_i ρ_i + s − μ (s − ‖y‖²)
            = aᵀλ − 2 bᵀy + (1 + 1ᵀλ − μ) s + μ ‖y‖²          b = Σ_i λ_i y_i = Yᵀλ
            ≥ aᵀλ − 2 bᵀy + μ ‖y‖²  ≥  aᵀλ − ‖b‖² / μ         (minimum at y = b / μ).

The best choice is μ = 1 + 1ᵀλ, which gives the Lagrange dual of (P) in closed form,

    (D)   maximise  g(λ) = aᵀλ − ‖Yᵀλ‖² / (1 + 1ᵀλ)   over  λ ∈ [−1, 1]ᵏ,  1 + 1ᵀλ > 0.

This is the SDP dual of (1)–(3) with its identity-block multiplier Z eliminated: weak
duality gives f ≥ ⟨E + Σλ_i ŷ_iŷ_iᵀ − blkdiag(Z, 0), S⟩ + tr Z − λᵀD ≥ tr Z − λᵀD whenever
E + Σλ_i ŷ_iŷ_iᵀ ⪰ blkdiag(Z, 0) (E = e_{r+1}e_{r+1}ᵀ), and the largest feasible tr Z is
Σλ_i‖y_i‖² − ‖Yᵀλ‖²/(1 + 1ᵀλ) by the Schur complement (3.30). :func:`dual_bound` evaluates
g at any λ, after clipping it to the box, with μ lowered to cover the rounding of 1 + 1ᵀλ
and a rounding allowance subtracted, so the bound survives floating point.

At an optimum the KKT conditions read λ_i = sign ρ_i where ρ_i ≠ 0, μ = 1 + 1ᵀλ,
μ y = Yᵀλ and μ (s − ‖y‖²) = 0: when μ > 0 the optimal S has rank r (s = ‖y‖²).

References
----------
.. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
   Pennsylvania, 2007. Implemented here: the out-of-sample SDP (3.30)–(3.33) of Sec. 3.1.10.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .._validate import as_matrix, as_vector, check_positive_int, real_array
from .base import Instance, file_scalar, power_of_two_below

__all__ = ["MVUOOSInstance", "dual_bound", "primal_objective", "verified_dual_bound"]

_EPS = np.finfo(np.float64).eps


@dataclass(frozen=True, eq=False)
class MVUOOSInstance(Instance):
    """The MVU out-of-sample SDP (thesis Sec. 3.1.10) for one new input x_t: with ŷ_i = (y_i, −1)
    and S = [[I, y], [yᵀ, s]] as in (3.31),

        minimise Σ_i |ξ_i| + s   s.t.   ŷ_iᵀ S ŷ_i = D_i + ξ_i (i = 1..k),   S[:r, :r] = I,   S ⪰ 0,

    where y_1..y_k ∈ Rʳ are the embedding coordinates of the k nearest training inputs of
    x_t and D_i = ‖x_i − x_t‖² (see :mod:`sdpembed.formulations.mvu_oos`). Since ŷ_iᵀSŷ_i =
    ‖y_i‖² − 2y_iᵀy + s, the slacks are implied by S, and S ⪰ 0 ⇔ s ≥ ‖y‖² (3.30).

    Parameters
    ----------
    Y : ndarray of shape (k, r)
        Neighbour outputs y_i as rows, k ≥ r (a new point needs at least r neighbours).
    sqdist : ndarray of shape (k,)
        Squared input distances D_i = ‖x_i − x_t‖² ≥ 0, one per row of ``Y``.
    optimum : float, optional
        A certified optimal value carried with the instance (used by ``verify``).
    """

    problem: ClassVar[str] = "mvu_oos"
    variable: ClassVar[str] = "S"

    Y: np.ndarray
    sqdist: np.ndarray
    optimum: float | None = None

    def __post_init__(self) -> None:
        Y = as_matrix(self.Y, "Y").copy()
        k, r = Y.shape
        self._check_variable_memory(r + 1)
        D = real_array(self.sqdist, "sqdist").copy()
        if D.shape != (k,):
            raise ValueError(
                f"sqdist must be a 1-D array with one squared distance per row of Y (k = {k} neighbours), "
                f"got shape {D.shape}"
            )
        if not np.all(np.isfinite(D)):
            raise ValueError("sqdist contains NaN or infinite entries")
        if np.any(D < 0):
            raise ValueError(f"sqdist must hold squared distances (>= 0), got minimum {D.min():.6g}")
        if k < r:
            raise ValueError(
                f"a new point needs at least r neighbours: Y has k = {k} row(s) (neighbours) in r = {r} "
                f"output dimensions; give at least {r} neighbours"
            )
        for arr in (Y, D):
            arr.setflags(write=False)
        object.__setattr__(self, "Y", Y)
        object.__setattr__(self, "sqdist", D)
        self._check_optimum()

    @classmethod
    def from_points(
        cls, X_train: np.ndarray, Y_train: np.ndarray, x_new: np.ndarray, n_neighbors: int
    ) -> MVUOOSInstance:
        """The instance of a new input ``x_new`` (d,) for an embedding ``Y_train`` (n, r) of
        ``X_train`` (n, d): its ``n_neighbors`` nearest training inputs (ties to the smaller
        index) and their exact squared distances."""
        X_train = as_matrix(X_train, "X_train")
        Y_train = as_matrix(Y_train, "Y_train")
        if Y_train.shape[0] != X_train.shape[0]:
            raise ValueError(f"Y_train must have one row per row of X_train ({X_train.shape[0]}), "
                             f"got {Y_train.shape[0]}")
        x_new = np.asarray(x_new, dtype=np.float64).reshape(-1)
        if x_new.shape[0] != X_train.shape[1] or not np.all(np.isfinite(x_new)):
            raise ValueError(f"x_new must be a finite vector of the input dimension {X_train.shape[1]}, "
                             f"got shape {np.shape(x_new)}")
        k = check_positive_int(n_neighbors, "n_neighbors")
        if k > X_train.shape[0]:
            raise ValueError(f"n_neighbors must be at most the number of training points {X_train.shape[0]}, got {k}")
        sq = np.einsum("ij,ij->i", X_train - x_new, X_train - x_new)
        index = np.argsort(sq, kind="stable")[:k]
        return cls(Y=Y_train[index], sqdist=sq[index])

    @classmethod
    def from_data(cls, X: np.ndarray, y: np.ndarray | None, delta: float, **_: Any) -> MVUOOSInstance:
        """Not available: an out-of-sample instance needs an embedding of the training data."""
        raise ValueError(
            "an mvu_oos instance is built from an embedding (training inputs, their MVU outputs and a new "
            "input): use MVUOOSInstance.from_points(X_train, Y_train, x_new, n_neighbors)"
        )

    # ----------------------------------------------------------------- structure
    @property
    def dim(self) -> int:
        """r + 1 (S is (r+1) × (r+1))."""
        return self.Y.shape[1] + 1

    @property
    def n_neighbors(self) -> int:
        """k, the number of neighbours (and of constraints (1))."""
        return self.Y.shape[0]

    @property
    def n_constraints(self) -> int:
        """The k distance constraints (1)."""
        return self.Y.shape[0]

    @property
    def objective_unit(self) -> float:
        """The power of two 2^k ≤ max_i D_i < 2^(k+1) (of max_i ‖y_i‖² when every D_i is 0, 1 when the
        outputs are 0 too): the objective scales as the squared distances (Y → cY, D → c²D takes the
        optimal y to cy and s to c²s), so its errors are measured at the data's scale by ``certify``."""
        top = float(self.sqdist.max())
        return power_of_two_below(top if top > 0.0 else float(np.einsum("ij,ij->i", self.Y, self.Y).max()))

    @staticmethod
    def matrix(y: np.ndarray, s: float) -> np.ndarray:
        """S = [[I, y], [yᵀ, s]] of (3.31)."""
        y = np.asarray(y, dtype=np.float64).reshape(-1)
        r = y.shape[0]
        S = np.eye(r + 1)
        S[:r, r] = S[r, :r] = y
        S[r, r] = s
        return S

    @staticmethod
    def point(S: np.ndarray) -> np.ndarray:
        """The new point y_t = S[:r, r], "extracted from S" as after (3.33)."""
        S = np.asarray(S, dtype=np.float64)
        return S[:-1, -1].copy()

    def solution_arrays(self, S: np.ndarray) -> dict[str, np.ndarray]:
        """Arrays a solution file carries besides ``S`` (DESIGN.md): the new point ``y``."""
        return {"y": self.point(self._check_matrix(S))}

    # ----------------------------------------------------------------- evaluation
    def _check_matrix(self, S: np.ndarray) -> np.ndarray:
        S = np.asarray(S, dtype=np.float64)
        if S.shape != (self.dim, self.dim):
            raise ValueError(f"S must have shape {(self.dim, self.dim)}, got {S.shape}")
        return S

    def residuals(self, S: np.ndarray) -> np.ndarray:
        """ξ_i = ŷ_iᵀ S ŷ_i − D_i, the slacks implied by S (constraint (1))."""
        S = self._check_matrix(S)
        Y_hat = np.hstack([self.Y, -np.ones((self.Y.shape[0], 1))])         # ŷ_i = (y_i, −1), (3.31)
        return np.einsum("ij,jk,ik->i", Y_hat, S, Y_hat) - self.sqdist

    def objective(self, S: np.ndarray) -> float:
        """Σ_i |ŷ_iᵀ S ŷ_i − D_i| + S[r, r], the objective with ξ implied by S."""
        S = self._check_matrix(S)
        return float(np.abs(self.residuals(S)).sum() + S[-1, -1])

    def max_violation(self, S: np.ndarray) -> float:
        """Worst violation of the structural constraints: max |S[:r, :r] − I| and the asymmetry
        max |S − Sᵀ| (constraint (1) is absorbed by ξ; S ⪰ 0 is checked by ``certify``)."""
        S = self._check_matrix(S)
        r = self.dim - 1
        return float(max(np.abs(S[:r, :r] - np.eye(r)).max(), np.abs(S - S.T).max()))

    # ----------------------------------------------------------------- files
    def to_arrays(self) -> dict[str, np.ndarray]:
        """The arrays of the file contract (DESIGN.md)."""
        arrays = {"problem": np.array(self.problem), "Y": np.asarray(self.Y), "sqdist": np.asarray(self.sqdist)}
        return self._with_optimum(arrays)

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> MVUOOSInstance:
        """Build from the arrays of an instance file (see :meth:`to_arrays`)."""
        for key in ("Y", "sqdist"):
            if key not in arrays:
                raise ValueError(f"a {cls.problem!r} instance needs the array {key!r}")
        optimum = file_scalar(arrays, "optimum", cls.problem) if "optimum" in arrays else None
        return cls(Y=arrays["Y"], sqdist=arrays["sqdist"], optimum=optimum)


def primal_objective(
    y: np.ndarray, Y_neighbours: np.ndarray, sqdist: np.ndarray, s: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Objective of (P) at y, with s given or (default) optimal for that y.

    Parameters
    ----------
    y : ndarray of shape (m, r)
    Y_neighbours : ndarray of shape (m, k, r)
    sqdist : ndarray of shape (m, k)
    s : ndarray of shape (m,), optional
        When omitted, s*(y) = max(‖y‖², c_(j*)) of the module docstring, the exact minimiser
        of Σ_i |c_i − s| + s over s ≥ ‖y‖², c_i = 2y_iᵀy − ‖y_i‖² + D_i.

    Returns
    -------
    objective : ndarray of shape (m,)
        Σ_i |ŷ_iᵀSŷ_i − D_i| + s for S = [[I, y], [yᵀ, s]] (the objective following (3.33)).
    s : ndarray of shape (m,)
    """
    a = np.einsum("mkr,mkr->mk", Y_neighbours, Y_neighbours) - sqdist
    rho0 = a - 2.0 * np.einsum("mkr,mr->mk", Y_neighbours, y)          # ρ_i − s
    if s is None:
        norm2 = np.einsum("mr,mr->m", y, y)
        k = rho0.shape[1]
        j = math.ceil((k - 1) / 2)
        if j == 0:
            s = norm2
        else:
            c_j = np.partition(-rho0, j - 1, axis=1)[:, j - 1]        # the j-th smallest c_i = −(ρ_i − s)
            s = np.maximum(norm2, c_j)
    objective = np.abs(rho0 + s[:, None]).sum(axis=1) + s
    return objective, s


def dual_bound(lam: np.ndarray, Y_neighbours: np.ndarray, sqdist: np.ndarray) -> np.ndarray:
    """Certified lower bound from multipliers λ: the dual objective g of (D) on the ray θλ.

    λ is clipped to [−1, 1]ᵏ, then g(θλ) = θA − θ²B / (1 + θS) (A = aᵀλ, B = ‖Yᵀλ‖²,
    S = 1ᵀλ) is maximised over the θ ≥ 0 that keep θλ dual feasible — |θλ_i| ≤ 1 and
    1 + θS > 0 — by its stationary point in closed form (x = 1 + θS = √(−B/C) with
    C = AS − B < 0, i.e. θ = −A / (C(1 + x))), compared with θ = 0, 1 and the largest θ. This
    repairs multipliers whose 1 + 1ᵀλ has been lost to rounding (it tends to 0 when the cone
    constraint is inactive at the optimum). The value is then evaluated with μ lowered below
    1 + θS by a bound on its rounding error (any 0 < μ ≤ 1 + 1ᵀλ gives a valid bound, see
    the module docstring), and a bound on the rounding error of the sums is subtracted.

    Parameters
    ----------
    lam : ndarray of shape (m, k)
    Y_neighbours : ndarray of shape (m, k, r)
    sqdist : ndarray of shape (m, k)

    Returns
    -------
    ndarray of shape (m,)
        Lower bounds on the optimal value of each point's SDP (θ = 0 gives the trivial 0).
    """
    lam = np.clip(np.asarray(lam, dtype=np.float64), -1.0, 1.0)
    m, k, r = Y_neighbours.shape
    norms2 = np.einsum("mkr,mkr->mk", Y_neighbours, Y_neighbours)
    A = np.einsum("mk,mk->m", lam, norms2 - sqdist)
    b = np.einsum("mk,mkr->mr", lam, Y_neighbours)
    B = np.einsum("mr,mr->m", b, b)
    S = lam.sum(axis=1)
    abs_lam = np.abs(lam)
    big = abs_lam.max(axis=1, initial=0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        theta_max = np.where(big > 0, 1.0 / big, 0.0)
        theta_max = np.where(S < 0, np.minimum(theta_max, (1.0 - 1e-12) / -S), theta_max)
        C = A * S - B
        x = np.sqrt(np.where(C < 0, -B / C, 1.0))
        theta_star = np.where(C < 0, -A / (C * (1.0 + x)), 0.0)
    theta_star = np.clip(np.nan_to_num(theta_star, nan=0.0, posinf=0.0, neginf=0.0), 0.0, theta_max)
    thetas = np.stack([np.zeros(m), np.minimum(1.0, theta_max), theta_max, theta_star], axis=1)   # (m, 4)
    # rounding-safe evaluation of g(θλ) for every candidate θ
    sum_abs = abs_lam.sum(axis=1)[:, None]
    mu = (1.0 + thetas * S[:, None]) - (k + 2) * _EPS * (1.0 + thetas * sum_abs)
    # |rounding error| of θA is at most c₁ = γ θ Σ|λ_i|(‖y_i‖² + D_i), of θb at most c₂ = γ θ Σ|λ_i|‖y_i‖,
    # so that of θ²‖b‖² is at most 2θ‖b‖c₂ + c₂² (γ = 4(k + r + 2)ε covers every sum formed here)
    gamma = 4.0 * (k + r + 2) * _EPS
    c1 = gamma * thetas * np.einsum("mk,mk->m", abs_lam, norms2 + sqdist)[:, None]
    c2 = gamma * thetas * np.einsum("mk,mk->m", abs_lam, np.sqrt(norms2))[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        value = thetas * A[:, None] - thetas**2 * B[:, None] / mu
        allowance = c1 + (2.0 * thetas * np.sqrt(B)[:, None] * c2 + c2**2) / mu
        value = np.where((mu > 0) | (thetas == 0), value - allowance, -np.inf)
    value[:, 0] = 0.0
    return value.max(axis=1)


def verified_dual_bound(instance: MVUOOSInstance, arrays: dict[str, np.ndarray]) -> float:
    """The lower bound on the optimum proved from the multipliers of a solution file, with numpy alone.

    ``dual_lambda`` (k,) holds one multiplier λ_i per neighbour (constraint (1)), in the order of
    the instance's ``Y``. :func:`dual_bound` clips it to [−1, 1]ᵏ, repairs 1 + 1ᵀλ > 0 by the best
    θ on the ray θλ and evaluates g of (D) with rounding allowances: (D) has the Schur complement
    of the SDP's dual cone in closed form, so no eigenvalue is needed and wrong multipliers give
    a weak bound, never a wrong one.

    Raises
    ------
    ValueError
        ``dual_lambda`` missing or not a finite real vector of k entries.
    """
    if "dual_lambda" not in arrays:
        raise ValueError("an mvu_oos proof needs 'dual_lambda', one multiplier per neighbour")
    lam = as_vector(arrays["dual_lambda"], "'dual_lambda' (one multiplier per neighbour)",
                    length=instance.n_neighbors, allow_bool=False)
    return float(dual_bound(lam[None], instance.Y[None], instance.sqdist[None])[0])
