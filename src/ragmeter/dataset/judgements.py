"""Labelled judgements: what people (or construction) said about samples, for agreement checks.

JSONL, one record a line, in one of two shapes (``data/README.md``):

* **pair**: ``{"id", "aspect", "kind": "pair", <shared sample fields>, "a": {...}, "b": {...},
  "preferred": "a"|"b"}``. The fields outside ``a``/``b`` are shared by both variants; ``a`` and
  ``b`` override any of them (usually ``answer``, or ``contexts`` for context relevance).
* **point**: ``{"id", "aspect", "kind": "point", <sample fields>, "label": 0..1,
  "label_kind": "binary"|"graded"}``. Binary labels are 0 or 1; graded labels lie in [0, 1]. A
  point whose fields are a conversation (``messages``, ``turns``, ``user_input``: an agent's
  trajectory, with ``tools`` and ``reference_tool_calls``) labels the conversation sample.

``aspect`` is one of :data:`ASPECTS`; a record may name the metric instead (``"metric":
"faithfulness"``, any metric name), or both, and then that metric scores it. Sample fields use the
same column names as datasets (ours, Ragas, LlamaIndex). Other keys (``note``...) go to the
samples' metadata. A record without an ``id`` gets its line number.

**Labels of a run** (``ragmeter labels import``) are point records keyed by the id of one of the
run's samples, read by the same loop (:func:`read_records`) in :mod:`ragmeter.dataset.labels`.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from ragmeter.dataset.columns import ColumnResolver
from ragmeter.dataset.conversations import conversation_format, read_conversation
from ragmeter.dataset.readers import read_json, read_jsonl
from ragmeter.dataset.sample import Sample
from ragmeter.dataset.validate import DatasetErrors, convert_id, to_sample
from ragmeter.errors import ConfigError, DatasetError

ASPECTS: tuple[str, ...] = ("faithfulness", "answer_relevance", "context_relevance", "correctness")
KINDS: tuple[str, ...] = ("pair", "point")
LABEL_KINDS: tuple[str, ...] = ("binary", "graded")
VARIANTS: tuple[str, ...] = ("a", "b")
#: how a labelled sample was chosen: the next of the run's seeded draw, or by hand
DRAWN: tuple[str, ...] = ("random", "picked")

#: Keys that describe the judgement rather than the sample.
JUDGEMENT_KEYS: tuple[str, ...] = (
    "id", "aspect", "metric", "kind", "a", "b", "preferred", "label", "label_kind",
)  # fmt: skip
#: Keys that describe a label rather than the sample it labels.
LABEL_KEYS: tuple[str, ...] = (
    "id", "aspect", "metric", "kind", "label", "label_kind", "drawn", "labeller", "created_at",
)  # fmt: skip

_SUFFIXES = (".jsonl", ".ndjson", ".json")
_T = TypeVar("_T")
Rec = TypeVar("Rec")


@dataclass(frozen=True, kw_only=True)
class Judgement:
    """One labelled record.

    pair: ``sample_a`` and ``sample_b`` (ids ``"<id>/a"``, ``"<id>/b"``), ``preferred`` is ``"a"`` or
    ``"b"``, ``sample``/``label``/``label_kind`` are None.
    point: ``sample`` (id ``"<id>"``, also in ``sample_a``), ``label`` and ``label_kind``; ``sample_b``
    and ``preferred`` are None. A record that names a ``metric`` and no ``aspect`` has the metric's
    name as its ``aspect``.
    Each sample's metadata holds ``judgement_id``, ``aspect``, ``kind`` (and ``variant``, ``preferred``
    for pairs; ``label``, ``label_kind`` for points) plus the record's extra keys.
    """

    id: str
    aspect: str
    kind: str
    label_kind: str | None
    label: float | None
    preferred: str | None
    sample_a: Sample
    sample_b: Sample | None
    sample: Sample | None
    row: int
    file: str | None = None
    #: the metric the record names (``"metric"``), else None: the aspect's metric scores it
    metric: str | None = None

    @property
    def samples(self) -> tuple[Sample, ...]:
        """The samples to score: ``(a, b)`` for a pair, ``(sample,)`` for a point."""
        if self.kind == "pair" and self.sample_b is not None:
            return (self.sample_a, self.sample_b)
        return (self.sample_a,)


class SourceRecords(list[Rec]):
    """The records read from one source, with ``source`` and the skipped rows in ``problems``."""

    def __init__(
        self,
        items: Iterable[Rec] = (),
        *,
        source: str | None = None,
        problems: Iterable[DatasetError] = (),
    ) -> None:
        super().__init__(items)
        self.source = source
        self.problems: tuple[DatasetError, ...] = tuple(problems)

    @property
    def n_skipped(self) -> int:
        return len(self.problems)


class Judgements(SourceRecords[Judgement]):
    """The judgements read from one source, with ``source`` and the skipped rows in ``problems``."""


def is_judgement_record(record: Any) -> bool:
    """True for a dict with ``kind`` ``pair``/``point`` and an ``aspect`` or a ``metric``."""
    return (
        isinstance(record, Mapping)
        and record.get("kind") in KINDS
        and ("aspect" in record or "metric" in record)
    )


def is_judgement_file(path: str | Path) -> bool:
    """True when the first line that parses as a JSON object is a judgement record."""
    p = Path(path)
    if p.suffix.lower() not in _SUFFIXES or not p.is_file():
        return False
    try:
        with p.open("rb") as handle:
            for raw in handle:
                text = raw.decode("utf-8", errors="replace").lstrip("\ufeff").strip()
                if not text:
                    continue
                try:
                    record = json.loads(text)
                except ValueError:
                    continue
                if isinstance(record, dict):
                    return is_judgement_record(record)
    except OSError:
        return False
    return False


def _field_in(override: Mapping[str, Any], name: str | None, variant: str) -> str | None:
    if name is None:
        return None
    root = re.split(r"[.\[]", name, maxsplit=1)[0]
    return f"{variant}.{name}" if root in override else name


def label_value(
    record: Mapping[str, Any], *, file: str | None, row: int, infer_kind: bool = False
) -> tuple[float, str]:
    """The record's label and label kind. ``infer_kind``: a missing ``label_kind`` is binary for a
    label of 0 or 1 and graded otherwise (label records); else it is required (judgement files)."""
    kind = record.get("label_kind")
    if kind is None and infer_kind:
        value = record.get("label")
        kind = "binary" if isinstance(value, (bool, int, float)) and value in (0, 1) else "graded"
    if kind not in LABEL_KINDS:
        what = "missing label_kind" if kind is None else f"unknown label_kind {kind!r}"
        raise DatasetError(
            f"{what}; expected one of {', '.join(LABEL_KINDS)}", file=file, row=row, field="label_kind"
        )
    value = record.get("label")
    if value is None:
        raise DatasetError("missing label (a point needs one)", file=file, row=row, field="label")
    if isinstance(value, bool):
        value = float(value)
    if not isinstance(value, (int, float)):
        raise DatasetError(
            f"expected a number, got {type(value).__name__} {value!r}", file=file, row=row, field="label"
        )
    label = float(value)
    if not math.isfinite(label):
        raise DatasetError(f"label must be a finite number, got {value!r}", file=file, row=row, field="label")
    if kind == "binary" and label not in (0.0, 1.0):
        raise DatasetError(f"a binary label is 0 or 1, got {value!r}", file=file, row=row, field="label")
    if kind == "graded" and not 0.0 <= label <= 1.0:
        raise DatasetError(f"a graded label lies in [0, 1], got {value!r}", file=file, row=row, field="label")
    return label, str(kind)


def metric_name(record: Mapping[str, Any], *, file: str | None, row: int) -> str | None:
    metric = record.get("metric")
    if metric is None:
        return None
    if not isinstance(metric, str) or not metric.strip():
        raise DatasetError(
            f"expected a metric name, got {type(metric).__name__} {metric!r}",
            file=file,
            row=row,
            field="metric",
        )
    return metric.strip()


def _point_sample(
    base: Mapping[str, Any], *, row: int, file: str | None, resolver: ColumnResolver
) -> Sample:
    """The labelled sample: a conversation's (an agent's trajectory: ``messages`` with tool calls,
    ``tools``, ``reference_tool_calls``...) read by the conversation reader, else a plain one."""
    if conversation_format(base) is not None:
        samples, _ = read_conversation(base, row=row, file=file)
        return samples[0]
    return to_sample(base, row=row, file=file, resolver=resolver)


def judgement_from_record(
    record: Mapping[str, Any], *, row: int, file: str | None = None, resolver: ColumnResolver | None = None
) -> Judgement:
    """Validate one judgement record; raise a DatasetError naming file, row and field."""
    if not isinstance(record, Mapping):
        raise DatasetError(f"expected a JSON object, got {type(record).__name__}", file=file, row=row)
    resolver = resolver or ColumnResolver()
    jid = convert_id(record.get("id"), file=file, row=row, column="id") or str(row)
    kind = record.get("kind")
    if kind not in KINDS:
        what = "missing kind" if kind is None else f"unknown kind {kind!r}"
        raise DatasetError(f"{what}; expected one of {', '.join(KINDS)}", file=file, row=row, field="kind")
    metric = metric_name(record, file=file, row=row)
    aspect = record.get("aspect")
    if aspect is None and metric is not None:
        aspect = metric
    elif aspect not in ASPECTS:
        what = "missing aspect" if aspect is None else f"unknown aspect {aspect!r}"
        raise DatasetError(
            f"{what}; expected one of {', '.join(ASPECTS)} (or name a metric)",
            file=file,
            row=row,
            field="aspect",
        )
    base = {k: v for k, v in record.items() if k not in JUDGEMENT_KEYS}
    meta: dict[str, Any] = {"judgement_id": jid, "aspect": aspect, "kind": kind}
    if metric is not None:
        meta["metric"] = metric

    if kind == "point":
        for key in ("a", "b", "preferred"):
            if key in record:
                raise DatasetError(f"{key!r} belongs to a pair, not a point", file=file, row=row, field=key)
        label, label_kind = label_value(record, file=file, row=row)
        sample = _point_sample(base, row=row, file=file, resolver=resolver)
        sample = dataclasses.replace(
            sample, id=jid, metadata={**sample.metadata, **meta, "label": label, "label_kind": label_kind}
        )
        return Judgement(
            id=jid, aspect=str(aspect), kind="point", label_kind=label_kind, label=label, preferred=None,
            sample_a=sample, sample_b=None, sample=sample, row=row, file=file, metric=metric,
        )  # fmt: skip

    preferred = record.get("preferred")
    if preferred not in VARIANTS:
        what = (
            "missing preferred" if preferred is None else f"preferred must be 'a' or 'b', got {preferred!r}"
        )
        raise DatasetError(what, file=file, row=row, field="preferred")
    samples: dict[str, Sample] = {}
    for variant in VARIANTS:
        override = record.get(variant)
        if not isinstance(override, Mapping):
            what = (
                f"missing {variant!r}"
                if override is None
                else f"expected an object, got {type(override).__name__}"
            )
            raise DatasetError(
                f"{what} (the fields of variant {variant} of the pair)", file=file, row=row, field=variant
            )
        for key in override:
            if key in JUDGEMENT_KEYS:
                raise DatasetError(
                    f"{key!r} cannot differ between the variants of a pair",
                    file=file,
                    row=row,
                    field=f"{variant}.{key}",
                )
        try:
            sample = to_sample({**base, **override}, row=row, file=file, resolver=resolver)
        except DatasetError as exc:
            raise DatasetError(
                exc.message, file=file, row=row, field=_field_in(override, exc.field, variant)
            ) from exc
        samples[variant] = dataclasses.replace(
            sample,
            id=f"{jid}/{variant}",
            metadata={**sample.metadata, **meta, "variant": variant, "preferred": preferred},
        )
    return Judgement(
        id=jid, aspect=str(aspect), kind="pair", label_kind=None, label=None, preferred=str(preferred),
        sample_a=samples["a"], sample_b=samples["b"], sample=None, row=row, file=file, metric=metric,
    )  # fmt: skip


def _items(data: str | Path | Iterable[Mapping[str, Any]]) -> tuple[str, Iterator[tuple[int, Any]]]:
    if isinstance(data, (str, Path)):
        path = Path(data)
        source = str(data)
        if path.suffix.lower() not in _SUFFIXES:
            raise ConfigError(
                f"cannot read judgements from {source}: expected a .jsonl file (or .ndjson, .json)"
            )
        if not path.exists():
            raise DatasetError("file not found", file=source)
        if path.is_dir():
            raise DatasetError("is a directory, not a file", file=source)
        reader = read_json if path.suffix.lower() == ".json" else read_jsonl
        return source, reader(path, source)
    return "<records>", enumerate(data, 1)


def read_records(
    data: str | Path | Iterable[Mapping[str, Any]],
    parse: Callable[[Any, int, str | None], _T],
    key: Callable[[_T], Any],
    describe: Callable[[_T], str],
    *,
    what: str,
    strict: bool,
    limit: int | None,
) -> tuple[str, list[_T], list[DatasetError]]:
    """The one reading loop of judgement and label files: each record parsed (a bad one is a
    problem naming its row and field, and skipped), the later of two records with the same
    ``key`` a problem, ``strict`` raising every problem at once, no usable record a DatasetError."""
    source, items = _items(data)
    file = source if source != "<records>" else None
    out: list[_T] = []
    problems: list[DatasetError] = []
    seen: dict[Any, int] = {}
    for row, record in items:
        if limit is not None and len(out) >= limit:
            break
        if isinstance(record, DatasetError):
            problems.append(record)
            continue
        try:
            item = parse(record, row, file)
        except DatasetError as exc:
            problems.append(exc)
            continue
        k = key(item)
        if k in seen:
            problems.append(
                DatasetError(
                    f"duplicate {describe(item)} (first at row {seen[k]})", file=file, row=row, field="id"
                )
            )
            continue
        seen[k] = row
        out.append(item)
    if strict and problems:
        raise DatasetErrors(problems, file=file)
    if not out:
        if problems:
            raise DatasetErrors(
                problems, file=file, summary=f"no usable {what}: all {len(problems)} rows are bad"
            )
        raise DatasetError(f"no {what} records found", file=file)
    return source, out, problems


def load_judgements(
    data: str | Path | Iterable[Mapping[str, Any]], *, strict: bool = False, limit: int | None = None
) -> Judgements:
    """Read a judgement file (or records). Bad rows are skipped and listed in ``problems``;
    ``strict=True`` raises :class:`DatasetErrors` listing all of them. No usable row at all is a
    DatasetError either way. Duplicate ids: the later row is a problem."""
    resolver = ColumnResolver()
    source, out, problems = read_records(
        data,
        lambda record, row, file: judgement_from_record(record, row=row, file=file, resolver=resolver),
        lambda j: j.id,
        lambda j: f"id {j.id!r}",
        what="judgement",
        strict=strict,
        limit=limit,
    )
    return Judgements(out, source=source, problems=problems)


__all__ = [
    "ASPECTS",
    "DRAWN",
    "KINDS",
    "LABEL_KEYS",
    "LABEL_KINDS",
    "Judgement",
    "Judgements",
    "is_judgement_file",
    "is_judgement_record",
    "judgement_from_record",
    "load_judgements",
]
