"""Grade public implementations of NuMax, LMNN and MVU with the reference suite (issue 26).

Each peer of ``benchmarks/peers/`` (one adapter file per peer) is run through its documented
interface on the suite's instances of its problems — at its authors' defaults and, where it has
one, a documented tighter setting — and graded by our own oracle, ``sdpembed suite run`` with the
adapter as the command. The table (pass counts per problem, the worst objective error, violation
and PSD violation, the time, and the reason in words) goes to stdout, the JSON to
``benchmarks/results/grade_peers.json`` through ``benchmarks/report.py``, whose section
``report_sections/grade_peers.py`` turns it into BENCHMARKS.md's table (``python benchmarks/report.py``).

Peers that are not installed are *not run* rows, never failures. Setup of each peer (its adapter's
docstring says more):

* the NuMax authors' code: ``git clone https://github.com/image-science-lab/NuMax DIR`` and
  ``--numax-code DIR``; GNU Octave with ``apt-get install -y octave octave-statistics
  liboctave-dev`` (minFunc's C sources are compiled here with ``mkoctfile --mex``);
* metric-learn 0.7.0 and pylmnn 1.6.4: the peers' virtualenv (``--peers-venv``, default
  ``/work/peers-venv``; recipe in ``benchmarks/peers_requirements.txt``);
* the CVXPY MVU script: ``git clone https://github.com/buquicchiol/MaximumVarianceUnfolding DIR``
  and ``--mvu-code DIR``;
* the five-line CVXPY models: SCS and Clarabel (core dependencies), CVXOPT if installed.

    python benchmarks/grade_peers.py [--numax-code DIR] [--mvu-code DIR] [--peers-venv DIR]
                                     [--only ADAPTER,...] [--peer TEXT] [--merge] [--instances GLOB]
                                     [--timeout S] [--json PATH]

``--peer CVXOPT --merge`` grades one peer again and keeps the other rows of the stored results, each
row stamped by the run that made it.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import report  # noqa: E402
from peers import ADAPTERS, Options, Peer, Setting, blas_architecture, load_peers, peer_env  # noqa: E402
from report_sections.grade_peers import cell, passes  # noqa: E402

SKIP_PREFIX = "exit code 3: not handled: "
NOT_GRADED = {"crash": "crashed", "timeout": "timed out", "no_solution": "wrote no solution",
              "bad_solution": "wrote a bad solution"}


def run_setting(peer: Peer, setting: Setting, instances: list[str], timeout: float | None) -> dict:
    """``sdpembed suite run`` of one setting of a peer: its JSON payload (``results`` per instance)."""
    argv = [sys.executable, "-m", "sdpembed", "suite", "run", "--command", setting.command,
            "--problems", peer.problems, "--timeout", str(timeout or peer.timeout), "--json"]
    for pattern in instances:
        argv += ["--instances", pattern]
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, env=peer_env())
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"sdpembed suite run exited {proc.returncode}: {proc.stderr.strip()[-500:]}")
    payload = json.loads(proc.stdout)
    payload["seconds"] = time.perf_counter() - start
    return payload


def _span(values: list[float], fmt: str = ".1e") -> str:
    low, high = min(values), max(values)
    return f"{low:{fmt}}" if f"{low:{fmt}}" == f"{high:{fmt}}" else f"{low:{fmt}}–{high:{fmt}}"


def reason_in_words(records: list[dict], tolerances: dict) -> str:
    """Why the instances that did not pass did not, from the oracle's numbers and reasons."""
    failed = [r for r in records if r["result"] == "fail"]
    words = []
    infeasible = [r["max_violation"] for r in failed if r["max_violation"] > tolerances["feasibility"]]
    if infeasible:
        words.append(f"infeasible by {_span(infeasible)} on {len(infeasible)}")
    not_psd = [r["psd_violation"] for r in failed if r["psd_violation"] > tolerances["psd"]]
    if not_psd:
        words.append(f"not PSD (−λ_min/λ_max {_span(not_psd)}) on {len(not_psd)}")
    sides: dict[str, list[float]] = {}
    for r in failed:
        for reason in r["reasons"]:
            side = re.search(r"in magnitude, (.*?) \(objective", reason)
            if side:
                sides.setdefault(side.group(1).split(":")[-1].split(",")[0].strip(), []).append(
                    abs(r["objective_error"]))
    words += [f"{side} by {_span(errors)} on {len(errors)}" for side, errors in sides.items()]
    limited = [r for r in failed if "iteration limit" in r.get("stderr_tail", "")]
    if limited:                            # the adapter says so (cvxpy_models: SCS's max_iters)
        words.append(f"the solver stopped at its iteration limit on {len(limited)}")
    asym = [r for r in failed if any(reason.startswith("asymmetric") for reason in r["reasons"])]
    if asym:
        words.append(f"asymmetric on {len(asym)}")
    for state, text in NOT_GRADED.items():
        hit = [r for r in records if r["result"] == state]
        if hit:
            first = next((reason for r in hit for reason in r["reasons"]), "")
            words.append(f"{text} on {len(hit)}" + (f" ({first[:120]})" if first else ""))
    return "; ".join(words) if words else ("all passed" if records else "no instance")


