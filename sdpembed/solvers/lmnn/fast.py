"""The default LMNN solver: a primal–dual interior-point method on an exact working set.

Solves the SDP of thesis Sec. 2.1.3 (the slack form of (2.11)),

    minimise    (1 − μ) tr(MP) + μ Σ_t ξ_t
    subject to  ξ_t ≥ 1 + tr(M A_t),  ξ_t ≥ 0,  M ⪰ 0,        A_t = C_ij − C_il  (Sec. 2.1.7)

whose dual is max Σ_t α_t s.t. 0 ≤ α_t ≤ μ, C(α) = (1 − μ)P + Σ_t α_t A_t ⪰ 0 (the dual of
:func:`sdpembed.problems.lmnn.lmnn_dual_bound`), and — with block-diagonal M — the
multi-metric SDP (2.17), where every pair (a, b) carries the metric of the class of b.

**Why an interior-point method.** (2.11) is piecewise linear in M: away from the PSD boundary
it *is* a linear programme in the d(d+1)/2 entries of M. First-order methods — the
subgradient projection of Algorithm 3 (:mod:`sdpembed.solvers.lmnn.gradient`), or an ADMM on
the slack form — find the primal value quickly but converge slowly to an accurate *dual*
point: an ADMM needs thousands of iterations for a certified relative gap of 1e-4 even at
d = 4, and the certificate oscillates. A primal–dual path-following method
needs 20–40 Newton steps for a relative gap of 1e-8 independent of the data, and its dual
iterate is the certificate: α stays strictly inside the box [0, μ] and X = C(α) ≻ 0 up to
the dual residual, which :func:`lmnn_dual_bound` removes by scaling. The Newton system is
small because ξ is eliminated triplet by triplet: only a p × p matrix,
p = d(d+1)/2 per metric, is factored,

    H = 𝒜* D 𝒜 + M⁻¹ ⊛ X,      D_t = 1 / (ξ_t/β_t + s_t/α_t),

(𝒜(M)_t = tr(M A_t); ⊛ the symmetric Kronecker product of the HKM direction). H is formed
from the *pairs* when they are few, 𝒜*D𝒜 = Σ_a ω_a c_a c_aᵀ + Σ_b ω_b c_b c_bᵀ
− Σ_t D_t (c_a c_bᵀ + c_b c_aᵀ) with c = svec(uuᵀ) ((3·n_target_pairs + n_impostor_pairs)·p²
flops), or from the triplets, Σ_t D_t (c_a − c_b)(c_a − c_b)ᵀ (T·p²), whichever is cheaper;
BLAS-3, no Python loop over triplets. Large systems (T > 4p, one metric) are solved by PCG
with the exact operator, preconditioned by H with float32 rank-k updates in the early steps
and, once residuals and gap are below 10⁻³, by the part of H from the 2p triplets of largest
D_t (:func:`_newton_solver`), a few PCG iterations per solve. The float32 features
c_a − c_b of every triplet are formed once per working set for those early preconditioners;
the operator 𝒜 of a single metric uses only the target pairs of the working set (about half of
the n·k after a first-order start) and no per-block masks.

**The working set, and why the result is exact.** Only triplets whose hinge can be positive
enter the SDP. By default (``first_order=True``) the working set is chosen at an approximate
minimiser found by L-BFGS on a smoothed (2.11) in L, M = LᵀL (:mod:`sdpembed.solvers.lmnn.warm`,
a loss within a fraction of a percent of the optimum): the triplets with hinge argument in
(−0.05, 0.05] form the working set, and those above 0.05 are *fixed*: their hinge is counted as
linear, μ h_t(M) (α_t = μ), which folds them into the linear term C0 of the IPM. Then: solve;
evaluate *every* hinge at the solution (:func:`sdpembed.graphs.radius_hinges`: the exact decisions
of :func:`sdpembed.graphs.iter_hinges`, candidates by a float32 radius filter with a rounding
margin); add the omitted ones that are positive, and move back to the working set any fixed
triplet whose hinge has turned negative; repeat until neither happens. On the benchmark
splits the first solve is usually the last (BENCHMARKS.md, "LMNN against metric-learn and pylmnn"). The band ±0.05 is a
compromise: a wider one makes the working set, and the cost of every early Newton matrix, grow
for the same round count; a narrower one can need a second round.

Exactness: the restricted objective (1 − μ)tr(MP) + μ Σ_fixed h_t + μ Σ_working [h_t]₊ is
below the full loss (2.11) everywhere (h ≤ [h]₊, omitted terms ≥ 0), so its minimum is a
lower bound on the full optimum; at its minimiser, if every fixed hinge is ≥ 0 and every
omitted hinge ≤ 0, it *equals* the full loss there, so that minimiser is a full optimum (the
argument of :func:`sdpembed.formulations.lmnn.solve_lmnn_working_set`, with the fixed set
added). The certificate does not rely on this argument: α is μ on fixed and 0 on omitted
triplets, both in the box [0, μ], so (α, X) stays dual feasible for the full problem and
:func:`lmnn_dual_bound` certifies the gap from it. So the loop also stops at a round solved to
``tol`` whose certified gap is already ≤ ``gap_tol``, settled or not (:func:`_working_set_rounds`).

Without the first-order start (``first_order=False``, or ``initial_triplets`` given) the loop
starts from the triplets active at M = I plus every target pair's nearest impostor. The
minimiser of such a small first working set violates far more triplets than the optimum does
(about a hundred times as many), so additions are
capped at 2·max(|working set|, n) per round, every point's most violated triplet first
(:func:`_spread_over_anchors`); rounds whose solution still violates more than 5 % as many
omitted triplets as the working set holds are solved *loosely* (relative tolerance 10⁻³);
once a round is nearly settled, working triplets with hinge below ``prune`` and a zero
multiplier (α < 10⁻³μ) are dropped, and later solves are *warm-started* from the previous
one (:func:`warm_start`). That path is much slower than the first-order start
(BENCHMARKS.md, "LMNN against metric-learn and pylmnn").

Interior-point details: Mehrotra predictor–corrector, infeasible start, separate primal and
dual step lengths (fraction 0.98 of the distance to the boundary; SDPT3's adaptive fraction
0.9 + 0.09·min(1, α_p, α_d) does not help here — the steps are limited by the box
α ∈ [0, μ] and the slacks, not by the cone — and costs more steps),
stop when the relative primal and dual residuals and the relative duality gap are below
``tol``, the gap relative to the loss (2.11) including the fixed triplets' constant μ|F|
(:func:`hinge_ipm`). The first solve starts from the first-order point with the dual slack
[C(α̂)]₊ + νM₀⁻¹ (:func:`first_order_ipm_start`): the smoothed multipliers α̂ are far from dual
feasible, and lifting C(α̂) by a multiple of I put the PSD block far off the central path.

References
----------
.. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
   Pennsylvania, 2007. Implemented here: the slack SDP of Sec. 2.1.3 (the loss (2.11)) and its
   dual, the triplets' matrices of Sec. 2.1.7, the multi-metric SDP (2.17).
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg
import scipy.sparse

from ..._validate import check_positive_int
from ...graphs import impostor_triplets, nearest_impostors, radius_hinges
from ...problems.lmnn import (
    check_triplets,
    lmnn_dual_bound,
    multi_metric_dual_bound,
    multi_metric_hinges,
    project_psd,
    triplet_keys,
    triplet_outer_sum,
)
from ...results import SolveResult, build_result, relative_gap
from .warm import warm_start_metric

__all__ = [
    "PairSystem", "IPMOutcome", "hinge_ipm", "solve_lmnn_fast", "solve_multi_metric_fast", "seed_triplets",
    "target_rank",
]

#: Pairs whose svec features are formed at once when assembling the Newton matrix.
_CHUNK = 4096

#: Triplets per svec coordinate beyond which Newton systems are solved by PCG (see :func:`_newton_solver`).
_PCG_RATIO = 4

#: PCG is used only once the interior-point residuals and gap are all below this (late steps, where the
#: Newton matrix is dominated by the few triplets at their margin).
_PCG_SWITCH = 1e-3

#: Relative residual and iteration limit of those PCG solves.
_PCG_TOL = 1e-9
_PCG_MAXITER = 60

#: Largest size in bytes of the cached svec features of the impostor pairs (formed per chunk beyond).
_FEATURE_CACHE = 1 << 28


def target_rank(targets: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """Position m of j in ``targets[i]`` for every (i, j) (vectorised; j must be a target of i)."""
    return np.argmax(targets[i] == j[:, None], axis=1)


def seed_triplets(X: np.ndarray, y: np.ndarray, targets: np.ndarray, M: np.ndarray | None = None) -> np.ndarray:
    """The initial working set: triplets active at M (the identity by default) and, for every
    target pair, its nearest impostor (so that every point starts with one push constraint)."""
    n, k = targets.shape
    nearest = nearest_impostors(X, y, M)
    seed = np.column_stack([np.repeat(np.arange(n), k), targets.ravel(), np.repeat(nearest, k)])
    working = np.concatenate([impostor_triplets(X, y, targets, M), seed])
    return working[np.unique(triplet_keys(working, n), return_index=True)[1]]


@dataclass
class PairSystem:
    """The operator 𝒜 of a set of triplets, through their pairs, for block-diagonal metrics.

    Triplet t has a *target pair* a_t (difference u = x_i − x_j, metric block ``u_block[a]``)
    and an *impostor pair* b_t (difference w = x_i − x_l, block ``w_block[b]``); its hinge
    argument is 1 + u_aᵀ M_{u_block} u_a − w_bᵀ M_{w_block} w_b. A single metric (2.11) has
    one block; the multi-metric SDP (2.17) has one block per class (block of a pair = class
    of its second point). Metrics are stacked as an array of shape (n_blocks, d, d).
    """

    U: np.ndarray
    u_block: np.ndarray
    W: np.ndarray
    w_block: np.ndarray
    a: np.ndarray
    b: np.ndarray
    n_blocks: int
    iu: tuple[np.ndarray, np.ndarray] = field(init=False, repr=False)
    scale: np.ndarray = field(init=False, repr=False)
    _cache_u: np.ndarray | None = field(init=False, repr=False, default=None)
    _cache_w: np.ndarray | None = field(init=False, repr=False, default=None)
    _cache_t32: np.ndarray | None = field(init=False, repr=False, default=None)
    #: optional, single block only: the points of the pairs and each pair's two ends (rows of ``points``), target
    #: pairs first, then impostor pairs (u_a = points[ends[0, a]] − points[ends[1, a]], likewise w_b after them);
    #: then :meth:`adjoint` contracts through the points (a signed graph Laplacian) instead of the pairs
    points: np.ndarray | None = None
    ends: np.ndarray | None = None
    _laplacian: tuple | None = field(init=False, repr=False, default=None)

    def __post_init__(self) -> None:
        d = self.U.shape[1]
        self.iu = np.triu_indices(d)
        self.scale = np.where(self.iu[0] == self.iu[1], 1.0, np.sqrt(2.0))

    # ----------------------------------------------------------------- svec coordinates
    @property
    def dim(self) -> int:
        return self.U.shape[1]

    @property
    def svec_dim(self) -> int:
        """p = d(d+1)/2, the coordinates of one symmetric block."""
        return self.iu[0].size

    @property
    def n_triplets(self) -> int:
        return self.a.size

    def svec(self, S: np.ndarray) -> np.ndarray:
        """Stacked blocks (c, d, d) → (c·p,), orthonormal coordinates (√2 off the diagonal)."""
        return (S[:, self.iu[0], self.iu[1]] * self.scale).ravel()

    def smat(self, v: np.ndarray) -> np.ndarray:
        """Inverse of :meth:`svec`."""
        c, d = self.n_blocks, self.dim
        S = np.zeros((c, d, d))
        S[:, self.iu[0], self.iu[1]] = v.reshape(c, -1) / self.scale
        return S + np.triu(S, 1).transpose(0, 2, 1)

    def features(self, V: np.ndarray) -> np.ndarray:
        """svec(v vᵀ) of the rows v of V, one row of the upper triangle at a time (a loop over the d
        coordinates; cheaper than two (n, p) fancy-index gathers)."""
        n, d = V.shape
        out = np.empty((n, self.svec_dim), dtype=V.dtype)
        root2 = V * np.sqrt(2.0)
        pos = 0
        for i in range(d):
            np.multiply(root2[:, i + 1:], V[:, i:i + 1], out=out[:, pos + 1:pos + d - i])
            np.square(V[:, i], out=out[:, pos])
            pos += d - i
        return out

    def features_t(self, V: np.ndarray) -> np.ndarray:
        """:meth:`features` transposed, shape (p, n): svec(v vᵀ) as columns, written one contiguous row of
        the output per product (cheaper than the column slices of the (n, p) layout); the same products
        in the same order, so the same values."""
        n, d = V.shape
        Vt = np.ascontiguousarray(V.T)
        out = np.empty((self.svec_dim, n), dtype=V.dtype)
        root2 = Vt * np.sqrt(2.0)
        pos = 0
        for i in range(d):
            np.square(Vt[i], out=out[pos])
            np.multiply(root2[i + 1:], Vt[i], out=out[pos + 1:pos + d - i])
            pos += d - i
        return out

    def _triplet_features_t(self, rows) -> np.ndarray:
        """svec(u_a u_aᵀ − w_b w_bᵀ) of the triplets ``rows`` (a slice or indices), transposed: (p, |rows|)."""
        return self.features_t(self.U[self.a[rows]]) - self.features_t(self.W[self.b[rows]])

    def _features_u(self) -> np.ndarray:
        if self._cache_u is None:
            self._cache_u = self.features(self.U)
        return self._cache_u

    def _features_triplets32(self) -> np.ndarray:
        """svec(u_a u_aᵀ − w_b w_bᵀ) of every triplet in float32 (single block), transposed (p, T), cached:
        formed in float64 chunk by chunk from the pair differences (:meth:`features_t`) and rounded once."""
        if self._cache_t32 is None:
            F32 = np.empty((self.svec_dim, self.n_triplets), dtype=np.float32)
            for start in range(0, self.n_triplets, _CHUNK):
                t = slice(start, start + _CHUNK)
                F32[:, t] = self._triplet_features_t(t)
            self._cache_t32 = F32
        return self._cache_t32

    def _features_w_rows(self, rows: np.ndarray) -> np.ndarray:
        """svec features of the impostor pairs ``rows``, cached when they fit in ``_FEATURE_CACHE`` bytes."""
        if self._cache_w is None and 8 * self.W.shape[0] * self.svec_dim <= _FEATURE_CACHE:
            self._cache_w = self.features(self.W)
        return self._cache_w[rows] if self._cache_w is not None else self.features(self.W[rows])

    # ----------------------------------------------------------------- operator
    def pair_distances(self, M: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """uᵀ M_block u for every target pair and wᵀ M_block w for every impostor pair (2.10)."""
        if self.n_blocks == 1:      # no block masks (they would copy U and W on every call)
            return (np.einsum("ij,ij->i", self.U @ M[0], self.U), np.einsum("ij,ij->i", self.W @ M[0], self.W))
        du = np.empty(self.U.shape[0])
        dw = np.empty(self.W.shape[0])
        for blk in range(self.n_blocks):  # a loop over metric blocks (one per class at most)
            su, sw = self.u_block == blk, self.w_block == blk
            du[su] = np.einsum("ij,ij->i", self.U[su] @ M[blk], self.U[su])
            dw[sw] = np.einsum("ij,ij->i", self.W[sw] @ M[blk], self.W[sw])
        return du, dw

    def apply(self, M: np.ndarray) -> np.ndarray:
        """𝒜(M)_t = D_M(x_i, x_j) − D_M(x_i, x_l): the hinge argument minus the margin."""
        du, dw = self.pair_distances(M)
        return du[self.a] - dw[self.b]

    def adjoint(self, w: np.ndarray) -> np.ndarray:
        """𝒜*(w) = Σ_t w_t (C_ij − C_il) per block, through per-pair weights (cf. (2.14))."""
        wu = np.bincount(self.a, w, self.U.shape[0])
        ww = np.bincount(self.b, w, self.W.shape[0])
        if self.n_blocks == 1 and self.points is not None:
            return self._adjoint_points(np.concatenate([wu, -ww]))[None]
        if self.n_blocks == 1:
            out = ((self.U * wu[:, None]).T @ self.U - (self.W * ww[:, None]).T @ self.W)[None]
            return 0.5 * (out + out.transpose(0, 2, 1))
        out = np.zeros((self.n_blocks, self.dim, self.dim))
        for blk in range(self.n_blocks):
            su, sw = self.u_block == blk, self.w_block == blk
            U, W = self.U[su], self.W[sw]
            out[blk] = (U * wu[su, None]).T @ U - (W * ww[sw, None]).T @ W
        return 0.5 * (out + out.transpose(0, 2, 1))

    def _adjoint_points(self, s: np.ndarray) -> np.ndarray:
        """Σ_e s_e (x_e − x'_e)(x_e − x'_e)ᵀ over the pairs e (ends ``ends``), as −(C + Cᵀ) with
        C = Pᵀ(S − diag(S1 + Sᵀ1)/2)P, S the sparse matrix of the weights s on the pairs' ends and P the points:
        one m × d × d product over the m points instead of one per pair (a working set touches several
        times fewer points than it has pairs; equal to rounding)."""
        P = self.points
        m = P.shape[0]
        if self._laplacian is None:
            rows, cols = self.ends
            perm = np.argsort(rows, kind="stable")
            self._laplacian = (perm, cols[perm], np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=m))]))
        perm, cols, indptr = self._laplacian
        S = scipy.sparse.csr_matrix((s[perm], cols, indptr), shape=(m, m))
        degree = np.bincount(self.ends[0], s, m) + np.bincount(self.ends[1], s, m)
        Y = S @ P
        Y -= (0.5 * degree)[:, None] * P
        C = P.T @ Y
        return -(C + C.T)

    def gram(self, D: np.ndarray) -> np.ndarray:
        """The matrix of 𝒜* diag(D) 𝒜 in svec coordinates, shape (c·p, c·p), from the pairs.

        Σ_a ω_a c_a c_aᵀ and Σ_b ω_b c_b c_bᵀ are rank-k updates (BLAS syrk on √ω-scaled
        features; ω > 0); the cross term Σ_t D_t c_b c_aᵀ = F_Wᵀ S F_U (S[b, a] = D_t, sparse)
        is contracted as (Sᵀ F_W)ᵀ F_U, which costs n_U·p² instead of n_W·p² flops — the
        impostor pairs far outnumber the n·k target pairs. D must be positive.
        """
        p, c = self.svec_dim, self.n_blocks
        H = np.zeros((c * p, c * p))
        wu = np.bincount(self.a, D, self.U.shape[0])
        ww = np.bincount(self.b, D, self.W.shape[0])
        if c == 1 and self.n_triplets < 3 * np.count_nonzero(wu) + self.W.shape[0]:
            return self._gram_triplets(D)
        FU = self._features_u()
        u_rows = [np.flatnonzero(self.u_block == blk) for blk in range(c)]
        for blk in range(c):
            sl = slice(blk * p, (blk + 1) * p)
            _syrk_add(H[sl, sl], FU[u_rows[blk]] * np.sqrt(wu[u_rows[blk], None]))
        S = scipy.sparse.csr_matrix((D, (self.b, self.a)), shape=(self.W.shape[0], self.U.shape[0]))
        for bw in range(c):
            w_rows = np.flatnonzero(self.w_block == bw)
            if w_rows.size == 0:
                continue
            slw = slice(bw * p, (bw + 1) * p)
            Z = np.zeros((self.U.shape[0], p))                         # Σ_b S[b, a] c_b, per target pair a
            for start in range(0, w_rows.size, _CHUNK):
                rows = w_rows[start:start + _CHUNK]
                Fw = self._features_w_rows(rows)
                _syrk_add(H[slw, slw], Fw * np.sqrt(ww[rows, None]))
                Z += S[rows].T @ Fw
            for bu in range(c):
                cols = u_rows[bu]
                if cols.size == 0:
                    continue
                cross = Z[cols].T @ FU[cols]                            # Σ D_t c_b c_aᵀ
                slu = slice(bu * p, (bu + 1) * p)
                H[slw, slu] -= cross
                H[slu, slw] -= cross.T
        return 0.5 * (H + H.T)

    def _gram_triplets(self, D: np.ndarray) -> np.ndarray:
        """:meth:`gram` of a single block as Σ_t D_t (c_a − c_b)(c_a − c_b)ᵀ: one syrk over the T
        triplets, T·p² flops against (3·n_U + n_W)·p² through the pairs (target-pair rank-k
        update, impostor-pair update and the cross product) — fewer when most working triplets
        have their own pairs, as after a first-order warm start."""
        return self.gram_subset(D, np.arange(self.n_triplets))

    def gram_subset(self, D: np.ndarray, rows: np.ndarray, dtype: type = np.float64) -> np.ndarray:
        """Σ_{t ∈ rows} D_t (c_a − c_b)(c_a − c_b)ᵀ of a single block (the preconditioners of
        :func:`_newton_solver`), each chunk's rank-k update in ``dtype`` (float32: half the time,
        entries to ~1e-7 relative), summed in float64. Every chunk's F Fᵀ is exactly symmetric (numpy hands
        F @ F.T to BLAS syrk and mirrors the triangle), so their sum is too: no symmetrising pass."""
        p = self.svec_dim
        H = np.zeros((p, p))
        if dtype == np.float32 and 4 * self.n_triplets * p <= _FEATURE_CACHE:
            # the float32 features c_a − c_b of every triplet, formed once per working set (the early PCG
            # preconditioners are formed from all triplets at every Newton step; gathering and converting the
            # float64 pair features each time cost as much as the rank-k update itself)
            F32 = self._features_triplets32()
            root = np.sqrt(D).astype(np.float32)
            whole = rows.size == self.n_triplets and np.array_equal(rows, np.arange(rows.size))
            for start in range(0, rows.size, _CHUNK):
                t = slice(start, start + _CHUNK) if whole else rows[start:start + _CHUNK]
                F = F32[:, t] * root[t]
                if F.shape[1]:
                    H += F @ F.T
            return H
        # features of the rows' pairs formed here, transposed (:meth:`features_t`; cheaper than gathering rows
        # of cached (n_pairs, p) features, and no cache of every impostor pair's features for a few rows)
        for start in range(0, rows.size, _CHUNK):
            t = rows[start:start + _CHUNK]
            F = self._triplet_features_t(t)
            F *= np.sqrt(D[t])
            if F.shape[1]:
                F = F.astype(dtype, copy=False)
                H += F @ F.T
        return H

    def skron(self, G: np.ndarray, K: np.ndarray) -> np.ndarray:
        """G ⊛ K (symmetric Kronecker product) of stacked blocks, block-diagonal (c·p, c·p):
        the matrix of H ↦ svec((G H K + K H G)/2) in orthonormal svec coordinates.

        With E_r = (e_i e_jᵀ + e_j e_iᵀ)/n_r, r = (i, j), and s = (k, l), tr(E_r A E_s B) =
        (A_jk B_li + A_jl B_ki + A_ik B_lj + A_il B_kj)/(n_r n_s); for symmetric G, K the two orders
        (G, K) and (K, G) give the same matrix, and the first and last terms are transposes of
        each other: G ⊛ K = (T + Tᵀ + G_JJ∘K_II + G_II∘K_JJ) / (n nᵀ), T = G_JI ∘ (K_JI)ᵀ — six
        gathers by precomputed flat indices (:func:`_skron_indices`) instead of eight 2-D ones.
        """
        p, c = self.svec_dim, self.n_blocks
        f_ji, f_jj, f_ii, scale = _skron_indices(self.dim)
        out = np.zeros((c * p, c * p)) if c > 1 else None
        for blk in range(c):
            g, k = _sym(G[blk:blk + 1])[0].ravel(), _sym(K[blk:blk + 1])[0].ravel()
            T = np.take(g, f_ji) * np.take(k, f_ji).T
            S = np.take(g, f_jj) * np.take(k, f_ii)
            S += np.take(g, f_ii) * np.take(k, f_jj)
            S += T
            S += T.T
            S *= scale
            if c == 1:
                return S
            out[blk * p:(blk + 1) * p, blk * p:(blk + 1) * p] = S
        return out


@functools.lru_cache(maxsize=2)
def _skron_indices(d: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Flat indices into a d × d matrix of the (p, p) gathers A_JI, A_JJ, A_II of :meth:`PairSystem.skron`
    (rows r = (i_r, j_r) and columns s of the upper-triangle svec order) and the scale 1/(n_r n_s)."""
    i, j = np.triu_indices(d)
    norm = np.where(i == j, 2.0, np.sqrt(2.0))
    dtype = np.int32 if d * d < 2**31 else np.int64
    f_ji = (j[:, None] * d + i[None, :]).astype(dtype)
    f_jj = (j[:, None] * d + j[None, :]).astype(dtype)
    f_ii = (i[:, None] * d + i[None, :]).astype(dtype)
    return f_ji, f_jj, f_ii, 1.0 / np.outer(norm, norm)


