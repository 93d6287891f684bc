"""Shared instances and solves for the test suite (solved once per session)."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from hypothesis import settings
from sklearn.datasets import load_digits, load_iris, load_wine

from sdpembed import LMNNInstance, NuMaxInstance, load_instance, solve
from sdpembed.datasets import gaussian_points, translating_squares

DATA = Path(__file__).parent / "data"

# The test command replays the same examples on every run, so that a red run is reproducible and a
# green one is not luck; HYPOTHESIS_PROFILE=explore draws fresh examples (10x as many) to hunt for
# new failures, each of which becomes an explicit regression test.
settings.register_profile("replay", derandomize=True)
settings.register_profile("explore", derandomize=False, max_examples=1000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "replay"))


def notebook_tools() -> ModuleType:
    """``notebooks/refresh.py`` (a script, not part of the package): how the notebooks are executed and checked."""
    path = Path(__file__).resolve().parents[1] / "notebooks" / "refresh.py"
    spec = importlib.util.spec_from_file_location("notebooks_refresh", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def digits_points(n: int = 30, seed: int = 0) -> np.ndarray:
    """``n`` sklearn digits (8×8, scaled to [0, 1]), a seeded subset."""
    X = load_digits().data / 16.0
    return X[np.sort(np.random.default_rng(seed).choice(len(X), size=n, replace=False))]


def small_instances() -> dict[str, NuMaxInstance]:
    """The agreement instances small enough to solve with Clarabel inside the suite."""
    return {
        "squares49": NuMaxInstance.from_points(translating_squares(7, 3), 0.1),
        "digits": NuMaxInstance.from_points(digits_points(), 0.2),
        "gaussian": NuMaxInstance.from_points(gaussian_points(30, 20, random_state=1), 0.1),
    }


@pytest.fixture(scope="session")
def instances() -> dict[str, NuMaxInstance]:
    return small_instances()


@pytest.fixture(scope="session")
def golden() -> tuple[NuMaxInstance, dict]:
    """The N = 256 squares instance with its stored Clarabel optimum (tests/data/make_golden.py)."""
    meta = json.loads((DATA / "numax_squares16_s1000.json").read_text())
    return load_instance(DATA / meta["instance"]), meta


@pytest.fixture(scope="session")
def solved(instances):
    """ADMM, Clarabel and SCS results for every small instance."""
    out = {}
    for name, instance in instances.items():
        out[name] = {
            "admm": solve(instance, "admm"),
            "clarabel": solve(instance, "cvxpy", solver="CLARABEL"),
            "scs": solve(instance, "cvxpy", solver="SCS", eps_abs=1e-7, eps_rel=1e-7),
        }
    return out


def labelled_subset(X, y, per_class, d, seed):
    """``per_class`` seeded points of every class, the first ``d`` features, standardised."""
    rng = np.random.default_rng(seed)
    idx = np.concatenate([rng.choice(np.flatnonzero(y == c), per_class, replace=False) for c in np.unique(y)])
    Z = X[np.sort(idx), :d]
    return (Z - Z.mean(axis=0)) / Z.std(axis=0), y[np.sort(idx)]


def tiny_lmnn_instances() -> dict[str, LMNNInstance]:
    """LMNN instances small enough for Clarabel and SCS in well under a second each (≤ 800 triplets)."""
    Xi, yi = load_iris(return_X_y=True)
    Xw, yw = load_wine(return_X_y=True)
    rng = np.random.default_rng(3)
    Xg = rng.standard_normal((18, 3)) + np.repeat(np.eye(3), 6, axis=0)
    yg = np.array(["a", "b", "c"]).repeat(6)
    return {
        "iris": LMNNInstance.from_data(*labelled_subset(Xi, yi, 8, 4, 0), k=2),
        "wine": LMNNInstance.from_data(*labelled_subset(Xw, yw, 8, 5, 1), k=2, mu=0.3),
        "gauss": LMNNInstance.from_data(Xg, yg, k=2, mu=0.7),
    }


def clarabel_or_scs(instance):
    """CVXPY's MVU ground truth by Clarabel, or by SCS where Clarabel ends short of ``optimal``: whether it
    reaches its tolerances on tiny degenerate SDPs depends on the processor (``optimal_inaccurate`` on one
    machine for an instance it solves on another)."""
    from sdpembed.formulations.mvu import solve_mvu_cvxpy

    result = solve_mvu_cvxpy(instance, "CLARABEL")
    return result if result.status == "optimal" else solve_mvu_cvxpy(instance, "SCS")


def verified_through_files(instance, result, directory: Path) -> bool:
    """Whether ``sdpembed verify``'s check passes ``result`` written to a solution file beside ``instance``'s
    file, both read back (the oracle's path)."""
    from sdpembed.io import read_solution, save_instance, write_solution
    from sdpembed.validation.verify import verify_solution

    save_instance(instance, directory / "instance.npz")
    write_solution(directory / "solution.npz", instance, result)
    loaded = load_instance(directory / "instance.npz")
    return verify_solution(loaded, read_solution(directory / "solution.npz", loaded)).passed
