"""Pages of the documentation generated from the code, so that they cannot go stale.

Two directives and one docstring filter:

``.. sdpembed-cli::``
    The command-line reference, walked from :func:`sdpembed.cli.build_parser`: every subcommand
    (nested ones included) with its usage, description, arguments (help, default, choices) and
    epilog, as argparse itself knows them.
``.. sdpembed-features::``
    The feature table: every problem of :data:`sdpembed.registry.PROBLEMS` with its CVXPY ground
    truth, hand-written solvers, certificate, estimators, command-line support and reference-suite
    instances, then the linear methods of :data:`sdpembed.linear.LINEAR_METHODS`.
``plain_text_math``
    The package's docstrings are written to be read as text (``help()``) and write math in
    Unicode: |x| is an absolute value and ``n_features_in_`` an attribute, never a reStructuredText
    substitution or hyperlink reference. After numpydoc has rendered a docstring, a bar or a
    trailing underscore outside inline literals and roles is escaped so that it prints as written.
"""

from __future__ import annotations

import argparse
import inspect
import re

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles


def _escape(text: str) -> str:
    """``text`` as literal reStructuredText inline markup-free text."""
    return text.replace("\\", "\\\\").replace("*", "\\*").replace("`", "\\`").replace("|", "\\|")


def _subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, str, argparse.ArgumentParser]]:
    """(name, help, parser) of each subcommand of ``parser``, in the order they were added."""
    out = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            out += [(name, helps.get(name) or "", sub) for name, sub in action.choices.items()]
    return out


def _argument_rows(parser: argparse.ArgumentParser) -> list[str]:
    """A list-table of the arguments of ``parser`` (not its subcommands, nor ``--help``)."""
    rows = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction | argparse._HelpAction):
            continue
        if action.option_strings:
            metavar = "" if action.nargs == 0 else f" {action.metavar or action.dest.upper()}"
            name = ", ".join(f"``{option}{metavar}``" for option in action.option_strings)
        else:
            name = f"``{action.metavar or action.dest}``"
        details = [_escape(action.help or "")]
        if action.choices is not None:
            details.append("one of " + ", ".join(f"``{choice}``" for choice in action.choices))
        if action.required and action.option_strings:
            details.append("required")
        elif (action.option_strings and action.default not in (None, False, argparse.SUPPRESS)
              and "default" not in (action.help or "")):
            details.append(f"default ``{action.default}``")
        rows += [f"   * - {name}", f"     - {'; '.join(d for d in details if d) or ' '}"]
    if not rows:
        return []
    return [".. list-table::", "   :header-rows: 1", "   :widths: 30 70", "",
            "   * - argument", "     - meaning", *rows, ""]


def _command_lines(parser: argparse.ArgumentParser, path: list[str], underline: str) -> list[str]:
    """reStructuredText of ``parser`` and, one heading level down, of its subcommands."""
    lines = []
    title = " ".join(path)
    usage = parser.format_usage().strip().removeprefix("usage: ")
    lines += ["::", "", *[f"   {line}" for line in usage.splitlines()], ""]
    if parser.description:
        lines += [_escape(parser.description), ""]
    lines += _argument_rows(parser)
    if parser.epilog:
        lines += [_escape(parser.epilog), ""]
    levels = "=-~^\""
    for name, text, sub in _subcommands(parser):
        heading = f"``{title} {name}``"
        lines += [heading, levels[levels.index(underline) + 1] * len(heading), ""]
        if text:
            lines += [_escape(text[0].upper() + text[1:]) + ".", ""]
        lines += _command_lines(sub, [*path, name], levels[levels.index(underline) + 1])
    return lines


class CLIDirective(SphinxDirective):
    """``.. sdpembed-cli::`` — the reference of the ``sdpembed`` command, from its parser."""

    def run(self) -> list[nodes.Node]:
        from sdpembed.cli import build_parser

        return self._parse(_command_lines(build_parser(), ["sdpembed"], "="))

    def _parse(self, lines: list[str]) -> list[nodes.Node]:
        container = nodes.section()
        container.document = self.state.document
        nested_parse_with_titles(self.state, StringList(lines, source="sdpembed.cli.build_parser"), container)
        return container.children


