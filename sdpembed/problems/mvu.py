"""MVU (Weinberger, thesis Sec. 3.1) as numpy: the instance type of the MVU SDP and its variants,
and the certified dual bound (:func:`dual_bound`) that the interior-point solver
(:mod:`sdpembed.solvers.mvu.ipm`) and the CVXPY formulation (:mod:`sdpembed.formulations.mvu`)
share.

The SDP and its dual
--------------------
With the edge operator 𝒜(K)_e = K_ii + K_jj − 2K_ij (3.13), whose adjoint is the weighted
graph Laplacian 𝒜*(y) = L(y) = Σ_e y_e (e_i − e_j)(e_i − e_j)ᵀ, every variant reads

    maximise  c·tr K − ω Σ_e |𝒜(K)_e − D_e| [slack only]   s.t.  𝒜(K) (= or ≤) D,  1ᵀK1 = 0,  K ⪰ 0,

c = 1 (equality, inequality), 1 − ω (slack), −1 (min_trace, stated as max −tr K). Its
Lagrange dual is

    minimise  yᵀD   s.t.  L(y) + t·11ᵀ ⪰ c·I,   y ∈ 𝒴,

𝒴 = Rᴱ (equality, min_trace), R₊ᴱ (inequality) or [−ω, ω]ᴱ (slack). Since L(y)1 = 0 the
constraint splits along 1 and 1⊥: t covers the 1-direction and the condition is
λ_min(L(y)|₁⊥) ≥ c — for c = 1 an algebraic-connectivity constraint, the fastest-mixing
problem the thesis mentions after the inequality SDP. Weak duality, for any feasible K:
c·tr K [− ω‖𝒜K − D‖₁] ≤ yᵀD + ⟨cI − L(y) − t11ᵀ, K⟩ ≤ yᵀD.

The certificate (:func:`dual_bound`) turns *any* y into a dual-feasible point: y is clipped
into 𝒴, μ = λ_min(L(y)|₁⊥) is estimated densely, and if μ is below c (plus a small margin)
either y is scaled by (c + margin)/μ (when that stays in 𝒴) or mixed with a strictly feasible
point y₀ — (2c/λ₂(L₁))·1 for equality/inequality, ω·1 for slack, 0 for min_trace — with
weight θ = (μ₀ − c − margin)/(μ₀ − μ), since λ_min(L(·)|₁⊥) is concave. The estimate only
steers: the point is *proved* dual feasible by a Cholesky factorisation of
L(y) + t·11ᵀ − cI shifted down by a rigorous bound on the rounding errors of forming and
factorising it (Demmel [2], Rump [3]; ``_proves_feasible``) — a dense LAPACK eigenvalue
decomposition has no backward-error constant one could cite, a Cholesky factorisation has.
Both are O(n³) and dense, run to n = :data:`DUAL_DENSE_LIMIT`. The shift grows like
(n + 1)u·tr L(y) (u the unit roundoff): multipliers that carry a large multiple of a stress (the
facial reduction's lift, :mod:`sdpembed.solvers.mvu.facial`) have tr L(y) ≫ yᵀD, and there the
factorisation runs in numpy's long double (u = 2⁻⁶⁴ on x86-64, the same error analysis with that
u; ``_proof_unit``), its shift bounded after the factorisation by γ_{n+1}·ρ(|R̃ᵀ||R̃|) (Collatz–
Wielandt, ``_factor_norm_bound``: near ‖L(y)‖₂ where tr L(y) is tens of times larger), and yᵀD
is evaluated exactly in rational arithmetic before it is rounded up.
The smallest proved yᵀD,
rounded upwards, is an upper bound on the optimum whether or not the run converged, and
:func:`verified_dual_bound` computes it from the multipliers a solution file carries
(``dual_y``; the centering multiplier ``dual_t`` is optional, as t is free in the dual and
absent from its objective).
The slack variant is bounded iff ω·λ₂(L₁) ≥ 1 − ω (λ₂(L₁) the algebraic connectivity of the
unit-weight graph; L(y) ⪯ L(ω1) for y ≤ ω1): otherwise stretching every edge pays, and the
solver reports ``unbounded``.

The variational SDP of Sec. 3.1.8 (K ≈ QZQᵀ, (3.25); :mod:`sdpembed.formulations.mvu`) is, with
ξ at its optimum, maximise (1 − ω) tr Z − ω‖Mz − D‖² over Z ⪰ 0, z the upper triangle of Z and
M (E × p, p = m(m+1)/2) the edge operator on it. :func:`variational_compression` reduces the E
rows of [M, D] to the (p + 1) × (p + 1) triangle R of their QR factorisation, so that
‖Mz − D‖² = ‖R₁z − c‖² + ρ², whatever E. Its dual (:func:`variational_dual_bound`): for any
u ∈ Rᴱ, −ω‖v‖² ≤ −uᵀv + ‖u‖²/(4ω), so with v = 𝒜_Q(Z) − D, 𝒜_Q(Z)_e = b_eᵀZb_e
(b_e = q_i − q_j) and its adjoint 𝒜_Q*(u) = QᵀL(u)Q,

    (1 − ω) tr Z − ω‖v‖² ≤ ⟨(1 − ω)I − QᵀL(u)Q, Z⟩ + uᵀD + ‖u‖²/(4ω) ≤ uᵀD + ‖u‖²/(4ω)

for every Z ⪰ 0 once QᵀL(u)Q ⪰ (1 − ω)I: a bound on the variational SDP's optimum *for that
basis Q*, the m × m SDP actually solved — not on the full MVU SDP, which the basis restricts.
At the optimum u = 2ω(𝒜_Q(Z) − D) (the equality case of the inequality above).

References
----------
.. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
   Pennsylvania, 2007. Implemented here: the MVU SDP (3.11)–(3.15) of Sec. 3.1.4, the relaxations
   of Sec. 3.1.6, the minimum-trace variant of Sec. 3.1.11, the Laplacian (3.24), the variational
   SDP (3.25).
.. [2] J. W. Demmel, "On floating point errors in Cholesky", LAPACK Working Note 14, 1989.
   Used here: the backward error |ΔA| ≤ γ_{n+1}|R̃ᵀ||R̃| of a Cholesky factorisation that runs
   to completion.
.. [3] S. M. Rump, "Verification of positive definiteness", BIT Numerical Mathematics 46(2),
   433–452, 2006. Used here: a successful floating-point Cholesky factorisation of a matrix
   shifted by its rounding-error bound as a proof of positive semidefiniteness.
.. [4] N. J. Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed., SIAM, 2002. Used
   here: the standard model of floating-point arithmetic (Sec. 2.2), Lemma 8.4 (an inner product
   subtracted and divided, in any order of evaluation) and Theorem 10.3 (Cholesky's backward error),
   for an arithmetic of any unit roundoff u.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from .._validate import as_matrix, as_vector, check_delta, check_positive_int, real_array
from ..graphs import check_connected, check_edges, link_components, neighborhood_graph
from ..results import relative_gap
from .base import Instance, file_scalar, power_of_two_below

if TYPE_CHECKING:
    import scipy.sparse as sp

__all__ = [
    "DUAL_DENSE_LIMIT",
    "MVUInstance",
    "algebraic_connectivity",
    "connectivity_interval",
    "centering_multiplier",
    "dual_bound",
    "incidence_matrix",
    "proof_margin",
    "slack_is_bounded",
    "slack_verdict",
    "svec_edge_matrix",
    "variational_compression",
    "variational_dual_bound",
    "verified_dual_bound",
]


@dataclass(frozen=True, eq=False)
class MVUInstance(Instance):
    """The MVU SDP (thesis Sec. 3.1.4) and its variants, over K ∈ Rⁿˣⁿ with the edge operator
    𝒜(K)_e = K_ii + K_jj − 2K_ij (3.13), e = (i, j) ∈ edges, and D_e = ``sqdist[e]``::

          equality     maximise tr K      s.t. 𝒜(K) = D, ΣK_ij = 0 (3.14), K ⪰ 0 (3.15)  — (3.19), Sec. 3.1.4
          inequality   maximise tr K      s.t. 𝒜(K) ≤ D, ΣK_ij = 0, K ⪰ 0               — Sec. 3.1.6
          slack        maximise (1 − ω) tr K − ω Σ_e |𝒜(K)_e − D_e|  s.t. ΣK_ij = 0, K ⪰ 0 — Sec. 3.1.6
                       (the slacks ξ_e = 𝒜(K)_e − D_e eliminated; the thesis' Σ_ij η_ij counts
                       each edge once here)
          min_trace    minimise tr K      s.t. 𝒜(K) = D, ΣK_ij = 0, K ⪰ 0               — Sec. 3.1.11

    Every variant is stated as a *maximisation* (registry sense ``"max"``): for ``min_trace``
    :meth:`objective` is −tr K, so a dual bound is always an upper bound on the objective and
    ``certify`` needs no special case; the reported optimum of ``min_trace`` is −(min tr K).

    Parameters
    ----------
    edges : ndarray of shape (E, 2), int
        Undirected edges of a *connected* neighbourhood graph on n nodes (no self-loops or
        repeated edges); stored with i < j in each row, in the given order.
    sqdist : ndarray of shape (E,)
        Squared input distances D_e ≥ 0 (3.8).
    n : int
        Number of points (K is n × n), n ≥ 2.
    variant : {"equality", "inequality", "slack", "min_trace"}
    omega : float, optional
        ω ∈ (0, 1) of the slack variant (required there, and only there).
    optimum : float, optional
        A certified optimal value of :meth:`objective` carried with the instance.
    """

    problem: ClassVar[str] = "mvu"
    variable: ClassVar[str] = "K"
    VARIANTS: ClassVar[tuple[str, ...]] = ("equality", "inequality", "slack", "min_trace")

    edges: np.ndarray
    sqdist: np.ndarray
    n: int
    variant: str = "equality"
    omega: float | None = None
    optimum: float | None = None

    def __post_init__(self) -> None:
        n = self.n.item() if isinstance(self.n, np.ndarray) and self.n.ndim == 0 else self.n
        object.__setattr__(self, "n", check_positive_int(n, "n", minimum=2))
        self._check_variable_memory(self.n)              # before the O(n) graph checks
        edges = check_edges(self.edges, self.n).copy()
        swap = edges[:, 0] > edges[:, 1]
        edges[swap] = edges[swap][:, ::-1]
        D = real_array(self.sqdist, "sqdist").copy()
        if D.shape != (edges.shape[0],):
            raise ValueError(f"sqdist must be a 1-D array with one squared distance per edge ({edges.shape[0]}), "
                             f"got shape {D.shape}")
        if not np.all(np.isfinite(D)):
            raise ValueError("sqdist contains NaN or infinite entries")
        if np.any(D < 0):
            raise ValueError(f"sqdist must hold squared distances (>= 0), got minimum {D.min():.6g}")
        if not D.max() > 0:
            raise ValueError("sqdist is all zero: every point would be mapped to the origin")
        check_connected(self.n, edges)
        variant = str(self.variant.item() if isinstance(self.variant, np.ndarray) else self.variant)
        if variant not in self.VARIANTS:
            raise ValueError(f"variant must be one of {self.VARIANTS}, got {variant!r}")
        object.__setattr__(self, "variant", variant)
        omega = self.omega.item() if isinstance(self.omega, np.ndarray) and self.omega.ndim == 0 else self.omega
        if variant == "slack":
            if omega is None:
                raise ValueError("the slack variant needs omega in (0, 1) (Sec. 3.1.6)")
            object.__setattr__(self, "omega", check_delta(omega, "omega"))
        elif omega is not None:
            raise ValueError(f"omega is only used by the slack variant, not by {variant!r}; leave it None")
        for arr in (edges, D):
            arr.setflags(write=False)
        object.__setattr__(self, "edges", edges)
        object.__setattr__(self, "sqdist", D)
        self._check_optimum()

    # ----------------------------------------------------------------- constructors
    @classmethod
    def from_points(
        cls, X: np.ndarray, n_neighbors: int = 4, variant: str = "equality", *, omega: float | None = None,
        angles: bool = True, link: bool = False, random_state=None,
    ) -> MVUInstance:
        """The instance of inputs ``X`` (rows): step (I) of Table 3.1
        (:func:`sdpembed.graphs.neighborhood_graph`), optionally connected by the linking
        procedure of Sec. 3.1.12 (``link=True``); a disconnected graph is a ValueError otherwise."""
        X = as_matrix(X, "X", min_rows=2)
        edges, D = neighborhood_graph(X, n_neighbors, angles=angles)
        if link:
            edges, D = link_components(X, edges, random_state=random_state)
        return cls(edges=edges, sqdist=D, n=X.shape[0], variant=variant, omega=omega)

    @classmethod
    def from_data(cls, X: np.ndarray, y: np.ndarray | None, delta: float, **_: Any) -> MVUInstance:
        """Not available: an MVU instance is built from points and a neighbourhood size."""
        raise ValueError("an mvu instance is built with MVUInstance.from_points(X, n_neighbors, variant)")

    # ----------------------------------------------------------------- structure
    @property
    def dim(self) -> int:
        """n (K is n × n)."""
        return self.n

    @property
    def n_constraints(self) -> int:
        """The E edge constraints (3.13) (plus the one centering constraint (3.14))."""
        return self.edges.shape[0]

    @property
    def tau(self) -> float:
        """τ = max_e D_e, the largest squared edge length (3.11): the scale of violations."""
        return float(self.sqdist.max())

    def relative_gap(self, bound: float, objective: float) -> float:
        """The relative gap of (``bound``, ``objective``) (:func:`~sdpembed.results.relative_gap`) at the scale
        of the data: both divided by the power of two 2^k ≤ τ < 2^(k+1) first, so that its floor (the objective
        below which a gap is measured absolutely) is 10⁻¹² τ, not 10⁻¹². The objective scales as τ: on points of
        scale 10⁻⁹ (τ ~ 10⁻¹⁸) the absolute floor made every pair of an objective and a bound a relative gap
        of at most 10⁻⁶. Exact division: at unit scale the value is that of the plain relative gap."""
        unit = self.objective_unit
        return relative_gap(bound / unit, objective / unit)

    @property
    def objective_unit(self) -> float:
        """The power of two 2^k ≤ τ < 2^(k+1) (:attr:`tau`): the objective, as K, scales as the squared
        distances, so its errors are measured at the data's scale (:meth:`relative_gap`, ``certify``)."""
        return power_of_two_below(self.tau)

    @property
    def matrix_unit(self) -> float:
        """The power of two 2^k ≤ τ < 2^(k+1), as :attr:`objective_unit`: K scales as the squared distances."""
        return power_of_two_below(self.tau)

    @property
    def trace_weight(self) -> float:
        """c in the objective c·tr K: 1, 1 − ω (slack) or −1 (min_trace)."""
        return {"slack": 1.0 - (self.omega or 0.0), "min_trace": -1.0}.get(self.variant, 1.0)

    def edge_values(self, K: np.ndarray) -> np.ndarray:
        """𝒜(K)_e = K_ii + K_jj − 2K_ij (3.13) for every edge."""
        K = self._check_matrix(K)
        i, j = self.edges[:, 0], self.edges[:, 1]
        return K[i, i] + K[j, j] - 2.0 * K[i, j]

    def feasible_shrink(self, edge_values: np.ndarray) -> float:
        """The largest s ≤ 1 with s·𝒜(K)_e ≤ D_e on every edge of positive length, given ``edge_values``
        𝒜(K) (:meth:`edge_values`), for the inequality variant; 1 for the others.

        A maximiser that meets the inequalities (3.19) only to a tolerance can have an objective above
        the optimum, so that a proved bound close to it says nothing about its distance to the optimum;
        s·K meets them (K ⪰ 0 stays so), and bound − tr(s·K) ≥ 0 is a proved bound on its own
        suboptimality. Edges of length 0 are met by :meth:`feasible_point` first.
        """
        if self.variant != "inequality":
            return 1.0
        a = np.asarray(edge_values, dtype=np.float64)
        over = (a > self.sqdist) & (self.sqdist > 0)
        return float(np.min(self.sqdist[over] / a[over])) if np.any(over) else 1.0

    @property
    def has_duplicates(self) -> bool:
        """Whether an edge has length 0 (points that every feasible K of the equality, inequality and min_trace
        variants must merge: 𝒜(K)_e = 0 with K ⪰ 0 means K(e_i − e_j) = 0)."""
        return bool(np.any(self.sqdist <= 0))

    def merge_duplicates(self, K: np.ndarray) -> np.ndarray:
        """PKP, P the orthogonal projection averaging the rows of each set of points joined by edges of length 0
        (PSD, centred — P1 = 1 — and of trace at most tr K); K itself when there are none."""
        K = self._check_matrix(K)
        if not self.has_duplicates:
            return K
        import scipy.sparse.csgraph  # at first use (DESIGN.md, "Start-up")

        joined = self.edges[self.sqdist <= 0]
        graph = scipy.sparse.coo_matrix((np.ones(joined.shape[0]), (joined[:, 0], joined[:, 1])),
                                        shape=(self.n, self.n))
        _, label = scipy.sparse.csgraph.connected_components(graph, directed=False)
        counts = np.bincount(label).astype(np.float64)
        rows = np.zeros((counts.size, self.n))
        np.add.at(rows, label, K)
        PK = (rows / counts[:, None])[label]                      # P K: each row the mean of its set
        cols = np.zeros((self.n, counts.size))
        np.add.at(cols.T, label, PK.T)
        K = (cols / counts[None, :])[:, label]                     # (P K) P
        return 0.5 * (K + K.T)

    def feasible_point(self, K: np.ndarray) -> np.ndarray:
        """K moved onto the edges of length 0 and, for the inequality variant, onto its inequalities (3.19)
        (slack: K as given).

        Points joined by an edge of length 0 (duplicates) must coincide: K becomes PKP
        (:meth:`merge_duplicates`), which meets those edges exactly; the inequality variant's K then becomes
        s·PKP with s of :meth:`feasible_shrink`, feasible up to rounding, so that a proved bound above its
        objective bounds its distance to the optimum. For the equality and min_trace variants the merged K
        meets the other edges only as well as the solver's K did, but no longer sits off the face of the merged
        points, where a violation of 𝒜(K)_e = 0 of v moves tr K by about √v (a thin face); without duplicates
        K is returned as given.
        """
        K = self._check_matrix(K)
        if self.variant == "slack":
            return K
        K = self.merge_duplicates(K)
        if self.variant != "inequality":
            return K
        return K * self.feasible_shrink(self.edge_values(K))

    def _check_matrix(self, K: np.ndarray) -> np.ndarray:
        K = np.asarray(K, dtype=np.float64)
        if K.shape != (self.n, self.n):
            raise ValueError(f"K must have shape {(self.n, self.n)}, got {K.shape}")
        return K

    # ----------------------------------------------------------------- evaluation
    def objective(self, K: np.ndarray) -> float:
        """tr K (equality, inequality), (1 − ω) tr K − ω Σ_e |𝒜(K)_e − D_e| (slack), −tr K (min_trace)."""
        K = self._check_matrix(K)
        value = self.trace_weight * float(np.trace(K))
        if self.variant == "slack":
            value -= self.omega * float(np.abs(self.edge_values(K) - self.sqdist).sum())
        return value

    def max_violation(self, K: np.ndarray) -> float:
        """Worst constraint violation relative to τ (3.11): max over the edge constraints
        (|𝒜(K) − D| for equalities, (𝒜(K) − D)₊ for inequalities, none for slack), the
        centering |ΣK_ij| / n² (the squared norm of the outputs' mean, (3.14)) and the asymmetry
        max |K − Kᵀ|; K ⪰ 0 is checked by ``certify``."""
        K = self._check_matrix(K)
        r = self.edge_values(K) - self.sqdist
        if self.variant == "inequality":
            edge = float(np.max(np.maximum(r, 0.0)))
        elif self.variant == "slack":
            edge = 0.0
        else:
            edge = float(np.max(np.abs(r)))
        centering = abs(float(K.sum())) / self.n**2
        asymmetry = float(np.max(np.abs(K - K.T)))
        return max(edge, centering, asymmetry) / self.tau

    # ----------------------------------------------------------------- files
    def to_arrays(self) -> dict[str, np.ndarray]:
        """The arrays of the file contract (DESIGN.md)."""
        arrays = {
            "problem": np.array(self.problem),
            "edges": np.asarray(self.edges),
            "sqdist": np.asarray(self.sqdist),
            "n": np.array(self.n),
            "variant": np.array(self.variant),
        }
        if self.omega is not None:
            arrays["omega"] = np.array(self.omega)
        return self._with_optimum(arrays)

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> MVUInstance:
        """Build from the arrays of an instance file (see :meth:`to_arrays`)."""
        for key in ("edges", "sqdist"):
            if key not in arrays:
                raise ValueError(f"a {cls.problem!r} instance needs the array {key!r}")
        n = file_scalar(arrays, "n", cls.problem)
        variant = file_scalar(arrays, "variant", cls.problem)
        omega = file_scalar(arrays, "omega", cls.problem) if "omega" in arrays else None
        optimum = file_scalar(arrays, "optimum", cls.problem) if "optimum" in arrays else None
        return cls(edges=arrays["edges"], sqdist=arrays["sqdist"], n=n, variant=variant, omega=omega,
                   optimum=optimum)


