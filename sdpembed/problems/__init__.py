"""One module per problem, numpy only: the instance type (validation, file arrays), the operators
and their adjoints, the objective, the certified dual bound and what the CVXPY formulations
(:mod:`sdpembed.formulations`) and the hand-written solvers (:mod:`sdpembed.solvers`) share —
they import it and never each other.

``numax`` (NuMax and NuMax-Class), ``lmnn`` (LMNN and its multi-metric version), ``mvu``,
``mvu_oos`` (the out-of-sample SDP of MVU) and ``sparse_linear`` (problem (6) of the
sparse-linear-model projection).
"""

from .base import Instance
from .lmnn import LMNNInstance, MultiMetricLMNNProblem
from .mvu import MVUInstance
from .mvu_oos import MVUOOSInstance
from .numax import NuMaxClassInstance, NuMaxInstance

__all__ = [
    "Instance",
    "LMNNInstance",
    "MVUInstance",
    "MVUOOSInstance",
    "MultiMetricLMNNProblem",
    "NuMaxClassInstance",
    "NuMaxInstance",
]
