"""A first-order warm start for the LMNN SDP (2.11): an approximate metric and the triplets around it.

The exact solver (:func:`sdpembed.solvers.lmnn.fast.solve_lmnn_fast`) spends most of its time
in the first working-set rounds, whose minimisers only serve to find the triplets that matter:
the minimiser of a small first working set violates about a hundred times as many triplets as
the optimum. This module finds an approximate minimiser cheaply instead, and the
interior-point method is then started on the triplets near the margin at that point.

**The smoothed loss in the factor.** With M = LᵀL (2.9), L square (d × d, so that every PSD M
is reachable and the factorisation loses nothing), the loss (2.11) is

    ε(L) = (1 − μ) tr(L P Lᵀ) + μ Σ_t [z_t]₊,     z_t = 1 + ‖L(x_i − x_j)‖² − ‖L(x_i − x_l)‖²   (2.11)

— the loss pylmnn and metric-learn minimise by gradient steps in L (the non-convex view of
Sec. 2.1.3). Its hinge is not differentiable, which stalls quasi-Newton methods at kinks, so
each hinge is replaced by the Huber-smoothed hinge

    φ_η(z) = 0 (z ≤ 0),  z²/(2η) (0 < z < η),  z − η/2 (z ≥ η),   [z]₊ − η/2 ≤ φ_η(z) ≤ [z]₊,

whose gradient is the gradient (2.14) of (2.11) with the hinge's 0/1 weights replaced by
clip(z/η, 0, 1): ∇_L = 2 L G, G = (1 − μ)P + μ Σ_t φ'_η(z_t)(C_ij − C_il). η is decreased
stage by stage (continuation), each stage minimised by the plain L-BFGS of
:mod:`sdpembed.solvers.lbfgs`.

**A scaled start.** Along the ray L = cL₀ every hinge argument z_t = 1 + c²(‖L₀u_ij‖² − ‖L₀(x_i − x_l)‖²)
is affine in s = c² and the pull term is linear in s, so the smoothed loss is convex in s, and its slope in c,
⟨∇_L ε(cL₀), L₀⟩, changes sign once, at the best scale. From the Euclidean metric the loss is mostly a
matter of scale (standardised features put the target neighbours tens of margins apart), and L-BFGS, whose
first step is a unit step along the gradient, spends a dozen evaluations and several rejected steps finding
it. So the first stage starts from c*L₀ (:func:`_ray_scale`): c is halved from 1 until the slope turns
non-positive, and c* is the minimiser of the cubic interpolating the loss and slope at the last two scales
(Nocedal & Wright, (3.59)), kept inside that bracket. The distances along the ray are c² times those at L₀, and the
pairs inside a radius at a scale c are candidates at any smaller scale: one scan of the pairs, at a quarter of
the first scale, serves the first scale and two halvings, and the first stage's first evaluation, at c*L₀
inside the bracket. Each stage's first L-BFGS step, along the gradient before any curvature pair is stored, is
taken ``first_step``·‖L‖_F long (L-BFGS runs in the variable L/σ, σ = ``first_step``·‖L‖_F, whose first step
has unit length; later steps are scaled by the curvature pairs, which do not depend on σ) instead of the unit
length, which at ‖L‖_F of a few units was rejected by the line search at the start of both stages.

**Every triplet, every evaluation.** The loss and gradient are those of the smoothed loss over all
n²k triplets, to the rounding of the distances' precision (:class:`_FullLoss`): an impostor l can
have a positive hinge argument for anchor i only inside the radius 1 + max_j ‖L(x_i − x_j)‖² of i, so
the n × n distances are formed blockwise through a Gram matrix and only the pairs inside the radius
are kept — the test pylmnn uses.
(Scoring only a candidate set refreshed between stages is not enough: from M = I the first stage
can shrink M until millions of triplets are active, most of them outside the candidates.) Per evaluation: O(n²d/2 +
n_Ω·d + n·k·d²) flops, no loop over triplets (the radius test runs on a float32 Gram matrix with a
margin above its rounding error; the distances of the pairs it keeps are then formed in float32 for
large n, the sums over triplets and the gradient's contraction in float64). The points are taken in order of
decreasing radius, so that max(r_i, r_l) is the radius of the earlier point and only the upper
triangle of the pair matrix is formed; the impostor part of the gradient is contracted as a sparse
weighted graph Laplacian (O(n_Ω·d) instead of O(n_Ω·d²)).

Nothing here is certified and nothing needs to be: the working set handed to the
interior-point method may be any set of triplets (its exactness argument and the certificate
of :func:`sdpembed.problems.lmnn.lmnn_dual_bound` do not depend on how it was chosen). The
multipliers μ·φ'_η(z_t) of the last stage are an estimate of the optimal α of the dual of
Sec. 2.1.3.

References
----------
.. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
   Pennsylvania, 2007. Implemented here: the loss (2.11) in the factor L of (2.9), with a smoothed
   hinge, and its gradient (2.14).
.. [2] J. Nocedal and S. J. Wright, "Numerical optimization", 2nd ed., Springer, 2006. Implemented here: the
   cubic interpolation (3.59) of the scaled start.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse

from ..._deadline import Deadline
from ...graphs import float32_test_unit, radius_hinges
from ..lbfgs import minimize_lbfgs

__all__ = ["WarmStart", "smoothed_hinge", "warm_start_metric"]

#: Points from which :func:`warm_start_metric` evaluates distances and hinges in float32 by default.
_FLOAT32_FROM = 2000

#: A scan along the ray of ``_FullLoss.along_ray`` at scale c keeps the candidate pairs of every scale down to
#: c/_RAY_COVER (two halvings of ``_ray_scale``).
_RAY_COVER = 4.0

#: Candidate pairs whose exact distances are formed at once (temporaries that stay in cache: one large
#: difference array at once costs several times as much, mostly in page faults of fresh memory).
_PAIR_CHUNK = 1024


def smoothed_hinge(z: np.ndarray, eta: float) -> tuple[np.ndarray, np.ndarray]:
    """φ_η(z) and φ'_η(z) of the Huber-smoothed hinge (module docstring); η > 0."""
    value = np.where(z >= eta, z - 0.5 * eta, np.where(z > 0.0, 0.5 * z * z / eta, 0.0))
    slope = np.clip(z / eta, 0.0, 1.0)
    return value, slope