def _syrk_add(H: np.ndarray, G: np.ndarray) -> None:
    """H += Gᵀ G in place (numpy hands Gᵀ @ G with a shared buffer to BLAS syrk)."""
    if G.shape[0]:
        H += G.T @ G


# ------------------------------------------------------------------------------ the IPM
@dataclass
class IPMOutcome:
    """The end point of :func:`hinge_ipm` on one working set."""

    M: np.ndarray            # (c, d, d) primal metric blocks (≻ 0)
    alpha: np.ndarray        # (T,) multipliers in (0, μ): the certificate
    xi: np.ndarray           # (T,) slacks ξ_t
    primal_value: float      # ⟨C0, M⟩ + μ Σ ξ
    dual_value: float        # Σ α
    converged: bool
    iterations: int
    history: dict[str, list] = field(default_factory=dict)
    stalled: bool = False    # stopped at the rounding floor before reaching tol


def _max_step_psd(S: np.ndarray, dS: np.ndarray) -> float:
    """Largest t with S + t dS ⪰ 0 for stacked S ≻ 0 (inf if dS keeps it PSD)."""
    L = np.linalg.cholesky(S)
    Linv = np.linalg.inv(L)
    lam = np.linalg.eigvalsh(Linv @ dS @ Linv.transpose(0, 2, 1)).min()
    return np.inf if lam >= 0.0 else -1.0 / lam


