"""Lazy package exports (PEP 562): a package names what it exports and where each name lives,
and a name's module is imported on first use. ``import ragmeter`` and the command line's
start-up then load only what the chosen command, metrics and judge need.

Usage, at the end of a package's ``__init__.py``::

    __getattr__, __dir__ = lazy_exports(__name__, {"Result": "ragmeter.run.result", ...})

(with the same names imported under ``if TYPE_CHECKING:`` for type checkers).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, names: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: each of ``names`` is imported from its module
    on first access and then kept in the package's namespace."""

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(names))

    return __getattr__, __dir__
