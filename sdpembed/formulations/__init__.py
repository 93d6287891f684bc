"""CVXPY ground truth, one module per SDP, each reading like its paper."""

from .numax import box_trace_problem, solve_box_trace_cvxpy, solve_numax_cvxpy

__all__ = ["box_trace_problem", "solve_box_trace_cvxpy", "solve_numax_cvxpy"]
