"""Certificates and metrics: `certify` a solution, measure a linear map's isometry."""

from .certify import Certificate, Tolerances, certify
from .metrics import (
    IsometryConstants,
    dimension_for_delta,
    distortion_histogram,
    isometry_constants,
    secant_distortions,
)

__all__ = [
    "Certificate",
    "Tolerances",
    "certify",
    "IsometryConstants",
    "dimension_for_delta",
    "distortion_histogram",
    "isometry_constants",
    "secant_distortions",
]
