"""Prompt files: one TOML file per step and language, versioned, overridable.

Built-in prompts live in ``ragmeter/judges/prompts/<lang>/<step>.toml``. Each file has::

    version = "1"
    system = \"\"\"...\"\"\"
    user = \"\"\"... {answer} ...\"\"\"      # {name} placeholders; other braces are left alone
    schema = '''{ JSON schema of the reply }'''

A user override directory has the same layout (``<dir>/<lang>/<step>.toml``); a file there replaces
the built-in one key by key (keys it leaves out come from the built-in file), and its version gets
the suffix ``+user:<first 8 hex of the file's SHA-256>`` so run records and cache keys tell them apart.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragmeter._toml import read_toml
from ragmeter.errors import ConfigError

PROMPTS_DIR = Path(__file__).with_name("prompts")
PROMPT_STEPS: tuple[str, ...] = (
    "extract_claims",
    "verify_claims",
    "generate_questions",
    "repair",
    # issue 3: the LLM judge's remaining steps and its combined steps (see judges/llm.py)
    "rate_sentences",
    "rate_chunks",
    "grade",
    "compare",
    "analyse_contexts",
    "extract_claims_many",
    # test-set generation (ragmeter.testset): the same files, format and override rules
    "testset_questions",
    "testset_multi_hop",
    "testset_closed_book",
)
#: placeholders a prompt's ``user`` template must contain
REQUIRED_PLACEHOLDERS: Mapping[str, frozenset[str]] = {
    "extract_claims": frozenset({"answer"}),
    "verify_claims": frozenset({"contexts", "claims"}),
    "generate_questions": frozenset({"answer"}),
    "repair": frozenset({"error"}),
    "rate_sentences": frozenset({"question", "sentences"}),
    "rate_chunks": frozenset({"question", "chunks", "target"}),
    "grade": frozenset({"criteria", "inputs"}),
    "compare": frozenset({"question", "answer_a", "answer_b"}),
    "analyse_contexts": frozenset({"question", "chunks", "target"}),
    "extract_claims_many": frozenset({"texts"}),
    "testset_questions": frozenset({"context", "n", "kind_instructions", "language"}),
    "testset_multi_hop": frozenset({"context_a", "context_b", "n", "language"}),
    "testset_closed_book": frozenset({"question"}),
}
_PLACEHOLDER_RE = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True)
class Prompt:
    step: str
    lang: str
    version: str
    system: str
    user: str
    schema: Mapping[str, Any] | None = None
    source: str = field(default="", compare=False)

    @property
    def placeholders(self) -> frozenset[str]:
        return frozenset(_PLACEHOLDER_RE.findall(self.user))

    def render(self, **values: Any) -> str:
        """Fill ``{name}`` placeholders in one pass (inserted text is never re-substituted; braces
        that are not a known placeholder, e.g. in JSON examples, are kept)."""

        def sub(m: re.Match[str]) -> str:
            key = m.group(1)
            return str(values[key]) if key in values else m.group(0)

        return _PLACEHOLDER_RE.sub(sub, self.user)


def normalize_lang(lang: str | None) -> str:
    """``"zh-CN"``, ``"zh_Hans"`` -> ``"zh"``; ``"en-US"`` -> ``"en"``; others lower-cased."""
    if not lang:
        return "en"
    return re.split(r"[-_]", lang.strip().lower(), maxsplit=1)[0] or "en"


def available_languages() -> list[str]:
    return sorted(p.name for p in PROMPTS_DIR.iterdir() if p.is_dir() and any(p.glob("*.toml")))


def _read_toml(path: Path) -> tuple[dict[str, Any], bytes]:
    return read_toml(path, "prompt file")


def load_prompt(step: str, lang: str = "en", overrides_dir: str | Path | None = None) -> Prompt:
    """The prompt for ``step`` in ``lang``, with the user's override applied when there is one."""
    if step not in PROMPT_STEPS:
        raise ConfigError(f"unknown prompt step {step!r}; known: {', '.join(PROMPT_STEPS)}")
    lang = normalize_lang(lang)
    builtin = PROMPTS_DIR / lang / f"{step}.toml"
    override: Path | None = None
    if overrides_dir is not None:
        odir = Path(overrides_dir)
        if not odir.is_dir():
            raise ConfigError(f"prompt override directory {odir} does not exist")
        candidate = odir / lang / f"{step}.toml"
        if candidate.is_file():
            override = candidate
    if not builtin.is_file() and override is None:
        raise ConfigError(
            f"no {step!r} prompt for language {lang!r}; "
            f"built-in languages: {', '.join(available_languages())}"
        )
    data: dict[str, Any] = {}
    source = str(builtin)
    if builtin.is_file():
        data, _ = _read_toml(builtin)
    version = str(data.get("version", "0"))
    if override is not None:
        odata, raw = _read_toml(override)
        unknown = sorted(set(odata) - {"version", "system", "user", "schema"})
        if unknown:
            raise ConfigError(f"prompt file {override}: unknown key(s) {', '.join(unknown)}")
        data.update(odata)
        version = f"{odata.get('version', version)}+user:{hashlib.sha256(raw).hexdigest()[:8]}"
        source = str(override)
    return _build(step, lang, version, data, source)


def _build(step: str, lang: str, version: str, data: Mapping[str, Any], source: str) -> Prompt:
    for key in ("system", "user"):
        if not isinstance(data.get(key), str):
            raise ConfigError(f"prompt file {source}: {key!r} must be a string")
    schema: Mapping[str, Any] | None = None
    raw_schema = data.get("schema")
    if raw_schema is not None:
        if isinstance(raw_schema, str):
            try:
                schema = json.loads(raw_schema)
            except ValueError as e:
                raise ConfigError(f"prompt file {source}: 'schema' is not valid JSON: {e}") from e
        elif isinstance(raw_schema, Mapping):
            schema = dict(raw_schema)
        if not isinstance(schema, Mapping):
            raise ConfigError(f"prompt file {source}: 'schema' must be a JSON object")
    elif step != "repair":
        raise ConfigError(f"prompt file {source}: 'schema' is required for step {step!r}")
    prompt = Prompt(step, lang, version, data["system"].strip(), data["user"].strip(), schema, source)
    missing = REQUIRED_PLACEHOLDERS.get(step, frozenset()) - prompt.placeholders
    if missing:
        raise ConfigError(
            f"prompt file {source}: the user template lacks placeholder(s) "
            + ", ".join("{" + m + "}" for m in sorted(missing))
        )
    return prompt
