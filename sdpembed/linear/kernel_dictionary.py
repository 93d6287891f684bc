"""Kernel dictionary learning for the sparse linear model's kernel extension (the paper's "ker.dict").

The kernel extension of Gkioulekas and Zickler (Sec. 3.2) models Φ(x) = Da + ε̃ (12) with a
dictionary D = {d̃_1, …, d̃_K} in the feature space H of a kernel k, and infers codes by the
kernel lasso (13)

    min_a  1/(2σ²) ‖Φ(x) − Da‖²_H + (1/τ) ‖a‖₁,   i.e.   ½ ‖Φ(x) − Da‖²_H + α ‖a‖₁,  α = σ²/τ.

Their "ker.dict" learns D from training signals X = [x_1, …, x_S] by "a kernel extension of the
algorithm of [21] (Lee et al.) without pre-image constraints" (Sec. 4, footnote 4). Without
pre-images the representer theorem puts the atoms in the span of the training features
(Sec. 3.3): D = Φ(X) F with F of shape (S, K). Everything is then a function of the training
kernel matrix K_XX:

    K_DD = Fᵀ K_XX F,     K_D(x) = Fᵀ k_X(x),     k_X(x) = (k(x_j, x))_j.

(The extracted text of Sec. 3.3 reads "Fᵀ K²_XX F" for the matrix to decompose; the atom Gram of
D = Φ(X)F is Fᵀ K_XX F, which is what (17) needs — rederived, the garbled exponent is not used.)

The learning alternates Lee et al.'s two convex steps on

    J(F, A) = ½ ‖Φ(X) − Φ(X) F Aᵀ‖²_F + α ‖A‖₁ = ½ tr((I − FAᵀ)ᵀ K_XX (I − FAᵀ)) + α ‖A‖₁,

with the codes A of shape (S, K) (row i the code of x_i):

* **Codes** (:func:`kernel_sparse_encode`): the kernel lasso (13) of each signal, a convex
  problem in a depending on the kernel only through K_DD and K_D(x):
  ½ aᵀ K_DD a − K_D(x)ᵀ a + α ‖a‖₁ (+ ½ k(x, x)). With K_DD = RᵀR (R from its eigenvalue
  decomposition) and y solving Rᵀ y = K_D(x), it is the ordinary lasso ½ ‖y − Ra‖² + α ‖a‖₁,
  solved exactly by LARS (scikit-learn's ``sparse_encode``).
* **Dictionary** (:func:`kernel_dictionary_update`): min_F ½ tr((I − FAᵀ)ᵀ K_XX (I − FAᵀ)) over
  atoms of unit norm at most, ‖Φ(X) F_k‖²_H = (Fᵀ K_XX F)_kk ≤ 1 — a convex quadratic program
  with convex quadratic constraints. As in Lee et al.'s linear case, its Lagrangian is minimised
  by F = A (AᵀA + Λ)⁻¹, Λ = diag(λ), and the dual

      g(λ) = ½ tr K_XX − ½ tr(Aᵀ K_XX A (AᵀA + Λ)⁻¹) − ½ Σ_k λ_k

  is maximised over λ ≥ 0 (its gradient is ½(‖atom_k‖²_H − 1)); we use L-BFGS-B. Atoms no code
  uses are left out of the step and restarted at the training signal worst reconstructed, which
  does not change J.

Both steps are exact minimisations, so J never increases from one pass to the next; the CVXPY
statements of both steps check them in the tests.

References
----------
.. [1] I. Gkioulekas and T. Zickler, "Dimensionality reduction using the sparse linear model",
   Advances in Neural Information Processing Systems 24 (NIPS), 2011. The model (12), the kernel
   lasso (13), the representer form D = Φ(X)F of Sec. 3.3, footnote 4 of Sec. 4.
.. [2] H. Lee, A. Battle, R. Raina and A. Y. Ng, "Efficient sparse coding algorithms", NIPS 19,
   2007. The alternating codes / Lagrange-dual dictionary step, here in the feature space.
.. [3] S. Gao, I. W. Tsang and L.-T. Chia, "Kernel sparse representation for image
   classification and face recognition", ECCV 2010. The kernel lasso (the paper's ref. [36]).
"""

from __future__ import annotations

import warnings

import numpy as np

from .._validate import as_matrix, check_positive_int, check_random_state, symmetric_matrix

__all__ = [
    "kernel_sparse_encode",
    "kernel_dictionary_update",
    "kernel_dictionary_objective",
    "learn_kernel_dictionary",
]


def _check_alpha(alpha: object) -> float:
    value = float(alpha)
    if not np.isfinite(value) or value <= 0.0:
        raise ValueError(f"alpha (the lasso weight σ²/τ of (13)) must be a finite number > 0, got {alpha!r}")
    return value


