"""The result of a run: per-sample scores and per-metric aggregates.

A Result is built from a run record (the store's rows) and nothing else, so ``runs show`` and
``runs export`` give the same figures as the run that wrote them.

A Result read from a run store (:meth:`Result.from_store`, and what ``evaluate`` returns for a run
with a store) reads the record on demand (:class:`~ragmeter.run.record.StoredRecord`): the summary
from queries over the stored scores, the samples and scores a page at a time as they are asked for
(``samples``, ``rows`` and ``problems`` are sequences over the store; :meth:`iter_records`,
:meth:`to_jsonl` and :meth:`to_csv` stream). So a Result of a large run costs its summary's values
until the per-sample table is asked for (:meth:`to_records`, :meth:`to_pandas`, the HTML report).
A Result built from rows in memory (a run without a store) holds them
(:class:`~ragmeter.run.record.MemoryRecord`).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

from ragmeter.dataset.sample import Sample
from ragmeter.errors import ConfigError, DatasetError
from ragmeter.judges.types import Usage
from ragmeter.log.reading import ScoreRow
from ragmeter.metrics.base import Score
from ragmeter.report.html import write_report
from ragmeter.run.record import MemoryRecord, RunRecord, StoredRecord
from ragmeter.run.summary import MetricSummary, summarize_all

if TYPE_CHECKING:
    import pandas as pd

    from ragmeter.log.labels import Label
    from ragmeter.run.labels import LabelImport


class _Samples(Sequence[tuple[int, Sample]]):
    """A run's ``(idx, sample)`` pairs in order, read from its record as they are asked for."""

    def __init__(self, record: RunRecord) -> None:
        self._record = record

    def __len__(self) -> int:
        return self._record.n_samples()

    @overload
    def __getitem__(self, i: int) -> tuple[int, Sample]: ...
    @overload
    def __getitem__(self, i: slice) -> list[tuple[int, Sample]]: ...
    def __getitem__(self, i: int | slice) -> tuple[int, Sample] | list[tuple[int, Sample]]:
        if isinstance(i, slice):
            return [self._record.sample_at(k) for k in range(*i.indices(len(self)))]
        n = len(self)
        if not -n <= i < n:
            raise IndexError("sample index out of range")
        return self._record.sample_at(i % n)

    def __iter__(self) -> Iterator[tuple[int, Sample]]:
        for page in self._record.iter_pages():
            for idx, sample, _ in page:
                yield idx, sample

    def __repr__(self) -> str:
        return f"<{len(self)} samples>"


class _Problems(Sequence[DatasetError]):
    """A run's input problems in input order, read from its record as they are asked for."""

    def __init__(self, record: RunRecord) -> None:
        self._record = record

    def __len__(self) -> int:
        return self._record.n_problems()

    @overload
    def __getitem__(self, i: int) -> DatasetError: ...
    @overload
    def __getitem__(self, i: slice) -> list[DatasetError]: ...
    def __getitem__(self, i: int | slice) -> DatasetError | list[DatasetError]:
        if isinstance(i, slice):
            start, stop, step = i.indices(len(self))
            got = self._record.problems(start, stop) if step == 1 else []
            return got if step == 1 else [self[k] for k in range(start, stop, step)]
        n = len(self)
        if not -n <= i < n:
            raise IndexError("problem index out of range")
        return self._record.problems(i % n, i % n + 1)[0]

    def __iter__(self) -> Iterator[DatasetError]:
        return iter(self._record.problems())

    def __repr__(self) -> str:
        return f"<{len(self)} problems>"


class _Rows(Sequence[ScoreRow]):
    """A run's stored scores, by sample then metric, read from its record as they are asked for."""

    def __init__(self, record: RunRecord) -> None:
        self._record = record

    def __len__(self) -> int:
        return self._record.n_rows()

    @overload
    def __getitem__(self, i: int) -> ScoreRow: ...
    @overload
    def __getitem__(self, i: slice) -> list[ScoreRow]: ...
    def __getitem__(self, i: int | slice) -> ScoreRow | list[ScoreRow]:
        return list(self)[i]

    def __iter__(self) -> Iterator[ScoreRow]:
        return self._record.iter_rows()

    def __repr__(self) -> str:
        return f"<{len(self)} scores>"


