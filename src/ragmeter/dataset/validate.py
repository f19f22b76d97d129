"""One raw record -> one :class:`Sample`, or a :class:`DatasetError` naming file, row and field.

Loading is permissive about *which* fields a row has: a row only fails here when a value it has is
unusable (wrong type, invalid UTF-8, ...), or when it lacks a field named in ``required_fields``.
What the chosen metrics need is checked afterwards with :func:`validate_for` / :func:`require`, so
the runner can load everything once and then check each metric's ``requires``.

Rules for values:

* missing: an absent column, ``None``, a float NaN, ``pandas.NA``/``NaT``, an empty CSV cell;
* text fields (``question``, ``answer``, ``reference``) must be ``str`` (numbers and booleans are a
  type error); blank text is an "empty text" error only when the field is required;
* ``id`` may be text or a number (stringified; ``3.0`` -> ``"3"``); no id -> the row number;
* list fields (``contexts``, ``reference_contexts``, ``context_ids``, ``reference_context_ids``) take a
  list of strings (tuples and NumPy arrays too), a JSON- or Python-encoded list in a string (CSV
  cells: ``["a", "b"]`` or ``['a', 'b']``) or a single string (one context). Id lists accept numbers;
* any text (fields, list items, metadata) holding invalid UTF-8 or a lone surrogate is an error.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragmeter.dataset.columns import ColumnResolver, normalize_column
from ragmeter.dataset.sample import CONVERSATION_FIELDS, SAMPLE_FIELDS, Dataset, Sample
from ragmeter.dataset.values import (
    as_text,
    convert_id,
    convert_list,
    convert_text,
    is_missing,
    jsonable,
    parse_encoded_list,
    short_repr,
    text_problem,
    to_list,
    type_name,
)
from ragmeter.errors import ConfigError, DatasetError

TEXT_FIELDS: tuple[str, ...] = ("question", "answer", "reference")
LIST_FIELDS: tuple[str, ...] = ("contexts", "reference_contexts", "context_ids", "reference_context_ids")
#: the fields a row's columns fill (the others come from conversations: ragmeter.dataset.conversations)
RECORD_FIELDS: tuple[str, ...] = (*TEXT_FIELDS, *LIST_FIELDS)
ID_LIST_FIELDS: tuple[str, ...] = ("context_ids", "reference_context_ids")

#: How many problems a :class:`DatasetErrors` message lists before "... and N more".
MAX_LISTED_PROBLEMS = 20


class DatasetErrors(DatasetError):
    """Several bad rows at once (``strict=True``, or no usable row at all). ``problems`` lists each."""

    def __init__(
        self, problems: Sequence[DatasetError], *, file: str | None = None, summary: str = ""
    ) -> None:
        self.problems: list[DatasetError] = list(problems)
        n = len(self.problems)
        head = summary or f"{n} bad row{'s' if n != 1 else ''}"
        lines = [f"  {p}" for p in self.problems[:MAX_LISTED_PROBLEMS]]
        if n > MAX_LISTED_PROBLEMS:
            lines.append(f"  ... and {n - MAX_LISTED_PROBLEMS} more")
        message = head + (":\n" + "\n".join(lines) if lines else "")
        super().__init__(message, file=file)


@dataclass(frozen=True)
class LoadedDataset(Dataset):
    """A :class:`Dataset` that remembers the source row of each sample (``rows[i]`` for
    ``samples[i]``: the line number for JSONL, the record number for the other sources).

    ``generated_ids``: the ids the loader filled in from row numbers because the row had no id
    (see :mod:`ragmeter.dataset.keys`: such samples are matched across runs by their text)."""

    rows: tuple[int, ...] = ()
    generated_ids: frozenset[str] = frozenset()


def rows_of(dataset: Sequence[Sample]) -> tuple[int, ...]:
    """Source rows of the samples: ``dataset.rows`` when the loader recorded them, else 1..n."""
    rows = getattr(dataset, "rows", None)
    if rows and len(rows) == len(dataset):
        return tuple(rows)
    return tuple(range(1, len(dataset) + 1))


# --------------------------------------------------------------------------- records


def _lack(sample: Sample, name: str, present: Iterable[str] | None) -> str | None:
    """What is wrong with required field ``name`` ("missing", "empty text", ...), or None."""
    value = getattr(sample, name)
    known_present = present is not None and name in present
    if value is None:
        return "missing"
    if isinstance(value, str) and not value.strip():
        if known_present:
            return "empty text"
        return "missing or empty text" if present is None else "missing"
    if isinstance(value, tuple):
        if not value:
            if known_present:
                return "an empty list"
            return "missing or an empty list" if present is None else "missing"
        if name in ("contexts", "reference_contexts") and not any(c.strip() for c in value):
            return "empty text in every item"
    return None


def missing_problem(
    sample: Sample,
    required_fields: Iterable[str] | Mapping[str, Sequence[str]],
    *,
    file: str | None,
    row: int,
    present: Iterable[str] | None = None,
    columns: Mapping[str, str] | None = None,
) -> DatasetError | None:
    """One DatasetError naming every required field the sample lacks (``field`` is the first), or None.

    ``required_fields`` may map each field to the metrics that need it, for the message. ``present``
    (the fields the raw record had a value for, when known) tells "missing" from "empty text";
    ``columns`` (field -> input column) names the column in the error where the data has one."""
    present_set = set(present) if present is not None else None
    lacking: list[tuple[str, str]] = []
    for name in list(required_fields):
        what = _lack(sample, name, present_set)
        if what:
            lacking.append((name, what))
    if not lacking:
        return None
    parts = []
    for name, what in lacking:
        part = f"{name} is {what}"
        if isinstance(required_fields, Mapping) and required_fields.get(name):
            part += f" (needed by {', '.join(required_fields[name])})"
        parts.append(part)
    first, what = lacking[0]
    head = "empty text" if what.startswith("empty text") else "missing required field"
    where = (columns or {}).get(first, first) if present_set and first in present_set else first
    return DatasetError(f"{head}: {'; '.join(parts)}", file=file, row=row, field=where)


def check_required_names(required_fields: Iterable[str]) -> tuple[str, ...]:
    names = tuple(required_fields)
    unknown = [n for n in names if n not in SAMPLE_FIELDS]
    if unknown:
        raise ConfigError(
            f"unknown sample field(s) {', '.join(map(repr, unknown))}; fields: {', '.join(SAMPLE_FIELDS)}"
        )
    return names


def to_sample(
    record: Mapping[str, Any],
    *,
    row: int,
    file: str | None = None,
    resolver: ColumnResolver | None = None,
    required_fields: Iterable[str] = (),
) -> Sample:
    """Build a Sample from one raw record, or raise a DatasetError naming file, row and field.

    ``row`` is 1-based (the line number for JSONL, the record number elsewhere). Without an id
    column, the sample's id is ``str(row)``. A ``metadata`` column holding an object (ours, as
    written by ``Sample.to_dict``) is merged into the metadata rather than nested.
    """
    if not isinstance(record, Mapping):
        raise DatasetError(
            f"expected an object (a record), got {type_name(record)} {short_repr(record)}", file=file, row=row
        )
    resolver = resolver or ColumnResolver()
    for key in record:
        if not isinstance(key, str):
            raise DatasetError(f"column names must be text, got {short_repr(key)}", file=file, row=row)
        problem = text_problem(key)
        if problem:
            raise DatasetError(f"column name: {problem}", file=file, row=row, field=key)
    values, extra = resolver.split(record)
    kwargs: dict[str, Any] = {}
    metadata: dict[str, Any] = {}
    for field, (column, value) in values.items():
        if field == "id":
            kwargs["id"] = convert_id(value, file=file, row=row, column=column)
        elif field in LIST_FIELDS:
            kwargs[field] = convert_list(
                value, file=file, row=row, column=column, ids=field in ID_LIST_FIELDS
            )
        elif field == "reference" and _is_reference_list(value, column):
            # ground_truths (old Ragas): a list of references -> the first; all kept in metadata
            items = convert_list(value, file=file, row=row, column=column, ids=False) or ()
            kwargs[field] = items[0] if items else None
            if len(items) > 1:
                metadata[column] = list(items)
        else:
            kwargs[field] = convert_text(value, file=file, row=row, column=column)
    nested = extra.pop("metadata", None)
    if isinstance(nested, str) and nested.strip().startswith("{"):
        try:
            nested = json.loads(nested)
        except ValueError:
            pass
    if isinstance(nested, Mapping):
        metadata.update(jsonable(nested, file=file, row=row, column="metadata"))
    elif not is_missing(nested):
        metadata["metadata"] = jsonable(nested, file=file, row=row, column="metadata")
    for column, value in extra.items():
        metadata[column] = jsonable(value, file=file, row=row, column=column)
    if kwargs.get("question") is None:
        kwargs.pop("question", None)
    if kwargs.get("contexts") is None:
        kwargs.pop("contexts", None)
    if kwargs.get("id") is None:
        kwargs["id"] = str(row)
    sample = Sample(**kwargs, metadata=metadata)
    present = [f for f, v in kwargs.items() if v is not None]
    columns = {f: c for f, (c, _) in values.items()}
    lacking = missing_problem(sample, required_fields, file=file, row=row, present=present, columns=columns)
    if lacking:
        raise lacking
    return sample


def _is_reference_list(value: Any, column: str) -> bool:
    value = as_text(value)
    if is_missing(value):
        return False
    if isinstance(value, str):
        return normalize_column(column) == "ground_truths" and parse_encoded_list(value) is not None
    return isinstance(to_list(value), list)


def _check_messages(sample: Sample, *, row: int, file: str | None) -> None:
    """A Sample built in code: its conversation fields hold text only (see messages.py)."""
    if sample.conversation_id is not None and not isinstance(sample.conversation_id, str):
        raise DatasetError(
            f"expected text, got {type_name(sample.conversation_id)}", file=file, row=row, field="conversation_id"
        )
    if sample.turn is not None and (isinstance(sample.turn, bool) or not isinstance(sample.turn, int)):
        raise DatasetError(f"expected an integer, got {type_name(sample.turn)}", file=file, row=row, field="turn")
    for name in ("history", "messages"):
        for i, m in enumerate(getattr(sample, name) or ()):
            texts = [("content", m.content), ("reference", m.reference)]
            texts += [(f"contexts[{j}]", c) for j, c in enumerate(m.contexts)]
            texts += [(f"tool_calls[{j}].arguments", c.arguments) for j, c in enumerate(m.tool_calls)]
            for key, text in texts:
                if text is None:
                    continue
                at = f"{name}[{i}].{key}"
                if not isinstance(text, str):
                    raise DatasetError(f"expected text, got {type_name(text)}", file=file, row=row, field=at)
                problem = text_problem(text)
                if problem:
                    raise DatasetError(problem, file=file, row=row, field=at)


def check_sample(
    sample: Sample, *, row: int, file: str | None = None, required_fields: Iterable[str] = ()
) -> Sample:
    """Validate a Sample built in code (types, UTF-8, required fields); fill a missing id with the row."""
    if not isinstance(sample, Sample):
        raise DatasetError(f"expected a Sample, got {type_name(sample)}", file=file, row=row)
    record = {name: getattr(sample, name) for name in RECORD_FIELDS}
    if sample.id is not None:
        record["id"] = sample.id
    record["metadata"] = dict(sample.metadata)
    for name in ("answer", "reference", "reference_contexts", "context_ids", "reference_context_ids"):
        if record[name] is None:
            del record[name]
    if not isinstance(sample.question, str):
        raise DatasetError(
            f"expected text, got {type_name(sample.question)}", file=file, row=row, field="question"
        )
    if isinstance(sample.contexts, str):
        raise DatasetError(
            "expected a list of strings, got a single str", file=file, row=row, field="contexts"
        )
    _check_messages(sample, row=row, file=file)
    checked = to_sample(record, row=row, file=file, required_fields=required_fields)
    conversation = {name: getattr(sample, name) for name in CONVERSATION_FIELDS}
    if any(v is not None for v in conversation.values()):
        checked = dataclasses.replace(checked, **conversation)
    if sample.id is not None and checked == sample:
        return sample
    return checked


# --------------------------------------------------------------------------- per-metric checks


def _indexed_problems(
    samples_with_rows: Iterable[tuple[int, Sample]] | Sequence[Sample],
    required_fields: Iterable[str] | Mapping[str, Sequence[str]],
    file: str | None,
) -> list[tuple[int, DatasetError]]:
    check_required_names(required_fields)
    if isinstance(samples_with_rows, Dataset):
        file = file if file is not None else samples_with_rows.source
    if isinstance(samples_with_rows, Sequence) and all(isinstance(s, Sample) for s in samples_with_rows):
        samples: Sequence[Sample] = samples_with_rows  # type: ignore[assignment]
        items: Iterable[tuple[int, Sample]] = zip(rows_of(samples), samples, strict=True)
    else:
        items = samples_with_rows  # type: ignore[assignment]
    out: list[tuple[int, DatasetError]] = []
    for index, (row, sample) in enumerate(items):
        problem = missing_problem(sample, required_fields, file=file, row=row)
        if problem:
            out.append((index, problem))
    return out


def validate_for(
    samples_with_rows: Iterable[tuple[int, Sample]] | Sequence[Sample],
    required_fields: Iterable[str] | Mapping[str, Sequence[str]],
    *,
    file: str | None = None,
) -> list[DatasetError]:
    """Problems (one per sample) for samples that lack a field in ``required_fields``.

    ``samples_with_rows`` is ``[(row, sample), ...]`` or a Dataset (rows from :func:`rows_of`; ``file``
    defaults to its ``source``). ``required_fields`` may be ``{field: [metric names]}`` so the message
    says which metric needs the field. Unknown field names are a ConfigError.
    """
    return [p for _, p in _indexed_problems(samples_with_rows, required_fields, file)]


def require(
    dataset: Dataset,
    required_fields: Iterable[str] | Mapping[str, Sequence[str]],
    *,
    strict: bool = False,
) -> Dataset:
    """Drop the samples that lack a required field; their problems join ``dataset.problems``.

    Returns a :class:`LoadedDataset` (rows kept). ``strict=True`` raises :class:`DatasetErrors`
    instead, so a run stops before any judge call."""
    indexed = _indexed_problems(dataset, required_fields, None)
    if not indexed:
        return dataset
    problems = [p for _, p in indexed]
    if strict:
        raise DatasetErrors(problems, file=dataset.source)
    bad = {i for i, _ in indexed}
    rows = rows_of(dataset)
    keep = [i for i in range(len(dataset)) if i not in bad]
    return LoadedDataset(
        samples=tuple(dataset[i] for i in keep),
        source=dataset.source,
        problems=(*dataset.problems, *problems),
        rows=tuple(rows[i] for i in keep),
        generated_ids=getattr(dataset, "generated_ids", frozenset()),
    )


__all__ = [
    "LIST_FIELDS",
    "TEXT_FIELDS",
    "DatasetErrors",
    "LoadedDataset",
    "check_sample",
    "is_missing",
    "jsonable",
    "missing_problem",
    "require",
    "rows_of",
    "text_problem",
    "to_sample",
    "validate_for",
]