def _max_step_pos(v: np.ndarray, dv: np.ndarray) -> float:
    neg = dv < 0.0
    return float(np.min(-v[neg] / dv[neg])) if np.any(neg) else np.inf


def _sym(A: np.ndarray) -> np.ndarray:
    return 0.5 * (A + A.transpose(0, 2, 1))


def hinge_ipm(
    system: PairSystem,
    C0: np.ndarray,
    mu: float,
    *,
    tol: float = 1e-8,
    max_iter: int = 100,
    start: tuple | None = None,
    offset: float = 0.0,
    verbose: bool | int = False,
) -> IPMOutcome:
    """Primal–dual interior-point method (HKM direction, Mehrotra predictor–corrector) for

        min ⟨C0, M⟩ + μ Σ ξ   s.t.  ξ_t − 𝒜(M)_t − s_t = 1,  s, ξ ≥ 0,  M ⪰ 0 (block-diagonal),

    the slack SDP of Sec. 2.1.3 on the triplets of ``system`` (and of (2.17) with several
    blocks). Dual: max Σ α s.t. X = C0 + 𝒜*(α) ⪰ 0, α + β = μ, α, β ≥ 0.

    Newton step: with β = μ − α and D = 1/(ξ/β + s/α), eliminating (ξ, s, α, β) leaves
    [𝒜*D𝒜 + M⁻¹ ⊛ X] ΔM = r, a (c·p) × (c·p) symmetric positive definite system.

    Parameters
    ----------
    system : PairSystem
    C0 : ndarray of shape (c, d, d)
        (1 − μ) times the pull matrix of every block.
    mu : float
        μ ∈ (0, 1].
    tol : float
        Stop when the relative primal residual, dual residual and duality gap are all ≤ tol.
        The gap is relative to the objective including ``offset``,
        |p − d| / (1 + max(|p + offset|, |d + offset|)) — the measure of the certified gap
        (:func:`sdpembed.results.relative_gap`).
    max_iter : int
        Newton steps at most.
    offset : float
        A constant of the objective left out of ⟨C0, M⟩ + μ Σ ξ: μ·|F| when the hinges of a
        fixed set F are folded into C0 (μ h_t = μ + μ tr(M A_t), :func:`solve_lmnn_fast`).
        It changes no iterate, only when the gap counts as small: μ|F| can be most of the loss,
        and a gap relative to the restricted value alone would then ask for Newton steps that
        the certificate does not need.
    start : tuple (M, X, alpha, xi, s), optional
        A strictly interior starting point (M, X ≻ 0 of shape (c, d, d); 0 < α < μ, ξ, s > 0
        per triplet), e.g. :func:`warm_start` from the solution of a neighbouring working set;
        it need not be feasible (the method is an infeasible-start one). By default a cold
        start: M a multiple of I, ξ and s ≥ 1, α = μ/2, X a multiple of I above C0 + 𝒜*(α).
    verbose : bool or int
        Print one line per Newton step.

    Returns
    -------
    IPMOutcome
    """
    T = system.n_triplets
    c, d = system.n_blocks, system.dim
    ones = np.ones(T)
    if start is None:
        du, _ = system.pair_distances(np.broadcast_to(np.eye(d), (c, d, d)))
        # the typical target distance sets the scale of M; coincident points (du = 0) carry none,
        # and with every target at distance 0 any M is optimal: start from I
        median = float(np.median(du)) if du.size else 0.0
        if median <= 0.0:
            positive = du[du > 0.0]
            median = float(np.median(positive)) if positive.size else 1.0
        scale = 1.0 / median
        M = np.broadcast_to(scale * np.eye(d), (c, d, d)).copy()
        h = 1.0 + system.apply(M)
        xi = np.maximum(h, 0.0) + 1.0
        s = xi - h
        alpha = np.full(T, 0.5 * mu)
        beta = mu - alpha
        C_alpha = C0 + system.adjoint(alpha)
        X = np.broadcast_to(np.eye(d), (c, d, d)) * (1.0 + float(np.abs(np.linalg.eigvalsh(C_alpha)).max()))
    else:
        M, X, alpha, xi, s = (np.array(v, dtype=np.float64) for v in start)
        if M.shape != (c, d, d) or X.shape != (c, d, d) or any(v.shape != (T,) for v in (alpha, xi, s)):
            raise ValueError("start must be (M, X, alpha, xi, s) of shapes (c, d, d), (c, d, d), (T,), (T,), (T,)")
        beta = mu - alpha
        if not (np.all(alpha > 0) and np.all(beta > 0) and np.all(xi > 0) and np.all(s > 0)):
            raise ValueError("start must be strictly interior: 0 < alpha < mu, xi > 0, s > 0")
        np.linalg.cholesky(M)
        np.linalg.cholesky(X)
    norm_c0 = 1.0 + float(np.linalg.norm(C0))
    n_cone = c * d + 2 * T
    history: dict[str, list] = {key: [] for key in ("primal", "dual", "pres", "dres", "gap", "nu")}
    converged = stalled = False
    it = 0
    for it in range(1, max_iter + 1):
        R1 = C0 + system.adjoint(alpha) - X                      # dual residual (want 0; α + β = μ is kept)
        R3 = ones + system.apply(M) + s - xi                    # primal residual (want 0)
        pobj = float(np.sum(C0 * M) + mu * xi.sum())
        dobj = float(alpha.sum())
        pres = float(np.linalg.norm(R3)) / (1.0 + np.sqrt(T))
        dres = float(np.linalg.norm(R1)) / norm_c0
        gap = abs(pobj - dobj) / (1.0 + max(abs(pobj + offset), abs(dobj + offset)))
        nu = (float(np.sum(M * X)) + float(alpha @ s) + float(beta @ xi)) / n_cone
        for key, value in (("primal", pobj), ("dual", dobj), ("pres", pres), ("dres", dres), ("gap", gap),
                           ("nu", nu)):
            history[key].append(value)
        if verbose and int(verbose) >= 2:
            print(f"    ipm {it:3d}  primal {pobj:.10g}  dual {dobj:.10g}  pres {pres:.1e}  dres {dres:.1e}  "
                  f"gap {gap:.1e}")
        if max(pres, dres, gap) <= tol:
            converged = True
            break
        if it > 5 and max(pres, dres, gap) < 1e-6 and max(pres, dres, gap) >= 0.5 * min(
                max(a, b, c_) for a, b, c_ in zip(history["pres"][-6:-1], history["dres"][-6:-1],
                                                  history["gap"][-6:-1], strict=True)):
            stalled = True       # rounding floor: five steps without halving the worst measure
            break
        try:
            M, X, alpha, beta, xi, s = _newton_step(system, C0, mu, M, X, alpha, beta, xi, s, nu, n_cone,
                                                    iterative=max(pres, dres, gap) < _PCG_SWITCH)
        except np.linalg.LinAlgError:
            stalled = True       # a factorisation failed at the boundary: keep the last iterate
            break
    return IPMOutcome(
        M=M, alpha=np.clip(alpha, 0.0, mu), xi=xi, primal_value=history["primal"][-1],
        dual_value=history["dual"][-1], converged=converged, iterations=it, history=history, stalled=stalled,
    )


