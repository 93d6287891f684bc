"""The reference suite: instances with certified optima, and the grading of other implementations.

The suite (version :data:`SUITE_VERSION`) ships with the package in ``sdpembed/data/suite/``: one
compressed instance file per case of :func:`suite_cases` — the file contract of
DESIGN.md, with the certified ``optimum`` stored in the file — and ``manifest.json``, which
records for each instance its optimum, the best certified dual bound, the two solvers that
certified it (normally CVXPY/Clarabel, the ground truth, and the problem's default hand-written
solver; :data:`CERTIFIERS`), their settings, statuses, objectives and agreement, any certifier
that was tried and did not end ``optimal``, a content hash of the file, and the tolerances that
define "pass".

* :func:`build_suite` regenerates every instance from its recipe, certifies it again and compares
  with the stored suite: it fails when the data changed or a stored optimum no longer agrees.
* :func:`run_suite` runs an external program on every instance (``CMD {instance} {solution}``),
  grades each solution file with the numpy-only verifier (:mod:`sdpembed.validation.verify`) and
  reports crashes, timeouts, skips (exit code :data:`SKIP_EXIT_CODE`) and missing or malformed
  solutions per instance. Whatever the program does or leaves running, the run goes on, and no
  process of the program outlives its instance, nor an interrupted run (:class:`SuiteInterrupted`).

**Certified optimum.** An instance enters the suite only when two independent solvers end
``optimal`` (each judged by its own certificate, never the solver's word; a run that ends
``inaccurate`` is never counted), their objectives agree to :data:`AGREEMENT_TOL` relative to
max(|f*|, 1), and the best dual bound they built is within :data:`GAP_TOL` of the stored optimum
(the objective of the CVXPY certifier, Clarabel's unless it had to be replaced by SCS). The
certifiers of :data:`CERTIFIERS` are tried in order until two have ended ``optimal``, so a
release of one solver that ends ``inaccurate`` on an instance does not stop its certification.
The agreement tolerance is a tenth of the objective tolerance of a pass (1e-4), so a correct
implementation cannot fail for the uncertainty of the reference.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from .._files import atomic_write
from .._progress import progress_bar
from ..io import instance_from_arrays, read_npz, save_instance, solution_from_arrays
from ..problems.suite_cases import SIZES, SuiteCase
from ..registry import PROBLEMS, get_problem
from .certify import Tolerances, format_against
from .verify import verify_solution

__all__ = [
    "AGREEMENT_TOL",
    "GAP_TOL",
    "SUITE_VERSION",
    "BuildRecord",
    "CERTIFIERS",
    "Certifier",
    "RunRecord",
    "RunSummary",
    "SKIP_EXIT_CODE",
    "Suite",
    "SuiteEntry",
    "SuiteInterrupted",
    "build_suite",
    "certify_optimum",
    "content_hash",
    "default_suite_dir",
    "format_build_table",
    "format_run_table",
    "load_suite",
    "run_suite",
    "suite_cases",
    "summarize_run",
]

#: Version of the suite's instances and optima; bumped whenever an instance or its recipe changes.
SUITE_VERSION = "1"

#: Largest relative disagreement max(|f₁ − f₂|) / max(|f*|, 1) between the certifying solvers, and
#: between a rebuilt optimum and the stored one.
AGREEMENT_TOL = 1e-5

#: Largest certified relative gap |f* − best dual bound| / max(|f*|, 1) of a stored optimum.
GAP_TOL = 1e-5

MANIFEST = "manifest.json"

#: Clarabel's settings for the suite: its KKT solves refined to 1e-15 (default 1e-13 relative, 1e-12
#: absolute, at most 10 steps). With the defaults Clarabel 0.11.1 (CVXPY 1.9.3) ended two MVU instances
#: ``AlmostSolved``: on mvu-inequality-swiss40 the primal residual of the last iterates jumped from 8e-9
#: to 1.8e-3, on mvu-equality-scurve28-angles (no interior point: the largest least eigenvalue of a
#: feasible K on 1⊥ is 0 to within 4e-10·τ) the step length fell to 0 at a relative gap of 1.7e-8
#: against the tolerance 1e-8. Refined, both end ``Solved`` (as all 40 instances do), at no measurable cost.
CLARABEL_SETTINGS: dict[str, Any] = {
    "iterative_refinement_reltol": 1e-15, "iterative_refinement_abstol": 1e-15, "iterative_refinement_max_iter": 50,
}

#: SCS's settings when it certifies: eps 1e-9 (at its default 1e-4 it is no check of a 1e-5 agreement).
SCS_SETTINGS: dict[str, Any] = {"eps_abs": 1e-9, "eps_rel": 1e-9, "max_iters": 200_000}

#: The certifiers of an optimum, (method, solver, settings), tried in this order until two independent
#: solvers have ended ``optimal``: CVXPY/Clarabel (the ground truth), the problem's default hand-written
#: method (``method`` None), and CVXPY/SCS, an independent ground truth used only when one of the first two
#: did not end ``optimal`` (a solver release that ends ``inaccurate``, say).
CERTIFIERS: tuple[tuple[str | None, str | None, dict[str, Any]], ...] = (
    ("cvxpy", "CLARABEL", CLARABEL_SETTINGS),
    (None, None, {}),
    ("cvxpy", "SCS", SCS_SETTINGS),
)

#: Relative tolerance of the comparison of regenerated instance data with the stored files (the
#: generators are deterministic; this only absorbs last-bit differences between BLAS builds).
DATA_RTOL = 1e-10

#: Outcomes of grading one instance in :func:`run_suite`.
RESULTS = ("pass", "fail", "crash", "timeout", "no solution", "bad solution", "skip")

#: Exit code by which a graded program says it does not handle an instance: graded ``skip``, not ``crash``.
SKIP_EXIT_CODE = 3


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


def _relative(a: float, reference: float) -> float:
    return abs(a - reference) / max(abs(reference), 1.0)


# ---------------------------------------------------------------------------- certification
@dataclass(frozen=True)
class Certifier:
    """One solver's certificate of an instance's optimum."""

    method: str
    solver: str
    status: str
    objective: float
    dual_bound: float
    relative_gap: float
    max_violation: float
    min_eigenvalue: float
    wall_time: float
    message: str = ""
    settings: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CertifiedOptimum:
    """An instance's optimum as certified by :func:`certify_optimum`.

    ``certifiers`` are the runs that ended ``optimal``, the CVXPY ground truth first, and
    ``rejected`` those that did not (never counted). ``optimum`` is the first certifier's objective
    (the first rejected run's when none ended ``optimal``); ``dual_bound`` the best bound of the
    certifiers (a lower bound for minimisations, an upper bound for MVU); ``certified_gap`` their
    signed relative distance (negative only within rounding); ``agreement`` the relative spread of
    the certifiers' objectives; ``certified`` whether all the conditions of the module docstring hold.
    """

    optimum: float
    dual_bound: float
    certified_gap: float
    agreement: float
    certifiers: tuple[Certifier, ...]
    certified: bool
    reasons: tuple[str, ...] = ()
    rejected: tuple[Certifier, ...] = ()


def _certifier(instance: Any, method: str, solver: str | None, settings: dict[str, Any]) -> Certifier:
    spec = get_problem(instance.problem)
    if method == "cvxpy":
        result = spec.cvxpy(instance, solver=solver, **settings)
    else:
        result = spec.methods[method](instance, **settings)
    return Certifier(
        method=method, solver=result.solver, status=result.status, objective=float(result.objective),
        dual_bound=float(result.dual_bound), relative_gap=float(result.relative_gap),
        max_violation=float(result.max_violation), min_eigenvalue=float(result.min_eigenvalue),
        wall_time=float(result.wall_time), message=result.message, settings=dict(settings),
    )


def _run_certifiers(instance: Any) -> tuple[list[Certifier], list[Certifier]]:
    """The runs of :data:`CERTIFIERS` until two have ended ``optimal``: (optimal ones, the others)."""
    spec = get_problem(instance.problem)
    optimal: list[Certifier] = []
    rejected: list[Certifier] = []
    for method, solver, settings in CERTIFIERS:
        if len(optimal) == 2:
            break
        method = method or (spec.default_method(instance) if spec.methods else None)
        if method is None:                                            # no hand-written solver
            continue
        run = _certifier(instance, method, solver, settings)
        (optimal if run.status == "optimal" else rejected).append(run)
    optimal.sort(key=lambda c: c.method != "cvxpy")                   # the ground truth first (stable)
    return optimal, rejected


def certify_optimum(instance: Any) -> CertifiedOptimum:
    """Certify the optimum of ``instance`` by two independent solvers (:data:`CERTIFIERS`).

    CVXPY/Clarabel and the problem's default hand-written solver (the one ``sdpembed solve``
    runs); CVXPY/SCS replaces whichever of them did not end ``optimal``. See the module
    docstring for when the result counts as certified.
    """
    optimal, rejected = _run_certifiers(instance)
    pool = optimal or rejected
    optimum = pool[0].objective
    sign = 1.0 if get_problem(instance.problem).sense == "min" else -1.0
    bounds = [sign * c.dual_bound for c in pool if np.isfinite(c.dual_bound)]
    bound = sign * max(bounds) if bounds else float("nan")
    gap = sign * (optimum - bound) / max(abs(optimum), 1.0) if bounds else float("nan")
    agreement = max(_relative(c.objective, optimum) for c in pool) if np.isfinite(optimum) else float("nan")
    reasons = []
    if len(optimal) < 2:
        reasons.append(f"{len(optimal)} solver(s) ended 'optimal', two independent ones are needed: " + "; ".join(
            f"{c.method}/{c.solver} ended {c.status!r}: {c.message}" for c in rejected))
    if not agreement <= AGREEMENT_TOL:
        reasons.append(f"the certifiers disagree: relative spread {agreement:.2e} > {AGREEMENT_TOL:g} "
                       f"({', '.join(f'{c.solver} {c.objective!r}' for c in pool)})")
    if not abs(gap) <= GAP_TOL:
        reasons.append(f"the certified relative gap {gap:.2e} is not within {GAP_TOL:g} (bound {bound!r})")
    return CertifiedOptimum(optimum, bound, gap, agreement, tuple(optimal), not reasons, tuple(reasons),
                            tuple(rejected))


# -------------------------------------------------------------------------------- the suite
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
        if instance.optimum is None or _relative(instance.optimum, self.optimum) > 0.0:
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


def _manifest(entries: list[dict[str, Any]], tolerances: Tolerances) -> dict[str, Any]:
    from .._version import __version__

    return {
        "suite": "sdpembed reference suite: SDP instances with certified optima",
        "version": SUITE_VERSION,
        "sdpembed_version": __version__,
        "files": "one .npz instance file per entry (DESIGN.md / README file contract), its certified optimum stored "
                 "as 'optimum'; optima in the registry's sense (MVU maximises, min_trace as max -tr K)",
        "tolerances": asdict(tolerances),
        "tolerance_meaning": {
            "objective": "|f - f*| / max(|f*|, 1)",
            "feasibility": "worst constraint violation as each instance type measures it (numax, numax_class: "
                           "|v'Pv - bound| on unit secants; mvu: relative to tau = max D, with the centering "
                           "|sum K| / n^2 and the asymmetry; mvu_oos: |S[:r,:r] - I| and asymmetry; lmnn: none)",
            "psd": "max(0, -lambda_min) / max(1, lambda_max)",
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


# ------------------------------------------------------------------------------------ build
def suite_cases() -> list[SuiteCase]:
    """Every case of the suite, problem by problem in the registry's order: the recipes of each
    problem are the ``suite_cases`` of its :class:`~sdpembed.registry.ProblemSpec`
    (:mod:`sdpembed.problems.suite_cases`).

    Raises
    ------
    ValueError
        If a registered problem has no recipes (or a case names an unregistered problem).
    """
    missing = [name for name, spec in PROBLEMS.items() if spec.suite_cases is None]
    if missing:
        raise ValueError(f"the reference suite has no instances for the registered problem(s) {missing}: "
                         "give their ProblemSpec the suite_cases of their recipes (sdpembed.problems.suite_cases)")
    cases = [case for spec in PROBLEMS.values() for case in spec.suite_cases()]
    for case in cases:
        if case.problem not in PROBLEMS or case.size not in SIZES:
            raise ValueError(f"suite case {case.name!r} has an unknown problem {case.problem!r} or size {case.size!r}")
    names = [case.name for case in cases]
    if len(set(names)) != len(names):
        raise ValueError("suite case names must be unique")
    return cases


@dataclass
class BuildRecord:
    """The outcome of rebuilding one case: regenerated, certified, compared with the stored suite."""

    name: str
    problem: str
    group: str
    size: str
    ok: bool
    optimum: float
    stored_optimum: float
    dual_bound: float
    certified_gap: float
    agreement: float
    certifiers: list[dict[str, Any]]
    wall_time: float
    reasons: list[str] = field(default_factory=list)
    rejected: list[dict[str, Any]] = field(default_factory=list)


def _same_data(new: dict[str, np.ndarray], old: dict[str, np.ndarray]) -> str | None:
    """None when the instance arrays agree (to :data:`DATA_RTOL`), else what differs."""
    new = {k: v for k, v in new.items() if k != "optimum"}
    old = {k: v for k, v in old.items() if k != "optimum"}
    if set(new) != set(old):
        return f"the arrays differ: regenerated {sorted(new)}, stored {sorted(old)}"
    for key, value in new.items():
        stored = old[key]
        if value.shape != stored.shape or value.dtype.kind != stored.dtype.kind:
            return f"array {key!r} changed shape or type ({stored.dtype}{stored.shape} -> {value.dtype}{value.shape})"
        if value.dtype.kind == "f":
            if not np.allclose(value, stored, rtol=DATA_RTOL, atol=DATA_RTOL * max(1.0, float(np.abs(stored).max()))):
                return f"array {key!r} changed values"
        elif not np.array_equal(value, stored):
            return f"array {key!r} changed values"
    return None


def build_suite(
    *,
    out: str | os.PathLike | None = None,
    compare: bool = True,
    stored: str | os.PathLike | None = None,
    problems: Sequence[str] | None = None,
    progress: Callable[[BuildRecord], None] | None = None,
    bar: bool | None = False,
) -> list[BuildRecord]:
    """Regenerate the suite's instances, certify their optima and check them against the stored suite.

    Parameters
    ----------
    out : path, optional
        Write the regenerated suite (instance files with their optima, and the manifest) here.
        Only a complete build (``problems`` None) writes a manifest, and only when every case
        passed.
    compare : bool
        Compare each regenerated instance with the stored suite: the data must match and the new
        optimum must agree with the stored one to :data:`AGREEMENT_TOL`.
    stored : path, optional
        The stored suite to compare with (default: the shipped one).
    problems : sequence of str, optional
        Only cases of these problems or groups.
    progress : callable, optional
        Called with each :class:`BuildRecord` as soon as it is done.
    bar : bool or None
        A progress bar over the cases with the time left, on stderr: True always, None when
        stderr is a terminal, False never.

    Returns
    -------
    list of BuildRecord
        One per case; ``ok`` is False with ``reasons`` when the case was not certified, its data
        changed, its optimum moved, or it is missing from the stored suite.
    """
    cases = [c for c in suite_cases() if not problems or c.problem in problems or c.group in problems]
    if problems and not cases:
        raise ValueError(f"no suite cases for {list(problems)}; problems: {sorted(PROBLEMS)}")
    previous = {e.name: e for e in load_suite(stored).entries} if compare else {}
    out_dir = Path(out) if out is not None else None
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
    records, manifest_entries = [], []
    with progress_bar(len(cases), "suite build", enabled=bar, unit="instances") as shown:
        for case in cases:
            record, entry = _build_case(case, previous.get(case.name), compare, out_dir)
            records.append(record)
            manifest_entries.append(entry)
            shown.update(1)
            if progress is not None:
                progress(record)
    if out_dir is not None and problems is None and all(r.ok for r in records):
        text = json.dumps(_manifest(manifest_entries, Tolerances()), indent=1) + "\n"
        with atomic_write(out_dir / MANIFEST) as temporary:
            temporary.write_text(text)
    return records


def _build_case(case: SuiteCase, previous: SuiteEntry | None, compare: bool,
                out_dir: Path | None) -> tuple[BuildRecord, dict[str, Any]]:
    start = time.perf_counter()
    instance = case.build()
    truth = certify_optimum(instance)
    reasons = list(truth.reasons)
    stored_optimum = float("nan")
    arrays = {**instance.to_arrays(), "optimum": np.array(truth.optimum)}
    if compare:
        if previous is None:
            reasons.append("not in the stored suite")
        else:
            stored_optimum = previous.optimum
            try:
                changed = _same_data(arrays, read_npz(previous.path, "suite instance"))
            except ValueError as exc:
                changed = str(exc)
            if changed:
                reasons.append(f"the regenerated instance differs from the stored file: {changed}")
            if not _relative(truth.optimum, previous.optimum) <= AGREEMENT_TOL:
                reasons.append(f"the stored optimum no longer agrees: stored {previous.optimum!r}, certified now "
                               f"{truth.optimum!r} (relative difference "
                               f"{_relative(truth.optimum, previous.optimum):.2e} > {AGREEMENT_TOL:g})")
    certifiers, rejected = [asdict(c) for c in truth.certifiers], [asdict(c) for c in truth.rejected]
    record = BuildRecord(
        name=case.name, problem=case.problem, group=case.group, size=case.size, ok=not reasons,
        optimum=truth.optimum, stored_optimum=stored_optimum, dual_bound=truth.dual_bound,
        certified_gap=truth.certified_gap, agreement=truth.agreement, certifiers=certifiers,
        wall_time=time.perf_counter() - start, reasons=reasons, rejected=rejected,
    )
    file = f"{case.name}.npz"
    if out_dir is not None and truth.certified:
        stored = type(instance).from_arrays(arrays)
        save_instance(stored, out_dir / file)
    entry = {
        "name": case.name, "file": file, "problem": case.problem, "group": case.group, "size": case.size,
        "description": case.description, "dim": int(instance.dim), "n_constraints": int(instance.n_constraints),
        "optimum": truth.optimum, "dual_bound": truth.dual_bound, "certified_gap": truth.certified_gap,
        "agreement": truth.agreement, "status": "optimal" if truth.certified else "not certified",
        "certifiers": certifiers, "rejected_certifiers": rejected,
        "sha256": content_hash(type(instance).from_arrays(arrays).to_arrays()),
    }
    return record, entry


# -------------------------------------------------------------------------------------- run
@dataclass
class RunRecord:
    """The grade of one instance in :func:`run_suite` (``result`` is one of :data:`RESULTS`).

    ``objective_error`` is signed, (f − f*) / max(|f*|, 1) in the registry's sense (MVU maximises),
    and ``asymmetry`` is max |X − Xᵀ| / max(1, max |X|) (:class:`~sdpembed.validation.certify.Certificate`).
    """

    name: str
    problem: str
    group: str
    size: str
    result: str
    objective: float = float("nan")
    optimum: float = float("nan")
    objective_error: float = float("nan")
    max_violation: float = float("nan")
    psd_violation: float = float("nan")
    asymmetry: float = float("nan")
    wall_time: float = float("nan")
    returncode: int | None = None
    reasons: list[str] = field(default_factory=list)
    stderr_tail: str = ""

    @property
    def passed(self) -> bool:
        return self.result == "pass"

    @property
    def skipped(self) -> bool:
        return self.result == "skip"


@dataclass(frozen=True)
class RunSummary:
    """The counts of a run: ``graded`` excludes the instances the program skipped (exit code
    :data:`SKIP_EXIT_CODE`); the run succeeds (``ok``) when every graded instance passed and at least one
    was graded."""

    passed: int
    skipped: int
    total: int

    @property
    def graded(self) -> int:
        return self.total - self.skipped

    @property
    def ok(self) -> bool:
        return self.graded > 0 and self.passed == self.graded

    def line(self) -> str:
        """E.g. ``38/38 passed, 2 skipped (exit code 3: not handled)``."""
        text = f"{self.passed}/{self.graded} passed"
        if self.passed < self.graded:
            text += f", {self.graded - self.passed} did not"
        if self.skipped:
            text += f", {self.skipped} skipped (exit code {SKIP_EXIT_CODE}: not handled)"
        return text + ("" if self.graded else "; nothing was graded")


def summarize_run(records: Sequence[RunRecord]) -> RunSummary:
    """Count the passes and skips of :func:`run_suite`'s records."""
    return RunSummary(sum(r.passed for r in records), sum(r.skipped for r in records), len(records))


