"""LMNN solvers (Weinberger and Saul): the interior point on the active triplets with Newton/PCG
steps (``fast``), the subgradient projection of Algorithm 3 (``gradient``) and the L-BFGS warm
start on a smoothed hinge (``warm``).
"""
