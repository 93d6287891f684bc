"""CVXPY ground truth, one module per SDP, each reading like its paper."""

from ..problems.lmnn import lmnn_dual_bound
from .lmnn import lmnn_problem, solve_lmnn_cvxpy, solve_lmnn_working_set
from .lmnn_multi import multi_metric_problem, solve_multi_metric_cvxpy
from .mvu_oos import mvu_oos_problem, solve_mvu_oos_cvxpy
from .numax import box_trace_problem, solve_box_trace_cvxpy, solve_numax_cvxpy
from .numax_class import solve_numax_class_cvxpy

__all__ = [
    "box_trace_problem",
    "lmnn_dual_bound",
    "lmnn_problem",
    "multi_metric_problem",
    "mvu_oos_problem",
    "solve_box_trace_cvxpy",
    "solve_lmnn_cvxpy",
    "solve_lmnn_working_set",
    "solve_multi_metric_cvxpy",
    "solve_mvu_oos_cvxpy",
    "solve_numax_class_cvxpy",
    "solve_numax_cvxpy",
]
