"""Reading the package's TOML data files (prompts, metric descriptions) with one error shape."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from ragmeter.errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10
    import tomli as tomllib


def read_toml(path: Path, what: str) -> tuple[dict[str, Any], bytes]:
    """``(data, raw bytes)`` of a UTF-8 TOML file; ``ConfigError("cannot read <what> <path>: ...")``."""
    try:
        raw = path.read_bytes()
        return tomllib.loads(raw.decode("utf-8")), raw
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise ConfigError(f"cannot read {what} {path}: {e}") from e
