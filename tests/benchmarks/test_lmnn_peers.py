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


def test_alternated_runs_solve_ours_in_a_fresh_process_and_pair_the_ratios_by_round(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    peers = load_script("lmnn_peers")
    Xtr, _, ytr, _ = peers.load("iris")
    row = peers.run_ours(Xtr, ytr, 1e-5, 60.0)
    assert row["status"] == "optimal" and row["relative_gap"] <= 1e-5
    assert row["cpu_seconds"] > 0 and row["seconds"] > 0 and row["newton_steps"] >= 1
    runs = [{"dataset": "d", "method": "ours", "round": 0, "cpu_seconds": 2.0, "status": "optimal"},
            {"dataset": "d", "method": "ours", "round": 1, "cpu_seconds": 1.0, "status": "optimal"},
            {"dataset": "d", "method": "p", "round": 1, "cpu_seconds": 3.0, "status": "done"},
            {"dataset": "d", "method": "p", "round": 0, "cpu_seconds": 5.0, "status": "done"},
            {"dataset": "d", "method": "ours", "round": 2, "cpu_seconds": 1.0, "status": "optimal"},
            {"dataset": "d", "method": "p", "round": 2, "cpu_seconds": 9.0, "status": "timeout"}]
    assert peers.cpu_ratios(runs, "d", "p") == [2.5, 3.0]


def test_peers_run_with_our_blas_kernels_unless_the_caller_chose_others(monkeypatch):
    import json
    import subprocess
    import sys

    import scs  # noqa: F401  (a wheel with an OpenBLAS of its own, loaded before numpy's is asked)

    monkeypatch.syspath_prepend(str(BENCHMARKS))
    peers = load_script("lmnn_peers")
    ours = peers.blas_architecture()
    assert ours                                                # numpy's wheels ship OpenBLAS
    monkeypatch.delenv("OPENBLAS_CORETYPE", raising=False)
    env = peers.peer_env()
    assert env["OPENBLAS_CORETYPE"] == ours
    probe = ("import json, numpy, threadpoolctl; print(json.dumps([i.get('architecture') for i in "
             "threadpoolctl.threadpool_info() if i.get('internal_api') == 'openblas']))")
    child = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    assert json.loads(child.stdout) == [ours]
    assert peers.peer_env({"OPENBLAS_CORETYPE": "Haswell"})["OPENBLAS_CORETYPE"] == "Haswell"
