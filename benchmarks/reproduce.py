"""Reproduce a paper's experiments and write REPRODUCTION.md (issue 22).

    OPENBLAS_NUM_THREADS=1 python benchmarks/reproduce.py --paper numax [--only fig9,table1] [--quick]
        [--set key=value ...] [--results DIR] [--report PATH]
    python benchmarks/reproduce.py --report-only      # rebuild REPRODUCTION.md from the stored JSON

Each experiment writes ``<results>/<paper>/<key>.json`` and ``<key>.png``; the report is rebuilt
from every stored JSON of every paper. ``--set`` overrides one setting of the chosen
configuration (its value read as JSON), and is listed among the run's departures.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from reproduce import PAPERS, load  # noqa: E402
from reproduce.common import REPORT, RESULTS, run_experiment, write_report  # noqa: E402


def _setting(text: str) -> tuple[str, object]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"--set takes key=value, got {text!r}")
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paper", choices=sorted(PAPERS))
    parser.add_argument("--report-only", action="store_true",
                        help="run nothing: rebuild the report from the stored JSON of every paper")
    parser.add_argument("--only", default="", help="comma-separated experiment keys (default: all)")
    parser.add_argument("--quick", action="store_true", help="the reduced configurations (minutes)")
    parser.add_argument("--set", dest="settings", type=_setting, action="append", default=[])
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--report", type=Path, default=REPORT)
    args = parser.parse_args(argv)
    if args.report_only:
        if args.paper or args.only or args.quick or args.settings:
            parser.error("--report-only runs nothing: it takes no --paper, --only, --quick or --set")
        print(f"wrote {write_report({name: load(name) for name in PAPERS}, args.results, args.report)}")
        return 0
    if args.paper is None:
        parser.error("--paper is required (or --report-only)")
    module = load(args.paper)
    known = {e.key: e for e in module.EXPERIMENTS}
    keys = [k for k in args.only.split(",") if k] or list(known)
    unknown = [k for k in keys if k not in known]
    if unknown:
        parser.error(f"unknown experiment(s) {unknown} for --paper {args.paper}; choose from {list(known)}")
    for key in keys:
        run_experiment(args.paper, known[key], args.quick, dict(args.settings), args.results)
    path = write_report({name: load(name) for name in PAPERS}, args.results, args.report)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
