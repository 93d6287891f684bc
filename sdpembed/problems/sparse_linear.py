"""Problem (6) of the sparse-linear-model projection (Gkioulekas & Zickler) as numpy: its
parameters, its objective and the certified lower bound that checks the CVXPY ground truth
(:mod:`sdpembed.formulations.sparse_linear`) of the closed form (7)–(8)
(:mod:`sdpembed.linear.sparse_linear_model`).

    minimise    4τ⁴ ‖DᵀSD − I_K‖²_F + 4τ²σ² ‖SD‖²_F + σ⁴ ‖S‖²_F                      (6)
    subject to  S ⪰ 0                                                   (S = LᵀL)

**Certificate.** Write (6) as q(S) = ½⟨S, 𝓗(S)⟩ − ⟨C, S⟩ + 4τ⁴K with
𝓗(S) = 8τ⁴ΣSΣ + 4τ²σ²(ΣS + SΣ) + 2σ⁴S, C = 8τ⁴Σ and Σ = DDᵀ = V diag(λ) Vᵀ. 𝓗 acts entrywise in
the basis V, multiplying entry (i, j) by h_ij = 8τ⁴λ_iλ_j + 4τ²σ²(λ_i + λ_j) + 2σ⁴. For any
Z ⪰ 0 the Lagrangian dual function is then explicit,

    g(Z) = min_S q(S) − ⟨Z, S⟩ = 4τ⁴K − ½ Σ_ij (C̃ + Z̃)²_ij / h_ij,     X̃ = VᵀXV,

a certified lower bound on the optimum. We evaluate it at CVXPY's Z (projected onto the PSD
cone) and at Z = 0, and keep the larger. Entries with h_ij = 0 (σ = 0 and λ_iλ_j = 0) add
nothing if (C̃ + Z̃)_ij = 0 and make the bound −∞ otherwise.

**The weighted model (10)–(11).** When the codes and the noise are zero-mean and independent but
not identically distributed, with variances α_k = E a_k² (K) and e_n = E ε_n² (N) for both
signals, the expectation (4) becomes

    ‖(DᵀSD − I) ⊙ √W₁‖²_F + ‖(SD) ⊙ √W₂‖²_F + ‖S ⊙ √W₃‖²_F                        (10)
    W₁ = ααᵀ,  W₂ = 2 e αᵀ,  W₃ = e eᵀ                                              (11)

(rederived: the PDF's (11) is garbled. Expanding δp of (5), every cross term has a factor of odd
order and vanishes, and E(uᵀMv)² = Σ_ij M²_ij E u²_i E v²_j for independent zero-mean u, v; the
two terms ε₁ᵀSDa₂ and ε₂ᵀSDa₁ give the factor 2 of W₂.) With α = 2τ²𝟙 and e = σ²𝟙 it is (6).

References
----------
.. [1] I. Gkioulekas and T. Zickler, "Dimensionality reduction using the sparse linear model",
   Advances in Neural Information Processing Systems 24 (NIPS), 2011. Implemented here: the
   expected distortion (4), problem (6) and the weighted problem (10)–(11).
"""

from __future__ import annotations

import numbers

import numpy as np

from .._validate import as_matrix

__all__ = ["check_sigma_tau", "check_variances", "sparse_linear_dual_bound", "sparse_linear_objective",
           "weighted_sparse_linear_gradient", "weighted_sparse_linear_objective"]


def check_sigma_tau(sigma: object, tau: object) -> tuple[float, float]:
    """(σ, τ) as floats: σ ≥ 0 and τ > 0 finite real numbers, or a ValueError naming the one that is not."""
    if isinstance(sigma, bool) or not isinstance(sigma, numbers.Real) or not (np.isfinite(sigma) and sigma >= 0):
        raise ValueError(f"sigma (noise standard deviation) must be a finite real number >= 0, got {sigma!r}")
    if isinstance(tau, bool) or not isinstance(tau, numbers.Real) or not (np.isfinite(tau) and tau > 0):
        raise ValueError(f"tau (Laplace scale of the codes) must be a finite real number > 0, got {tau!r}")
    return float(sigma), float(tau)


def sparse_linear_objective(S: np.ndarray, D: np.ndarray, *, sigma: float, tau: float) -> float:
    """The objective of (6): 4τ⁴‖DᵀSD − I‖²_F + 4τ²σ²‖SD‖²_F + σ⁴‖S‖²_F (= E δp², (4))."""
    D = as_matrix(D, "D")
    S = as_matrix(S, "S", n_cols=D.shape[0])
    sigma, tau = check_sigma_tau(sigma, tau)
    SD = S @ D
    misfit = D.T @ SD - np.eye(D.shape[1])
    return float(4 * tau**4 * np.sum(misfit**2) + 4 * tau**2 * sigma**2 * np.sum(SD**2) + sigma**4 * np.sum(S**2))


