"""The test-set generation prompts: ``judges/prompts/<lang>/testset_*.toml``, overridable.

They are judge prompts like any other (:func:`ragmeter.judges.prompts.load_prompt`: same file
format, override rules and versions); this module only adds the fallback to English for a
language that has no test-set prompt of its own.
"""

from __future__ import annotations

from pathlib import Path

from ragmeter.errors import ConfigError
from ragmeter.judges.prompts import PROMPTS_DIR, REQUIRED_PLACEHOLDERS, Prompt, load_prompt, normalize_lang

__all__ = ["TESTSET_STEPS", "load_testset_prompt"]

#: step -> placeholders its user template must contain
TESTSET_STEPS = {k: v for k, v in REQUIRED_PLACEHOLDERS.items() if k.startswith("testset_")}


def load_testset_prompt(step: str, lang: str = "en", overrides_dir: str | Path | None = None) -> Prompt:
    """The prompt for a test-set step in ``lang`` (English when the language has none)."""
    if step not in TESTSET_STEPS:
        raise ConfigError(f"unknown test-set prompt {step!r}; known: {', '.join(TESTSET_STEPS)}")
    lang = normalize_lang(lang)
    has_own = (PROMPTS_DIR / lang / f"{step}.toml").is_file() or (
        overrides_dir is not None and (Path(overrides_dir) / lang / f"{step}.toml").is_file()
    )
    return load_prompt(step, lang if has_own else "en", overrides_dir)
