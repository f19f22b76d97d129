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
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from ragmeter.dataset.columns import ColumnResolver, check_mapping
from ragmeter.dataset.conversations import conversation_format, read_conversation
from ragmeter.dataset.judgements import is_judgement_record, load_judgements
from ragmeter.dataset.keys import KeyNumberer
from ragmeter.dataset.readers import (
    Item,
    is_dataframe,
    reader_for,
    records_from_dataframe,
    records_from_json_value,
)
from ragmeter.dataset.sample import Dataset, Sample, SampleHasher
from ragmeter.dataset.seen import Remembers, Seen
from ragmeter.dataset.validate import (
    DatasetErrors,
    LoadedDataset,
    check_required_names,
    check_sample,
    missing_problem,
    require,
    rows_of,
    to_sample,
)
from ragmeter.dataset.values import as_text, is_missing
from ragmeter.errors import ConfigError, DatasetError
from ragmeter.traces.otlp import is_otlp_record

DataSource = Any  # str | Path | DataFrame | Iterable[Mapping | Sample] | Dataset | Ragas / LlamaIndex objects


class _Judgements(Exception):
    """Internal signal: the file turned out to be a judgement file."""


class _Traces(Exception):
    """Internal signal: the file turned out to hold OTLP traces."""


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
        from ragmeter.traces.reader import is_trace_path, read_traces

        path = Path(data)
        source = str(data)
        reader = read_traces if is_trace_path(path) else reader_for(path, source)
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


class StreamedSample(NamedTuple):
    """One sample as :class:`SampleStream` yields it: its source ``row``, the ``sample``, its stable
    ``key`` (:mod:`ragmeter.dataset.keys`), whether its id was filled in from the row number, and
    its ``record`` (``sample.to_dict()``, made once for the hash; a writer may take it over)."""

    row: int
    sample: Sample
    key: str
    generated_id: bool
    record: dict[str, Any]


