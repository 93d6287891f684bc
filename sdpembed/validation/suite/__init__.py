"""The reference suite: instances with certified optima, and the grading of other implementations.

The suite (version :data:`SUITE_VERSION`) ships with the package in ``sdpembed/data/suite/``: one
compressed instance file per case of :func:`suite_cases`, with its certified optimum, and
``manifest.json``, which records how each optimum was certified. One job per module:

* :mod:`~sdpembed.validation.suite.optimum` — the certified optimum of an instance: two independent
  solvers that each end ``optimal`` (:data:`CERTIFIERS`), agree to :data:`AGREEMENT_TOL` and prove a
  gap within :data:`GAP_TOL` (:func:`certify_optimum`).
* :mod:`~sdpembed.validation.suite.manifest` — the stored suite: the manifest, its entries and the
  content hashes of their files (:func:`load_suite`, :class:`Suite`, :class:`SuiteEntry`).
* :mod:`~sdpembed.validation.suite.build` — :func:`build_suite` regenerates every instance from its
  recipe, certifies it again and compares with the stored suite: it fails when the data changed or a
  stored optimum no longer agrees.
* :mod:`~sdpembed.validation.suite.runner` — :func:`run_suite` runs an external program on every
  instance (``CMD {instance} {solution}``), grades each solution file with the numpy-only verifier
  (:mod:`sdpembed.validation.verify`) and reports crashes, timeouts, skips (exit code
  :data:`SKIP_EXIT_CODE`) and missing or malformed solutions per instance.
* :mod:`~sdpembed.validation.suite.process` — each program in its own process session: whatever it
  does or leaves running, the run goes on, and no process of the program outlives its instance, nor
  an interrupted run (:class:`SuiteInterrupted`).
* :mod:`~sdpembed.validation.suite.tables` — the tables ``sdpembed suite build`` and ``suite run`` print.
"""

from ..._lazy import lazy_exports

# Each name loads its module at first use (sdpembed._lazy): ``sdpembed suite list`` reads the
# manifest without the build, the runner or the certifiers (DESIGN.md, "Start-up").
__getattr__, __dir__ = lazy_exports(__name__, {
    ".build": ("DATA_RTOL", "BuildRecord", "build_suite", "suite_cases"),
    ".manifest": ("MANIFEST", "SUITE_VERSION", "Suite", "SuiteEntry", "content_hash", "default_suite_dir",
                  "load_suite"),
    ".optimum": ("AGREEMENT_TOL", "CERTIFIERS", "CLARABEL_SETTINGS", "GAP_TOL", "SCS_SETTINGS", "CertifiedOptimum",
                 "Certifier", "certify_optimum"),
    ".process": ("SuiteInterrupted", "command_argv"),
    ".runner": ("RESULTS", "SKIP_EXIT_CODE", "RunRecord", "RunSummary", "grade_solution", "run_suite",
                "summarize_run"),
    ".tables": ("format_build_table", "format_run_table"),
})

__all__ = [
    "AGREEMENT_TOL",
    "CERTIFIERS",
    "CLARABEL_SETTINGS",
    "DATA_RTOL",
    "GAP_TOL",
    "MANIFEST",
    "RESULTS",
    "SCS_SETTINGS",
    "SKIP_EXIT_CODE",
    "SUITE_VERSION",
    "BuildRecord",
    "CertifiedOptimum",
    "Certifier",
    "RunRecord",
    "RunSummary",
    "Suite",
    "SuiteEntry",
    "SuiteInterrupted",
    "build_suite",
    "certify_optimum",
    "command_argv",
    "content_hash",
    "default_suite_dir",
    "format_build_table",
    "format_run_table",
    "grade_solution",
    "load_suite",
    "run_suite",
    "suite_cases",
    "summarize_run",
]
