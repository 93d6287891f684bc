"""Adapters that let `benchmarks/grade_peers.py` grade public implementations with the reference suite.

One module per peer. Each module is two things:

* imported by ``grade_peers.py`` (numpy and the standard library at import time): ``peer(options)`` returns a
  :class:`Peer` (or a list of them) — the suite problems it handles, the settings it is graded at (its authors'
  defaults and, where documented, one tighter setting), each as a ``sdpembed suite run`` command
  template with ``{instance}`` and ``{solution}``, and why it cannot run here (``missing``), if so;
* run as a script by that command, in whatever environment the peer needs: it reads the instance
  file, calls the peer through its documented interface, and writes the solution file (``_npz``).

A peer that is not installed is a *not run* row, never a failure.
"""

from __future__ import annotations

import importlib
import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent

# the adapters, in the order of the table
ADAPTERS = ("numax_octave", "metric_learn_lmnn", "pylmnn_lmnn", "mvu_buquicchio", "cvxpy_models")


@dataclass(frozen=True)
class Setting:
    """One way of running a peer: ``command`` is a ``sdpembed suite run --command`` template."""

    name: str
    description: str
    command: str


@dataclass(frozen=True)
class Peer:
    """A public implementation and how to grade it (``missing``: why it cannot run here, or None)."""

    name: str
    problems: str
    description: str
    settings: tuple[Setting, ...] = field(default_factory=tuple)
    missing: str | None = None
    timeout: float = 600.0


@dataclass(frozen=True)
class Options:
    """Where the peers are: the peers' virtualenv, the NuMax authors' code, the MVU script, and the
    Python that runs the adapters needing only numpy/scipy/CVXPY (the current one by default)."""

    python: str
    peers_venv: str = "/work/peers-venv"
    numax_code: str | None = None
    mvu_code: str | None = None
    octave: str = "octave"


def script_command(python: str, adapter: str, *args: str) -> str:
    """``PYTHON benchmarks/peers/ADAPTER.py ARGS... {instance} {solution}``, quoted for ``shlex``."""
    parts = [python, str(HERE / f"{adapter}.py"), *args]
    return " ".join(shlex.quote(part) for part in parts) + " {instance} {solution}"


def venv_missing(venv: str, *modules: str) -> tuple[str, str | None]:
    """(the venv's python, why it cannot run ``modules`` or None), without importing them here."""
    import subprocess

    python = str(Path(venv) / "bin" / "python")
    if not Path(python).exists():
        return python, f"{python} does not exist (recipe: benchmarks/peers_requirements.txt)"
    probe = subprocess.run([python, "-c", f"import importlib.util as u; assert all(map(u.find_spec, {modules!r}))"],
                           capture_output=True, text=True)
    return python, None if probe.returncode == 0 else f"{' or '.join(modules)} is not installed in {venv}"


def blas_architecture() -> str | None:
    """The CPU kernel set numpy's OpenBLAS chose in this process (threadpoolctl's ``architecture``), or None.

    numpy's own library is preferred: other wheels loaded by then bring OpenBLAS builds of their own (SCS's
    0.3.15 runs its generic kernels on a CPU it does not know)."""
    from threadpoolctl import threadpool_info

    libraries = [info for info in threadpool_info() if info.get("internal_api") == "openblas"]
    numpy_own = [info for info in libraries if "numpy" in str(info.get("filepath", ""))]
    return next((info.get("architecture") for info in numpy_own or libraries), None)


def peer_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """A copy of ``env`` (default: this process's environment) in which a peer's OpenBLAS uses our kernels.

    OpenBLAS picks its kernels by the CPU model it recognises, and an older build (numpy 1.26's 0.3.23, in
    the peers' virtualenv) falls back to its generic "Prescott" kernels on a CPU it does not know, which
    would time the peer's BLAS rather than its algorithm. ``OPENBLAS_CORETYPE`` set to the kernel set our
    OpenBLAS chose puts both on the same footing; a value the caller set is kept.
    """
    env = dict(os.environ if env is None else env)
    architecture = blas_architecture()
    if architecture and "OPENBLAS_CORETYPE" not in env:
        env["OPENBLAS_CORETYPE"] = architecture
    return env


def load_peers(options: Options, names: list[str] | None = None) -> list[Peer]:
    """Every adapter's :class:`Peer` (or only those named), in the order of :data:`ADAPTERS`."""
    chosen = ADAPTERS if names is None else [name for name in ADAPTERS if name in names]
    peers = []
    for name in chosen:
        found = importlib.import_module(f"{__name__}.{name}").peer(options)
        peers += found if isinstance(found, list) else [found]
    return peers
