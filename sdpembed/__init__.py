"""sdpembed — the reference implementation of the semidefinite programs behind learned
embeddings and metrics (NuMax, NuMax-Class, LMNN, MVU and its out-of-sample SDP), with
certificates.

Three parts meet in one place: ``formulations`` (CVXPY ground truth), ``solvers``
(hand-written algorithms) and ``validation`` (certificates and metrics).
"""

from . import datasets, formulations, linear, solvers, validation
from .estimators import NuMax, NuMaxClass
from .instances import (
    LMNNInstance,
    MVUInstance,
    MVUOOSInstance,
    NuMaxClassInstance,
    NuMaxInstance,
    load_instance,
    save_instance,
)
from .lmnn_models import LMNN, MultiMetricLMNN
from .mvu_models import MVU
from .registry import PROBLEMS, get_problem, solve
from .results import SolveResult
from .secants import all_secants, iter_secant_blocks, sample_secants
from .validation import certify

__version__ = "0.1.0"

__all__ = [
    "LMNN",
    "LMNNInstance",
    "MVU",
    "MVUInstance",
    "MVUOOSInstance",
    "MultiMetricLMNN",
    "NuMax",
    "NuMaxClass",
    "NuMaxClassInstance",
    "NuMaxInstance",
    "PROBLEMS",
    "SolveResult",
    "all_secants",
    "certify",
    "datasets",
    "formulations",
    "get_problem",
    "iter_secant_blocks",
    "linear",
    "load_instance",
    "sample_secants",
    "save_instance",
    "solve",
    "solvers",
    "validation",
    "__version__",
]