def kernel_sparse_encode(K_DD: np.ndarray, K_XD: np.ndarray, *, alpha: float) -> np.ndarray:
    """The codes of the kernel lasso (13), min_a ½ aᵀ K_DD a − K_D(x)ᵀ a + α ‖a‖₁, for every signal.

    Parameters
    ----------
    K_DD : ndarray of shape (K, K)
        The atoms' Gram matrix ⟨d̃_i, d̃_j⟩_H (positive semidefinite).
    K_XD : ndarray of shape (n, K)
        Row i is K_D(x_i) = (⟨d̃_k, Φ(x_i)⟩_H)_k.
    alpha : float
        α = σ²/τ > 0, the lasso weight of (13) after multiplying it by σ².

    Returns
    -------
    ndarray of shape (n, K)
        Row i the code a_i of x_i.

    Notes
    -----
    K_DD = Rᵀ R with R = diag(√w) Uᵀ over its eigenpairs (w, U) with w > 0, and y = diag(w)^(−½) Uᵀ K_D(x):
    then ½ ‖y − Ra‖² differs from ½ aᵀ K_DD a − K_D(x)ᵀ a by a constant whenever K_D(x) lies in
    the range of K_DD, which holds for any Φ(x) (K_D(x) = Dᵀ Φ(x) and K_DD = Dᵀ D). The lasso is
    solved by LARS, exactly.
    """
    from sklearn.decomposition import sparse_encode  # at first use (DESIGN.md, "Start-up")

    G = symmetric_matrix(K_DD, "K_DD")
    C = as_matrix(K_XD, "K_XD", n_cols=G.shape[0])
    alpha = _check_alpha(alpha)
    w, U = np.linalg.eigh(G)
    if w[-1] <= 0.0:
        raise ValueError("K_DD has no positive eigenvalue: the atoms are all zero in the feature space")
    if w[0] < -1e-8 * w[-1]:
        raise ValueError(f"K_DD must be positive semidefinite (a Gram matrix), but its least eigenvalue is "
                         f"{w[0]:.3g} against a largest of {w[-1]:.3g}")
    keep = w > 1e-12 * w[-1]
    root = np.sqrt(w[keep])
    R = root[:, None] * U[:, keep].T                         # (r, K), RᵀR = K_DD on its range
    Y = (C @ U[:, keep]) / root[None, :]                     # (n, r), R ᵀ y = K_D(x)
    return sparse_encode(Y, R.T, algorithm="lasso_lars", alpha=alpha)


def kernel_dictionary_objective(K_XX: np.ndarray, F: np.ndarray, codes: np.ndarray, *, alpha: float) -> float:
    """J(F, A) = ½ tr((I − FAᵀ)ᵀ K_XX (I − FAᵀ)) + α ‖A‖₁: the summed kernel lasso (13) of the training signals."""
    K = symmetric_matrix(K_XX, "K_XX")
    residual = np.eye(K.shape[0]) - F @ codes.T
    return float(0.5 * np.sum((K @ residual) * residual) + _check_alpha(alpha) * np.abs(codes).sum())


