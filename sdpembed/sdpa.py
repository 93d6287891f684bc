"""SDPA sparse format: every registered problem exported as a standard-form SDP, and SDPA files read back.

SDPA files (``.dat-s``; SDPA user's manual, Fujisawa et al.; the SDPLIB format note, Borchers
1999) describe the pair of problems

    (P)  minimise  cᵀx          s.t.  Σ_{i=1..m} x_i F_i − F_0 ⪰ 0
    (D)  maximise  F_0 • Y      s.t.  F_i • Y = c_i  (i = 1..m),   Y ⪰ 0

with block-diagonal symmetric F_i (a negative block size is a diagonal, "LP", block). The file
holds m, the number of blocks, the block sizes, c, and then one line ``matno blkno i j value`` per
nonzero entry of F_0 … F_m, upper triangle only (i ≤ j); lines starting with ``"`` or ``*`` at the
top are comments.

Every sdpembed problem is written here in the *standard form*

    minimise C • X   s.t.   A_k • X = b_k  (k = 1..m),   X = blockdiag(V, s) ⪰ 0,

V the problem's matrix variable (P, M, K or S of the README's file-contract table) and s ≥ 0 the slack
variables of its inequalities and absolute values (one diagonal block), and stored as SDPA's
(D): Y = X, F_0 = −C, F_k = A_k, c = b. So

* block 1 of SDPA's Y *is* the solution matrix of the instance, block 2 the slacks;
* SDPA's optimal value (that of (D), equal to (P)'s) is −f* for the minimisations (numax,
  numax_class, lmnn, mvu_oos) and +f* for MVU, a maximisation in every variant (``min_trace``
  is stated as max −tr K, as in :class:`~sdpembed.problems.MVUInstance`): it is the optimum of
  max −C • X, and :func:`sdpa_optimum` converts. Each file states this in its comments, with the
  value when the instance carries its ``optimum``.

The SDPs are stated literally (no span reduction), so a file has about S·N(N+1)/2 entries for S
dense secants in dimension N; :func:`to_sdpa` refuses more than ``max_entries``. Which entries
each problem produces is one function per problem in :data:`EXPORTERS`, keyed by the registry's
problem names (the registry itself stays free of the export code).

References
----------
.. [1] B. Borchers, "SDPLIB 1.2, a library of semidefinite programming test problems", Optimization
   Methods and Software 11(1–4), 683–690, 1999. Implemented here: the SDPA sparse format.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ._files import atomic_write
from .registry import PROBLEMS, get_problem

__all__ = ["EXPORTERS", "MAX_ENTRIES", "SDPAProblem", "export_sdpa", "read_sdpa", "sdpa_optimum", "to_sdpa",
           "write_sdpa"]

#: Most nonzero entries :func:`to_sdpa` writes by default (about 30 bytes each in the file).
MAX_ENTRIES = 20_000_000

#: Upper-triangle entries formed per chunk of dense outer products.
_CHUNK_ELEMENTS = 1 << 22


@dataclass(frozen=True)
class SDPAProblem:
    """An SDP in SDPA's convention: (P) min cᵀx s.t. Σ x_i F_i − F_0 ⪰ 0, (D) max F_0•Y s.t. F_i•Y = c_i.

    Attributes
    ----------
    c : ndarray of shape (m,)
    block_sizes : tuple of int
        SDPA's block structure; a negative size −s is a diagonal block of size s.
    matno, block, row, col : ndarray of int64
        Each nonzero entry: matrix number (0 for F_0), block, row and column (1-based, row ≤ col).
    value : ndarray of float64
    comments : tuple of str
        The file's comment lines (without the leading ``*``).
    """

    c: np.ndarray
    block_sizes: tuple[int, ...]
    matno: np.ndarray
    block: np.ndarray
    row: np.ndarray
    col: np.ndarray
    value: np.ndarray
    comments: tuple[str, ...] = field(default_factory=tuple)

    @property
    def m(self) -> int:
        """Number of constraints of (D) (free variables of (P))."""
        return int(self.c.shape[0])

    @property
    def n_entries(self) -> int:
        """Number of stored (upper-triangle, nonzero) entries."""
        return int(self.value.shape[0])

    def block_matrix(self, matno: int, block: int) -> np.ndarray:
        """Block ``block`` (1-based) of F_matno, dense: symmetric (s, s) or, for a diagonal block, its diagonal (s,)."""
        if not 1 <= block <= len(self.block_sizes):
            raise ValueError(f"block must lie in [1, {len(self.block_sizes)}], got {block}")
        size = self.block_sizes[block - 1]
        pick = (self.matno == matno) & (self.block == block)
        i, j, v = self.row[pick] - 1, self.col[pick] - 1, self.value[pick]
        if size < 0:
            out = np.zeros(-size)
            out[i] = v
            return out
        out = np.zeros((size, size))
        out[i, j] = v
        out[j, i] = v
        return out


# ------------------------------------------------------------------------------ building
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

    def add_quadratic(self, matno: np.ndarray, block: int, U: np.ndarray, W: np.ndarray | None = None) -> None:
        """A_k = u_k u_kᵀ (or w_k w_kᵀ − u_k u_kᵀ) for the rows of U (and W), upper triangle, in chunks of rows."""
        n = U.shape[1]
        a, b = np.triu_indices(n)
        rows = max(1, _CHUNK_ELEMENTS // max(a.size, 1))
        for start in range(0, U.shape[0], rows):
            Uc = U[start:start + rows]
            values = Uc[:, a] * Uc[:, b]
            if W is not None:
                Wc = W[start:start + rows]
                values = Wc[:, a] * Wc[:, b] - values
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
class _Form:
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


def _box_trace(instance: Any, max_entries: int) -> _Form:
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
    return _Form(out, b, (N, -n_slack), statement, blocks)


def _lmnn(instance: Any, max_entries: int) -> _Form:
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
    return _Form(out, np.ones(T), (d, -2 * T), statement, blocks)


#: Slack columns of the edge constraints of each MVU variant: 𝒜(K)_e + Σ sign·slack = D_e.
_MVU_SLACKS = {"inequality": (1.0,), "slack": (-1.0, 1.0)}


def _mvu(instance: Any, max_entries: int) -> _Form:
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
    return _Form(out, np.concatenate([np.asarray(instance.sqdist, dtype=np.float64), [0.0]]), sizes, statement,
                 blocks)


def _mvu_oos(instance: Any, max_entries: int) -> _Form:
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
    return _Form(out, b_vec, (r + 1, -2 * k_), statement, blocks)


#: The standard form of each registered problem, by registry name.
EXPORTERS: dict[str, Callable[[Any, int], _Form]] = {
    "numax": _box_trace,
    "numax_class": _box_trace,
    "lmnn": _lmnn,
    "mvu": _mvu,
    "mvu_oos": _mvu_oos,
}


def sdpa_optimum(problem: str, optimum: float) -> float:
    """The optimal value in SDPA's convention (max F_0•Y = min cᵀx) of an exported instance whose
    optimum (in the registry's sense) is ``optimum``: −optimum for minimisations, +optimum for MVU."""
    return float(optimum) if get_problem(problem).sense == "max" else -float(optimum)


def to_sdpa(instance: Any, *, max_entries: int = MAX_ENTRIES) -> SDPAProblem:
    """The instance as an :class:`SDPAProblem` (module docstring: standard form, F_0 = −C).

    Raises
    ------
    ValueError
        For an unregistered problem, one without an exporter, or more than ``max_entries`` entries.
    """
    problem = getattr(instance, "problem", "")
    spec = get_problem(problem)
    if problem not in EXPORTERS:
        raise ValueError(f"no SDPA export for problem {problem!r}; exporters exist for {sorted(EXPORTERS)} "
                         f"(registered: {sorted(PROBLEMS)})")
    form = EXPORTERS[problem](instance, max_entries)
    matno, block, row, col, value = form.entries.arrays()
    value = np.where(matno == 0, -value, value)                                      # F_0 = −C
    order = np.lexsort((col, row, block, matno))
    sign = "+" if spec.sense == "max" else "-"
    comments = [
        f"sdpembed {problem} instance as a standard-form SDP: {form.statement}.",
        "Standard form: minimise C.X s.t. A_k.X = b_k, X = blockdiag(blocks below) >= 0; stored as SDPA's dual "
        "problem (D) max F_0.Y s.t. F_k.Y = c_k, Y >= 0, with Y = X, F_0 = -C, F_k = A_k, c = b.",
        f"SDPA's optimal value (of (D) and of (P) min c'x) is {sign}f*, f* the optimum of the instance"
        + (" (MVU maximises)." if spec.sense == "max" else " (a minimisation)."),
        *(f"Y {words}" for words in form.blocks),
    ]
    optimum = getattr(instance, "optimum", None)
    if optimum is not None:
        comments.append(f"f* = {optimum!r} (stored with the instance); SDPA optimal value "
                        f"{sdpa_optimum(problem, optimum)!r}")
    return SDPAProblem(
        c=np.asarray(form.b, dtype=np.float64), block_sizes=tuple(int(s) for s in form.block_sizes),
        matno=matno[order], block=block[order], row=row[order] + 1, col=col[order] + 1, value=value[order],
        comments=tuple(comments),
    )


# ------------------------------------------------------------------------------- writing
def _entry_lines(problem: SDPAProblem, rows_per_chunk: int = 200_000) -> Iterator[str]:
    """The entry lines, formatted a chunk at a time (one ``%`` formatting per chunk, no loop over entries)."""
    columns = (problem.matno, problem.block, problem.row, problem.col, problem.value)
    for start in range(0, problem.n_entries, rows_per_chunk):
        stop = min(start + rows_per_chunk, problem.n_entries)
        table = np.empty((stop - start, 5), dtype=object)
        for index, column in enumerate(columns):
            table[:, index] = column[start:stop].tolist()
        yield ("%d %d %d %d %.17g\n" * (stop - start)) % tuple(table.ravel().tolist())


def write_sdpa(problem: SDPAProblem, path: str | os.PathLike) -> None:
    """Write ``problem`` as an SDPA sparse file (comments, m, blocks, sizes, c, entries; exact decimals),
    atomically (a partial file never appears at ``path``)."""
    with atomic_write(path) as temporary, open(temporary, "w", encoding="ascii", errors="replace") as fh:
        for line in problem.comments:
            fh.write(f"* {line}\n")
        fh.write(f"{problem.m}\n{len(problem.block_sizes)}\n")
        fh.write(" ".join(str(size) for size in problem.block_sizes) + "\n")
        fh.write(" ".join(map(repr, problem.c.tolist())) + "\n")
        for chunk in _entry_lines(problem):
            fh.write(chunk)


def export_sdpa(instance: Any, path: str | os.PathLike, *, max_entries: int = MAX_ENTRIES) -> SDPAProblem:
    """Write the instance to ``path`` in SDPA sparse format (:func:`to_sdpa`); returns what was written."""
    problem = to_sdpa(instance, max_entries=max_entries)
    write_sdpa(problem, path)
    return problem


# ------------------------------------------------------------------------------- reading
_PUNCTUATION = str.maketrans({ch: " " for ch in "{}(),"})


def _numbers(line: str) -> list[str]:
    """The leading numeric tokens of a line (SDPA allows ``{ } ( ) ,`` and trailing words such as ``= mDIM``)."""
    out = []
    for token in line.translate(_PUNCTUATION).split():
        try:
            float(token)
        except ValueError:
            break
        out.append(token)
    return out


def read_sdpa(path: str | os.PathLike) -> SDPAProblem:
    """Read an SDPA sparse file (any writer's: comments, punctuation, lower-triangle entries accepted).

    Raises
    ------
    ValueError
        If the file is not well formed: missing header, wrong counts, indices out of range,
        off-diagonal entries in a diagonal block, or an entry given twice.
    """
    name = os.fspath(path)
    try:
        lines = Path(path).read_text().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read SDPA file {name!r}: {exc}") from None
    comments, pos = [], 0
    while pos < len(lines) and (not lines[pos].strip() or lines[pos].lstrip()[0] in "\"*"):
        if lines[pos].strip():
            comments.append(lines[pos].lstrip()[1:].strip())
        pos += 1
    body = [line for line in lines[pos:] if line.strip()]
    if len(body) < 3:
        raise ValueError(f"SDPA file {name!r} has no header (m, number of blocks, block sizes, c)")
    try:
        m, n_blocks = int(_numbers(body[0])[0]), int(_numbers(body[1])[0])
        sizes = tuple(int(float(s)) for s in _numbers(body[2])[:n_blocks])
    except (IndexError, ValueError):
        raise ValueError(f"SDPA file {name!r}: the first lines must give m, the number of blocks and the block "
                         "sizes") from None
    if m < 1 or n_blocks < 1 or len(sizes) != n_blocks or 0 in sizes:
        raise ValueError(f"SDPA file {name!r}: bad header m={m}, nBlocks={n_blocks}, block sizes {sizes}")
    c_tokens, line = [], 3
    while len(c_tokens) < m and line < len(body):
        c_tokens += _numbers(body[line])
        line += 1
    if len(c_tokens) != m:
        raise ValueError(f"SDPA file {name!r}: the vector c needs {m} entries, found {len(c_tokens)}")
    try:
        table = np.loadtxt(body[line:], dtype=np.float64, ndmin=2) if line < len(body) else np.empty((0, 5))
    except ValueError as exc:
        raise ValueError(f"SDPA file {name!r}: every entry line needs 5 numbers (matno blkno i j value): "
                         f"{exc}") from None
    if table.shape[1] != 5:
        raise ValueError(f"SDPA file {name!r}: every entry line needs 5 numbers (matno blkno i j value), "
                         f"got {table.shape[1]}")
    matno, block, i, j = (table[:, col].astype(np.int64) for col in range(4))
    value = table[:, 4]
    if np.any(table[:, :4] != np.round(table[:, :4])):
        raise ValueError(f"SDPA file {name!r}: matno, blkno, i and j must be integers")
    if matno.size and (matno.min() < 0 or matno.max() > m or block.min() < 1 or block.max() > n_blocks):
        raise ValueError(f"SDPA file {name!r}: matno must lie in [0, {m}] and blkno in [1, {n_blocks}]")
    extent = np.abs(np.asarray(sizes))[block - 1]
    row, col = np.minimum(i, j), np.maximum(i, j)
    if row.size and (row.min() < 1 or np.any(col > extent)):
        raise ValueError(f"SDPA file {name!r}: an entry's i or j lies outside its block")
    diagonal = np.asarray(sizes)[block - 1] < 0
    if np.any(diagonal & (row != col)):
        raise ValueError(f"SDPA file {name!r}: off-diagonal entry in a diagonal (LP) block")
    order = np.lexsort((col, row, block, matno))
    keys = np.column_stack([matno, block, row, col])[order]
    if keys.shape[0] > 1 and np.any(np.all(keys[1:] == keys[:-1], axis=1)):
        raise ValueError(f"SDPA file {name!r}: an entry (matno, blkno, i, j) is given twice")
    return SDPAProblem(c=np.array(c_tokens[:m], dtype=np.float64), block_sizes=sizes, matno=matno[order],
                       block=block[order], row=row[order], col=col[order], value=value[order],
                       comments=tuple(comments))
