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

References
----------
.. [1] I. Gkioulekas and T. Zickler, "Dimensionality reduction using the sparse linear model",
   Advances in Neural Information Processing Systems 24 (NIPS), 2011. Implemented here: the
   expected distortion (4) and problem (6).
"""

from __future__ import annotations

import numbers

import numpy as np

from .._validate import as_matrix

__all__ = ["check_sigma_tau", "sparse_linear_dual_bound", "sparse_linear_objective"]


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
