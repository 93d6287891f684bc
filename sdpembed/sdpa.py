"""SDPA sparse format: every registered problem exported as a standard-form SDP, and SDPA files read back.

SDPA files (``.dat-s``; SDPA user's manual, Fujisawa et al.; the SDPLIB format note, Borchers
1999) describe the pair of problems

    (P)  minimise  cᵀx          s.t.  Σ_{i=1..m} x_i F_i − F_0 ⪰ 0
    (D)  maximise  F_0 • Y      s.t.  F_i • Y = c_i  (i = 1..m),   Y ⪰ 0

with block-diagonal symmetric F_i (a negative block size is a diagonal, "LP", block). The file
holds m, the number of blocks, the block sizes, c, and then one line ``matno blkno i j value`` per
nonzero entry of F_0 … F_m, upper triangle only (i ≤ j); lines starting with ``"`` or ``*`` at the
top are comments.

Every sdpembed problem is written in the *standard form* of
:mod:`sdpembed.problems.standard_form`

    minimise C • X   s.t.   A_k • X = b_k  (k = 1..m),   X = blockdiag(V, s) ⪰ 0,

V the problem's matrix variable (P, M, K or S of the file-contract table in docs/grading.md) and s ≥ 0 the slack
variables of its inequalities and absolute values (one diagonal block), and stored as SDPA's
(D): Y = X, F_0 = −C, F_k = A_k, c = b. So

* block 1 of SDPA's Y *is* the solution matrix of the instance, block 2 the slacks (for
  ``lmnn_multi``, whose variable is a stack of C metrics, blocks 1..C are the metrics and block
  C + 1 the slacks);
* SDPA's optimal value (that of (D), equal to (P)'s) is −f* for the minimisations (numax,
  numax_class, lmnn, lmnn_multi, mvu_oos) and +f* for MVU, a maximisation in every variant (``min_trace``
  is stated as max −tr K, as in :class:`~sdpembed.problems.MVUInstance`): it is the optimum of
  max −C • X, and :func:`sdpa_optimum` converts. Each file states this in its comments, with the
  value when the instance carries its ``optimum``.

The SDPs are stated literally (no span reduction), so a file has about S·N(N+1)/2 entries for S
dense secants in dimension N; :func:`to_sdpa` refuses more than ``max_entries``. Which entries
each problem produces is the ``sdpa_form`` of its :class:`~sdpembed.registry.ProblemSpec`, a function
of :mod:`sdpembed.problems.standard_form`; this module turns it into SDPA's (D), writes and reads
the files.

References
----------
.. [1] B. Borchers, "SDPLIB 1.2, a library of semidefinite programming test problems", Optimization
   Methods and Software 11(1–4), 683–690, 1999. Implemented here: the SDPA sparse format.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ._files import atomic_write
from .registry import PROBLEMS, get_problem

__all__ = ["MAX_ENTRIES", "SDPAProblem", "export_sdpa", "read_sdpa", "sdpa_optimum", "to_sdpa",
           "write_sdpa"]

#: Most nonzero entries :func:`to_sdpa` writes by default (about 30 bytes each in the file).
MAX_ENTRIES = 20_000_000


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
    if spec.sdpa_form is None:
        exporters = sorted(name for name, other in PROBLEMS.items() if other.sdpa_form is not None)
        raise ValueError(f"no SDPA export for problem {problem!r}; exporters exist for {exporters} "
                         f"(registered: {sorted(PROBLEMS)})")
    form = spec.sdpa_form(instance, max_entries)
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
