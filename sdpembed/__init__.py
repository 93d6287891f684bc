"""sdpembed — the reference implementation of the semidefinite programs behind learned
embeddings and metrics (NuMax, NuMax-Class, LMNN, MVU and its out-of-sample SDP), with
certificates.

Three parts meet in one place: ``formulations`` (CVXPY ground truth), ``solvers``
(hand-written algorithms) and ``validation`` (certificates and metrics); both the formulations
and the solvers build on ``problems`` (one module per problem, numpy only), and ``io`` reads and
writes the files of the file contract. The estimators over them are ``linear`` (the linear maps
Ψ, NuMax and NuMax-Class among them) and ``models`` (LMNN, MultiMetricLMNN, MVU).
"""

from . import datasets, linear, validation
from ._version import __version__
from .io import load_instance, save_instance
from .linear import LINEAR_METHODS, NuMax, NuMaxClass, embed
from .problems import LMNNInstance, MVUInstance, MVUOOSInstance, NuMaxClassInstance, NuMaxInstance
from .registry import PROBLEMS, get_problem, solve
from .results import SolveResult
from .secants import all_secants, iter_secant_blocks, sample_secants
from .validation import certify, isometry_curve

#: Names loaded on first use: the formulations and the models built on them import CVXPY, and the
#: solvers are not needed to read, check or grade solution files, which never import CVXPY
#: (sdpembed.validation.verify, ``sdpembed verify`` on an instance with a stored optimum).
_LAZY = {"formulations": "formulations", "solvers": "solvers", "models": "models", "LMNN": "models",
         "MultiMetricLMNN": "models", "MVU": "models"}


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    module = import_module(f".{_LAZY[name]}", __name__)
    value = module if name == _LAZY[name] else getattr(module, name)
    globals()[name] = value
    return value

__all__ = [
    "LINEAR_METHODS",
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
    "embed",
    "formulations",
    "get_problem",
    "isometry_curve",
    "iter_secant_blocks",
    "linear",
    "models",
    "load_instance",
    "sample_secants",
    "save_instance",
    "solve",
    "solvers",
    "validation",
    "__version__",
]
