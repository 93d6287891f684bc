"""Certificates and metrics: `certify` a solution, measure a linear map's isometry (re-exported
from :mod:`sdpembed.isometry`), and the isometry curves of the linear-embedding family
(`isometry_curve`).

References
----------
.. [1] C. Hegde, A. C. Sankaranarayanan, W. Yin and R. G. Baraniuk, "NuMax: A convex approach for
   learning near-isometric linear embeddings", IEEE Transactions on Signal Processing 63(22),
   6109–6121, 2015. Implemented here: the RIP (2), Fig. 3(a).
.. [2] J. Błasiok and C. E. Tsourakakis, "ADAGIO: Fast data-aware near-isometric linear
   embeddings", Proceedings of the IEEE International Conference on Data Mining (ICDM), 2016.
   Implemented here: the distortion (2)–(3).
"""

from .._lazy import lazy_exports
from .certify import Certificate, Tolerances, certify
from .isometry_curve import IsometryCurve, IsometryCurvePoint, isometry_curve

# ``certify`` and ``isometry_curve`` are also submodules' names, so they are imported eagerly
# (sdpembed._lazy); the isometry measures load at first use (DESIGN.md, "Start-up").
__getattr__, __dir__ = lazy_exports(__name__, {
    "..isometry": ("MEASURES", "IsometryConstants", "SecantSet", "dimension_for_delta", "distortion_histogram",
                   "distortion_quantile", "isometry_constants", "secant_distortions"),
})

__all__ = [
    "Certificate",
    "Tolerances",
    "certify",
    "IsometryConstants",
    "IsometryCurve",
    "IsometryCurvePoint",
    "MEASURES",
    "SecantSet",
    "dimension_for_delta",
    "distortion_histogram",
    "distortion_quantile",
    "isometry_constants",
    "isometry_curve",
    "secant_distortions",
]
