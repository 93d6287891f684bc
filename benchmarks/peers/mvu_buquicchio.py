"""Peer: a public CVXPY MVU script, ``MaximumVarianceUnfolding`` of github.com/buquicchiol/
MaximumVarianceUnfolding (``MVU.py``), on the suite's equality-MVU instances.

Get the script (it is run from its own checkout, never copied into sdpembed)::

    git clone https://github.com/buquicchiol/MaximumVarianceUnfolding /path/to/MVU
    python benchmarks/grade_peers.py --mvu-code /path/to/MVU

The script takes points and builds its own k-nearest-neighbour graph, dropping a random 20 % of the
edges; a suite instance gives the graph and the squared edge lengths instead. The thin wrapper here
keeps the script's model and solver call as they are and feeds it the instance: ``NearestNeighbors``
in the script's module is replaced by a stand-in whose ``kneighbors_graph`` is the instance's edges,
``dropout_rate=0`` keeps every edge, and the "data" handed to ``fit`` is an object whose
``data.dot(data.T)`` is G = −½ Σ_e D_e (e_i e_jᵀ + e_j e_iᵀ), so that the script's
P_ii + P_jj − 2 P_ij equals D_e on every edge — the only entries of P it reads. Only the equality
variant is the script's problem (``equation="berkley"``: maximise tr K / n − 1ᵀK1 / n² s.t. ΣK = 0,
K ⪰ 0, equal edge lengths); the other variants are skipped (exit 3). Settings: its defaults
(SCS, ``solver_tol=1e-2``, ``solver_iters=2500``) and a tighter ``solver_tol=1e-9``.

    python benchmarks/peers/mvu_buquicchio.py --code DIR [--tight] INSTANCE SOLUTION

References
----------
.. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
   Pennsylvania, 2007. MVU with equality constraints, Sec. 3.1.4.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

import numpy as np

try:
    from . import Options, Peer, Setting, script_command
except ImportError:                      # run as the graded program
    pass
try:
    from . import _npz
except ImportError:
    import _npz

URL = "https://github.com/buquicchiol/MaximumVarianceUnfolding"


def peer(options: Options) -> Peer:
    code = options.mvu_code
    missing = None
    if code is None:
        missing = f"no checkout of {URL} (git clone it and pass --mvu-code DIR)"
    elif not (Path(code) / "MVU.py").is_file():
        missing = f"{code}/MVU.py does not exist"
    elif importlib.util.find_spec("cvxpy") is None or importlib.util.find_spec("sklearn") is None:
        missing = "the script needs cvxpy and scikit-learn"
    code = str(code)
    return Peer("buquicchiol/MaximumVarianceUnfolding (CVXPY MVU script)", "mvu/equality",
                "CVXPY + SCS, the script's model",
                (Setting("defaults", "SCS, solver_tol 1e-2, solver_iters 2500",
                         script_command(options.python, "mvu_buquicchio", "--code", code)),
                 Setting("tighter", "SCS, solver_tol 1e-9, solver_iters 2500",
                         script_command(options.python, "mvu_buquicchio", "--code", code, "--tight"))),
                missing=missing)


class _Graph:
    """Stands in for scikit-learn's ``NearestNeighbors(...).fit(data)``: its graph is the instance's."""

    adjacency: np.ndarray

    def __init__(self, *args, **kwargs):
        pass

    def fit(self, data):
        return self

    def kneighbors_graph(self, data):
        return _Dense(self.adjacency)


class _Dense:
    def __init__(self, array):
        self.array = array

    def todense(self):
        return self.array


class _EdgeData:
    """``fit``'s data: ``shape[0]`` is n, and ``data.dot(data.T)`` is a Gram matrix with the instance's
    squared lengths on the edges."""

    def __init__(self, n: int, edges: np.ndarray, sqdist: np.ndarray):
        self.shape = (n, 1)
        self.gram = np.zeros((n, n))
        self.gram[edges[:, 0], edges[:, 1]] = self.gram[edges[:, 1], edges[:, 0]] = -0.5 * sqdist

    @property
    def T(self):
        return self

    def dot(self, other):
        return self.gram


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--code", required=True, help="the checkout of the MVU script")
    parser.add_argument("--tight", action="store_true")
    parser.add_argument("instance")
    parser.add_argument("solution")
    args = parser.parse_args(argv)
    inst = _npz.read_instance(args.instance)
    if inst["problem"] != "mvu" or inst["variant"] != "equality":
        _npz.skip(f"the script solves equality MVU only, not {inst['problem']} {inst.get('variant', '')}")
    spec = importlib.util.spec_from_file_location("MVU", Path(args.code) / "MVU.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    n, edges = int(inst["n"]), inst["edges"]
    _Graph.adjacency = np.zeros((n, n))
    _Graph.adjacency[edges[:, 0], edges[:, 1]] = 1.0
    script.NearestNeighbors = _Graph
    model = script.MaximumVarianceUnfolding(**({"solver_tol": 1e-9} if args.tight else {}))
    K = model.fit(_EdgeData(n, edges, inst["sqdist"]), k=1, dropout_rate=0.0)
    if K is None:
        print("the script returned no matrix", file=sys.stderr)
        return 1
    _npz.write_solution(args.solution, K=K)
    return 0


if __name__ == "__main__":
    sys.exit(main())
