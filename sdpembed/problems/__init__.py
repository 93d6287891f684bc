"""One module per problem, numpy only: the instance type (validation, file arrays), the operators
and their adjoints, the objective, the certified dual bound and what the CVXPY formulations
(:mod:`sdpembed.formulations`) and the hand-written solvers (:mod:`sdpembed.solvers`) share —
they import it and never each other.

``numax`` (NuMax and NuMax-Class; their secant operator in ``numax_operator``, the certificate
of their SDP in ``numax_certificate``), ``lmnn`` (LMNN and its multi-metric version), ``mvu``,
``mvu_oos`` (the out-of-sample SDP of MVU) and ``sparse_linear`` (problem (6) of the
sparse-linear-model projection). Two modules hold one function per problem by concern:
``standard_form`` (the SDP that :mod:`sdpembed.sdpa` writes) and ``suite_cases`` (the
reference suite's recipes); the registry names them on each problem's ``ProblemSpec``.

References
----------
.. [1] C. Hegde, A. C. Sankaranarayanan, W. Yin and R. G. Baraniuk, "NuMax: A convex approach for
   learning near-isometric linear embeddings", IEEE Transactions on Signal Processing 63(22),
   6109–6121, 2015. Implemented here: the SDPs (4) and (7).
.. [2] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
   Pennsylvania, 2007. Implemented here: the SDPs (2.11), (2.17), Sec. 3.1.4–3.1.11.
.. [3] I. Gkioulekas and T. Zickler, "Dimensionality reduction using the sparse linear model",
   Advances in Neural Information Processing Systems 24 (NIPS), 2011. Implemented here: problem
   (6).
"""

from .._lazy import lazy_exports

# Each name loads its module at first use (sdpembed._lazy): ``sdpembed verify`` of an MVU file
# imports the MVU module and not the LMNN or NuMax ones (DESIGN.md, "Start-up").
__getattr__, __dir__ = lazy_exports(__name__, {
    ".base": ("Instance",),
    ".lmnn": ("LMNNInstance", "MultiMetricLMNNInstance", "MultiMetricLMNNProblem"),
    ".mvu": ("MVUInstance",),
    ".mvu_oos": ("MVUOOSInstance",),
    ".numax": ("NuMaxClassInstance", "NuMaxInstance"),
})

__all__ = [
    "Instance",
    "LMNNInstance",
    "MVUInstance",
    "MVUOOSInstance",
    "MultiMetricLMNNInstance",
    "MultiMetricLMNNProblem",
    "NuMaxClassInstance",
    "NuMaxInstance",
]
