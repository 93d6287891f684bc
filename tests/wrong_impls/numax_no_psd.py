"""A deliberately wrong NuMax implementation, for the reference-suite tests: the ADMM of NuMax
Algorithm 1 without the PSD projection.

The eigenvalue step (11) shrinks the eigenvalues of the trace variable, λ ↦ max(λ − 1/β, 0);
this implementation forgets the max(·, 0), i.e. it solves min tr P subject to the secant
constraints only, without P ⪰ 0. That problem is unbounded whenever some symmetric D with
v_iᵀDv_i = 0 for every secant has tr D < 0, and its iterates drift to indefinite matrices with an
ever smaller trace. Self-contained (numpy only), as an outside implementation would be:

    python numax_no_psd.py INSTANCE.npz SOLUTION.npz
"""

from __future__ import annotations

import sys

import numpy as np


def secants_of(data) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Unit secants and their bounds (lo, hi) for numax and numax_class instances."""
    delta = float(data["delta"])
    if "secants" in data.files:
        V = data["secants"]
        return V, np.full(len(V), 1 - delta), np.full(len(V), 1 + delta)
    if "inter" in data.files:
        V = np.vstack([data["inter"], data["intra"]])
        intra = np.arange(len(V)) >= len(data["inter"])
    else:
        X = data["X"]
        i, j = np.triu_indices(len(X), 1)
        V = X[i] - X[j]
        keep = np.linalg.norm(V, axis=1) > 0
        V, i, j = V[keep], i[keep], j[keep]
        V /= np.linalg.norm(V, axis=1)[:, None]
        intra = (data["y"][i] == data["y"][j]) if "y" in data.files else None
    if intra is None:
        return V, np.full(len(V), 1 - delta), np.full(len(V), 1 + delta)
    return V, np.where(intra, -np.inf, 1 - delta), np.where(intra, 1 + delta, np.inf)


def admm_without_psd(V: np.ndarray, lo: np.ndarray, hi: np.ndarray, beta: float = 1.0, iterations: int = 300):
    """min tr Q s.t. Q = P, z = 𝒜(P), lo ≤ z ≤ hi — Algorithm 1 with the PSD projection left out."""
    N = V.shape[1]

    def A(P):                                                            # 𝒜(P) = (v_iᵀ P v_i)_i
        return np.einsum("ij,jk,ik->i", V, P, V)

    def At(y):                                                           # 𝒜*(y) = Σ y_i v_i v_iᵀ
        return (V * y[:, None]).T @ V

    K = np.linalg.inv(np.eye(len(V)) + (V @ V.T) ** 2)                   # (I + 𝒜𝒜*)⁻¹
    P, Lam, omega = np.eye(N), np.zeros((N, N)), np.zeros(len(V))
    for _ in range(iterations):
        Q = P - (np.eye(N) + Lam) / beta                                 # (11) without max(λ − 1/β, 0)
        z = np.clip(A(P) - omega / beta, lo, hi)                         # (10)
        R = Q + Lam / beta + At(z + omega / beta)
        P = R - At(K @ A(R))                                             # (13): (I + 𝒜*𝒜) P = R
        Lam += beta * (Q - P)
        omega += beta * (z - A(P))
    return 0.5 * (Q + Q.T)


def main(argv: list[str]) -> int:
    instance, solution = argv
    with np.load(instance, allow_pickle=False) as data:
        if str(data["problem"]) not in ("numax", "numax_class"):
            print(f"not a NuMax instance: {data['problem']}", file=sys.stderr)
            return 2
        V, lo, hi = secants_of(data)
    np.savez(solution, P=admm_without_psd(V, lo, hi))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
