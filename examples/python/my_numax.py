"""A NuMax solver of one's own: read an instance file, write a solution file.

    sdpembed suite run --command "python examples/python/my_numax.py {instance} {solution}" --problems numax

Handles the ``numax`` instances that list their secants (NuMax (4), stated in CVXPY and solved by
Clarabel); exits with code 3 (SKIP) on any other instance.
"""
import sys

import cvxpy as cp
import numpy as np

instance, solution = sys.argv[1], sys.argv[2]
with np.load(instance, allow_pickle=False) as f:
    if str(f["problem"]) != "numax" or "secants" not in f:
        sys.exit(3)                                   # SKIP: this program handles secant lists only
    V, delta = f["secants"], float(f["delta"])

P = cp.Variable((V.shape[1], V.shape[1]), PSD=True)
norms = cp.sum(cp.multiply(V @ P, V), axis=1)         # v_iᵀ P v_i for every secant
cp.Problem(cp.Minimize(cp.trace(P)), [cp.abs(norms - 1) <= delta]).solve(solver=cp.CLARABEL)

with open(solution, "wb") as out:                     # the path as given: no ".npz" appended
    np.savez(out, P=P.value)