def kernel_dictionary_update(K_XX: np.ndarray, codes: np.ndarray, *, tol: float = 1e-10,
                             max_iter: int = 500) -> np.ndarray:
    """The dictionary step: F minimising ½ tr((I − FAᵀ)ᵀ K_XX (I − FAᵀ)) with (Fᵀ K_XX F)_kk ≤ 1.

    Solved by Lee et al.'s Lagrange dual (module docstring): F = A (AᵀA + Λ)⁻¹ at the λ ≥ 0
    maximising g(λ) (L-BFGS-B, projected-gradient tolerance ``tol``). An atom whose code column
    is zero is unconstrained by the data and is returned as zero; an atom still above unit norm
    by the dual's tolerance is scaled back to the unit sphere.

    Parameters
    ----------
    K_XX : ndarray of shape (S, S)
        Kernel matrix of the training signals (positive semidefinite).
    codes : ndarray of shape (S, K)
        A, row i the code of x_i.
    tol, max_iter
        L-BFGS-B's projected-gradient tolerance and iterations on the dual.

    Returns
    -------
    ndarray of shape (S, K)
        F, the atoms d̃_k = Φ(X) F_k.
    """
    from scipy.optimize import minimize  # at first use (DESIGN.md, "Start-up")

    K = symmetric_matrix(K_XX, "K_XX")
    A = as_matrix(codes, "codes")
    if A.shape[0] != K.shape[0]:
        raise ValueError(f"codes must have one row per training signal ({K.shape[0]}), got shape {A.shape}")
    F = np.zeros_like(A)
    used = np.flatnonzero(np.any(A != 0.0, axis=0))
    if used.size == 0:
        return F
    Au = A[:, used]
    Q = Au.T @ Au
    P = Au.T @ K @ Au
    jitter = 1e-12 * max(float(np.mean(np.diag(Q))), 1e-300) * np.eye(len(used))

    def atom_gram(lam: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        Minv = np.linalg.inv(Q + np.diag(lam) + jitter)
        return Minv, Minv @ P @ Minv                        # Fᵀ K F at F = A M⁻¹

    def negative_dual(lam: np.ndarray) -> tuple[float, np.ndarray]:
        Minv, gram = atom_gram(lam)
        return 0.5 * (float(np.sum(P * Minv)) + float(lam.sum())), 0.5 * (1.0 - np.diag(gram))

    start = np.full(len(used), 1e-3 * float(np.mean(np.diag(Q))))
    result = minimize(negative_dual, start, jac=True, method="L-BFGS-B", bounds=[(0.0, None)] * len(used),
                      options={"maxiter": check_positive_int(max_iter, "max_iter"), "gtol": tol, "ftol": 1e-15})
    Minv, gram = atom_gram(result.x)
    Fu = Au @ Minv
    norms = np.sqrt(np.maximum(np.diag(gram), 0.0))
    F[:, used] = Fu / np.maximum(norms, 1.0)[None, :]
    return F


def learn_kernel_dictionary(
    K_XX: np.ndarray, n_atoms: int, *, alpha: float = 0.1, max_iter: int = 10, tol: float = 1e-4,
    random_state=None, return_objective: bool = False,
) -> tuple[np.ndarray, np.ndarray] | tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Learn a dictionary D = Φ(X) F in the feature space of a kernel: the paper's "ker.dict".

    Alternates the exact codes step (:func:`kernel_sparse_encode`) and the exact dictionary step
    (:func:`kernel_dictionary_update`) on J(F, A) (module docstring) from K atoms placed at
    distinct training signals drawn at random, Φ(x_j)/‖Φ(x_j)‖. Stops after ``max_iter`` passes
    or when a pass lowers J by less than ``tol`` times J.

    Parameters
    ----------
    K_XX : ndarray of shape (S, S)
        Kernel matrix of the S training signals, positive semidefinite with a positive diagonal.
    n_atoms : int
        K ≤ S.
    alpha : float, default=0.1
        α = σ²/τ of the kernel lasso (13) (the paper's Caltech-101 run uses λ = 0.1).
    max_iter : int, default=10
        Passes (a codes step and a dictionary step each).
    tol : float, default=1e-4
        Relative decrease of J below which the learning stops.
    random_state : None, int or numpy Generator
        Seed of the initial atoms.
    return_objective : bool, default=False
        Also return J after the first codes step and after each pass.

    Returns
    -------
    F : ndarray of shape (S, K)
        The atoms' coefficients on the training features.
    codes : ndarray of shape (S, K)
        The codes of the training signals for the returned F.
    objective : ndarray
        Only with ``return_objective``: J, non-increasing.
    """
    K = symmetric_matrix(K_XX, "K_XX")
    S = K.shape[0]
    n_atoms = check_positive_int(n_atoms, "n_atoms")
    if n_atoms > S:
        raise ValueError(f"n_atoms must be <= the number of training signals ({S}), got {n_atoms}")
    alpha = _check_alpha(alpha)
    diagonal = np.diag(K)
    if np.any(diagonal <= 0.0):
        raise ValueError("K_XX must have a positive diagonal (k(x, x) > 0 for every training signal)")
    rng = check_random_state(random_state)
    F = np.zeros((S, n_atoms))
    start = rng.choice(S, size=n_atoms, replace=False)
    F[start, np.arange(n_atoms)] = 1.0 / np.sqrt(diagonal[start])
    codes = kernel_sparse_encode(F.T @ K @ F, K @ F, alpha=alpha)
    history = [kernel_dictionary_objective(K, F, codes, alpha=alpha)]
    for _ in range(check_positive_int(max_iter, "max_iter")):
        F = kernel_dictionary_update(K, codes)
        F = _restart_unused(K, F, codes)
        with warnings.catch_warnings():              # LARS on nearly collinear atoms warns and stays exact
            warnings.simplefilter("ignore", RuntimeWarning)
            codes = kernel_sparse_encode(F.T @ K @ F, K @ F, alpha=alpha)
        history.append(kernel_dictionary_objective(K, F, codes, alpha=alpha))
        if history[-2] - history[-1] <= tol * abs(history[-2]):
            break
    if return_objective:
        return F, codes, np.asarray(history)
    return F, codes


def _restart_unused(K: np.ndarray, F: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Atoms no code uses, moved to the training signals with the largest residual ‖Φ(x_i) − Φ(X)F a_i‖²_H."""
    unused = np.flatnonzero(~np.any(codes != 0.0, axis=0))
    if unused.size == 0:
        return F
    residual = np.eye(K.shape[0]) - F @ codes.T
    worst = np.argsort(-np.sum((K @ residual) * residual, axis=0))[:unused.size]
    F = F.copy()
    F[:, unused] = 0.0
    F[worst, unused[:len(worst)]] = 1.0 / np.sqrt(np.diag(K)[worst])
    return F
