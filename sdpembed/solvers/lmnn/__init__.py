"""LMNN solvers (Weinberger and Saul): the interior point on the active triplets with Newton/PCG
steps (``fast``), the subgradient projection of Algorithm 3 (``gradient``) and the L-BFGS warm
start on a smoothed hinge (``warm``).
"""

from .fast import solve_lmnn_fast, solve_multi_metric_fast

__all__ = ["solve_lmnn_fast", "solve_multi_metric_fast"]
