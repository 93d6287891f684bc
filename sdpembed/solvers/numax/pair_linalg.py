"""The linear algebra of the pair ADMM: 𝒜* through the points, implicit iterates, a partial eigensolver.

:func:`~sdpembed.solvers.numax.admm_pairs.pair_trace_admm` runs NuMax Algorithm 1 on the secants
of pairs of points without forming an r×r matrix in a normal iteration (its module docstring
describes the iteration). The pieces it is built from are here:

* :class:`PairGeometry` — 𝒜*(v) = X_aᵀ Lap(v/d²) X_a through the n_a points the pairs touch, with
  a sparse Laplacian laid out once, and 𝒜(FFᵀ) from a factor F;
* :class:`ImplicitMatrix` — L + Λ = U diag(s) Uᵀ + α Λ₀ + γ L₀ + 𝒜*(u), applied to blocks;
* :class:`PartialShrink` — the eigenvalue shrinkage (11) from a warm-started block of Ritz
  vectors, with a full eigendecomposition when the block does not suffice;
* :class:`LeastSquaresSteps` — c = (I + 𝒜𝒜*)⁻¹ rhs of the least-squares step (12)–(13), by a
  Cholesky factor or an explicit inverse, in single or double precision;
* :func:`holds_secants`, :func:`factor_in_original_coordinates`, :func:`approximate_bound` — the
  working basis, the factor Ψ in the original coordinates, and the dual bound used for stopping
  decisions (the reported certificate is recomputed from the explicit secants), with
  :func:`range_corrected_multipliers`, multipliers made complementary to the iterate's range for a
  closer bound near the optimum;
* :class:`SpanCoordinates` — the coordinates of all the points in one basis of their span and their
  residuals, computed once for every restricted problem on pairs of these points.

References
----------
.. [1] C. Hegde, A. C. Sankaranarayanan, W. Yin and R. G. Baraniuk, "NuMax: A convex approach for
   learning near-isometric linear embeddings", IEEE Transactions on Signal Processing 63(22),
   6109–6121, 2015. Implemented here: the shrinkage (11) and the least-squares step (12)–(13) of
   Algorithm 1, on the restricted problems of Algorithm 2.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.sparse

from ...problems.numax_certificate import dual_objective, signed_multipliers
from ...problems.numax_operator import PairSecantOperator
from .admm import ADMMState, least_squares_inverse, symmetric_matvec
from .least_squares import (
    CholeskySolve,
    cheaper_from_points,
    extend_factor,
    extend_gram,
    extension_is_cheaper,
    gram_rows,
    secant_cosines,
)

__all__ = [
    "ImplicitMatrix",
    "LeastSquaresSteps",
    "PairGeometry",
    "PartialShrink",
    "SpanCoordinates",
    "approximate_bound",
    "factor_in_original_coordinates",
    "holds_secants",
    "orthonormal_complement",
    "range_corrected_multipliers",
]


class PairGeometry:
    """𝒜* through the points of a :class:`PairSecantOperator`: applied to blocks, formed, normed.

    𝒜*(v) = X_aᵀ Lap(v/d²) X_a with the weighted graph Laplacian of the pairs, an n_a × n_a
    sparse matrix whose pattern (the pairs and the diagonal) is fixed for the operator: it is
    laid out once in CSR order, and a new weight vector only refills its values (O(S)), so a
    product with an (n_a, m) block costs O((S + n_a) m) rather than a gather of S × m differences.
    """

    def __init__(self, op: PairSecantOperator) -> None:
        self.op = op
        self.points = op.points                                   # (n_a, r)
        n_a = self.points.shape[0]
        self.inv_d2 = 1.0 / op.norms**2
        # the short pairs' terms come from their secants (op.short: the Laplacian would lose them to cancellation)
        self._laplacian_inv_d2 = self.inv_d2.copy()
        self._laplacian_inv_d2[op.short] = 0.0
        rows = np.concatenate([op.i, op.j, np.arange(n_a)])
        cols = np.concatenate([op.j, op.i, np.arange(n_a)])
        #: the entries' order in CSR layout (row-major, columns ascending)
        self._csr_order = np.lexsort((cols, rows))
        indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=n_a))])
        self._laplacian = scipy.sparse.csr_matrix(
            (np.zeros(rows.size), cols[self._csr_order], indptr), shape=(n_a, n_a))
        self._weights = np.empty(rows.size)
        self._points_single: np.ndarray | None = None
        self._laplacian_single: scipy.sparse.csr_matrix | None = None

    def laplacian(self, v: np.ndarray, dtype=np.float64) -> scipy.sparse.csr_matrix:
        """Lap(v/d²) = Σ_k (v_k/d_k²)(e_i − e_j)(e_i − e_j)ᵀ (n_a, n_a) over the pairs that are not short,
        sparse, with values of ``dtype``; valid until the next call."""
        n_a, S = self.points.shape[0], v.size
        w = v * self._laplacian_inv_d2
        self._weights[:S] = -w
        self._weights[S:2 * S] = -w
        self._weights[2 * S:] = np.bincount(self.op.i, w, n_a) + np.bincount(self.op.j, w, n_a)
        if dtype == np.float64:
            out = self._laplacian
        else:
            if self._laplacian_single is None:          # the same layout with single-precision values
                base = self._laplacian
                self._laplacian_single = scipy.sparse.csr_matrix(
                    (np.zeros(base.nnz, np.float32), base.indices, base.indptr), shape=base.shape)
            out = self._laplacian_single
        out.data[:] = self._weights[self._csr_order]
        return out

    def points_as(self, dtype) -> np.ndarray:
        """The points X_a in ``dtype`` (the single-precision copy is made once)."""
        if dtype == np.float64:
            return self.points
        if self._points_single is None:
            self._points_single = self.points.astype(np.float32)
        return self._points_single

    def laplacian_apply(self, v: np.ndarray, Y: np.ndarray) -> np.ndarray:
        """Lap(v/d²) Y for Y of shape (n_a, m), in Y's precision."""
        return np.asarray(self.laplacian(v, Y.dtype) @ Y)

    def adjoint_apply(self, v: np.ndarray, X: np.ndarray, images: np.ndarray | None = None) -> np.ndarray:
        """𝒜*(v) X = X_aᵀ Lap(v/d²) X_a X for X of shape (r, m), in X's precision; ``images``, if
        given, is X_a X (n_a, m), known to the caller (it is then not recomputed)."""
        points = self.points_as(X.dtype)
        images = points @ X if images is None else images.astype(X.dtype, copy=False)
        out = points.T @ self.laplacian_apply(v, images)
        short = self.op.short
        if short.size:
            rows = self.op.short_rows.astype(X.dtype, copy=False)
            out += rows.T @ (v[short].astype(X.dtype)[:, None] * (rows @ X))
        return out

    def adjoint(self, v: np.ndarray) -> np.ndarray:
        """𝒜*(v) as a dense symmetric (r, r) matrix: X_aᵀ (Lap X_a), 2·n_a·r² flops, or, with at most
        1.5·n_a pairs, Σ_k v_k v_k v_kᵀ over the secant rows by two ``syrk`` (one for the positive
        weights, one for the negative: S·r² flops, at a lower rate than the product's)."""
        S, n_a = v.size, self.points.shape[0]
        if 2 * S > 3 * n_a:
            out = self.points.T @ self.laplacian_apply(v, self.points)
            if self.op.short.size:
                out += (self.op.short_rows.T * v[self.op.short]) @ self.op.short_rows
            return 0.5 * (out + out.T)
        V, positive = self.op.V, v > 0.0
        # the transposed views (r, k) are Fortran-ordered: syrk reads them without a copy
        out = scipy.linalg.blas.dsyrk(1.0, (V[positive] * np.sqrt(v[positive])[:, None]).T, lower=1)
        negative = ~positive
        out = scipy.linalg.blas.dsyrk(-1.0, (V[negative] * np.sqrt(-v[negative])[:, None]).T, beta=1.0, c=out,
                                      lower=1, overwrite_c=1)
        return np.tril(out) + np.tril(out, -1).T

    def factor_values(self, F: np.ndarray, images: np.ndarray | None = None) -> np.ndarray:
        """𝒜(F Fᵀ) = ‖(x_i − x_j)ᵀF‖² / d² for F of shape (r, k); ``images``, if given, is X_a F."""
        Y = self.points @ F if images is None else images
        D = Y[self.op.i] - Y[self.op.j]
        return np.einsum("ij,ij->i", D, D) * self.inv_d2


