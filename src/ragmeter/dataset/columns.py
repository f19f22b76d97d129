"""Column names -> :class:`~ragmeter.dataset.sample.Sample` fields.

Three vocabularies are read unchanged, plus a user mapping that overrides them:

==========================  ==========================  =======================  ====================
Sample field                ours                        Ragas                    LlamaIndex
==========================  ==========================  =======================  ====================
``id``                      ``id``, ``sample_id``
``question``                ``question``                ``user_input``           ``query``
``contexts``                ``contexts``                ``retrieved_contexts``   ``contexts``
``answer``                  ``answer``                  ``response``             ``response``
``reference``               ``reference``,              ``reference``            ``reference_answer``
                            ``ground_truth``,
                            ``ground_truths`` (list)
``reference_contexts``      ``reference_contexts``      ``reference_contexts``   ``reference_contexts``
``context_ids``             ``context_ids``             ``retrieved_context_ids``
``reference_context_ids``   ``reference_context_ids``   ``reference_context_ids``
==========================  ==========================  =======================  ====================

Precedence, for each field: a user mapping (``--map question=my_col``) first; then the aliases in
the order above (our name before Ragas before LlamaIndex); then the same names compared
case-insensitively with spaces and dashes read as underscores (``"Question"``, ``"ground truth"``).
The first column found wins; any other column that would also have matched goes to ``metadata``
unchanged, as does every column that matches no field.

``ground_truths`` (old Ragas: a list of reference answers) gives ``reference`` its first item; when
the list holds more than one, the whole list is also kept in ``metadata["ground_truths"]``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ragmeter.dataset.sample import SAMPLE_FIELDS
from ragmeter.errors import ConfigError

#: Fields a column can be mapped to: ``id`` and the sample fields a row's columns fill (a
#: conversation's messages are read from their own columns: ragmeter.dataset.conversations).
MAPPABLE_FIELDS: tuple[str, ...] = (
    "id",
    *(f for f in SAMPLE_FIELDS if f not in ("messages", "history", "system_prompt")),
)

#: For each field, the column names read for it, highest precedence first.
FIELD_ALIASES: dict[str, tuple[str, ...]] = {
    "id": ("id", "sample_id"),
    "question": ("question", "user_input", "query"),
    "contexts": ("contexts", "retrieved_contexts"),
    "answer": ("answer", "response"),
    "reference": ("reference", "ground_truth", "reference_answer", "ground_truths"),
    "reference_contexts": ("reference_contexts",),
    "context_ids": ("context_ids", "retrieved_context_ids"),
    "reference_context_ids": ("reference_context_ids",),
}


def normalize_column(name: str) -> str:
    """Lower case, trimmed, spaces and dashes as underscores: ``" Ground-Truth "`` -> ``ground_truth``."""
    return "_".join(name.strip().lower().replace("-", " ").split())


def parse_mapping(items: Iterable[str] | Mapping[str, str] | None) -> dict[str, str]:
    """Parse ``["question=my_col", ...]`` (the CLI's repeatable ``--map``) into ``{field: column}``.

    A mapping given as a dict is checked the same way. Raises :class:`ConfigError` on a missing
    ``=``, an empty side, an unknown field or a field mapped twice.
    """
    if items is None:
        return {}
    pairs: list[tuple[str, str]] = []
    if isinstance(items, Mapping):
        for key, value in items.items():
            if not isinstance(key, str) or not isinstance(value, str):
                raise ConfigError(
                    f"column mapping must map field names to column names, got {key!r}: {value!r}"
                )
            pairs.append((key.strip(), value.strip()))
    else:
        if isinstance(items, str):
            items = [items]
        for item in items:
            if not isinstance(item, str) or "=" not in item:
                raise ConfigError(f"bad column mapping {item!r}: expected FIELD=COLUMN, e.g. question=my_col")
            key, _, value = item.partition("=")
            pairs.append((key.strip(), value.strip()))
    out: dict[str, str] = {}
    for key, value in pairs:
        if not key or not value:
            raise ConfigError(
                f"bad column mapping {key}={value}: expected FIELD=COLUMN, e.g. question=my_col"
            )
        if key not in MAPPABLE_FIELDS:
            hint = ""
            for field, aliases in FIELD_ALIASES.items():
                if key in aliases or normalize_column(key) in aliases:
                    hint = f" (did you mean {field!r}?)"
                    break
            raise ConfigError(
                f"unknown field {key!r} in column mapping{hint}; fields: {', '.join(MAPPABLE_FIELDS)}"
            )
        if key in out and out[key] != value:
            raise ConfigError(f"field {key!r} is mapped twice: to {out[key]!r} and to {value!r}")
        out[key] = value
    return out


def check_mapping(mapping: Mapping[str, str], columns: Iterable[str], *, source: str | None = None) -> None:
    """Raise :class:`ConfigError` when a mapped column is not among ``columns`` (the data's columns)."""
    present = list(dict.fromkeys(columns))
    missing = [(f, c) for f, c in mapping.items() if c not in present]
    if missing:
        field, column = missing[0]
        where = f" in {source}" if source else ""
        shown = ", ".join(repr(c) for c in present[:50]) or "(none)"
        if len(present) > 50:
            shown += f", ... ({len(present)} in all)"
        raise ConfigError(f"--map {field}={column}: no column {column!r}{where}; the columns are: {shown}")


class ColumnResolver:
    """Splits raw records into sample-field values and metadata, with a user mapping on top.

    Plans are cached per set of keys, so records with different keys (JSONL) cost one plan each.
    """

    def __init__(self, mapping: Mapping[str, str] | None = None) -> None:
        self.mapping: dict[str, str] = parse_mapping(mapping) if mapping else {}
        self._plans: dict[tuple[str, ...], dict[str, str]] = {}

    def plan(self, columns: Sequence[str]) -> dict[str, str]:
        """``{field: column}`` for records with these columns (fields without a column are absent)."""
        key = tuple(columns)
        cached = self._plans.get(key)
        if cached is not None:
            return cached
        present = set(columns)
        claimed = {c for c in self.mapping.values() if c in present}
        plan: dict[str, str] = {f: c for f, c in self.mapping.items() if c in present}
        normalized: dict[str, str] = {}
        for col in columns:
            if col not in claimed:
                normalized.setdefault(normalize_column(col), col)
        for field, aliases in FIELD_ALIASES.items():
            if field in self.mapping:
                continue
            chosen = next((a for a in aliases if a in present and a not in claimed), None)
            if chosen is None:
                chosen = next((normalized[a] for a in aliases if a in normalized), None)
                if chosen is not None and chosen in claimed:
                    chosen = None
            if chosen is not None:
                plan[field] = chosen
                claimed.add(chosen)
        self._plans[key] = plan
        return plan

    def split(self, record: Mapping[str, Any]) -> tuple[dict[str, tuple[str, Any]], dict[str, Any]]:
        """Return ``({field: (column, value)}, metadata)`` for one record."""
        plan = self.plan(list(record.keys()))
        used = {c: f for f, c in plan.items()}
        values: dict[str, tuple[str, Any]] = {}
        metadata: dict[str, Any] = {}
        for col, value in record.items():
            field = used.get(col)
            if field is None:
                metadata[col] = value
            else:
                values[field] = (col, value)
        return values, metadata


__all__ = [
    "FIELD_ALIASES",
    "MAPPABLE_FIELDS",
    "ColumnResolver",
    "check_mapping",
    "normalize_column",
    "parse_mapping",
]