def sparse_linear_dual_bound(D: np.ndarray, Z: np.ndarray | None, *, sigma: float, tau: float) -> float:
    """max(g(Z₊), g(0)): the certified lower bound on (6) of the module docstring."""
    D = as_matrix(D, "D")
    sigma, tau = check_sigma_tau(sigma, tau)
    lam, V = np.linalg.eigh(D @ D.T)
    lam = np.maximum(lam, 0.0)
    h = 8 * tau**4 * np.outer(lam, lam) + 4 * tau**2 * sigma**2 * (lam[:, None] + lam[None, :]) + 2 * sigma**4
    C = np.diag(8 * tau**4 * lam)
    scale = max(float(np.max(np.abs(C))), 1e-300)

    def g(Zt: np.ndarray) -> float:
        G = C + Zt
        zero = h <= 1e-14 * max(float(h.max()), 1e-300)
        if np.any(np.abs(G[zero]) > 1e-12 * scale):
            return -np.inf
        return float(4 * tau**4 * D.shape[1] - 0.5 * np.sum(G[~zero] ** 2 / h[~zero]))

    bounds = [g(np.zeros_like(C))]
    if Z is not None:
        w, U = np.linalg.eigh(0.5 * (Z + Z.T))
        Z_psd = (U * np.maximum(w, 0.0)) @ U.T
        bounds.append(g(V.T @ Z_psd @ V))
    return max(bounds)


def check_variances(values: object, length: int, name: str) -> np.ndarray:
    """A 1-D array of ``length`` finite variances ≥ 0, or a ValueError naming ``name``."""
    array = np.asarray(values, dtype=np.float64)
    if array.shape != (length,) or not np.all(np.isfinite(array)) or np.any(array < 0):
        raise ValueError(f"{name} must be {length} finite variances >= 0, got shape {array.shape}")
    return array


def _weights(D: np.ndarray, code_variances: object, noise_variances: object) -> tuple[np.ndarray, ...]:
    alpha = check_variances(code_variances, D.shape[1], "code_variances")
    e = check_variances(noise_variances, D.shape[0], "noise_variances")
    return np.outer(alpha, alpha), 2.0 * np.outer(e, alpha), np.outer(e, e)


def weighted_sparse_linear_objective(S: np.ndarray, D: np.ndarray, *, code_variances: object,
                                     noise_variances: object) -> float:
    """The weighted objective (10) with the weights (11): E δp² for codes of variances α and noise of variances e.

    Parameters
    ----------
    S : ndarray of shape (N, N)
        S = LᵀL.
    D : ndarray of shape (N, K)
        The dictionary, atoms as columns.
    code_variances : array_like of shape (K,)
        α_k = E a_k² (2τ² for the Laplace codes of (2)).
    noise_variances : array_like of shape (N,)
        e_n = E ε_n² (σ² for white noise).
    """
    D = as_matrix(D, "D")
    S = as_matrix(S, "S", n_cols=D.shape[0])
    W1, W2, W3 = _weights(D, code_variances, noise_variances)
    SD = S @ D
    misfit = D.T @ SD - np.eye(D.shape[1])
    return float(np.sum(W1 * misfit**2) + np.sum(W2 * SD**2) + np.sum(W3 * S**2))


def weighted_sparse_linear_gradient(S: np.ndarray, D: np.ndarray, *, code_variances: object,
                                    noise_variances: object) -> np.ndarray:
    """The gradient of (10) with respect to a symmetric S: 2 D (W₁ ⊙ (DᵀSD − I)) Dᵀ + (W₂ ⊙ SD) Dᵀ
    + D (W₂ ⊙ SD)ᵀ + 2 W₃ ⊙ S (the symmetric part, so that a step keeps S symmetric)."""
    D = as_matrix(D, "D")
    S = as_matrix(S, "S", n_cols=D.shape[0])
    W1, W2, W3 = _weights(D, code_variances, noise_variances)
    SD = S @ D
    G2 = (W2 * SD) @ D.T
    return 2.0 * D @ (W1 * (D.T @ SD - np.eye(D.shape[1]))) @ D.T + G2 + G2.T + 2.0 * W3 * S
