"""The stored suite: its manifest, the instance files it lists, and their content hashes.

The suite (version :data:`SUITE_VERSION`) ships with the package in ``sdpembed/data/suite/``: one
compressed instance file per case of :func:`~sdpembed.validation.suite.build.suite_cases` — the
file contract of DESIGN.md, with the certified ``optimum`` stored in the file — and
``manifest.json`` (:data:`MANIFEST`), which records for each instance its optimum, the best
certified dual bound, the two solvers that certified it
(:data:`~sdpembed.validation.suite.optimum.CERTIFIERS`), their settings, statuses, objectives and
agreement, any certifier that was tried and did not end ``optimal``, a content hash of the file,
and the tolerances that define "pass". :func:`load_suite` reads it; :func:`manifest_document` is
what :func:`~sdpembed.validation.suite.build.build_suite` writes.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from ...io import instance_from_arrays, read_npz
from ...registry import PROBLEMS, get_problem
from ..certify import Tolerances
from .optimum import AGREEMENT_TOL, GAP_TOL, relative_difference

__all__ = [
    "MANIFEST",
    "SUITE_VERSION",
    "Suite",
    "SuiteEntry",
    "content_hash",
    "default_suite_dir",
    "load_suite",
    "manifest_document",
]

#: Version of the suite's instances and optima; bumped whenever an instance or its recipe changes.
SUITE_VERSION = "2"

#: The manifest's file name in a suite directory.
MANIFEST = "manifest.json"


def default_suite_dir() -> Path:
    """The directory of the suite shipped with the package (``sdpembed/data/suite``)."""
    return Path(str(resources.files("sdpembed.data") / "suite"))


def content_hash(arrays: dict[str, np.ndarray]) -> str:
    """SHA-256 of the arrays of a file (names, dtypes, shapes, bytes; order-independent).

    Hashing contents rather than the ``.npz`` bytes makes the hash independent of the zip
    container's time stamps.
    """
    digest = hashlib.sha256()
    for key in sorted(arrays):
        value = np.ascontiguousarray(arrays[key])
        digest.update(f"{key}|{value.dtype.str}|{value.shape}|".encode())
        digest.update(value.tobytes())
    return digest.hexdigest()


@dataclass(frozen=True)
class SuiteEntry:
    """One instance of a stored suite (a record of its manifest)."""

    name: str
    problem: str
    group: str
    size: str
    description: str
    path: Path
    sha256: str
    optimum: float
    dual_bound: float
    certified_gap: float
    agreement: float
    dim: int
    n_constraints: int
    certifiers: tuple[dict[str, Any], ...] = ()

    def load(self) -> Any:
        """The instance (with its stored optimum), after checking the file against the manifest's hash."""
        arrays = read_npz(self.path, "suite instance")
        if content_hash(arrays) != self.sha256:
            raise ValueError(f"suite instance {self.path} does not match the manifest (content hash differs): "
                             "the file was modified; reinstall sdpembed or rebuild the suite")
        instance = instance_from_arrays(arrays)                       # the file is read once
        if instance.optimum is None or relative_difference(instance.optimum, self.optimum) > 0.0:
            raise ValueError(f"suite instance {self.path} does not store the manifest's optimum {self.optimum!r}")
        return instance


@dataclass(frozen=True)
class Suite:
    """A stored suite: its version, directory, tolerances and entries (manifest order)."""

    version: str
    directory: Path
    tolerances: Tolerances
    entries: tuple[SuiteEntry, ...]

    def select(self, problems: Sequence[str] | None = None, names: Sequence[str] | None = None) -> list[SuiteEntry]:
        """The entries whose problem or group is in ``problems`` (e.g. ``numax``, ``mvu``, ``mvu/slack``)
        and whose name matches one of the shell patterns ``names`` (all when None).

        Raises
        ------
        ValueError
            If a requested problem or group has no instance in the suite.
        """
        if problems:
            known = {e.problem for e in self.entries} | {e.group for e in self.entries}
            unknown = sorted(set(problems) - known)
            if unknown:
                raise ValueError(f"no suite instances for {unknown}; problems and groups: {sorted(known)}")
        return [e for e in self.entries
                if (not problems or e.problem in problems or e.group in problems)
                and (not names or any(fnmatch.fnmatchcase(e.name, pattern) for pattern in names))]