class SuiteInterrupted(KeyboardInterrupt):
    """SIGINT, SIGTERM or SIGHUP ended :func:`run_suite`; the program being graded was killed with its
    process group.

    Attributes
    ----------
    signum : int
        The signal.
    records : list of RunRecord
        The instances graded before it.
    """

    def __init__(self, signum: int, records: list[RunRecord]) -> None:
        super().__init__(signum)
        self.signum = signum
        self.records = records

    @property
    def signal_name(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def exit_code(self) -> int:
        """The shell's convention for a process ended by the signal: 128 + its number."""
        return 128 + self.signum


def command_argv(command: str, instance: str | os.PathLike, solution: str | os.PathLike) -> list[str]:
    """The argument list of ``command`` for one instance: ``{instance}`` and ``{solution}`` replaced
    by the (shell-quoted) paths, then split like a shell would (:func:`shlex.split`, no shell run).

    Raises
    ------
    ValueError
        If the command lacks either placeholder or does not split (unbalanced quotes).
    """
    missing = [key for key in ("{instance}", "{solution}") if key not in command]
    if missing:
        raise ValueError(f"--command must contain the placeholders {{instance}} and {{solution}}, missing "
                         f"{' and '.join(missing)}: e.g. \"python -m sdpembed solve {{instance}} --out {{solution}}\"")
    text = command.replace("{instance}", shlex.quote(os.fspath(instance)))
    text = text.replace("{solution}", shlex.quote(os.fspath(solution)))
    try:
        argv = shlex.split(text)
    except ValueError as exc:
        raise ValueError(f"--command cannot be split into arguments: {exc}") from None
    if not argv:
        raise ValueError("--command is empty")
    return argv


_STDERR_KEPT = 64 * 1024          # bytes of a program's stderr read back (the rest stays on disk until the end)
_REASON_CHARS = 200               # longest stderr line quoted in a reason
_TRACEBACK = "Traceback (most recent call last):"
_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


def _tail(text: str, lines: int = 20, chars: int = 2000) -> str:
    tail = "\n".join(text.strip().splitlines()[-lines:])
    return tail[-chars:]


def _error_line(stderr: str) -> str:
    """The line of a program's stderr that says what went wrong: the exception line of the last Python
    traceback, else the last line with a letter or digit in it (not caret markers or blank lines)."""
    lines = stderr.splitlines()
    headers = [i for i, line in enumerate(lines) if line.rstrip() == _TRACEBACK]
    # after a traceback's header, the frames are indented; the exception starts at column 0
    after = lines[headers[-1] + 1:] if headers else []
    line = next((text for text in after if text.strip() and not text[0].isspace()), None)
    if line is None:
        line = next((text for text in reversed(lines) if any(c.isalnum() for c in text)), "")
    line = line.strip()
    return line if len(line) <= _REASON_CHARS else line[:_REASON_CHARS - 1] + "…"


class _Interrupts:
    """While a run is on (in the main thread), SIGINT, SIGTERM and SIGHUP raise :class:`SuiteInterrupted`.

    Between :meth:`hold` and :meth:`release` (while a program is being started) a signal is kept and raised by
    :meth:`release`, so a started program is always known and can be killed; once one has been raised, later
    signals are ignored so that the kill finishes. Signals that were ignored (``SIG_IGN``) stay ignored; the
    previous handlers come back at the end, and a signal kept but never raised is delivered to them then.
    """

    def __init__(self, records: list[RunRecord]) -> None:
        self.records = records
        self.pending: int | None = None
        self.holding = False
        self.raised = False
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> _Interrupts:
        if threading.current_thread() is threading.main_thread():
            for signum in _SIGNALS:
                if signal.getsignal(signum) is not signal.SIG_IGN:
                    self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.holding = True
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)
        if self.pending is not None and not self.raised:
            signal.raise_signal(self.pending)

    def _handle(self, signum: int, frame: object) -> None:
        if self.raised:
            return
        if self.pending is None:
            self.pending = signum
        if not self.holding:
            self._raise()

    def _raise(self) -> None:
        signum, self.pending, self.raised, self.holding = self.pending, None, True, True
        raise SuiteInterrupted(signum, self.records)

    def hold(self) -> None:
        self.holding = True

    def release(self) -> None:
        self.holding = False
        if self.pending is not None and not self.raised:
            self._raise()


