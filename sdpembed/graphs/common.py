"""Checks and helpers shared by LMNN's target-neighbour and hinge searches: the dense scans of
:mod:`sdpembed.graphs.targets` and the ball-tree searches of :mod:`sdpembed.graphs.balltree`, which
must see the same inputs and decide by the same direct formula (2.10) to return the same answers.

References
----------
.. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
   Pennsylvania, 2007. Implemented here: the notation of Sec. 2.1.2 (target neighbours, labels) and
   the distance D_M of (2.10).
"""

from __future__ import annotations

import numpy as np

from .._validate import as_matrix, check_positive_int, count_distinct

__all__ = [
    "check_labels",
    "check_targets",
    "check_metric",
    "target_inputs",
    "class_members",
    "hinge_inputs",
    "target_distances",
]


def check_labels(y: object, n: int) -> np.ndarray:
    """Class labels for the n points of an LMNN problem, as a read-write copy.

    ``y`` must be 1-D of length n, hold integer, boolean or string labels (finite floats
    are accepted too) and contain at least two classes: with a single class there are no
    impostors and (2.11) is minimised by M = 0.
    """
    labels = np.asarray(y)
    if labels.ndim != 1 or labels.shape[0] != n:
        raise ValueError(f"y must be a 1-D array of {n} labels (one per row of X), got shape {labels.shape}")
    if labels.dtype.kind not in "iufUSb":
        raise ValueError(f"y must hold integer or string labels, got dtype {labels.dtype}")
    if labels.dtype.kind == "f" and not np.all(np.isfinite(labels)):
        raise ValueError("y contains NaN or infinite labels")
    n_classes = count_distinct(labels)
    if n_classes < 2:
        raise ValueError(
            f"y must contain at least two classes for LMNN (a single class has no impostors), got {n_classes}"
        )
    return labels.copy()


def check_targets(targets: object, y: np.ndarray) -> np.ndarray:
    """Validate a target-neighbour array against labels ``y`` (already checked).

    ``targets`` must be an integer array of shape (n, k), k ≥ 1, whose row i lists k
    distinct indices j ≠ i in [0, n) with y_j = y_i (Sec. 2.1.2, "target neighbors").
    Returns an int64 copy.
    """
    arr = np.asarray(targets)
    n = y.shape[0]
    if arr.dtype.kind not in "iu":
        raise ValueError(f"targets must be an integer array of point indices, got dtype {arr.dtype}")
    if arr.ndim != 2 or arr.shape[0] != n or arr.shape[1] < 1:
        raise ValueError(f"targets must have shape (n, k) = ({n}, k) with k >= 1, got {arr.shape}")
    arr = arr.astype(np.int64)
    if arr.min() < 0 or arr.max() >= n:
        raise ValueError(f"targets must hold point indices in [0, {n}), got values in [{arr.min()}, {arr.max()}]")
    rows = np.arange(n)
    self_target = np.flatnonzero(np.any(arr == rows[:, None], axis=1))
    if self_target.size:
        raise ValueError(f"targets[i] must not contain i itself; it does for i = {self_target[:5].tolist()}")
    other_class = np.flatnonzero(np.any(y[arr] != y[:, None], axis=1))
    if other_class.size:
        raise ValueError(
            "targets[i] must be points of the same class as i (target neighbours, Sec. 2.1.2); "
            f"rows {other_class[:5].tolist()} are not"
        )
    ordered = np.sort(arr, axis=1)
    repeated = np.flatnonzero(np.any(ordered[:, 1:] == ordered[:, :-1], axis=1))
    if repeated.size:
        raise ValueError(f"targets[i] must list k distinct points; rows {repeated[:5].tolist()} repeat one")
    return arr


def check_metric(M: object, d: int) -> np.ndarray:
    """The symmetric part of a finite (d, d) matrix (D_M only sees the symmetric part)."""
    if M is None:
        return np.eye(d)
    arr = as_matrix(M, "M")
    if arr.shape != (d, d):
        raise ValueError(f"M must have shape ({d}, {d}) to match X, got {arr.shape}")
    return 0.5 * (arr + arr.T)


def target_inputs(X: object, y: object, k: object) -> tuple[np.ndarray, int, np.ndarray, np.ndarray]:
    """The checked inputs of a target-neighbour search: X, k, the classes and each point's class
    index; every class must have k + 1 members."""
    X = as_matrix(X, "X")
    labels = check_labels(y, X.shape[0])
    k = check_positive_int(k, "k")
    classes, inverse, counts = np.unique(labels, return_inverse=True, return_counts=True)
    small = np.flatnonzero(counts < k + 1)
    if small.size:
        listed = ", ".join(f"class {classes[c].item()!r} has {counts[c]}" for c in small[:5])
        raise ValueError(
            f"every class needs at least k + 1 = {k + 1} members to have k = {k} target neighbours; {listed} "
            "member(s)"
        )
    return X, k, classes, inverse.ravel()


def class_members(labels: np.ndarray) -> list[np.ndarray]:
    """The indices of each class's points, in increasing order, classes in sorted order (one sort for all
    classes, not one scan of the labels per class)."""
    _, inverse = np.unique(labels, return_inverse=True)
    order = np.argsort(inverse.ravel(), kind="stable")
    counts = np.bincount(inverse.ravel())
    return np.split(order, np.cumsum(counts)[:-1])


def hinge_inputs(X: object, y: object, targets: object, M: object, margin: object, threshold: object,
                 block_size: object) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float, float, int]:
    """The checked inputs of the hinge scans (:func:`~sdpembed.graphs.targets.iter_hinges`,
    :func:`~sdpembed.graphs.targets.radius_hinges` and the ball-tree search): X (n, d), labels, targets,
    the metric, margin, threshold and block size."""
    X = as_matrix(X, "X")
    labels = check_labels(y, X.shape[0])
    targets = check_targets(targets, labels)
    M = check_metric(M, X.shape[1])
    margin, threshold = float(margin), float(threshold)
    if not np.isfinite(margin) or np.isnan(threshold):
        raise ValueError(f"margin must be finite and threshold a number, got {margin} and {threshold}")
    return X, labels, targets, M, margin, threshold, check_positive_int(block_size, "block_size")


def target_distances(X: np.ndarray, rows: np.ndarray, targets: np.ndarray, M: np.ndarray) -> np.ndarray:
    """D_M(x_i, x_j) for the points ``rows`` and their targets (rows of ``targets``), (b, k), by the
    direct formula (2.10) on explicit differences."""
    U = X[rows, None, :] - X[targets]                                       # x_i − x_j
    return np.einsum("bkd,bkd->bk", U @ M, U)
