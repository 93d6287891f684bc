"""Peer: pylmnn 1.6.4's ``LargeMarginNearestNeighbor`` on the suite's LMNN instances, in the peers'
virtualenv.

Parameters as documented by pylmnn: ``n_neighbors`` = the instance's k; ``weight_push_loss`` = μ,
because pylmnn weights the pull term by (1 − w)/w relative to a push weight of 1, i.e. in
proportion (1 − w)·pull + w·push, as (2.11) weights them by 1 − μ and μ. pylmnn minimises its loss
over L by L-BFGS-B from a PCA start and chooses its own target neighbours; the solution is M = LᵀL.
Settings: its defaults (``max_iter=50``, ``tol=1e-5``) and a tighter one (``max_iter=1000``,
``tol=1e-9``). The package's ``__init__`` imports GPyOpt (for its hyper-parameter search only),
which the peers' environment leaves out, so ``pylmnn/lmnn.py`` is loaded by path.

    /work/peers-venv/bin/python benchmarks/peers/pylmnn_lmnn.py [--tight] INSTANCE SOLUTION

References
----------
.. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
   Pennsylvania, 2007. The LMNN SDP (2.11).
.. [2] K. Q. Weinberger and L. K. Saul, "Distance metric learning for large margin nearest neighbor
   classification", Journal of Machine Learning Research 10, 207–244, 2009.
"""

from __future__ import annotations

import sys

try:
    from . import Options, Peer, Setting, script_command, venv_missing
except ImportError:                      # run as the graded program, in the peers' virtualenv
    pass

TIGHT = {"max_iter": 1000, "tol": 1e-9}
VERSION = "1.6.4"


def peer(options: Options) -> Peer:
    python, missing = venv_missing(options.peers_venv, "pylmnn")
    return Peer(f"pylmnn {VERSION}", "lmnn", "L-BFGS-B on L (pylmnn)",
                (Setting("defaults", "max_iter 50, tol 1e-5", script_command(python, "pylmnn_lmnn")),
                 Setting("tighter", "max_iter 1000, tol 1e-9", script_command(python, "pylmnn_lmnn", "--tight"))),
                missing=missing)


def load_class():
    """pylmnn's estimator class, loaded from ``pylmnn/lmnn.py`` without the package ``__init__``."""
    import importlib.util
    import types
    from pathlib import Path

    folder = importlib.util.find_spec("pylmnn").submodule_search_locations[0]
    package = types.ModuleType("pylmnn")
    package.__path__ = [folder]
    sys.modules["pylmnn"] = package
    spec = importlib.util.spec_from_file_location("pylmnn.lmnn", Path(folder) / "lmnn.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["pylmnn.lmnn"] = module
    spec.loader.exec_module(module)
    return module.LargeMarginNearestNeighbor


def estimator(inst: dict, tight: bool):
    return load_class()(n_neighbors=inst["targets"].shape[1], weight_push_loss=inst["mu"], random_state=0,
                        **(TIGHT if tight else {}))


if __name__ == "__main__":
    from metric_learn_lmnn import fit_and_write

    sys.exit(fit_and_write(sys.argv[1:], estimator))