def rows_of(peer: Peer, setting: Setting, payload: dict) -> list[dict]:
    """One row per problem group of the suite (``mvu`` split by variant), skips counted apart."""
    rows = []
    groups: dict[str, list[dict]] = {}
    for record in payload["results"]:
        groups.setdefault(record["group"], []).append(record)
    for group, records in groups.items():
        graded = [r for r in records if r["result"] != "skip"]
        finite = [r for r in graded if r["result"] in ("pass", "fail")]
        row = {"peer": peer.name, "setting": setting.name, "setting_description": setting.description,
               "problem": group, "passed": sum(r["result"] == "pass" for r in graded), "graded": len(graded),
               "skipped": len(records) - len(graded),
               "max_abs_objective_error": max((abs(r["objective_error"]) for r in finite), default=None),
               "max_violation": max((r["max_violation"] for r in finite), default=None),
               "max_psd_violation": max((r["psd_violation"] for r in finite), default=None),
               "seconds": sum(r["wall_time"] for r in records if r["wall_time"] is not None),
               "why": reason_in_words(graded, payload["tolerances"]) if graded else
               "not applicable: " + (records[0]["reasons"] or ["skipped"])[0].removeprefix(SKIP_PREFIX)}
        rows.append(row)
    return rows


def not_run_row(peer: Peer) -> dict:
    return {"peer": peer.name, "setting": "—", "problem": peer.problems, "passed": None, "graded": None,
            "skipped": None, "max_abs_objective_error": None, "max_violation": None, "max_psd_violation": None,
            "seconds": None, "why": f"not run: {peer.missing}"}


def format_table(rows: list[dict]) -> str:
    header = (f"{'peer':<44s} {'setting':<16s} {'problem':<14s} {'passed':>11s} {'|obj. err|':>10s} "
              f"{'violation':>10s} {'PSD viol.':>10s} {'time s':>8s}  why")
    lines = [header]
    for r in rows:
        lines.append(f"{r['peer'][:44]:<44s} {r['setting'][:16]:<16s} {r['problem']:<14s} {passes(r):>11s} "
                     f"{cell(r['max_abs_objective_error']):>10s} {cell(r['max_violation']):>10s} "
                     f"{cell(r['max_psd_violation']):>10s} {cell(r['seconds'], '.1f'):>8s}  {r['why']}")
    return "\n".join(lines)


def grade(peers: list[Peer], instances: list[str], timeout: float | None,
          progress=lambda text: print(text, file=sys.stderr, flush=True)) -> tuple[list[dict], list[dict]]:
    """(rows of the table, the suite runs' payloads) of every setting of every peer."""
    rows, runs = [], []
    from sdpembed._progress import track

    for peer in track(peers, "peers", unit="peer"):
        if peer.missing is not None:
            progress(f"{peer.name}: not run: {peer.missing}")
            rows.append(not_run_row(peer))
            continue
        for setting in peer.settings:
            progress(f"{peer.name}, {setting.name}: grading {peer.problems} ...")
            payload = run_setting(peer, setting, instances, timeout)
            runs.append({"peer": peer.name, "setting": setting.name, **payload})
            rows += rows_of(peer, setting, payload)
            progress(f"  {payload['passed']}/{payload['graded']} passed ({payload['seconds']:.0f} s)")
    return rows, runs