@dataclass
class WarmStart:
    """Outcome of :func:`warm_start_metric`.

    ``M`` = LᵀL the approximate minimiser of (2.11); ``loss`` its exact loss (2.11) over all
    triplets; ``triplets`` those with hinge argument z > −``keep`` at M and ``z`` their
    arguments; ``alpha`` = μ·φ'_η(z), the multiplier estimate; ``iterations`` L-BFGS steps
    in total; ``evaluations`` loss-and-gradient evaluations; ``seconds`` wall time;
    ``history`` per stage (η, L-BFGS steps, smoothed loss) and the start's ``scale`` c (``scale_start``).
    """

    M: np.ndarray
    L: np.ndarray
    loss: float
    triplets: np.ndarray
    z: np.ndarray
    alpha: np.ndarray
    iterations: int
    evaluations: int
    seconds: float
    history: dict = field(default_factory=dict)


class _FullLoss:
    """The smoothed loss (2.11) over *all* triplets as a function of L, streamed in blocks of anchors.

    A triplet (i, j, l) can have a positive hinge argument z_ijl = 1 + ‖L u_ij‖² − ‖L(x_i − x_l)‖²
    only if l lies within the radius r_i = 1 + max_j ‖L u_ij‖² of i in the metric (the
    impostor test of pylmnn). So for a block of anchors i the n distances ‖L(x_i − x_l)‖² are
    formed through the Gram matrix of the mapped, centred points, the pairs (i, l) inside the
    radius with y_l ≠ y_i are picked out, and only their k hinge arguments are formed. The
    push part of the gradient matrix G of (2.14) is contracted through per-pair weights: with
    Ω_il = Σ_j φ'(z_ijl) (impostor pairs) and ω_ij = Σ_l φ'(z_ijl) (target pairs),

        Σ_t φ'(z_t) (C_ij − C_il) = Σ_ij ω_ij u_ij u_ijᵀ − Σ_il Ω_il (x_i − x_l)(x_i − x_l)ᵀ,

    both sums together a graph Laplacian in the centred points Z with signed weights (+ω on the
    target pairs, −Ω on the impostor pairs): Zᵀ(diag(S1 + Sᵀ1) − S − Sᵀ)Z, S sparse. A pair (i, l)
    is a candidate for anchor i or for anchor l iff ‖L(x_i − x_l)‖² < max(r_i, r_l); with the
    points sorted by decreasing radius that is the radius of the earlier one, so only the upper
    triangle of the distance matrix is formed, and each unordered pair's exact distance once.
    Work per evaluation: O(n²d/2) for the distances plus O(n_Ω·d + n·d²); memory O(block_size)
    for the Gram blocks plus the candidate pairs; no loop over triplets.

    **Reusing the candidate pairs (exact).** Once L-BFGS takes small steps, an evaluation at a factor
    that moved by at most ``move`` (relative, Frobenius) from the previous one keeps its candidate
    pairs, taken within ``reach``·max(r_a, r_b) instead of max(r_a, r_b), with that factor L₀ and the
    radii r⁰. A later evaluation at L uses those pairs instead of the Gram pass if, with
    e_p = ‖(L − L₀)z_p‖, every point p has √(θ·r⁰_p) ≥ √r_p + e_p + max e (:meth:`_cache_holds`): then no
    pair left out can be inside a radius at L, so the loss and gradient are those of the full pass
    (to rounding). About a third of the evaluations of a large run reuse the pairs, at about half
    the cost of the full pass; the early, long steps never build a
    cache (a larger reach costs the full pass more pairs than it saves).

    The per-point test is what makes the cache pay: the global test σ_min(L L₀⁻¹)²·θ·r⁰ ≥ r needs a
    reach θ so large that the cache holds several times the pairs, and it still fails at most
    evaluations. Where the per-point test fails (its max e is the largest move of any point), the pairs
    it cannot clear are few: with σ_p = √(θ·r⁰_p) − √r_p − e_p, a pair is outside both radii at L once
    σ_a ≥ e_b and σ_b ≥ e_a; the others, up to ``n²/16``, are screened at L through Gram blocks (a pair (a, b)
    with e_b > σ_a against r_a only), and the cache holds if none of them is inside that radius without being a
    cached pair (:meth:`_risky_pairs_outside`).
    """

    def __init__(self, X: np.ndarray, y: np.ndarray, targets: np.ndarray, P: np.ndarray, mu: float, *,
                 block_size: int = 1 << 18, reach: float = 1.1, move: float = 0.03, dtype: type = np.float64):
        self.Z = X - X.mean(axis=0)
        n, k = targets.shape
        _, self.labels = np.unique(y, return_inverse=True)
        self.targets = targets
        self.target_rows, self.target_cols = np.repeat(np.arange(n), k), targets.ravel()
        self.target_indptr = np.arange(0, n * k + 1, k)                          # CSR rows i, columns targets[i]
        self.P, self.mu = P, mu
        self.target_diffs = (self.Z[:, None, :] - self.Z[targets]).reshape(n * k, -1)   # u_ij, rows (i, m)
        # the distances and hinges in ``dtype``: float32 halves the memory traffic of the pair gathers; the sums
        # over triplets and the gradient's contraction stay float64
        self.dtype = np.dtype(dtype)
        self.Z_dist, self.target_dist = self.Z.astype(self.dtype), self.target_diffs.astype(self.dtype)
        self.rows = max(1, block_size // n)
        self.eta = 1.0
        self.reach, self.move = float(reach), float(move)
        self.cache, self.last, self.reused, self.reused_pairwise = None, None, 0, 0
        self.ray = None

    def __call__(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        n, d = self.Z.shape
        L = x.reshape(d, d)
        ZL, d_target = self._mapped(L)
        radius = 1.0 + d_target.max(axis=1)
        if self._cache_holds(L, radius, ZL):
            self.reused += 1
            order, a, b, indptr = self.cache[:4]                                 # in the order of the reference
        else:
            small = self.last is not None and np.linalg.norm(L - self.last) <= self.move * np.linalg.norm(L)
            order, a, b = self._candidates(ZL, radius, self.reach if small else 1.0)
            indptr = np.concatenate([[0], np.cumsum(np.bincount(a, minlength=n))])
            self.cache = (order, a, b, indptr, L.copy(), np.sqrt(self.reach * radius)) if small else None
        self.last = L.copy()
        return self._loss_and_gradient(L, d_target, order, a, b, indptr, self._pair_distances(ZL[order], a, b))

    def along_ray(self, L0: np.ndarray, c: float) -> tuple[float, np.ndarray]:
        """The smoothed loss (2.11) and its gradient (flattened) at c·L₀, c > 0, as ``self(c * L0)``, with one
        scan for several scales.

        Along the ray every squared distance is c² times its value at L₀, so a pair (a, b) is inside
        max(r_a, r_b) = 1 + c²·max(T_a, T_b) at c (T_p = max_j ‖L₀u_pj‖²) iff ‖L₀w‖² < 1/c² + max(T_a, T_b): the
        candidate pairs of a scale c' ≤ c hold those of c. A scan at the scale c/``_RAY_COVER`` keeps its pairs
        and their distances at L₀, and every later scale down to it takes them, scaled by c², without a Gram pass
        or a gather (exact; for c a power of two, as in ``_ray_scale``, the scaled distances are those formed at
        c·L₀ to the last bit). The reuse cache of ``__call__`` is reset, as a scan at c·L₀ would leave it after a
        move of relative length above ``move``.
        """
        n, d = self.Z.shape
        ray = self.ray
        if ray is None or c < ray[1] or not np.array_equal(ray[0], L0):
            ZL, d_target = self._mapped(L0)
            low = c / _RAY_COVER
            order, a, b = self._candidates(low * ZL, 1.0 + (low * low) * d_target.max(axis=1), 1.0)
            indptr = np.concatenate([[0], np.cumsum(np.bincount(a, minlength=n))])
            ray = self.ray = (L0.copy(), low, order, a, b, indptr, self._pair_distances(ZL[order], a, b), d_target)
        L = c * L0
        self.last, self.cache = L.copy(), None
        order, a, b, indptr, D0, d_target = ray[2:]
        square = c * c
        return self._loss_and_gradient(L, square * d_target, order, a, b, indptr, square * D0)

    def _mapped(self, L: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The mapped centred points ZLᵀ and the target distances ‖L u_ij‖² (n × k), in ``dtype``."""
        L_dist = L.astype(self.dtype)
        UL = self.target_dist @ L_dist.T                                         # ‖L u_ij‖², one product
        return self.Z_dist @ L_dist.T, np.einsum("ij,ij->i", UL, UL).reshape(self.targets.shape)

    def _pair_distances(self, ZLs: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """‖L(x_a − x_b)‖² of the pairs (a, b) of rows of ``ZLs``, in ``dtype``, from differences in cache-sized
        chunks."""
        D_ab = np.empty(a.size, dtype=self.dtype)
        for start in range(0, a.size, _PAIR_CHUNK):
            t = slice(start, start + _PAIR_CHUNK)
            diff = ZLs[a[t]]
            diff -= ZLs[b[t]]
            D_ab[t] = np.einsum("ij,ij->i", diff, diff)
        return D_ab

    def _loss_and_gradient(self, L: np.ndarray, d_target: np.ndarray, order: np.ndarray, a: np.ndarray,
                           b: np.ndarray, indptr: np.ndarray, D_ab: np.ndarray) -> tuple[float, np.ndarray]:
        """The smoothed loss and its gradient (flattened) at L from the target distances and the candidate pairs
        (a, b) in the point order ``order`` (CSR row pointers ``indptr``) with their distances ``D_ab`` at L."""
        Z, mu, eta = self.Z, self.mu, self.eta
        n, k = self.targets.shape
        radius = 1.0 + d_target.max(axis=1)
        rs, Zs = radius[order], Z[order]
        forward, backward = D_ab < rs[a], D_ab < rs[b]                           # b inside the radius of a; a of b
        n_forward = int(forward.sum())
        i = np.concatenate([a[forward], b[backward]])                            # anchor (index space of a, b)
        i = order[i]
        D = np.concatenate([D_ab[forward], D_ab[backward]])
        H = 1.0 + d_target[i] - D[:, None]                                      # (pairs, k) hinge arguments
        T = np.clip(H, 0.0, eta)
        push = (float(np.sum(T * T, dtype=np.float64)) / (2.0 * eta)
                + float(np.sum(np.maximum(H - eta, 0.0), dtype=np.float64)))
        T /= eta                                                                # φ'(z)
        omega_target = np.stack([np.bincount(i, T[:, m], n) for m in range(k)], axis=1)
        Om = T.sum(axis=1, dtype=np.float64)                                    # impostor-pair weights Ω_il
        # Σ_ij ω_ij u_ij u_ijᵀ − Σ_il Ω_il (z_i − z_l)(z_i − z_l)ᵀ depends on each unordered pair only: signed
        # weights s = +ω_ij on the target pairs and −(Ω_ab + Ω_ba) on the candidate pairs, and
        # Σ s (z − z')(z − z')ᵀ = −(C + Cᵀ) with C = Zsᵀ(S − diag(S1 + Sᵀ1)/2)Zs, S sparse, in the order of the
        # candidate pairs' rows (Zᵀ B = Zsᵀ B[order]): O(nnz·d + n·d²) flops instead of O(n_Ω·d²) and O(n·k·d²),
        # one d × n × d product (the target pairs' pattern is fixed, their part S_target·Z formed in the
        # original order and permuted)
        w = np.zeros(a.size)
        w[forward] -= Om[:n_forward]
        w[backward] -= Om[n_forward:]
        S_target = scipy.sparse.csr_matrix((omega_target.ravel(), self.target_cols, self.target_indptr), shape=(n, n))
        S_pairs = scipy.sparse.csr_matrix((w, b, indptr), shape=(n, n))
        degree = np.bincount(self.target_rows, S_target.data, n) + np.bincount(self.target_cols, S_target.data, n)
        degree = degree[order]
        Y = (S_target @ Z)[order]
        degree += np.bincount(a, w, n) + np.bincount(b, w, n)
        Y += S_pairs @ Zs
        Y -= (0.5 * degree)[:, None] * Zs
        C = Zs.T @ Y
        G = (1.0 - mu) * self.P - mu * (C + C.T)                                # (2.14), smoothed
        loss = (1.0 - mu) * float(np.sum((L @ self.P) * L)) + mu * push
        return loss, (2.0 * L @ (0.5 * (G + G.T))).ravel()

    def _cache_holds(self, L: np.ndarray, radius: np.ndarray, ZL: np.ndarray) -> bool:
        """Whether the cached pairs hold every pair (a, b) with ‖L(x_a − x_b)‖² < max(r_a, r_b) at L (exact test).

        A pair left out at the reference factor L₀ has ‖L₀w‖ ≥ √(θ·max(r⁰_a, r⁰_b)), w = x_a − x_b, θ = ``reach``
        (the float32 test keeps a superset of the pairs inside θ·r⁰). At L, ‖Lw‖ ≥ ‖L₀w‖ − e_a − e_b with
        e_p = ‖(L − L₀)z_p‖; so with σ_p = √(θ·r⁰_p) − √r_p − e_p, the pair is outside both radii at L if σ_a ≥ e_b
        and σ_b ≥ e_a (then √(θ·r⁰_a) − e_a − e_b ≥ √r_a, and so for b). Every pair passes if σ_p ≥ max e for
        every point p; otherwise the pairs that do not pass are checked at L (:meth:`_risky_pairs_outside`).
        """
        if self.cache is None:
            return False
        L0, root0 = self.cache[4:6]
        E = self.Z @ (L - L0).T
        e = np.sqrt(np.einsum("ij,ij->i", E, E))
        root = np.sqrt(radius)
        sigma = root0 - root - e - 1e-9 * root
        if bool(np.all(sigma >= float(e.max()))):
            return True
        if self._risky_pairs_outside(ZL, radius, e, sigma):
            self.reused_pairwise += 1
            return True
        return False

    def _risky_pairs_outside(self, ZL: np.ndarray, radius: np.ndarray, e: np.ndarray, sigma: np.ndarray) -> bool:
        """Whether every pair (a, b) of different labels with e_b > σ_a (:meth:`_cache_holds`) that is inside r_a at
        L is a cached pair; False without forming any if there are more than n²/16 of them (an eighth of a scan's
        pairs).

        Inside r_a is the only test a listed pair needs: a pair left out of the cache can be inside r_a at L only if
        e_b > σ_a, and inside r_b only if e_a > σ_b, when it is listed as (b, a). The pairs are screened by the sign
        of one product each, as in :meth:`_candidates` (with a margin above its rounding, so the screen keeps a
        superset): the points b sorted by decreasing move e_b, anchor a's pairs are a prefix of that order, and the
        anchors are taken in order of decreasing prefix length, in blocks of prefixes at least half the block's
        width and at most as many products as a scan's block. The
        few pairs that pass the screen get their distances from differences in the evaluation's precision, with a
        relative margin of 10⁻⁵ above their rounding (a pair that close counts as inside)."""
        n = e.size
        by_move = np.argsort(-e, kind="stable")
        count = np.searchsorted(-e[by_move], -sigma, side="left")    # b = by_move[:count_a] have e_b > σ_a
        total = int(count.sum())
        if total > n * n // 16:
            return False
        anchors = np.argsort(-count, kind="stable")[:int(np.count_nonzero(count))]
        # ‖L(z_a − z_b)‖² < r_a ⇔ ⟨Lz_a, Lz_b⟩ − q_b/2 − (q_a − r_a)/2 > 0, with the margin of the product's
        # rounding and the relative one of the exact test below
        own, peer = _radius_test_rows(ZL, (1.0 + 1e-5) * radius, ZL.dtype)
        peer_moved = peer[by_move]                                   # columns in order of decreasing move
        # blocks of anchors whose prefixes are at least half the block's width (so at most half its products are
        # not needed) and of at most as many products as a scan's block
        half = np.searchsorted(-count[anchors], -(count[anchors] // 2), side="left")   # first prefix < width/2
        rows, cols = [], []
        start = 0
        while start < anchors.size:
            width = int(count[anchors[start]])                       # a superset of each anchor's prefix
            block = anchors[start:min(int(half[start]), start + max(self.rows, self.rows * n // width))]
            start += block.size
            near = own[block] @ peer_moved[:width].T > 0.0
            r, c = np.divmod(np.flatnonzero(near), width)
            rows.append(block[r])
            cols.append(by_move[c])
        a = np.concatenate(rows) if rows else np.empty(0, dtype=np.int64)
        b = np.concatenate(cols) if cols else np.empty(0, dtype=np.int64)
        other = self.labels[a] != self.labels[b]
        a, b = a[other], b[other]
        diff = ZL[a]
        diff -= ZL[b]
        inside = np.einsum("ij,ij->i", diff, diff) < (1.0 + 1e-5) * radius[a]
        if not inside.any():
            return True
        # the cached pairs (a', b'), a' < b' in the reference order, are listed by a' and then b' (the scan's
        # row-major order): their keys a'·n + b' are sorted
        order, ca, cb = self.cache[:3]
        rank = np.empty(n, dtype=np.int64)
        rank[order] = np.arange(n)
        ra, rb = rank[a[inside]], rank[b[inside]]
        query = np.minimum(ra, rb) * n + np.maximum(ra, rb)
        keys = ca.astype(np.int64) * n + cb
        pos = np.minimum(np.searchsorted(keys, query), keys.size - 1)
        return bool(keys.size) and bool(np.all(keys[pos] == query))

    def _candidates(self, ZL: np.ndarray, radius: np.ndarray,
                    reach: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The points in order of decreasing radius and the pairs (a, b), a < b in that order, a ascending, with
        different labels and ‖L(x_a − x_b)‖² < ``reach``·r_a by a float32 test with a margin (a superset)."""
        n = ZL.shape[0]
        # Points in order of decreasing radius: for a < b in that order max(r_a, r_b) = r_a, so the upper
        # triangle of the pair matrix with the row's radius holds every pair (a, b) inside the radius of a or
        # of b — half the Gram matrix of the all-rows test, and each pair's exact distance formed once.
        order = np.argsort(-radius, kind="stable")
        left, right = _radius_test_rows(ZL[order], reach * radius[order], np.float32)
        labels = self.labels[order]
        rows, cols = [], []
        # one product block and one mask for all blocks: a fresh array of a block's size is fresh memory
        # (page faults) at every block
        products = np.empty(min(self.rows, n) * n, dtype=np.float32)
        inside = np.empty(products.size, dtype=bool)
        for start in range(0, n, self.rows):
            stop = min(start + self.rows, n)
            size = (stop - start) * (n - start)
            G = products[:size].reshape(stop - start, n - start)
            np.matmul(left[start:stop], right[start:].T, out=G)                 # for b ≥ start only
            np.greater(products[:size], 0.0, out=inside[:size])
            r, c = np.divmod(np.flatnonzero(inside[:size]), n - start)
            r += start
            c += start
            keep = (c > r) & (labels[r] != labels[c])
            rows.append(r[keep])
            cols.append(c[keep])
        return order, np.concatenate(rows), np.concatenate(cols)


def _radius_test_rows(ZL: np.ndarray, radius: np.ndarray, dtype: type) -> tuple[np.ndarray, np.ndarray]:
    """Rows whose products decide ‖L(z_a − z_b)‖² < r_a with a margin above their rounding (a superset): the
    product of row a of the first and row b of the second is > 0 for every such pair.

    ‖L(z_a − z_b)‖² < r_a ⇔ ⟨Lz_a, Lz_b⟩ − q_b/2 − (q_a − r_a)/2 > 0 (q = ‖Lz‖²), one product of the rows
    [Lz_a, 1, slack − (q_a − r_a)/2] and [Lz_b, −q_b/2, 1] in ``dtype`` (no pass over a block to subtract), with
    the slack 4(d + 2)·ε·max q above its rounding (|fl(⟨a, b⟩) − ⟨a, b⟩| ≤ 2d·ε·‖a‖‖b‖ ≤ 2d·ε·max q; two more
    terms in the augmented products). The test is homogeneous (Lz of degree 1, q and r of degree 2), so it is
    taken in units where its largest entry is about 2⁶⁴, a power of two (exact): no entry or product overflows
    float32 (‖Lz‖² of points at 10²⁰ would) and none is lost to underflow.
    """
    n, d = ZL.shape
    q = np.einsum("ij,ij->i", ZL, ZL, dtype=np.float64)
    slack = 4.0 * (d + 2) * float(np.finfo(dtype).eps) * float(q.max(initial=0.0))
    offset = slack - 0.5 * (q - radius)
    top = float(max(q.max(initial=0.0), np.abs(offset).max(initial=0.0)))
    unit = float32_test_unit(top)
    left = np.empty((n, d + 2), dtype=dtype)
    right = np.empty((n, d + 2), dtype=dtype)
    np.multiply(ZL, unit, out=left[:, :d], casting="unsafe")
    right[:, :d] = left[:, :d]
    left[:, d] = 1.0
    left[:, d + 1] = offset * (unit * unit) + 1e-30
    right[:, d] = (-0.5 * unit * unit) * q
    right[:, d + 1] = 1.0
    return left, right


def _ray_scale(loss, L0: np.ndarray, *, halvings: int = 8) -> tuple[float, int]:
    """The scale c of the start cL₀ of the first stage (module docstring, "A scaled start") and the evaluations
    of ``loss(L0, c)`` (value and gradient in L at cL₀, flattened; ``_FullLoss.along_ray``) it took.

    c is halved from 1 while the slope ⟨∇ε(cL₀), L₀⟩ of the loss along the ray is positive; the minimiser of the
    cubic through the loss and slope at the last two scales c₀ < c₁ (the slope changes sign between them; the
    loss is convex in c², so once) is kept at least a tenth of the bracket from its ends. c = 1 when the slope at
    L₀ is not positive (no smaller scale is better), and the last scale tried when it stays positive.
    """
    direction = L0.ravel()
    evaluations = 0

    def along(c: float) -> tuple[float, float]:
        nonlocal evaluations
        evaluations += 1
        value, gradient = loss(L0, c)
        return float(value), float(gradient @ direction)

    c0, (f0, g0) = 1.0, along(1.0)
    if not g0 > 0.0:
        return 1.0, evaluations
    while g0 > 0.0:
        if evaluations > halvings:
            return c0, evaluations
        c1, f1, g1 = c0, f0, g0
        c0 = 0.5 * c1
        f0, g0 = along(c0)
    # (3.59) of Nocedal & Wright on [c0, c1]: g0 ≤ 0 < g1
    d1 = g0 + g1 - 3.0 * (f0 - f1) / (c0 - c1)
    d2 = float(np.sqrt(max(d1 * d1 - g0 * g1, 0.0)))
    c = c1 - (c1 - c0) * (g1 + d2 - d1) / (g1 - g0 + 2.0 * d2)
    width = c1 - c0
    return float(min(max(c, c0 + 0.1 * width), c1 - 0.1 * width)), evaluations


def _scan(X: np.ndarray, y: np.ndarray, targets: np.ndarray, M: np.ndarray,
          threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """Every triplet with hinge argument > threshold at M and that argument (:func:`radius_hinges`: the
    triplets of :func:`iter_hinges`, through the radius filter)."""
    return radius_hinges(X, y, targets, M, threshold=threshold)


def warm_start_metric(
    X: np.ndarray,
    y: np.ndarray,
    targets: np.ndarray,
    mu: float,
    P: np.ndarray,
    *,
    L0: np.ndarray | None = None,
    etas: tuple[float, ...] = (0.3, 0.03),
    stage_iter: int = 30,
    keep: float = 0.5,
    ftol: float = 1e-6,
    scale_start: bool = True,
    first_step: float | None = 0.05,
    time_budget: Deadline | None = None,
    dtype: type | None = None,
    verbose: bool | int = False,
) -> WarmStart:
    """Approximately minimise (2.11) by L-BFGS on the smoothed loss in L (module docstring).

    Parameters
    ----------
    X, y, targets
        Points (rows), labels and target neighbours of the instance.
    mu : float
        The weight μ of (2.8)/(2.11), in (0, 1].
    P : ndarray of shape (d, d)
        The pull matrix Σ_{j⇝i} C_ij.
    L0 : ndarray of shape (d, d), optional
        Starting factor; the identity (the Euclidean metric) by default.
    etas : tuple of float
        Smoothing widths η of the stages, in units of the margin 1 of (2.6) (decreasing). Two stages
        (0.3, 0.03) reach a start as good for the interior-point method as three (1, 0.1, 0.02) in
        fewer evaluations, and one stage (0.03,) of up to twice the steps, from the scaled start, in fewer
        still (what :func:`~sdpembed.solvers.lmnn.fast.solve_lmnn_fast` uses before its working-set rounds).
    stage_iter : int
        L-BFGS steps per stage at most.
    keep : float
        The returned ``triplets`` are those with hinge argument > −keep at the final metric.
    ftol : float
        Relative-decrease tolerance of each L-BFGS stage.
    scale_start : bool
        Start the first stage from cL0, c the best scale along the ray of L0 for its smoothed loss
        (module docstring, "A scaled start"); its evaluations count in ``evaluations``.
    first_step : float or None
        Length of each stage's first L-BFGS step relative to ‖L‖_F (module docstring); ``None``: the plain
        L-BFGS unit step.
    time_budget : Deadline, optional
        The stages' share of the run's time budget (``sdpembed._deadline.Deadline``): no new stage starts
        after it has passed.
    dtype : numpy float type, optional
        Precision of the distances and hinge arguments of every evaluation (:class:`_FullLoss`); the sums and
        the gradient's contraction are float64 either way, and the returned ``loss``, ``triplets`` and ``z``
        come from an exact float64 scan. By default float32 from ``_FLOAT32_FROM`` points on, where the pair
        gathers' memory traffic dominates an evaluation, and float64 below, where it does not and the path then
        does not depend on the rounding of float32.
    verbose : bool or int
        One line per stage.

    Returns
    -------
    WarmStart
    """
    start = time.perf_counter()
    X = np.asarray(X, dtype=np.float64)
    d = X.shape[1]
    L = np.eye(d) if L0 is None else np.array(L0, dtype=np.float64)
    if L.shape != (d, d):
        raise ValueError(f"L0 must have shape ({d}, {d}), got {L.shape}")
    if not etas or any(not (np.isfinite(e) and e > 0.0) for e in etas):
        raise ValueError(f"etas must be a non-empty sequence of positive numbers, got {etas!r}")
    if not (np.isfinite(keep) and keep >= 0.0):
        raise ValueError(f"keep must be a non-negative number, got {keep!r}")
    if first_step is not None and not (np.isfinite(first_step) and first_step > 0.0):
        raise ValueError(f"first_step must be a positive number or None, got {first_step!r}")
    history: dict[str, list] = {key: [] for key in ("eta", "iterations", "smoothed_loss")}
    iterations = evaluations = 0
    if dtype is None:
        dtype = np.float32 if X.shape[0] >= _FLOAT32_FROM else np.float64
    problem = _FullLoss(X, y, np.asarray(targets, dtype=np.int64), P, mu, dtype=dtype)
    if scale_start:
        problem.eta = float(etas[0])
        scale, evaluations = _ray_scale(problem.along_ray, L)
        on_ray = (L, scale)           # the first stage starts at scale·L₀, a point of the ray the scan covers
        L = scale * L
        history["scale"] = scale
    else:
        on_ray = None
    for eta in etas:
        problem.eta = float(eta)
        # L-BFGS in the variable L/σ: its first step, of unit length, is first_step·‖L‖ long in L (σ = 1: unit)
        sigma = first_step * float(np.linalg.norm(L)) if first_step is not None else 0.0
        sigma = sigma if sigma > 0.0 else 1.0

        def scaled(x: np.ndarray, sigma: float = sigma) -> tuple[float, np.ndarray]:
            nonlocal on_ray
            if on_ray is not None:    # the stage's start (L-BFGS evaluates it first), at the ray's scaled distances
                value, gradient = problem.along_ray(*on_ray)
                on_ray = None
            else:
                value, gradient = problem(sigma * x)
            return value, sigma * gradient

        result = minimize_lbfgs(scaled, L.ravel() / sigma, max_iter=stage_iter, ftol=ftol, gtol=0.0, memory=10)
        L = sigma * result.x.reshape(d, d)
        iterations += result.nit
        evaluations += result.nfev
        for key, value in (("eta", eta), ("iterations", result.nit), ("smoothed_loss", result.fun)):
            history[key].append(value)
        if verbose:
            print(f"warm stage eta {eta:7.3g}  lbfgs {result.nit:4d} ({result.status}, {result.nfev} evaluations)  "
                  f"smoothed loss {result.fun:.8g}  {time.perf_counter() - start:7.2f} s", flush=True)
        if time_budget is not None and time_budget.passed():
            break
    M = L.T @ L
    M = 0.5 * (M + M.T)
    triplets, z = _scan(X, y, targets, M, -keep)          # one exact scan of every hinge (2.10)
    positive = z > 0.0
    loss = (1.0 - mu) * float(np.sum(P * M)) + mu * float(z[positive].sum())
    _, slope = smoothed_hinge(z, history["eta"][-1])
    return WarmStart(M=M, L=L, loss=loss, triplets=triplets, z=z, alpha=mu * slope, iterations=iterations,
                     evaluations=evaluations, seconds=time.perf_counter() - start, history=history)
