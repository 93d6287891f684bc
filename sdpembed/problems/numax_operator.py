"""The secant operator 𝒜 of the NuMax family and its adjoint, as numpy.

For a secant matrix ``V`` whose rows are unit vectors ``v_i`` (NuMax eq. (1)),

    𝒜(X)  = ( v_iᵀ X v_i )_{i=1..S}          (NuMax Sec. 3.1, below eq. (2))
    𝒜*(y) = Σ_i y_i v_i v_iᵀ = Vᵀ diag(y) V    (the adjoint, used in (13))
    𝒜𝒜*   = (V Vᵀ) ∘ (V Vᵀ)                  (an S×S matrix; Hadamard square of the Gram)

:class:`SecantOperator` computes them from the rows; :class:`PairSecantOperator` from the points
of the pairs whose secants they are, the structure of column generation (NuMax Algorithm 2). The
SDP (*) they constrain and its certificate are in :mod:`sdpembed.problems.numax_certificate`, the
instance types in :mod:`sdpembed.problems.numax`.

References
----------
.. [1] C. Hegde, A. C. Sankaranarayanan, W. Yin and R. G. Baraniuk, "NuMax: A convex approach for
   learning near-isometric linear embeddings", IEEE Transactions on Signal Processing 63(22),
   6109–6121, 2015. Implemented here: the operator of Sec. 3.1 and its adjoint (used in
   (13)), through the points of a pair set for Algorithm 2.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from ..secants import scaled_differences

__all__ = ["PairSecantOperator", "SecantOperator", "SHORT_PAIR_RATIO"]

#: pair lengths inside this range are computed directly: their largest squared entries lie between 1e-280/d and
#: 1e280 (d the dimension), and their sums of squares far from underflow and overflow
SAFE_NORM_RANGE = (1e-140, 1e140)

#: A pair whose points' norms (the points centred) exceed its length d this many times is *short*: the routes
#: through the points — the Gram matrix of the cosines, the Laplacian of the adjoint — form its terms as
#: differences of terms about ((‖x_i‖ + ‖x_j‖)/d)² times larger and lose about ε·ratio² of them to
#: cancellation; below the ratio that is at most ≈ 2·10⁻¹³, above it the terms come from the explicit secant
#: (near-duplicate points at d ≈ 10⁻⁷ among points of norm 1 would lose ≈ 10⁻² of theirs).
SHORT_PAIR_RATIO = 32.0


class SecantOperator:
    """The linear map 𝒜 : Sᴺ → Rˢ, X ↦ (v_iᵀ X v_i)_i, and its adjoint.

    Parameters
    ----------
    secants : ndarray of shape (S, N)
        The rows ``v_i``. They need not be unit vectors here; instances normalise them.
    """

    def __init__(self, secants: np.ndarray) -> None:
        self.V = np.ascontiguousarray(secants, dtype=np.float64)
        if self.V.ndim != 2:
            raise ValueError(f"secants must be a 2-D array (S, N), got shape {self.V.shape}")

    @property
    def n_constraints(self) -> int:
        """Number of secants S."""
        return self.V.shape[0]

    @property
    def dim(self) -> int:
        """Ambient dimension N."""
        return self.V.shape[1]

    def apply(self, X: np.ndarray) -> np.ndarray:
        """𝒜(X) = (v_iᵀ X v_i)_i for a symmetric (N, N) matrix X; O(S N²)."""
        return np.einsum("ij,ij->i", self.V @ X, self.V)

    def adjoint(self, y: np.ndarray) -> np.ndarray:
        """𝒜*(y) = Σ_i y_i v_i v_iᵀ = Vᵀ diag(y) V, an (N, N) symmetric matrix; O(S N²)."""
        return (self.V.T * y) @ self.V

    def gram_squared(self) -> np.ndarray:
        """The (S, S) matrix of 𝒜𝒜*, with entries (v_iᵀ v_j)²."""
        G = self.V @ self.V.T
        return G * G

    def explicit(self) -> SecantOperator:
        """The operator computed from the explicit secant rows (used for certificates)."""
        return self

    def in_basis(self, basis: np.ndarray) -> SecantOperator:
        """𝒜 restricted to matrices QP̃Qᵀ, in the coordinates of the orthonormal ``basis`` Q (N, r)."""
        return SecantOperator(self.V @ basis)


class PairSecantOperator(SecantOperator):
    """𝒜 for the secants of pairs of points, v_k = (x_{i_k} − x_{j_k}) / ‖x_{i_k} − x_{j_k}‖.

    Same map as :class:`SecantOperator` on the same rows, computed through the n_a points
    the S pairs touch — the structure column generation (NuMax Algorithm 2) works with:

        𝒜(P)_k  = (x_i − x_j)ᵀ P (x_i − x_j) / d_k²  from B = X_a P,            O(n_a N² + S N)
        𝒜*(y)   = X_aᵀ Lap(w) X_a,  w_k = y_k / d_k²  (a weighted graph Laplacian), O(n_a² N + n_a N²)

    instead of O(S N²) each: a large saving when S ≫ n_a (thousands of pairs among hundreds
    of points). Certificates use :meth:`explicit`, the row-by-row computation.

    Parameters
    ----------
    points : ndarray of shape (n, N)
    i, j : ndarray of shape (S,)
        Pair indices into ``points``; every pair must be of distinct points.
    """

    #: pairs a block of the lengths' computation takes (an (S, N) array of differences is never made)
    NORM_BLOCK = 512

    def __init__(self, points: np.ndarray, i: np.ndarray, j: np.ndarray) -> None:
        i, j = np.asarray(i, dtype=np.int64), np.asarray(j, dtype=np.int64)
        used, inverse = np.unique(np.concatenate([i, j]), return_inverse=True)
        #: the rows of ``points`` the pairs touch, in the order of :attr:`points`
        self.rows = used
        pts = np.asarray(points, dtype=np.float64)[used]
        self.points = pts - pts.mean(axis=0)                  # differences unchanged, less cancellation
        self.i, self.j = inverse[: i.size], inverse[i.size:]
        # the lengths, a block of pairs at a time: the rows V themselves are made when first read
        # (column generation's restricted solves work on the points' coordinates in a basis of their
        # span and read the rows in the original coordinates only to certify)
        # a norm outside [1e-140, 1e140] is taken again from the difference scaled exactly by a power of two
        # (secants.scaled_differences): the squares of entries below ~1e-154 underflow and above ~1e154 overflow,
        # and a row divided by such a norm is not a unit secant (or the pair reads as a zero secant); inside that
        # range the squares that matter neither under- nor overflow, so the plain norm is the scaled one's
        self.norms = np.empty(self.i.size)
        for start in range(0, self.i.size, self.NORM_BLOCK):
            block = slice(start, start + self.NORM_BLOCK)
            with np.errstate(over="ignore", under="ignore"):
                norms = np.linalg.norm(self.points[self.i[block]] - self.points[self.j[block]], axis=1)
            extreme = ~((norms > SAFE_NORM_RANGE[0]) & (norms < SAFE_NORM_RANGE[1]))
            if extreme.any():
                rows = start + np.flatnonzero(extreme)
                scaled, exponent = scaled_differences(self.points, self.i[rows], self.j[rows])
                norms[extreme] = np.ldexp(np.linalg.norm(scaled, axis=1), exponent)
            self.norms[block] = norms
        if np.any(self.norms == 0.0):
            raise ValueError("every pair must join two distinct points (a zero secant has no direction)")
        self._gram_cell: dict = {}

    @cached_property
    def V(self) -> np.ndarray:
        """The unit secants (S, N), (x_i − x_j)/‖x_i − x_j‖, made when first read."""
        D = self.points[self.i] - self.points[self.j]
        D /= self.norms[:, None]                              # in place: one (S, N) array, not two
        return D

    def unit_secants(self, index: slice | np.ndarray) -> np.ndarray:
        """The rows ``V[index]``, equal to them bit for bit, made from the points unless ``V`` is formed
        (a few rows of a large pair set without its S × N rows)."""
        if "V" in self.__dict__:
            return self.V[index]
        return (self.points[self.i[index]] - self.points[self.j[index]]) / self.norms[index, None]

    @property
    def n_constraints(self) -> int:
        """Number of pairs S."""
        return self.i.size

    @property
    def dim(self) -> int:
        """Dimension N of the points' coordinates."""
        return self.points.shape[1]

    def apply(self, X: np.ndarray) -> np.ndarray:
        """𝒜(X) through B = X_a X: ((b_i − b_j)·v_k) / d_k."""
        B = self.points @ X
        return np.einsum("ij,ij->i", B[self.i] - B[self.j], self.V) / self.norms

    def adjoint(self, y: np.ndarray) -> np.ndarray:
        """𝒜*(y) = Σ_k y_k v_k v_kᵀ = X_aᵀ Lap(w) X_a with edge weights w_k = y_k / d_k², the
        ``short`` pairs' terms from their explicit rows (``short_rows``) instead."""
        n_a = self.points.shape[0]
        y = np.asarray(y, dtype=np.float64)
        w = y / self.norms**2
        w[self.short] = 0.0
        W = np.bincount(self.i * n_a + self.j, weights=w, minlength=n_a * n_a).reshape(n_a, n_a)
        W += W.T
        laplacian = np.diag(W.sum(axis=1)) - W
        out = self.points.T @ (laplacian @ self.points)
        if self.short.size:
            out += (self.short_rows.T * y[self.short]) @ self.short_rows
        return 0.5 * (out + out.T)

    def points_gram(self, hold: bool = True) -> np.ndarray:
        """H = X_a X_aᵀ (n_a, n_a), the Gram matrix of the (centred) points: the one held if there is one
        (shared with the operators made by :meth:`with_points` on the same points array and its
        ``gram_cell``), else made — and, with ``hold``, held, read-only, for the later calls."""
        H = self._gram_cell.get("H")
        if H is None:
            H = self.points @ self.points.T
            if hold:
                H.flags.writeable = False
                self._gram_cell["H"] = H
        return H

    @cached_property
    def short(self) -> np.ndarray:
        """The indices of the short pairs (``SHORT_PAIR_RATIO``), whose terms the routes through the points
        would lose to cancellation."""
        norms = np.linalg.norm(self.points, axis=1)
        return np.flatnonzero((norms[self.i] + norms[self.j]) * (1.0 / self.norms) > SHORT_PAIR_RATIO)

    @cached_property
    def short_rows(self) -> np.ndarray:
        """The explicit unit secants of the ``short`` pairs, (len(short), N) (without forming ``V``)."""
        k = self.short
        return (self.points[self.i[k]] - self.points[self.j[k]]) / self.norms[k, None]

    def explicit(self) -> SecantOperator:
        """The same map from the explicit unit rows (rounding errors bounded row by row)."""
        return SecantOperator(self.V)

    def in_basis(self, basis: np.ndarray) -> PairSecantOperator:
        """The pair operator on the points' coordinates in the orthonormal ``basis`` Q (N, r)."""
        # the rows through the points: O(n_a N r) rather than O(S N r) for V @ basis
        return self.with_points(self.points @ basis)

    def with_points(self, points: np.ndarray, gram_cell: dict | None = None) -> PairSecantOperator:
        """The same pairs, with their original lengths, on other coordinates ``points`` (n_a, r) of the same
        centred points (in the order of ``points``, e.g. in a basis of their span); its rows ``V`` are
        made when first read, as :class:`PairSecantOperator`'s. ``gram_cell``, the holder of the
        :meth:`points_gram` of another operator on this very ``points`` array, shares that Gram matrix."""
        out = PairSecantOperator.__new__(PairSecantOperator)
        out.points, out.i, out.j, out.norms, out.rows = points, self.i, self.j, self.norms, self.rows
        out._gram_cell = {} if gram_cell is None else gram_cell
        return out
