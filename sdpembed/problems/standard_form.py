"""The standard form of every problem, the SDP that :mod:`sdpembed.sdpa` writes in SDPA's sparse format.

Every sdpembed problem is stated here as

    minimise C • X   s.t.   A_k • X = b_k  (k = 1..m),   X = blockdiag(V, s) ⪰ 0,

V the problem's matrix variable (P, M, K or S of the file-contract table in docs/grading.md; for ``lmnn_multi``,
whose variable is a stack of C matrices, V = blockdiag(M^1, …, M^C), the first C blocks of X) and s ≥ 0
the slack variables of its inequalities and absolute values (one diagonal block). One function per
problem, ``form(instance, max_entries) -> StandardForm``, is the ``sdpa_form`` of its
:class:`~sdpembed.registry.ProblemSpec`: :func:`box_trace_form` (NuMax (4) and NuMax-Class (7)),
:func:`lmnn_form`, :func:`lmnn_multi_form`, :func:`mvu_form` and :func:`mvu_oos_form`. Each refuses
(ValueError) an SDP of more than ``max_entries`` entries before forming any of them. :mod:`sdpembed.sdpa`
turns a form into SDPA's dual problem (Y = X, F_0 = −C, F_k = A_k, c = b), writes and reads the files.

References
----------
.. [1] C. Hegde, A. C. Sankaranarayanan, W. Yin and R. G. Baraniuk, "NuMax: A convex approach for
   learning near-isometric linear embeddings", IEEE Transactions on Signal Processing 63(22),
   6109–6121, 2015. Implemented here: the SDPs (4) and (7) in standard form.
.. [2] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
   Pennsylvania, 2007. Implemented here: the LMNN SDP of Sec. 2.1.3, the multi-metric SDP of
   Sec. 2.1.8 (2.17), the MVU SDPs of Sec. 3.1.4, 3.1.6 and 3.1.11 and the out-of-sample SDP of
   Sec. 3.1.10, in standard form.
.. [3] B. Borchers, "SDPLIB 1.2, a library of semidefinite programming test problems", Optimization
   Methods and Software 11(1–4), 683–690, 1999. The SDPA format these forms are written in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["StandardForm", "box_trace_form", "lmnn_form", "lmnn_multi_form", "mvu_form", "mvu_oos_form"]

#: Upper-triangle entries formed per chunk of dense outer products.
_CHUNK_ELEMENTS = 1 << 22


class _Entries:
    """Collects entries (matno, block, i, j, value), 0-based i ≤ j, of the standard form's C and A_k."""

    def __init__(self) -> None:
        self._parts: list[tuple[np.ndarray, ...]] = []

    def add(self, matno: object, block: int, i: object, j: object, value: object) -> None:
        matno, i, j, value = np.broadcast_arrays(np.asarray(matno, dtype=np.int64), np.asarray(i, dtype=np.int64),
                                                 np.asarray(j, dtype=np.int64), np.asarray(value, dtype=np.float64))
        keep = value != 0.0
        lo, hi = np.minimum(i, j)[keep], np.maximum(i, j)[keep]
        self._parts.append((matno[keep].ravel(), np.full(lo.size, block, dtype=np.int64), lo.ravel(), hi.ravel(),
                            value[keep].ravel()))

    def add_quadratic(self, matno: np.ndarray, block: int, U: np.ndarray, W: np.ndarray | None = None,
                      scale: float = 1.0) -> None:
        """A_k = s·u_k u_kᵀ (or w_k w_kᵀ − u_k u_kᵀ) for the rows of U (and W), s = ``scale``, upper
        triangle, in chunks of rows."""
        n = U.shape[1]
        a, b = np.triu_indices(n)
        rows = max(1, _CHUNK_ELEMENTS // max(a.size, 1))
        for start in range(0, U.shape[0], rows):
            Uc = U[start:start + rows]
            values = Uc[:, a] * Uc[:, b]
            if W is not None:
                Wc = W[start:start + rows]
                values = Wc[:, a] * Wc[:, b] - values
            elif scale != 1.0:
                values *= scale
            k, t = np.nonzero(values)
            self.add(matno[start:start + rows][k], block, a[t], b[t], values[k, t])

    def add_dense(self, matno: int, block: int, A: np.ndarray) -> None:
        """One symmetric matrix, upper triangle."""
        a, b = np.triu_indices(A.shape[0])
        self.add(matno, block, a, b, A[a, b])

    def count(self) -> int:
        return sum(part[0].size for part in self._parts)

    def arrays(self) -> tuple[np.ndarray, ...]:
        if not self._parts:
            return tuple(np.empty(0, dtype=np.int64) for _ in range(4)) + (np.empty(0),)
        return tuple(np.concatenate(column) for column in zip(*self._parts, strict=True))


@dataclass
class StandardForm:
    """The standard form of one instance: C (matno 0) and A_k (matno k) entries, b, blocks, and the words."""

    entries: _Entries
    b: np.ndarray
    block_sizes: tuple[int, ...]
    statement: str
    blocks: tuple[str, ...]


def _guard(entries: int, max_entries: int, what: str) -> None:
    """Refuse (ValueError) a file of more than ``max_entries`` entries before forming any of them."""
    if entries > max_entries:
        raise ValueError(f"the SDPA file of this {what} would have about {entries:,} entries, more than "
                         f"max_entries={max_entries:,} (SDPA states the SDP literally, without span reduction)")


def box_trace_form(instance: Any, max_entries: int) -> StandardForm:
    """NuMax (4) and NuMax-Class (7): min tr P s.t. lo_k ≤ v_kᵀPv_k ≤ hi_k, P ⪰ 0.

    Constraint k (k = 1..S): v_kv_kᵀ • P − s_k = lo_k when lo_k is finite (s_k = v_kᵀPv_k − lo_k ≥ 0),
    otherwise v_kv_kᵀ • P + s_k = hi_k. Constraint S + q, one per two-sided secant k: s_k + t_k = hi_k − lo_k
    (t_k = hi_k − v_kᵀPv_k ≥ 0). C = blockdiag(I, 0).
    """
    _guard(instance.n_constraints * (instance.dim * (instance.dim + 1) // 2 + 3), max_entries, instance.problem)
    V = np.asarray(instance.secant_matrix, dtype=np.float64)
    lo, hi = instance.bounds()
    S, N = V.shape
    has_lo = np.isfinite(lo)
    both = np.flatnonzero(has_lo & np.isfinite(hi))
    n_slack = S + both.size
    out = _Entries()
    out.add(0, 1, np.arange(N), np.arange(N), 1.0)                                   # C: tr P
    k = np.arange(1, S + 1)
    out.add_quadratic(k, 1, V)                                                        # v_k v_kᵀ • P
    out.add(k, 2, np.arange(S), np.arange(S), np.where(has_lo, -1.0, 1.0))            # ∓ s_k
    q = S + 1 + np.arange(both.size)
    out.add(q, 2, both, both, 1.0)                                                    # s_k + t_k
    out.add(q, 2, S + np.arange(both.size), S + np.arange(both.size), 1.0)
    b = np.concatenate([np.where(has_lo, lo, hi), hi[both] - lo[both]])
    statement = ("minimise tr P s.t. v_k'Pv_k >= lo_k and/or <= hi_k for the S = "
                 f"{S} unit secants v_k (rows of the instance's secants, all pairs of X in point form), P >= 0 (PSD)")
    blocks = (f"block 1 ({N} x {N}): P",
              f"block 2 (diagonal, {n_slack}): s_k = v_k'Pv_k - lo_k (or hi_k - v_k'Pv_k when lo_k = -inf), k = 1..{S};"
              f" then t_k = hi_k - v_k'Pv_k for the {both.size} two-sided secants")
    return StandardForm(out, b, (N, -n_slack), statement, blocks)


def lmnn_form(instance: Any, max_entries: int) -> StandardForm:
    """LMNN, the SDP of thesis Sec. 2.1.3 on all triplets t = (i, j, l):
    (C_il − C_ij) • M + ξ_t − σ_t = 1 (constraint (1) with its surplus σ_t), ξ, σ ≥ 0, M ⪰ 0, and
    C = blockdiag((1 − μ)P, μ·1 on ξ, 0 on σ), P = Σ_{j⇝i} C_ij the pull matrix (2.14)."""
    _guard(instance.n_triplets * (instance.dim * (instance.dim + 1) // 2 + 3), max_entries, "lmnn instance")
    X = np.asarray(instance.X, dtype=np.float64)
    triplets = instance.triplets()
    T, d = triplets.shape[0], instance.dim
    out = _Entries()
    out.add_dense(0, 1, (1.0 - instance.mu) * np.asarray(instance.pull_matrix))      # pull term tr(MP)
    out.add(0, 2, np.arange(T), np.arange(T), instance.mu)                           # μ Σ ξ
    k = np.arange(1, T + 1)
    U = X[triplets[:, 0]] - X[triplets[:, 1]]                                        # x_i − x_j
    W = X[triplets[:, 0]] - X[triplets[:, 2]]                                        # x_i − x_l
    out.add_quadratic(k, 1, U, W)                                                    # (C_il − C_ij) • M
    out.add(k, 2, np.arange(T), np.arange(T), 1.0)                                   # + ξ_t
    out.add(k, 2, T + np.arange(T), T + np.arange(T), -1.0)                          # − σ_t
    statement = ("minimise (1-mu) sum_{j->i} d_M(i,j) + mu sum_t xi_t s.t. d_M(i,l) - d_M(i,j) >= 1 - xi_t for the "
                 f"T = {T} triplets t = (i, j, l), j a target of i, y_l != y_i (rows of targets), xi >= 0, M >= 0 "
                 f"(PSD); mu = {instance.mu:.17g}")
    blocks = (f"block 1 ({d} x {d}): M",
              f"block 2 (diagonal, {2 * T}): xi_t, t = 1..{T}, then the surpluses "
              "sigma_t = d_M(i,l) - d_M(i,j) - 1 + xi_t; triplets ordered by i, then by the column of j in "
              "targets[i], then by l")
    return StandardForm(out, np.ones(T), (d, -2 * T), statement, blocks)


def lmnn_multi_form(instance: Any, max_entries: int) -> StandardForm:
    """Multi-metric LMNN, the SDP after thesis (2.17) on all triplets t = (i, j, l), one metric M^c per
    class or per group g of the instance's ``metric_groups`` (blocks 1..C of X):
    C_il • M^{g_l} − C_ij • M^{g_j} + ξ_t − σ_t = 1 (constraint (1) with its surplus σ_t; with metrics by
    class g_j = y_i ≠ y_l, so the two terms lie in different blocks; with other groups they may share
    one), ξ, σ ≥ 0, M^c ⪰ 0, and C = blockdiag((1 − μ)P_1, …, (1 − μ)P_C, μ·1 on ξ, 0 on σ), P_c the
    pull matrix of the target pairs (i, j) with g_j = c."""
    C, d = instance.n_blocks, instance.dim
    _guard(instance.n_triplets * (d * (d + 1) + 3), max_entries, "lmnn_multi instance")
    X = np.asarray(instance.X, dtype=np.float64)
    triplets = instance.triplets()
    T, blk = triplets.shape[0], instance.block
    out = _Entries()
    for c, P in enumerate(instance.pull_matrices()):
        out.add_dense(0, 1 + c, (1.0 - instance.mu) * P)                               # pull term tr(M^c P_c)
    out.add(0, C + 1, np.arange(T), np.arange(T), instance.mu)                         # μ Σ ξ
    k = np.arange(1, T + 1)
    U = X[triplets[:, 0]] - X[triplets[:, 1]]                                          # x_i − x_j
    W = X[triplets[:, 0]] - X[triplets[:, 2]]                                          # x_i − x_l
    for c in range(C):
        near, far = blk[triplets[:, 1]] == c, blk[triplets[:, 2]] == c
        out.add_quadratic(k[far], 1 + c, W[far])                                       # C_il • M^{g_l}
        out.add_quadratic(k[near], 1 + c, U[near], scale=-1.0)                         # − C_ij • M^{g_j}
    out.add(k, C + 1, np.arange(T), np.arange(T), 1.0)                                 # + ξ_t
    out.add(k, C + 1, T + np.arange(T), T + np.arange(T), -1.0)                        # − σ_t
    by_class = instance.metric_groups is None
    g = "y" if by_class else "g"
    owner = "classes" if by_class else "groups of metric_groups (g_a: the metric of point a)"
    statement = (f"minimise (1-mu) sum_{{j->i}} d_{{{g}_j}}(i,j) + mu sum_t xi_t s.t. d_{{{g}_l}}(i,l) - "
                 f"d_{{{g}_j}}(i,j) >= 1 - xi_t for the T = {T} triplets t = (i, j, l), j a target of i, y_l != y_i "
                 f"(rows of targets), xi >= 0, M^c >= 0 (PSD) for the C = {C} {owner}, "
                 f"d_c(a,b) = (x_a - x_b)'M^c(x_a - x_b); mu = {instance.mu:.17g}")
    blocks = tuple(f"block {1 + c} ({d} x {d}): M^{1 + c}, the metric of the "
                   + (f"class {instance.classes[c]!s}" if by_class else f"group {c}")
                   + f" (block {c} of the solution's M)" for c in range(C))
    blocks += (f"block {C + 1} (diagonal, {2 * T}): xi_t, t = 1..{T}, then the surpluses "
               "sigma_t = d_{y_l}(i,l) - d_{y_j}(i,j) - 1 + xi_t; triplets ordered by i, then by the column of j "
               "in targets[i], then by l",)
    return StandardForm(out, np.ones(T), (d,) * C + (-2 * T,), statement, blocks)


#: Slack columns of the edge constraints of each MVU variant: 𝒜(K)_e + Σ sign·slack = D_e.
_MVU_SLACKS = {"inequality": (1.0,), "slack": (-1.0, 1.0)}


def mvu_form(instance: Any, max_entries: int) -> StandardForm:
    """MVU (thesis Sec. 3.1.4, 3.1.6, 3.1.11) as min −w tr K (+ ω Σ(ξ⁺ + ξ⁻) for slack), w = trace_weight:
    (E_ii + E_jj − E_ij − E_ji) • K (+ s_e | − ξ⁺_e + ξ⁻_e) = D_e for every edge e = (i, j), 11ᵀ • K = 0, K ⪰ 0."""
    n, E = instance.n, instance.n_constraints
    _guard(5 * E + n * (n + 1) // 2, max_entries, "mvu instance")
    i, j = instance.edges[:, 0], instance.edges[:, 1]
    signs = _MVU_SLACKS.get(instance.variant, ())
    out = _Entries()
    out.add(0, 1, np.arange(n), np.arange(n), -instance.trace_weight)                 # C = −w I
    k = np.arange(1, E + 1)
    out.add(k, 1, i, i, 1.0)                                                         # K_ii + K_jj − 2K_ij (3.13)
    out.add(k, 1, j, j, 1.0)
    out.add(k, 1, i, j, -1.0)
    for column, sign in enumerate(signs):
        slack = column * E + np.arange(E)
        out.add(k, 2, slack, slack, sign)
        out.add(0, 2, slack, slack, instance.omega or 0.0)                           # ω Σ(ξ⁺ + ξ⁻) (slack only)
    a, b = np.triu_indices(n)
    out.add(E + 1, 1, a, b, 1.0)                                                     # Σ K_ab = 0 (3.14)
    sizes = (n, -len(signs) * E) if signs else (n,)
    objective = {"slack": f"(1 - omega) tr K - omega sum_e |xi_e| (omega = {instance.omega!r})",
                 "min_trace": "-tr K (i.e. minimise tr K)"}.get(instance.variant, "tr K")
    relation = {"inequality": "<= D_e", "slack": "= D_e + xi_e"}.get(instance.variant, "= D_e")
    statement = (f"MVU, variant {instance.variant}: maximise {objective} s.t. K_ii + K_jj - 2K_ij {relation} "
                 f"for the E = {E} edges e = (i, j) (constraints 1..E, in the order of the edges array), "
                 f"sum_ab K_ab = 0 (constraint {E + 1}), K >= 0 (PSD)")
    slack_words = {"inequality": f"s_e = D_e - (K_ii + K_jj - 2K_ij), e = 1..{E}",
                   "slack": f"xi+_e, e = 1..{E}, then xi-_e, with xi_e = xi+_e - xi-_e"}
    blocks = (f"block 1 ({n} x {n}): K",)
    if signs:
        blocks += (f"block 2 (diagonal, {len(signs) * E}): " + slack_words[instance.variant],)
    return StandardForm(out, np.concatenate([np.asarray(instance.sqdist, dtype=np.float64), [0.0]]), sizes, statement,
                 blocks)


def mvu_oos_form(instance: Any, max_entries: int) -> StandardForm:
    """The out-of-sample SDP (thesis Sec. 3.1.10): ŷ_iŷ_iᵀ • S − ξ⁺_i + ξ⁻_i = D_i (constraint (1) with
    ξ = ξ⁺ − ξ⁻), S_ab = δ_ab for a ≤ b < r (constraint (2)), S ⪰ 0; C = blockdiag(e_r e_rᵀ, 1)."""
    Y = np.asarray(instance.Y, dtype=np.float64)
    k_, r = Y.shape
    Y_hat = np.hstack([Y, -np.ones((k_, 1))])                                         # ŷ_i = (y_i, −1), (3.31)
    out = _Entries()
    out.add(0, 1, r, r, 1.0)                                                         # e_{r+1}ᵀ S e_{r+1}
    out.add(0, 2, np.arange(2 * k_), np.arange(2 * k_), 1.0)                         # Σ (ξ⁺ + ξ⁻) = Σ |ξ|
    k = np.arange(1, k_ + 1)
    out.add_quadratic(k, 1, Y_hat)
    out.add(k, 2, np.arange(k_), np.arange(k_), -1.0)
    out.add(k, 2, k_ + np.arange(k_), k_ + np.arange(k_), 1.0)
    a, b = np.triu_indices(r)
    out.add(k_ + 1 + np.arange(a.size), 1, a, b, np.where(a == b, 1.0, 0.5))         # S_ab (E_ab + E_ba)/2 • S
    statement = (f"minimise sum_i |xi_i| + S[r, r] s.t. yhat_i'S yhat_i = D_i + xi_i, yhat_i = (y_i, -1), i = 1..{k_} "
                 f"(constraints 1..{k_}), S[:r, :r] = I (constraints {k_ + 1}..{k_ + a.size}, upper triangle by rows), "
                 f"S >= 0 (PSD); r = {r}")
    blocks = (f"block 1 ({r + 1} x {r + 1}): S (the new point is S[:r, r])",
              f"block 2 (diagonal, {2 * k_}): xi+_i, i = 1..{k_}, then xi-_i, with xi_i = xi+_i - xi-_i")
    b_vec = np.concatenate([np.asarray(instance.sqdist, dtype=np.float64), (a == b).astype(np.float64)])
    return StandardForm(out, b_vec, (r + 1, -2 * k_), statement, blocks)
