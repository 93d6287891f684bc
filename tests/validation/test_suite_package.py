"""The reference suite is a package of one-job modules (DESIGN.md, issue 19); the names its single
module had are importable from the package, each defined in the module whose job it is."""

from __future__ import annotations

import importlib

import pytest

import sdpembed.validation.suite as suite

#: Public name -> the module of the package that defines it.
HOMES = {
    "optimum": ["AGREEMENT_TOL", "GAP_TOL", "CERTIFIERS", "CLARABEL_SETTINGS", "SCS_SETTINGS", "Certifier",
                "CertifiedOptimum", "certify_optimum"],
    "manifest": ["MANIFEST", "SUITE_VERSION", "Suite", "SuiteEntry", "content_hash", "default_suite_dir", "load_suite"],
    "build": ["DATA_RTOL", "BuildRecord", "build_suite", "suite_cases"],
    "runner": ["RESULTS", "SKIP_EXIT_CODE", "RunRecord", "RunSummary", "grade_solution", "run_suite", "summarize_run"],
    "process": ["SuiteInterrupted", "command_argv"],
    "tables": ["format_build_table", "format_run_table"],
}


@pytest.mark.parametrize("module", sorted(HOMES))
def test_each_public_name_is_re_exported_from_its_home(module):
    home = importlib.import_module(f"sdpembed.validation.suite.{module}")
    for name in HOMES[module]:
        assert name in suite.__all__, name
        assert getattr(suite, name) is getattr(home, name), name


def test_the_package_exports_nothing_else():
    assert sorted(suite.__all__) == sorted(name for names in HOMES.values() for name in names)