def _function_role(function: object) -> str:
    """A cross-reference to a solver function by the module that defines it."""
    target = inspect.unwrap(function)
    name = getattr(target, "__name__", str(target))
    module = getattr(target, "__module__", "")
    if module == "sdpembed.registry":        # a lazy wrapper: its docstring names the real function
        return f"``{name}``"
    return f":func:`~{module}.{name}`"


def feature_rows() -> list[list[str]]:
    """The feature table, one row per registered problem: cells of reStructuredText."""
    from sdpembed.cli import build_parser
    from sdpembed.registry import PROBLEMS

    make_instance = next(sub for name, _, sub in _subcommands(build_parser()) if name == "make-instance")
    choices = next(a.choices for a in make_instance._actions if a.dest == "problem")
    rows = []
    for spec in PROBLEMS.values():
        solvers = ", ".join(f"``{m}``" for m in spec.methods)
        commands = ["solve", "verify"] + (["make-instance"] if spec.name in choices else []) + (
            ["export"] if spec.sdpa_form is not None else [])
        bound = "lower" if spec.sense == "min" else "upper"
        suite = f"{len(spec.suite_cases())} instances" if spec.suite_cases is not None else "—"
        rows.append([
            f"``{spec.name}`` (:class:`~{spec.instance_type.__module__}.{spec.instance_type.__name__}`)",
            f"``{spec.cvxpy.__name__}``",
            solvers,
            f"certified {bound} bound and gap",
            ", ".join(f":class:`~{e}`" for e in spec.estimators) or "—",
            ", ".join(f"``{c}``" for c in commands),
            suite,
        ])
    return rows


class FeaturesDirective(SphinxDirective):
    """``.. sdpembed-features::`` — the feature table, from the registry and the linear methods."""

    def run(self) -> list[nodes.Node]:
        from sdpembed.linear import LINEAR_METHODS

        header = ["problem", "CVXPY ground truth", "hand-written solvers", "certificate", "estimator",
                  "CLI (``sdpembed …``)", "reference suite"]
        lines = [".. list-table::", "   :header-rows: 1", ""]
        for row in [header, *feature_rows()]:
            lines += [f"   * - {row[0]}", *[f"     - {cell}" for cell in row[1:]]]
        lines += ["", "Linear methods (``sdpembed embed METHOD``, :func:`sdpembed.linear.embed`): "
                  + ", ".join(f"``{name}`` (:class:`~{cls.__module__}.{cls.__name__}`)"
                              for name, cls in LINEAR_METHODS.items()) + ".", ""]
        container = nodes.container()
        self.state.nested_parse(StringList(lines, source="sdpembed.registry.PROBLEMS"), 0, container)
        return container.children


# inline literals, roles with their targets, and interpreted text: left as they are
_PROTECTED = re.compile(r"``.+?``|:[\w:.-]+:`[^`]*`|`[^`]*`_{0,2}|\*\*[^*]+\*\*(?= :)")
_TRAILING_UNDERSCORE = re.compile(r"(?<=\w)_(?=[\s,.;:)\]}]|$)")


def _escape_plain(text: str) -> str:
    return _TRAILING_UNDERSCORE.sub(r"\\_", text.replace("|", "\\|"))


def escape_plain_text(line: str) -> str:
    """``line`` with its bars and trailing underscores escaped outside literals and roles."""
    stripped = line.lstrip()
    table = stripped.startswith(("+-", "+=")) or (stripped.startswith("|") and stripped.rstrip().endswith("|"))
    if table or stripped.startswith(("..", ":")):
        return line                                  # directives, tables, field lists
    out, last = [], 0
    for match in _PROTECTED.finditer(line):
        out += [_escape_plain(line[last:match.start()]), match.group()]
        last = match.end()
    return "".join([*out, _escape_plain(line[last:])])


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def escape_docstring(lines: list[str]) -> list[str]:
    """:func:`escape_plain_text` on every line outside literal blocks (those after a ``::``)."""
    out, literal_from = [], None
    for line in lines:
        if literal_from is not None and line.strip() and _indent(line) <= literal_from:
            literal_from = None
        out.append(line if literal_from is not None else escape_plain_text(line))
        if literal_from is None and line.rstrip().endswith("::"):
            literal_from = _indent(line)
    return out


