"""A run's data, read as a stream: each sample checked against the metrics' needs and recorded,
then its jobs made a window at a time.

Rows stream. :class:`~ragmeter.dataset.sources.SampleStream` reads the source a row at a time
(JSONL and CSV a line, Parquet a record batch; a JSON document is parsed whole), and the run's
*intake* checks each sample against every metric's ``requires`` and writes it to the run store in
chunks of :data:`INTAKE_CHUNK` samples with its key and the problems found so far. Memory then
holds one chunk, whatever the size of the data. Only when the whole source has been read, and
every problem is known, does scoring start: ``strict`` still stops a run before any judge call,
the dataset hash, sample count and skipped rows are in the run record before the first score,
and ``--resume`` finds every sample in the store.

Scoring reads the samples back from the store a page at a time (:func:`stored_jobs`) and makes
their jobs as the executor's workers ask for them, so the jobs in memory are those in flight.

A run without a store (``out=None``) keeps its samples in memory (its :class:`Result` is made of
them): :func:`intake_to_memory`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ragmeter.dataset.sample import Sample
from ragmeter.errors import DatasetError
from ragmeter.metrics.base import Metric
from ragmeter.run.executor import Job
from ragmeter.run.turns import needs_rewrite

if TYPE_CHECKING:
    from ragmeter.dataset.sources import SampleStream, StreamedSample
    from ragmeter.log.store import RunStore

#: samples written to the run store per transaction while the data are read
INTAKE_CHUNK = 500


@dataclass
class Intake:
    """What reading a run's data found: counts, the dataset hash, the jobs each metric has."""

    source: str | None
    n_samples: int = 0
    n_problems: int = 0  # every input problem: unreadable rows and fields a metric lacks
    n_unreadable: int = 0  # rows that could not be read into a sample
    n_unscorable: int = 0  # samples that no chosen metric can score
    jobs_per_metric: dict[str, int] = field(default_factory=dict)
    dataset_hash: str | None = None
    #: samples per level ("sample", "conversation": what a metric's skipped count is over)
    levels: dict[str, int] = field(default_factory=dict)
    #: per metric, the first of its jobs that needs a turn's question made standalone (run/turns.py),
    #: so the run can refuse a judge without that step before any call
    rewrites: dict[str, Job] = field(default_factory=dict)

    @property
    def n_jobs(self) -> int:
        return sum(self.jobs_per_metric.values())

    @property
    def n_skipped_rows(self) -> int:
        """Rows skipped entirely: unreadable, or lacking what every chosen metric needs."""
        return self.n_unreadable + self.n_unscorable

    def meta(self) -> dict[str, Any]:
        """The run record's fields about its data."""
        return {
            "source": self.source,
            "dataset_hash": self.dataset_hash,
            "n_samples": self.n_samples,
            "n_skipped_rows": self.n_skipped_rows,
            "n_problems": self.n_problems,
            "n_samples_by_level": dict(self.levels),
        }

    def metrics_with_jobs(self, metrics: Sequence[Metric]) -> list[Metric]:
        return [m for m in metrics if self.jobs_per_metric.get(m.name)]


def scorable(sample: Sample, metric: Metric) -> bool:
    """Whether ``metric`` scores ``sample``: the sample is of the metric's level (a conversation
    metric scores conversation samples, the others plain and turn samples) and has its fields."""
    return metric.level == sample.level and all(sample.has(f) for f in metric.requires)


def missing_fields(
    sample: Sample, row: int, metrics: Sequence[Metric], source: str | None
) -> tuple[list[DatasetError], list[Metric]]:
    """(a problem per field a metric of the sample's level needs and the sample lacks, the metrics
    that can score it)."""
    problems: list[DatasetError] = []
    able: list[Metric] = []
    for metric in metrics:
        if metric.level != sample.level:  # a conversation metric on a turn, or the reverse
            continue
        missing = [f for f in metric.requires if not sample.has(f)]
        if not missing:
            able.append(metric)
            continue
        for f in missing:
            value = getattr(sample, f, None)
            what = "is empty" if value not in (None, ()) else "is missing"
            if sample.turn is not None:  # a conversation's row holds several turns: say which
                what += f" in turn {sample.turn}"
            problems.append(
                DatasetError(f"{what}; metric {metric.name!r} needs it", file=source, row=row, field=f)
            )
    return problems, able


