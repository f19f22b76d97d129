"""Labels of a run as a file states them: point judgement records keyed by a run's sample id.

The format is the judgement "point" record (:mod:`ragmeter.dataset.judgements`), read by the same
loop: ``{"id", "metric" (or "aspect"), "label"}`` with optional ``label_kind`` (default: binary for
a label of 0 or 1, graded otherwise), ``drawn`` (``random``: the sample was the next of the run's
seeded draw; ``picked``: chosen by hand), ``labeller``, ``created_at`` (ISO 8601) and ``kind:
"point"``. ``id`` is the sample's id in the data (the ``id`` column), else its stored key
(``qr:...``). Sample fields are optional; the ones a record has are checked against the run's
sample when the labels are matched to a run (:mod:`ragmeter.run.labels`), since a label belongs
to the answer it was given for. ``ragmeter labels export`` writes the records with the sample's
fields, so an exported file is also a judgement file that ``ragmeter agreement FILE`` reads.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from ragmeter.dataset.columns import ColumnResolver
from ragmeter.dataset.judgements import (
    DRAWN,
    KINDS,
    LABEL_KEYS,
    SourceRecords,
    label_value,
    metric_name,
    read_records,
)
from ragmeter.dataset.validate import convert_id, to_sample
from ragmeter.errors import DatasetError


@dataclass(frozen=True, kw_only=True)
class LabelRecord:
    """One label as a file states it (not yet matched to a run): the sample's ``id``, the
    ``metric`` and/or ``aspect`` it labels, the ``label`` in [0, 1] and its ``label_kind``;
    ``drawn``, ``labeller`` and ``created_at`` are None where the record does not say.
    ``fields`` holds the sample fields the record carries (``{"answer": "...", ...}``, converted as
    a dataset's are), for the check against the run's sample."""

    id: str
    metric: str | None
    aspect: str | None
    label: float
    label_kind: str
    drawn: str | None
    labeller: str | None
    created_at: str | None
    fields: Mapping[str, Any]
    row: int
    file: str | None = None

    @property
    def target(self) -> str:
        """What the label is of: the metric when named, else the aspect."""
        return self.metric or self.aspect or ""


class LabelRecords(SourceRecords[LabelRecord]):
    """The label records read from one source, with ``source`` and the skipped rows in ``problems``."""


def _optional_text(record: Mapping[str, Any], name: str, *, file: str | None, row: int) -> str | None:
    value = record.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise DatasetError(
            f"expected text, got {type(value).__name__} {value!r}", file=file, row=row, field=name
        )
    return value.strip() or None


def label_from_record(
    record: Mapping[str, Any], *, row: int, file: str | None = None, resolver: ColumnResolver | None = None
) -> LabelRecord:
    """Validate one label record; raise a DatasetError naming file, row and field."""
    if not isinstance(record, Mapping):
        raise DatasetError(f"expected a JSON object, got {type(record).__name__}", file=file, row=row)
    resolver = resolver or ColumnResolver()
    jid = convert_id(record.get("id"), file=file, row=row, column="id")
    if jid is None:
        raise DatasetError(
            "missing id (a label names the id of the run's sample it labels)", file=file, row=row, field="id"
        )
    kind = record.get("kind", "point")
    if kind != "point":
        raise DatasetError(
            f"a label is a point record; got kind {kind!r}" if kind in KINDS else f"unknown kind {kind!r}",
            file=file,
            row=row,
            field="kind",
        )
    metric = metric_name(record, file=file, row=row)
    aspect = record.get("aspect")
    if aspect is not None and (not isinstance(aspect, str) or not aspect.strip()):
        raise DatasetError(f"expected an aspect name, got {aspect!r}", file=file, row=row, field="aspect")
    if metric is None and aspect is None:
        raise DatasetError(
            "missing metric (or aspect): what the label is of", file=file, row=row, field="metric"
        )
    label, label_kind = label_value(record, file=file, row=row, infer_kind=True)
    drawn = record.get("drawn")
    if drawn is not None and drawn not in DRAWN:
        raise DatasetError(
            f"drawn must be one of {', '.join(DRAWN)}, got {drawn!r}", file=file, row=row, field="drawn"
        )
    labeller = _optional_text(record, "labeller", file=file, row=row)
    created_at = _optional_text(record, "created_at", file=file, row=row)
    if created_at is not None:
        try:
            datetime.fromisoformat(created_at)
        except ValueError:
            raise DatasetError(
                f"expected an ISO 8601 time, got {created_at!r}", file=file, row=row, field="created_at"
            ) from None
    base = {k: v for k, v in record.items() if k not in LABEL_KEYS}
    present, _ = resolver.split(base)
    fields: dict[str, Any] = {}
    if any(f != "id" for f in present):
        sample = to_sample(base, row=row, file=file, resolver=resolver)
        fields = {f: getattr(sample, f) for f in present if f != "id"}
    return LabelRecord(
        id=jid, metric=metric, aspect=None if aspect is None else aspect.strip(), label=label,
        label_kind=label_kind, drawn=drawn, labeller=labeller, created_at=created_at, fields=fields,
        row=row, file=file,
    )  # fmt: skip


def load_labels(
    data: str | Path | Iterable[Mapping[str, Any]], *, strict: bool = False, limit: int | None = None
) -> LabelRecords:
    """Read a label file (or records): the same reader as :func:`load_judgements`, for label records.
    Bad rows are skipped and listed in ``problems``; two records for the same id and metric: the
    later is a problem. No usable row at all is a DatasetError."""
    resolver = ColumnResolver()
    source, out, problems = read_records(
        data,
        lambda record, row, file: label_from_record(record, row=row, file=file, resolver=resolver),
        lambda r: (r.id, r.target),
        lambda r: f"label of id {r.id!r} for {r.target!r}",
        what="label",
        strict=strict,
        limit=limit,
    )
    return LabelRecords(out, source=source, problems=problems)


__all__ = ["LabelRecord", "LabelRecords", "label_from_record", "load_labels"]