class ImplicitMatrix:
    """M = U diag(s) Uᵀ + α Λ₀ + γ L₀ + 𝒜*(u): applied to blocks, or formed densely.

    ``constants_single`` holds single-precision copies of (Λ₀, L₀) for products with float32
    blocks (see :class:`PartialShrink`); the products are then computed in single precision.
    """

    def __init__(self, geometry: PairGeometry, U, s, alpha, Lam0, gamma, L0, u,
                 constants_single: tuple | None = None) -> None:
        self.g, self.U, self.s, self.alpha, self.Lam0, self.gamma, self.L0, self.u = (
            geometry, U, s, alpha, Lam0, gamma, L0, u)
        self.constants_single = constants_single

    def apply(self, X: np.ndarray, images: np.ndarray | None = None) -> np.ndarray:
        """M X for X of shape (r, m), in X's precision (float64 or float32); ``images``, if given, is
        X_a X, the points' images (as for ``PairGeometry.adjoint_apply``)."""
        single = X.dtype == np.float32
        Lam0, L0 = self.constants_single if single and self.constants_single else (self.Lam0, self.L0)
        out = self.g.adjoint_apply(self.u, X, images)
        if self.U is not None and self.U.shape[1]:
            U = self.U.astype(X.dtype, copy=False)
            out += U @ (self.s.astype(X.dtype)[:, None] * (U.T @ X))
        if self.alpha != 0.0 and Lam0 is not None:
            out += X.dtype.type(self.alpha) * (Lam0 @ X)
        if self.gamma != 0.0 and L0 is not None:
            out += X.dtype.type(self.gamma) * (L0 @ X)
        return out

    def dense(self) -> np.ndarray:
        out = self.g.adjoint(self.u)
        if self.U is not None and self.U.shape[1]:
            out += (self.U * self.s) @ self.U.T
        if self.alpha != 0.0 and self.Lam0 is not None:
            out += self.alpha * self.Lam0
        if self.gamma != 0.0 and self.L0 is not None:
            out += self.gamma * self.L0
        return 0.5 * (out + out.T)


