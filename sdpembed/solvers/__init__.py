"""Hand-written algorithms (numpy/scipy only), checked against the CVXPY formulations."""

from ..problems.numax_certificate import secant_span
from .lmnn.fast import solve_lmnn_fast, solve_multi_metric_fast
from .lmnn.gradient import certify_metric, solve_lmnn_gradient
from .mvu.oos import place_points, refine_points, solve_mvu_oos
from .near_isometric.fromax import FroMaxState, fromax
from .near_isometric.nilepro import NILEProState, nilepro
from .near_isometric.nonconvex import NearIsometricResult
from .near_isometric.rank_adjust import near_isometric_cg, rank_adjust, rank_adjust_cg
from .numax.admm import ADMMState, box_trace_admm, least_squares_step, solve_numax_admm
from .numax.admm_control import ADMMControl, ADMMPenalty, ADMMStopping
from .numax.admm_pairs import OutsideMonitor, PairNumerics, pair_trace_admm
from .numax.column_generation import (
    ColumnGenerationRun,
    RestrictedResult,
    RestrictedSolver,
    column_generation,
    run_column_generation,
    solve_numax_cg,
)
from .numax.numax_class import solve_numax_class_admm, solve_numax_class_cg
from .numax.pair_scan import PairDistances, ScanResult, scan_pair_violations

__all__ = [
    "ADMMControl",
    "ADMMPenalty",
    "ADMMState",
    "ADMMStopping",
    "OutsideMonitor",
    "PairNumerics",
    "ColumnGenerationRun",
    "FroMaxState",
    "NILEProState",
    "NearIsometricResult",
    "RestrictedResult",
    "RestrictedSolver",
    "ScanResult",
    "box_trace_admm",
    "certify_metric",
    "column_generation",
    "fromax",
    "least_squares_step",
    "near_isometric_cg",
    "nilepro",
    "pair_trace_admm",
    "place_points",
    "rank_adjust",
    "rank_adjust_cg",
    "refine_points",
    "run_column_generation",
    "scan_pair_violations",
    "PairDistances",
    "secant_span",
    "solve_lmnn_fast",
    "solve_lmnn_gradient",
    "solve_multi_metric_fast",
    "solve_mvu_oos",
    "solve_numax_admm",
    "solve_numax_cg",
    "solve_numax_class_admm",
    "solve_numax_class_cg",
]
