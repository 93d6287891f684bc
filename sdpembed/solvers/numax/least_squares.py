"""The least-squares matrix K = I + 𝒜𝒜* of the NuMax ADMM (12)–(13): kept across rounds, factorised.

Column generation (NuMax Algorithm 2) solves a sequence of restricted problems whose secants
overlap: most pairs of one round are kept for the next. 𝒜𝒜* = (VVᵀ)∘(VVᵀ) (the Gram matrix of
the secants' outer products, entries (v_kᵀv_l)²) is the expensive part of K to form, O(S² r);
:func:`extend_gram` reuses the block of the kept pairs and computes only the new pairs' rows,
O(S k r) for k new ones. The secants of pairs of points need not be touched at all:
:func:`secant_cosines` reads v_kᵀv_l off the Gram matrix of the n_a points the pairs join,
O(n_a² r) and gathers of O(S²); when n_a ≤ S, 𝒜𝒜* is made afresh every round and factorised in
place (:func:`cheaper_from_points`), with no S × S copy — its lower triangle, which the
factorisation reads, that way or by ``syrk`` of the secants, whichever costs less
(:func:`cosines_by_syrk`).

Two ways to apply K⁻¹ in the iterations:

* the explicit inverse (:func:`~sdpembed.solvers.numax.admm._spd_inverse`, Cholesky then
  ``potri``), applied by one ``symv`` — the cheapest per iteration, worth it for the many
  iterations of an accurate solve, and cheap to update for small changes of the pairs;
* :class:`CholeskySolve`, the Cholesky factor alone, applied by two triangular solves — about
  twice as slow per iteration but without ``potri`` (itself about 1.7 times a Cholesky
  factorisation), the better choice for the short, inexact early rounds of column generation
  whose pairs change by thousands from one round to the next, and for restricted solves that
  stop early. A run that goes on long enough turns the factor into the inverse
  (:meth:`CholeskySolve.inverse`): with the factor at hand that costs only ``potri``.

When the next round keeps nearly all pairs (the late rounds of column generation), the factor is
block-updated rather than refactorised (:func:`extend_factor`): the new pairs' rows are appended
as a block (the factor they extend is kept as it is, not copied into a larger array; when every
pair is kept, their rows of 𝒜𝒜* come from the points' Gram matrix, as a fresh 𝒜𝒜* does), and the
dropped pairs stay in the factor as ghost rows that every solve steps around exactly. In
the early rounds a third or more of the pairs change and the update would cost more than a fresh
factor; :func:`extension_is_cheaper` decides.

References
----------
.. [1] C. Hegde, A. C. Sankaranarayanan, W. Yin and R. G. Baraniuk, "NuMax: A convex approach for
   learning near-isometric linear embeddings", IEEE Transactions on Signal Processing 63(22),
   6109–6121, 2015. Implemented here: the least-squares step (12)–(13), across the rounds of
   Algorithm 2.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import scipy.linalg
from threadpoolctl import ThreadpoolController

from ...problems.numax_operator import PairSecantOperator, SecantOperator

__all__ = ["extend_gram", "gram_rows", "secant_cosines", "cosines_by_syrk", "cheaper_from_points", "CholeskySolve",
           "cholesky_factor", "extend_factor", "extension_is_cheaper", "inverse_from_cholesky", "factorisation_threads",
           "factorisation_thread_limit"]

#: below this order a factorisation runs on one thread (threads only add overhead)
_THREADED_FROM = 1500
_controller: ThreadpoolController | None = None


def _vendored_by_another_package(filepath: str | None) -> bool:
    """Whether a BLAS library is a private copy vendored by a package other than numpy and SciPy
    (a wheel's ``<name>.libs`` directory, e.g. SCS's own OpenBLAS): our factorisations never run on
    it, and an old copy may not follow a thread limit above the one it was loaded with."""
    parent = Path(filepath or "").parent.name
    return parent.endswith(".libs") and parent not in ("numpy.libs", "scipy.libs")


def _blas() -> ThreadpoolController:
    """The BLAS libraries that numpy and SciPy run on in this process (their controller, made once;
    numpy and ``scipy.linalg`` are loaded with this module, so their libraries are in it)."""
    global _controller
    if _controller is None:
        libraries = ThreadpoolController().select(user_api="blas")
        _controller = libraries.select(filepath=[lib.filepath for lib in libraries.lib_controllers
                                                 if not _vendored_by_another_package(lib.filepath)])
    return _controller


def factorisation_threads(order: int) -> int:
    """BLAS threads for a factorisation of an ``order`` × ``order`` matrix: one below order 1,500
    (threads only add overhead there), otherwise the BLAS limit in effect (``OPENBLAS_NUM_THREADS``,
    ``threadpoolctl``; the smallest over the loaded BLAS libraries).

    The count depends on the configuration only, never on the machine's load: a threaded ``potrf``,
    ``potri`` or ``symv`` rounds differently from a single-threaded one, so a count that followed
    the load would make the iterates, and the certified optimum's last digits, depend on what else
    ran at the time (two runs of the same solve in one process differed in the 8th digit).
    """
    if order < _THREADED_FROM:
        return 1
    return max(1, min((lib.num_threads for lib in _blas().lib_controllers), default=1))


def factorisation_thread_limit(order: int):
    """A context limiting BLAS to :func:`factorisation_threads` threads (restored afterwards): for
    the factorisations and the products with the S×S inverse (``symv``)."""
    return _blas().limit(limits=factorisation_threads(order))


def _matches_prefix(op: SecantOperator, gram: np.ndarray, kept: np.ndarray | None = None,
                    samples: int = 64) -> bool:
    """Whether ``gram`` (restricted to the rows and columns ``kept``, if given) is 𝒜𝒜* of the
    first secants of ``op``, checked on its diagonal and a few random entries to its precision
    (a warm start from other secants is never trusted blindly)."""
    if gram.ndim != 2 or gram.shape[0] != gram.shape[1]:
        return False
    if kept is not None and (kept.ndim != 1 or (kept.size and (kept.min() < 0 or kept.max() >= gram.shape[0]))):
        return False
    m = gram.shape[0] if kept is None else kept.size
    if m > op.n_constraints:
        return False
    rng = np.random.default_rng(m)
    rows = np.concatenate([np.arange(min(m, samples)), rng.integers(0, m, samples)])
    cols = np.concatenate([np.arange(min(m, samples)), rng.integers(0, m, samples)])
    V = op.V
    expected = np.einsum("ij,ij->i", V[rows], V[cols]) ** 2
    stored = gram[rows, cols] if kept is None else gram[kept[rows], kept[cols]]
    rtol, atol = (1e-5, 1e-6) if gram.dtype == np.float32 else (1e-10, 1e-12)
    return bool(np.allclose(stored, expected, rtol=rtol, atol=atol))


def _copy_restricted(known: np.ndarray, kept: np.ndarray | None, out: np.ndarray) -> None:
    """out[:m, :m] = known[kept][:, kept] (or ``known`` itself), a block of rows at a time: no
    m × m temporary (cheaper than fancy indexing for Gram matrices of thousands of pairs)."""
    if kept is None:
        out[: known.shape[0], : known.shape[0]] = known
        return
    m = kept.size
    for start in range(0, m, 64):
        rows = slice(start, min(start + 64, m))
        block = known.take(kept[rows], axis=0).astype(out.dtype, copy=False)    # take casts out's garbage
        np.take(block, kept, axis=1, out=out[rows, :m], mode="clip")


def extend_gram(op: SecantOperator, known: np.ndarray | None = None, dtype=np.float64,
                kept: np.ndarray | None = None) -> np.ndarray:
    """𝒜𝒜* = (VVᵀ)∘(VVᵀ) (S, S) of the secants of ``op``, reusing ``known`` for the first rows.

    Parameters
    ----------
    op : SecantOperator
        The secants, in any basis (𝒜𝒜* does not depend on it).
    known : ndarray of shape (m₀, m₀), optional
        𝒜𝒜* of earlier secants, the first m of ``op`` being those ``kept`` (all m₀ of them, in
        order, if ``kept`` is None) — e.g. the pairs a previous round kept; ignored unless a
        spot check of its diagonal and some random entries confirms it, or if it is in single
        precision and ``dtype`` is double.
    dtype : float64 or float32
        Precision of the result. Single precision (for the single-precision Cholesky of
        :class:`CholeskySolve`) halves the memory traffic and the cost of the new rows.
    kept : ndarray of int, optional
        Increasing indices into ``known`` of the first m secants of ``op``: the restriction is
        copied straight into the result, without an m × m temporary.

    Returns
    -------
    ndarray of shape (S, S)
        A fresh array (``known`` is not modified); only the rows of secants m, …, S−1 are
        computed, O((S − m) S r).
    """
    S = op.n_constraints
    dtype = np.dtype(dtype)
    if kept is not None:
        kept = np.asarray(kept, dtype=np.intp)
    if (known is None or known.shape[0] == 0 or known.dtype.itemsize < dtype.itemsize
            or not _matches_prefix(op, known, kept)):
        return gram_rows(op, 0, dtype)
    m = known.shape[0] if kept is None else kept.size
    G = np.empty((S, S), dtype=dtype)
    _copy_restricted(known, kept, G)
    if m < S:
        rows = gram_rows(op, m, dtype)
        G[m:, :] = rows
        G[:m, m:] = rows[:, :m].T
    return G


def cheaper_from_points(op: SecantOperator) -> bool:
    """Whether 𝒜𝒜* of all the secants of ``op`` is cheaper to compute afresh from its points
    (:func:`secant_cosines`) than to reuse from an earlier one: pairs among n_a points, n_a ≤ S."""
    return isinstance(op, PairSecantOperator) and op.points.shape[0] <= op.n_constraints


def gram_rows(op: SecantOperator, start: int, dtype=np.float64, lower: bool = False) -> np.ndarray:
    """Rows ``start``, …, S−1 of 𝒜𝒜* = (VVᵀ)∘(VVᵀ): an (S − start, S) array of ``dtype``
    (the squares of :func:`secant_cosines`, bit for bit; with ``lower``, its lower triangle only, as
    there). Through the points, each block of gathered rows is squared as it is made, while it is in
    cache, rather than in a second pass over the S × S result."""
    return _inner_products(op, start, np.dtype(dtype), lower, squared=True)


#: floating-point operations an entry of the gathers of :func:`secant_cosines`' route through the points
#: costs (memory traffic, measured against ``syrk`` on MNIST pairs at S = 12,000 and 19,000) from
#: ``GATHER_POINTS`` points on; among fewer points the rows gathered come from a smaller n_a × S
#: array and an entry costs less, in proportion to n_a (measured at 800, 2,000 and 4,000 points)
GATHER_FLOPS = 300.0
GATHER_POINTS = 4000


def cosines_by_syrk(op: SecantOperator, dtype=np.float64) -> bool:
    """Whether the lower triangle of VVᵀ costs less by ``syrk`` of the secants, S²r multiply-adds (at
    twice the rate in single precision), than through the Gram matrix of the points
    (:func:`secant_cosines`): 2n_a²r for it in double precision and gathers of S² + S·n_a entries,
    ``GATHER_FLOPS`` · min(1, n_a / ``GATHER_POINTS``) each (calibrated on gathers of the whole of VVᵀ;
    the lower triangle's half costs more per entry, in shorter rows, so the count is left at S²)."""
    if not isinstance(op, PairSecantOperator):
        return True
    S, n_a, r = op.n_constraints, op.points.shape[0], op.dim
    rate = 2.0 if np.dtype(dtype) == np.float32 else 1.0
    gather = GATHER_FLOPS * min(1.0, n_a / GATHER_POINTS)
    return S * S * r / rate <= 2.0 * n_a * n_a * r + gather * S * (S + n_a)


def secant_cosines(op: SecantOperator, start: int = 0, dtype=np.float64, lower: bool = False) -> np.ndarray:
    """Rows ``start``, …, S−1 of VVᵀ, the secants' inner products v_kᵀv_l: an (S − start, S) array
    of ``dtype``.

    From the rows, O((S − start) S r); for the pairs of a
    :class:`~sdpembed.problems.numax_operator.PairSecantOperator`, when n_a² ≤ (S − start) S, from
    the Gram matrix H = X_a X_aᵀ of the n_a points the pairs touch:
    v_kᵀv_l = (H_{i_k i_l} − H_{i_k j_l} − H_{j_k i_l} + H_{j_k j_l}) / (d_k d_l), O(n_a² r) for H
    and gathers of O(S (S − start)). The differences of Gram
    entries lose about ε·(‖x_i‖ + ‖x_j‖)(‖x_k‖ + ‖x_l‖)/(d_k d_l) to cancellation (the points are
    centred): a pair whose points' norms exceed its length ``SHORT_PAIR_RATIO`` times (the operator's
    ``short`` pairs) has its row and column computed from its secant.

    With ``lower`` (and ``start`` 0) only the lower triangle is asked for, as a Cholesky factorisation
    or the polish's normal matrix reads it: an S × S array in Fortran order whose strict upper triangle
    is zero, by ``syrk`` of the rows (in ``dtype``, on
    :func:`factorisation_threads` threads) when :func:`cosines_by_syrk` finds that cheaper — half the
    products of VVᵀ, and no gathers —, otherwise through the points, gathering only the entries on
    and below the diagonal (half of them). In single precision its rounding, about √r·ε₃₂ an entry, is below
    the backward error of a single-precision factorisation of I + 𝒜𝒜*.
    """
    return _inner_products(op, start, np.dtype(dtype), lower, squared=False)


def _inner_products(op: SecantOperator, start: int, dtype: np.dtype, lower: bool, squared: bool) -> np.ndarray:
    """:func:`secant_cosines` (``squared`` False) or :func:`gram_rows` (True): the same entries, squared
    in the blocks they are made in."""
    S = op.n_constraints
    if lower and start == 0 and cosines_by_syrk(op, dtype):
        syrk = scipy.linalg.blas.ssyrk if dtype == np.float32 else scipy.linalg.blas.dsyrk
        V = op.V if dtype == np.float64 else op.V.astype(dtype)
        with factorisation_thread_limit(S):
            out = syrk(1.0, V.T, trans=1, lower=1)          # VᵀᵀVᵀ: the transposed view, no copy
        return _squared(out) if squared else out
    if not isinstance(op, PairSecantOperator) or op.points.shape[0] ** 2 > (S - start) * S:
        V = op.V if dtype == np.float64 else op.V.astype(dtype)
        out = V[start:] @ V.T
        return _squared(out) if squared else out
    triangle = lower and start == 0
    points, inv_d = op.points, 1.0 / op.norms
    # H is held by the operator for its later calls (and those of the next rounds on the same points,
    # SpanCoordinates) when it is small beside the S × S arrays made here (n_a ≤ S/3: its n_a² doubles are
    # under a quarter of S² singles); otherwise it is freed before the S × S result is made
    H = op.points_gram(hold=3 * points.shape[0] <= S)
    # Aᵀ (n_a, S − start): column k is (H_{i_k ·} − H_{j_k ·}) / d_k = (v_kᵀx_a)_a, made a block of
    # columns at a time (no (S − start) × n_a temporaries)
    At = np.empty((points.shape[0], S - start), dtype=dtype)
    for first in range(start, S, 1024):
        block = slice(first, min(first + 1024, S))
        At[:, block.start - start:block.stop - start] = ((H[op.i[block]] - H[op.j[block]]) * inv_d[block, None]).T
    del H
    # (v_lᵀv_k)_{l, k} = (Aᵀ_{i_l ·} − Aᵀ_{j_l ·}) / d_l: gathers of contiguous rows, a block at a time; for the
    # lower triangle of the result (its transpose) a block of rows l needs the columns k ≥ l only, and
    # the entries left out are zero (np.zeros: pages the gathers never touch are never written)
    columns = (np.zeros if triangle else np.empty)((S, S - start), dtype=dtype)
    scale = inv_d.astype(dtype)
    for first in range(0, S, 256):
        block = slice(first, min(first + 256, S))
        skip = first if triangle else 0
        tail = columns[block, skip:]
        np.subtract(At[op.i[block], skip:], At[op.j[block], skip:], out=tail)
        tail *= scale[block, None]
        if triangle:                                # the block's own square: zero above the result's diagonal
            tail[:, : block.stop - first][np.tril_indices(block.stop - first, -1)] = 0.0
        if squared:
            tail *= tail
    out = columns.T if start == 0 else np.ascontiguousarray(columns.T)
    short = op.short                                    # from their secants: the Gram route loses them
    if short.size:
        V = op.V
        across = (V[start:] @ V[short].T).astype(dtype, copy=False)     # the columns of the short pairs
        rows = short[short >= start]
        along = (V[rows] @ V.T).astype(dtype, copy=False)               # and their rows
        if triangle:                                    # of the lower triangle only
            across[np.arange(S)[:, None] < short[None, :]] = 0.0
            along[rows[:, None] < np.arange(S)[None, :]] = 0.0
        if squared:
            across *= across
            along *= along
        out[:, short] = across
        out[rows - start, :] = along
    return out


def _squared(out: np.ndarray) -> np.ndarray:
    out *= out
    return out


def cholesky_factor(K: np.ndarray) -> np.ndarray:
    """The lower Cholesky factor of the symmetric positive definite K (LAPACK ``potrf`` on
    :func:`factorisation_threads` threads; K is overwritten when it is in Fortran order or C
    order — its transpose is itself)."""
    K = K.T if K.flags.c_contiguous else np.asfortranarray(K)
    potrf = scipy.linalg.lapack.spotrf if K.dtype == np.float32 else scipy.linalg.lapack.dpotrf
    with factorisation_thread_limit(K.shape[0]):
        factor, info = potrf(K, lower=True, clean=False, overwrite_a=True)
    if info != 0:
        raise np.linalg.LinAlgError(f"the least-squares matrix I + AA* is not positive definite (potrf info {info})")
    return factor


def inverse_from_cholesky(factor: np.ndarray) -> np.ndarray:
    """K⁻¹, full and symmetric, from the lower Cholesky factor of K (LAPACK ``potri`` on
    :func:`factorisation_threads` threads; ``factor``, in Fortran order, is overwritten)."""
    with factorisation_thread_limit(factor.shape[0]):
        inverse, info = scipy.linalg.lapack.dpotri(factor, lower=True, overwrite_c=True)
    if info != 0:
        raise np.linalg.LinAlgError(f"inverting I + AA* failed (potri info {info})")
    full = np.tril(inverse)                                     # potri leaves the upper half untouched
    full += np.tril(inverse, -1).T
    return full


class CholeskySolve:
    """Solves (I + G) c = b by the Cholesky factor of I + G (LAPACK ``potrf``, two ``trsv``).

    Parameters
    ----------
    gram : ndarray of shape (S, S)
        G = 𝒜𝒜* (not modified unless ``overwrite``).
    single : bool
        Factorise and solve in single precision: about twice as fast, with relative errors of
        about 10⁻⁶ (I + G is well conditioned: its eigenvalues lie in [1, 1 + S]) — enough for
        the inexact loose rounds of column generation, never for a run that is certified.
    overwrite : bool
        Factorise ``gram`` in place when it has the precision asked (no S × S copy); it is then
        no longer G.

    Attributes
    ----------
    factor : ndarray
        The lower Cholesky factor (Fortran order; its strict upper triangle is not referenced) — of
        the first rows only once :func:`extend_factor` has appended ``borders``.
    borders : tuple of (ndarray, ndarray)
        Blocks (B, C) of the rows appended by :func:`extend_factor`, in order: the factor is
        [[L, 0], [B, C]] with L the factor of the rows before them, kept as blocks so that an
        extension never copies the S × S factor it extends.
    """

    #: rows appended by :func:`extend_factor` (a class default: states pickled without it load)
    borders: tuple[tuple[np.ndarray, np.ndarray], ...] = ()

    def __init__(self, gram: np.ndarray, single: bool = False, overwrite: bool = False) -> None:
        self.dtype = np.float32 if single else np.float64
        # gram is symmetric: its transpose is the same matrix, already in Fortran order, so this is
        # a straight copy (not a transposing one)
        if overwrite and gram.dtype == self.dtype and (gram.flags.f_contiguous or gram.flags.c_contiguous):
            K = gram if gram.flags.f_contiguous else gram.T
        else:
            K = np.array(gram.T, dtype=self.dtype, order="F", copy=True)
        K[np.diag_indices_from(K)] += 1.0
        self.factor = cholesky_factor(K)

        self.secants = None
        #: positions in the factor of the secants solved for, in their order (None: all, in order)
        self.live: np.ndarray | None = None
        #: ghost rows (factor rows of dropped secants): their positions D, Z = K⁻¹E_D and the
        #: Cholesky factor of H = Z_D = (K⁻¹)_DD, in double precision
        self._ghosts: tuple[np.ndarray, np.ndarray, tuple] | None = None

    @property
    def secants(self) -> np.ndarray | None:
        """The secants (rows in the factor's order, any basis) of the factor's rows, for :func:`extend_factor`;
        those of ``secant_source`` (an operator whose rows ``V`` they are), read when first asked for."""
        state = self.__dict__            # stored under the property's name: states pickled before it load
        source = state.pop("secant_source", None)
        if source is not None:
            state["secants"] = source.V
        return state.get("secants")

    @secants.setter
    def secants(self, value: np.ndarray | None) -> None:
        self.__dict__.pop("secant_source", None)
        self.__dict__["secants"] = value

    def secants_of(self, op: SecantOperator) -> None:
        """The factor's secants are the rows ``V`` of ``op``, read when first asked for (a factor whose
        run is not extended never forms them)."""
        self.__dict__["secants"] = None
        self.__dict__["secant_source"] = op

    @property
    def secant_source(self) -> SecantOperator | None:
        """The operator whose rows ``V`` the factor's rows are, while they are not formed (else None)."""
        return self.__dict__.get("secant_source")

    def secant_rows(self, index: slice | np.ndarray) -> np.ndarray:
        """The secants of the factor's rows ``index`` (as ``secants[index]``), from the operator's points
        while its rows are not formed (``unit_secants``: bit for bit the same)."""
        source = self.secant_source
        if source is not None and hasattr(source, "unit_secants"):
            return source.unit_secants(index)
        return self.secants[index]

    @property
    def _trsv(self) -> Callable[..., np.ndarray]:
        # looked up, not stored: SciPy's BLAS wrappers do not pickle, and a run's state (which
        # carries this factor) travels with fitted estimators
        return scipy.linalg.blas.strsv if self.dtype == np.float32 else scipy.linalg.blas.dtrsv

    @property
    def order(self) -> int:
        """Rows of the whole factor (its first block and the ``borders``)."""
        return self.factor.shape[0] + sum(C.shape[0] for _, C in self.borders)

    def _triangular(self, x: np.ndarray, trans: bool) -> np.ndarray:
        """L⁻¹x (L⁻ᵀx with ``trans``) for the whole factor L, block by block; x a vector or an
        (order, n) array of the factor's precision, overwritten."""
        if x.ndim == 1:
            def solve(A, v):
                return self._trsv(A, v, lower=1, trans=int(trans), overwrite_x=1)
        else:
            trsm = scipy.linalg.blas.strsm if self.dtype == np.float32 else scipy.linalg.blas.dtrsm

            def solve(A, v):
                return trsm(1.0, A, v, lower=1, trans_a=int(trans), overwrite_b=1)
        m = self.factor.shape[0]
        if not trans:
            x[:m] = solve(self.factor, x[:m])
            for B, C in self.borders:
                k = C.shape[0]
                x[m:m + k] = solve(C, x[m:m + k] - B @ x[:m])
                m += k
            return x
        end = x.shape[0]
        for B, C in reversed(self.borders):
            start = end - C.shape[0]
            x[start:end] = solve(C, x[start:end])
            x[:start] -= B.T @ x[start:end]
            end = start
        x[:end] = solve(self.factor, x[:end])
        return x

    def full_factor(self) -> np.ndarray:
        """The whole lower factor as one array (Fortran order; a copy when there are ``borders``)."""
        if not self.borders:
            return self.factor
        n, m = self.order, self.factor.shape[0]
        full = np.zeros((n, n), dtype=self.dtype, order="F")
        full[:m, :m] = self.factor
        for B, C in self.borders:
            k = C.shape[0]
            full[m:m + k, :m] = B
            full[m:m + k, m:m + k] = C
            m += k
        return full

    @property
    def n_ghosts(self) -> int:
        """Rows of the factor that belong to no secant solved for (dropped ones, see :func:`extend_factor`)."""
        return 0 if self._ghosts is None else self._ghosts[0].size

    def __call__(self, b: np.ndarray) -> np.ndarray:
        """c with (I + G) c = b (in double precision)."""
        if self.live is None:
            y = self._trsv(self.factor, np.asarray(b, dtype=self.dtype), lower=1)
            return self._trsv(self.factor, y, lower=1, trans=1, overwrite_x=1).astype(np.float64, copy=False)
        # K_WW c = b through the factor of K over W ∪ D: x = K⁻¹[b; 0], then x − Z H⁻¹ x_D has
        # zeros on D, so its W part solves K_WW c = b
        x = np.zeros(self.order, dtype=self.dtype)
        x[self.live] = b
        x = self._triangular(self._triangular(x, False), True).astype(np.float64)
        if self._ghosts is not None:
            positions, Z, H = self._ghosts
            x -= Z @ scipy.linalg.cho_solve(H, x[positions], check_finite=False)
        return x[self.live]

    def inverse(self) -> np.ndarray:
        """(I + G)⁻¹ from the factor (which is consumed: this object cannot solve afterwards)."""
        if self.dtype != np.float64:
            raise ValueError("the inverse is formed from a double-precision factor only")
        factor, self.factor, self.borders = self.full_factor(), None, ()
        full = inverse_from_cholesky(factor)
        if self.live is None:
            return full
        inverse = full[np.ix_(self.live, self.live)]
        if self._ghosts is not None:
            # (K_WW)⁻¹ = (K⁻¹)_WW − (K⁻¹)_WD ((K⁻¹)_DD)⁻¹ (K⁻¹)_DW
            positions, _, H = self._ghosts
            Q = full[np.ix_(self.live, positions)]
            inverse -= Q @ scipy.linalg.cho_solve(H, Q.T, check_finite=False)
        return inverse


def extend_factor(previous: CholeskySolve, kept: np.ndarray, added: np.ndarray | None,
                  operator: PairSecantOperator | None = None) -> CholeskySolve:
    """The Cholesky factor of I + 𝒜𝒜* for the secants ``previous`` solved for that are ``kept``, then
    ``added`` ones, from ``previous``'s factor: a block update, no refactorisation.

    The factor of the m secants of ``previous`` (its rows in its own order) is extended by the k
    added secants, L⁺ = [[L, 0], [B, C]] with B = A₂₁L⁻ᵀ and C = chol(A₂₂ − BBᵀ) (A the new rows of
    I + 𝒜𝒜*), O(m²k + mk² + k³) instead of O((m + k)³); L is not copied: the result holds it
    (``previous``'s own blocks, shared) and (B, C) as one more block of its ``borders``. Dropped
    secants stay in the factor as ghost rows D: with K the matrix over all its rows and
    Z = K⁻¹E_D (E_D the columns of the identity at D), the solution x = K⁻¹[b; 0] corrected to
    x − Z (Z_D)⁻¹ x_D vanishes on D, so its other entries solve the restricted system exactly;
    O(m²|D|) once and O(m|D|) a solve.

    Parameters
    ----------
    previous : CholeskySolve
        A factor with its ``secants`` (rows in the factor's order).
    kept : ndarray of bool
        Which of the secants ``previous`` solves for (in their order) are kept.
    added : ndarray of shape (k, r) or None
        The new secants, in the basis of ``previous.secants`` (None with ``operator``).
    operator : PairSecantOperator, optional
        The pairs of the extended factor's rows, all of them: ``previous``'s m secants (every one
        kept, no ghost rows) are its first m, in order, the k added ones its last. The added rows
        of 𝒜𝒜* then come from the Gram matrix of its points (:func:`gram_rows`, O(n_a² r) and
        gathers of O(k (m + k)), instead of O(k (m + k) r) products of secants, in the factor's
        precision), and the result's secants are its rows, formed only when read.

    Returns
    -------
    CholeskySolve
        Solves for the kept secants (in their order), then the added ones; its factor has
        m + k rows, those of the dropped secants as ghosts. It shares ``previous``'s blocks, which
        must not be used afterwards.
    """
    dtype = previous.dtype
    m = previous.order
    live_before = np.arange(m) if previous.live is None else previous.live
    kept = np.asarray(kept, dtype=bool)
    if operator is not None:
        k = operator.n_constraints - m
        if k < 0 or previous.n_ghosts or not kept.all() or not np.array_equal(live_before, np.arange(m)):
            raise ValueError("an extension by an operator's rows needs every row of the factor live and kept, "
                             "and the operator's first rows to be the factor's")
        secants = None
    else:
        k = added.shape[0]
        secants = previous.secants if k == 0 else np.concatenate([previous.secants, added])
    borders = previous.borders
    single = dtype == np.float32
    if k:
        if operator is not None:
            cross = gram_rows(operator, m, dtype)               # rows of 𝒜𝒜* of the added secants
        else:
            cross = added @ secants.T
            cross *= cross
        cross[:, m:][np.diag_indices(k)] += 1.0
        cross = cross.astype(dtype, copy=False)
        syrk = scipy.linalg.blas.ssyrk if single else scipy.linalg.blas.dsyrk
        with factorisation_thread_limit(m + k):
            Bt = previous._triangular(np.asfortranarray(cross[:, :m].T), False)          # L⁻¹A₂₁ᵀ = Bᵀ
            C = syrk(-1.0, Bt, beta=1.0, c=np.asfortranarray(cross[:, m:]), trans=1, lower=1)   # A₂₂ − BBᵀ
        borders = (*borders, (Bt.T, cholesky_factor(C)))
    out = CholeskySolve.__new__(CholeskySolve)
    out.dtype, out.factor, out.borders = dtype, previous.factor, borders
    if operator is not None:
        out.secants_of(operator)
    else:
        out.secants = secants
    out.live = np.concatenate([live_before[kept], np.arange(m, m + k)])
    ghosts = np.setdiff1d(np.arange(m + k), out.live, assume_unique=True)
    out._ghosts = None
    if ghosts.size:
        E = np.zeros((m + k, ghosts.size), dtype=dtype, order="F")
        E[ghosts, np.arange(ghosts.size)] = 1.0
        with factorisation_thread_limit(m + k):
            Z = out._triangular(out._triangular(E, False), True)                 # L⁻ᵀ L⁻¹ E_D
        Z = Z.astype(np.float64)
        H = 0.5 * (Z[ghosts] + Z[ghosts].T)
        out._ghosts = (ghosts, Z, scipy.linalg.cho_factor(H, lower=True, check_finite=False))
    return out


def extension_is_cheaper(previous: CholeskySolve, n_kept: int, n_added: int, n_points: int, dim: int,
                         iterations: int = 50) -> bool:
    """Whether :func:`extend_factor` costs at most half the floating-point operations of a fresh
    factor of n_kept + n_added secants (𝒜𝒜* from the Gram matrix of ``n_points`` points in ``dim``
    dimensions, then ``potrf``), counting ``iterations`` solves with the ghost rows — and leaves at
    most one ghost row per 20 secants: the ghosts' products are bound by memory, not by flops, and
    they pile up over the rounds (a refactorisation clears them)."""
    m, k = float(previous.order), float(n_added)
    live_before = m - previous.n_ghosts
    size, ghosts = float(n_kept + n_added), previous.n_ghosts + live_before - n_kept
    if ghosts > size / 20:
        return False
    total = m + k
    extend = m * m * k + m * k * k + k**3 / 3.0 + 2.0 * k * total * dim
    extend += 2.0 * total * total * ghosts + iterations * (2.0 * (total**2 - size**2) + 4.0 * total * ghosts)
    fresh = size**3 / 3.0 + 2.0 * n_points**2 * dim + 4.0 * size * size
    return extend < 0.5 * fresh