def _kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL the program's process group: the program and every child it started that stayed in it (the
    program alone where there are no process groups). The one kill path of timeouts, interrupts, and what
    a finished program left running."""
    try:
        if hasattr(os, "killpg"):
            os.killpg(proc.pid, signal.SIGKILL)
        else:  # pragma: no cover - Windows
            proc.kill()
    except (ProcessLookupError, PermissionError):      # the group is gone already
        pass


def _read_tail(file: Any) -> str:
    """The last :data:`_STDERR_KEPT` bytes of ``file``, decoded."""
    file.seek(0, os.SEEK_END)
    file.seek(max(0, file.tell() - _STDERR_KEPT))
    return file.read().decode("utf-8", errors="replace")


def _execute(argv: list[str], timeout: float,
             interrupts: _Interrupts | None = None) -> tuple[str, int | None, str, float]:
    """Run ``argv`` in its own process session; returns (state, return code, stderr, seconds), state one of
    ``done``, ``timeout``, ``unstartable``.

    Its stderr goes to a temporary file, so a child that keeps it open cannot hold the run and a flood of
    output cannot fill the memory. When the program ends, times out, or an exception (an interrupt) ends
    the wait, its process group is killed — children it spawned included, and only that group — and the
    program is reaped.
    """
    interrupts = interrupts or _Interrupts([])
    start = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        interrupts.hold()                 # a signal while the program starts waits until it can be killed
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                                    start_new_session=True)
        except (OSError, ValueError) as exc:
            interrupts.release()
            return "unstartable", None, f"cannot start {argv[0]!r}: {exc}", time.perf_counter() - start
        state = "done"
        try:
            interrupts.release()
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            state = "timeout"
        finally:
            _kill_group(proc)
            proc.wait()
        return state, proc.returncode, _read_tail(err), time.perf_counter() - start


def grade_solution(entry: SuiteEntry, solution: str | os.PathLike, tolerances: Tolerances,
                   instance: Any | None = None) -> RunRecord:
    """Grade the solution file of one suite instance (numpy only: the optimum is stored)."""
    record = RunRecord(entry.name, entry.problem, entry.group, entry.size, "fail", optimum=entry.optimum)
    path = Path(solution)
    if not path.is_file():
        record.result = "no solution"
        record.reasons.append(f"no solution file was written at {path}")
        return record
    instance = entry.load() if instance is None else instance
    try:
        cert = verify_solution(instance, solution_from_arrays(instance, read_npz(path, "solution")),
                               tolerances=tolerances)
    except Exception as exc:             # nothing in a solution file may abort a run: corrupt zip, zlib, ...
        record.result = "bad solution"
        record.reasons.append(_bad_solution_reason(exc, path))
        return record
    record.result = "pass" if cert.passed else "fail"
    record.objective, record.objective_error = cert.objective, cert.objective_error
    record.max_violation, record.psd_violation = cert.max_violation, cert.psd_violation
    record.asymmetry = cert.asymmetry
    record.reasons.extend(cert.reasons)
    return record


def _bad_solution_reason(exc: Exception, path: Path) -> str:
    """One line: our own errors (ValueError) as they are, anything else with its type and the file."""
    text = str(exc) if isinstance(exc, ValueError) else \
        f"solution file {os.fspath(path)!r} cannot be read or graded: {type(exc).__name__}: {exc}"
    return " ".join(text.split())


def _remove(path: Path) -> None:
    """Remove what is at ``path`` (file, link or directory: whatever a program left there)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


