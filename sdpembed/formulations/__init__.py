"""CVXPY ground truth, one module per SDP, each reading like its paper.

References
----------
.. [1] C. Hegde, A. C. Sankaranarayanan, W. Yin and R. G. Baraniuk, "NuMax: A convex approach for
   learning near-isometric linear embeddings", IEEE Transactions on Signal Processing 63(22),
   6109–6121, 2015. Implemented here: the SDPs (4) and (7)/(15).
.. [2] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
   Pennsylvania, 2007. Implemented here: the SDPs (2.11), (2.17), Sec. 3.1.4–3.1.11.
.. [3] I. Gkioulekas and T. Zickler, "Dimensionality reduction using the sparse linear model",
   Advances in Neural Information Processing Systems 24 (NIPS), 2011. Implemented here: problem
   (6).
"""

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
