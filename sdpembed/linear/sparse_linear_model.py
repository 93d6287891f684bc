"""Dimensionality reduction with the sparse linear model (Gkioulekas & Zickler).

Signals follow x = D a + ε (1) with a dictionary D (N × K), codes a_i i.i.d. Laplace of scale τ
(2) and white noise ε ~ N(0, σ²I). The projection L (M × N) is chosen to preserve, in
expectation, inner products of the codes: minimise E[(y₁ᵀy₂ − a₁ᵀa₂)²] with y = Lx (4). With
S = LᵀL this is (6):

    min_S  4τ⁴ ‖DᵀSD − I‖²_F + 4τ²σ² ‖SD‖²_F + σ⁴ ‖S‖²_F,     S ⪰ 0, rank S ≤ M.

**Rederivation** (the PDF's (5)–(8) are garbled; checked here). δp = a₁ᵀ(DᵀSD − I)a₂ +
ε₁ᵀSDa₂ + ε₂ᵀSDa₁ + ε₁ᵀSε₂ (5); with E[aaᵀ] = 2τ²I and E[εεᵀ] = σ²I and all cross terms of
odd order vanishing, E δp² is exactly (6). Write DDᵀ = V Λ Vᵀ and ρ = σ²/(2τ²). The Hessian
of (6) is diagonal in the basis V, so the unconstrained minimiser is diagonal there too, and per
eigenvalue λ the objective is s²(2τ²λ + σ²)² − 8τ⁴λs (plus a constant): s = λ/(λ + ρ)². Its
decrease −4τ⁴λ²/(λ + ρ)² grows with λ, so among maps diagonal in V the rank-M optimum keeps the
M largest eigenvalues; that it is the rank-M optimum overall is the paper's claim (proof in its
supplement, not in our copy), which our tests check against local optimisation over L:

    L = diag(f(λ_M)) V_Mᵀ                                                       (7)
    f(λ) = √(4τ⁴λ / (σ⁴ + 4τ²σ²λ + 4τ⁴λ²)) = √λ / (λ + ρ)                      (8)

(the denominator of (8) is the square (2τ²λ + σ²)²; only ρ = σ²/(2τ²) matters). In the
noiseless case σ = 0, (9): L = diag(λ_M)^(−1/2) V_Mᵀ — any M eigenpairs are then optimal; we
keep the M largest, the σ → 0 limit of (7). At M = N, (6) is a convex quadratic in S ⪰ 0
whose unconstrained minimiser V diag(f²) Vᵀ is PSD, so (7)–(8) is its global optimum: the
CVXPY model :mod:`sdpembed.formulations.sparse_linear` checks this.

**Weighted model** (Sec. 3.1, (10)–(11)). Codes and noise of unequal variances α_k = E a_k²
and e_n = E ε_n² weight the three terms of (6) entrywise (the objective and its rederivation
are in :mod:`sdpembed.problems.sparse_linear`); there is no closed form, and
:func:`weighted_sparse_linear_projection` minimises it over L by L-BFGS from (7).

**Kernel extension** (Sec. 3.2, (14)–(18)). With atoms d̃_i in a feature space H and their
Gram matrix K_DD = U Λ Uᵀ (K × K), the optimum is S = (DB) ⊗ (DB) (15) with

    B = U_M diag(g(λ_M)),    g(λ) = f(λ)/√λ = 1/(λ + ρ)                        (17)–(18)

and x ↦ y = Bᵀ K_D(x), K_D(x) = (k(d_i, x))_{i=1..K} (the PDF writes the index bound as M; it
runs over all K atoms). With the linear kernel this is (7) again, up to a rotation. The
dictionary is given by pre-images of its atoms or learned in the feature space (the paper's
"ker.dict", :mod:`sdpembed.linear.kernel_dictionary`).

References
----------
.. [1] I. Gkioulekas and T. Zickler, "Dimensionality reduction using the sparse linear model",
   Advances in Neural Information Processing Systems 24 (NIPS), 2011. Implemented here: the model
   (1)–(2), the problem (4)–(6), the closed form (7)–(9), the weighted model (10)–(11) and the
   kernel extension (14)–(18) of Sec. 3.2.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin, clone
from sklearn.metrics.pairwise import pairwise_kernels
from sklearn.utils.validation import check_is_fitted, validate_data

from .._validate import as_matrix, check_positive_int, check_random_state, square_matrix
from ..problems.sparse_linear import (
    check_sigma_tau,
    check_variances,
    sparse_linear_objective,
    weighted_sparse_linear_gradient,
    weighted_sparse_linear_objective,
)
from .base import LinearEmbedding
from .kernel_dictionary import learn_kernel_dictionary

__all__ = [
    "noise_ratio",
    "sparse_linear_gain",
    "sparse_linear_projection",
    "sparse_linear_objective",
    "weighted_sparse_linear_projection",
    "kernel_sparse_linear_coefficients",
    "estimate_noise_levels",
    "learn_dictionary",
    "SparseLinearProjection",
    "KernelSparseLinearProjection",
]


def noise_ratio(sigma: float, tau: float) -> float:
    """ρ = σ² / (2τ²), the only combination of σ and τ the solution (7)–(8) depends on."""
    sigma, tau = check_sigma_tau(sigma, tau)
    return sigma**2 / (2.0 * tau**2)


def sparse_linear_gain(eigenvalues: np.ndarray, sigma: float, tau: float) -> np.ndarray:
    """f(λ) of (8), √(4τ⁴λ / (σ⁴ + 4τ²σ²λ + 4τ⁴λ²)) = √λ / (λ + ρ), elementwise.

    With σ = 0 this is λ^(−1/2) (9), which needs λ > 0.
    """
    rho = noise_ratio(sigma, tau)
    lam = np.maximum(np.asarray(eigenvalues, dtype=np.float64), 0.0)
    with np.errstate(divide="ignore"):
        return np.sqrt(lam) / (lam + rho)


def _leading_eigenpairs(G: np.ndarray, M: int, sigma: float, name: str) -> tuple[np.ndarray, np.ndarray]:
    """The M largest eigenpairs of the PSD matrix G, checked for the noiseless case."""
    lam, vecs = np.linalg.eigh(0.5 * (G + G.T))
    lam, vecs = lam[::-1][:M], vecs[:, ::-1][:, :M]
    if sigma == 0.0 and lam[-1] <= 1e-12 * max(float(lam[0]), 1e-300):
        raise ValueError(f"with sigma = 0 (noiseless case (9)) the M = {M} leading eigenvalues of {name} must be "
                         f"positive, but eigenvalue {M} is {lam[-1]:.3g}; lower n_components or give sigma > 0")
    return lam, vecs


def sparse_linear_projection(D: np.ndarray, n_components: int, *, sigma: float, tau: float) -> np.ndarray:
    """The closed form (7)–(8) — or (9) when σ = 0 — L = diag(f(λ_M)) V_Mᵀ, shape (M, N).

    Parameters
    ----------
    D : ndarray of shape (N, K)
        The dictionary, atoms as columns (the paper's D = [d_1, …, d_K]).
    n_components : int
        M ≤ N.
    sigma : float
        σ ≥ 0, noise standard deviation of (1).
    tau : float
        τ > 0, Laplace scale of the codes (2).

    Returns
    -------
    ndarray of shape (M, N)
        Rows f(λ_i) v_iᵀ by decreasing eigenvalue λ_i of DDᵀ.
    """
    D = as_matrix(D, "D")
    sigma, tau = check_sigma_tau(sigma, tau)
    M = check_positive_int(n_components, "n_components")
    if M > D.shape[0]:
        raise ValueError(f"n_components must be <= N = {D.shape[0]} (the rows of D), got {M}")
    lam, V = _leading_eigenpairs(D @ D.T, M, sigma, "D Dᵀ")
    return sparse_linear_gain(lam, sigma, tau)[:, None] * V.T


def weighted_sparse_linear_projection(
    D: np.ndarray, n_components: int, *, code_variances, noise_variances, max_iter: int = 2000, tol: float = 1e-12,
) -> np.ndarray:
    """L (M, N) minimising the weighted expected distortion (10)–(11) over rank-M maps S = LᵀL.

    The weighted problem has no closed form; it is solved over L by L-BFGS (SciPy) from the
    closed form (7)–(8) of the equal-variance model with τ² = mean(α)/2 and σ² = mean(e), the
    gradient being 2 L ∇_S of :func:`~sdpembed.problems.sparse_linear.weighted_sparse_linear_gradient`.
    At M = N the problem in S is convex and the result is its optimum; below, a local optimum
    (the rank constraint makes (10) nonconvex).

    Parameters
    ----------
    D : ndarray of shape (N, K)
        The dictionary, atoms as columns.
    n_components : int
        M ≤ N.
    code_variances : array_like of shape (K,)
        α_k = E a_k² of each code coefficient.
    noise_variances : array_like of shape (N,)
        e_n = E ε_n² of each noise coordinate.
    max_iter : int, default=2000
        L-BFGS iterations.
    tol : float, default=1e-12
        L-BFGS's relative decrease tolerance (``ftol``).

    Returns
    -------
    ndarray of shape (M, N)
    """
    from scipy.optimize import minimize  # at first use (DESIGN.md, "Start-up")

    D = as_matrix(D, "D")
    N, K = D.shape
    alpha = check_variances(code_variances, K, "code_variances")
    e = check_variances(noise_variances, N, "noise_variances")
    M = check_positive_int(n_components, "n_components")
    if M > N:
        raise ValueError(f"n_components must be <= N = {N} (the rows of D), got {M}")
    if not np.any(alpha > 0):
        raise ValueError("code_variances must not all be zero")
    sigma = float(np.sqrt(np.mean(e)))
    tau = float(np.sqrt(np.mean(alpha) / 2.0))
    if sigma == 0.0:                                  # (9) needs M positive eigenvalues; a tiny ρ does not
        sigma = 1e-6 * tau
    start = sparse_linear_projection(D, M, sigma=sigma, tau=tau)
    weights = {"code_variances": alpha, "noise_variances": e}

    def value_and_gradient(flat: np.ndarray) -> tuple[float, np.ndarray]:
        L = flat.reshape(M, N)
        S = L.T @ L
        return (weighted_sparse_linear_objective(S, D, **weights),
                (2.0 * L @ weighted_sparse_linear_gradient(S, D, **weights)).ravel())

    result = minimize(value_and_gradient, start.ravel(), jac=True, method="L-BFGS-B",
                      options={"maxiter": check_positive_int(max_iter, "max_iter"), "ftol": tol, "gtol": 1e-12})
    return result.x.reshape(M, N)


def kernel_sparse_linear_coefficients(K_DD: np.ndarray, n_components: int, *, sigma: float, tau: float) -> np.ndarray:
    """B = U_M diag(g(λ_M)) of (17)–(18), g(λ) = 1/(λ + ρ); shape (K, M).

    Parameters
    ----------
    K_DD : ndarray of shape (K, K)
        Gram matrix of the atoms in the feature space, K_DD[i, j] = ⟨d̃_i, d̃_j⟩_H.
    n_components : int
        M ≤ K.
    sigma, tau : float
        As in :func:`sparse_linear_projection`; σ = 0 gives B = U_M diag(λ_M)⁻¹.

    A point x is then embedded as Bᵀ K_D(x) with K_D(x) = (k(d_i, x))_i.
    """
    K_DD = square_matrix(K_DD, "K_DD")
    sigma, tau = check_sigma_tau(sigma, tau)
    M = check_positive_int(n_components, "n_components")
    if M > K_DD.shape[0]:
        raise ValueError(f"n_components must be <= K = {K_DD.shape[0]} (the atoms), got {M}")
    lam, U = _leading_eigenpairs(K_DD, M, sigma, "K_DD")
    return U / (np.maximum(lam, 0.0) + noise_ratio(sigma, tau))[None, :]


def learn_dictionary(
    X: np.ndarray, n_atoms: int, *, alpha: float = 1.0, max_iter: int = 10, batch_size: int = 256, random_state=None,
    return_n_iter: bool = False,
) -> tuple[np.ndarray, np.ndarray] | tuple[np.ndarray, np.ndarray, int]:
    """A dictionary D (N × K) and codes A (n × K) by scikit-learn's dictionary learning.

    ``MiniBatchDictionaryLearning`` (Mairal et al. 2010, the paper's ref. [22]) minimises
    ½‖x − Da‖² + α‖a‖₁ over unit-norm atoms, the lasso (3) with α = σ²/(2τ); the codes are
    then the lasso solutions (LARS) for the learned D. With ``return_n_iter`` the number of
    passes over the data the learner made is returned third.
    """
    from sklearn.decomposition import MiniBatchDictionaryLearning, sparse_encode

    X = as_matrix(X, "X")
    K = check_positive_int(n_atoms, "n_atoms")
    seed = int(check_random_state(random_state).integers(2**31 - 1))
    learner = MiniBatchDictionaryLearning(
        n_components=K, alpha=alpha, max_iter=check_positive_int(max_iter, "max_iter"),
        batch_size=min(check_positive_int(batch_size, "batch_size"), X.shape[0]), fit_algorithm="cd",
        random_state=seed,
    ).fit(X)
    atoms = learner.components_                                     # (K, N), unit rows
    codes = sparse_encode(X, atoms, algorithm="lasso_lars", alpha=alpha)
    if return_n_iter:
        return atoms.T.copy(), codes, int(learner.n_iter_)
    return atoms.T.copy(), codes


def estimate_noise_levels(X: np.ndarray, D: np.ndarray, codes: np.ndarray) -> tuple[float, float]:
    """Maximum-likelihood σ and τ of the model (1)–(2) given codes A: σ̂² = mean (x − Da)², τ̂ = mean |a|."""
    residual = X - codes @ D.T
    tau = float(np.mean(np.abs(codes)))
    if tau <= 0.0:
        raise ValueError("all sparse codes are zero (alpha too large for the data): tau cannot be estimated; "
                         "lower alpha or give tau")
    return float(np.sqrt(np.mean(residual**2))), tau


def _dictionary_and_levels(est, X: np.ndarray) -> tuple[np.ndarray, float, float, int]:
    """Shared fit logic: the dictionary (given or learned), σ, τ (given or estimated) and the
    passes of the dictionary learning (0 for a given dictionary)."""
    N = X.shape[1]
    codes = None
    n_iter = 0
    if est.dictionary is None:
        n_atoms = N if est.n_atoms is None else est.n_atoms
        D, codes, n_iter = learn_dictionary(X, n_atoms, alpha=est.alpha, max_iter=est.max_iter,
                                            random_state=est.random_state, return_n_iter=True)
    else:
        D = as_matrix(est.dictionary, "dictionary")
        if D.shape[0] != N:
            raise ValueError(f"dictionary must have shape (N, K) = ({N}, K), atoms as columns; got {D.shape}")
    sigma, tau = est.sigma, est.tau
    if sigma is None or tau is None:
        if codes is None:
            from sklearn.decomposition import sparse_encode

            codes = sparse_encode(X, D.T, algorithm="lasso_lars", alpha=est.alpha)
        sigma_hat, tau_hat = estimate_noise_levels(X, D, codes)
        sigma = sigma_hat if sigma is None else sigma
        tau = tau_hat if tau is None else tau
    sigma, tau = check_sigma_tau(sigma, tau)
    return D, sigma, tau, n_iter


class SparseLinearProjection(LinearEmbedding):
    """The sparse-linear-model projection (Gkioulekas & Zickler, (7)–(9)) as a :class:`LinearEmbedding`.

    Parameters
    ----------
    n_components : int, optional
        M ≤ N; 2 when neither it nor ``delta`` is given.
    delta : float, optional
        A target isometry constant δ ∈ (0, 1) instead of ``n_components``: M is the smallest
        dimension whose map has RIP constant ≤ δ on the training secants (the search of
        :func:`~sdpembed.linear.selection.select_dimension`; ``selection_`` records it).
    dictionary : ndarray of shape (N, K), optional
        D, atoms as columns. By default learned from the training rows by scikit-learn's
        dictionary learning (:func:`learn_dictionary`) with K = ``n_atoms`` atoms.
    sigma : float, optional
        σ ≥ 0 (σ = 0 is the noiseless case (9)). By default the maximum-likelihood estimate
        from the residuals of the lasso codes (:func:`estimate_noise_levels`).
    tau : float, optional
        τ > 0. By default the maximum-likelihood estimate mean |a| from the codes.
    n_atoms : int, optional
        K when the dictionary is learned; default N (the paper's face experiment, Sec. 4).
    alpha : float, default=1.0
        ℓ₁ weight of the lasso used to learn D and to compute codes for σ̂, τ̂.
    max_iter : int, default=10
        Passes of the mini-batch dictionary learning.
    random_state : None, int or numpy Generator
        Seed of the dictionary learning.

    Attributes
    ----------
    components_ : ndarray of shape (n_components_, n_features_in_)
        L of (7).
    dictionary_ : ndarray of shape (N, K)
    sigma_, tau_ : float
        The σ, τ used.
    n_iter_ : int
        Passes of the dictionary learning (0 when ``dictionary`` is given).
    n_components_, n_features_in_ : int

    Notes
    -----
    The model has no offset, so the data are not centred (as in the paper).
    """

    def __init__(
        self,
        n_components: int | None = None,
        *,
        delta: float | None = None,
        dictionary: np.ndarray | None = None,
        sigma: float | None = None,
        tau: float | None = None,
        n_atoms: int | None = None,
        alpha: float = 1.0,
        max_iter: int = 10,
        random_state=0,
    ) -> None:
        self.n_components = n_components
        self.delta = delta
        self.dictionary = dictionary
        self.sigma = sigma
        self.tau = tau
        self.n_atoms = n_atoms
        self.alpha = alpha
        self.max_iter = max_iter
        self.random_state = random_state

    def _search_template(self, X: np.ndarray, y: np.ndarray | None) -> SparseLinearProjection:
        """A copy with D, σ and τ fixed: the dictionary is learned once for a search over M."""
        if self.dictionary is not None and self.sigma is not None and self.tau is not None:
            return self
        D, sigma, tau, _ = _dictionary_and_levels(self, X)
        return clone(self).set_params(dictionary=D, sigma=sigma, tau=tau)

    def _learn_map(self, X: np.ndarray, y: np.ndarray | None) -> np.ndarray:
        D, sigma, tau, n_iter = _dictionary_and_levels(self, X)
        self.dictionary_, self.sigma_, self.tau_, self.n_iter_ = D, sigma, tau, n_iter
        return sparse_linear_projection(D, self._n_components(), sigma=sigma, tau=tau)


class KernelSparseLinearProjection(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """The kernel extension (Gkioulekas & Zickler, Sec. 3.2, (17)–(18)): x ↦ Bᵀ K_D(x), a nonlinear map.

    Two kinds of dictionary (Sec. 3.3):

    * atoms with pre-images d_i ∈ R^N (``atoms``, or with ``dictionary="sample"`` ``n_atoms``
      training rows drawn at random, seeded): K_DD[i, j] = k(d_i, d_j), K_D(x) = (k(d_i, x))_i;
    * ``dictionary="learn"``, the paper's "ker.dict": a dictionary learned in the feature space
      without pre-image constraints, D = Φ(X)F, by the kernel extension of Lee et al.'s algorithm
      (:func:`~sdpembed.linear.kernel_dictionary.learn_kernel_dictionary`); then
      K_DD = Fᵀ K_XX F and K_D(x) = Fᵀ k_X(x), so the map is x ↦ (FB)ᵀ k_X(x) over the training
      rows that carry an atom.

    Parameters
    ----------
    n_components : int, default=2
        M ≤ K.
    sigma : float, optional
        σ ≥ 0 of the model (12) (σ = 0: B = U_M diag(λ_M)⁻¹). Required unless
        ``dictionary="learn"``, where by default σ̂ = √(α τ̂), the σ the lasso weight α = σ²/τ of
        (13) implies.
    tau : float, optional
        τ > 0. Required unless ``dictionary="learn"``, where by default τ̂ = mean |a| over the
        training codes (the maximum-likelihood scale of the Laplace prior (2)).
    kernel : str or callable, default="rbf"
        Any metric of :func:`sklearn.metrics.pairwise.pairwise_kernels`.
    kernel_params : dict, optional
        Its parameters (e.g. ``{"gamma": 8.0}``).
    atoms : ndarray of shape (K, N), optional
        Pre-images of the atoms, as rows.
    n_atoms : int, optional
        K when the atoms are not given; default min(n, 200).
    dictionary : {"sample", "learn"}, default="sample"
        Without ``atoms``: draw the atoms from the training rows, or learn them ("ker.dict").
    alpha : float, default=0.1
        α = σ²/τ of the kernel lasso (13) when the dictionary is learned.
    max_iter : int, default=10
        Passes of the kernel dictionary learning.
    random_state : None, int or numpy Generator

    Attributes
    ----------
    atoms_ : ndarray of shape (n_atoms_used, N)
        The rows x whose kernel values k(x, ·) the map reads: the atoms' pre-images, or the
        training rows the learned atoms are made of.
    coefficients_ : ndarray of shape (n_atoms_used, n_components)
        The map x ↦ coefficients_ᵀ k(atoms_, x): B of (17), or F B for a learned dictionary.
    dictionary_ : ndarray of shape (n_atoms_used, K) or None
        F restricted to ``atoms_`` for a learned dictionary.
    codes_ : ndarray of shape (n, K) or None
        The training codes of a learned dictionary.
    objective_ : ndarray or None
        The learning's objective J after each pass (non-increasing), for a learned dictionary.
    n_iter_ : int
        Passes of the kernel dictionary learning (0 when the atoms have pre-images).
    sigma_, tau_ : float
        The σ, τ used.
    n_features_in_ : int
    """

    def __init__(
        self,
        n_components: int = 2,
        *,
        sigma: float | None = None,
        tau: float | None = None,
        kernel="rbf",
        kernel_params: dict | None = None,
        atoms: np.ndarray | None = None,
        n_atoms: int | None = None,
        dictionary: str = "sample",
        alpha: float = 0.1,
        max_iter: int = 10,
        random_state=0,
    ) -> None:
        self.n_components = n_components
        self.sigma = sigma
        self.tau = tau
        self.kernel = kernel
        self.kernel_params = kernel_params
        self.atoms = atoms
        self.n_atoms = n_atoms
        self.dictionary = dictionary
        self.alpha = alpha
        self.max_iter = max_iter
        self.random_state = random_state

    @property
    def _n_features_out(self) -> int:
        # read by get_feature_names_out (columns kernelsparselinearprojection0, …)
        return self.coefficients_.shape[1]

    def _kernel(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        return pairwise_kernels(A, B, metric=self.kernel, **(self.kernel_params or {}))

    def fit(self, X, y=None) -> KernelSparseLinearProjection:
        """Choose or learn the atoms and compute B from K_DD (17)–(18)."""
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=2)
        if self.dictionary not in ("sample", "learn"):
            raise ValueError(f"dictionary must be 'sample' or 'learn', got {self.dictionary!r}")
        learn = self.atoms is None and self.dictionary == "learn"
        if not learn and (self.sigma is None or self.tau is None):
            raise ValueError("sigma and tau are required unless the dictionary is learned (dictionary='learn')")
        K = min(X.shape[0], 200) if self.n_atoms is None else check_positive_int(self.n_atoms, "n_atoms")
        if self.atoms is None and K > X.shape[0]:
            raise ValueError(f"n_atoms must be <= the number of training rows ({X.shape[0]}), got {K}")
        self.dictionary_ = self.codes_ = self.objective_ = None
        self.n_iter_ = 0
        if learn:
            F, codes, objective = learn_kernel_dictionary(self._kernel(X, X), K, alpha=self.alpha,
                                                          max_iter=self.max_iter, random_state=self.random_state,
                                                          return_objective=True)
            support = np.flatnonzero(np.any(F != 0.0, axis=1))
            atoms, F = X[support], F[support]
            tau = float(np.mean(np.abs(codes))) if self.tau is None else self.tau
            if tau <= 0.0:
                raise ValueError("all kernel sparse codes are zero (alpha too large for the data): tau cannot be "
                                 "estimated; lower alpha or give tau")
            sigma = float(np.sqrt(self.alpha * tau)) if self.sigma is None else self.sigma
            gram = F.T @ self._kernel(atoms, atoms) @ F
            self.dictionary_, self.codes_, self.objective_, self.n_iter_ = F, codes, objective, len(objective) - 1
        elif self.atoms is None:
            rng = check_random_state(self.random_state)
            atoms = X[np.sort(rng.choice(X.shape[0], size=K, replace=False))]
            sigma, tau = self.sigma, self.tau
            gram = self._kernel(atoms, atoms)
        else:
            atoms = as_matrix(self.atoms, "atoms", n_cols=X.shape[1])
            sigma, tau = self.sigma, self.tau
            gram = self._kernel(atoms, atoms)
        self.sigma_, self.tau_ = check_sigma_tau(sigma, tau)
        B = kernel_sparse_linear_coefficients(gram, self.n_components, sigma=self.sigma_, tau=self.tau_)
        self.atoms_ = atoms
        self.coefficients_ = B if self.dictionary_ is None else self.dictionary_ @ B
        return self

    def transform(self, X) -> np.ndarray:
        """y = Bᵀ K_D(x) for every row x, shape (n, n_components)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return self._kernel(X, self.atoms_) @ self.coefficients_
