"""`benchmarks/lmnn_peers.py`: where a run's record goes and what it says about its split."""

from pathlib import Path

from .conftest import BENCHMARKS, load_script


def test_a_thesis_scale_run_records_its_split_and_the_thesis_whatever_the_output_path(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))              # the script imports its sibling `report`
    peers = load_script("lmnn_peers")
    base = {"split": "test_size=0.3", "rows": []}
    for name, expected in (("lmnn_peers.json", "lmnn_thesis_scale.json"), ("elsewhere.json", "elsewhere.json")):
        path, record = peers.thesis_scale_record(Path("/tmp") / name, ["mnist10k-pca164"], base)
        assert path.name == expected
        assert record["thesis"] == peers.THESIS and "test_size=3000" in record["split"]
    path, record = peers.thesis_scale_record(Path("/tmp/lmnn_peers.json"), ["iris", "mnist10k-pca50"], base)
    assert path.name == "lmnn_peers.json" and record is base
