"""sdpembed — the reference implementation of the semidefinite programs behind learned
embeddings and metrics (NuMax, NuMax-Class, LMNN, MVU and its out-of-sample SDP), with
certificates.

Three parts meet in one place: ``formulations`` (CVXPY ground truth), ``solvers``
(hand-written algorithms) and ``validation`` (certificates and metrics); both the formulations
and the solvers build on ``problems`` (one module per problem, numpy only), and ``io`` reads and
writes the files of the file contract. The estimators over them are ``linear`` (the linear maps
Ψ, NuMax and NuMax-Class among them) and ``models`` (LMNN, MultiMetricLMNN, KernelLMNN, MVU).

References
----------
.. [1] C. Hegde, A. C. Sankaranarayanan, W. Yin and R. G. Baraniuk, "NuMax: A convex approach for
   learning near-isometric linear embeddings", IEEE Transactions on Signal Processing 63(22),
   6109–6121, 2015. Implemented here: NuMax (4) and NuMax-Class (7), Algorithms 1–3.
.. [2] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
   Pennsylvania, 2007. Implemented here: LMNN (ch. 2), MVU and its out-of-sample SDP (Sec. 3.1).
.. [3] J. Błasiok and C. E. Tsourakakis, "ADAGIO: Fast data-aware near-isometric linear
   embeddings", Proceedings of the IEEE International Conference on Data Mining (ICDM), 2016.
   Implemented here: Algorithm 1.
.. [4] I. Gkioulekas and T. Zickler, "Dimensionality reduction using the sparse linear model",
   Advances in Neural Information Processing Systems 24 (NIPS), 2011. Implemented here: (7)–(9),
   (14)–(18).
.. [5] J. Luo, K. Shapiro, H.-J. M. Shi, Q. Yang and K. Zhu, "Practical algorithms for learning
   near-isometric linear embeddings", SIAM Undergraduate Research Online 9, 2016
   (arXiv:1601.00062). Implemented here: FroMax, NILE-Pro, Algorithms 1–4.
"""

from ._lazy import lazy_exports
from ._version import __version__

# Every name loads at its first use (sdpembed._lazy): ``import sdpembed``, ``sdpembed --help`` and
# ``sdpembed verify`` import neither scikit-learn (the estimators) nor CVXPY (the formulations).
__getattr__, __dir__ = lazy_exports(__name__, {
    ".io": ("load_instance", "save_instance"),
    ".linear": ("LINEAR_METHODS", "NuMax", "NuMaxClass", "embed"),
    ".models": ("KernelLMNN", "LMNN", "MVU", "MultiMetricLMNN"),
    ".problems": ("LMNNInstance", "MVUInstance", "MVUOOSInstance", "MultiMetricLMNNInstance",
                  "NuMaxClassInstance", "NuMaxInstance"),
    ".registry": ("PROBLEMS", "get_problem", "solve"),
    ".results": ("SolveResult",),
    ".secants": ("all_secants", "iter_secant_blocks", "sample_secants"),
    ".validation": ("certify", "isometry_curve"),
}, submodules=("datasets", "formulations", "linear", "models", "solvers", "validation"))

__all__ = [
    "KernelLMNN",
    "LINEAR_METHODS",
    "LMNN",
    "LMNNInstance",
    "MVU",
    "MVUInstance",
    "MVUOOSInstance",
    "MultiMetricLMNN",
    "MultiMetricLMNNInstance",
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
