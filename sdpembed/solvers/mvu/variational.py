"""Large-scale MVU (thesis Sec. 3.1.8): variational MVU over a Laplacian (or LLE) basis, then
gradient refinement — "variational MVU (CG)".

1. **Basis.** Q ∈ Rⁿˣᵐ holds the m bottom eigenvectors of the unit-weight graph Laplacian
   (3.24), the constant one excluded (so QZQᵀ is centred and tr QZQᵀ = tr Z); they are found
   by shift-invert Lanczos (``scipy.sparse.linalg.eigsh``) on the sparse Laplacian, its shifted
   matrix factored once by a sparse LU in a symmetric fill-reducing order. The
   thesis' alternative, ``basis="lle"``, takes them from LLE's matrix (I − W)ᵀ(I − W)
   (Sec. 3.2.1), whose bottom eigenvector is also the constant one: it needs the inputs, not
   only the graph, and represents long "skinny" manifolds better along their edges (Fig. 3.17).
2. **Variational SDP.** K ≈ QZQᵀ (3.25) with the slack constraints collapsed into the single
   second-order-cone constraint (3.23):  maximise (1 − ω) tr Z − ω ξ  s.t.  Z ⪰ 0,
   ‖𝒜(QZQᵀ) − D‖₂² ≤ ξ (squared, as listed after (3.23); see the formulation's docstring for
   why) — an m × m SDP whatever n is, solved by the ``solve_sdp`` the caller passes: the
   CVXPY/Clarabel one, :func:`sdpembed.formulations.mvu.solve_variational_sdp` (the E edges
   compressed to m(m+1)/2 + 1 numbers by a thin QR), which :class:`sdpembed.models.MVU` passes;
   this module stays numpy/scipy only (L2, DESIGN.md). Its outputs are Y = Q U Λ^½ (Z = UΛUᵀ),
   n × m.
3. **Refinement.** Gradient descent in the outputs themselves, started from the SDP's (the thesis'
   two steps, "our most robust results"): (a) optionally in Rᵐ, maximise the non-convex
   relaxed objective (1 − ω) Σ_i ‖y_i‖² − ω Σ_e (‖y_i − y_j‖² − D_e)² over centred Y (the
   thesis' Σ_ij‖y_i − y_j‖² = 2n Σ_i‖y_i‖² for centred outputs; we use tr K = Σ_i ‖y_i‖², the
   objective of the SDP, so that ω means the same in both); (b) project onto the top
   ``n_components`` principal axes and minimise the local-distance energy (3.26)
   E(Y) = Σ_e (‖y_i − y_j‖² − D_e)² — the slack objective at ω = 1, as the thesis notes.
   Both use L-BFGS (:mod:`sdpembed.solvers.lbfgs`; the thesis used Rasmussen's conjugate
   gradients); the gradient is 4ω L(e) Y − 2(1 − ω) Y with L(e) = Bᵀ diag(e) B the graph
   Laplacian weighted by the edge residuals e (B the incidence matrix), one sparse product,
   O(E·r) per evaluation.

All computations run on the data scaled so that τ = max D = 1 (3.11) and are scaled back.

References
----------
.. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
   Pennsylvania, 2007. Implemented here: variational MVU (3.22)–(3.25) with the Laplacian basis
   (3.24) or the LLE basis (Sec. 3.1.8, Fig. 3.17) and the gradient refinement by the energy
   (3.26) of Sec. 3.1.8, the scaling (3.11).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from scipy.sparse.csgraph import reverse_cuthill_mckee
from threadpoolctl import threadpool_limits

from ..._progress import say
from ..._validate import check_positive_int
from ...graphs import check_connected, check_edges, graph_laplacian, lle_matrix
from ...problems.mvu import variational_dual_bound
from ...results import relative_gap
from ..lbfgs import minimize_lbfgs

__all__ = [
    "BASES", "VariationalResult", "VariationalSDP", "bottom_eigenvectors", "laplacian_basis", "lle_basis",
    "local_energy", "refine_outputs", "variational_mvu",
]

#: ``basis`` values of :func:`variational_mvu`: the graph Laplacian's eigenvectors (3.24) or LLE's.
BASES = ("laplacian", "lle")

#: ``solve_sdp(Q, edges, sqdist, omega, *, solver) -> (Z, status)``: the m × m variational SDP (3.23)/(3.25)
#: on the basis Q (n × m) and the scaled squared edge lengths, Z PSD, and the solver's status
#: (e.g. :func:`sdpembed.formulations.mvu.solve_variational_sdp`).
VariationalSDP = Callable[..., tuple[np.ndarray, str]]


@dataclass
class VariationalResult:
    """Outputs of :func:`variational_mvu`.

    Attributes
    ----------
    embedding : ndarray of shape (n, n_components)
        The refined outputs (or the projected SDP outputs when ``refine=False``).
    sdp_embedding : ndarray of shape (n, m)
        Y = Q Z^½ of the variational SDP, before refinement.
    Z : ndarray of shape (m, m)
    basis : ndarray of shape (n, m)
        Q, the Laplacian's (or LLE's) eigenvectors.
    energy_sdp, energy : float
        The energy (3.26) of the SDP outputs projected to n_components dimensions, and after
        refinement.
    sdp_status : str
        The status ``solve_sdp`` returned for the variational SDP (CVXPY's).
    sdp_objective, sdp_bound, sdp_gap : float
        The variational SDP's objective at Z, a proved upper bound on its optimum over Z ⪰ 0 for
        this basis (:func:`~sdpembed.problems.mvu.variational_dual_bound`), both of the SDP solved
        at the scale τ = 1, and the relative gap between them: a certificate of Z for the reduced
        m × m problem, not of QZQᵀ for the full MVU SDP.
    times : dict of str to float
        Seconds per stage (``basis``, ``sdp``, ``refine_full``, ``refine``, ``total``).
    cpu_times : dict of str to float
        CPU seconds of this process per stage (``time.process_time``), the same keys: on a busy
        machine the measure of the work itself.
    history : dict of str to ndarray
        The energy after each L-BFGS iteration of the final refinement.
    """

    embedding: np.ndarray
    sdp_embedding: np.ndarray
    Z: np.ndarray
    basis: np.ndarray
    energy_sdp: float
    energy: float
    sdp_status: str
    times: dict[str, float] = field(default_factory=dict)
    cpu_times: dict[str, float] = field(default_factory=dict)
    history: dict[str, np.ndarray] = field(default_factory=dict)
    sdp_objective: float = float("nan")
    sdp_bound: float = float("nan")
    sdp_gap: float = float("nan")


def _shifted_factor(M, delta: float):
    """Sparse LU of M + δI, M symmetric PSD and δ > 0: the matrix is positive definite, so a
    symmetric ordering (minimum degree on M + Mᵀ) and no pivoting keep the factor about half as
    full as SciPy's general-purpose default."""
    return spla.splu((M + delta * sp.identity(M.shape[0], format="csc")).tocsc(), permc_spec="MMD_AT_PLUS_A",
                     diag_pivot_thresh=0.0, options={"SymmetricMode": True})


def bottom_eigenvectors(M, n_basis: int, *, shift: float = 1e-3) -> np.ndarray:
    """The ``n_basis`` bottom eigenvectors of a sparse PSD matrix whose bottom eigenvector is the
    constant one (the graph Laplacian (3.24), LLE's matrix), that one excluded, as orthonormal
    columns orthogonal to 1 (shift-invert Lanczos about −``shift``·mean(diag M); dense for small
    n). The shift must be small against the spread of the wanted eigenvalues, or they map to a
    cluster the Lanczos iteration separates slowly: LLE's matrix needs a far smaller one than
    the Laplacian."""
    n = M.shape[0]
    m = check_positive_int(n_basis, "n_basis")
    if m > n - 2:
        raise ValueError(f"n_basis must be at most n - 2 = {n - 2}, got {m}")
    if n <= 600:
        _, U = np.linalg.eigh(M.toarray())
        Q = U[:, 1:m + 1]
    else:
        sigma = -shift * float(M.diagonal().mean())
        inverse = spla.LinearOperator((n, n), matvec=_shifted_factor(M, -sigma).solve, dtype=np.float64)
        w, U = spla.eigsh(M.tocsc(), k=m + 1, sigma=sigma, which="LM", OPinv=inverse,
                          v0=np.ones(n) + np.arange(n) / n)
        Q = U[:, np.argsort(w)][:, 1:m + 1]
    Q = Q - Q.mean(axis=0)                                    # exactly orthogonal to 1, then re-orthonormalised
    Q, _ = np.linalg.qr(Q)
    return Q


def laplacian_basis(n: int, edges: np.ndarray, n_basis: int) -> np.ndarray:
    """The ``n_basis`` bottom non-constant eigenvectors of the unit-weight Laplacian (3.24), as
    orthonormal columns orthogonal to 1 (shift-invert Lanczos; dense for small n)."""
    return bottom_eigenvectors(graph_laplacian(n, edges), n_basis)


def lle_basis(X: np.ndarray, n_neighbors: int, n_basis: int, *, reg: float = 1e-3) -> np.ndarray:
    """The ``n_basis`` bottom non-constant eigenvectors of LLE's matrix M = (I − W)ᵀ(I − W)
    (Sec. 3.2.1; :func:`sdpembed.graphs.lle_matrix`), W the reconstruction weights of each input
    from its ``n_neighbors`` nearest inputs: the LLE basis of variational MVU (Sec. 3.1.8,
    Fig. 3.17). Orthonormal columns orthogonal to 1, like :func:`laplacian_basis`."""
    _, M = lle_matrix(X, n_neighbors, reg=reg)
    # M's bottom eigenvalues lie within ~1e-9 of 0 (the inputs' own coordinates are nearly in its
    # null space when k exceeds their dimension), so the shift must be tinier still
    return bottom_eigenvectors(M, n_basis, shift=1e-12)


def local_energy(Y: np.ndarray, edges: np.ndarray, sqdist: np.ndarray) -> float:
    """E(Y) = Σ_e (‖y_i − y_j‖² − D_e)², the local-distance energy (3.26)."""
    diff = Y[edges[:, 0]] - Y[edges[:, 1]]
    e = np.einsum("ij,ij->i", diff, diff) - sqdist
    return float(e @ e)


class _EdgeEnergy:
    """f(Y) = ω Σ_e (‖y_i − y_j‖² − D_e)² − (1 − ω) Σ_i ‖y_i‖² over centred Y, and its gradient
    4ω L(e) Y − 2(1 − ω) Y, L(e) = Bᵀ diag(e) B the graph Laplacian weighted by the residuals e.

    The unknowns are held coordinate by coordinate (r rows of n), so that an edge's differences
    are r gathers from contiguous vectors, and the nodes are renumbered by reverse Cuthill–McKee,
    so that those gathers and the product L(e) Y read memory close together. L(e) has a fixed
    sparsity pattern (the edges both ways and the diagonal): each evaluation only refills its
    values, −e_ij off the diagonal and Σ_{e∋i} e_e on it.
    """

    def __init__(self, n: int, r: int, edges: np.ndarray, sqdist: np.ndarray, omega: float):
        edges = np.asarray(edges, dtype=np.int64)
        E = edges.shape[0]
        adjacency = sp.csr_matrix((np.ones(2 * E), (edges.ravel(), edges[:, ::-1].ravel())), shape=(n, n))
        self.order = np.asarray(reverse_cuthill_mckee(adjacency, symmetric_mode=True), dtype=np.int64)
        label = np.empty(n, dtype=np.int64)
        label[self.order] = np.arange(n)
        ends = np.sort(label[edges], axis=1)
        by_first = np.lexsort((ends[:, 1], ends[:, 0]))
        self.first, self.second = ends[by_first, 0].copy(), ends[by_first, 1].copy()
        self.D = np.asarray(sqdist, dtype=np.float64)[by_first]
        self.n, self.r, self.omega = n, r, float(omega)
        # the pattern of L(e): (i, j) and (j, i) per edge, (i, i) per node; `source` picks each
        # stored value from [−e, degree]
        rows = np.concatenate([self.first, self.second, np.arange(n)])
        cols = np.concatenate([self.second, self.first, np.arange(n)])
        source = np.concatenate([np.arange(E), np.arange(E), E + np.arange(n)])
        stored = np.lexsort((cols, rows))
        self.source = source[stored]
        self.L = sp.csr_matrix((np.zeros(stored.size), cols[stored], np.searchsorted(rows[stored], np.arange(n + 1))),
                               shape=(n, n))
        self.values = np.empty(E + n)
        self.diff = np.empty((r, E))
        self.other = np.empty(E)

    def preconditioner(self, shift: float = 1e-3):
        """v ↦ (L + δI)⁻¹v coordinate by coordinate, centred: L the unit-weight graph Laplacian,
        δ = ``shift``·mean degree; factored once (the preconditioner of the refinement)."""
        L = graph_laplacian(self.n, np.column_stack([self.first, self.second]))
        lu = _shifted_factor(L, shift * float(L.diagonal().mean()))
        n, r = self.n, self.r

        def apply(v: np.ndarray) -> np.ndarray:
            x = lu.solve(np.ascontiguousarray(v.reshape(r, n).T)).T
            return (x - x.mean(axis=1, keepdims=True)).ravel()

        return apply

    def pack(self, Y: np.ndarray) -> np.ndarray:
        """Outputs (n × r, the caller's node order) as the flat vector of unknowns."""
        return np.ascontiguousarray(Y[self.order].T).ravel()

    def unpack(self, z: np.ndarray) -> np.ndarray:
        """The flat vector of unknowns as outputs (n × r, the caller's node order)."""
        Y = np.empty((self.n, self.r))
        Y[self.order] = z.reshape(self.r, self.n).T
        return Y

    def __call__(self, z: np.ndarray) -> tuple[float, np.ndarray]:
        Yt = z.reshape(self.r, self.n)
        Yt = Yt - Yt.mean(axis=1, keepdims=True)
        diff, other = self.diff, self.other
        for k in range(self.r):
            np.take(Yt[k], self.first, out=diff[k])
            np.take(Yt[k], self.second, out=other)
            diff[k] -= other
        e = np.einsum("ij,ij->j", diff, diff)
        e -= self.D
        omega = self.omega
        value = omega * float(e @ e) - (1.0 - omega) * float(np.einsum("ij,ij->", Yt, Yt))
        E = e.size
        np.negative(e, out=self.values[:E])
        self.values[E:] = np.bincount(self.first, e, self.n) + np.bincount(self.second, e, self.n)
        np.take(self.values, self.source, out=self.L.data)
        grad = (self.L @ Yt.T).T
        grad *= 4.0 * omega
        if omega < 1.0:
            grad -= 2.0 * (1.0 - omega) * Yt
        grad -= grad.mean(axis=1, keepdims=True)
        return value, grad.ravel()


def refine_outputs(
    Y0: np.ndarray,
    edges: np.ndarray,
    sqdist: np.ndarray,
    *,
    omega: float = 1.0,
    max_iter: int = 500,
    tol: float = 1e-5,
    verbose: bool | int = False,
    precondition: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """Gradient refinement of Sec. 3.1.8 by L-BFGS: minimise
    ω Σ_e (‖y_i − y_j‖² − D_e)² − (1 − ω) Σ_i ‖y_i‖² over centred Y (ω = 1: the energy (3.26)).

    The energy's Hessian is close to a multiple of the graph Laplacian L in every coordinate
    (4ω L(e) plus the rank-one terms of each edge), whose smooth modes make plain gradient
    methods crawl; L-BFGS is preconditioned by (L + δI)⁻¹ (:func:`sdpembed.solvers.lbfgs.minimize_lbfgs`),
    factored once, as stress majorisation solves with a weighted Laplacian.

    Parameters
    ----------
    Y0 : ndarray of shape (n, r)
        Starting outputs.
    edges, sqdist
        The graph and its squared lengths D.
    omega : float
        ω ∈ (0, 1]; below 1 the variance term (1 − ω) tr K pushes outputs apart.
    max_iter : int
        L-BFGS iterations.
    tol : float
        L-BFGS stops when the objective falls by less than this (relative) over 10 iterations.
        1e-5 gives nearly the accuracy of scipy's per-iteration 1e-9 in a fraction of the
        iterations (BENCHMARKS.md, "MVU", at scale).
    verbose : bool or int
        Print the objective and its relative fall since the last line every K iterations
        (``True``: 50), and the last iteration's.
    precondition : bool
        Precondition by the graph Laplacian (``False``: plain L-BFGS; on the 20,000-node sensor
        network of ``benchmarks/mvu.py`` its two refinements stop after 214 and 213 iterations,
        the preconditioned ones after 27 and 27, at the same median positional error).

    Returns
    -------
    Y : ndarray of shape (n, r)
        Refined, centred outputs.
    trace : ndarray
        The objective after each iteration.
    """
    Y0 = np.asarray(Y0, dtype=np.float64)
    n, r = Y0.shape
    if not 0.0 < omega <= 1.0:
        raise ValueError(f"omega must lie in (0, 1], got {omega!r}")
    fun = _EdgeEnergy(n, r, edges, sqdist, omega)

    every = 50 if verbose is True else int(verbose)
    shown = [np.inf]                                    # the objective at the last line

    def callback(iteration, value):
        if every and iteration % every == 0:
            fall = (shown[0] - value) / max(abs(value), 1e-300) if np.isfinite(shown[0]) else float("nan")
            say(f"  refine it {iteration:5d}  objective {value:.6e}  relative fall {fall:.1e}")
            shown[0] = value

    opt = minimize_lbfgs(fun, fun.pack(Y0 - Y0.mean(axis=0)), max_iter=max_iter, ftol=tol, window=10, memory=20,
                         callback=callback, precondition=fun.preconditioner() if precondition else None)
    trace = opt.trace
    if every:
        say(f"  refine done after {len(trace)} iterations  objective {trace[-1] if len(trace) else float('nan'):.6e}")
    Y = fun.unpack(opt.x)
    return Y - Y.mean(axis=0), trace


def _principal(Y: np.ndarray, d: int) -> np.ndarray:
    """Project centred outputs onto their top d principal axes (the spectral step (3.21))."""
    Y = Y - Y.mean(axis=0)
    U, s, _ = np.linalg.svd(Y, full_matrices=False)
    return U[:, :d] * s[:d]


def variational_mvu(
    edges: np.ndarray,
    sqdist: np.ndarray,
    n: int,
    *,
    solve_sdp: VariationalSDP,
    n_components: int = 2,
    n_basis: int = 10,
    omega: float = 0.999,
    refine: bool = True,
    refine_full: bool = True,
    max_iter: int = 500,
    solver: str = "CLARABEL",
    verbose: bool | int = False,
    blas_threads: int | None = 1,
    basis: str = "laplacian",
    X: np.ndarray | None = None,
    lle_neighbors: int = 10,
    precondition: bool = True,
) -> VariationalResult:
    """Variational MVU followed by gradient refinement (Sec. 3.1.8; module docstring).

    Parameters
    ----------
    edges : ndarray of shape (E, 2)
        A connected neighbourhood graph on n nodes.
    sqdist : ndarray of shape (E,)
        Squared (possibly noisy) edge lengths D.
    n : int
        Number of points.
    solve_sdp : callable
        ``solve_sdp(Q, edges, sqdist, omega, solver=solver) -> (Z, status)``, the solver of the
        m × m SDP (:data:`VariationalSDP`): :func:`sdpembed.formulations.mvu.solve_variational_sdp`
        (CVXPY), passed in so that this module needs no CVXPY.
    n_components : int
        Output dimension d after refinement.
    n_basis : int
        m, the number of basis eigenvectors (the thesis' sweet spot: m ≈ 10).
    omega : float
        ω ∈ (0, 1) of the variational SDP (and of the full-dimensional refinement); the trace
        and the squared violations have different units, so ω must be close to 1 (Sec. 3.1.6).
    refine : bool
        Run the final refinement of (3.26) in d dimensions.
    refine_full : bool
        First refine in m dimensions with the relaxed objective (the thesis' first step, "not
        always necessary"). On an 800-point swiss roll (k = 6, l = 5) with plain L-BFGS
        (``precondition=False``) it raises local trust (3.28) from 0.49 to 0.86 and
        neighbourhood intersection (3.29) from 0.73 to 0.94; with the Laplacian preconditioner
        the d-dimensional refinement alone reaches 1.00 / 1.00, and 0.98 / 0.98 after this step.
    max_iter : int
        L-BFGS iterations per refinement.
    solver : str
        Back-end for the m × m SDP, passed to ``solve_sdp`` (a CVXPY solver name).
    verbose : bool or int
        Print each stage as it starts and ends (Laplacian basis, the m × m SDP, the
        refinements) with times and energies; the refinements' objective every K L-BFGS
        iterations (``True``: 50).
    blas_threads : int or None
        BLAS threads during the run (restored afterwards, ``threadpoolctl``): the dense work is
        on thin n × m matrices, where threads only add overhead (and, on a loaded machine, a lot
        of it); ``None`` leaves the setting alone.
    basis : {"laplacian", "lle"}
        Q: the bottom eigenvectors of the graph Laplacian (3.24), which needs only the graph, or
        of LLE's matrix (I − W)ᵀ(I − W) (:func:`lle_basis`), which needs the inputs ``X`` and
        represents long, thin manifolds better near their boundaries (Sec. 3.1.8, Fig. 3.17).
    X : ndarray of shape (n, p), optional
        The inputs, required by ``basis="lle"``.
    lle_neighbors : int
        k of LLE's reconstruction for ``basis="lle"``.
    precondition : bool
        Precondition both refinements by the graph Laplacian (:func:`refine_outputs`).

    Returns
    -------
    VariationalResult
    """
    if basis not in BASES:
        raise ValueError(f"basis must be one of {BASES}, got {basis!r}")
    if basis == "lle":
        if X is None:
            raise ValueError('basis="lle" needs the inputs X (LLE reconstructs each input from its neighbours)')
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[0] != n:
            raise ValueError(f"X must have one row per point (n = {n}), got shape {X.shape}")
    with threadpool_limits(limits=blas_threads, user_api="blas"):
        return _variational(edges, sqdist, n, solve_sdp, n_components, n_basis, omega, refine, refine_full,
                            max_iter, solver, verbose, basis, X, lle_neighbors, precondition)


def _clock() -> tuple[float, float]:
    """(wall, CPU) seconds now."""
    return time.perf_counter(), time.process_time()


def _variational(edges, sqdist, n, solve_sdp, n_components, n_basis, omega, refine, refine_full, max_iter, solver,
                 verbose, basis, X, lle_neighbors, precondition) -> VariationalResult:
    """The body of :func:`variational_mvu`."""
    t0 = _clock()
    n = check_positive_int(n, "n", minimum=3)
    edges = check_edges(edges, n)
    D = np.asarray(sqdist, dtype=np.float64)
    if D.shape != (edges.shape[0],) or not np.all(np.isfinite(D)) or np.any(D < 0) or not D.max() > 0:
        raise ValueError(f"sqdist must hold {edges.shape[0]} finite non-negative squared lengths, not all zero")
    check_connected(n, edges)
    d = check_positive_int(n_components, "n_components")
    m = check_positive_int(n_basis, "n_basis")
    if d > m:
        raise ValueError(f"n_components ({d}) must be at most n_basis ({m})")
    if not 0.0 < omega < 1.0:
        raise ValueError(f"omega must lie in (0, 1), got {omega!r}")
    tau = float(D.max())
    Ds = D / tau
    times: dict[str, float] = {}
    cpu_times: dict[str, float] = {}

    def lap(stage: str, since: tuple[float, float]) -> None:
        now = _clock()
        times[stage], cpu_times[stage] = now[0] - since[0], now[1] - since[1]

    name = "Laplacian" if basis == "laplacian" else "LLE"
    if verbose:
        say(f"variational MVU: n = {n}, E = {edges.shape[0]}, m = {m}; the {name} matrix's {m} lowest eigenvectors")
    Q = laplacian_basis(n, edges, m) if basis == "laplacian" else lle_basis(X, lle_neighbors, m)
    lap("basis", t0)
    if verbose:
        say(f"{name} basis in {times['basis']:.2f}s; solving the {m} x {m} variational SDP ({solver})")
    t1 = _clock()
    Z, status = solve_sdp(Q, edges, Ds, omega, solver=solver)
    sdp_bound, sdp_objective = variational_dual_bound(Q, edges, Ds, omega, Z)
    w, U = np.linalg.eigh(Z)
    order = np.argsort(w)[::-1]
    Y_sdp = Q @ (U[:, order] * np.sqrt(np.maximum(w[order], 0.0)))       # K ≈ QZQᵀ (3.25)
    lap("sdp", t1)
    energy_sdp = local_energy(_principal(Y_sdp, d), edges, Ds)
    if verbose:
        say(f"variational SDP ({status}) in {times['sdp']:.2f}s; energy (3.26) of its {d}-D projection "
            f"{energy_sdp * tau**2:.6e}")
    Y = Y_sdp
    history: dict[str, np.ndarray] = {}
    if refine_full:
        t2 = _clock()
        if verbose:
            say(f"refinement in R^{m} (relaxed objective, omega = {omega:g})")
        Y, history["refine_full"] = refine_outputs(Y, edges, Ds, omega=omega, max_iter=max_iter, verbose=verbose,
                                                   precondition=precondition)
        lap("refine_full", t2)
        if verbose:
            say(f"refinement in R^{m} in {times['refine_full']:.2f}s")
    Y = _principal(Y, d)
    if refine:
        t3 = _clock()
        if verbose:
            say(f"refinement of the energy (3.26) in R^{d}")
        Y, history["refine"] = refine_outputs(Y, edges, Ds, omega=1.0, max_iter=max_iter, verbose=verbose,
                                              precondition=precondition)
        Y = _principal(Y, d)
        lap("refine", t3)
    energy = local_energy(Y, edges, Ds)
    lap("total", t0)
    if verbose:
        say(f"refined energy (3.26) {energy * tau**2:.6e} (from {energy_sdp * tau**2:.6e}); total "
            f"{times['total']:.2f}s")
    scale = np.sqrt(tau)
    return VariationalResult(
        embedding=Y * scale, sdp_embedding=Y_sdp * scale, Z=Z * tau, basis=Q, energy_sdp=energy_sdp * tau**2,
        energy=energy * tau**2, sdp_status=status, times=times, cpu_times=cpu_times,
        history={k: v * tau**2 for k, v in history.items()}, sdp_objective=sdp_objective, sdp_bound=sdp_bound,
        sdp_gap=relative_gap(sdp_bound, sdp_objective) if np.isfinite(sdp_bound) else float("nan"),
    )