class Result:
    """Scores of one run. Build with :meth:`from_store`, or from rows in memory (below)."""

    def __init__(
        self,
        *,
        run_id: str,
        meta: Mapping[str, Any],
        samples: Sequence[tuple[int, Sample]],
        problems: Sequence[DatasetError],
        keys: Mapping[int, str] | None = None,
        rows: Iterable[ScoreRow],
        metric_names: Sequence[str],
        status: str = "finished",
        store_dir: Path | None = None,
        bootstrap_resamples: int = 2000,
    ) -> None:
        self._setup(
            run_id, meta, MemoryRecord(samples, problems, keys, rows), metric_names, status, store_dir,
            bootstrap_resamples,
        )

    def _setup(
        self,
        run_id: str,
        meta: Mapping[str, Any],
        record: RunRecord,
        metric_names: Sequence[str],
        status: str,
        store_dir: Path | None,
        bootstrap_resamples: int,
    ) -> None:
        self.run_id = run_id
        self.meta = dict(meta)
        self.metric_names = list(metric_names)
        self.status = status
        self.store_dir = store_dir
        self._record = record
        self._bootstrap_resamples = bootstrap_resamples
        self._summaries: dict[str, MetricSummary] | None = None
        self._labels: dict[tuple[int, str], Label] = {}  # a run without a store keeps its labels here

    # -- construction -------------------------------------------------------------------------
    @classmethod
    def from_store(cls, store_dir: str | Path, run_id: str) -> Result:
        """Read a run record back: the figures equal those of the run that wrote it. The record is
        read on demand (see the module docstring); :meth:`close` (or ``with``) closes the store
        the Result reads from, which is also closed when the Result is collected."""
        from ragmeter.log.store import RunStore, require_store

        with RunStore(require_store(store_dir)) as store:
            info = store.get_run(run_id)
        meta = info.meta
        result = cls.__new__(cls)
        result._setup(
            info.run_id,
            meta,
            StoredRecord(Path(store_dir), info.run_id, meta),
            [m["name"] for m in meta.get("metrics", [])],
            info.status,
            Path(store_dir),
            int(meta.get("config", {}).get("bootstrap_resamples", 2000)),
        )
        return result

    def close(self) -> None:
        """Close the run store a Result read from a store reads from (it opens again if asked)."""
        close = getattr(self._record, "close", None)
        if callable(close):
            close()

    def __enter__(self) -> Result:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- accessors -----------------------------------------------------------------------------
    @property
    def samples(self) -> Sequence[tuple[int, Sample]]:
        """``(idx, sample)`` of every sample that loaded, in order (read from the record as asked)."""
        if isinstance(self._record, MemoryRecord):
            return self._record.samples
        return _Samples(self._record)

    @property
    def problems(self) -> Sequence[DatasetError]:
        """Every input problem, in input order (read from the record as asked)."""
        if isinstance(self._record, MemoryRecord):
            return self._record.problems()
        return _Problems(self._record)

    @property
    def keys(self) -> dict[int, str]:
        """Each sample's stable key by index (:mod:`ragmeter.dataset.keys`): what compare matches by."""
        return self._record.keys()

    @property
    def n_samples(self) -> int:
        """Samples that loaded (and were scheduled)."""
        return self._record.n_samples()

    @property
    def n_skipped(self) -> int:
        """Input rows skipped entirely: unreadable, or lacking what every chosen metric needs.

        ``problems`` lists every input problem, including a field missing for one metric only.
        """
        skipped = self.meta.get("n_skipped_rows")
        return int(skipped) if skipped is not None else len(self.problems)

    def score(self, idx: int, metric: str) -> Score | None:
        row = self._record.row(idx, metric)
        return None if row is None else row.score

    def row(self, idx: int, metric: str) -> ScoreRow | None:
        """Everything stored for one (sample, metric) job, or None when it was not scored."""
        return self._record.row(idx, metric)

    def scores(self, metric: str) -> list[Score | None]:
        """Scores of ``metric`` in sample order (None where the sample was skipped)."""
        return [None if (r := rows.get(metric)) is None else r.score for _, _, rows in self.iter_samples()]

    def iter_samples(self) -> Iterator[tuple[int, Sample, Mapping[str, ScoreRow]]]:
        """``(idx, sample, {metric: row})`` of every sample in order, a page at a time from the record."""
        for page in self._record.iter_pages():
            yield from page

    @property
    def rows(self) -> Sequence[ScoreRow]:
        """Every stored score, by sample (read from the record as asked)."""
        if isinstance(self._record, MemoryRecord):
            return list(self._record.iter_rows())
        return _Rows(self._record)

    @property
    def n_invalid(self) -> int:
        return self._record.n_invalid()

    @property
    def usage(self) -> Usage:
        return self._record.usage()

    def usage_by_metric(self) -> dict[str, Usage]:
        out = {m: self._record.usage(m) for m in self.metric_names}
        return out

    @property
    def cost(self) -> float | None:
        """Cost in the user's currency when prices per 1k tokens were given, else None."""
        from ragmeter.judges.config import price

        cfg = self.meta.get("judge", {}).get("config", {}) or {}
        u = self.usage
        return price(cfg, u.prompt_tokens, u.completion_tokens, u.cached_tokens)

    # -- labels --------------------------------------------------------------------------------
    @property
    def labels(self) -> list[Label]:
        """People's labels of this run's samples (:class:`~ragmeter.log.labels.Label`: sample
        ``idx``, ``metric``, ``value``, ``label_kind``, ``drawn``, ``labeller``, ``created_at``), by
        sample then metric. Read from the run store at each access (a labelling page may be adding
        to it); a run without a store has the labels :meth:`add_labels` gave it."""
        from ragmeter.log.store import DB_NAME, RunStore

        if self.store_dir is None or not (Path(self.store_dir) / DB_NAME).is_file():
            return [self._labels[k] for k in sorted(self._labels)]  # (a store moved away: none to read)
        with RunStore(self.store_dir) as store:
            return store.list_labels(self.run_id)

    def add_labels(
        self,
        labels: str | Path | Iterable[Mapping[str, Any]],
        *,
        drawn: str = "picked",
        labeller: str | None = None,
    ) -> LabelImport:
        """Add people's labels: a label file (JSONL/JSON, what ``ragmeter labels import`` reads) or
        label records (``{"id": ..., "metric": ..., "label": ...}``, optional ``label_kind``,
        ``drawn``, ``labeller``, ``created_at``; see docs/runs.md, "Labels"). ``drawn`` and ``labeller``
        apply to records that do not say. A record whose id, metric or label does not fit the run
        is skipped and listed in the returned :class:`~ragmeter.run.labels.LabelImport`'s
        ``problems``; a label replaces the one stored for the same (sample, metric). Written to the
        run store when the run has one."""
        from ragmeter.run.labels import LabelImport, read_label_file

        found, problems, source = read_label_file(
            labels,
            samples=self.samples,
            keys=self.keys,
            metrics=self.metric_names,
            drawn=drawn,
            labeller=labeller,
        )
        if self.store_dir is None:
            replaced = sum(1 for lab in found if (lab.idx, lab.metric) in self._labels)
            self._labels.update({(lab.idx, lab.metric): lab for lab in found})
        else:
            from ragmeter.log.store import RunStore

            with RunStore(self.store_dir) as store:
                replaced = store.put_labels(self.run_id, found)
        self._summaries = None
        return LabelImport(tuple(found), replaced, tuple(problems), source)

    # -- aggregates ----------------------------------------------------------------------------
    def summary(self) -> dict[str, MetricSummary]:
        if self._summaries is None:
            specs = {str(m.get("name")): m for m in self.meta.get("metrics", [])}
            stats = {m: self._record.metric_stats(m, self.metric_level(m)) for m in self.metric_names}
            summaries = summarize_all(stats, specs, bootstrap_resamples=self._bootstrap_resamples)
            self._summaries = self._with_calibrated(summaries)
        return self._summaries

    def metric_level(self, metric: str) -> str:
        """The level of samples ``metric`` scores (``"sample"`` or ``"conversation"``)."""
        spec: dict[str, Any] = next((m for m in self.meta.get("metrics", []) if m.get("name") == metric), {})
        return str(spec.get("level") or "sample")

    def _with_calibrated(self, summaries: dict[str, MetricSummary]) -> dict[str, MetricSummary]:
        """``summaries`` with the calibrated estimate of each metric that has random labels."""
        import dataclasses

        labels = self.labels
        if not any(lab.drawn == "random" for lab in labels):
            return summaries
        from ragmeter.run.calibrated import calibrated_estimate

        seed = self.draw_seed()
        out = dict(summaries)
        for name in summaries:
            scores = {
                idx: (row.score.value if row.score.valid else None)
                for idx, _, rows in self.iter_samples()
                if (row := rows.get(name)) is not None
            }
            est = calibrated_estimate(name, scores, labels, self.keys, seed, self._fitted_keys())
            if est is not None:
                out[name] = dataclasses.replace(summaries[name], calibrated=est)
        return out

    def _fitted_keys(self) -> list[str]:
        """Digests of the sample keys whose labels the run's judge was calibrated on (a local
        judge with a calibration file records them), else []."""
        found: Any = self.meta.get("judge")
        for key in ("support_combiner", "calibration", "fitted_keys"):
            found = found.get(key) if isinstance(found, Mapping) else None
        return [str(k) for k in found] if isinstance(found, list) else []

    def draw_seed(self) -> int:
        """The seed of the run's draw of samples to label (:mod:`ragmeter.log.labels`)."""
        from ragmeter.log.labels import DEFAULT_SEED
        from ragmeter.log.store import DB_NAME, RunStore

        if self.store_dir is None or not (Path(self.store_dir) / DB_NAME).is_file():
            return DEFAULT_SEED

        with RunStore(self.store_dir) as store:
            return store.label_draw(self.run_id).seed

    def to_dict(self) -> dict[str, Any]:
        """The machine-readable summary (what ``evaluate --json`` prints)."""
        out: dict[str, Any] = {
            "run_id": self.run_id,
            "status": self.status,
            "n_samples": self.n_samples,
            "n_skipped": self.n_skipped,
            "judge": self.meta.get("judge", {}).get("name"),
            "metrics": {m: s.to_dict() for m, s in self.summary().items()},
            "usage": self.usage.to_dict(),
            "cost": self.cost,
            "skipped": [p.to_dict() for p in self.problems],
        }
        if self.meta.get("metrics_left_out"):  # metrics the judge cannot compute, and why
            out["metrics_left_out"] = list(self.meta["metrics_left_out"])
        if self.store_dir is not None:
            out["store"] = str(self.store_dir)
        return out

    # -- per-sample table ----------------------------------------------------------------------
    def iter_records(self) -> Iterator[dict[str, Any]]:
        """The records of :meth:`to_records`, one at a time, read from the record a page at a time
        (a large run's table without holding it)."""
        conversations = self._record.has_conversations()
        levels = {m: self.metric_level(m) for m in self.metric_names}
        for idx, sample, rows in self.iter_samples():
            rec: dict[str, Any] = {
                "idx": idx,
                "sample_id": sample.id,
                "question": sample.question,
                "answer": sample.answer,
            }
            if conversations:  # the run has conversations: each record says where it is in one
                rec["conversation_id"] = sample.conversation_id
                rec["turn"] = sample.turn
            for m in self.metric_names:
                row = rows.get(m)
                if row is None:
                    rec[m] = None
                    # a conversation metric on a turn (or the reverse) does not apply: not a skip
                    rec[f"{m}_reason"] = "skipped" if levels[m] == sample.level else "not applicable"
                    rec[f"{m}_error"] = None
                    continue
                rec[m] = row.score.value
                rec[f"{m}_reason"] = row.score.reason
                rec[f"{m}_error"] = None if row.score.error is None else row.score.error.kind
            yield rec

    def __iter__(self) -> Iterator[dict[str, Any]]:
        """Iterating a Result gives its per-sample records (:meth:`iter_records`)."""
        return self.iter_records()

    def to_records(self) -> list[dict[str, Any]]:
        """One dict per sample: its id, inputs, and for each metric value / reason / error. When the
        run has conversations, each also holds ``conversation_id`` and ``turn`` (None for a plain
        sample; ``turn`` None for a conversation sample). All in memory: :meth:`iter_records` gives
        them one at a time."""
        return list(self.iter_records())

    def details(self, idx: int, metric: str) -> dict[str, Any] | None:
        """Everything recorded for one job: score, details, raw replies, usage, timing."""
        row = self._record.row(idx, metric)
        if row is None:
            return None
        return {
            "score": row.score.to_dict(),
            "usage": row.usage.to_dict(),
            "calls": row.calls,
            "duration_s": row.duration_s,
        }

    def to_html(self, path: str | Path | None = None) -> Path:
        """Write the run's HTML report (one self-contained file; see docs/report.md) and return
        its path (default ``ragmeter-report-<run>.html``)."""
        return write_report(self, path)

    def to_pandas(self) -> pd.DataFrame:
        try:
            import pandas as pd
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise ConfigError("to_pandas() needs pandas: pip install 'ragmeter[pandas]'") from e
        return pd.DataFrame.from_records(self.iter_records())

    def to_jsonl(self, path: str | Path) -> Path:
        """Per-sample rows with full score details, one JSON object a line (written as read)."""
        path = Path(path)
        with path.open("w", encoding="utf-8") as fh:
            for idx, sample, rows in self.iter_samples():
                rec: dict[str, Any] = {"idx": idx, "sample": sample.to_dict(), "scores": {}}
                if sample.conversation_id is not None:
                    rec["conversation_id"] = sample.conversation_id
                    rec["turn"] = sample.turn
                for m in self.metric_names:
                    row = rows.get(m)
                    rec["scores"][m] = None if row is None else row.score.to_dict()
                fh.write(json.dumps(rec, ensure_ascii=False, default=str) + "\n")
        return path

    def to_csv(self, path: str | Path) -> Path:
        """The per-sample table (:meth:`iter_records`) as CSV, written as read."""
        path = Path(path)
        records = self.iter_records()
        first = next(records, None)
        fieldnames = list(first.keys()) if first is not None else ["idx", "sample_id", "question", "answer"]
        with path.open("w", encoding="utf-8", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=fieldnames)
            writer.writeheader()
            if first is not None:
                writer.writerow(first)
                writer.writerows(records)
        return path

    def to_parquet(self, path: str | Path) -> Path:
        path = Path(path)
        try:
            self.to_pandas().to_parquet(path, index=False)
        except ImportError as e:
            raise ConfigError("parquet export needs pyarrow: pip install 'ragmeter[parquet]'") from e
        return path

    def export(self, path: str | Path, fmt: str | None = None) -> Path:
        fmt = (fmt or Path(path).suffix.lstrip(".")).lower()
        if fmt == "csv":
            return self.to_csv(path)
        if fmt in ("jsonl", "ndjson"):
            return self.to_jsonl(path)
        if fmt == "parquet":
            return self.to_parquet(path)
        raise ConfigError(f"unknown export format {fmt!r}; use csv, jsonl or parquet")

    def __repr__(self) -> str:
        parts = []
        for m, s in self.summary().items():
            mean = "n/a" if s.mean is None else f"{s.mean:.3f}"
            parts.append(f"{m}={mean} (n={s.n_scored}, invalid={s.n_invalid})")
        return f"Result(run_id={self.run_id!r}, samples={self.n_samples}, {', '.join(parts)})"
