"""Hand-written algorithms (numpy/scipy only), checked against the CVXPY formulations."""

from .numax_admm import ADMMState, box_trace_admm, secant_span, solve_numax_admm

__all__ = ["ADMMState", "box_trace_admm", "secant_span", "solve_numax_admm"]
