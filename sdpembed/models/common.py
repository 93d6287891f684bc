"""Helpers shared by the LMNN estimators (:mod:`sdpembed.models.lmnn`, :mod:`sdpembed.models.kernel_lmnn`):
the methods that exist only under one classification rule, the kNN rule or the energy rule (2.12).

References
----------
.. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
   Pennsylvania, 2007. Used here: the kNN rule and the energy-based classification rule (2.12).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["uses_rule"]


def uses_rule(rule: str) -> Callable[[Any], bool]:
    """The ``available_if`` condition of a method that exists only under the classification rule ``rule``
    (``"knn"`` or ``"energy"``, (2.12)): true for an estimator whose ``rule`` is ``rule`` (``"knn"`` when
    it has none).

    References
    ----------
    .. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
       Pennsylvania, 2007. The energy-based classification rule (2.12).
    """
    return lambda est: getattr(est, "rule", "knn") == rule
