"""Sphinx configuration of the sdpembed documentation.

Build: ``python -m sphinx -W --keep-going -n -b html docs docs/_build/html`` (README, tests/docs).
The notebooks under ``notebooks/`` (linked as ``docs/notebooks``) are rendered as stored, never
executed here: executing them is the notebook test's job.
"""

from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))

import sdpembed  # noqa: E402

project = "sdpembed"
author = "the sdpembed developers"
copyright = "the sdpembed developers"
version = release = sdpembed.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_nb",
    "sdpembed_docs",
]

source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
exclude_patterns = ["_build", "_templates", "**/.ipynb_checkpoints"]
templates_path = ["_templates"]

html_theme = "furo"
smartquotes = False                  # "--out" in a help text stays two hyphens
html_title = f"sdpembed {release}"

# notebooks: rendered from their stored outputs, never executed by the build
nb_execution_mode = "off"
myst_enable_extensions = ["dollarmath", "colon_fence"]
myst_heading_anchors = 3

# API reference: every name of __all__, one page per public object
autosummary_generate = True
autosummary_ignore_module_all = False
autosummary_imported_members = False
autodoc_typehints = "none"           # the numpydoc sections state the types
autodoc_member_order = "bysource"
numpydoc_show_class_members = False
numpydoc_xref_param_type = False
numpydoc_validation_checks: set[str] = set()

# The build runs offline (no intersphinx inventories): names of other projects are not linked.
nitpick_ignore_regex = [(r"py:.*", r"(numpy|scipy|sklearn|collections|time|typing)(\..*)?")]
# numpydoc's References sections list the papers a module implements without citing them inline.
suppress_warnings = ["ref.citation"]
