"""Load ``module:attribute`` (the CLI's ``--pipeline`` / ``--retriever``)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

from ragmeter.errors import ConfigError

__all__ = ["load_callable"]


def load_callable(spec: str, *, search_dir: str | Path | None = None) -> Any:
    """Import ``module:attribute`` (``attribute`` may be dotted). The current directory (or
    ``search_dir``) is put on ``sys.path`` first, so a ``my_rag.py`` next to the data is found.
    A zero-argument factory is not called: name the function (or object) that answers a question."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ConfigError(f"{spec!r} must be module:function, e.g. my_rag:answer")
    where = str(Path(search_dir or Path.cwd()).resolve())
    if where not in sys.path:
        sys.path.insert(0, where)
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as e:
        raise ConfigError(f"cannot import module {module_name!r} (from {spec!r}): {e}") from e
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ConfigError(f"module {module_name!r} has no attribute {attr!r}") from None
    return obj