class Reading:
    """One pass over a sample stream, checked against ``metrics``: iterating yields
    ``(idx, item, able)`` (the sample's index in the run, the :class:`StreamedSample`, the metrics
    that can score it) and counts into ``intake``; the problems found (unreadable rows and missing
    fields, in input order) wait in ``pending`` until the reader takes them (:meth:`take_problems`)."""

    def __init__(self, stream: SampleStream, metrics: Sequence[Metric]) -> None:
        self.stream = stream
        self.metrics = list(metrics)
        self.levels = {m.level for m in self.metrics}
        self.intake = Intake(stream.source)
        self.pending: list[DatasetError] = []

    def take_problems(self) -> list[DatasetError]:
        out, self.pending = self.pending, []
        return out

    def __iter__(self) -> Iterator[tuple[int, StreamedSample, list[Metric]]]:
        intake = self.intake
        for item in self.stream:
            self._stream_problems()
            problems, able = missing_fields(item.sample, item.row, self.metrics, self.stream.source)
            self.pending.extend(problems)
            intake.n_problems += len(problems)
            idx = intake.n_samples
            for m in able:
                intake.jobs_per_metric[m.name] = intake.jobs_per_metric.get(m.name, 0) + 1
                if m.name not in intake.rewrites and needs_rewrite(item.sample, m):
                    intake.rewrites[m.name] = Job(idx, m, item.sample)
            level = item.sample.level
            intake.levels[level] = intake.levels.get(level, 0) + 1
            if not able and level in self.levels:  # a level no metric has is not skipped
                intake.n_unscorable += 1
            intake.n_samples += 1
            yield idx, item, able
        self._stream_problems()
        intake.dataset_hash = self.stream.content_hash()

    def _stream_problems(self) -> None:
        found = self.stream.take_problems()
        if found:
            self.intake.n_unreadable += len(found)
            self.intake.n_problems += len(found)
            self.pending.extend(found)


def intake_to_memory(
    stream: SampleStream, metrics: Sequence[Metric]
) -> tuple[Intake, list[tuple[int, Sample]], list[str], list[DatasetError]]:
    """Read the whole stream into memory: (intake, indexed samples, their keys, problems)."""
    reading = Reading(stream, metrics)
    samples: list[tuple[int, Sample]] = []
    keys: list[str] = []
    for idx, item, _ in reading:
        samples.append((idx, item.sample))
        keys.append(item.key)
    return reading.intake, samples, keys, reading.take_problems()


def intake_to_store(
    stream: SampleStream,
    metrics: Sequence[Metric],
    store: RunStore,
    run_id: str,
    *,
    keep_problems: bool = False,
) -> tuple[Intake, list[DatasetError]]:
    """Read the stream into run ``run_id`` of ``store`` (which must exist), :data:`INTAKE_CHUNK`
    samples a transaction, with their keys and the problems in input order. Returns the intake and,
    with ``keep_problems`` (a strict run, which reports them all), every problem."""
    reading = Reading(stream, metrics)
    kept: list[DatasetError] = []
    chunk: list[tuple[int, Sample]] = []
    keys: list[str] = []
    records: list[dict[str, Any]] = []

    def write() -> None:
        if chunk:
            store.add_samples(run_id, chunk, keys, records)
            chunk.clear()
            keys.clear()
            records.clear()
        problems = reading.take_problems()
        if problems:
            store.add_problems(run_id, problems)
            if keep_problems:
                kept.extend(problems)

    for idx, item, _ in reading:
        chunk.append((idx, item.sample))
        keys.append(item.key)
        records.append(item.record)
        if len(chunk) >= INTAKE_CHUNK:
            write()
    write()
    return reading.intake, kept


def memory_jobs(samples: Iterable[tuple[int, Sample]], metrics: Sequence[Metric]) -> Iterator[Job]:
    """The jobs of samples held in memory, sample by sample, in metric order."""
    for idx, sample in samples:
        for metric in metrics:
            if scorable(sample, metric):
                yield Job(idx, metric, sample)


def stored_jobs(
    store: RunStore, run_id: str, metrics: Sequence[Metric], *, skip_done: bool = False
) -> Iterator[Job]:
    """The jobs of a recorded run, made as they are asked for: its samples are read back from the
    store a page at a time. ``skip_done``: leave out the jobs that have a stored score (resume)."""
    for page in store.iter_samples(run_id):
        done = store.completed_jobs(run_id, between=(page[0][0], page[-1][0])) if skip_done else set()
        for idx, sample in page:
            for metric in metrics:
                if (idx, metric.name) not in done and scorable(sample, metric):
                    yield Job(idx, metric, sample)


def count_stored_jobs(store: RunStore, run_id: str, metrics: Sequence[Metric]) -> Intake:
    """What is left to score of a recorded run (a resume): its jobs left per metric in
    ``jobs_per_metric`` and the first of each metric's that needs a rewrite in ``rewrites``; one
    pass over its samples."""
    left = Intake(None, jobs_per_metric={m.name: 0 for m in metrics})
    for job in stored_jobs(store, run_id, metrics, skip_done=True):
        left.jobs_per_metric[job.metric.name] += 1
        if job.metric.name not in left.rewrites and needs_rewrite(job.sample, job.metric):
            left.rewrites[job.metric.name] = job
    return left


__all__ = [
    "INTAKE_CHUNK",
    "Intake",
    "Reading",
    "count_stored_jobs",
    "intake_to_memory",
    "intake_to_store",
    "memory_jobs",
    "missing_fields",
    "scorable",
    "stored_jobs",
]
