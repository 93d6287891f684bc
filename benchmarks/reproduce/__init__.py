"""Reproductions of the papers' experiments: one module per paper, one function per figure or table.

``python benchmarks/reproduce.py --paper numax [--only fig9,table1] [--quick]`` runs them and
writes ``REPRODUCTION.md``; see :mod:`reproduce.common` for the record each experiment writes.

References
----------
.. [1] C. Hegde, A. C. Sankaranarayanan, W. Yin and R. G. Baraniuk, "NuMax: A convex approach for
   learning near-isometric linear embeddings", IEEE Transactions on Signal Processing 63(22),
   6109–6121, 2015.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

# the paper modules import the helpers of the sibling benchmark scripts (numax_mnist, ...)
_BENCHMARKS = str(Path(__file__).resolve().parent.parent)
if _BENCHMARKS not in sys.path:
    sys.path.insert(0, _BENCHMARKS)

#: Paper name on the command line → module of this package.
PAPERS = {"numax": "numax", "adagio": "adagio", "slm": "slm", "nilepro": "nilepro",
          "thesis-lmnn": "thesis_lmnn", "thesis-mvu": "thesis_mvu"}


def load(paper: str):
    """The module of one paper."""
    if paper not in PAPERS:
        raise ValueError(f"paper must be one of {sorted(PAPERS)}, got {paper!r}")
    return importlib.import_module(f"{__name__}.{PAPERS[paper]}")