class SampleStream:
    """The samples of one source, read once and in order: what :func:`load_dataset` collects, and
    what a run reads through a bounded window (``ragmeter.run.intake``).

    Iterating yields :class:`StreamedSample` items. As it goes, the stream collects the rows it
    skips (``problems``, each a :class:`DatasetError` naming file, row and field; a caller that
    keeps memory bounded takes them as they come with :meth:`take_problems`), counts the samples
    (``n_samples``) and hashes them (:meth:`content_hash`, the dataset hash of the run record,
    the same as :meth:`Dataset.content_hash` of the collected samples). It remembers each earlier
    row's id (a later row with an id seen before is a problem) and each key's count (repeated keys
    are numbered) in ``seen`` (:mod:`ragmeter.dataset.seen`: dicts, or a temporary file that keeps
    memory flat, as a run with a store uses).

    At its end the stream raises what :func:`load_dataset` raises for a source with no usable row
    (:class:`DatasetErrors`, or "no records found") and for a ``mapping`` naming a column the data
    does not have (:class:`ConfigError`). A judgement file (``data/README.md``) is recognised by its
    first record and read whole (such files hold labelled samples, not logs). An OTLP trace file
    (a ``.otlp.jsonl`` name, or a first record with ``resourceSpans``) is read by the trace reader,
    one sample per trace that retrieved, as its traces complete (:mod:`ragmeter.traces.reader`).
    """

    def __init__(
        self,
        data: DataSource,
        *,
        mapping: Mapping[str, str] | None = None,
        required_fields: Iterable[str] = (),
        limit: int | None = None,
        seen: Remembers | None = None,
    ) -> None:
        self.required = check_required_names(required_fields)
        if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 1):
            raise ConfigError(f"limit must be a positive integer, got {limit!r}")
        self.limit = limit
        self.resolver = ColumnResolver(mapping)
        self.problems: list[DatasetError] = []
        self.n_samples = 0
        self.n_problems = 0
        self._seen: Remembers = Seen() if seen is None else seen
        self._hasher = SampleHasher()
        self._keys = KeyNumberer(seen=self._seen)
        self._done = False
        self._dataset: Dataset | None = None
        self._path: Path | None = None
        self._items: Iterator[Item] = iter(())
        if isinstance(data, Dataset):
            if self.resolver.mapping:
                raise ConfigError("a column mapping applies to tables and records, not to a Dataset")
            self._dataset = data
            self.source: str = data.source or "<samples>"
        else:
            self.source, self._path, self._items = _items_for(data)

    # -- what the reading found ------------------------------------------------------------------
    def take_problems(self) -> list[DatasetError]:
        """The problems found since the last call (and forget them here)."""
        out, self.problems = self.problems, []
        return out

    def content_hash(self) -> str:
        """sha256 over the samples' canonical JSON (see :meth:`Dataset.content_hash`); once read."""
        if not self._done:
            raise RuntimeError("the dataset hash is known once the stream has been read to its end")
        return self._hasher.hexdigest()

    def _problem(self, problem: DatasetError) -> None:
        self.problems.append(problem)
        self.n_problems += 1

    def _emit(self, row: int, sample: Sample, generated: bool) -> StreamedSample:
        self.n_samples += 1
        record = sample.to_dict()
        self._hasher.update(sample, record)
        return StreamedSample(row, sample, self._keys.key(sample, id_from_data=not generated), generated, record)

    # -- reading ---------------------------------------------------------------------------------
    def __iter__(self) -> Iterator[StreamedSample]:
        if self._done or getattr(self, "_started", False):
            raise RuntimeError("a SampleStream is read once")
        self._started = True
        try:
            yield from self._read()
        finally:
            self._seen.close()  # what it remembered is needed no more (a temporary file goes)
        self._done = True

    def _read(self) -> Iterator[StreamedSample]:
        if self._dataset is not None:
            yield from self._from_dataset(self._dataset)
        else:
            try:
                try:
                    yield from self._from_records()
                except _Traces:
                    from ragmeter.traces.reader import read_traces

                    assert self._path is not None
                    self.problems, self.n_problems = [], 0  # the trace reader reports the lines again
                    self._items = read_traces(self._path, self.source)
                    yield from self._from_records(detect=False)
            except _Judgements:
                if self.resolver.mapping:
                    raise ConfigError(
                        f"{self.source} is a judgement file: --map does not apply to it (its fields are fixed)"
                    ) from None
                yield from self._from_judgements()

    def _from_dataset(self, ds: Dataset) -> Iterator[StreamedSample]:
        for p in ds.problems:
            self._problem(p)
        generated: frozenset[str] = getattr(ds, "generated_ids", frozenset())
        for row, sample in zip(rows_of(ds), ds.samples, strict=True):
            if self.limit is not None and self.n_samples >= self.limit:
                break
            lacking = missing_problem(sample, self.required, file=ds.source, row=row) if self.required else None
            if lacking is not None:
                self._problem(lacking)
                continue
            yield self._emit(row, sample, sample.id in generated)

    def _from_judgements(self) -> Iterator[StreamedSample]:
        judgements = load_judgements(self.source)
        for p in judgements.problems:
            self._problem(p)
        for j in judgements:
            for sample in j.samples:
                if self.limit is not None and self.n_samples >= self.limit:
                    return
                if self.required:
                    lacking = missing_problem(sample, self.required, file=self.source, row=j.row)
                    if lacking is not None:
                        self._problem(lacking)
                        continue
                yield self._emit(j.row, sample, False)

    def _from_records(self, *, detect: bool = True) -> Iterator[StreamedSample]:
        source, resolver, required = self.source, self.resolver, self.required
        columns: dict[str, None] = {}
        first = True
        n_rows = 0  # rows that gave samples: what ``limit`` counts (a conversation row is one)
        for row, record in self._items:
            if self.limit is not None and n_rows >= self.limit:
                break
            if isinstance(record, DatasetError):
                self._problem(record)
                continue
            if first and isinstance(record, Mapping):
                first = False
                if detect and self._path is not None and is_judgement_record(record):
                    raise _Judgements()
                if detect and self._path is not None and is_otlp_record(record):
                    raise _Traces()
            from_data = True
            try:
                if isinstance(record, Sample):
                    if resolver.mapping:
                        raise ConfigError("a column mapping applies to tables and records, not to Sample objects")
                    samples = [check_sample(record, row=row, file=source, required_fields=required)]
                    id_field = "id"
                    from_data = _has_id(record, resolver)
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
                self._problem(exc)
                continue
            repeated = self._repeated_id(samples, row)
            if repeated is not None:
                sid, first_row = repeated
                self._problem(
                    DatasetError(
                        f"duplicate id {sid!r} (first at row {first_row})", file=source, row=row, field=id_field
                    )
                )
                continue
            n_rows += 1
            for sample in samples:
                yield self._emit(row, sample, not from_data)
        if resolver.mapping and columns:
            check_mapping(resolver.mapping, columns, source=source)
        if self.n_samples == 0:
            self._no_usable_row()

    def _repeated_id(self, samples: Sequence[Sample], row: int) -> tuple[str, int] | None:
        """(an id of ``samples`` met before, the row it was first met at), or None, when the ids of
        the row's samples are remembered (with a prefix of their own, apart from the keys counted
        in the same store)."""
        names = ["id\x1f" + str(s.id) for s in samples]
        if len(names) == 1:  # one lookup does both
            first_row = self._seen.first(names[0], row)
            return None if first_row is None else (str(samples[0].id), first_row)
        for sample, name in zip(samples, names, strict=True):  # a conversation row: all or none
            first_row = self._seen.row_of(name)
            if first_row is not None:
                return str(sample.id), first_row
        for name in names:
            self._seen.first(name, row)
        return None

    def _no_usable_row(self) -> None:
        if self.n_problems:
            n = self.n_problems
            raise DatasetErrors(
                self.problems, file=self.source, summary=f"no usable row: all {n} row{'s' if n != 1 else ''} are bad"
            )
        raise DatasetError("no records found", file=self.source)


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

    The samples are read by :class:`SampleStream`; a run reads its data through the stream and
    does not hold them all (see ``ragmeter.run.intake``).
    """
    if isinstance(data, Dataset):
        return _load_dataset_object(data, mapping, strict, required_fields, limit)
    stream = SampleStream(data, mapping=mapping, required_fields=required_fields, limit=limit)
    items = list(stream)
    if strict and stream.problems:
        raise DatasetErrors(stream.problems, file=stream.source)
    return LoadedDataset(
        samples=tuple(i.sample for i in items),
        source=stream.source,
        problems=tuple(stream.problems),
        rows=tuple(i.row for i in items),
        generated_ids=frozenset(str(i.sample.id) for i in items if i.generated_id),
    )


def _load_dataset_object(
    ds: Dataset,
    mapping: Mapping[str, str] | None,
    strict: bool,
    required_fields: Iterable[str],
    limit: int | None,
) -> Dataset:
    """A :class:`Dataset` given to :func:`load_dataset`: checked for ``required_fields`` and cut to
    ``limit`` (its own ``problems`` are kept; ``strict`` applies to the new ones)."""
    required = check_required_names(required_fields)
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 1):
        raise ConfigError(f"limit must be a positive integer, got {limit!r}")
    if mapping:
        raise ConfigError("a column mapping applies to tables and records, not to a Dataset")
    if required:
        ds = require(ds, required, strict=strict)
    if limit is not None and len(ds) > limit:
        ds = LoadedDataset(
            samples=ds.samples[:limit],
            source=ds.source,
            problems=ds.problems,
            rows=rows_of(ds)[:limit],
            generated_ids=getattr(ds, "generated_ids", frozenset()),
        )
    return ds


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


__all__ = ["DatasetErrors", "LoadedDataset", "SampleStream", "StreamedSample", "load_dataset"]