def _exit_text(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def _not_graded(entry: SuiteEntry, state: str, code: int | None, stderr: str, timeout: float) -> RunRecord:
    """The record of a program that timed out, could not start, crashed or skipped the instance."""
    skipped = state == "done" and code == SKIP_EXIT_CODE
    result = "timeout" if state == "timeout" else "skip" if skipped else "crash"
    record = RunRecord(entry.name, entry.problem, entry.group, entry.size, result, optimum=entry.optimum)
    if state == "timeout":
        record.reasons.append(f"still running after {timeout:g} s: killed")
    elif state == "unstartable":
        record.reasons.append(stderr)
    else:
        words = [_exit_text(code)] + (["not handled"] if skipped else []) + [_error_line(stderr)]
        record.reasons.append(": ".join(word for word in words if word))
    return record


def _run_one(entry: SuiteEntry, command: str, solutions: Path, copies: Path, timeout: float,
             tolerances: Tolerances, interrupts: _Interrupts) -> RunRecord:
    """Run the program on one instance and grade it. The program reads a private copy of the instance
    file, so that no program (one that swaps its arguments, say) can damage the suite."""
    instance = entry.load()                           # checks the file before the program reads it
    copy = copies / entry.path.name
    _remove(copy)
    shutil.copyfile(entry.path, copy)
    solution = (solutions / f"{entry.name}.solution.npz").resolve()
    _remove(solution)
    argv = command_argv(command, copy.resolve(), solution)
    state, code, stderr, seconds = _execute(argv, timeout, interrupts)
    if state == "done" and code == 0:
        record = grade_solution(entry, solution, tolerances, instance)
    else:
        record = _not_graded(entry, state, code, stderr, timeout)
    record.returncode, record.wall_time = code, seconds
    record.stderr_tail = "" if state == "unstartable" else _tail(stderr)
    return record


def run_suite(
    command: str,
    *,
    suite: Suite | None = None,
    entries: Iterable[SuiteEntry] | None = None,
    timeout: float = 600.0,
    workdir: str | os.PathLike | None = None,
    tolerances: Tolerances | None = None,
    progress: Callable[[RunRecord], None] | None = None,
    bar: bool | None = False,
) -> list[RunRecord]:
    """Run ``command`` on every instance and grade the solution files it writes.

    Parameters
    ----------
    command : str
        The program, with placeholders ``{instance}`` (the instance ``.npz`` to read: a private copy
        of the suite's file) and ``{solution}`` (the solution ``.npz`` to write); see
        :func:`command_argv`. It exits with status 0 after writing the solution, or with
        :data:`SKIP_EXIT_CODE` when it does not handle the instance.
    suite : Suite, optional
        Default: the shipped suite.
    entries : iterable of SuiteEntry, optional
        The instances to run (default: all of ``suite``; see :meth:`Suite.select`).
    timeout : float
        Seconds per instance; a program still running then is killed and graded ``timeout``.
    workdir : path, optional
        Where solution files are written (and kept); a temporary directory by default.
    tolerances : Tolerances, optional
        Default: the suite's.
    progress : callable, optional
        Called with each :class:`RunRecord` as soon as it is graded.
    bar : bool or None
        A progress bar over the instances with the time left, on stderr: True always, None
        when stderr is a terminal, False never.

    Returns
    -------
    list of RunRecord
        One per instance. Crashes (non-zero exit, with the line of stderr that says what went wrong),
        skips, timeouts, missing and malformed solution files are recorded per instance; nothing the
        program does aborts the run. Each program runs in its own process session, and its process
        group is killed when the program ends, times out or the run is interrupted: no child it
        started outlives it unless it left the group.

    Raises
    ------
    SuiteInterrupted
        On SIGINT, SIGTERM or SIGHUP (when called from the main thread), after killing the program
        being graded; it carries the records graded before.
    ValueError
        If the command or the timeout is malformed, or a suite file does not match its manifest.
    """
    if not (isinstance(timeout, (int, float)) and timeout > 0):
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    suite = suite or load_suite()
    entries = list(suite.entries if entries is None else entries)
    tolerances = tolerances or suite.tolerances
    command_argv(command, "instance.npz", "solution.npz")                 # fail early on a bad command
    records: list[RunRecord] = []
    with (_Interrupts(records) as interrupts, tempfile.TemporaryDirectory(prefix="sdpembed-suite-") as scratch,
          progress_bar(len(entries), "suite run", enabled=bar, unit="instances") as shown):
        solutions = Path(workdir) if workdir is not None else Path(scratch) / "solutions"
        copies = Path(scratch) / "instances"
        for directory in (solutions, copies):
            directory.mkdir(parents=True, exist_ok=True)
        for entry in entries:
            records.append(_run_one(entry, command, solutions, copies, timeout, tolerances, interrupts))
            shown.update(1)
            if progress is not None:
                progress(records[-1])
    return records


# ---------------------------------------------------------------------------------- tables
def _fmt(value: float, spec: str = ".1e") -> str:
    return "-" if value is None or not np.isfinite(value) else format(value, spec)


def _graded(value: float, limit: float, signed: bool = False) -> str:
    """A graded quantity for the tables: digits enough to show on which side of ``limit`` it lies."""
    return "-" if value is None or not np.isfinite(value) else format_against(value, limit, 1, signed=signed)


def format_run_table(records: Sequence[RunRecord], tolerances: Tolerances | None = None) -> str:
    """The pass/fail table of :func:`run_suite`, with a summary line.

    Parameters
    ----------
    records : sequence of RunRecord
    tolerances : Tolerances, optional
        Those the records were graded with (default: :class:`~sdpembed.validation.certify.Tolerances`):
        each graded value gets the digits it needs never to print as its tolerance when it fails.
    """
    tol = tolerances or Tolerances()
    width = max([len(r.name) for r in records] + [8])
    lines = [f"{'instance':<{width}}  {'result':<12} {'obj. error (signed)':>19} {'violation':>10} {'asym.':>10} "
             f"{'PSD viol.':>10} {'time s':>8}  reason"]
    for r in records:
        reason = "; ".join(line.splitlines()[0] for line in r.reasons if line.strip())
        lines.append(f"{r.name:<{width}}  {r.result.upper():<12} {_graded(r.objective_error, tol.objective, True):>19} "
                     f"{_graded(r.max_violation, tol.feasibility):>10} {_graded(r.asymmetry, tol.feasibility):>10} "
                     f"{_graded(r.psd_violation, tol.psd):>10} {_fmt(r.wall_time, '.2f'):>8}  {reason[:140]}")
    lines.append(summarize_run(records).line())
    return "\n".join(lines)


def format_build_table(records: Sequence[BuildRecord]) -> str:
    """The table of :func:`build_suite`: each case's certified optimum, gap, agreement and verdict."""
    width = max([len(r.name) for r in records] + [8])
    lines = [f"{'instance':<{width}}  {'optimum':>16} {'stored':>16} {'gap':>9} {'agreement':>9} {'time s':>7}  "
             "verdict"]
    for r in records:
        verdict = "OK" if r.ok else "FAIL: " + "; ".join(r.reasons)[:200]
        if r.ok and r.rejected:
            verdict += " (by " + ", ".join(f"{c['method']}/{c['solver']}" for c in r.certifiers) + "; " + ", ".join(
                f"{c['method']}/{c['solver']} ended {c['status']!r}" for c in r.rejected) + ")"
        lines.append(f"{r.name:<{width}}  {_fmt(r.optimum, '.10g'):>16} {_fmt(r.stored_optimum, '.10g'):>16} "
                     f"{_fmt(r.certified_gap):>9} {_fmt(r.agreement):>9} {r.wall_time:>7.2f}  {verdict}")
    ok = sum(r.ok for r in records)
    compared = any(np.isfinite(r.stored_optimum) for r in records)
    lines.append(f"{ok}/{len(records)} certified" + (" and in agreement with the stored suite" if compared else ""))
    return "\n".join(lines)
