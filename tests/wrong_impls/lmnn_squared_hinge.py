"""A deliberately wrong LMNN implementation, for the reference-suite tests: the squared hinge.

It minimises (1 − μ) Σ_{j⇝i} d_M(x_i, x_j) + μ Σ_{j⇝i, l: y_l≠y_i} [1 + d_M(x_i, x_j) − d_M(x_i, x_l)]₊²
over M ⪰ 0 (projected gradient with backtracking) — a smooth loss that is *not* the thesis' (2.11),
whose hinge is not squared. The metric is PSD and looks reasonable; only its LMNN loss is wrong.
Self-contained (numpy only):

    python lmnn_squared_hinge.py INSTANCE.npz SOLUTION.npz
"""

from __future__ import annotations

import sys

import numpy as np


def project_psd(M: np.ndarray) -> np.ndarray:
    w, U = np.linalg.eigh(0.5 * (M + M.T))
    return (U * np.maximum(w, 0.0)) @ U.T


def squared_hinge_lmnn(X, y, targets, mu, iterations: int = 3000):
    n, k = targets.shape
    i = np.repeat(np.arange(n), k)
    j = targets.ravel()
    pull = (X[i] - X[j]).T @ (X[i] - X[j])                                # Σ_{j⇝i} C_ij
    impostor = y[i][:, None] != y[None, :]                                # (pairs, n): l with y_l ≠ y_i
    pair, l = np.nonzero(impostor)
    U, W = X[i[pair]] - X[j[pair]], X[i[pair]] - X[l]

    def loss_grad(M):
        h = np.maximum(1.0 + np.einsum("ij,jk,ik->i", U, M, U) - np.einsum("ij,jk,ik->i", W, M, W), 0.0)
        value = (1 - mu) * np.sum(pull * M) + mu * np.sum(h**2)
        grad = (1 - mu) * pull + 2 * mu * ((U * h[:, None]).T @ U - (W * h[:, None]).T @ W)
        return value, grad

    M, step = np.eye(X.shape[1]), 1.0
    value, grad = loss_grad(M)
    for _ in range(iterations):
        while True:
            candidate = project_psd(M - step * grad)
            new_value, new_grad = loss_grad(candidate)
            if new_value <= value + np.sum(grad * (candidate - M)) + np.sum((candidate - M) ** 2) / (2 * step):
                break
            step /= 2
        if np.abs(candidate - M).max() < 1e-12:
            break
        M, value, grad, step = candidate, new_value, new_grad, step * 1.5
    return M


def main(argv: list[str]) -> int:
    instance, solution = argv
    with np.load(instance, allow_pickle=False) as data:
        if str(data["problem"]) != "lmnn":
            print(f"not an LMNN instance: {data['problem']}", file=sys.stderr)
            return 2
        M = squared_hinge_lmnn(data["X"], data["y"], data["targets"], float(data["mu"]))
    np.savez(solution, M=M)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
