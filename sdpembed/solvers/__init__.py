"""Hand-written algorithms (numpy/scipy only), checked against the CVXPY formulations."""

from .column_generation import ScanResult, column_generation, scan_pair_violations, solve_numax_cg
from .numax_admm import ADMMState, box_trace_admm, least_squares_step, secant_span, solve_numax_admm

__all__ = [
    "ADMMState",
    "ScanResult",
    "box_trace_admm",
    "column_generation",
    "least_squares_step",
    "scan_pair_violations",
    "secant_span",
    "solve_numax_admm",
    "solve_numax_cg",
]