class PartialShrink:
    """Eigenvalue shrinkage (11) from a warm-started block of Ritz vectors (see
    :mod:`~sdpembed.solvers.numax.admm_pairs`).

    With ``single``, the block and its expansions are float32: the products of the Rayleigh–Ritz
    steps (with M, through the points, the projections and the rotations by the small eigenvectors)
    run in single precision. The QR factorisations and the small eigenproblems do not: NumPy's
    ``linalg`` computes float32 input in double precision and rounds the result to float32. A
    Ritz residual is asked down to ``SINGLE_FLOOR``·‖M‖ (1e-5) only, about what single-precision
    products resolve. For the loose rounds of column generation, whose ADMM stops at 1e-3 accuracy.

    The points' images X_a B of the block B are carried along with it (``images``): a Ritz block
    is B′ = [B, Q] Z, so X_a B′ = [X_a B, X_a Q] Z costs n_a·m² where a product through the points
    costs n_a·r·m, and only the expansion directions Q go through the points. The images of the
    returned eigenvectors (``vector_images``) give 𝒜(P) of the shrunk P without another product
    (``PairGeometry.factor_values``). They are kept in double precision, and made afresh from
    the points at every full eigendecomposition and at the start of a run.
    """

    #: smallest Ritz residual (relative to ‖M‖) asked of a single-precision Rayleigh–Ritz step
    SINGLE_FLOOR = 1e-5

    def __init__(self, dim: int, eig_tol: float, refresh_every: int, margin: int = 16,
                 single: bool = False) -> None:
        self.dim, self.eig_tol, self.refresh_every, self.margin = dim, eig_tol, refresh_every, margin
        self.single = single
        self.block: np.ndarray | None = None
        #: X_a·block, the points' images of the block (None: not known yet), in double precision
        self.images: np.ndarray | None = None
        #: X_a·vectors, the points' images of the eigenvectors the last call returned
        self.vector_images: np.ndarray | None = None
        self.since_full = 0
        self.full_count = self.partial_count = 0

    def start_from(self, block: np.ndarray | None) -> None:
        """Start from a block of Ritz vectors carried over from an earlier run in the same basis
        (a warm start: L + Λ changes little from one restricted problem of column generation to the
        next), instead of a full eigendecomposition; ignored unless it is a (dim, m) block of full rank
        that leaves room for its expansion. It is orthonormalised again in double precision (it may
        come from a single-precision run)."""
        if block is None or block.ndim != 2 or block.shape[0] != self.dim or 2 * block.shape[1] > self.dim:
            return
        Q, R = np.linalg.qr(np.asarray(block, dtype=np.float64))
        if block.shape[1] == 0 or np.min(np.abs(np.diag(R))) < 0.5:      # not (close to) orthonormal
            return
        self.block, self.images = Q, None
        self.since_full = 0

    def _full(self, M: ImplicitMatrix, threshold: float) -> tuple[np.ndarray, np.ndarray]:
        w, V = np.linalg.eigh(M.dense())
        self.full_count += 1
        self.since_full = 0
        above = int(np.sum(w > threshold))
        m = min(self.dim, above + self.margin)
        self.block = V[:, self.dim - m:]
        self.images = M.g.points @ self.block
        # the eigenvalues above the threshold are the block's last ones (eigh sorts them ascending)
        self.vector_images = self.images[:, m - above:]
        return w[w > threshold], V[:, w > threshold]

    def _ritz(self, M: ImplicitMatrix, threshold: float, tol: float) -> tuple[np.ndarray, np.ndarray] | None:
        """Rayleigh–Ritz on the carried block B (m columns), then on it expanded by residual
        directions, repeated (at most three expansions) until every Ritz pair above ``threshold``
        has converged; None: use a full solve.

        The Ritz pairs (θ, BZ) of B cost no product with M beyond MB, and their residuals
        MBZ − BZθ span (I − BBᵀ)MB. The carried block alone is never accepted (it is the previous
        iteration's); each expansion takes the residuals of the unconverged Ritz pairs above the
        threshold only — the ones the shrinkage uses, typically the rank of P out of the m — and
        all m residuals when none is (where an eigenvalue rising above the threshold from outside
        the block would show). The m largest Ritz pairs of the expanded block are kept. The block
        must hold every eigenvalue above the threshold: when all m Ritz values lie above it, it is
        too small."""
        m = self.block.shape[1]
        basis = self.block.astype(np.float32) if self.single else self.block
        points = M.g.points_as(basis.dtype)
        images = [M.g.points @ self.block if self.images is None else self.images]
        image = M.apply(basis, images[0])
        theta, U, Y, C = _rayleigh_ritz(basis, image, m)
        # U = [B, Q₁, Q₂, …] C: the images of U are formed once, when it is accepted
        C = C.astype(np.float64, copy=False)
        R = Y - U * theta
        unconverged = self._unconverged(theta, R, threshold, tol)
        for _ in range(3):                          # at most three expansions
            Q = orthonormal_complement(R[:, unconverged] if np.any(unconverged) else R, U)
            images.append(points @ Q)
            theta, U, Y, Z = _rayleigh_ritz(np.hstack([U, Q]), np.hstack([Y, M.apply(Q, images[-1])]), m)
            Z = Z.astype(np.float64, copy=False)
            C = np.vstack([C @ Z[:m], Z[m:]])
            if theta[0] >= threshold:                  # the block is too small to hold every eigenvalue above
                self.images = None
                return None
            above = theta > threshold
            R = Y - U * theta                          # the residuals both the test and the next expansion use
            unconverged = self._unconverged(theta, R, threshold, tol)
            if not np.any(unconverged):
                self.block = U.astype(np.float64, copy=False)
                self.images = np.hstack(images) @ C
                self.vector_images = self.images[:, above]
                self.partial_count += 1
                self.since_full += 1
                return theta[above].astype(np.float64, copy=False), self.block[:, above]
        self.images = None
        return None

    @staticmethod
    def _unconverged(theta: np.ndarray, residuals: np.ndarray, threshold: float, tol: float) -> np.ndarray:
        """Which Ritz pairs lie above ``threshold`` with a residual above ``tol``·max(|θ|, threshold)."""
        scale = max(float(np.max(np.abs(theta))), threshold, 1e-300)
        return (theta > threshold) & (np.linalg.norm(residuals, axis=0) > tol * scale)

    def __call__(self, M: ImplicitMatrix, threshold: float, accuracy: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
        """(eigenvalues above ``threshold``, their eigenvectors) of M; Ritz residuals below
        ``eig_tol``·``accuracy``·‖M‖ (``accuracy``: the ADMM's current residual, so that the
        projection errors shrink with it)."""
        if (self.block is None or self.since_full >= self.refresh_every
                or 2 * self.block.shape[1] > self.dim):
            return self._full(M, threshold)
        floor = self.SINGLE_FLOOR if self.single else 1e-13
        out = self._ritz(M, threshold, max(self.eig_tol * min(accuracy, 1.0), floor))
        return self._full(M, threshold) if out is None else out


class LeastSquaresSteps:
    """c = (I + 𝒜𝒜*)⁻¹ rhs for the iterations, by the means ``least_squares`` names (see
    :class:`~sdpembed.solvers.numax.admm_pairs.PairNumerics`), switching means as the run goes on:

    * ``"auto"``: a double-precision Cholesky factor, inverted (``potri``) after
      max(50, S/25) iterations — or the given inverse, updated;
    * ``"mixed"``: a single-precision factor, refactorised in double precision (then as
      ``"auto"``) after max(50, S/25) iterations or when :meth:`to_double` is called;
    * ``"inverse"``, ``"cholesky"``, ``"cholesky-single"``: that means throughout.

    The factor of a warm start (``warm_start.factor``) is taken from it: the state no longer holds
    it, and it is freed as soon as it has been block-updated (:func:`extend_factor`) or found
    unfit, so that a round never holds its predecessor's S × S factor beside its own.

    With ``keep_cosines``, a single-precision factor of an 𝒜𝒜* computed afresh keeps the VVᵀ it squared
    (one more S × S single-precision array) for the normal matrix of a polish (:meth:`take_cosines`,
    :func:`~sdpembed.solvers.numax.factor_polish.polish_with_system`), which would otherwise compute it again.
    """

    def __init__(self, op: PairSecantOperator, mode: str, warm_start: ADMMState | None,
                 basis: np.ndarray | None = None, keep_cosines: bool = False) -> None:
        self.op, self.period = op, max(50, op.n_constraints // 25)
        self.cosines: np.ndarray | None = None
        known_inverse = None if warm_start is None else warm_start.K_inv
        single = mode in ("mixed", "cholesky-single")
        self.K_inv: np.ndarray | None = None
        self.refinable = mode == "mixed"              # still in single precision, with double to come
        self.doubled_at: int | None = None            # iteration at which "mixed" went to double precision
        self.next_switch = self.period if mode in ("auto", "mixed") else 0
        self.extended = False                         # whether the factor is a block update of the warm start's
        self.fresh = cheaper_from_points(op)
        self.cholesky: CholeskySolve | None = None
        # the warm start's factor is handed over: the state lets go of it, so that it is freed once
        # extended (or at once, when it is not used) rather than held beside this run's S × S matrices
        handed = (None, None) if warm_start is None else (warm_start.factor, warm_start.factor_kept)
        if warm_start is not None:
            warm_start.factor = warm_start.factor_kept = None
        if mode != "inverse" and not (mode == "auto" and known_inverse is not None) and warm_start is not None:
            self.cholesky = self._extended(warm_start, handed, np.float32 if single else np.float64, basis)
        del handed
        if self.cholesky is not None:
            self.gram, self.extended = None, True
            return
        # 𝒜𝒜* from the points costs less than reusing the warm start's (self.fresh): then it is computed
        # afresh and factorised in place (no S × S copy, none kept for the next run)
        inverse = mode == "inverse" or (mode == "auto" and known_inverse is not None)
        # a factorisation reads the lower triangle only
        if keep_cosines and self.fresh and single and not inverse:
            # VVᵀ kept for a polish's normal matrix (take_cosines), which would otherwise make it again
            self.cosines = secant_cosines(op, 0, np.float32, lower=True)
            self.gram = np.square(self.cosines, order="F")          # as gram_rows: the squares of VVᵀ
        else:
            self.gram = (gram_rows(op, 0, np.float32 if single else np.float64, lower=not inverse) if self.fresh else
                         extend_gram(op, None if warm_start is None else warm_start.gram,
                                     np.float32 if single else np.float64,
                                     kept=None if warm_start is None else warm_start.gram_kept))
        # "auto": the factor is inverted once the extra cost of its triangular solves (≈ one symv
        # each) has added up to that of potri (≈ S³ flops against 2S² a solve)
        if inverse:
            self.K_inv, self.next_switch = least_squares_inverse(op, known_inverse, self.gram), 0
        else:
            self.cholesky = self._factorise(single)

    def _factorise(self, single: bool) -> CholeskySolve:
        """The Cholesky factor of I + 𝒜𝒜*; in place when 𝒜𝒜* was computed afresh (then not kept)."""
        cholesky = CholeskySolve(self.gram, single=single, overwrite=self.fresh)
        cholesky.secants_of(self.op)
        if self.fresh:
            self.gram = None
        return cholesky

    def _extended(self, warm_start: ADMMState, handed: tuple, dtype, basis: np.ndarray | None) -> CholeskySolve | None:
        """The warm start's factor and its kept rows (``handed``), block-updated to these pairs
        (:func:`extend_factor`), when it is of the precision asked, in the same basis, of the same
        first pairs and cheaper than a fresh one."""
        previous, kept = handed
        if previous is None or kept is None or previous.factor is None or previous.dtype != dtype:
            return None
        if not (warm_start.basis is basis or (basis is not None and warm_start.basis is not None
                                              and np.array_equal(warm_start.basis, basis))):
            return None
        n_kept, S = int(np.count_nonzero(kept)), self.op.n_constraints
        live = np.arange(previous.factor.shape[0]) if previous.live is None else previous.live
        if kept.size != live.size or n_kept > S:
            return None
        # before the secants: a fresh factor's are formed when first read
        if (not extension_is_cheaper(previous, n_kept, S - n_kept, self.op.points.shape[0], self.op.dim)
                or (previous.secant_source is None and previous.secants is None)):
            return None
        # a warm start from other secants is never trusted blindly: a sample of the kept rows
        sample = np.unique(np.random.default_rng(n_kept).integers(0, max(n_kept, 1), 64)) if n_kept else []
        if n_kept and not np.allclose(previous.secant_rows(live[kept][sample]), self.op.unit_secants(sample),
                                      rtol=0.0, atol=1e-12):
            return None
        if not previous.n_ghosts and n_kept == previous.order and np.array_equal(live, np.arange(n_kept)):
            # the factor's rows are this operator's first ones: the added rows of 𝒜𝒜* through its points
            return extend_factor(previous, kept, None, operator=self.op)
        return extend_factor(previous, kept, self.op.unit_secants(slice(n_kept, None)))

    def take_cosines(self) -> np.ndarray:
        """VVᵀ of the secants in single precision, its lower triangle (as
        :func:`~sdpembed.solvers.numax.least_squares.secant_cosines` with ``lower``): the one kept when
        I + 𝒜𝒜* was factorised (``keep_cosines``), handed over — the caller may overwrite it — or made."""
        cosines, self.cosines = self.cosines, None
        return secant_cosines(self.op, 0, np.float32, lower=True) if cosines is None else cosines

    def __call__(self, rhs: np.ndarray, iteration: int) -> np.ndarray:
        if iteration == self.next_switch:
            if self.refinable:
                self.to_double(iteration)
            else:
                self.K_inv, self.cholesky, self.next_switch = self.cholesky.inverse(), None, 0
        return self.cholesky(rhs) if self.cholesky is not None else symmetric_matvec(self.K_inv, rhs)

    def to_double(self, iteration: int) -> None:
        """Leave single precision: 𝒜𝒜* recomputed and factorised in double precision (``"mixed"``)."""
        if self.refinable:
            self.refinable, self.doubled_at = False, iteration
            self.cholesky = None                    # freed before the double-precision 𝒜𝒜* is made
            self.cosines = None                     # as is a kept VVᵀ: the peak stays two S × S arrays
            self.gram = (gram_rows(self.op, 0, np.float64, lower=True) if self.fresh
                         else extend_gram(self.op, None, np.float64))
            self.cholesky = self._factorise(False)
            self.next_switch = iteration + self.period


def _rayleigh_ritz(basis: np.ndarray, image: np.ndarray,
                   m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The m largest Ritz values θ of M on the orthonormal ``basis`` (``image`` = M·basis), their Ritz
    vectors U = basis·Z, images MU = image·Z (no further product with M) and the coefficients Z."""
    H = basis.T @ image
    theta, Z = np.linalg.eigh(0.5 * (H + H.T))
    theta, Z = theta[-m:], Z[:, -m:]
    return theta, basis @ Z, image @ Z, Z


def orthonormal_complement(directions: np.ndarray, basis: np.ndarray) -> np.ndarray:
    """An orthonormal basis of the part of span(``directions``) orthogonal to the orthonormal
    ``basis``: projected out twice (classical Gram–Schmidt, "twice is enough"), then QR."""
    W = directions - basis @ (basis.T @ directions)
    W -= basis @ (basis.T @ W)
    return np.linalg.qr(W)[0]


def holds_secants(operator: PairSecantOperator, basis: np.ndarray, coordinates: np.ndarray | None = None,
                   tol: float = 1e-10) -> bool:
    """Whether span(``basis``) reproduces every secant to ``tol``: ‖(I − QQᵀ)(x_i − x_j)‖ / d ≤ tol,
    from the residuals ρ of the points (O(n_a N r) rather than O(S N r); ``coordinates``, the
    points' Qᵀx if known, saves half of it). The bound (‖ρ_i‖ + ‖ρ_j‖) / d, O(S), settles the usual
    case (a basis of all the points' span); only when it does not are the residuals of the
    differences computed."""
    if basis.ndim != 2 or basis.shape[0] != operator.dim:
        return False
    coordinates = operator.points @ basis if coordinates is None else coordinates
    residual = operator.points - coordinates @ basis.T
    norms = np.linalg.norm(residual, axis=1)
    if np.max((norms[operator.i] + norms[operator.j]) / operator.norms, initial=0.0) <= tol:
        return True
    diff = residual[operator.i] - residual[operator.j]
    return bool(np.max(np.linalg.norm(diff, axis=1) / operator.norms, initial=0.0) <= tol)


class SpanCoordinates:
    """The points X (n, N) in an orthonormal basis Q (N, r) of a subspace that holds their span,
    for every restricted problem on pairs of them (the rounds of column generation).

    A :class:`PairSecantOperator` in the basis needs its n_a points' coordinates and a proof that
    Q reproduces its secants (:func:`holds_secants`), O(n_a N r) each time. Both follow from the
    coordinates C = (X − x̄)Q and the residuals ρ = (X − x̄) − CQᵀ of all the points, computed
    once: the centred points of a pair set have the coordinates C[rows] − mean(C[rows]) (Q is
    linear), and the residual of a secant is (ρ_i − ρ_j)/d, so (‖ρ_i‖ + ‖ρ_j‖)/d bounds it.
    Successive operators on the same points (the same centred coordinates, bit for bit) share their
    Gram matrix H = C_a C_aᵀ, from which their rows of 𝒜𝒜* come
    (:func:`~sdpembed.solvers.numax.least_squares.secant_cosines`): it is computed once, not in every
    round.

    Parameters
    ----------
    X : ndarray of shape (n, N)
        The points the operators' pairs join.
    basis : ndarray of shape (N, r)
        Orthonormal columns.
    """

    def __init__(self, X: np.ndarray, basis: np.ndarray) -> None:
        self.X = np.asarray(X, dtype=np.float64)
        self.basis = basis
        centred = self.X - self.X.mean(axis=0)
        self.coordinates = centred @ basis
        self.residual_norms = np.linalg.norm(centred - self.coordinates @ basis.T, axis=1)
        # the centred coordinates of the last operator reduced and the holder of their Gram matrix
        # (PairSecantOperator.points_gram): the next rounds on the same points reuse it
        self._last: tuple[np.ndarray, dict] | None = None

    def reduced(self, operator: PairSecantOperator, tol: float = 1e-10) -> PairSecantOperator | None:
        """``operator.in_basis(basis)`` from the stored coordinates, in O(n_a r + S r); None unless
        ``operator`` joins rows of X (its centred points are those of ``X[operator.rows]``,
        checked exactly, O(n_a N)) and the residual bound proves every secant held to ``tol``
        (then :func:`holds_secants` decides)."""
        rows = getattr(operator, "rows", None)
        if (rows is None or operator.points.shape[1] != self.X.shape[1]
                or (rows.size and (rows[0] < 0 or rows[-1] >= self.X.shape[0]))):
            return None
        points = self.X[rows]
        if not np.array_equal(points - points.mean(axis=0), operator.points):
            return None
        rho = self.residual_norms[rows]
        if np.max((rho[operator.i] + rho[operator.j]) / operator.norms, initial=0.0) > tol:
            return None
        coordinates = self.coordinates[rows]
        points = coordinates - coordinates.mean(axis=0)
        if self._last is not None and np.array_equal(self._last[0], points):
            points, cell = self._last            # the same points bit for bit: their Gram matrix carries over
        else:
            cell = {}
            self._last = (points, cell)
        return operator.with_points(points, gram_cell=cell)


def factor_in_original_coordinates(U: np.ndarray, s: np.ndarray, basis: np.ndarray | None) -> np.ndarray:
    """Ψ (k, N) with ΨᵀΨ = P for P = Q U diag(s) Uᵀ Qᵀ (Q = ``basis``, or the identity)."""
    factor = (U * np.sqrt(s)).T
    return factor if basis is None else factor @ basis.T


def approximate_bound(geometry: PairGeometry, lo, hi, y) -> float:
    """Dual bound g(y)/λ_max(𝒜*(y)) through the points — for stopping decisions only; the reported
    certificate is recomputed from the explicit secants by
    :func:`sdpembed.problems.numax_certificate.certified_lower_bound`."""
    y = signed_multipliers(y, lo, hi)
    g = dual_objective(y, lo, hi)
    if not np.isfinite(g) or g <= 0.0:
        return 0.0
    lam = float(np.linalg.eigvalsh(geometry.adjoint(y))[-1])
    return g / lam if lam > 0 else 0.0


def range_corrected_multipliers(geometry: PairGeometry, U: np.ndarray, y: np.ndarray, *, rtol: float = 1e-3,
                                max_iter: int = 50) -> np.ndarray:
    """Multipliers y + Δy with Uᵀ𝒜*(y + Δy)U = I on the range of a primal iterate P = U diag(s) Uᵀ.

    At an optimum of the SDP (4) the dual slack Z = I − 𝒜*(y) is PSD and complementary to P
    (ZP = 0), so 𝒜*(y) restricted to range(P) is the identity. The ADMM's multipliers meet this only
    as fast as its iterates converge, and the bound g(y)/λ_max(𝒜*(y)) loses about tr P times the
    excess of λ_max over 1, which comes from the k eigenvalues of Uᵀ𝒜*(y)U near 1 (the others keep a
    margin). The correction makes those k eigenvalues exactly 1: with w_i = Uᵀv_i, it solves

        Σ_i Δy_i w_i w_iᵀ = I − Uᵀ𝒜*(y)U,    Δy_i = |y_i| w_iᵀΘw_i,

    the least change of y in the metric diag(1/|y|) — so a multiplier that is 0 (a constraint off its
    bounds) stays 0 — for the symmetric k × k unknown Θ, by conjugate gradients preconditioned by
    Θ ↦ C⁻¹ΘC⁻¹, C = Σ_i |y_i| w_i w_iᵀ (the system's Gaussian-moment approximation). Each step
    costs O(S k²), against O(S²) for an iteration of the ADMM. Any y gives a valid bound
    (:func:`approximate_bound`); this one is only a better one near the optimum.

    Parameters
    ----------
    geometry : PairGeometry
        The pairs.
    U : ndarray of shape (r, k)
        Orthonormal basis of the range of the primal iterate.
    y : ndarray of shape (S,)
        The multipliers to correct (the ADMM's β·ω).
    rtol : float
        Stop once the residual's Frobenius norm is at most ``rtol`` times that of I − Uᵀ𝒜*(y)U.
    max_iter : int
        Most conjugate-gradient steps.

    Returns
    -------
    ndarray of shape (S,)
        The corrected multipliers (``y`` itself when U is empty or the system is degenerate).

    References
    ----------
    .. [1] C. Hegde, A. C. Sankaranarayanan, W. Yin and R. G. Baraniuk, "NuMax: A convex approach for
       learning near-isometric linear embeddings", IEEE Transactions on Signal Processing 63(22),
       6109–6121, 2015. Implemented here: the dual of the SDP (4), whose slack is complementary to the
       solution of Algorithm 1.
    """
    y = np.asarray(y, dtype=np.float64)
    k = U.shape[1]
    if k == 0 or not np.any(y):
        return y
    op = geometry.op
    Z = geometry.points @ U
    W = (Z[op.i] - Z[op.j]) / op.norms[:, None]                 # (S, k): row i is w_iᵀ = v_iᵀU
    weight = np.abs(y)

    def system(T: np.ndarray) -> np.ndarray:
        """Σ_i |y_i| (w_iᵀTw_i) w_i w_iᵀ."""
        return (W.T * (weight * np.einsum("ij,ij->i", W @ T, W))) @ W

    R = np.eye(k) - (W.T * y) @ W
    R = 0.5 * (R + R.T)
    c, Q = np.linalg.eigh((W.T * weight) @ W)
    if not c[-1] > 0.0:
        return y
    Cinv = (Q / np.maximum(c, 1e-12 * c[-1])) @ Q.T
    target = rtol * np.linalg.norm(R)
    theta, residual = np.zeros((k, k)), R.copy()
    z = Cinv @ residual @ Cinv
    direction, rz = z, float(np.sum(residual * z))
    for _ in range(max_iter):
        if not np.linalg.norm(residual) > target:
            break
        image = system(direction)
        curvature = float(np.sum(direction * image))
        if not curvature > 0.0:
            break
        step = rz / curvature
        theta += step * direction
        residual -= step * image
        z = Cinv @ residual @ Cinv
        rz, rz_old = float(np.sum(residual * z)), rz
        direction = z + (rz / rz_old) * direction
    return y + weight * np.einsum("ij,ij->i", W @ theta, W)