def warm_start(system: PairSystem, C0: np.ndarray, mu: float, M: np.ndarray, alpha: np.ndarray, *,
               shift: float = 1e-3) -> tuple:
    """An interior starting point of the slack SDP on ``system`` from the previous round's solution.

    The multipliers of the triplets kept from the previous working set are kept (their X =
    C0 + 𝒜*(α) is the previous dual slack, PSD up to the residual), moved into the box
    [γ, μ − γ], γ = ``shift``·μ; new triplets (``alpha`` NaN) start at γ, which hardly moves
    X. Then X₀ = C0 + 𝒜*(α₀) + δI with δ the least shift giving λ_min(X₀) ≥ ``shift`` times
    its largest eigenvalue, M₀ = M + εI likewise, and per triplet, with h = 1 + 𝒜(M₀)_t,
    ξ = [h]₊ + e, s = [−h]₊ + e, e = ``shift``·(1 + |h|), so that ξ − s = h (the primal
    constraint holds exactly) and the complementarity products αs, βξ are all of the order
    γ|h|. The start is infeasible only by δI in the dual equation; :func:`hinge_ipm` is an
    infeasible-start method.
    """
    d = system.dim
    gamma = shift * mu
    alpha0 = np.where(np.isnan(alpha), gamma, np.clip(alpha, gamma, mu - gamma))
    eye = np.eye(d)

    def lift(S: np.ndarray) -> np.ndarray:
        lam = np.linalg.eigvalsh(S)
        top = max(float(np.abs(lam).max()), 1e-300)
        return _sym(S) + np.maximum(shift * top - lam.min(axis=1), 0.0)[:, None, None] * eye

    M0 = lift(np.asarray(M, dtype=np.float64))
    X0 = lift(C0 + system.adjoint(alpha0))
    h = 1.0 + system.apply(M0)
    e = shift * (1.0 + np.abs(h))
    return M0, X0, alpha0, np.maximum(h, 0.0) + e, np.maximum(-h, 0.0) + e


