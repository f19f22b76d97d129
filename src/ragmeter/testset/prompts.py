"""The test-set generation prompts: ``judges/prompts/<lang>/testset_*.toml``, overridable.

Same file format and override rules as the judge prompts (:mod:`ragmeter.judges.prompts`): a file
``<dir>/<lang>/testset_questions.toml`` in the judge's ``prompts_dir`` replaces the built-in one
key by key, and its version gets ``+user:<sha256 prefix>``.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ragmeter.errors import ConfigError
from ragmeter.judges.prompts import PROMPTS_DIR, Prompt, normalize_lang

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10
    import tomli as tomllib

__all__ = ["TESTSET_STEPS", "load_testset_prompt"]

#: step -> placeholders its user template must contain
TESTSET_STEPS: Mapping[str, frozenset[str]] = {
    "testset_questions": frozenset({"context", "n", "kind_instructions", "language"}),
    "testset_multi_hop": frozenset({"context_a", "context_b", "n", "language"}),
    "testset_closed_book": frozenset({"question"}),
}


def _read(path: Path) -> tuple[dict[str, Any], bytes]:
    try:
        raw = path.read_bytes()
        return tomllib.loads(raw.decode("utf-8")), raw
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise ConfigError(f"cannot read prompt file {path}: {e}") from e


def load_testset_prompt(step: str, lang: str = "en", overrides_dir: str | Path | None = None) -> Prompt:
    """The prompt for a test-set step in ``lang`` (English when the language has none)."""
    if step not in TESTSET_STEPS:
        raise ConfigError(f"unknown test-set prompt {step!r}; known: {', '.join(TESTSET_STEPS)}")
    lang = normalize_lang(lang)
    builtin = PROMPTS_DIR / lang / f"{step}.toml"
    override = Path(overrides_dir) / lang / f"{step}.toml" if overrides_dir is not None else None
    if not builtin.is_file() and not (override is not None and override.is_file()):
        lang = "en"
        builtin = PROMPTS_DIR / "en" / f"{step}.toml"
        override = Path(overrides_dir) / "en" / f"{step}.toml" if overrides_dir is not None else None
    data, _ = _read(builtin)
    version = str(data.get("version", "0"))
    source = str(builtin)
    if override is not None and override.is_file():
        odata, raw = _read(override)
        data.update(odata)
        version = f"{odata.get('version', version)}+user:{hashlib.sha256(raw).hexdigest()[:8]}"
        source = str(override)
    for key in ("system", "user"):
        if not isinstance(data.get(key), str):
            raise ConfigError(f"prompt file {source}: {key!r} must be a string")
    raw_schema = data.get("schema")
    try:
        schema = json.loads(raw_schema) if isinstance(raw_schema, str) else raw_schema
    except ValueError as e:
        raise ConfigError(f"prompt file {source}: 'schema' is not valid JSON: {e}") from e
    if not isinstance(schema, Mapping):
        raise ConfigError(f"prompt file {source}: 'schema' must be a JSON object")
    prompt = Prompt(step, lang, version, data["system"].strip(), data["user"].strip(), dict(schema), source)
    missing = TESTSET_STEPS[step] - prompt.placeholders
    if missing:
        raise ConfigError(
            f"prompt file {source}: the user template lacks placeholder(s) "
            + ", ".join("{" + m + "}" for m in sorted(missing))
        )
    return prompt