def load_suite(directory: str | os.PathLike | None = None) -> Suite:
    """Read the manifest of the suite in ``directory`` (default: the shipped one).

    Raises
    ------
    ValueError
        If the manifest is missing or malformed, or names a problem that is not registered.
    """
    directory = Path(directory) if directory is not None else default_suite_dir()
    try:
        manifest = json.loads((directory / MANIFEST).read_text())
    except FileNotFoundError:
        raise ValueError(f"no reference suite in {directory} (missing {MANIFEST}); build one with "
                         "'sdpembed suite build --out DIR'") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{directory / MANIFEST} is not valid JSON: {exc}") from None
    try:
        tolerances = Tolerances(**manifest["tolerances"])
        entries = []
        for record in manifest["instances"]:
            if record["problem"] not in PROBLEMS:     # its name alone: the spec loads with the instance
                get_problem(record["problem"])
            entries.append(SuiteEntry(
                name=record["name"], problem=record["problem"], group=record["group"], size=record["size"],
                description=record["description"], path=directory / record["file"], sha256=record["sha256"],
                optimum=float(record["optimum"]), dual_bound=float(record["dual_bound"]),
                certified_gap=float(record["certified_gap"]), agreement=float(record["agreement"]),
                dim=int(record["dim"]), n_constraints=int(record["n_constraints"]),
                certifiers=tuple(record["certifiers"]),
            ))
        return Suite(str(manifest["version"]), directory, tolerances, tuple(entries))
    except (KeyError, TypeError) as exc:
        raise ValueError(f"{directory / MANIFEST} is not a suite manifest: missing or bad field {exc}") from None


def manifest_document(entries: list[dict[str, Any]], tolerances: Tolerances) -> dict[str, Any]:
    """The manifest of a suite: its version, tolerances, what was used to build it, and ``entries``."""
    from ..._version import __version__

    return {
        "suite": "sdpembed reference suite: SDP instances with certified optima",
        "version": SUITE_VERSION,
        "sdpembed_version": __version__,
        "files": "one .npz instance file per entry (DESIGN.md / README file contract), its certified optimum stored "
                 "as 'optimum'; optima in the registry's sense (MVU maximises, min_trace as max -tr K)",
        "tolerances": asdict(tolerances),
        "tolerance_meaning": {
            "objective": "|f - f*| / max(|f*|, u_f), u_f the instance's objective unit (1; mvu: the power of two "
                         "2^k <= tau; mvu_oos: 2^k <= max D)",
            "feasibility": "worst constraint violation as each instance type measures it (numax, numax_class: "
                           "|v'Pv - bound| on unit secants; mvu: relative to tau = max D, with the centering "
                           "|sum K| / n^2 and the asymmetry; mvu_oos: |S[:r,:r] - I| and asymmetry; lmnn: none)",
            "psd": "max(0, -lambda_min) / max(u_X, lambda_max), u_X the instance's matrix unit (1; mvu: 2^k <= tau; "
                   "lmnn: 2^-k for 2^k <= the bound on the squared distances); the asymmetry max |X - X'| / "
                   "max(u_X, max |X|) is held to the feasibility tolerance",
        },
        "agreement_tolerance": AGREEMENT_TOL,
        "gap_tolerance": GAP_TOL,
        "certifiers": "two independent solvers that each ended 'optimal', the CVXPY ground truth first, with their "
                      "settings; 'rejected_certifiers': the runs tried that did not (never counted)",
        "built_with": _versions(),
        "instances": entries,
    }


def _versions() -> dict[str, str]:
    """Versions of Python and of the packages whose numbers the optima come from."""
    import platform
    from importlib import metadata

    versions = {"python": platform.python_version()}
    for package in ("numpy", "scipy", "cvxpy", "clarabel", "scs"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = "not installed"
    return versions
