"""``load_dataset``: every input ragmeter reads, turned into a :class:`Dataset`.

Sources: a path to ``.jsonl``/``.ndjson``, ``.json``, ``.csv``/``.tsv``, ``.parquet``; a pandas
DataFrame; a list of dicts, of :class:`Sample`, or of pydantic models; a dict of columns; a
:class:`Dataset`; a Ragas ``EvaluationDataset`` (``.samples`` of models, or ``to_pandas()``); a
LlamaIndex ``LabelledRagDataset`` (``.examples``); a list of LlamaIndex ``EvaluationResult``, or the
``{evaluator name: [EvaluationResult, ...]}`` that its ``BatchEvalRunner`` returns (query, contexts
and response become the sample; each evaluator's score, passing, feedback and invalid reason go to
``metadata`` as ``"<name>.score"`` and so on). Ragas and LlamaIndex are detected by duck typing and
never imported.

A judgement file (``data/README.md`` format) is expanded: a point becomes one sample with the
judgement's id, a pair two samples with ids ``"<id>/a"`` and ``"<id>/b"``; the metadata carries
``judgement_id``, ``aspect``, ``kind``, ``variant``, ``preferred`` / ``label``, ``label_kind``.

A conversation row (the OpenAI chat format, a Ragas ``MultiTurnSample``, a DeepEval conversational
test case; :mod:`ragmeter.dataset.conversations`) becomes a conversation sample and one sample per
answered turn with contexts; ``limit`` counts it as one row.

Bad rows: by default each is skipped and its :class:`DatasetError` (file, row, field) is kept in
``Dataset.problems``; ``strict=True`` raises :class:`DatasetErrors` listing every problem. A source
with no usable row raises either way. Duplicate ids: the later row is a problem.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from ragmeter.dataset.columns import ColumnResolver, check_mapping
from ragmeter.dataset.conversations import conversation_format, read_conversation
from ragmeter.dataset.judgements import Judgements, is_judgement_record, load_judgements
from ragmeter.dataset.readers import (
    Item,
    is_dataframe,
    reader_for,
    records_from_dataframe,
    records_from_json_value,
)
from ragmeter.dataset.sample import Dataset, Sample
from ragmeter.dataset.validate import (
    DatasetErrors,
    LoadedDataset,
    check_required_names,
    check_sample,
    require,
    rows_of,
    to_sample,
)
from ragmeter.dataset.values import as_text, is_missing
from ragmeter.errors import ConfigError, DatasetError

DataSource = Any  # str | Path | DataFrame | Iterable[Mapping | Sample] | Dataset | Ragas / LlamaIndex objects


class _Judgements(Exception):
    """Internal signal: the file turned out to be a judgement file."""


def _dump(obj: Any) -> Any:
    """A record from a model object: pydantic v2 ``model_dump()``, v1 ``dict()``, a dataclass's
    fields (DeepEval's older test cases); else unchanged."""
    if isinstance(obj, (Mapping, Sample)):
        return obj
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return dataclasses.asdict(obj)
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        return dump()
    legacy = getattr(obj, "dict", None)
    if callable(legacy):
        return legacy()
    return obj


def _model_items(objs: Iterable[Any]) -> Iterator[Item]:
    for i, obj in enumerate(objs, 1):
        yield i, _dump(obj)


_RESULT_FIELDS = ("score", "passing", "feedback", "invalid_result", "invalid_reason")


def _is_eval_result(obj: Any) -> bool:
    return all(hasattr(obj, f) for f in ("query", "response", *_RESULT_FIELDS)) and not isinstance(obj, Mapping)


def _batch_eval_records(results: Mapping[str, Any]) -> Iterator[Item]:
    """Records from ``BatchEvalRunner`` results: one per query, each evaluator's verdict in metadata."""
    lengths = {name: len(rows) for name, rows in results.items()}
    if len(set(lengths.values())) != 1:
        raise ConfigError(f"evaluation results of different lengths: {lengths}")
    for i, per_eval in enumerate(zip(*results.values(), strict=True), 1):
        first = per_eval[0]
        record: dict[str, Any] = {
            "question": first.query,
            "contexts": list(first.contexts or []),
            "answer": first.response,
        }
        for name, r in zip(results, per_eval, strict=True):
            record.update({f"{name}.{f}": getattr(r, f) for f in _RESULT_FIELDS})
        yield i, record


def _items_for(data: Any) -> tuple[str, Path | None, Iterator[Item]]:
    """(source label, path or None, items) for any supported input."""
    if isinstance(data, (str, os.PathLike)):
        path = Path(data)
        source = str(data)
        reader = reader_for(path, source)
        if not path.exists():
            raise DatasetError("file not found", file=source)
        if path.is_dir():
            raise DatasetError("is a directory, not a file", file=source)
        return source, path, reader(path, source)
    if is_dataframe(data):
        return "<dataframe>", None, records_from_dataframe(data, "<dataframe>")
    if isinstance(data, Mapping):
        values = list(data.values())
        if values and all(
            isinstance(v, (list, tuple)) and v and all(_is_eval_result(r) for r in v) for v in values
        ):
            return "<evaluation results>", None, _batch_eval_records(data)
        records = records_from_json_value(dict(data), "<records>")
        return "<records>", None, iter(enumerate(records, 1))
    label = f"<{type(data).__name__}>"
    if callable(getattr(data, "model_dump", None)) and (
        hasattr(data, "user_input") or hasattr(data, "turns")
    ):  # one Ragas MultiTurnSample / DeepEval ConversationalTestCase (a pydantic model iterates its fields)
        return label, None, _model_items([data])
    examples = getattr(data, "examples", None)  # LlamaIndex LabelledRagDataset
    if isinstance(examples, (list, tuple)):
        return label, None, _model_items(examples)
    samples = getattr(data, "samples", None)  # Ragas EvaluationDataset
    if isinstance(samples, (list, tuple)) and not isinstance(data, (list, tuple)):
        return label, None, _model_items(samples)
    to_pandas = getattr(data, "to_pandas", None)
    if callable(to_pandas):
        try:
            df = to_pandas()
        except ImportError as exc:
            raise ConfigError(f"{type(data).__name__}.to_pandas() needs pandas: pip install pandas") from exc
        return label, None, records_from_dataframe(df, label)
    if isinstance(data, Iterable) and not isinstance(data, (str, bytes)):
        items = list(data)
        label = "<samples>" if items and all(isinstance(s, Sample) for s in items) else "<records>"
        return label, None, _model_items(items)
    raise ConfigError(
        f"cannot load a dataset from {type(data).__name__}: pass a file path, a pandas DataFrame, "
        "a list of dicts or Samples, or a Ragas/LlamaIndex dataset"
    )


def _expand(judgements: Judgements) -> list[tuple[int, Sample]]:
    return [(j.row, s) for j in judgements for s in j.samples]


def load_dataset(
    data: DataSource,
    *,
    mapping: Mapping[str, str] | None = None,
    strict: bool = False,
    required_fields: Iterable[str] = (),
    limit: int | None = None,
) -> Dataset:
    """Load ``data`` into a :class:`Dataset` (a :class:`LoadedDataset`, which keeps each sample's row).

    ``mapping``: ``{field: column}`` overriding the built-in column names (see
    :mod:`ragmeter.dataset.columns`); a column that is not in the data is a ConfigError.
    ``required_fields``: rows lacking one of these fields are problems (use
    :func:`~ragmeter.dataset.validate.require` later for per-metric needs).
    ``limit``: stop after this many samples.
    ``strict``: raise :class:`DatasetErrors` (all problems) instead of skipping bad rows.
    """
    required = check_required_names(required_fields)
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 1):
        raise ConfigError(f"limit must be a positive integer, got {limit!r}")
    resolver = ColumnResolver(mapping)

    if isinstance(data, Dataset):
        if resolver.mapping:
            raise ConfigError("a column mapping applies to tables and records, not to a Dataset")
        ds = require(data, required, strict=strict) if required else data
        if limit is not None and len(ds) > limit:
            rows = rows_of(ds)
            ds = LoadedDataset(
                samples=ds.samples[:limit],
                source=ds.source,
                problems=ds.problems,
                rows=rows[:limit],
                generated_ids=getattr(ds, "generated_ids", frozenset()),
            )
        return ds

    source, path, items = _items_for(data)
    try:
        rows_samples, problems, generated = _collect(
            items, source, resolver, required, limit, detect=path is not None
        )
    except _Judgements:
        if resolver.mapping:
            raise ConfigError(
                f"{source} is a judgement file: --map does not apply to it (its fields are fixed)"
            ) from None
        judgements = load_judgements(source, strict=strict)
        ds = LoadedDataset(
            samples=tuple(s for _, s in _expand(judgements)),
            source=source,
            problems=judgements.problems,
            rows=tuple(r for r, _ in _expand(judgements)),
        )
        if required:
            ds = require(ds, required, strict=strict)  # type: ignore[assignment]
        if limit is not None and len(ds) > limit:
            ds = LoadedDataset(
                samples=ds.samples[:limit], source=ds.source, problems=ds.problems, rows=rows_of(ds)[:limit]
            )
        return ds

    if not rows_samples:
        if problems:
            n = len(problems)
            raise DatasetErrors(
                problems, file=source, summary=f"no usable row: all {n} row{'s' if n != 1 else ''} are bad"
            )
        raise DatasetError("no records found", file=source)
    if strict and problems:
        raise DatasetErrors(problems, file=source)
    return LoadedDataset(
        samples=tuple(s for _, s in rows_samples),
        source=source,
        problems=tuple(problems),
        rows=tuple(r for r, _ in rows_samples),
        generated_ids=frozenset(generated),
    )