def first_order_ipm_start(system: PairSystem, C0: np.ndarray, mu: float, M: np.ndarray, alpha: np.ndarray, *,
                      shift: float = 3e-2, metric_shift: float = 1e-3) -> tuple:
    """An interior starting point of the slack SDP from a first-order point (M, α̂) of
    :func:`sdpembed.solvers.lmnn.warm.warm_start_metric` (α̂ = μ·φ'_η(z), the smoothed hinge's slopes).

    As :func:`warm_start`, except for the two matrices. M₀ = M + εI with the least ε giving
    λ_min(M₀) ≥ ``metric_shift``·λ_max(M) (per block), and with h = 1 + 𝒜(M₀)_t,
    α₀ = clip(α̂, γ, μ − γ), γ = ``shift``·μ, ξ = [h]₊ + e, s = [−h]₊ + e, e = ``shift``·(1 + |h|)
    (ξ − s = h exactly). The dual slack is

        X₀ = [C0 + 𝒜*(α₀)]₊ + ν M₀⁻¹,      ν = (α₀ᵀs + β₀ᵀξ) / (2T),

    the positive part (eigenvalues clipped at 0) of the dual matrix C(α₀) of (2.14) plus the
    central-path term of the scalar pairs' mean product ν: M₀X₀ = M₀[C(α₀)]₊ + νI. α̂ is far from
    dual feasible — C(α̂) can have negative eigenvalues of a sixth of its largest, in the
    directions where M is smallest (the factor L grows them slowly) — so the shift
    X = C(α₀) + δI of :func:`warm_start` needs a large δ, and its PSD block starts with a product
    tr(M₀X₀)/d hundreds of times ν: off the central path, and with a dual residual δI several
    times that of the clip. This start saves interior-point iterations against :func:`warm_start`;
    the default ``metric_shift`` is the best of the values between 3·10⁻⁴ and 3·10⁻³.
    """
    d = system.dim
    gamma = shift * mu
    alpha0 = np.clip(alpha, gamma, mu - gamma)
    lam = np.linalg.eigvalsh(np.asarray(M, dtype=np.float64))
    eps = np.maximum(metric_shift * lam.max(axis=1) - lam.min(axis=1), 0.0)
    M0 = _sym(np.asarray(M, dtype=np.float64)) + eps[:, None, None] * np.eye(d)
    h = 1.0 + system.apply(M0)
    e = shift * (1.0 + np.abs(h))
    xi, s = np.maximum(h, 0.0) + e, np.maximum(-h, 0.0) + e
    nu = (float(alpha0 @ s) + float((mu - alpha0) @ xi)) / (2 * alpha0.size)
    lam_x, V = np.linalg.eigh(_sym(C0 + system.adjoint(alpha0)))
    Mc = np.linalg.inv(np.linalg.cholesky(M0))
    X0 = (V * np.maximum(lam_x, 0.0)[:, None, :]) @ V.transpose(0, 2, 1) + nu * (Mc.transpose(0, 2, 1) @ Mc)
    return M0, _sym(X0), alpha0, xi, s


def _cho_factor(H: np.ndarray):
    try:
        return scipy.linalg.cho_factor(H, lower=True, check_finite=False)
    except np.linalg.LinAlgError:
        ridge = 1e-12 * float(np.trace(H)) / H.shape[0]
        return scipy.linalg.cho_factor(H + ridge * np.eye(H.shape[0]), lower=True, check_finite=False)


