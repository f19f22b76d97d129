"""The result of a run: per-sample scores and per-metric aggregates.

A Result is built from a run record (the store's rows) and nothing else, so ``runs show`` and
``runs export`` give the same figures as the run that wrote them.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragmeter.dataset.keys import sample_keys
from ragmeter.dataset.sample import Sample
from ragmeter.errors import ConfigError, DatasetError
from ragmeter.judges.types import Usage
from ragmeter.metrics.base import Score

if TYPE_CHECKING:
    import pandas as pd

    from ragmeter.log.labels import Label
    from ragmeter.log.store import ScoreRow
    from ragmeter.run.labels import LabelImport


@dataclass(frozen=True)
class MetricSummary:
    """Aggregate of one metric over a run.

    ``mean`` and ``ci95`` are over the valid scores only, and are None when there is none;
    ``n_invalid`` scores failed with a recorded cause; ``n_skipped`` samples lacked a field the
    metric needs (or were not reached by an interrupted run). Only the samples of the metric's
    level count: a conversation metric's over the conversations, the others' over the rest.
    """

    name: str
    mean: float | None
    ci95: tuple[float, float] | None
    n_scored: int
    n_invalid: int
    n_skipped: int
    usage: Usage = field(default_factory=Usage)
    threshold: float | None = None
    pass_rate: float | None = None
    invalid_kinds: Mapping[str, int] = field(default_factory=dict)
    #: with repeated judging (--samples N): the mean over samples of each sample's standard
    #: deviation across its N judgements -- how noisy the judge is on these data; else None
    judge_spread: float | None = None
    #: when the run has random-drawn labels of this metric: the estimate of the *human* mean
    #: (:func:`~ragmeter.run.calibrated.calibrated_estimate`: mean, ci95, n_labels, method "ppi++",
    #: lambda, labels_only_mean, labels_only_ci95...); else None. ``mean`` and ``ci95`` above are
    #: the judge's: the interval says how far the judge's mean may move with other samples of this
    #: kind, not how far it is from what people would say
    calibrated: Mapping[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        out = self._base_dict()
        if self.calibrated is not None:
            out["calibrated"] = dict(self.calibrated)
        return out

    def _base_dict(self) -> dict[str, Any]:
        return {
            "mean": self.mean,
            "ci95": None if self.ci95 is None else [self.ci95[0], self.ci95[1]],
            "n_scored": self.n_scored,
            "n_invalid": self.n_invalid,
            "n_skipped": self.n_skipped,
            "threshold": self.threshold,
            "pass_rate": self.pass_rate,
            "invalid_kinds": dict(self.invalid_kinds),
            "judge_spread": self.judge_spread,
            "usage": self.usage.to_dict(),
        }


class Result:
    """Scores of one run. Build with :meth:`from_rows` or :meth:`from_store`."""

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
        self.run_id = run_id
        self.meta = dict(meta)
        self.samples = list(samples)
        self.problems = list(problems)
        if keys is None:
            keys = dict(
                zip((i for i, _ in self.samples), sample_keys([s for _, s in self.samples]), strict=True)
            )
        #: each sample's stable key by index (:mod:`ragmeter.dataset.keys`): what compare matches by
        self.keys: dict[int, str] = dict(keys)
        self.metric_names = list(metric_names)
        self.status = status
        self.store_dir = store_dir
        self._rows: dict[tuple[int, str], ScoreRow] = {(r.idx, r.metric): r for r in rows}
        self._bootstrap_resamples = bootstrap_resamples
        self._summaries: dict[str, MetricSummary] | None = None
        self._labels: dict[tuple[int, str], Label] = {}  # a run without a store keeps its labels here

    # -- construction -------------------------------------------------------------------------
    @classmethod
    def from_store(cls, store_dir: str | Path, run_id: str) -> Result:
        """Read a run record back: the figures equal those of the run that wrote it."""
        from ragmeter.log.store import RunStore

        with RunStore(store_dir) as store:
            info = store.get_run(run_id)
            meta = info.meta
            return cls(
                run_id=info.run_id,
                meta=meta,
                samples=store.load_samples(info.run_id),
                problems=store.load_problems(info.run_id),
                keys=store.load_keys(info.run_id),
                rows=store.load_scores(info.run_id),
                metric_names=[m["name"] for m in meta.get("metrics", [])],
                status=info.status,
                store_dir=Path(store_dir),
                bootstrap_resamples=int(meta.get("config", {}).get("bootstrap_resamples", 2000)),
            )

    # -- accessors -----------------------------------------------------------------------------
    @property
    def n_samples(self) -> int:
        """Samples that loaded (and were scheduled)."""
        return len(self.samples)

    @property
    def n_skipped(self) -> int:
        """Input rows skipped entirely: unreadable, or lacking what every chosen metric needs.

        ``problems`` lists every input problem, including a field missing for one metric only.
        """
        return int(self.meta.get("n_skipped_rows", len(self.problems)))

    def score(self, idx: int, metric: str) -> Score | None:
        row = self._rows.get((idx, metric))
        return None if row is None else row.score

    def row(self, idx: int, metric: str) -> ScoreRow | None:
        """Everything stored for one (sample, metric) job, or None when it was not scored."""
        return self._rows.get((idx, metric))

    def scores(self, metric: str) -> list[Score | None]:
        """Scores of ``metric`` in sample order (None where the sample was skipped)."""
        return [self.score(idx, metric) for idx, _ in self.samples]

    @property
    def rows(self) -> list[ScoreRow]:
        return list(self._rows.values())

    @property
    def n_invalid(self) -> int:
        return sum(1 for r in self._rows.values() if not r.score.valid)

    @property
    def usage(self) -> Usage:
        total = Usage()
        for r in self._rows.values():
            total = total + r.usage
        return total

    def usage_by_metric(self) -> dict[str, Usage]:
        out = {m: Usage() for m in self.metric_names}
        for r in self._rows.values():
            out[r.metric] = out.get(r.metric, Usage()) + r.usage
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
            self._summaries = self._with_calibrated({m: self._summarize(m) for m in self.metric_names})
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
                for idx, _ in self.samples
                if (row := self._rows.get((idx, name))) is not None
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

    def _summarize(self, metric: str) -> MetricSummary:
        values: list[float] = []
        spreads: list[float] = []
        n_invalid = 0
        kinds: dict[str, int] = {}
        usage = Usage()
        level = self.metric_level(metric)
        n_level = 0
        for idx, sample in self.samples:
            if sample.level != level:
                continue
            n_level += 1
            row = self._rows.get((idx, metric))
            if row is None:
                continue
            usage = usage + row.usage
            if row.score.valid:
                assert row.score.value is not None
                values.append(row.score.value)
                std = row.score.details.get("std")
                if isinstance(std, (int, float)):
                    spreads.append(float(std))
            else:
                n_invalid += 1
                kind = row.score.error.kind if row.score.error else "unknown"
                kinds[kind] = kinds.get(kind, 0) + 1
        spec: dict[str, Any] = next((m for m in self.meta.get("metrics", []) if m.get("name") == metric), {})
        threshold = spec.get("threshold")
        mean = ci = pass_rate = None
        if values:
            from ragmeter.stats import bootstrap_ci  # NumPy: loaded when a summary is asked for

            mean = sum(values) / len(values)
            lo, hi = bootstrap_ci(values, n_resamples=self._bootstrap_resamples, seed=0)
            ci = (float(lo), float(hi))
            if threshold is not None:
                pass_rate = sum(1 for v in values if v >= threshold) / len(values)
        return MetricSummary(
            name=metric,
            mean=mean,
            ci95=ci,
            n_scored=len(values),
            n_invalid=n_invalid,
            n_skipped=n_level - len(values) - n_invalid,
            usage=usage,
            threshold=threshold,
            pass_rate=pass_rate,
            invalid_kinds=kinds,
            judge_spread=sum(spreads) / len(spreads) if spreads else None,
        )

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
        if self.store_dir is not None:
            out["store"] = str(self.store_dir)
        return out

    # -- per-sample table ----------------------------------------------------------------------
    def to_records(self) -> list[dict[str, Any]]:
        """One dict per sample: its id, inputs, and for each metric value / reason / error. When the
        run has conversations, each also holds ``conversation_id`` and ``turn`` (None for a plain
        sample; ``turn`` None for a conversation sample)."""
        records = []
        conversations = any(s.conversation_id is not None for _, s in self.samples)
        for idx, sample in self.samples:
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
                row = self._rows.get((idx, m))
                if row is None:
                    rec[m] = None
                    # a conversation metric on a turn (or the reverse) does not apply: not a skip
                    applies = self.metric_level(m) == sample.level
                    rec[f"{m}_reason"] = "skipped" if applies else "not applicable"
                    rec[f"{m}_error"] = None
                    continue
                rec[m] = row.score.value
                rec[f"{m}_reason"] = row.score.reason
                rec[f"{m}_error"] = None if row.score.error is None else row.score.error.kind
            records.append(rec)
        return records

    def details(self, idx: int, metric: str) -> dict[str, Any] | None:
        """Everything recorded for one job: score, details, raw replies, usage, timing."""
        row = self._rows.get((idx, metric))
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
        from ragmeter.report.html import write_report

        return write_report(self, path)

    def to_pandas(self) -> pd.DataFrame:
        try:
            import pandas as pd
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise ConfigError("to_pandas() needs pandas: pip install 'ragmeter[pandas]'") from e
        return pd.DataFrame.from_records(self.to_records())

    def to_jsonl(self, path: str | Path) -> Path:
        """Per-sample rows with full score details, one JSON object a line."""
        path = Path(path)
        with path.open("w", encoding="utf-8") as fh:
            for idx, sample in self.samples:
                rec: dict[str, Any] = {"idx": idx, "sample": sample.to_dict(), "scores": {}}
                if sample.conversation_id is not None:
                    rec["conversation_id"] = sample.conversation_id
                    rec["turn"] = sample.turn
                for m in self.metric_names:
                    row = self._rows.get((idx, m))
                    rec["scores"][m] = None if row is None else row.score.to_dict()
                fh.write(json.dumps(rec, ensure_ascii=False, default=str) + "\n")
        return path

    def to_csv(self, path: str | Path) -> Path:
        path = Path(path)
        records = self.to_records()
        fieldnames = list(records[0].keys()) if records else ["idx", "sample_id", "question", "answer"]
        with path.open("w", encoding="utf-8", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=fieldnames)
            writer.writeheader()
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