def _has_id(record: Any, resolver: ColumnResolver) -> bool:
    """Whether a raw record carries its own id (else the loader names it by its row)."""
    if isinstance(record, Sample):
        return record.id is not None and bool(str(record.id).strip())
    if not isinstance(record, Mapping):
        return False
    column = resolver.plan(list(record)).get("id")
    if column is None:
        return False
    value = as_text(record[column])
    return not is_missing(value) and bool(str(value).strip())


def _collect(
    items: Iterator[Item],
    source: str,
    resolver: ColumnResolver,
    required: tuple[str, ...],
    limit: int | None,
    *,
    detect: bool,
) -> tuple[list[tuple[int, Sample]], list[DatasetError], set[str]]:
    """(rows and samples, problems, ids generated from row numbers)."""
    out: list[tuple[int, Sample]] = []
    generated: set[str] = set()
    problems: list[DatasetError] = []
    columns: dict[str, None] = {}
    seen_ids: dict[str, int] = {}
    first = True
    n_rows = 0
    for row, record in items:
        if limit is not None and n_rows >= limit:
            break
        if isinstance(record, DatasetError):
            problems.append(record)
            continue
        if first and isinstance(record, Mapping):
            first = False
            if detect and is_judgement_record(record):
                raise _Judgements()
        from_data = True
        try:
            if isinstance(record, Sample):
                if resolver.mapping:
                    raise ConfigError("a column mapping applies to tables and records, not to Sample objects")
                samples = [check_sample(record, row=row, file=source, required_fields=required)]
                id_field = "id"
            elif isinstance(record, Mapping) and conversation_format(record) is not None:
                columns.update(dict.fromkeys(str(k) for k in record))
                samples, from_data = read_conversation(
                    record, row=row, file=source, id_column=resolver.mapping.get("id")
                )
                id_field = resolver.mapping.get("id", "id")
            else:
                if isinstance(record, Mapping):
                    columns.update(dict.fromkeys(str(k) for k in record))
                samples = [to_sample(record, row=row, file=source, resolver=resolver, required_fields=required)]
                id_field = (
                    resolver.plan(list(record)).get("id", "id") if isinstance(record, Mapping) else "id"
                )
                from_data = _has_id(record, resolver)
        except DatasetError as exc:
            problems.append(exc)
            continue
        if isinstance(record, Sample):
            from_data = _has_id(record, resolver)
        repeated = next((str(s.id) for s in samples if str(s.id) in seen_ids), None)
        if repeated is not None:
            problems.append(
                DatasetError(
                    f"duplicate id {repeated!r} (first at row {seen_ids[repeated]})",
                    file=source,
                    row=row,
                    field=id_field,
                )
            )
            continue
        n_rows += 1
        for sample in samples:
            sid = str(sample.id)
            seen_ids[sid] = row
            out.append((row, sample))
            if not from_data:
                generated.add(sid)
    if resolver.mapping and columns:
        check_mapping(resolver.mapping, columns, source=source)
    return out, problems, generated


__all__ = ["DatasetErrors", "LoadedDataset", "load_dataset"]
