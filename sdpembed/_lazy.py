"""Lazy exports of a package (PEP 562): a name is imported from its module at its first use.

The one pattern by which a package ``__init__`` re-exports names without importing their modules
(DESIGN.md, "Start-up"). A package that would pull scikit-learn, SciPy's heavier parts or CVXPY
into ``import sdpembed``, ``sdpembed --help`` or ``sdpembed verify`` declares its exports ::

    from .._lazy import lazy_exports

    __getattr__, __dir__ = lazy_exports(__name__, {
        ".pca": ("PCA", "pca_projection"),
        ".numax": ("NuMax", "NuMaxClass"),
    }, submodules=("methods",))

    __all__ = ["NuMax", "NuMaxClass", "PCA", "methods", "pca_projection"]

and ``from sdpembed.linear import PCA`` or ``sdpembed.linear.PCA`` imports ``sdpembed.linear.pca``
then, and only then; the value is cached in the package's namespace, so the module hook runs once
per name. The keys of the mapping are module paths relative to the package; ``submodules`` are
subpackages or modules exported by name. ``tests/contract/test_layering.py`` reads these mappings
as imports, so a lazy export is still an arrow of the layering, and ``tests/contract/test_startup.py``
checks that every name of ``__all__`` resolves.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Mapping
from importlib import import_module
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str,
    attributes: Mapping[str, Iterable[str]],
    submodules: Iterable[str] = (),
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module ``__getattr__`` and ``__dir__`` of a package whose exports load at first use.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    attributes : mapping of str to iterable of str
        Module path relative to ``package`` (``".pca"``, ``"..isometry"``) -> the names it exports.
    submodules : iterable of str
        Submodules exported as attributes (``"formulations"``: ``package.formulations``).

    Returns
    -------
    (__getattr__, __dir__)
        To be assigned to the package's module-level names of the same names.

    Raises
    ------
    ValueError
        If a name is exported twice, or is also the name of a submodule (importing the submodule
        would replace the lazy name by the module).
    """
    # a lazy name that is also a submodule's would become that module once the submodule is imported
    shadowed = {entry.partition(".")[0] for directory in getattr(sys.modules.get(package), "__path__", ())
                for entry in os.listdir(directory)}
    home: dict[str, str | None] = {}
    for module, names in attributes.items():
        for name in names:
            if name in home:
                raise ValueError(f"{package}: {name!r} is exported twice")
            if name in shadowed:
                raise ValueError(f"{package}: {name!r} is also a submodule; import it eagerly")
            home[name] = module
    for name in submodules:
        if name in home:
            raise ValueError(f"{package}: {name!r} is exported twice")
        home[name] = None

    def __getattr__(name: str) -> Any:
        if name not in home:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = home[name]
        value = import_module(f".{name}", package) if module is None else getattr(import_module(module, package), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(home))

    return __getattr__, __dir__
