"""Normalised secant sets, NuMax eq. (1): S(X) = {(x − x')/‖x − x'‖₂ : x ≠ x' ∈ X}.

Points are the *rows* of ``X`` (scikit-learn convention). Three ways to get secants:

* :func:`all_secants` — every pair i < j, materialised (n(n−1)/2 rows);
* :func:`sample_secants` — a seeded uniform sample of distinct pairs;
* :func:`iter_secant_blocks` — all pairs, generated block by block so that a large set is
  never held in memory;
* :func:`iter_secant_quadratic_forms` — vᵀPv over all unit secants v, block by block, from
  Gram rows rather than from the secants themselves.

Duplicate points give zero secants; such pairs are dropped with a ``UserWarning``.

References
----------
.. [1] C. Hegde, A. C. Sankaranarayanan, W. Yin and R. G. Baraniuk, "NuMax: A convex approach for
   learning near-isometric linear embeddings", IEEE Transactions on Signal Processing 63(22),
   6109–6121, 2015. Implemented here: the secant set (1).
.. [2] N. J. Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., SIAM, 2002, §3.1: the
   worst-case rounding bounds (:func:`gamma`, :func:`gram_distance_error`).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ._validate import as_matrix, check_positive_int, check_random_state

__all__ = [
    "all_secants",
    "sample_secants",
    "iter_secant_blocks",
    "iter_secant_quadratic_forms",
    "normalize_rows",
    "scaled_differences",
    "pair_count",
    "pairs_from_linear_index",
    "linear_index_of_pairs",
    "class_pair_mask",
    "iter_labelled_secant_blocks",
    "sample_class_secants",
    "gamma",
    "gram_distance_error",
    "abs_norm_bound",
    "quadratic_form_error",
    "violation_uncertainty",
    "SecantFormBounds",
    "iter_secant_form_bounds",
    "iter_row_form_bounds",
    "ExactSecantForms",
]

def gamma(n: int, dtype: np.dtype | type = np.float64) -> float:
    """γ_n = nu / (1 − nu), u the unit roundoff of ``dtype`` (inf once nu ≥ 1).

    A dot product of length n computed in that precision, in any order of summation (with or
    without fused multiply-adds), satisfies |fl(xᵀy) − xᵀy| ≤ γ_n |x|ᵀ|y| ≤ γ_n ‖x‖‖y‖ as long as
    nothing underflows ([1]_ §3.1, Lemma 3.1 and (3.5)); every product of k ≤ n factors (1 + δ),
    |δ| ≤ u, lies within γ_n of 1. A worst-case bound, not the √n rule of thumb of random rounding.

    References
    ----------
    .. [1] N. J. Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., SIAM, 2002, §3.1.
    """
    nu = int(n) * float(np.finfo(dtype).eps) / 2.0
    return nu / (1.0 - nu) if nu < 1.0 else np.inf


def gram_distance_error(norms2_i: np.ndarray | float, norms2_j: np.ndarray | float, dim: int,
                        dtype: np.dtype | type = np.float64) -> np.ndarray | float:
    """Worst-case bound on |d̂ − ‖a − b‖²| for the squared distance by the Gram identity,
    d̂ = fl(fl(n_a + n_b) − 2·fl(aᵀb)), of two vectors of length ``dim`` whose squared norms
    *as computed* (n_a = fl(aᵀa), n_b) are ``norms2_i`` and ``norms2_j``.

    Each term a_k², b_k², −2a_kb_k of ‖a‖² + ‖b‖² − 2aᵀb passes through at most ``dim`` + 2 roundings
    (its dot product's ``dim``, the sum and the difference; the doubling is exact), so
    |d̂ − ‖a − b‖²| ≤ γ_{dim+2}(‖a‖² + ‖b‖² + 2|a|ᵀ|b|) ≤ 2γ_{dim+2}(‖a‖² + ‖b‖²) ([1]_ Lemma 3.1),
    and n_a ≥ (1 − γ_dim)‖a‖² turns the exact norms into the computed ones. The bound's own few
    roundings are absorbed by γ_{dim+6} in place of γ_{dim+2}, and gradual underflow (each product's
    error at most half the least subnormal, sums of subnormals exact: [1]_ §2.1) by an absolute
    (4·dim + 8)·2^-1074 for doubles (``dtype``'s least subnormal otherwise).

    References
    ----------
    .. [1] N. J. Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., SIAM, 2002, §2.1, §3.1.
    """
    info = np.finfo(dtype)
    dim = max(int(dim), 1)
    relative = 2.0 * gamma(dim + 6, dtype) / (1.0 - gamma(dim, dtype))
    return relative * (np.asarray(norms2_i) + norms2_j) + (4 * dim + 8) * float(info.smallest_subnormal)


def abs_norm_bound(P: np.ndarray) -> float:
    """A proved upper bound on ‖|P|‖₂ (|P| taken entrywise) for a symmetric P of doubles.

    |P| is symmetric, so ‖|P|‖₂ ≤ ‖|P|‖_∞, its largest absolute row sum, and ‖|P|‖₂ ≤ ‖P‖_F; the
    computed sums are at least (1 − γ_k) times the exact ones ([1]_ Lemma 3.1, γ_{k+2} absorbing the
    division and the square root), so the smaller of the two, inflated, bounds ‖|P|‖₂. The squares of
    the Frobenius sum can underflow (each by at most the least subnormal, [1]_ §2.1: one such term an
    entry is added back); the row sums of non-negative doubles cannot lose more than their rounding.

    References
    ----------
    .. [1] N. J. Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., SIAM, 2002, §3.1.
    """
    P = np.asarray(P, dtype=np.float64)
    if P.size == 0:
        return 0.0
    n = P.shape[0]
    rows = float(np.max(np.abs(P).sum(axis=1))) / (1.0 - gamma(n + 2))
    squares = float(np.einsum("ij,ij->", P, P)) + P.size * float(np.finfo(np.float64).smallest_subnormal)
    frobenius = float(np.sqrt(squares / (1.0 - gamma(P.size + 4))))
    return min(rows, frobenius)


def quadratic_form_error(norms2_i: np.ndarray | float, norms2_j: np.ndarray | float, dim: int,
                         abs_norm: float, dtype: np.dtype | type = np.float64) -> np.ndarray | float:
    """Worst-case bound on |q̂ − (a − b)ᵀP(a − b)| for the quadratic form by the Gram identity,
    q̂ = fl(fl(g_a + g_b) − 2·fl(z_aᵀb)) with Z = fl(XP) and g = fl(rowdot(Z, X)), for two rows a, b of
    length ``dim`` whose squared norms *as computed* are ``norms2_i`` and ``norms2_j``, P symmetric with
    ‖|P|‖₂ ≤ ``abs_norm`` (:func:`abs_norm_bound`).

    Each term a_k P_kl b_l of aᵀPa + bᵀPb − 2aᵀPb passes through the ``dim`` roundings of its entry of
    XP, the ``dim`` of the row product and the 2 of the sum and difference (the doubling is exact),
    and one more if P was symmetrised as fl((P + Pᵀ)/2); the terms' absolute values sum to
    (|a| + |b|)ᵀ|P|(|a| + |b|) ≤ 2‖|P|‖₂(‖a‖² + ‖b‖²) ([1]_ Lemma 3.1, as in
    :func:`gram_distance_error`, which is the case P = I). γ_{2dim+7} in place of γ_{2dim+3} absorbs the
    bound's own roundings, and an absolute term bounds gradual underflow (each product off by at most
    the least subnormal, the errors of XP carried through the second product by at most
    √dim·(‖a‖ + ‖b‖), all summed over 2·dim + 3 roundings; one term for all the pairs given, at
    their largest norms).

    References
    ----------
    .. [1] N. J. Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., SIAM, 2002, §2.1, §3.1.
    """
    info = np.finfo(dtype)
    dim = max(int(dim), 1)
    exact = 1.0 - gamma(dim, dtype)
    relative = 2.0 * gamma(2 * dim + 7, dtype) * abs_norm / exact
    sums = np.asarray(norms2_i) + norms2_j
    # the underflow term is negligible but for tiny data: one for all, at the largest norms
    norms = float(np.sqrt(2.0 * float(np.max(sums, initial=0.0)) / exact))
    tiny = float(info.smallest_subnormal) * (2 * dim + 3) * (2.0 + np.sqrt(dim) * norms * (1.0 + abs_norm))
    return relative * sums + tiny


def violation_uncertainty(ratio: np.ndarray, num_err: np.ndarray | float, den: np.ndarray,
                          den_err: np.ndarray | float, lo: np.ndarray, hi: np.ndarray,
                          tol: float = 0.0) -> np.ndarray:
    """Worst-case bound on the error of the violation max(lo − r̂, r̂ − hi) of a computed ratio
    r̂ = fl(q̂/ĥ) whose numerator and denominator are off by at most ``num_err`` and ``den_err``
    (ĥ = ``den``), including the roundings of comparing it with ``tol``.

    |q̂/ĥ − q/h| ≤ (e_q + |q̂/ĥ|·e_h)/(ĥ − e_h) (from q/h − q̂/ĥ = ((q − q̂)ĥ + q̂(ĥ − h))/(hĥ)), then the
    roundings of the bound itself (1 + γ_6), and of the ratio, the violation and its comparison (u on
    each of |r̂|, |lo|, |hi|, |tol|: γ_8 in all, [1]_ Lemma 3.1). NaN or negative where ĥ ≤ e_h: such
    a ratio is not bounded (the caller recomputes it).

    References
    ----------
    .. [1] N. J. Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., SIAM, 2002, §3.1.
    """
    sizes = np.abs(ratio) + np.where(np.isfinite(lo), np.abs(lo), 0.0) + np.where(np.isfinite(hi), np.abs(hi), 0.0)
    return ((num_err + np.abs(ratio) * den_err) / (den - den_err) * (1.0 + gamma(6))
            + gamma(8) * (sizes + (abs(tol) if np.isfinite(tol) else 0.0)))


#: Differences with a norm below this (relative to the data scale) count as zero secants.
ZERO_SECANT_RTOL = 1e-12


def pair_count(n_points: int) -> int:
    """Number of unordered pairs, n(n−1)/2."""
    return n_points * (n_points - 1) // 2


def linear_index_of_pairs(i: np.ndarray, j: np.ndarray, n_points: int) -> np.ndarray:
    """The inverse of :func:`pairs_from_linear_index`: the row-major upper-triangle index of (i, j), i < j."""
    i = np.asarray(i, dtype=np.int64)
    return i * n_points - i * (i + 1) // 2 + (np.asarray(j, dtype=np.int64) - i - 1)


def pairs_from_linear_index(index: np.ndarray, n_points: int) -> tuple[np.ndarray, np.ndarray]:
    """Map linear indices of the row-major upper triangle (i < j) to pairs (i, j).

    Index 0 is (0, 1), index n−2 is (0, n−1), index n−1 is (1, 2), and so on; this is the
    order of :func:`all_secants` and :func:`iter_secant_blocks`.
    """
    k = np.asarray(index, dtype=np.int64)
    n = int(n_points)
    if k.size and (k.min() < 0 or k.max() >= pair_count(n)):
        raise ValueError(f"index must lie in [0, {pair_count(n)}), the pairs of {n} points")
    # Rows before row i hold i*n − i(i+1)/2 pairs; invert that quadratic, then correct the
    # floating-point estimate by one step either way.
    i = np.floor(n - 0.5 - np.sqrt((n - 0.5) ** 2 - 2.0 * k)).astype(np.int64)
    i = np.clip(i, 0, max(n - 2, 0))
    start = i * n - i * (i + 1) // 2
    too_far = start > k
    i[too_far] -= 1
    start = i * n - i * (i + 1) // 2
    next_start = (i + 1) * n - (i + 1) * (i + 2) // 2
    too_short = k >= next_start
    i[too_short] += 1
    start = i * n - i * (i + 1) // 2
    j = k - start + i + 1
    return i, j


def scaled_differences(X: np.ndarray, i: np.ndarray, j: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(D, e): the differences x_i − x_j = 2^e_k·D_k, each row scaled by a power of two (exactly) to a
    largest entry in [1/2, 1) (zero rows unscaled), so that quotients of their quadratic forms neither
    under- nor overflow on points of tiny or huge norm (squares of norms below 1e-154 or above 1e154 do)."""
    D = X[i] - X[j]
    top = np.max(np.abs(D), axis=1, initial=0.0)
    exponent = np.frexp(np.where(top > 0.0, top, 1.0))[1]
    return np.ldexp(D, -exponent[:, None]), exponent


def normalize_rows(differences: np.ndarray, scale: float, *, name: str = "X") -> tuple[np.ndarray, np.ndarray]:
    """Divide rows by their norms, dropping (near-)zero rows.

    Returns the unit rows and the boolean mask of the rows kept. A warning reports the
    number of dropped zero secants (duplicate points in ``name``).
    """
    # each row scaled exactly by a power of two (its largest |entry| into [1/2, 1)) before its norm: squares of
    # entries below about 1e-154 underflow and above 1e154 overflow, and the row divided by that norm is not unit;
    # for every other row the scaling changes no bit of the norm or the quotient
    exponent = np.frexp(np.max(np.abs(differences), axis=1, initial=0.0))[1]
    with np.errstate(under="ignore"):
        scaled = np.ldexp(differences, -exponent[:, None])
    unit_norms = np.linalg.norm(scaled, axis=1)
    with np.errstate(over="ignore"):
        norms = np.ldexp(unit_norms, exponent)
    keep = norms > ZERO_SECANT_RTOL * max(scale, 1e-300)
    dropped = int((~keep).sum())
    if dropped:
        warnings.warn(
            f"{dropped} zero secant(s) from duplicate points in {name} were dropped",
            UserWarning,
            stacklevel=3,
        )
    return scaled[keep] / unit_norms[keep, None], keep


def _data_scale(X: np.ndarray) -> float:
    return float(np.max(np.abs(X))) if X.size else 0.0


def all_secants(X: np.ndarray, *, return_pairs: bool = False):
    """All normalised secants of the rows of ``X`` (NuMax eq. (1)), pairs i < j in order.

    Parameters
    ----------
    X : array_like of shape (n, N)
        Data points as rows, finite, n ≥ 2.
    return_pairs : bool
        Also return the (S, 2) array of point indices of each kept secant.

    Returns
    -------
    secants : ndarray of shape (S, N)
        Unit rows; S = n(n−1)/2 minus the dropped zero secants.
    pairs : ndarray of shape (S, 2), optional
    """
    X = as_matrix(X, "X", min_rows=2)
    i, j = np.triu_indices(X.shape[0], k=1)
    secants, keep = normalize_rows(X[i] - X[j], _data_scale(X))
    if return_pairs:
        return secants, np.column_stack([i[keep], j[keep]])
    return secants


def sample_secants(
    X: np.ndarray, n_secants: int, *, random_state=None, return_pairs: bool = False
):
    """A seeded uniform sample of ``n_secants`` distinct pairs of rows of ``X``, normalised.

    As in NuMax Sec. 5.1 ("randomly sampling pairs of images"). When ``n_secants`` is at
    least the number of pairs, all pairs are returned. Sampling is over linear pair
    indices, so the memory is O(n_secants) whatever the number of points.

    Parameters
    ----------
    X : array_like of shape (n, N)
    n_secants : int
        Number of pairs to draw (≥ 1).
    random_state : None, int or numpy Generator
    return_pairs : bool
        Also return the (S, 2) array of point indices.
    """
    X = as_matrix(X, "X", min_rows=2)
    n_secants = check_positive_int(n_secants, "n_secants")
    rng = check_random_state(random_state)
    total = pair_count(X.shape[0])
    if n_secants >= total:
        chosen = np.arange(total)
    else:
        chosen = np.sort(rng.choice(total, size=n_secants, replace=False))
    i, j = pairs_from_linear_index(chosen, X.shape[0])
    secants, keep = normalize_rows(X[i] - X[j], _data_scale(X))
    if return_pairs:
        return secants, np.column_stack([i[keep], j[keep]])
    return secants


def iter_secant_blocks(
    X: np.ndarray, block_size: int = 65536, *, pairs: tuple[int, int] | None = None
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Generate all normalised secants of ``X`` in blocks of at most ``block_size`` rows.

    The blocks follow the order of :func:`all_secants`; only one block is in memory at a
    time. Zero secants are dropped (with one warning per block that has any). With ``pairs``
    (start, stop), only the pairs of linear index start ≤ k < stop (:func:`pairs_from_linear_index`)
    are generated, each normalised as in the full sequence.

    Yields
    ------
    pairs : ndarray of shape (B, 2)
        Point indices (i, j), i < j.
    secants : ndarray of shape (B, N)
        The corresponding unit secants.
    """
    X = as_matrix(X, "X", min_rows=2)
    block_size = check_positive_int(block_size, "block_size")
    first, last = (0, pair_count(X.shape[0])) if pairs is None else _pair_range(pairs, pair_count(X.shape[0]))
    scale = _data_scale(X)
    for start in range(first, last, block_size):
        i, j = pairs_from_linear_index(np.arange(start, min(start + block_size, last)), X.shape[0])
        secants, keep = normalize_rows(X[i] - X[j], scale)
        yield np.column_stack([i[keep], j[keep]]), secants


def iter_secant_quadratic_forms(
    X: np.ndarray, P: np.ndarray, block_size: int = 65536, *, pairs: tuple[int, int] | None = None,
    cancellation_rtol: float = 1e-4,
) -> Iterator[np.ndarray]:
    """Generate vᵀ P v for the unit secants v of all pairs of ``X``, block by block.

    The blocks and the pairs kept are those of :func:`iter_secant_blocks` (same order, same
    zero secants dropped, same warning), but no secant is formed: with G = X P Xᵀ and H = X Xᵀ
    computed a block of rows at a time,

        vᵀ P v = (G_ii + G_jj − 2 G_ij) / (H_ii + H_jj − 2 H_ij),

    which costs O(n·N) per row instead of O(N²) per pair (P is symmetrised first, as vᵀPv is the
    form of (P + Pᵀ)/2). The subtraction loses up to 2γ_{N+2}·(H_ii + H_jj)/‖x_i − x_j‖² in relative
    accuracy (:func:`gram_distance_error`, worst case), so a pair whose squared distance is below
    ``cancellation_rtol``·(‖x_i‖² + ‖x_j‖²) is computed from its difference instead. These are
    values; :func:`iter_secant_form_bounds` gives the same values with proved bounds on their rounding.

    Parameters
    ----------
    X : ndarray of shape (n, N)
        Points as rows.
    P : ndarray of shape (N, N)
        A square matrix.
    block_size : int
        Pairs per block.
    pairs : (int, int), optional
        Restrict to the pairs of linear index start ≤ k < stop (:func:`pairs_from_linear_index`).
    cancellation_rtol : float
        The relative squared distance below which a pair is computed from its difference.

    Yields
    ------
    values : ndarray of shape (B,)
        vᵀ P v of the block's non-zero secants, in the order of :func:`iter_secant_blocks`.
    """
    for keep, _, _, values, _, _, _ in _secant_form_blocks(X, P, block_size, pairs, cancellation_rtol, bounded=False):
        yield values[keep]


@dataclass(frozen=True)
class SecantFormBounds:
    """One block of :func:`iter_secant_form_bounds`: the pairs (i, j) of non-zero secants, the computed
    ratios ``values`` = fl(q̂/ĥ) of vᵀPv = q/h, and worst-case bounds ``num_err`` ≥ |q̂ − q| and
    ``den_err`` ≥ |ĥ − h| with ĥ = ``den`` (q and h the exact quadratic forms of P and of I on the
    pair's difference, or on that difference scaled by a power of two for the pairs computed from it)."""

    i: np.ndarray
    j: np.ndarray
    values: np.ndarray
    num_err: np.ndarray
    den: np.ndarray
    den_err: np.ndarray


def iter_secant_form_bounds(
    X: np.ndarray, P: np.ndarray, block_size: int = 65536, *, pairs: tuple[int, int] | None = None,
    cancellation_rtol: float = 1e-4,
) -> Iterator[SecantFormBounds]:
    """The values of :func:`iter_secant_quadratic_forms` (same blocks, pairs and warnings) with proved
    bounds on their rounding, block by block (:class:`SecantFormBounds`).

    Gram-valued pairs: the numerator's error is bounded by :func:`quadratic_form_error` (with
    :func:`abs_norm_bound` of the symmetrised P), the denominator's by :func:`gram_distance_error`.
    Pairs computed from their difference D̂ = fl(x_i − x_j)·2^-e (:func:`scaled_differences`; the scaling
    is exact): each term of D̂ᵀPD̂ passes through the rounding of the two differences, the 2N of the
    products and one of the symmetrisation (γ_{2N+3}, ‖|P|‖₂‖d‖² in all), each of D̂ᵀD̂ through N + 2
    (γ_{N+2}‖d‖²), with ‖d‖² ≤ fl(D̂ᵀD̂)/(1 − γ_{N+2}) ([1]_ Lemma 3.1); γ_{N+6} and γ_{2N+7} absorb the
    bounds' own roundings and an absolute (4N + 8)·(1 + ‖|P|‖₂) least subnormals the underflow of
    the scaling. :func:`violation_uncertainty` turns these into bounds on a violation.

    References
    ----------
    .. [1] N. J. Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., SIAM, 2002, §2.1, §3.1.
    """
    for keep, *arrays in _secant_form_blocks(X, P, block_size, pairs, cancellation_rtol, bounded=True):
        yield SecantFormBounds(*arrays) if keep.all() else SecantFormBounds(*(a[keep] for a in arrays))


def iter_row_form_bounds(V: np.ndarray, P: np.ndarray, block_size: int = 65536
                         ) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """vᵀPv of the rows v of ``V`` themselves (the secants of a secant-form instance, as stored: not
    normalised again), with proved bounds on their rounding, in blocks of ``block_size`` rows.

    Yields (rows, values, errors): the row indices, fl(rowdot(fl(VP̃), V)) with P̃ the symmetrised P
    (:func:`iter_secant_form_bounds`), and bounds |value − vᵀPv| ≤ error. This is the Gram-identity
    form of :func:`quadratic_form_error` with the second row b = 0 (every term in b is then exactly
    zero and adds no rounding), so its bound, at the rows' computed squared norms, holds; it is twice
    the one-row bound γ_{2N+1}‖|P|‖₂‖v‖², which costs nothing next to any tolerance. A value or bound
    that overflows is inf or NaN: such a row is not bounded (the caller recomputes it exactly).

    References
    ----------
    .. [1] N. J. Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., SIAM, 2002, §2.1, §3.1.
    """
    V = as_matrix(V, "V", min_rows=0)
    P = np.asarray(P, dtype=np.float64)
    if P.shape != (V.shape[1], V.shape[1]):
        raise ValueError(f"P must be of shape {(V.shape[1],) * 2}, got {P.shape}")
    block_size = check_positive_int(block_size, "block_size")
    P = _symmetric(P)
    abs_norm = abs_norm_bound(P)
    for start in range(0, V.shape[0], block_size):
        rows = V[start:start + block_size]
        values = np.einsum("ij,ij->i", rows @ P, rows)
        errors = quadratic_form_error(np.einsum("ij,ij->i", rows, rows), 0.0, V.shape[1], abs_norm)
        yield np.arange(start, start + rows.shape[0]), values, errors


def _symmetric(P: np.ndarray) -> np.ndarray:
    """P itself when symmetric, else fl((P + Pᵀ)/2): vᵀPv is the quadratic form of the symmetric part.
    Formed as 0.5P + 0.5Pᵀ, the same double but for entries near the largest, where P + Pᵀ overflows."""
    return P if np.array_equal(P, P.T) else 0.5 * P + 0.5 * P.T


def _secant_form_blocks(X: np.ndarray, P: np.ndarray, block_size: int, pairs: tuple[int, int] | None,
                        cancellation_rtol: float, *, bounded: bool) -> Iterator[tuple[np.ndarray, ...]]:
    """The blocks of :func:`iter_secant_form_bounds` before the zero secants are dropped: (keep, i, j,
    values, num_err, den, den_err), the bounds None unless ``bounded``."""
    X = as_matrix(X, "X", min_rows=2)
    P = np.asarray(P, dtype=np.float64)
    if P.shape != (X.shape[1], X.shape[1]):
        raise ValueError(f"P must be of shape {(X.shape[1],) * 2}, got {P.shape}")
    block_size = check_positive_int(block_size, "block_size")
    n, dim = X.shape
    first, last = (0, pair_count(n)) if pairs is None else _pair_range(pairs, pair_count(n))
    scale = _data_scale(X)
    P = _symmetric(P)
    Z = X @ P
    g_diag, h_diag = np.einsum("ij,ij->i", Z, X), np.einsum("ij,ij->i", X, X)
    abs_norm = abs_norm_bound(P) if bounded else 0.0
    for start in range(first, last, block_size):
        i, j = pairs_from_linear_index(np.arange(start, min(start + block_size, last)), n)
        rows = slice(int(i[0]), int(i[-1]) + 1)          # the block's pairs are row-major: few rows
        r = i - rows.start
        q = g_diag[i] + g_diag[j] - 2.0 * (Z[rows] @ X.T)[r, j]
        d = h_diag[i] + h_diag[j] - 2.0 * (X[rows] @ X.T)[r, j]
        # so are pairs whose squares leave the range of doubles (inf, NaN, or 0 from underflow)
        close = ~(np.isfinite(q) & np.isfinite(d) & (d > 0.0) & (d >= cancellation_rtol * (h_diag[i] + h_diag[j])))
        with np.errstate(divide="ignore", invalid="ignore"):
            values = q / d
        norms = np.sqrt(np.maximum(d, 0.0))
        den = num_err = den_err = None
        if bounded:
            den = d
            num_err = quadratic_form_error(h_diag[i], h_diag[j], dim, abs_norm)
            den_err = gram_distance_error(h_diag[i], h_diag[j], dim)
        if np.any(close):
            V, exponent = scaled_differences(X, i[close], j[close])
            squares = np.einsum("ij,ij->i", V, V)
            with np.errstate(divide="ignore", invalid="ignore"):
                values[close] = np.einsum("ij,ij->i", V @ P, V) / squares
            norms[close] = np.ldexp(np.sqrt(squares), exponent)
            if bounded:
                exact = squares / (1.0 - gamma(dim + 2))
                tiny = (4 * dim + 8) * float(np.finfo(np.float64).smallest_subnormal)
                den[close] = squares
                num_err[close] = gamma(2 * dim + 7) * abs_norm * exact + tiny * (1.0 + abs_norm)
                den_err[close] = gamma(dim + 6) * exact + tiny
        keep = norms > ZERO_SECANT_RTOL * max(scale, 1e-300)
        dropped = int((~keep).sum())
        if dropped:
            warnings.warn(f"{dropped} zero secant(s) from duplicate points in X were dropped", UserWarning,
                          stacklevel=3)
        yield keep, i, j, values, num_err, den, den_err


class ExactSecantForms:
    """vᵀPv of secants of the rows of ``X``, in exact rational arithmetic: ``forms(i, j)`` (of the rows
    themselves: ``forms.of_rows(k)``).

    Every double is an integer times a power of two, so with the entries of X and of P written as
    integers over common powers of two (Python integers, of any size), the difference d = x_i − x_j,
    dᵀPd and dᵀd are exact integers, and their quotient an exact :class:`~fractions.Fraction` (the form
    of P itself: dᵀPd = dᵀ((P + Pᵀ)/2)d). P is converted once; each pair then costs the O(N²) integer
    operations of a matrix-vector product: for the few pairs a rounding bound leaves undecided.
    Pairs of identical points, and non-finite X or P (no exact form), are refused.
    """

    def __init__(self, X: np.ndarray, P: np.ndarray) -> None:
        self.X = np.asarray(X, dtype=np.float64)
        P = np.asarray(P, dtype=np.float64)
        if not (np.all(np.isfinite(P)) and np.all(np.isfinite(self.X))):
            raise ValueError("exact secant forms need finite X and P")
        self.form, self.shift = _integers(P)

    def __call__(self, i: np.ndarray, j: np.ndarray) -> list[Fraction]:
        i, j = np.asarray(i, dtype=np.int64), np.asarray(j, dtype=np.int64)
        if i.size == 0:
            return []
        rows, _ = _integers(self.X[np.concatenate([i, j])])
        D = (rows[: i.size] - rows[i.size:]).T                      # (N, m): one column a pair
        numerators = np.sum((self.form @ D) * D, axis=0)
        denominators = np.sum(D * D, axis=0)
        if np.any(denominators == 0):
            raise ValueError("a pair of identical points has no secant")
        power = Fraction(2) ** self.shift
        return [Fraction(int(a), int(b)) * power for a, b in zip(numerators, denominators, strict=True)]

    def of_rows(self, k: np.ndarray) -> list[Fraction]:
        """vᵀPv of the rows ``k`` of ``X`` themselves, exactly (the secants of a secant-form instance as
        stored, not normalised: vᵀPv, not vᵀPv / vᵀv)."""
        k = np.asarray(k, dtype=np.int64)
        if k.size == 0:
            return []
        rows, shift = _integers(self.X[k])
        D = rows.T                                                  # (N, m): one column a row
        numerators = np.sum((self.form @ D) * D, axis=0)
        power = Fraction(2) ** (self.shift + 2 * shift)
        return [Fraction(int(a)) * power for a in numerators]


def _integers(A: np.ndarray) -> tuple[np.ndarray, int]:
    """(M, s): an object array of Python integers with A = M·2^s exactly (A finite doubles)."""
    fraction, exponent = np.frexp(A)
    mantissa = np.ldexp(fraction, 53).astype(np.int64)          # integers: |A| = |m|·2^(e − 53) exactly
    exponent = exponent.astype(np.int64) - 53
    shift = int(exponent[mantissa != 0].min()) if np.any(mantissa) else 0
    return mantissa.astype(object) << np.maximum(exponent - shift, 0).astype(object), shift


def _pair_range(pairs: tuple[int, int], total: int) -> tuple[int, int]:
    start, stop = (int(k) for k in pairs)
    if not 0 <= start <= stop <= total:
        raise ValueError(f"pairs must be a range (start, stop) with 0 <= start <= stop <= {total}, got {pairs!r}")
    return start, stop


def class_pair_mask(y: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """True for intra-class pairs (same label), False for inter-class pairs (NuMax Sec. 3.4)."""
    return y[i] == y[j]


def iter_labelled_secant_blocks(
    X: np.ndarray, y: np.ndarray, block_size: int = 65536, *, pairs: tuple[int, int] | None = None
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """All secants of X in blocks, each with its intra-class mask (streamed by class; ``pairs`` as
    for :func:`iter_secant_blocks`).

    Yields
    ------
    pairs : ndarray of shape (B, 2)
    secants : ndarray of shape (B, N)
    intra : ndarray of bool, shape (B,)
        True where both points have the same label.
    """
    y = np.asarray(y)
    for ij, secants in iter_secant_blocks(X, block_size, pairs=pairs):
        yield ij, secants, class_pair_mask(y, ij[:, 0], ij[:, 1])


def sample_class_secants(
    X: np.ndarray, y: np.ndarray, n_inter: int, n_intra: int, *, random_state=None
) -> tuple[np.ndarray, np.ndarray]:
    """Seeded uniform samples of ``n_inter`` inter-class and ``n_intra`` intra-class secants.

    Pairs are visited in a seeded random order (a permutation of all pairs when there are at
    most two million, otherwise bounded batches of random pairs, deduplicated) and sorted
    by class until both quotas are met; a class with fewer pairs than asked gives all it has.

    Returns
    -------
    inter, intra : ndarray of shapes (S₁, N), (S₂, N)
        Unit secants; zero secants (duplicate points) are dropped with a warning.
    """
    X = as_matrix(X, "X", min_rows=2)
    y = np.asarray(y)
    n_inter = check_positive_int(n_inter, "n_inter")
    n_intra = check_positive_int(n_intra, "n_intra")
    rng = check_random_state(random_state)
    total = pair_count(X.shape[0])
    if total <= 2_000_000:
        order = rng.permutation(total)
        batches = (order[k : k + 65536] for k in range(0, total, 65536))
    else:
        batches = (rng.integers(0, total, size=65536) for _ in range(1000))
    taken = {False: [], True: []}
    need = {False: n_inter, True: n_intra}
    seen: set[int] = set()
    for batch in batches:
        batch = np.array([k for k in np.unique(batch).tolist() if k not in seen], dtype=np.int64)
        seen.update(batch.tolist())
        if batch.size == 0:
            continue
        i, j = pairs_from_linear_index(batch, X.shape[0])
        same = class_pair_mask(y, i, j)
        for intra in (False, True):
            pick = np.flatnonzero(same == intra)[: need[intra]]
            taken[intra].append(np.column_stack([i[pick], j[pick]]))
            need[intra] -= pick.size
        if need[False] == 0 and need[True] == 0:
            break
    scale = _data_scale(X)
    out = []
    for intra in (False, True):
        pairs = np.vstack(taken[intra]) if taken[intra] else np.empty((0, 2), dtype=np.int64)
        secants, _ = normalize_rows(X[pairs[:, 0]] - X[pairs[:, 1]], scale)
        out.append(secants)
    return out[0], out[1]
