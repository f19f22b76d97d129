"""Metric descriptions per language: what ``ragmeter metrics [--lang LANG]`` prints.

One TOML file per language beside this module (``en.toml``, ``zh.toml``), the same layout as the
prompt files' one-file-per-language rule::

    version = "1"
    [labels]                       # the table's column labels
    metric = "..."  term = "..."  requires = "..."  steps = "..."  description = "..."  no_judge = "..."
    [metrics.faithfulness]
    term = "忠实度"                 # optional: the metric's name in that language
    description = "..."            # one line
    label_question = "..."         # optional: what the labelling page asks a person (one line)
    [label_page]                   # the labelling page's words ({name}: a value it fills in),
    question = "... {metric} ... {description}"   # and its question for a metric without one

The Chinese file is the single source of the Chinese metric terms: docs/zh/glossary.md is checked
against it by tests/docs/test_docs_commands.py. A metric without an entry (a user's own metric)
is described by the first line of its class docstring, and the labelling page asks about it with
``[label_page] question``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragmeter._toml import read_toml
from ragmeter.errors import ConfigError

DESCRIPTIONS_DIR = Path(__file__).parent
LABEL_KEYS: tuple[str, ...] = ("metric", "term", "requires", "steps", "description", "no_judge")


@dataclass(frozen=True)
class MetricText:
    """A metric's name in a language (None when the language file gives none) and one-line description."""

    description: str
    term: str | None = None
    label_question: str | None = None


@dataclass(frozen=True)
class MetricTexts:
    """The contents of one language file."""

    lang: str
    labels: Mapping[str, str]
    metrics: Mapping[str, MetricText]
    source: str
    label_page: Mapping[str, str] = field(default_factory=dict)

    def describe(self, name: str, cls: type | None = None) -> MetricText:
        """The entry for ``name``; else the first docstring line of ``cls`` (user metrics)."""
        entry = self.metrics.get(name)
        if entry is not None:
            return entry
        doc = (getattr(cls, "__doc__", None) or "").strip().splitlines()
        return MetricText(description=doc[0].strip() if doc else "")

    def label_question(self, name: str, cls: type | None = None) -> str:
        """What the labelling page asks a person about metric ``name``: its ``label_question``,
        else ``[label_page] question`` filled with the metric's term (or name) and description."""
        entry = self.describe(name, cls)
        if entry.label_question:
            return entry.label_question
        return fill(
            self.label_page.get("question", "{metric}: {description}"),
            metric=entry.term or name,
            description=entry.description or name,
        )


def fill(template: str, **values: object) -> str:
    """``template`` with each ``{name}`` replaced by ``values[name]`` (others left as written)."""
    return re.sub(
        r"\{(\w+)\}", lambda m: str(values[m.group(1)]) if m.group(1) in values else m.group(0), template
    )


def description_languages() -> list[str]:
    """Languages that have a description file, sorted."""
    return sorted(p.stem for p in DESCRIPTIONS_DIR.glob("*.toml"))


@functools.cache
def load_descriptions(lang: str = "en") -> MetricTexts:
    """The metric descriptions of ``lang`` (``ConfigError`` for an unknown language or a bad file)."""
    path = DESCRIPTIONS_DIR / f"{lang}.toml"
    if not path.is_file():
        raise ConfigError(
            f"no metric descriptions for language {lang!r}; available: {', '.join(description_languages())}"
        )
    data, _ = read_toml(path, "metric description file")
    return _parse(lang, data, str(path))


def _parse(lang: str, data: Mapping[str, Any], source: str) -> MetricTexts:
    unknown = sorted(set(data) - {"version", "labels", "metrics", "label_page"})
    if unknown:
        raise ConfigError(f"{source}: unknown key(s) {', '.join(unknown)}")
    labels = data.get("labels")
    if not isinstance(labels, Mapping) or any(not isinstance(labels.get(k), str) for k in LABEL_KEYS):
        raise ConfigError(f"{source}: [labels] must give the strings {', '.join(LABEL_KEYS)}")
    raw_metrics = data.get("metrics")
    if not isinstance(raw_metrics, Mapping):
        raise ConfigError(f"{source}: no [metrics.NAME] tables")
    metrics: dict[str, MetricText] = {}
    for name, entry in raw_metrics.items():
        where = f"{source}: [metrics.{name}]"
        if not isinstance(entry, Mapping):
            raise ConfigError(f"{where} must be a table")
        extra = sorted(set(entry) - {"term", "description", "label_question"})
        if extra:
            raise ConfigError(f"{where}: unknown key(s) {', '.join(extra)}")
        description, term = entry.get("description"), entry.get("term")
        question = entry.get("label_question")
        for key, text in (("description", description), ("label_question", question)):
            if key == "label_question" and text is None:
                continue
            if not isinstance(text, str) or not text.strip() or "\n" in text.strip():
                raise ConfigError(f"{where}: {key!r} must be one non-empty line")
        if term is not None and (not isinstance(term, str) or not term.strip()):
            raise ConfigError(f"{where}: 'term' must be a non-empty string")
        metrics[name] = MetricText(
            description=str(description).strip(),
            term=None if term is None else term.strip(),
            label_question=None if question is None else str(question).strip(),
        )
    page = data.get("label_page", {})
    if not isinstance(page, Mapping) or any(not isinstance(v, str) for v in page.values()):
        raise ConfigError(f"{source}: [label_page] must hold strings only")
    return MetricTexts(lang=lang, labels=dict(labels), metrics=metrics, source=source, label_page=dict(page))