def merged(path: Path, out: dict, stamp: dict, graded: set[str]) -> dict:
    """``out`` (the peers of ``graded``) with the other peers' rows and runs of the results at
    ``path``, in their order there; ``stamps`` says which run made each peer's rows."""
    old = json.loads(path.read_text())
    stamps = {row["peer"]: (old.get("stamps") or {}).get(row["peer"]) or old.get("run") or
              {key: old[key] for key in ("command", "date") if key in old} for row in old["rows"]}
    for key in ("rows", "runs"):
        new, placed, items = out[key], set(), []
        for item in old[key]:
            peer = item["peer"]
            if peer not in graded:
                items.append(item)
            elif peer not in placed:               # the new results where the old ones were
                placed.add(peer)
                items += [i for i in new if i["peer"] == peer]
        out[key] = items + [i for i in new if i["peer"] not in placed]
    out["stamps"] = {**{peer: s for peer, s in stamps.items() if peer not in graded},
                     **{peer: stamp for peer in graded}}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--numax-code", default=None, help="checkout of github.com/image-science-lab/NuMax")
    parser.add_argument("--mvu-code", default=None, help="checkout of github.com/buquicchiol/MaximumVarianceUnfolding")
    parser.add_argument("--peers-venv", default="/work/peers-venv", help="virtualenv with metric-learn and pylmnn")
    parser.add_argument("--octave", default="octave")
    parser.add_argument("--only", default=None, help=f"comma-separated adapters of {', '.join(ADAPTERS)}")
    parser.add_argument("--instances", action="append", default=[], metavar="GLOB")
    parser.add_argument("--timeout", type=float, default=None, help="seconds per instance (default: the peer's)")
    parser.add_argument("--peer", action="append", default=[], metavar="TEXT",
                        help="only the peers whose name contains TEXT (e.g. CVXOPT)")
    parser.add_argument("--merge", action="store_true",
                        help="keep the other peers' rows and runs of the existing --json, each stamped by its run")
    parser.add_argument("--json", default=str(ROOT / "benchmarks" / "results" / "grade_peers.json"))
    args = parser.parse_args(argv)
    options = Options(python=sys.executable, peers_venv=args.peers_venv, numax_code=args.numax_code,
                      mvu_code=args.mvu_code, octave=args.octave)
    peers = load_peers(options, args.only.split(",") if args.only else None)
    if args.peer:
        peers = [peer for peer in peers if any(text in peer.name for text in args.peer)]
    rows, runs = grade(peers, args.instances, args.timeout)
    print(format_table(rows))
    meta = {"date": datetime.date.today().isoformat(), "machine": platform.machine(), "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "threads": ", ".join(f"{key}={os.environ.get(key, 'unset')}" for key in
                                 ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")),
            "blas": (f"OpenBLAS kernels {blas_architecture()}, the peers' "
                     f"OPENBLAS_CORETYPE={peer_env().get('OPENBLAS_CORETYPE', 'unset')}"),
            "command": " ".join(["python", "benchmarks/grade_peers.py", *(argv if argv is not None else sys.argv[1:])])}
    out = {"benchmark": "grade_peers", **meta, "rows": rows, "runs": runs}
    stamp = report.run_stamp(["benchmarks/grade_peers.py", *(argv if argv is not None else sys.argv[1:])])
    if args.merge and Path(args.json).exists():
        out = merged(Path(args.json), out, stamp, {peer.name for peer in peers})
    report.write_results(args.json, out, stamp)
    print("regenerate BENCHMARKS.md with: python benchmarks/report.py")
    return 0


if __name__ == "__main__":
    sys.exit(main())
