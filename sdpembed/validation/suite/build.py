"""The build of the suite: every case regenerated from its recipe, certified again, compared with the stored suite.

:func:`build_suite` regenerates every instance of :func:`suite_cases`, certifies its optimum
(:func:`~sdpembed.validation.suite.optimum.certify_optimum`) and compares it with the stored suite: it
fails when the data changed or a stored optimum no longer agrees. A complete build that passed writes
the instance files and the manifest (:mod:`sdpembed.validation.suite.manifest`).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..._files import atomic_write
from ..._progress import progress_bar
from ...io import read_npz, save_instance
from ...problems.suite_cases import SIZES, SuiteCase
from ...registry import PROBLEMS
from ..certify import Tolerances
from .manifest import MANIFEST, SuiteEntry, content_hash, load_suite, manifest_document
from .optimum import AGREEMENT_TOL, certify_optimum, relative_difference

__all__ = ["DATA_RTOL", "BuildRecord", "build_suite", "suite_cases"]

#: Relative tolerance of the comparison of regenerated instance data with the stored files (the
#: generators are deterministic; this only absorbs last-bit differences between BLAS builds).
DATA_RTOL = 1e-10


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
        text = json.dumps(manifest_document(manifest_entries, Tolerances()), indent=1) + "\n"
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
            moved = relative_difference(truth.optimum, previous.optimum, float(instance.objective_unit))
            if not moved <= AGREEMENT_TOL:
                reasons.append(f"the stored optimum no longer agrees: stored {previous.optimum!r}, certified now "
                               f"{truth.optimum!r} (relative difference {moved:.2e} > {AGREEMENT_TOL:g})")
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
