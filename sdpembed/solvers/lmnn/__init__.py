"""LMNN solvers (Weinberger and Saul): the interior point on an exact working set of triplets
(``fast``: the working-set driver; ``hinge_ipm``: the interior point on a set of triplets, its Newton
steps in ``newton``, its operator in ``pair_system``), the subgradient projection of Algorithm 3
(``gradient``), the L-BFGS warm start on a smoothed hinge (``warm``), the multiplier repair at a fixed
metric (``multiplier_repair``: the dual restricted to the near-margin triplets, one Newton unknown each), its
working-set rounds (``margin_rounds``: the partition corrected at each restricted minimiser)
and the non-convex LMNN over a rectangular L for dimensionality reduction (``rectangular``, Sec. 2.1.8; not a
solver of the SDP).
"""

from .fast import RoundOptions, seed_triplets, solve_lmnn_fast, solve_multi_metric_fast
from .gradient import certify_metric, solve_lmnn_gradient
from .hinge_ipm import IPMOutcome, hinge_ipm
from .margin_rounds import margin_rounds
from .multiplier_repair import RepairOutcome, repair_multipliers, repair_rounds
from .pair_system import PairSystem
from .rectangular import RectangularLMNNResult, solve_lmnn_rectangular
from .warm import warm_start_metric

__all__ = [
    "IPMOutcome",
    "PairSystem",
    "RectangularLMNNResult",
    "RepairOutcome",
    "RoundOptions",
    "certify_metric",
    "hinge_ipm",
    "margin_rounds",
    "repair_multipliers",
    "repair_rounds",
    "seed_triplets",
    "solve_lmnn_fast",
    "solve_lmnn_gradient",
    "solve_lmnn_rectangular",
    "solve_multi_metric_fast",
    "warm_start_metric",
]
