"""Certificates and metrics: `certify` a solution, measure a linear map's isometry, and the
isometry curves of the linear-embedding family (`isometry_curve`)."""

from .certify import Certificate, Tolerances, certify
from .isometry_curve import IsometryCurve, IsometryCurvePoint, isometry_curve
from .metrics import (
    MEASURES,
    IsometryConstants,
    SecantSet,
    dimension_for_delta,
    distortion_histogram,
    distortion_quantile,
    isometry_constants,
    secant_distortions,
)

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
