"""Refusing allocations far beyond the machine: an estimate of what a dense array or a solve needs,
checked against the physical memory before anything is allocated."""

from __future__ import annotations

import math
import os

__all__ = ["GIB", "check_memory", "dense_bytes", "format_bytes", "physical_memory"]

GIB = 1 << 30

#: Assumed memory when the machine's cannot be read (os.sysconf is POSIX only).
FALLBACK_MEMORY = 64 * GIB


def physical_memory() -> int | None:
    """The machine's physical memory in bytes, or None when it cannot be read."""
    try:
        pages, size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, OSError, ValueError):
        return None
    return pages * size if pages > 0 and size > 0 else None


def dense_bytes(*shape: int, itemsize: int = 8) -> int:
    """Bytes of a dense array of this shape (float64 by default), exact in Python integers."""
    return math.prod(int(s) for s in shape) * itemsize


def format_bytes(nbytes: float) -> str:
    """``nbytes`` in GiB, with three significant digits (``~1.23e+04 GiB`` when huge)."""
    gib = nbytes / GIB
    return f"{gib:.3g} GiB"


def check_memory(nbytes: float, what: str) -> None:
    """Refuse (ValueError) to allocate ``nbytes`` for ``what`` when that exceeds the machine's memory.

    Parameters
    ----------
    nbytes : float
        A lower estimate of what the allocation needs.
    what : str
        What is allocated, e.g. ``"K (n×n float64, n = 100000)"``; the message names it.

    Raises
    ------
    ValueError
        "needs ~X GiB for <what>; this machine has Y GiB".
    """
    total = physical_memory()
    limit = total if total is not None else FALLBACK_MEMORY
    if nbytes > limit:
        have = (f"this machine has {format_bytes(total)}" if total is not None
                else f"this machine's memory is unknown (assumed {format_bytes(limit)})")
        raise ValueError(f"needs ~{format_bytes(nbytes)} for {what}; {have}")