_EPS = np.finfo(np.float64).eps
_TINY = np.finfo(np.float64).smallest_subnormal

#: Largest n for which the certificate's dense eigenvalue problem and Cholesky factorisation are
#: run (O(n³) time, O(n²) memory).
DUAL_DENSE_LIMIT = 4000

def incidence_matrix(n: int, edges: np.ndarray) -> sp.csr_matrix:
    """B (E × n) with B[e, i] = 1, B[e, j] = −1: 𝒜(YYᵀ) = rowsum((BY)²), L(w) = Bᵀ diag(w) B."""
    import scipy.sparse as sp  # at first use (DESIGN.md, "Start-up")

    E = edges.shape[0]
    rows = np.repeat(np.arange(E), 2)
    cols = edges.ravel()
    vals = np.tile([1.0, -1.0], E)
    return sp.csr_matrix((vals, (rows, cols)), shape=(E, n))


#: Edges per block of :func:`variational_compression` (its rows stay in cache).
VARIATIONAL_QR_BLOCK = 4096


def svec_edge_matrix(B: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """M (E × m(m+1)/2) with M @ svec_u(Z) = (b_eᵀ Z b_e)_e, svec_u(Z) the upper triangle of Z
    (off-diagonal entries counted twice through the coefficient 2 b_a b_b), for the rows b_e of
    ``B`` (E × m); also the row and column indices (a, b) of the upper triangle, ``numpy.triu_indices(m)``."""
    m = B.shape[1]
    a, b = np.triu_indices(m)
    M = B[:, a] * B[:, b] * np.where(a == b, 1.0, 2.0)
    return M, a, b


def variational_compression(Q: np.ndarray, edges: np.ndarray, sqdist: np.ndarray) -> np.ndarray:
    """The upper triangle R ((p + 1) × (p + 1), p = m(m+1)/2) of a thin QR of [M, D], M the
    variational SDP's edge operator on the upper triangle z of Z (rows b_eᵀZb_e, b_e = q_i − q_j):
    ‖Mz − D‖² = ‖R[:p, :p] z − R[:p, p]‖² + R[p, p]² (module docstring). Taken block by block —
    the R of the rows so far stacked on the next block's rows — so the E × p matrix M is never
    formed."""
    Q = as_matrix(Q, "Q")
    D = as_vector(sqdist, "sqdist", length=edges.shape[0])
    p = Q.shape[1] * (Q.shape[1] + 1) // 2
    R = np.zeros((0, p + 1))
    for start in range(0, edges.shape[0], VARIATIONAL_QR_BLOCK):
        block = edges[start:start + VARIATIONAL_QR_BLOCK]
        M, _, _ = svec_edge_matrix(Q[block[:, 0]] - Q[block[:, 1]])
        R = np.linalg.qr(np.vstack([R, np.column_stack([M, D[start:start + VARIATIONAL_QR_BLOCK]])]), mode="r")
    if R.shape[0] < p + 1:                          # fewer edges than unknowns: ρ = 0 rows added
        R = np.vstack([R, np.zeros((p + 1 - R.shape[0], p + 1))])
    return R


def _proves_at_least(A: np.ndarray, level: float, form_error: float) -> bool:
    """Prove λ_min(A_exact) ≥ ``level`` for a symmetric m × m A_exact whose computed copy A is within
    ``form_error`` of it in the 2-norm: a Cholesky factorisation of fl(A − (level + δ)I) that runs to
    completion, δ covering the forming error, the subtraction and Demmel's backward error
    γ_{m+1}/(1 − γ_{m+1})·tr F (as in ``_proves_feasible``)."""
    m = A.shape[0]
    u = 0.5 * _EPS
    gamma = (m + 1) * u / (1.0 - (m + 1) * u)
    trace = (float(np.abs(np.diag(A)).sum()) + m * abs(level)) * (1.0 + 2.0 * m * u)
    rounding = 4.0 * u * m * (abs(level) + float(np.abs(A).max()))
    delta = 1.01 * (form_error + gamma / (1.0 - gamma) * 2.0 * trace + rounding
                    + 8.0 * m * (2.0 * (m + 2) + trace) * _TINY)
    F = A.copy()
    F[np.diag_indices(m)] -= level + delta
    if not np.all(np.isfinite(F)):
        return False
    try:
        np.linalg.cholesky(F)
    except np.linalg.LinAlgError:
        return False
    return True


def _raise_deficient(B: np.ndarray, u: np.ndarray, levels: np.ndarray, vectors: np.ndarray, target: float,
                     operator) -> np.ndarray:
    """u plus nonnegative edge weights that lift the eigenvalues of A(u) = Σ_e u_e b_e b_eᵀ below
    ``target``: for each such eigenvector x_k, w_k = (Bx_k)² ≥ 0 adds the PSD A(w_k), whose quadratic
    form at x_k is Σ_e (b_eᵀx_k)⁴; repeated a few times, as the lifts couple the eigenvectors."""
    w = u
    for _ in range(8):
        low = levels < target
        if not np.any(low):
            break
        P = (B @ vectors[:, low]) ** 2
        w = w + P @ ((target - levels[low]) / np.sum(P * P, axis=0))
        levels, vectors = np.linalg.eigh(operator(w))
    return w


def variational_dual_bound(Q: np.ndarray, edges: np.ndarray, sqdist: np.ndarray, omega: float,
                           Z: np.ndarray) -> tuple[float, float]:
    """A certified upper bound on the optimum of the variational SDP (3.25) over Z for the basis Q,
    and the objective of Z, from the multipliers u = 2ω(𝒜_Q(Z) − D) that Z implies.

    The dual of the module docstring: u is made dual feasible (QᵀL(u)Q ⪰ (1 − ω)I) by scaling it,
    or by adding a multiple of 1 (QᵀL(1)Q = QᵀL₁Q is positive definite for a basis orthogonal to
    1 on a connected graph), whichever gives the smaller bound; feasibility is then proved by a
    Cholesky factorisation with a rigorous shift for the rounding errors of forming QᵀL(u)Q
    (≤ γ_{E+4}Σ_e|u_e|‖b_e‖²) and of the factorisation (Demmel), and uᵀD + ‖u‖²/(4ω) is rounded
    upwards. The bound holds for the SDP restricted to span(Q), i.e. it certifies Z as a
    solution of the reduced m × m problem, not QZQᵀ as one of the full MVU SDP.

    Parameters
    ----------
    Q : ndarray of shape (n, m)
        The basis.
    edges : ndarray of shape (E, 2)
    sqdist : ndarray of shape (E,)
        Squared edge lengths D, in the units the SDP was solved in.
    omega : float
        ω ∈ (0, 1).
    Z : ndarray of shape (m, m)
        A PSD candidate (its objective is the second return value).

    Returns
    -------
    bound : float
        ``inf`` when no dual-feasible point could be proved.
    objective : float
        (1 − ω) tr Z − ω‖𝒜_Q(Z) − D‖².
    """
    Q = as_matrix(Q, "Q")
    D = as_vector(sqdist, "sqdist", length=edges.shape[0])
    Z = as_matrix(Z, "Z")
    if not 0.0 < omega < 1.0:
        raise ValueError(f"omega must lie in (0, 1), got {omega!r}")
    a = 1.0 - omega
    B = Q[edges[:, 0]] - Q[edges[:, 1]]
    v = np.einsum("ek,kl,el->e", B, Z, B) - D
    objective = a * float(np.trace(Z)) - omega * float(v @ v)
    norms = np.einsum("ek,ek->e", B, B)
    E, m = B.shape
    u_round = 0.5 * _EPS
    gamma = (E + 4) * u_round / (1.0 - (E + 4) * u_round)

    def operator(w: np.ndarray) -> np.ndarray:
        A = (B * w[:, None]).T @ B
        return 0.5 * (A + A.T)

    def value(w: np.ndarray) -> float:
        exact = float(w @ D) + float(w @ w) / (4.0 * omega)
        return exact + 2.0 * E * _EPS * (float(np.abs(w) @ D) + float(w @ w) / (4.0 * omega))

    u = 2.0 * omega * v
    levels, vectors = np.linalg.eigh(operator(u))
    mu = float(levels[0])
    ones = np.ones(E)
    mu1 = float(np.linalg.eigvalsh(operator(ones))[0])
    best = float("inf")
    # every candidate at every margin above (1 − ω): the smallest proved value is the bound
    for margin in (1e-12, 1e-9, 1e-6, 1e-3):
        target = a * (1.0 + margin)
        candidates = [u] if mu >= target else []
        if 0.0 < mu < target:
            candidates.append(u * (target / mu))
        if mu1 > 0.0 and mu < target:
            candidates.append(u + ones * ((target - mu) / mu1))
        if mu < target:
            candidates.append(_raise_deficient(B, u, levels, vectors, target, operator))
        for w in candidates:
            form = 1.01 * gamma * float(np.abs(w) @ norms) * (1.0 + 8.0 * u_round)
            if value(w) < best and _proves_at_least(operator(w), a, form):
                best = value(w)
    return best, objective


def _dense_laplacian(n: int, edges: np.ndarray, y: np.ndarray, dtype=np.float64) -> np.ndarray:
    """L(y) as a dense array of ``dtype``, the values of :func:`~sdpembed.graphs.graph_laplacian` without SciPy
    (``verify`` proves MVU bounds with numpy alone): off-diagonal entries −y_e exactly, diagonal
    Σ_{e∋i} y_e summed in floating point of ``dtype``."""
    y = np.asarray(y, dtype=np.float64)
    i, j = edges[:, 0], edges[:, 1]
    L = np.zeros((n, n), dtype=dtype)
    np.add.at(L, (i, j), -y)
    np.add.at(L, (j, i), -y)
    if dtype == np.float64:
        L[np.diag_indices(n)] = np.bincount(i, weights=y, minlength=n) + np.bincount(j, weights=y, minlength=n)
    else:                                              # bincount sums in double: the diagonal in dtype
        diagonal = np.zeros(n, dtype=dtype)
        np.add.at(diagonal, i, y.astype(dtype))
        np.add.at(diagonal, j, y.astype(dtype))
        L[np.diag_indices(n)] = diagonal
    return L


def _eig_estimate(n: int, edges: np.ndarray, y: np.ndarray, level: float) -> tuple[float, float, float]:
    """An estimate of λ_min(L(y)) on 1⊥ (or a value ≥ ``level`` when that is all it says) and two
    backward-error margins to lower it by: a worst case, 16nε‖L(y)‖, and the few ε‖L(y)‖ a dense
    symmetric eigensolver makes in practice. L(y) + s·11ᵀ/n with s = max(level, 0) + 1 moves the
    eigenvalue of 1 to s > level, so λ_min of the shifted matrix is min(s, λ_min on 1⊥).

    This steers the construction of a dual point (:func:`dual_bound`), which is then proved
    feasible by ``_proves_feasible``; it is not itself the proof."""
    M = _dense_laplacian(n, edges, y)
    shift = max(level, 0.0) + 1.0
    M += shift / n
    w = np.linalg.eigvalsh(M)
    spectral = float(np.max(np.abs(w)))
    forming = 8.0 * _EPS * float(np.abs(y).max(initial=0.0)) * float(
        np.max(np.bincount(edges.ravel(), minlength=n))
    )
    return float(w[0]), 16.0 * n * _EPS * max(spectral, 1.0) + forming + 4.0 * _EPS * shift, \
        4.0 * _EPS * (max(spectral, 1.0) + shift)


def algebraic_connectivity(n: int, edges: np.ndarray) -> float:
    """λ₂ of the unit-weight Laplacian (3.24), estimated densely (n ≤ a few 1000) and lowered by a
    backward-error margin."""
    return connectivity_interval(n, edges)[0]


def connectivity_interval(n: int, edges: np.ndarray, basis_rows: np.ndarray | None = None) -> tuple[float, float]:
    """[lower, upper] ∋ λ₂(L₁), the algebraic connectivity of the unit-weight Laplacian (3.24): the dense
    estimate of :func:`algebraic_connectivity` ± its backward-error margin (``lower`` is that function's
    value). With ``basis_rows`` B̃ = BV (E × m) it brackets λ_min(B̃ᵀB̃), the unit weights on the face of
    K = VXVᵀ, instead: eigvalsh's 16mε‖·‖ plus the rounding γ_E‖B̃‖²_F of forming B̃ᵀB̃."""
    if basis_rows is None:
        # the level moves the eigenvalue of 1 above the whole spectrum (λ_max ≤ 2·max degree, Gershgorin): at a
        # level of 0 it sat at 1, and every λ₂ > 1 read as 1
        level = 2.0 * float(np.max(np.bincount(edges.ravel(), minlength=n), initial=0))
        estimate, margin, _ = _eig_estimate(n, edges, np.ones(edges.shape[0]), level)
    else:
        rows = np.asarray(basis_rows, dtype=np.float64)
        values = np.linalg.eigvalsh(rows.T @ rows)
        estimate = float(values[0])
        margin = 16.0 * rows.shape[1] * _EPS * max(float(np.max(np.abs(values))), 1.0) \
            + 1.01 * rows.shape[0] * _EPS * float(np.sum(rows * rows))
    return estimate - margin, estimate + margin


def slack_verdict(omega: float, lower: float, upper: float) -> tuple[str, str] | None:
    """Whether the slack SDP is unbounded, from an interval [``lower``, ``upper``] ∋ λ₂(L₁)
    (:func:`connectivity_interval`): None when it is bounded, else (status, message) for the solvers.

    With c = 1 − ω and 𝒜(K)_e ≥ 0, |𝒜(K)_e − D_e| ≥ 𝒜(K)_e − D_e and Σ_e 𝒜(K)_e = tr(L₁K) ≥ λ₂ tr K on
    centred K ⪰ 0, so the objective is at most (c − ωλ₂) tr K + ωΣ_e D_e: bounded, by ωΣD, whenever
    ωλ₂ ≥ c — at equality too. Below, K = t·v₂v₂ᵀ (v₂ the Fiedler vector) gains (c − ωλ₂)t for large t:
    unbounded. ``unbounded`` is said when ω·``upper`` < c; where c lies within ω·[``lower``, ``upper``] the
    estimate cannot decide, and the status is ``inaccurate`` with a message saying so: at the boundary
    the SDP is bounded, but its dual (|y_e| ≤ ω, L(y) ⪰ cI on 1⊥, L(y) ⪯ L(ω1)) has no strictly feasible
    point, so no bound could be proved anyway. (The margin, at least 16nε·λ₂, covers the rounding of
    the products ω·``lower``, ω·``upper`` and of c.)

    References
    ----------
    .. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
       Pennsylvania, 2007. The slack relaxation of MVU, Sec. 3.1.6; the Laplacian (3.24).
    """
    c = 1.0 - omega
    if omega * lower >= c:
        return None
    if omega * upper < c:
        return "unbounded", (f"omega = {omega:g} is too small for this graph: omega * lambda_2(L) <= "
                             f"{omega * upper:.17g} < 1 - omega = {c:.17g}, so stretching every edge increases the "
                             "objective without bound (use omega closer to 1)")
    return "inaccurate", (f"boundedness undecided: omega * lambda_2(L) lies in [{omega * lower:.17g}, "
                          f"{omega * upper:.17g}] (the estimate of lambda_2 and its error), which holds "
                          f"1 - omega = {c:.17g}; the SDP is bounded when omega * lambda_2 >= 1 - omega, "
                          "unbounded below, and at the boundary its dual has no strictly feasible point: K = 0 "
                          "returned, no bound (move omega away from 1 / (1 + lambda_2))")


#: The share of a solver's gap tolerance that the double-precision proof's own margin 2δ/|c|
#: (:func:`proof_margin`) may take: above it the proof of an iterate near its goal runs in extended precision
#: (long double, when it is finer than double). The margin adds to the iterate's own gap — Table 3.2's swiss roll
#: (n = 2,000): 9e-7 of the iterate and 6.4e-7 of the double proof, 1.5e-6 above a tolerance of 1e-6 — so a
#: margin that takes more than a quarter of the tolerance is worth the extended proof.
EXTENDED_PROOF_SHARE = 0.25

#: The iterates whose multipliers could prove a bound within this many gap tolerances of their objective get the
#: extended-precision proof (:func:`dual_bound`'s ``goal``); farther ones cannot be certified by it, and their bound
#: (a looser one, from the proof in double) only ranks them.
EXTENDED_GOAL = 10.0

#: The double proof's margin 2δ/|c| above which a proof without a goal (``verify``, a facial-reduction's final
#: certificate) runs in extended precision: :data:`EXTENDED_PROOF_SHARE` of the default gap tolerance 1e-6, the
#: threshold a solver at that tolerance proves with, so that ``verify`` proves a solution file's multipliers in the
#: precision its solver did.
EXTENDED_PROOF_FROM = EXTENDED_PROOF_SHARE * 1e-6

#: Largest n for which the proof runs in extended precision: its Cholesky factorisation is numpy's own
#: (LAPACK has no long double), O(n³) in interpreted blocks, many times LAPACK's double factorisation — which
#: covers the equality roll of n = 1,000, whose lifted multipliers prove a gap below 1e-5 only in long double, and
#: the trefoil knot of thesis Fig. 3.8 (n = 1,617, a cycle: λ₂ is small and tr L(y) large), whose double margin is
#: about 9e-6. A solver that certifies each iterate pays it only near the end (``goal`` of :func:`dual_bound`);
#: without a goal the choice of precision depends on (n, edges, y, c) alone, so ``verify`` proves the same way.
EXTENDED_PROOF_MAX_N = 2000

#: Rows and columns per block of the extended-precision Cholesky factorisation.
_EXTENDED_BLOCK = 64


def _extended_unit() -> float:
    """The unit roundoff u of numpy's long double when its arithmetic is finer than double's, else 0.

    u = eps/2 of ``np.finfo(np.longdouble)`` (2⁻⁶⁴ for the x87 80-bit format of x86-64, 2⁻¹¹³ for IEEE
    quad); long double is double on some platforms, and an x87 unit switched to double precision would
    round to 53 bits whatever the type says, so an addition and a product whose exact results need 61
    bits are checked to come out exact before u is trusted. Only those two formats are trusted: IBM's
    double-double (ppc64, 105 bits) does not round as the standard model the proof rests on assumes."""
    info = np.finfo(np.longdouble)
    if info.nmant not in (63, 112):                    # x87 extended, IEEE quad
        return 0.0
    one, a, b = np.longdouble(1), np.longdouble(2.0**-40), np.longdouble(2.0**-20)
    exact_sum = (one + b) + a + np.longdouble(2.0**-60)
    if (one + np.longdouble(2.0**-60)) == one or (one + a) * (one + b) != exact_sum:
        return 0.0
    return float(info.eps) / 2.0


_EXT_UNIT = _extended_unit()


def _proof_unit(n: int, edges: np.ndarray, y: np.ndarray, c: float, diagonal: np.ndarray,
                extended_from: float | None = None) -> float:
    """The unit roundoff the proof of y runs in: long double's (:func:`_extended_unit`) when there is one, n ≤
    :data:`EXTENDED_PROOF_MAX_N` and the double proof's margin 2δ/|c| exceeds ``extended_from`` (default
    :data:`EXTENDED_PROOF_FROM`; :func:`dual_bound` sets it from its ``goal``, ∞ to prove in double); double's
    otherwise. A function of (n, edges, y, c) alone by default, so ``verify`` proves the same way on a platform with
    the same long double; where long double is double (e.g. Windows, macOS on arm64) it proves in double, a weaker
    bound or none, never a wrong one."""
    u = 0.5 * _EPS
    threshold = EXTENDED_PROOF_FROM if extended_from is None else extended_from
    # (n + 1)u ≤ eps/2: the proof's factors 1/(1 − γ) round to 1 in double and its slack (1 + 4 eps) covers them
    if threshold < np.inf and _EXT_UNIT and n <= EXTENDED_PROOF_MAX_N and (n + 1) * _EXT_UNIT <= 0.5 * _EPS:
        delta = _proof_shift(n, edges, y, c, diagonal, u)[0]
        if 2.0 * delta > threshold * max(abs(c), 1e-300):
            return _EXT_UNIT
    return u


def _proof_shift(n: int, edges: np.ndarray, y: np.ndarray, c: float, diagonal: np.ndarray, u: float
                 ) -> tuple[float, float, float]:
    """The shift δ of ``_proves_feasible`` for L(y) with the given diagonal in arithmetic of unit roundoff
    u, with γ_{n+1}/(1 − γ_{n+1})'s γ and the forming error e_form (its docstring). The trace is summed
    in double: the entries' conversion and the sum err by at most a relative (n + 1)·2⁻⁵³ ≤ n·eps."""
    s = c + max(1.0, abs(c))
    t = s / n
    W = float(np.bincount(edges.ravel(), weights=np.repeat(np.abs(y), 2), minlength=n).max())
    max_degree = float(np.max(np.bincount(edges.ravel(), minlength=n)))
    gamma = (n + 1) * u / (1.0 - (n + 1) * u)
    trace = float(np.abs(np.asarray(diagonal, dtype=np.float64) + t - c).sum()) * (1.0 + n * _EPS)
    e_form = 4.0 * u * ((3.0 + max_degree) * W + 2.0 * abs(s) + abs(c)) + 8.0 * n * _TINY
    # the margin δ costs a relative (n + 1)u·tr L(y) / c of the bound: no more than the proof needs
    delta = 1.01 * (gamma / (1.0 - gamma) * trace + e_form) + 8.0 * n * (2.0 * (n + 2) + trace) * _TINY
    return delta, gamma, e_form


def proof_margin(instance, y: np.ndarray, *, goal: tuple[float, float] | None = None) -> float:
    """The relative gap the proof of :func:`dual_bound` itself costs at multipliers y: it aims
    λ_min(L(y)|₁⊥) at c + 2δ, δ the rounding shift of its Cholesky proof (about
    γ_{n+1}·tr L(y), Demmel's bound, γ_{n+1} = (n + 1)u/(1 − (n + 1)u) for the unit roundoff u of the
    arithmetic the proof runs in: double's, or long double's when double's margin exceeds
    :data:`EXTENDED_PROOF_FROM`, or :data:`EXTENDED_PROOF_SHARE` of the gap tolerance of ``goal``), so a bound
    proved from y exceeds the dual value of the exact optimum by about 2δ/|c| of itself. A gap tolerance below
    this cannot be certified from y; it grows with n and with the multipliers' sum (tr L(y) = 2Σ_e y_e).

    Parameters
    ----------
    instance : MVUInstance
    y : ndarray of shape (E,)
        Multipliers of the edge constraints.
    goal : (float, float), optional
        The ``goal`` of :func:`dual_bound` whose proof's margin is asked for (a solver's: the margin of the
        proof of an iterate near its goal); ``None``: the proof without a goal, as ``verify`` runs it.

    Returns
    -------
    float
        2δ / max(|c|, 1e-300).
    """
    n, edges = instance.n, instance.edges
    y = _project(instance, np.asarray(y, dtype=np.float64))
    diagonal = np.bincount(edges[:, 0], weights=y, minlength=n) + np.bincount(edges[:, 1], weights=y, minlength=n)
    c = instance.trace_weight
    return 2.0 * _shift_of_proof(n, edges, y, c, diagonal, _extended_from(goal)) / max(abs(c), 1e-300)


def _shift_of_proof(n: int, edges: np.ndarray, y: np.ndarray, c: float, diagonal: np.ndarray,
                    extended_from: float | None = None) -> float:
    """The shift δ the proof of y subtracts first: :func:`_proof_shift` in double, the smaller of it and
    :func:`_aimed_shift` in extended precision (``extended_from`` as :func:`_proof_unit`)."""
    u = _proof_unit(n, edges, y, c, diagonal, extended_from)
    delta = _proof_shift(n, edges, y, c, diagonal, u)[0]
    if u < 0.5 * _EPS:
        aimed = _aimed_shift(n, edges, y, c, u)
        if aimed is not None:
            delta = min(delta, aimed)
    return delta


def _cholesky_completes(F: np.ndarray) -> bool:
    """Whether the Cholesky factorisation F = RᵀR runs to completion (every pivot positive) in the arithmetic
    of F's dtype (:func:`_cholesky_factor`)."""
    return _cholesky_factor(F) is not None


def _cholesky_factor(F: np.ndarray) -> np.ndarray | None:
    """The computed Cholesky factor of F (upper R, F ≈ RᵀR) in the arithmetic of F's dtype, or None when a
    pivot is not positive: LAPACK's for double, numpy's own right-looking blocked factorisation otherwise
    (long double, which LAPACK lacks). Each entry of R is (F_ij − Σ_k r_ki r_kj)/r_ii (r_ii = the square root
    of the same form) with the sum evaluated in some order, which is all Demmel's backward-error bound
    assumes (Higham [4], Lemma 8.4: any order of evaluation; Theorem 10.3)."""
    if F.dtype == np.float64:
        try:
            return np.linalg.cholesky(F).T
        except np.linalg.LinAlgError:
            return None
    A = np.triu(F)
    n, b = A.shape[0], _EXTENDED_BLOCK
    for k0 in range(0, n, b):
        k1 = min(k0 + b, n)
        for j in range(k0, k1):                        # the diagonal block, column by column
            if not A[j, j] > 0:
                return None
            A[j, j] = np.sqrt(A[j, j])
            A[j, j + 1:k1] /= A[j, j]
            row = A[j, j + 1:k1]
            A[j + 1:k1, j + 1:k1] -= np.triu(np.multiply.outer(row, row))
        if k1 == n:
            break
        for j in range(k0, k1):                        # the block row: R₁₁ᵀ R₁₂ = F₁₂ by forward substitution
            A[j, k1:] = (A[j, k1:] - A[k0:j, j] @ A[k0:j, k1:]) / A[j, j]
        panel = A[k0:k1, k1:]
        for m0 in range(k1, n, b):                     # the trailing upper triangle, a block row at a time
            m1 = min(m0 + b, n)
            A[m0:m1, m0:] -= panel[:, m0 - k1:m1 - k1].T @ panel[:, m0 - k1:]
    return np.triu(A)                                  # the trailing updates also wrote below the diagonal


def _perron_vector(A: np.ndarray, steps: int = 30) -> np.ndarray:
    """A positive approximate Perron vector of AᵀA for a nonnegative upper-triangular A with a positive
    diagonal (power steps in double), scaled to a least entry of 1."""
    A = A.astype(np.float64)
    x = np.ones(A.shape[0])
    for _ in range(steps):
        x = A.T @ (A @ x)
        x /= x.max()
    return x / x.min()


def _factor_norm_estimate(F: np.ndarray) -> float | None:
    """An estimate of ρ(|R|ᵀ|R|), R the Cholesky factor of F, from F's factor in double lifted by a small
    shift so that it completes (None if even that fails): what the shift of the extended-precision proof is
    aimed at (:func:`_factor_norm_bound` checks it afterwards)."""
    Fd = F.astype(np.float64)
    Fd[np.diag_indices(len(Fd))] += len(Fd) * _EPS * float(np.abs(np.diag(Fd)).sum())
    R = _cholesky_factor(Fd)
    if R is None:
        return None
    A = np.abs(R)
    x = _perron_vector(A)
    return float(np.max(A.T @ (A @ x) / x))


def _factor_norm_bound(R: np.ndarray, u: float) -> float:
    """A rigorous upper bound on ρ(|R|ᵀ|R|) ≥ ‖|R|ᵀ|R|‖₂ for a computed factor R: Collatz–Wielandt,
    ρ(B) ≤ max_j (Bx)_j/x_j for a nonnegative B and any x > 0, with Bx = |R|ᵀ(|R|x) evaluated in R's
    arithmetic (unit roundoff u). Sums of n nonnegative terms are computed to within a relative γ_n
    (γ_n = nu/(1 − nu)) and an absolute nη for underflow (η ≤ double's smallest subnormal), so with
    x ≥ 1, (Bx)_j ≤ (ẑ_j + nη(1 + Σ_i |r_ij|))/(1 − γ_n)² for the computed ẑ; the quotient and the
    conversion to double are rounded upwards by (1 + u)(1 + eps)."""
    n = R.shape[0]
    A = np.abs(R)
    x = _perron_vector(A).astype(R.dtype)
    z = A.T @ (A @ x)
    gamma = n * u / (1.0 - n * u)
    ratio = float(np.max(z / x)) * (1.0 + u) * (1.0 + _EPS)
    column = float(np.max(A.sum(axis=0))) * 2.0
    return (ratio + n * _TINY * (1.0 + column)) / (1.0 - gamma) ** 2 * (1.0 + 4.0 * _EPS)


def _proves_feasible(n: int, edges: np.ndarray, y: np.ndarray, c: float, extended_from: float | None = None
                     ) -> tuple[bool, float]:
    """Prove L(y) + t·11ᵀ − cI ⪰ 0 for t = fl(s/n), s = c + max(1, |c|), by a Cholesky
    factorisation of the matrix shifted down by δ.

    1 is an eigenvector of that matrix (L(y)1 = 0) with eigenvalue s − c > 0, so it is PSD iff
    λ_min(L(y)|₁⊥) ≥ c: this is the dual feasibility of (y, t). The matrix is formed and factorised
    in an arithmetic of unit roundoff u (:func:`_proof_unit`: double, u = 2⁻⁵³, or long double when
    double's margin would cost more than ``extended_from`` of the bound — a stress lifted
    by a large multiple makes tr L(y) large). F = fl(L(y) + t·11ᵀ − (c + δ)I) differs from the exact
    matrix shifted by δ by at most e_form in the 2-norm (a bound on its absolute row sums of
    rounding errors: 2u((3 + deg_max)W + 2|s| + |c| + δ), W = max_i Σ_{e∋i} |y_e|, doubled). If
    Cholesky runs to completion on F, then F + ΔF = R̃ᵀR̃ with |ΔF| ≤ γ_{n+1}|R̃ᵀ||R̃| (Demmel 1989;
    the standard model of arithmetic fl(a ∘ b) = (a ∘ b)(1 + θ), |θ| ≤ u, for +, −, ×, / and √, and
    any order of summation, Higham [4]), so ‖ΔF‖₂ ≤ γ_{n+1}‖R̃‖_F² ≤ γ_{n+1}/(1 − γ_{n+1})·tr F
    and λ_min(F) ≥ −e_chol; both bounds get an absolute term for gradual underflow (double's
    smallest subnormal, larger than long double's), as in Rump (2006), so subnormal numbers do not
    void them. Hence δ ≥ e_chol + e_form and a successful factorisation prove the exact matrix PSD.
    In long double, δ is first aimed at 1.25·γ_{n+1}·ρ̂ (``_aimed_shift``, ρ̂ an estimate of
    ρ(|R̃ᵀ||R̃|)) and checked after the factorisation with e_chol = γ_{n+1}·ρ̄, ρ̄ ≥ ρ(|R̃ᵀ||R̃|) ≥
    ‖|R̃ᵀ||R̃|‖₂ ≥ ‖ΔF‖₂/γ_{n+1} proved by ``_factor_norm_bound``; when that check fails, the
    a-priori δ above is used. The factorisation is as cheap as a third of one LU and proves what a dense eigenvalue
    decomposition with a heuristic backward-error constant could only estimate.

    Returns
    -------
    proved : bool
    needed : float
        The margin δ the proof subtracts: λ_min(L(y)|₁⊥) must exceed c by about 2δ for the
        factorisation to succeed.
    """
    diagonal = np.bincount(edges[:, 0], weights=y, minlength=n) + np.bincount(edges[:, 1], weights=y, minlength=n)
    u = _proof_unit(n, edges, y, c, diagonal, extended_from)
    dtype = np.float64 if u == 0.5 * _EPS else np.longdouble
    L = _dense_laplacian(n, edges, y, dtype)
    s = c + max(1.0, abs(c))
    t = dtype(s) / dtype(n)
    delta, gamma, e_form = _proof_shift(n, edges, y, c, np.diag(L), u)
    if dtype != np.float64:
        aimed = _aimed_shift(n, edges, y, c, u)
        if aimed is not None and aimed < delta:
            F = L + t
            F[np.diag_indices(n)] -= dtype(c) + dtype(aimed)
            R = _cholesky_factor(F)
            if R is None:
                return False, aimed
            bound_trace = float(np.abs(np.diag(F).astype(np.float64)).sum()) * (1.0 + n * _EPS)
            required = (gamma * _factor_norm_bound(R, u) + e_form + 4.0 * u * aimed
                        + 8.0 * n * (2.0 * (n + 2) + bound_trace) * _TINY)
            if aimed >= required:
                return True, aimed
    F = L + t
    F[np.diag_indices(n)] -= dtype(c) + dtype(delta)
    bound_trace = float(np.abs(np.diag(F).astype(np.float64)).sum()) * (1.0 + n * _EPS)
    required = (gamma / (1.0 - gamma) * bound_trace + e_form + 4.0 * u * delta
                + 8.0 * n * (2.0 * (n + 2) + bound_trace) * _TINY)
    if not delta >= required:                          # cannot happen unless n²ε is not small
        return False, delta
    return _cholesky_completes(F), delta


def _aimed_shift(n: int, edges: np.ndarray, y: np.ndarray, c: float, u: float) -> float | None:
    """The shift the extended-precision proof tries first: 1.01(1.25·γ_{n+1}·ρ̂ + e_form) plus the underflow
    term, ρ̂ the estimate of ρ(|R|ᵀ|R|) for the factor R of L(y) + t·11ᵀ − cI (:func:`_factor_norm_estimate`,
    in double) — for a Laplacian dominated by a stress, ρ(|R|ᵀ|R|) is near ‖L(y)‖₂, tens of times below the
    trace that bounds it a priori. None when the estimate fails."""
    L = _dense_laplacian(n, edges, y)
    F = L + (c + max(1.0, abs(c))) / n
    F[np.diag_indices(n)] -= c
    rho = _factor_norm_estimate(F)
    if rho is None:
        return None
    _, gamma, e_form = _proof_shift(n, edges, y, c, np.diag(L), u)
    trace = float(np.abs(np.diag(F)).sum()) * (1.0 + n * _EPS)
    return 1.01 * (1.25 * gamma * rho + e_form) + 8.0 * n * (2.0 * (n + 2) + trace) * _TINY


def slack_is_bounded(instance) -> bool:
    """True when the slack SDP is bounded: ω·λ₂(L₁) ≥ 1 − ω (see the module docstring)."""
    return instance.omega * algebraic_connectivity(instance.n, instance.edges) >= 1.0 - instance.omega


def _project(instance, y: np.ndarray) -> np.ndarray:
    """Π_𝒴: clip multipliers to R₊ (inequality) or [−ω, ω] (slack)."""
    if instance.variant == "inequality":
        return np.maximum(y, 0.0)
    if instance.variant == "slack":
        return np.clip(y, -instance.omega, instance.omega)
    return y


def _dual_value(y: np.ndarray, D: np.ndarray) -> float:
    """yᵀD rounded upwards: by a bound on its floating-point error, or, when that bound exceeds 1e-9 of
    the value (multipliers carrying a large multiple of a stress, whose terms cancel in yᵀD), exactly in
    rational arithmetic and then rounded to the next double above."""
    value = float(y @ D)
    slack = 2.0 * y.size * _EPS * float(np.abs(y) @ D)
    if slack <= 1e-9 * abs(value):
        return value + slack
    from fractions import Fraction

    exact = sum(map(Fraction.__mul__, map(Fraction, y.tolist()), map(Fraction, D.tolist())), Fraction(0))
    value = float(exact)                               # correctly rounded
    return value if Fraction(value) >= exact else float(np.nextafter(value, np.inf))


def _instance_connectivity(instance) -> float:
    """:func:`algebraic_connectivity` of the instance's graph, computed once an instance (a dense eigenproblem of
    size n, asked by every proof that needs the strictly feasible point): the instance is frozen, its graph fixed."""
    lam2 = instance.__dict__.get("_algebraic_connectivity")
    if lam2 is None:
        lam2 = algebraic_connectivity(instance.n, instance.edges)
        object.__setattr__(instance, "_algebraic_connectivity", lam2)
    return lam2


def _strict_point(instance) -> tuple[np.ndarray, float]:
    """y₀ and an estimate of λ_min(L(y₀)|₁⊥) > c (module docstring): (2c/λ₂(L₁))·1 for
    equality/inequality, ω·1 for slack, 0 for min_trace."""
    E, c = instance.edges.shape[0], instance.trace_weight
    if instance.variant == "min_trace":
        return np.zeros(E), 0.0
    lam2 = _instance_connectivity(instance)
    if instance.variant == "slack":
        return np.full(E, instance.omega), instance.omega * lam2
    scale = 2.0 * c / lam2 if lam2 > 0 else 0.0
    return np.full(E, scale), scale * lam2


def _candidates(instance, y: np.ndarray, mu: float, target: float, strict) -> list[np.ndarray]:
    """Points of 𝒴 whose λ_min(L(·)|₁⊥) is estimated ≥ ``target`` (> c), from y with estimate
    μ: y itself, y scaled by target/μ (when that stays in 𝒴), and y mixed with the strictly
    feasible point y₀ = ``strict()`` with weight θ = (μ₀ − target)/(μ₀ − μ) — λ_min(L(·)|₁⊥) is
    positively homogeneous and concave, so the estimates carry over."""
    if mu >= target:
        return [y]
    out = []
    scale = target / mu if mu != 0.0 else np.inf
    if target > 0.0 and mu > 0.0 and (instance.variant != "slack"
                                      or scale * np.abs(y).max(initial=0.0) <= instance.omega):
        out.append(y * scale)
    elif mu < target < 0.0:
        out.append(y * scale)
    y0, mu0 = strict()
    if mu0 > target:
        theta = (mu0 - target) / (mu0 - mu)
        out.append(theta * y + (1.0 - theta) * y0)
    return out


def _least_candidate_value(instance, y: np.ndarray, mu: float, strict) -> float:
    """The least dual value yᵀD of the points :func:`_candidates` builds from y, with estimate μ, aimed at c (∞ when
    there are none)."""
    return min((float(_project(instance, cand) @ instance.sqdist)
                for cand in _candidates(instance, y, mu, instance.trace_weight, strict)), default=np.inf)


def _extended_from(goal: tuple[float, float] | None) -> float:
    """The double proof's margin above which a proof for ``goal`` (:func:`dual_bound`) runs in extended precision:
    :data:`EXTENDED_PROOF_SHARE` of the solver's gap tolerance (the goal's tolerance over :data:`EXTENDED_GOAL`),
    or :data:`EXTENDED_PROOF_FROM` without a goal."""
    return EXTENDED_PROOF_FROM if goal is None else EXTENDED_PROOF_SHARE * goal[1] / EXTENDED_GOAL


def dual_bound(instance, y: np.ndarray, *, goal: tuple[float, float] | None = None) -> tuple[float, np.ndarray]:
    """A certified upper bound on the optimum of an MVU instance from any multipliers y.

    See the module docstring: y is clipped into 𝒴, then scaled or mixed with a strictly
    feasible point so that λ_min(L(y)|₁⊥) is estimated (dense ``eigvalsh``) a little above c;
    the point is then *proved* dual feasible by a Cholesky factorisation of
    L(y) + t·11ᵀ − cI shifted down by a rigorous rounding-error bound
    (``_proves_feasible``), and its dual objective yᵀD, rounded upwards, bounds every
    feasible objective value from above. When the factorisation fails the margin above c is
    raised and the construction repeated; a point that is never proved gives ``inf``. When the
    proof runs in extended precision (``_proof_unit``) the first point tried is aimed at c + 2δ
    from the estimate lowered only by a few ε‖L(y)‖, as the worst-case lowering 16nε‖L(y)‖ would
    cost more than that proof's margin.

    Parameters
    ----------
    instance : MVUInstance
    y : ndarray of shape (E,)
        Multipliers of the edge constraints (sign: the optimum has L(y) ⪰ cI on 1⊥).
    goal : (float, float), optional
        (objective, tolerance) of a solver's iterate, the tolerance :data:`EXTENDED_GOAL` times the solver's gap
        tolerance: the bounds worth an extended-precision proof are those within tolerance·|objective| of the
        objective. When the least dual value of the points the proof would try in exact arithmetic (y, or y scaled
        or mixed with the strictly feasible point up to λ_min(L(·)|₁⊥) = c by the estimate lowered only by a few
        ε‖L(y)‖) lies outside, no proof of y certifies that gap in practice, and y is proved in double: a looser
        bound or none, never a wrong one. Inside, the proof runs in extended precision when the double proof's
        margin would take more than :data:`EXTENDED_PROOF_SHARE` of the solver's gap tolerance. ``None``
        (default): the precision of ``_proof_unit`` (double margin above :data:`EXTENDED_PROOF_FROM`), which
        ``verify`` uses — the same as a solver's at the default gap tolerance 1e-6.

    Returns
    -------
    bound : float
        ``inf`` when no dual-feasible point could be proved (an unbounded slack instance) or
        n exceeds :data:`DUAL_DENSE_LIMIT`.
    y_feasible : ndarray of shape (E,)
        The proved dual-feasible multipliers (y itself when the bound is ``inf``); t = (c +
        max(1, |c|))/n completes them to a dual point (:func:`centering_multiplier`).

    Raises
    ------
    ValueError
        If y is not a finite real vector of E entries.
    """
    n, edges, D = instance.n, instance.edges, instance.sqdist
    y = np.asarray(y)
    if y.dtype.kind not in "iuf" or y.shape != (edges.shape[0],) or not np.all(np.isfinite(y)):
        raise ValueError(f"y must be a finite real vector of {edges.shape[0]} multipliers (one per edge), got "
                         f"dtype {y.dtype} and shape {y.shape}")
    y = y.astype(np.float64)
    if n > DUAL_DENSE_LIMIT:
        return float("inf"), y
    c = instance.trace_weight
    y = _project(instance, y)
    estimate, lowering, typical = _eig_estimate(n, edges, y, c)
    mu = estimate - lowering
    first = []
    diagonal = np.bincount(edges[:, 0], weights=y, minlength=n) + np.bincount(edges[:, 1], weights=y, minlength=n)
    cache: list[tuple[np.ndarray, float]] = []

    def strict() -> tuple[np.ndarray, float]:
        if not cache:
            cache.append(_strict_point(instance))
        return cache[0]

    # the least value a proof of y could reach, at no margin: an iterate far from its goal (a lifted stress whose
    # coupling leaves L(y) indefinite, mixed with y₀; a matrix above the bound at a lock-up) is not worth a proof in
    # extended precision
    near = goal is None or (bool(_EXT_UNIT) and n <= EXTENDED_PROOF_MAX_N and abs(
        _least_candidate_value(instance, y, estimate - typical, strict) - goal[0])
        <= goal[1] * max(abs(goal[0]), 1e-300))
    extended_from = _extended_from(goal) if near else np.inf
    unit = _proof_unit(n, edges, y, c, diagonal, extended_from)
    if unit < 0.5 * _EPS and c != 0.0 and mu < c:
        # a proof in extended precision (a lifted stress: tr L(y) large, its δ small) would be wasted on the
        # worst-case lowering 16nε‖L(y)‖ of the estimate: first aim at c + 2δ from the typical one
        target = c + 2.0 * _shift_of_proof(n, edges, y, c, diagonal, extended_from)
        steer = estimate - typical
        # y itself first when the estimate allows it (multipliers this function proved prove the same bound)
        first = [y] if estimate >= c else []
        # c > 0: y scaled up; c = −1 (min_trace): y mixed with the strictly feasible 0, weight target/steer < 1
        if 0.0 < steer < target or steer < target < 0.0:
            first.append(_project(instance, y * (target / steer)))
    margin = 0.0
    for _ in range(4):
        points = first + [_project(instance, cand) for cand in _candidates(instance, y, mu, c + margin, strict)]
        first = []
        needed = 0.0
        for value, _, cand in sorted(((_dual_value(cand, D), i, cand) for i, cand in enumerate(points)),
                                     key=lambda item: item[:2]):
            proved, delta = _proves_feasible(n, edges, cand, c, extended_from)
            if proved:
                return value, cand
            needed = max(needed, delta)
        # aim λ_min(L(y)|₁⊥) at c + 2δ: F's least eigenvalue is then about δ, far above the backward
        # error a factorisation actually makes
        margin = max(2.0 * needed, 100.0 * margin, 1e-12 * max(1.0, abs(c)))
    return float("inf"), y


def centering_multiplier(instance) -> float:
    """The multiplier t of the centering constraint 1ᵀK1 = 0 that :func:`dual_bound` proves with:
    (c + max(1, |c|))/n. The centering's right-hand side is 0, so t never enters the dual
    objective; any t ≥ c/n completes a y with λ_min(L(y)|₁⊥) ≥ c to a dual-feasible point."""
    c = instance.trace_weight
    return (c + max(1.0, abs(c))) / instance.n


def verified_dual_bound(instance, arrays: dict[str, np.ndarray]) -> float:
    """The upper bound on the optimum proved from the multipliers of a solution file, with numpy alone.

    ``dual_y`` (E,) holds one multiplier per edge, in the order of the instance's ``edges``;
    ``dual_t`` (0-d), the centering multiplier, is optional and only checked to be a finite
    number: t is absent from the dual objective (the centering's right-hand side is 0) and
    :func:`dual_bound` completes y with its own t. Nothing else of the file is used: y is
    clipped to 𝒴, scaled or mixed to dual feasibility and proved feasible by a Cholesky
    factorisation (:func:`dual_bound`), so wrong multipliers give a weak bound, never a wrong one.

    Raises
    ------
    ValueError
        ``dual_y`` missing, not a finite real vector of E entries; ``dual_t`` not a finite real
        0-d number; or n above :data:`DUAL_DENSE_LIMIT` (the proof is dense).
    """
    if "dual_y" not in arrays:
        raise ValueError("an mvu proof needs 'dual_y', one multiplier per edge")
    y = as_vector(arrays["dual_y"], "'dual_y' (one multiplier per edge)", length=instance.n_constraints,
                  allow_bool=False)
    if "dual_t" in arrays:
        t = np.asarray(arrays["dual_t"])
        if t.dtype.kind not in "iuf" or t.shape != () or not np.isfinite(t):
            raise ValueError(f"'dual_t' (the centering multiplier) must be a finite real 0-d number, got dtype "
                             f"{t.dtype} and shape {t.shape}")
    if instance.n > DUAL_DENSE_LIMIT:
        raise ValueError(f"the mvu proof is dense in n: n = {instance.n} exceeds {DUAL_DENSE_LIMIT}")
    return dual_bound(instance, y)[0]
