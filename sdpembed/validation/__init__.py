"""Certificates and metrics: `certify` a solution, measure a linear map's isometry (re-exported
from :mod:`sdpembed.isometry`), and the isometry curves of the linear-embedding family
(`isometry_curve`)."""

from ..isometry import (
    MEASURES,
    IsometryConstants,
    SecantSet,
    dimension_for_delta,
    distortion_histogram,
    distortion_quantile,
    isometry_constants,
    secant_distortions,
)
from .certify import Certificate, Tolerances, certify
from .isometry_curve import IsometryCurve, IsometryCurvePoint, isometry_curve

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
