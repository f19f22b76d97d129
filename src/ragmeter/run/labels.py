"""Label files matched to a run: what ``ragmeter labels import`` / ``export`` and
:meth:`Result.add_labels <ragmeter.run.result.Result.add_labels>` do.

A label record (:mod:`ragmeter.dataset.labels`) names a sample by its ``id``: the data's id
(``id:<id>`` keys) or the sample's stored key (``qr:...``, for data without ids). It names what it
labels by ``metric``, or by ``aspect`` (a metric of the run with that name, else the first of the
aspect's metrics the run has: faithfulness -> faithfulness, correctness -> correctness,
answer_correctness...). A record is skipped, and named with its row and field, when its id is no
sample of the run, its metric is not one of the run's, its label is out of range, or a sample
field it carries differs from the run's sample (a label belongs to the answer it was given for);
nothing else is lost. A label replaces the one stored for the same (sample, metric).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragmeter.dataset.judgements import DRAWN
from ragmeter.dataset.keys import normalize_key_text
from ragmeter.dataset.labels import LabelRecord, load_labels
from ragmeter.dataset.sample import Sample
from ragmeter.errors import ConfigError, DatasetError
from ragmeter.log.labels import Label, check_label

#: aspect -> the metrics that measure it, in order (as ``ragmeter agreement`` maps them)
ASPECT_METRICS: dict[str, tuple[str, ...]] = {
    "faithfulness": ("faithfulness",),
    "answer_relevance": ("answer_relevance",),
    "context_relevance": ("context_relevance",),
    "correctness": ("correctness", "answer_correctness", "factual_correctness"),
}
#: the sample fields an exported label record carries
EXPORT_FIELDS: tuple[str, ...] = ("question", "contexts", "answer", "reference", "reference_contexts")


@dataclass(frozen=True)
class LabelImport:
    """What an import did: the ``labels`` stored, how many of them replaced a stored one, and the
    records skipped (``problems``, each naming its file, row and field)."""

    labels: tuple[Label, ...]
    n_replaced: int
    problems: tuple[DatasetError, ...]
    source: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "n_imported": len(self.labels),
            "n_replaced": self.n_replaced,
            "n_skipped": len(self.problems),
            "skipped": [p.to_dict() for p in self.problems],
        }


def export_id(key: str) -> str:
    """The id a label file names a sample by: the data's id for an ``id:`` key, else the key."""
    return key[3:] if key.startswith("id:") else key


def sample_lookup(keys: Mapping[int, str]) -> dict[str, int]:
    """``{id or key: idx}``: every sample by its stored key and, for ``id:`` keys, by the id."""
    out = {key: idx for idx, key in keys.items()}
    for idx, key in keys.items():
        if key.startswith("id:"):
            out.setdefault(key[3:], idx)
    return out


def resolve_metric(record: LabelRecord, metrics: Sequence[str]) -> str:
    """The run's metric a record labels, or a DatasetError naming the field."""
    if record.metric is not None:
        if record.metric in metrics:
            return record.metric
        raise DatasetError(
            f"unknown metric {record.metric!r}: the run's metrics are {', '.join(metrics)}",
            field="metric",
            file=record.file,
            row=record.row,
        )
    aspect = record.aspect or ""
    if aspect in metrics:
        return aspect
    for name in ASPECT_METRICS.get(aspect, ()):
        if name in metrics:
            return name
    raise DatasetError(
        f"no metric of the run measures {aspect!r}: the run's metrics are {', '.join(metrics)} "
        '(name one with "metric")',
        field="aspect",
        file=record.file,
        row=record.row,
    )


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return normalize_key_text(a if isinstance(a, str) else None) == normalize_key_text(
            b if isinstance(b, str) else None
        )
    if isinstance(a, (tuple, list)) or isinstance(b, (tuple, list)):
        xs, ys = tuple(a or ()), tuple(b or ())
        return len(xs) == len(ys) and all(_same(x, y) for x, y in zip(xs, ys, strict=True))
    return bool(a == b)


def match_labels(
    records: Iterable[LabelRecord],
    *,
    samples: Sequence[tuple[int, Sample]],
    keys: Mapping[int, str],
    metrics: Sequence[str],
    drawn: str = "picked",
    labeller: str | None = None,
) -> tuple[list[Label], list[DatasetError]]:
    """Match label records to a run's samples and metrics (see the module docstring). ``drawn``
    and ``labeller`` apply to records that do not say."""
    if drawn not in DRAWN:
        raise ConfigError(f"drawn must be one of {', '.join(DRAWN)}, got {drawn!r}")
    lookup = sample_lookup(keys)
    by_idx = dict(samples)
    out: list[Label] = []
    problems: list[DatasetError] = []
    seen: dict[tuple[int, str], int] = {}
    for rec in records:
        try:
            idx = lookup.get(rec.id)
            if idx is None:
                raise DatasetError(
                    f"no sample of the run has id {rec.id!r}", field="id", file=rec.file, row=rec.row
                )
            metric = resolve_metric(rec, metrics)
            sample = by_idx.get(idx)
            for name, value in rec.fields.items():
                if sample is not None and not _same(value, getattr(sample, name, None)):
                    raise DatasetError(
                        f"differs from the run's sample {rec.id!r}: a label belongs to the {name} it was "
                        "given for (is this the right run?)",
                        field=name,
                        file=rec.file,
                        row=rec.row,
                    )
            label = check_label(
                Label(
                    idx=idx,
                    metric=metric,
                    value=rec.label,
                    label_kind=rec.label_kind,
                    drawn=rec.drawn or drawn,
                    labeller=rec.labeller or labeller,
                    created_at=rec.created_at or "",
                )
            )
        except ConfigError as exc:
            problems.append(DatasetError(str(exc), field="label", file=rec.file, row=rec.row))
            continue
        except DatasetError as exc:
            problems.append(exc)
            continue
        if (idx, metric) in seen:
            problems.append(
                DatasetError(
                    f"a second label of sample {rec.id!r} for {metric!r} (first at row {seen[idx, metric]})",
                    field="id",
                    file=rec.file,
                    row=rec.row,
                )
            )
            continue
        seen[idx, metric] = rec.row
        out.append(label)
    return out, problems