def _newton_solver(system: PairSystem, D: np.ndarray, K: np.ndarray, *, iterative: bool = True,
                   hkm: tuple[np.ndarray, np.ndarray] | None = None):
    """A solver of the Newton system [𝒜*D𝒜 + K] v = r of :func:`hinge_ipm`.

    Directly (Cholesky of the formed matrix, T·p² flops) when the working set has at most
    ``_PCG_RATIO`` triplets per svec coordinate or several metric blocks. Otherwise by
    preconditioned conjugate gradients with the exact operator (one 𝒜 and one 𝒜* per
    iteration, O(n_pairs·d²) flops), preconditioned by

    * early (not ``iterative``): the whole Newton matrix with its rank-k updates in float32
      (half the flops' time; PCG then needs 1–3 iterations to restore float64 accuracy);
    * late (``iterative``, see :data:`_PCG_SWITCH`): the Newton matrix of only the
      ``_PCG_RATIO/2 · p`` triplets of largest D_t and the HKM term K. Late in the method the
      triplets away from their margin have D_t → 0 (α_t → 0 with s_t > 0, or α_t → μ with
      ξ_t > 0), so the preconditioned matrix tends to I and PCG needs a few iterations.

    If PCG does not reach a relative residual of ``_PCG_TOL`` in ``_PCG_MAXITER`` iterations,
    the full float64 matrix is formed and factored after all, so every direction is accurate.

    ``hkm`` = (M⁻¹, X), the factors of K = M⁻¹ ⊛ X: the operator then applies K as
    svec(sym(M⁻¹ V X)) (4d³ flops on d × d blocks) instead of the p × p matrix-vector product, which
    reads the whole of K (13 MB at p = 1,275) at every PCG iteration.
    """
    p = K.shape[0]
    if system.n_blocks != 1 or system.n_triplets <= _PCG_RATIO * p:
        factor = _cho_factor(system.gram(D) + K)
        return lambda r: scipy.linalg.cho_solve(factor, r, check_finite=False)
    if iterative:
        top = np.argpartition(-D, _PCG_RATIO * p // 2)[:_PCG_RATIO * p // 2]
        precond = _cho_factor(system.gram_subset(D, np.sort(top)) + K)
    else:
        precond = _cho_factor(system.gram_subset(D, np.arange(D.size), np.float32) + K)
    state: dict = {}

    def operator(v: np.ndarray) -> np.ndarray:
        V = system.smat(v)
        if hkm is None:
            return system.svec(system.adjoint(D * system.apply(V))) + K @ v
        return system.svec(system.adjoint(D * system.apply(V)) + _sym(hkm[0] @ V @ hkm[1]))

    def solve(r: np.ndarray) -> np.ndarray:
        if "factor" not in state:
            x, ok = _pcg(operator, r, lambda z: scipy.linalg.cho_solve(precond, z, check_finite=False))
            if ok:
                return x
            state["factor"] = _cho_factor(system.gram(D) + K)
        return scipy.linalg.cho_solve(state["factor"], r, check_finite=False)

    return solve


def _pcg(operator, r: np.ndarray, precondition) -> tuple[np.ndarray, bool]:
    """Preconditioned conjugate gradients for an SPD operator; (x, reached ``_PCG_TOL``)."""
    x = precondition(r)
    res = r - operator(x)
    norm_r = float(np.linalg.norm(r))
    if norm_r == 0.0:
        return np.zeros_like(r), True
    z = precondition(res)
    direction = z.copy()
    rz = float(res @ z)
    for _ in range(_PCG_MAXITER):
        if np.linalg.norm(res) <= _PCG_TOL * norm_r:
            return x, True
        Ad = operator(direction)
        step = rz / float(direction @ Ad)
        x += step * direction
        res -= step * Ad
        z = precondition(res)
        rz, rz_old = float(res @ z), rz
        direction = z + (rz / rz_old) * direction
    return x, bool(np.linalg.norm(res) <= _PCG_TOL * norm_r)


def _newton_step(system, C0, mu, M, X, alpha, beta, xi, s, nu, n_cone, iterative: bool = False):
    """One Mehrotra predictor–corrector step of :func:`hinge_ipm` (HKM direction); raises
    ``LinAlgError`` when rounding leaves no interior step."""
    R1 = C0 + system.adjoint(alpha) - X
    R2 = mu - alpha - beta
    R3 = 1.0 + system.apply(M) + s - xi
    Mc = np.linalg.inv(np.linalg.cholesky(M))
    Minv = Mc.transpose(0, 2, 1) @ Mc
    D = 1.0 / (xi / beta + s / alpha)
    K = system.skron(Minv, X)
    solve = _newton_solver(system, D, K, iterative=iterative, hkm=(Minv, X))

    def direction(rX: np.ndarray, ra: np.ndarray, rb: np.ndarray) -> tuple:
        g = R3 - (rb - xi * R2) / beta + ra / alpha
        rhs = system.svec(rX - R1 - system.adjoint(D * g))
        dM = system.smat(solve(rhs))
        dalpha = D * (system.apply(dM) + g)
        dX = R1 + system.adjoint(dalpha)
        dbeta = R2 - dalpha
        dxi = (rb - xi * dbeta) / beta
        ds = (ra - s * dalpha) / alpha
        return dM, dX, dalpha, dbeta, dxi, ds

    def steps(dM, dX, dalpha, dbeta, dxi, ds) -> tuple[float, float]:
        tp = min(_max_step_psd(M, dM), _max_step_pos(xi, dxi), _max_step_pos(s, ds))
        td = min(_max_step_psd(X, dX), _max_step_pos(alpha, dalpha), _max_step_pos(beta, dbeta))
        return tp, td

    # predictor (affine scaling, σ = 0)
    dM, dX, dalpha, dbeta, dxi, ds = direction(-X, -alpha * s, -beta * xi)
    tp, td = steps(dM, dX, dalpha, dbeta, dxi, ds)
    tp, td = min(1.0, tp), min(1.0, td)
    nu_aff = (float(np.sum((M + tp * dM) * (X + td * dX))) + float((alpha + td * dalpha) @ (s + tp * ds))
              + float((beta + td * dbeta) @ (xi + tp * dxi))) / n_cone
    sigma = min(1.0, max(0.0, nu_aff / nu)) ** 3
    # corrector: centring σν and the second-order terms of the predictor
    rX = sigma * nu * Minv - X - _sym(Minv @ dM @ dX)
    dM, dX, dalpha, dbeta, dxi, ds = direction(
        rX, sigma * nu - alpha * s - dalpha * ds, sigma * nu - beta * xi - dbeta * dxi)
    tp, td = steps(dM, dX, dalpha, dbeta, dxi, ds)
    tp, td = min(1.0, 0.98 * tp), min(1.0, 0.98 * td)
    M_new, X_new = _sym(M + tp * dM), _sym(X + td * dX)
    np.linalg.cholesky(M_new)            # raises LinAlgError if rounding left the cone
    np.linalg.cholesky(X_new)
    return M_new, X_new, alpha + td * dalpha, beta + td * dbeta, xi + tp * dxi, s + tp * ds


# ------------------------------------------------------------------------------ driver
@dataclass
class _Rounds:
    Ms: np.ndarray
    objective: float
    bound: float
    rgap: float
    working: np.ndarray
    out: IPMOutcome
    converged: bool
    round: int
    added: int
    newton: int
    active: int
    history: dict
    timed_out: bool = False
    alpha: np.ndarray | None = None      # multipliers of ``working`` (the solved set, fixed triplets at μ last)
    certified: bool = False              # stopped on the certified gap before the working set settled


def _ipm_reached(out: IPMOutcome, tol: float) -> bool:
    """Converged, or stopped at the rounding floor (all relative measures < max(tol, 1e-6))."""
    last = max(out.history["pres"][-1], out.history["dres"][-1], out.history["gap"][-1])
    return out.converged or (out.stalled and last < max(tol, 1e-6))


def _sorted_member(queries: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """``np.isin(queries, keys)`` for sorted ``keys``, by binary search (cheaper than the hash-based ``isin``
    of numpy 2 on the keys of a hinge scan)."""
    if keys.size == 0:
        return np.zeros(queries.shape, dtype=bool)
    pos = np.minimum(np.searchsorted(keys, queries), keys.size - 1)
    return keys[pos] == queries


def _spread_over_anchors(triplets: np.ndarray, hinges: np.ndarray, limit: int) -> np.ndarray:
    """Indices of at most ``limit`` triplets: every anchor point i's most violated triplet first,
    then every anchor's second, … (ties within a rank by larger hinge). A small metric violates
    hundreds of thousands of triplets, concentrated on few points; spreading the additions over
    the points gives every point its push constraints early and keeps the working set small."""
    if triplets.shape[0] <= limit:
        return np.arange(triplets.shape[0])
    order = np.lexsort((-hinges, triplets[:, 0]))
    anchor = triplets[order, 0]
    first = np.flatnonzero(np.r_[True, anchor[1:] != anchor[:-1]])
    rank = np.arange(order.size) - np.repeat(first, np.diff(np.r_[first, order.size]))
    return order[np.lexsort((-hinges[order], rank))[:limit]]


def _working_set_rounds(*, n, mu, C0, working, build_system, hinge_stream, pull, bound, tol, max_rounds, max_iter,
                        add_tol, verbose, prune, max_add_factor: float = 2.0, warm: bool = True,
                        warm_shift: float = 1e-3, prune_alpha: float = 1e-3, loose_tol: float = 1e-3,
                        settled: float = 0.05, deadline: float | None = None, tight: bool = False,
                        start: tuple | None = None, start_shift: float = 3e-2, fixed: np.ndarray | None = None,
                        fold=None, fixed_hinges=None, gap_tol: float | None = None) -> _Rounds:
    """The exact working-set loop shared by the single- and multi-metric drivers: solve the
    restricted SDP by :func:`hinge_ipm`, stream every hinge at its solution, add the omitted
    positive ones (spread over anchor points, :func:`_spread_over_anchors`), drop the working
    triplets far inside the margin with a zero multiplier, warm-start the next solve
    (:func:`warm_start`), repeat until none is added (see the module docstring).

    ``fixed`` triplets (with ``fold(fixed)``, the (c, d, d) matrix μ Σ_t A_t, and
    ``fixed_hinges(fixed, Ms)``, their hinge arguments) have their hinge counted as linear,
    μ h_t(M) instead of μ[h_t(M)]₊, i.e. α_t = μ; any of them whose hinge is negative at a
    solution is moved back to the working set (see :func:`solve_lmnn_fast`). ``tight`` solves
    the first round to ``tol`` at once; ``start`` = (M, alpha), a first-order point, warm-starts it
    (:func:`first_order_ipm_start` with ``start_shift``: such a point is farther from the central
    path than the previous round's solution, and a larger shift saves Newton steps); later rounds
    are warm-started by :func:`warm_start` with ``warm_shift``.

    ``gap_tol``: the loop also ends after a round solved to ``tol`` whose *certified* relative gap
    (objective (2.11) over every triplet at the projected solution against :func:`lmnn_dual_bound`
    of its multipliers) is ≤ ``gap_tol``, even if some omitted hinges are positive or some fixed
    ones negative: the certificate holds for any triplet set and any α ∈ [0, μ], so another round
    could only tighten a gap that is already small enough (a round that releases a few fixed
    hinges costs several more Newton steps)."""
    history: dict[str, list] = {key: [] for key in (
        "working_set", "fixed", "added", "pruned", "released", "violated", "active", "objective", "dual_bound",
        "relative_gap", "ipm_iterations")}
    newton = 0
    converged = timed_out = certified = False
    fixed = np.empty((0, 3), dtype=np.int64) if fixed is None else fixed
    # unless told otherwise (a working set chosen at a near-optimal metric), the first rounds are solved
    # loosely: their minimisers only choose triplets
    for round_ in range(1, max_rounds + 1):
        system = build_system(working)
        C_round = C0 + fold(fixed) if fixed.shape[0] else C0
        round_tol = tol if tight else max(tol, loose_tol)
        if start is not None:
            try:
                start = (first_order_ipm_start(system, C_round, mu, *start, shift=start_shift) if round_ == 1 else
                         warm_start(system, C_round, mu, *start, shift=warm_shift))
            except np.linalg.LinAlgError:
                start = None
        offset = mu * fixed.shape[0]          # the fixed hinges' constant: gaps relative to the loss (2.11)
        out = hinge_ipm(system, C_round, mu, tol=round_tol, max_iter=max_iter, start=start, offset=offset,
                        verbose=verbose)
        if start is not None and not _ipm_reached(out, round_tol):
            newton += out.iterations
            out = hinge_ipm(system, C_round, mu, tol=round_tol, max_iter=max_iter, offset=offset,
                            verbose=verbose)   # cold fallback
        newton += out.iterations
        Ms = np.stack([project_psd(M) for M in out.M])
        keys = np.sort(np.concatenate([triplet_keys(working, n), triplet_keys(fixed, n)]))
        push, added, added_h, active = 0.0, [], [], 0
        for block, hinges in hinge_stream(Ms, min(0.0, add_tol)):
            positive = hinges > 0.0
            push += float(hinges[positive].sum())
            active += int(positive.sum())
            take = np.flatnonzero(hinges > add_tol)
            take = take[~_sorted_member(triplet_keys(block[take], n), keys)]
            added.append(block[take])
            added_h.append(hinges[take])
        objective = (1.0 - mu) * pull(Ms) + mu * push
        new = np.concatenate(added) if added else np.empty((0, 3), dtype=np.int64)
        n_violated = new.shape[0]
        limit = int(max(max_add_factor * working.shape[0], max_add_factor * n, 1))
        if n_violated > limit:          # the others are checked again next round
            new = new[_spread_over_anchors(new, np.concatenate(added_h), limit)]
        # fixed triplets whose hinge is negative at the solution go back to the working set (α free again);
        # if the restricted solve failed with fixed triplets (folding can leave it unbounded), all of them do
        released = np.zeros(fixed.shape[0], dtype=bool)
        if fixed.shape[0]:
            released = fixed_hinges(fixed, Ms) < 0.0 if _ipm_reached(out, round_tol) else ~released
        solved = np.concatenate([working, fixed])
        solved_alpha = np.concatenate([out.alpha, np.full(fixed.shape[0], mu)])
        lower = bound(solved, solved_alpha, objective)
        rgap = relative_gap(objective, lower)
        nearly = n_violated <= settled * working.shape[0]
        keep = np.ones(working.shape[0], dtype=bool)
        if new.shape[0] and prune is not None and nearly:
            # inactive at the restricted optimum (hinge < prune, multiplier ≈ 0): dropping them leaves that
            # optimum a KKT point of the smaller set, and the full hinge scan brings back any that is needed
            keep = (1.0 + system.apply(Ms) > prune) | (out.alpha > prune_alpha * mu)
        for key, value in (("working_set", working.shape[0]), ("fixed", fixed.shape[0]), ("added", new.shape[0]),
                           ("pruned", int((~keep).sum())), ("released", int(released.sum())),
                           ("violated", n_violated), ("active", active), ("objective", objective),
                           ("dual_bound", lower), ("relative_gap", rgap), ("ipm_iterations", out.iterations)):
            history[key].append(value)
        if verbose:
            print(f"round {round_:3d}  working set {working.shape[0]:8d}  fixed {fixed.shape[0]:8d}  violated "
                  f"{n_violated:8d}  added {new.shape[0]:7d}  pruned {int((~keep).sum()):7d}  released "
                  f"{int(released.sum()):6d}  active {active:8d}  newton {out.iterations:3d}  objective "
                  f"{objective:.10g}  bound {lower:.10g}  gap {rgap:.2e}{'' if round_tol == tol else '  (loose)'}",
                  flush=True)
        if new.shape[0] == 0 and not released.any() and round_tol == tol:
            converged = True
            break
        if gap_tol is not None and round_tol == tol and _ipm_reached(out, tol) and rgap <= gap_tol:
            certified = True       # small enough already; the certificate needs no settled working set
            break
        if deadline is not None and time.perf_counter() > deadline:
            timed_out = True
            break
        alpha_next = np.concatenate([out.alpha[keep], np.full(int(released.sum()), mu),
                                     np.full(new.shape[0], np.nan)])
        working = np.concatenate([working[keep], fixed[released], new])
        fixed = fixed[~released]
        start = None
        if nearly:
            tight = True   # from here on every solve is to tol; a warm start pays once M is near the optimum
            if warm and _ipm_reached(out, round_tol):
                start = (out.M, alpha_next)
    return _Rounds(Ms=Ms, objective=objective, bound=lower, rgap=rgap, working=solved, out=out, converged=converged,
                   round=round_, added=int(n_violated), newton=newton, active=active,
                   history={key: np.asarray(value) for key, value in history.items()}, timed_out=timed_out,
                   alpha=solved_alpha, certified=certified)


def _single_system(instance, triplets: np.ndarray) -> PairSystem:
    """The :class:`PairSystem` of a single metric (one block) on ``triplets`` of ``instance``."""
    X, targets = instance.X, instance.targets
    n, k = targets.shape
    i, j, l = triplets.T
    # only the target pairs of the given triplets (after a first-order start, about half of the n·k)
    pairs, a = np.unique(i * k + target_rank(targets, i, j), return_inverse=True)
    keys, b = np.unique(i * n + l, return_inverse=True)
    U = X[pairs // k] - X[targets.ravel()[pairs]]
    W = X[keys // n] - X[keys % n]
    ends = np.concatenate([pairs // k, keys // n, targets.ravel()[pairs], keys % n])
    used, ends = np.unique(ends, return_inverse=True)
    return PairSystem(U=U, u_block=np.zeros(pairs.size, dtype=np.int64), W=W,
                      w_block=np.zeros(keys.size, dtype=np.int64), a=a.ravel(), b=b.ravel(), n_blocks=1,
                      points=X[used], ends=ends.reshape(2, -1))


def solve_lmnn_fast(
    instance,
    *,
    tol: float = 1e-8,
    max_rounds: int = 30,
    max_iter: int = 100,
    add_tol: float = 0.0,
    prune: float | None = -0.1,
    gap_tol: float = 1e-5,
    initial_triplets: np.ndarray | None = None,
    first_order: bool = True,
    first_order_keep: float = 0.05,
    first_order_fix: float | None = 0.05,
    first_order_start: bool = True,
    time_limit: float | None = None,
    verbose: bool | int = False,
) -> SolveResult:
    """Solve the LMNN SDP (2.11) / Sec. 2.1.3 by the interior-point method on an exact working set.

    See the module docstring for the algorithm and why it was chosen.

    Parameters
    ----------
    instance : LMNNInstance
    tol : float
        Interior-point tolerance on the relative residuals and gap of each restricted solve
        (the gap relative to the loss (2.11), fixed triplets' constant μ|F| included:
        :func:`hinge_ipm`'s ``offset``). It does not change what ``optimal`` means (that is
        ``gap_tol`` on the *certified* gap): ``tol=1e-5`` gives certified relative gaps below 10⁻⁵ on the
        benchmarks (BENCHMARKS.md, "LMNN against metric-learn and pylmnn"); if a looser tol
        leaves the certified gap above ``gap_tol``, the status says ``inaccurate``.
    max_rounds : int
        Working-set rounds at most (each: one restricted solve and one full hinge check).
    max_iter : int
        Newton steps per restricted solve at most.
    add_tol : float
        Omitted triplets with hinge > add_tol at the solution are added (0: exactly the
        positive ones; hinges are in units of the margin 1 of (2.6)).
    prune : float or None
        Once a round adds fewer than 5 % of the working set, working triplets whose hinge is
        below ``prune`` (inside the margin) *and* whose multiplier is below 10⁻³μ are dropped
        before the next solve; None keeps the set growing. Dropping constraints with zero
        multipliers leaves the restricted optimum optimal, and exactness does not depend on
        it: the loop ends only when no triplet outside the working set has a positive hinge.
    gap_tol : float
        ``optimal`` needs a certified relative gap ≤ gap_tol (objective (2.11) over every
        triplet against :func:`lmnn_dual_bound`), reached either with a converged working set
        or by a round solved to ``tol`` before it settled (the loop stops there: the
        certificate does not depend on the working set).
    initial_triplets : ndarray of int, shape (T, 3), optional
        The first working set (no first-order start, no fixed triplets); by default the
        first-order start below, or :func:`seed_triplets` (active at M = I, plus each target
        pair's nearest impostor) with ``first_order=False``.
    first_order : bool
        Choose the first working set at the approximate minimiser of
        :func:`sdpembed.solvers.lmnn.warm.warm_start_metric` (module docstring).
    first_order_keep : float
        Triplets whose hinge argument at that metric exceeds −``first_order_keep`` are used.
    first_order_fix : float or None
        Of those, the ones above ``first_order_fix`` are fixed (α = μ, hinge counted as
        linear) until their hinge turns negative at a solution; None fixes none. (Either
        choice leaves the result exact; a narrower band means a smaller working set but,
        from a rough first-order point, possibly another round.)
    first_order_start : bool
        Also warm-start the first interior-point solve from that metric and the multipliers
        μ·φ'_η of the smoothed loss (:func:`first_order_ipm_start`; fewer Newton steps than a
        cold start or :func:`warm_start`'s shifted dual start).
    time_limit : float, optional
        Seconds: no new round starts after this (the round under way finishes). A run stopped
        this way reports ``max_iterations`` with its certified gap, which stays a true bound.
    verbose : bool or int
        One line per round (working set, added, active triplets, objective, bound, gap);
        ``2`` also prints every Newton step.

    Returns
    -------
    SolveResult
        ``solution`` M ⪰ 0 (projected with (2.16)), ``objective`` its loss (2.11) over all
        triplets, ``dual_bound`` the certified bound of :func:`lmnn_dual_bound` from the
        interior-point multipliers; ``history`` per round; ``extra`` the final working set,
        its multipliers, the active-triplet count and the Newton steps in total.
    """
    start = time.perf_counter()
    max_rounds = check_positive_int(max_rounds, "max_rounds")
    max_iter = check_positive_int(max_iter, "max_iter")
    for name, value in (("tol", tol), ("gap_tol", gap_tol)):
        if not (np.isfinite(value) and value > 0.0):
            raise ValueError(f"{name} must be a positive number, got {value}")
    if not np.isfinite(add_tol):
        raise ValueError(f"add_tol must be a finite number, got {add_tol}")
    if time_limit is not None and not (np.isfinite(time_limit) and time_limit >= 0.0):
        raise ValueError(f"time_limit must be a non-negative number of seconds or None, got {time_limit}")
    n, d, mu = instance.n_points, instance.dim, instance.mu
    X, y, targets = instance.X, instance.y, instance.targets
    if mu == 0.0:   # only the pull term: tr(MP) ≥ 0 is minimised by M = 0, and the bound 0 is exact
        zero = np.zeros((d, d))
        return build_result(
            instance.problem, "M", zero, 0.0, 0.0, status="optimal",
            message="mu = 0: M = 0 is optimal (the loss is tr(MP) with P ⪰ 0)", method="fast",
            solver="lmnn_ipm", max_violation=0.0, min_eigenvalue=0.0, start=start,
        )
    P = np.asarray(instance.pull_matrix)
    warm = fixed = ipm_start = None
    if initial_triplets is not None:
        working = check_triplets(instance, initial_triplets)
    elif first_order:
        warm = warm_start_metric(X, y, targets, mu, P, keep=first_order_keep, verbose=verbose,
                                 time_budget=None if time_limit is None else 0.5 * float(time_limit))
        working, alpha0 = warm.triplets, warm.alpha
        if first_order_fix is not None:
            settled = warm.z > first_order_fix
            fixed, working, alpha0 = working[settled], working[~settled], alpha0[~settled]
        if working.shape[0] == 0:     # nothing near the margin: seed as at M = I, at the warm metric
            working = seed_triplets(X, y, targets, warm.M)
            if fixed is not None:
                working = working[~np.isin(triplet_keys(working, n), triplet_keys(fixed, n))]
        elif first_order_start:
            ipm_start = (warm.M[None], alpha0)
    else:
        working = seed_triplets(X, y, targets)

    def fold(triplets: np.ndarray) -> np.ndarray:
        """μ Σ_t (C_ij − C_il) over fixed triplets (their multiplier α_t = μ in (2.14))."""
        return triplet_outer_sum(X, triplets, np.full(triplets.shape[0], mu))[0][None]

    def fixed_hinges(triplets: np.ndarray, Ms: np.ndarray) -> np.ndarray:
        """The hinge arguments 1 + D_M(x_i, x_j) − D_M(x_i, x_l) (2.10) of ``triplets``, from differences."""
        U, W = X[triplets[:, 0]] - X[triplets[:, 1]], X[triplets[:, 0]] - X[triplets[:, 2]]
        return 1.0 + np.einsum("ij,ij->i", U @ Ms[0], U) - np.einsum("ij,ij->i", W @ Ms[0], W)

    rounds = _working_set_rounds(
        n=n, mu=mu, C0=(1.0 - mu) * P[None], working=working,
        build_system=lambda triplets: _single_system(instance, triplets),
        hinge_stream=lambda Ms, threshold: [radius_hinges(X, y, targets, Ms[0], threshold=threshold)],
        pull=lambda Ms: float(np.sum(P * Ms[0])),
        bound=lambda triplets, alpha, objective: lmnn_dual_bound(instance, triplets, alpha, upper_bound=objective),
        tol=tol, max_rounds=max_rounds, max_iter=max_iter, add_tol=add_tol, verbose=verbose, prune=prune,
        deadline=None if time_limit is None else start + float(time_limit),
        tight=warm is not None, start=ipm_start, fixed=fixed, fold=fold, fixed_hinges=fixed_hinges, gap_tol=gap_tol,
    )
    M = rounds.Ms[0]
    objective, bound, rgap, working, out = rounds.objective, rounds.bound, rounds.rgap, rounds.working, rounds.out
    status, message = _status(rounds, gap_tol=gap_tol, add_tol=add_tol, tol=tol, max_rounds=max_rounds,
                              max_iter=max_iter)
    return build_result(
        instance.problem, "M", M, objective, bound, rgap=rgap, status=status, message=message, method="fast",
        solver="lmnn_ipm", max_violation=instance.max_violation(M), iterations=rounds.newton, start=start,
        history=rounds.history,
        extra={"triplets": working, "alpha": rounds.alpha, "active": rounds.active, "rounds": rounds.round,
               "newton_steps": rounds.newton, "restricted_value": out.primal_value,
               **({} if warm is None else {
                   "first_order_loss": warm.loss, "first_order_seconds": warm.seconds,
                   "first_order_iterations": warm.iterations, "first_order_triplets": warm.triplets.shape[0]})},
    )


def _status(rounds: _Rounds, *, gap_tol, add_tol, tol, max_rounds, max_iter) -> tuple[str, str]:
    """``optimal`` only for a certified gap ≤ gap_tol (a converged working set, or one stopped on that gap)."""
    if rounds.converged and rounds.rgap <= gap_tol:
        return "optimal", (f"every omitted hinge <= {add_tol:g} after {rounds.round} round(s) on "
                           f"{rounds.working.shape[0]} triplets; certified relative gap {rounds.rgap:.2e} "
                           f"<= {gap_tol:g}")
    if rounds.certified and rounds.rgap <= gap_tol:
        return "optimal", (f"certified relative gap {rounds.rgap:.2e} <= {gap_tol:g} after {rounds.round} round(s) "
                           f"on {rounds.working.shape[0]} triplets (the working set had not settled: "
                           f"{rounds.added} omitted hinges > {add_tol:g}, {int(rounds.history['released'][-1])} "
                           f"fixed hinges < 0; the certificate does not depend on it)")
    if rounds.timed_out:
        return "max_iterations", (f"stopped by the time limit after {rounds.round} round(s) ({rounds.added} "
                                  f"violated triplets to add); certified relative gap {rounds.rgap:.2e}")
    if not rounds.converged:
        return "max_iterations", (f"the working set was still growing after {max_rounds} round(s) "
                                  f"({rounds.added} to add); certified relative gap {rounds.rgap:.2e}")
    if not (rounds.out.converged or rounds.out.stalled):
        return "max_iterations", (f"the interior-point method did not reach tol={tol:g} in {max_iter} Newton steps "
                                  f"(certified relative gap {rounds.rgap:.2e})")
    return "inaccurate", f"certified relative gap {rounds.rgap:.2e} > gap_tol={gap_tol:g}"


def solve_multi_metric_fast(
    problem,
    *,
    tol: float = 1e-8,
    max_rounds: int = 30,
    max_iter: int = 100,
    add_tol: float = 0.0,
    prune: float | None = -0.1,
    gap_tol: float = 1e-5,
    verbose: bool | int = False,
) -> SolveResult:
    """Solve the multi-metric SDP (2.17) (one metric per class) by the same interior-point method
    on an exact working set; the metric of a pair is that of the class of its second point.

    Parameters
    ----------
    problem : sdpembed.problems.lmnn.MultiMetricLMNNProblem
    tol, max_rounds, max_iter, add_tol, prune, gap_tol, verbose
        As for :func:`solve_lmnn_fast`.

    Returns
    -------
    SolveResult
        ``solution`` the (C, d, d) stack of metrics, ``dual_bound`` the certified bound of
        :func:`sdpembed.problems.lmnn.multi_metric_dual_bound`.
    """
    start = time.perf_counter()
    max_rounds = check_positive_int(max_rounds, "max_rounds")
    max_iter = check_positive_int(max_iter, "max_iter")
    X, y, targets, mu = problem.X, problem.y, problem.targets, problem.mu
    n, k = targets.shape
    C, d, blk = problem.n_blocks, problem.dim, problem.block
    P = problem.pull_matrices()
    if mu == 0.0:
        zero = np.zeros((C, d, d))
        return build_result("lmnn_multi", "M", zero, 0.0, 0.0, status="optimal", message="mu = 0: M = 0 is optimal",
                            method="fast", solver="lmnn_ipm", max_violation=0.0, min_eigenvalue=0.0, start=start)

    def build(triplets: np.ndarray) -> PairSystem:
        i, j, l = triplets.T
        a = i * k + target_rank(targets, i, j)
        keys, b = np.unique(i * n + l, return_inverse=True)
        U = (X[:, None, :] - X[targets]).reshape(n * k, -1)
        return PairSystem(U=U, u_block=np.repeat(blk, k), W=X[keys // n] - X[keys % n], w_block=blk[keys % n],
                          a=a, b=b.ravel(), n_blocks=C)

    rounds = _working_set_rounds(
        n=n, mu=mu, C0=(1.0 - mu) * P, working=seed_triplets(X, y, targets), build_system=build,
        hinge_stream=lambda Ms, threshold: multi_metric_hinges(problem, Ms, threshold=threshold),
        pull=lambda Ms: float(np.sum(P * Ms)),
        bound=lambda triplets, alpha, objective: multi_metric_dual_bound(problem, triplets, alpha,
                                                                         upper_bound=objective),
        tol=tol, max_rounds=max_rounds, max_iter=max_iter, add_tol=add_tol, verbose=verbose, prune=prune,
        gap_tol=gap_tol,
    )
    status, message = _status(rounds, gap_tol=gap_tol, add_tol=add_tol, tol=tol, max_rounds=max_rounds,
                              max_iter=max_iter)
    return build_result(
        "lmnn_multi", "M", rounds.Ms, rounds.objective, rounds.bound, rgap=rounds.rgap, status=status,
        message=message, method="fast", solver="lmnn_ipm", max_violation=0.0, iterations=rounds.newton,
        start=start, history=rounds.history,
        extra={"triplets": rounds.working, "alpha": rounds.alpha, "active": rounds.active,
               "rounds": rounds.round},
    )
