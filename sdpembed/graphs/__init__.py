"""Graphs over the input points: LMNN's target neighbours and impostors, MVU's neighbourhood graph.

* :mod:`sdpembed.graphs.targets` — target neighbours, triplets, hinges and impostors of LMNN
  (thesis Sec. 2.1.2, (2.4)–(2.11)).
* :mod:`sdpembed.graphs.balltree` — the same target neighbours and active hinges found with ball
  trees (Sec. 2.1.8, (2.19)–(2.20)).
* :mod:`sdpembed.graphs.common` — the checks of labels, target neighbours and metrics, and the
  helpers both searches share (so that they see the same inputs and decide by the same formula).
* :mod:`sdpembed.graphs.neighborhood` — the kNN graph with angle edges of MVU (Table 3.1),
  connectivity and its linking procedure, bad-edge detection (Sec. 3.1.12), graph Laplacians, and
  the k nearest training inputs of new inputs for the out-of-sample extension (Sec. 3.1.10).
* :mod:`sdpembed.graphs.lle` — LLE's reconstruction weights and its matrix (I − W)ᵀ(I − W), the
  alternative basis of variational MVU (Sec. 3.1.8) and the out-of-sample baseline of Sec. 3.1.10.

Every name is re-exported here: ``from sdpembed.graphs import neighborhood_graph``.

References
----------
.. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
   Pennsylvania, 2007. Implemented here: (2.4)–(2.11) of Sec. 2.1.2, (2.19)–(2.20) of Sec. 2.1.8,
   Table 3.1 and Sec. 3.1.12.
"""

from .balltree import balltree_hinges, balltree_target_neighbors
from .common import check_labels, check_targets
from .lle import lle_matrix, lle_weights
from .neighborhood import (
    bad_edges,
    canonical_edges,
    check_connected,
    check_edges,
    connected_components,
    edge_scores,
    edge_sqdist,
    graph_laplacian,
    knn_indices,
    link_components,
    neighborhood_graph,
    neighbour_arrays,
)
from .targets import (
    ACCUMULATION_BLOCK,
    BLOCK_ELEMENTS,
    all_triplets,
    float32_test_unit,
    impostor_triplets,
    iter_hinges,
    nearest_impostors,
    pull_matrix,
    radius_hinge_scan,
    radius_hinges,
    target_neighbors,
    triplet_count,
)

__all__ = [
    "ACCUMULATION_BLOCK",
    "BLOCK_ELEMENTS",
    "all_triplets",
    "bad_edges",
    "balltree_hinges",
    "balltree_target_neighbors",
    "canonical_edges",
    "check_connected",
    "check_edges",
    "check_labels",
    "check_targets",
    "connected_components",
    "edge_scores",
    "edge_sqdist",
    "float32_test_unit",
    "graph_laplacian",
    "impostor_triplets",
    "iter_hinges",
    "knn_indices",
    "link_components",
    "lle_matrix",
    "lle_weights",
    "nearest_impostors",
    "neighborhood_graph",
    "neighbour_arrays",
    "pull_matrix",
    "radius_hinge_scan",
    "radius_hinges",
    "target_neighbors",
    "triplet_count",
]
