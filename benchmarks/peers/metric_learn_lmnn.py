"""Peer: metric-learn 0.7.0's ``LMNN`` on the suite's LMNN instances, in the peers' virtualenv.

Parameters as documented by metric-learn: ``n_neighbors`` = the instance's k (``targets.shape[1]``);
``regularization`` = 1 − μ, because metric-learn weights the *pull* term by ``regularization`` and the
push (hinge) term by 1 − ``regularization`` (its ``_loss_grad``: ``G = dfG * reg + df * (1 - reg)``
with ``dfG`` the target neighbours' outer products), while the thesis's (2.11) weights the pull by
1 − μ and the push by μ. metric-learn picks its own target neighbours (same-class Euclidean nearest
neighbours, like the suite's recipe) and returns L; the solution is M = LᵀL. Settings: its defaults
(``learn_rate=1e-7``, ``convergence_tol=1e-3``, ``max_iter=1000``) and a tighter one
(``convergence_tol=1e-9``, ``max_iter=10000``).

    /work/peers-venv/bin/python benchmarks/peers/metric_learn_lmnn.py [--tight] INSTANCE SOLUTION

References
----------
.. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
   Pennsylvania, 2007. The LMNN SDP (2.11).
.. [2] W. de Vazelhes, C. J. Carey, Y. Tang, N. Vauquier and A. Bellet, "metric-learn: Metric
   learning algorithms in Python", Journal of Machine Learning Research 21(138), 1–6, 2020.
"""

from __future__ import annotations

import sys

try:
    from . import Options, Peer, Setting, script_command, venv_missing
except ImportError:                      # run as the graded program, in the peers' virtualenv
    pass

TIGHT = {"convergence_tol": 1e-9, "max_iter": 10000}
VERSION = "0.7.0"


def peer(options: Options) -> Peer:
    python, missing = venv_missing(options.peers_venv, "metric_learn")
    return Peer(f"metric-learn {VERSION} LMNN", "lmnn", "gradient descent on L (metric-learn)",
                (Setting("defaults", "learn_rate 1e-7, convergence_tol 1e-3, max_iter 1000",
                         script_command(python, "metric_learn_lmnn")),
                 Setting("tighter", "convergence_tol 1e-9, max_iter 10000",
                         script_command(python, "metric_learn_lmnn", "--tight"))),
                missing=missing)


def fit_and_write(argv: list[str], estimator) -> int:
    """``[--tight] INSTANCE SOLUTION``: fit ``estimator(instance, tight)`` (an LMNN learning L) on the
    instance's points and write M = LᵀL; other problems are skipped."""
    import warnings

    import _npz

    tight = "--tight" in argv
    instance, solution = [a for a in argv if a != "--tight"]
    inst = _npz.read_instance(instance)
    if inst["problem"] != "lmnn":
        _npz.skip(f"problem {inst['problem']!r}")
    warnings.simplefilter("ignore")
    model = estimator(inst, tight)
    model.fit(inst["X"], inst["y"])
    L = model.components_
    _npz.write_solution(solution, M=L.T @ L)
    return 0


def estimator(inst: dict, tight: bool):
    from metric_learn import LMNN

    return LMNN(n_neighbors=inst["targets"].shape[1], regularization=1.0 - inst["mu"], random_state=0,
                **(TIGHT if tight else {}))


if __name__ == "__main__":
    sys.exit(fit_and_write(sys.argv[1:], estimator))
