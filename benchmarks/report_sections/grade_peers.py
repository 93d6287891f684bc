"""BENCHMARKS.md: public implementations graded by the reference suite (``benchmarks/grade_peers.py``)."""

from __future__ import annotations

from report import run_line, section, stamp_of, table

FILE = "grade_peers.json"


def cell(value, fmt: str = ".1e") -> str:
    """A number of the table, or a dash for none."""
    return "—" if value is None else f"{value:{fmt}}"


def passes(row: dict) -> str:
    """passed/graded (with the instances the peer does not handle), or *not run*."""
    if row["passed"] is None:
        return "not run"
    text = f"{row['passed']}/{row['graded']}"
    return text + (f" ({row['skipped']} n/a)" if row["skipped"] else "")


def _fallback(doc: dict) -> str:
    """The run line of a result stored before the script stamped its runs."""
    return (f"Run: `{doc['command']}`; {doc['date']}; {doc['machine']}, {doc['cpus']} cores, "
            f"Python {doc['python']}; BLAS threads {doc['threads']}.")


@section("grade_peers", "Public implementations graded by the suite", files=(FILE,), order=80)
def render(data: dict[str, dict]) -> str:
    doc = data[FILE]
    rows = [(r["peer"], r["setting"], r["problem"], passes(r), cell(r["max_abs_objective_error"]),
             cell(r["max_violation"]), cell(r["max_psd_violation"]), cell(r["seconds"], ".1f"), r["why"])
            for r in doc["rows"]]
    header = ("peer", "setting", "problem", "passed", "\\|obj. error\\|", "violation", "PSD viol.", "time [s]", "why")
    lines = [run_line(stamp_of(doc), _fallback(doc))]
    # rows kept from earlier runs (grade_peers.py --merge): the peers of each earlier run
    earlier: list[tuple[dict, list[str]]] = []
    for peer, stamp in (doc.get("stamps") or {}).items():
        if stamp != stamp_of(doc):
            group = next((names for known, names in earlier if known == stamp), None)
            if group is None:
                earlier.append((stamp, group := []))
            group.append(peer)
    lines += [f"Rows of {', '.join(names)}: {run_line(stamp).removeprefix('Run: ')}" for stamp, names in earlier]
    return f"""{chr(10).join(lines)}

Each peer runs through its documented interface (adapters in `benchmarks/peers/`) and is graded by
`sdpembed suite run` at the suite's tolerances (objective 1e-4, violation 1e-5, PSD 1e-6). Columns:
the worst |objective error| (relative), violation and PSD violation over the graded instances of
the row; time is the sum of the runs' wall times, start-up included; n/a: instances the peer does
not handle. The machine was shared with other jobs.

{table(header, rows, "lllrrrrrl")}
"""
