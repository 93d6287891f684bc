"""The estimators that are not linear maps Ψ: :class:`~sdpembed.models.lmnn.LMNN` and
:class:`~sdpembed.models.lmnn.MultiMetricLMNN` (a Mahalanobis metric, or one per class, with kNN
classification), :class:`~sdpembed.models.kernel_lmnn.KernelLMNN` (LMNN in a kernel's feature space)
and :class:`~sdpembed.models.mvu.MVU` (a nonlinear
embedding). The linear maps, NuMax and NuMax-Class among them, are in :mod:`sdpembed.linear`.

The estimators solve through the registry, which loads a CVXPY formulation only when
``method="cvxpy"`` asks for it; ``sdpembed`` loads this package lazily all the same (it is not
needed to read, check or grade solution files).

References
----------
.. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
   Pennsylvania, 2007. Implemented here: LMNN (ch. 2; its kernel version, Sec. 2.1.8), MVU (Sec. 3.1).
"""

from .kernel_lmnn import KernelLMNN
from .lmnn import LMNN, MultiMetricLMNN
from .mvu import MVU

__all__ = ["KernelLMNN", "LMNN", "MVU", "MultiMetricLMNN"]
