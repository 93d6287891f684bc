"""The operator 𝒜 of LMNN's triplet constraints, applied through the triplets' pairs.

Triplet t = (i, j, l) of the slack SDP of thesis Sec. 2.1.3 has the matrix A_t = C_ij − C_il
(Sec. 2.1.7) and the hinge argument 1 + 𝒜(M)_t, 𝒜(M)_t = tr(M A_t) = uᵀMu − wᵀMw with u = x_i − x_j
(its *target pair*) and w = x_i − x_l (its *impostor pair*). :class:`PairSystem` holds the pairs once
and the triplets as indices into them, for one metric (2.11) or block-diagonal metrics, one per class
(2.17). It applies 𝒜 and its adjoint 𝒜*(w) = Σ_t w_t A_t (the dual matrix (2.14) less its constant)
and forms, in orthonormal svec coordinates (p = d(d+1)/2 per block), the two parts of the Newton
matrix of the interior point (:mod:`sdpembed.solvers.lmnn.hinge_ipm`):

* 𝒜*D𝒜, from the *pairs* when they are few, Σ_a ω_a c_a c_aᵀ + Σ_b ω_b c_b c_bᵀ
  − Σ_t D_t (c_a c_bᵀ + c_b c_aᵀ) with c = svec(uuᵀ) ((3·n_target_pairs + n_impostor_pairs)·p²
  flops), or from the triplets, Σ_t D_t (c_a − c_b)(c_a − c_b)ᵀ (T·p²), whichever is cheaper;
  BLAS-3, no Python loop over triplets. The float32 features c_a − c_b of the triplets a
  preconditioner of :mod:`sdpembed.solvers.lmnn.newton` uses are formed for those triplets only;
* G ⊛ K, the symmetric Kronecker product of the HKM direction.

The operator of a single metric (:func:`single_system`) uses only the target pairs of the working
set (about half of the n·k after a first-order start) and no per-block masks.

References
----------
.. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
   Pennsylvania, 2007. Implemented here: the distances (2.10), the triplets' matrices of Sec. 2.1.7
   and the dual matrix (2.14), for one metric (2.11) and one per class (2.17).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse

from ...problems.lmnn import LMNNInstance

__all__ = ["PairSystem", "single_system", "symmetric_part", "target_rank"]

#: Pairs whose svec features are formed at once when assembling the Newton matrix.
_CHUNK = 4096

#: Largest size in bytes of the cached svec features of the impostor pairs (formed per chunk beyond).
_FEATURE_CACHE = 1 << 28


def target_rank(targets: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """Position m of j in ``targets[i]`` for every (i, j) (vectorised; j must be a target of i)."""
    return np.argmax(targets[i] == j[:, None], axis=1)


def symmetric_part(A: np.ndarray) -> np.ndarray:
    """(A + Aᵀ)/2 of every block of a stack A of shape (c, d, d)."""
    return 0.5 * (A + A.transpose(0, 2, 1))


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
    _cache_float32: tuple | None = field(init=False, repr=False, default=None)
    #: optional, single block only: the points of the pairs and each pair's two ends (rows of ``points``), target
    #: pairs first, then impostor pairs (u_a = points[ends[0, a]] − points[ends[1, a]], likewise w_b after them);
    #: then :meth:`adjoint` contracts through the points (a signed graph Laplacian) instead of the pairs
    points: np.ndarray | None = None
    ends: np.ndarray | None = None
    _laplacian: tuple | None = field(init=False, repr=False, default=None)
    _points_float32: np.ndarray | None = field(init=False, repr=False, default=None)

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

    def features_t(self, V: np.ndarray, W: np.ndarray | None = None) -> np.ndarray:
        """:meth:`features` transposed, shape (p, n): svec(v vᵀ) as columns — or svec(v vᵀ − w wᵀ) for the rows
        of ``W`` (subtracted into the output, without a second (p, n) temporary) — written one contiguous row of
        the output per product (cheaper than the column slices of the (n, p) layout); the same products in the
        same order, so the same values."""
        n, d = V.shape
        Vt = np.ascontiguousarray(V.T)
        out = np.empty((self.svec_dim, n), dtype=V.dtype)
        root2 = Vt * np.sqrt(2.0)
        if W is not None:
            Wt = np.ascontiguousarray(W.T)
            root2_w = Wt * np.sqrt(2.0)
        pos = 0
        for i in range(d):
            np.square(Vt[i], out=out[pos])
            part = out[pos + 1:pos + d - i]
            np.multiply(root2[i + 1:], Vt[i], out=part)
            if W is not None:
                out[pos] -= np.square(Wt[i])
                part -= root2_w[i + 1:] * Wt[i]
            pos += d - i
        return out

    def _triplet_features_t(self, rows) -> np.ndarray:
        """svec(u_a u_aᵀ − w_b w_bᵀ) of the triplets ``rows`` (a slice or indices), transposed: (p, |rows|)."""
        return self.features_t(self.U[self.a[rows]], self.W[self.b[rows]])

    def _features_u(self) -> np.ndarray:
        if self._cache_u is None:
            self._cache_u = self.features(self.U)
        return self._cache_u

    def _features_w_rows(self, rows: np.ndarray) -> np.ndarray:
        """svec features of the impostor pairs ``rows``, cached when they fit in ``_FEATURE_CACHE`` bytes."""
        if self._cache_w is None and 8 * self.W.shape[0] * self.svec_dim <= _FEATURE_CACHE:
            self._cache_w = self.features(self.W)
        return self._cache_w[rows] if self._cache_w is not None else self.features(self.W[rows])

    # ----------------------------------------------------------------- operator
    def congruent(self, Q: np.ndarray) -> PairSystem:
        """The system of the matrices Qᵀ A_t Q (single block): every pair difference v becomes Qᵀv
        (rows V ↦ VQ), so that its 𝒜 at Y is this system's 𝒜 at Q Y Qᵀ and its 𝒜* is Qᵀ 𝒜* Q
        (the matrix-free Newton solves of :mod:`sdpembed.solvers.lmnn.newton`)."""
        if self.n_blocks != 1:
            raise ValueError("congruent is defined for a single metric block")
        out = PairSystem(U=self.U @ Q, u_block=self.u_block, W=self.W @ Q, w_block=self.w_block, a=self.a, b=self.b,
                         n_blocks=1, points=None if self.points is None else self.points @ Q, ends=self.ends)
        out._laplacian = self._laplacian          # the same pairs: the same sparse pattern
        return out

    def diagonal(self, D: np.ndarray) -> np.ndarray:
        """The diagonal of 𝒜* diag(D) 𝒜 in svec coordinates (single block), without forming the matrix.

        Its entry at (i, j) is Σ_t D_t (u_i u_j − w_i w_j)² (twice that off the diagonal, the svec
        weight √2 squared), u and w the triplet's target and impostor differences; expanded, the d × d
        matrix of these sums is Σ_a ω_a (u_a∘u_a)(u_a∘u_a)ᵀ + Σ_b ω_b (w_b∘w_b)(w_b∘w_b)ᵀ
        − 2 Σ_t D_t (u_a∘w_b)(u_a∘w_b)ᵀ with ω the summed D of a pair: three weighted Gram products
        ((n_pairs + T)·d² flops) instead of the T·p of the svec features."""
        wu = np.bincount(self.a, D, self.U.shape[0])
        ww = np.bincount(self.b, D, self.W.shape[0])
        U2, W2 = self.U * self.U, self.W * self.W
        S = (U2 * wu[:, None]).T @ U2 + (W2 * ww[:, None]).T @ W2
        for start in range(0, self.n_triplets, _CHUNK):
            t = slice(start, start + _CHUNK)
            V = self.U[self.a[t]] * self.W[self.b[t]]
            S -= 2.0 * ((V * D[t, None]).T @ V)
        return S[self.iu] * self.scale ** 2

    def pair_distances(self, M: np.ndarray, dtype: type = np.float64) -> tuple[np.ndarray, np.ndarray]:
        """uᵀ M_block u for every target pair and wᵀ M_block w for every impostor pair (2.10).

        ``dtype`` float32 (single block only; several blocks are always in float64): from the pairs and M rounded
        to float32 (:meth:`float32_pairs`), each distance to ~d·ε₃₂ relative to ‖u‖²‖M‖ — for operators whose
        products only have to be accurate to a loose relative residual (:mod:`sdpembed.solvers.lmnn.newton`)."""
        if self.n_blocks == 1:      # no block masks (they would copy U and W on every call)
            U, W = self.float32_pairs() if np.dtype(dtype) == np.float32 else (self.U, self.W)
            block = M[0].astype(U.dtype, copy=False)
            return np.einsum("ij,ij->i", U @ block, U), np.einsum("ij,ij->i", W @ block, W)
        du = np.empty(self.U.shape[0])
        dw = np.empty(self.W.shape[0])
        for blk in range(self.n_blocks):  # a loop over metric blocks (one per class at most)
            su, sw = self.u_block == blk, self.w_block == blk
            du[su] = np.einsum("ij,ij->i", self.U[su] @ M[blk], self.U[su])
            dw[sw] = np.einsum("ij,ij->i", self.W[sw] @ M[blk], self.W[sw])
        return du, dw

    def apply(self, M: np.ndarray, dtype: type = np.float64) -> np.ndarray:
        """𝒜(M)_t = D_M(x_i, x_j) − D_M(x_i, x_l): the hinge argument minus the margin (``dtype``: see
        :meth:`pair_distances`)."""
        du, dw = self.pair_distances(M, dtype)
        return du[self.a] - dw[self.b]

    def float32_pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """The target and impostor pairs U and W rounded to float32 (once per system)."""
        if self._cache_float32 is None:
            self._cache_float32 = (self.U.astype(np.float32), self.W.astype(np.float32))
        return self._cache_float32

    def adjoint(self, w: np.ndarray, dtype: type = np.float64) -> np.ndarray:
        """𝒜*(w) = Σ_t w_t (C_ij − C_il) per block, through per-pair weights (cf. (2.14)); ``dtype`` float32
        contracts the points and weights rounded to float32 (with ``points`` only; else in float64), for the same
        use as float32 in :meth:`pair_distances`."""
        wu = np.bincount(self.a, w, self.U.shape[0])
        ww = np.bincount(self.b, w, self.W.shape[0])
        if self.n_blocks == 1 and self.points is not None:
            return self._adjoint_points(np.concatenate([wu, -ww]), dtype)[None]
        if self.n_blocks == 1:
            out = ((self.U * wu[:, None]).T @ self.U - (self.W * ww[:, None]).T @ self.W)[None]
            return 0.5 * (out + out.transpose(0, 2, 1))
        out = np.zeros((self.n_blocks, self.dim, self.dim))
        for blk in range(self.n_blocks):
            su, sw = self.u_block == blk, self.w_block == blk
            U, W = self.U[su], self.W[sw]
            out[blk] = (U * wu[su, None]).T @ U - (W * ww[sw, None]).T @ W
        return 0.5 * (out + out.transpose(0, 2, 1))

    def _adjoint_points(self, s: np.ndarray, dtype: type = np.float64) -> np.ndarray:
        """Σ_e s_e (x_e − x'_e)(x_e − x'_e)ᵀ over the pairs e (ends ``ends``), as −(C + Cᵀ) with
        C = Pᵀ(S − diag(S1 + Sᵀ1)/2)P, S the sparse matrix of the weights s on the pairs' ends and P the points:
        one m × d × d product over the m points instead of one per pair (a working set touches several
        times fewer points than it has pairs; equal to rounding)."""
        P = self.points
        m = P.shape[0]
        if np.dtype(dtype) == np.float32:
            if self._points_float32 is None:
                self._points_float32 = P.astype(np.float32)
            P = self._points_float32
        if self._laplacian is None:
            rows, cols = self.ends
            perm = np.argsort(rows, kind="stable")
            self._laplacian = (perm, cols[perm], np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=m))]))
        perm, cols, indptr = self._laplacian
        S = scipy.sparse.csr_matrix((s[perm].astype(P.dtype), cols, indptr), shape=(m, m))
        degree = np.bincount(self.ends[0], s, m) + np.bincount(self.ends[1], s, m)
        Y = S @ P
        Y -= (0.5 * degree).astype(P.dtype)[:, None] * P
        C = P.T @ Y
        return -(C + C.T).astype(np.float64, copy=False)

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

    def gram_subset(self, D: np.ndarray, rows: np.ndarray, dtype: type = np.float64,
                    accumulate: type = np.float64) -> np.ndarray:
        """Σ_{t ∈ rows} D_t (c_a − c_b)(c_a − c_b)ᵀ of a single block (the preconditioners of
        :mod:`sdpembed.solvers.lmnn.newton`), each chunk's rank-k update in ``dtype`` (float32: half the time,
        entries to ~1e-7 relative), summed in ``accumulate`` (float32 for a preconditioner factored in float32).
        Every chunk's F Fᵀ is exactly symmetric (numpy hands F @ F.T to BLAS syrk and mirrors the triangle), so
        their sum is too: no symmetrising pass."""
        p = self.svec_dim
        H = None
        # the features of the rows' triplets formed here, transposed (:meth:`features_t`): cheaper than gathering
        # rows of cached (n_pairs, p) features or of the features of every triplet formed once per working set
        # (most of a working set is never among the preconditioners' rows); in float32 from the pairs rounded to
        # float32 (a preconditioner's: the products' rounding is that of its rank-k update), else in float64
        root = np.sqrt(D).astype(dtype)
        U, W = self.float32_pairs() if np.dtype(dtype) == np.float32 else (self.U, self.W)
        for start in range(0, rows.size, _CHUNK):
            t = rows[start:start + _CHUNK]
            F = self.features_t(U[self.a[t]], W[self.b[t]]).astype(dtype, copy=False)
            F *= root[t]
            if not F.shape[1]:
                continue
            if H is None:                   # the first chunk's product is the sum so far: no zeros to add it to
                H = (F @ F.T).astype(accumulate, copy=False)
            else:
                H += F @ F.T
        return np.zeros((p, p), dtype=accumulate) if H is None else H

    def skron(self, G: np.ndarray, K: np.ndarray) -> np.ndarray:
        """G ⊛ K (symmetric Kronecker product) of stacked blocks, block-diagonal (c·p, c·p):
        the matrix of H ↦ svec((G H K + K H G)/2) in orthonormal svec coordinates, in the precision of G
        and K (float32 blocks give a float32 matrix, for a preconditioner).

        With E_r = (e_i e_jᵀ + e_j e_iᵀ)/n_r, r = (i, j), i ≤ j, n_r = 2 on the diagonal and √2 off it, and
        s = (k, l), its entry (r, s) is, for symmetric G and K,

            (G_ik K_jl + G_jl K_ik + G_il K_jk + G_jk K_il) / (n_r n_s).

        The rows r = (i, j) of one i are contiguous in the svec order, and with the (d, p) column gathers
        G_{·k} = [G_{m k_s}]_{m, s} (and G_{·l}, K_{·k}, K_{·l}) that block of rows is
        G_{ik}·K_{jl} + G_{il}·K_{jk} + K_{ik}·G_{jl} + K_{il}·G_{jk} over j ≥ i: four scaled copies of
        contiguous rows of the gathers, written into the output in place (a loop over the d values of i),
        instead of six (p, p) gathers.
        """
        p, c, d = self.svec_dim, self.n_blocks, self.dim
        dtype = np.result_type(G, K)
        i_s, j_s = self.iu
        half = dtype.type(np.sqrt(0.5))
        # 1/(n_r n_s): the column factor 1/n_s and the row factor 1/√2 go into the row-i vectors, and the first
        # row of each block (j = i, n_r = 2) gets its other 1/√2 at the end
        column = self.scale.astype(dtype) * (half * half * half)         # 1/n_s = scale_s/2, times 1/√2
        out = (np.empty if c == 1 else np.zeros)((c * p, c * p), dtype=dtype)     # every diagonal block is written
        scratch = np.empty((d, p), dtype=dtype)
        for blk in range(c):
            g, k = symmetric_part(G[blk:blk + 1])[0], symmetric_part(K[blk:blk + 1])[0]
            Gk, Gl, Kk, Kl = g[:, i_s], g[:, j_s], k[:, i_s], k[:, j_s]
            S = out[blk * p:(blk + 1) * p, blk * p:(blk + 1) * p]
            pos = 0
            for i in range(d):
                m = d - i
                rows, tmp = S[pos:pos + m], scratch[:m]
                np.multiply(Kl[i:], Gk[i] * column, out=rows)
                for left, right in ((Gl, Kk), (Kk, Gl), (Kl, Gk)):
                    np.multiply(right[i:], left[i] * column, out=tmp)
                    rows += tmp
                rows[0] *= half
                pos += m
        return out


def _syrk_add(H: np.ndarray, G: np.ndarray) -> None:
    """H += Gᵀ G in place (numpy hands Gᵀ @ G with a shared buffer to BLAS syrk)."""
    if G.shape[0]:
        H += G.T @ G


def single_system(instance: LMNNInstance, triplets: np.ndarray) -> PairSystem:
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