def read_label_file(
    source: str | Path | Iterable[Mapping[str, Any]],
    *,
    samples: Sequence[tuple[int, Sample]],
    keys: Mapping[int, str],
    metrics: Sequence[str],
    drawn: str = "picked",
    labeller: str | None = None,
) -> tuple[list[Label], list[DatasetError], str | None]:
    """Read label records (a file or mappings) and match them to a run: ``(labels, problems,
    source)``. A file without one usable record is a DatasetError (as any reader's)."""
    records = load_labels(source)
    labels, problems = match_labels(
        records, samples=samples, keys=keys, metrics=metrics, drawn=drawn, labeller=labeller
    )
    every = sorted([*records.problems, *problems], key=lambda p: -1 if p.row is None else p.row)
    return labels, every, records.source


def label_record(label: Label, sample: Sample, key: str) -> dict[str, Any]:
    """The file record of one stored label (what ``ragmeter labels export`` writes)."""
    rec: dict[str, Any] = {
        "id": export_id(key),
        "kind": "point",
        "metric": label.metric,
        "label": label.value,
        "label_kind": label.label_kind,
        "drawn": label.drawn,
        "labeller": label.labeller,
        "created_at": label.created_at,
    }
    for name in EXPORT_FIELDS:
        value = getattr(sample, name)
        if value is not None and value != ():
            rec[name] = list(value) if isinstance(value, tuple) else value
    return rec


def import_labels(
    store_dir: str | Path,
    run: str,
    source: str | Path | Iterable[Mapping[str, Any]],
    *,
    drawn: str = "picked",
    labeller: str | None = None,
) -> tuple[str, LabelImport]:
    """Read label records and store them with run ``run`` (an id, a unique prefix or ``latest``)
    of the store in ``store_dir``: ``(run_id, what was imported)``."""
    from ragmeter.log.store import RunStore, require_store

    with RunStore(require_store(store_dir)) as store:
        info = store.get_run(run)
        found, problems, name = read_label_file(
            source,
            samples=store.load_samples(info.run_id),
            keys=store.load_keys(info.run_id),
            metrics=[m["name"] for m in info.meta.get("metrics", [])],
            drawn=drawn,
            labeller=labeller,
        )
        replaced = store.put_labels(info.run_id, found)
    return info.run_id, LabelImport(tuple(found), replaced, tuple(problems), name)


def export_records(
    store_dir: str | Path, run: str, *, metric: str | None = None, next_n: int | None = None
) -> tuple[str, list[dict[str, Any]]]:
    """The label records of a run (of ``metric`` only, when given), by metric, then in draw order:
    ``(run_id, records)``. With ``next_n``: instead, the next ``next_n`` samples of the draw that
    lack a random label for ``metric``, with ``"label": null``, to label elsewhere and import."""
    from ragmeter.log.store import RunStore, require_store

    with RunStore(require_store(store_dir)) as store:
        info = store.get_run(run)
        rid = info.run_id
        metrics = [m["name"] for m in info.meta.get("metrics", [])]
        if metric is not None and metric not in metrics:
            raise ConfigError(f"run {rid} has no metric {metric!r}; its metrics: {', '.join(metrics)}")
        samples = dict(store.load_samples(rid))
        keys = store.load_keys(rid)
        draw = store.label_draw(rid)
        labels = store.list_labels(rid, metric)
        if next_n is not None:
            if metric is None:
                raise ConfigError("--next needs --metric: the samples to label next are those of one metric")
            progress = store.draw_progress(rid, metric)
            todo: list[dict[str, Any]] = []
            for idx in progress.order:
                if len(todo) >= next_n:
                    break
                if idx not in progress.random_idx:
                    rec = label_record(Label(idx, metric, 0.0, drawn="random"), samples[idx], keys[idx])
                    for name in ("label_kind", "labeller", "created_at"):
                        del rec[name]
                    rec["label"] = None
                    todo.append(rec)
            return rid, todo
    position = {idx: i for i, idx in enumerate(draw.order)}
    labels.sort(key=lambda lab: (lab.metric, position.get(lab.idx, len(position)), lab.idx))
    return rid, [label_record(lab, samples[lab.idx], keys[lab.idx]) for lab in labels]


__all__ = [
    "ASPECT_METRICS",
    "EXPORT_FIELDS",
    "LabelImport",
    "export_id",
    "export_records",
    "import_labels",
    "label_record",
    "match_labels",
    "read_label_file",
    "resolve_metric",
    "sample_lookup",
]