def plain_text_math(app: Sphinx, what: str, name: str, obj: object, options: object, lines: list[str]) -> None:
    """autodoc-process-docstring, after numpydoc: see the module docstring."""
    if name.startswith("sdpembed"):
        lines[:] = escape_docstring(lines)


def skip_foreign_members(app: Sphinx, what: str, name: str, obj: object, skip: bool, options: object) -> bool | None:
    """autodoc-skip-member: members that scikit-learn adds to an estimator (``set_fit_request`` ...)
    are scikit-learn's to document."""
    if getattr(obj, "__module__", None) and not obj.__module__.startswith("sdpembed"):
        return True
    return None


def _canonical(name: str, module: str | None, cls: str | None = None) -> tuple[str, object] | None:
    """The defining module and qualified name of the object ``name`` refers to, seen from ``module``
    and class ``cls`` (a re-export such as ``sdpembed.problems.NuMaxInstance``, a name imported into
    ``module``, a method of ``cls``), or (the name, None) for data; None when nothing has that name."""
    from importlib import import_module

    candidates = [name] + ([f"{module}.{cls}.{name}"] if module and cls else []) + (
        [f"{module}.{name}"] if module else [])
    for dotted in candidates:
        parts = dotted.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            try:
                obj = import_module(".".join(parts[:cut]))
            except ImportError:
                continue
            try:
                for attribute in parts[cut:]:
                    obj = getattr(obj, attribute)
            except AttributeError:
                fields = getattr(obj, "__dataclass_fields__", {}) or getattr(obj, "__annotations__", {})
                if inspect.isclass(obj) and attribute == parts[-1] and attribute in fields:
                    return dotted, None                    # a field of a (data)class
                break
            if inspect.ismodule(obj):
                return obj.__name__, obj
            owner = getattr(obj, "__module__", None)
            qualname = getattr(obj, "__qualname__", None)
            if owner and qualname and "<locals>" not in qualname:
                return f"{owner}.{qualname}", obj
            return dotted, None                        # data: no defining module to point to
    return None


def resolve_reexport(app: Sphinx, env: object, node: nodes.Element, contnode: nodes.Element) -> nodes.Node | None:
    """missing-reference: each object is documented once, in the module that defines it; a reference
    through a package's re-export or an imported name is resolved to that page. A private name
    (``_helper``), which the API reference does not document, is shown as code without a link."""
    if node.get("refdomain") != "py":
        return None
    target = node["reftarget"]
    if target.rpartition(".")[2].startswith("_"):
        return contnode
    found = _canonical(target, node.get("py:module"), node.get("py:class"))
    if found is None and node["refdoc"].startswith("generated/"):
        # a page of a re-export (sdpembed.embed): read the docstring as in the defining module
        documented = _canonical(node["refdoc"].rpartition("/")[2], None)
        if documented is not None and documented[1] is not None:
            found = _canonical(target, getattr(documented[1], "__module__", None), node.get("py:class"))
    if found is None:
        return None                                  # names nothing: a stale reference, reported
    canonical = found[0]
    if canonical != target and not canonical.rpartition(".")[2].startswith("_"):
        domain = env.get_domain("py")
        resolved = domain.resolve_xref(env, node["refdoc"], app.builder, node["reftype"], canonical,
                                       node.deepcopy(), contnode)
        if resolved is not None:
            return resolved
    # an object that exists but is not in the reference (private, or not in its module's __all__)
    return contnode


def setup(app: Sphinx) -> dict[str, object]:
    app.add_directive("sdpembed-cli", CLIDirective)
    app.add_directive("sdpembed-features", FeaturesDirective)
    app.connect("autodoc-process-docstring", plain_text_math, priority=900)
    app.connect("autodoc-skip-member", skip_foreign_members)
    app.connect("missing-reference", resolve_reexport)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
