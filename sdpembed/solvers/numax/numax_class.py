"""NuMax-Class solvers: Algorithm 3 and its column-generation version.

Algorithm 3 is Algorithm 1 with the one-sided truncation q ← min(b_c, z) in the form (15);
in the bounds form of :func:`~sdpembed.solvers.numax.admm.box_trace_admm` that is exactly
q ← clip(z, lo, hi) with lo = 1 − δ, hi = ∞ on inter-class secants and lo = −∞, hi = 1 + δ on
intra-class ones. The ADMM code, its exact least-squares step and its certificate are
therefore shared with NuMax, not copied; so is the column-generation driver, whose
violations are now one-sided per class pair.

References
----------
.. [1] C. Hegde, A. C. Sankaranarayanan, W. Yin and R. G. Baraniuk, "NuMax: A convex approach for
   learning near-isometric linear embeddings", IEEE Transactions on Signal Processing 63(22),
   6109–6121, 2015. Implemented here: NuMax-Class, Algorithm 3, the SDP (7) in the form (14)–(15),
   and its column-generation version (Algorithm 2).
"""

from __future__ import annotations

from ...results import SolveResult
from .admm import box_trace_admm
from .column_generation import solve_numax_cg

__all__ = ["solve_numax_class_admm", "solve_numax_class_cg"]


def solve_numax_class_admm(instance, **options) -> SolveResult:
    """Algorithm 3 (NuMax-Class) on a :class:`~sdpembed.problems.NuMaxClassInstance`.

    Point-form instances are solved on all their pairs, materialised; ``options`` are those
    of :func:`~sdpembed.solvers.numax.admm.box_trace_admm`.
    """
    lo, hi = instance.bounds()
    return box_trace_admm(instance.secant_matrix, lo, hi, problem=instance.problem, **options)


def solve_numax_class_cg(instance, **options) -> SolveResult:
    """NuMax-Class by column generation: over all pairs of a labelled point-form instance, or over
    its listed inter- and intra-class secants
    (:func:`~sdpembed.solvers.numax.column_generation.solve_numax_cg`).

    ``options`` are those of :func:`~sdpembed.solvers.numax.column_generation.column_generation`.
    """
    return solve_numax_cg(instance, **options)
