"""Executing a run's jobs: keep the judge's request slots full, batch what can be batched, record.

Scheduling. ``RunConfig.concurrency`` (the CLI's ``--concurrency``) is the number of judge requests
in flight per endpoint: the runner hands it to the judge (``judge.set_run_concurrency``; a
``JudgeConfig.concurrency`` set explicitly wins) and runs ``JOBS_PER_SLOT`` times as many jobs at
once. The surplus matters because a job is often not *sending* anything: it waits on a step
another metric of the same sample has in flight (the step memo, :mod:`ragmeter.judges.memo`), or
between its own sequential steps. Jobs that cannot get a request slot queue for one, which costs
nothing; a request that later requests wait on (a sample's claims) is served before the others
(:class:`ragmeter.judges.limits.RequestSlots`), so with jobs to spare every sample's chain of
requests starts early and a run does not end on a tail of second steps with most slots idle.
Workers start ``STARTING_WORKERS`` at a time, with a turn of the event loop in between, so the
first requests go out while the rest start.

Batching. A metric with ``batch_size > 0`` scores up to that many samples in one
``score_batch`` call (the lexical metrics, semantic similarity with one ``embed`` call for the
whole batch). A batch that raises is scored again sample by sample, so one bad sample still gets
its own invalid score and the rest stay valid.

Recording. Each result goes to the run store as soon as it exists; the store commits in groups
(:class:`ragmeter.log.store.RunStore`), and a background task commits what is pending every
``COMMIT_INTERVAL_S`` so that a crash loses at most the last group.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ragmeter.errors import EndpointError, RagmeterError
from ragmeter.judges.types import CallLog, current_call_log, current_retry_listener
from ragmeter.log.reading import ScoreRow
from ragmeter.log.serialize import call_to_dict
from ragmeter.metrics.base import Metric, Score
from ragmeter.run.images import judge_images
from ragmeter.run.progress import Progress
from ragmeter.run.sync import gather_or_cancel
from ragmeter.run.turns import needs_rewrite, scoring_sample, with_question

if TYPE_CHECKING:
    from ragmeter.dataset.sample import Sample
    from ragmeter.judges.base import Judge
    from ragmeter.run.config import RunConfig

#: jobs in flight per request slot of the endpoint (see the module docstring)
JOBS_PER_SLOT = 8
#: workers started per turn of the event loop at the start of a run (see run_jobs)
STARTING_WORKERS = 16
#: the longest a finished result waits in memory before the store commits it
COMMIT_INTERVAL_S = 0.1
#: results the run store commits in one transaction at most (see ragmeter.log.store)
COMMIT_GROUP_ROWS = 1000


@dataclass(frozen=True)
class Job:
    idx: int
    metric: Metric
    sample: Sample


@dataclass(frozen=True)
class Batch:
    """Jobs of one batchable metric, scored by one ``score_batch`` call."""

    metric: Metric
    jobs: tuple[Job, ...]


def _invalid_from(e: BaseException, metric: Metric) -> Score:
    if isinstance(e, RagmeterError):
        return Score.invalid(type(e).__name__, str(e) or type(e).__name__, raw=getattr(e, "raw", None))
    tb = "".join(traceback.format_exception(type(e), e, e.__traceback__, limit=6))
    return Score.invalid("MetricError", f"{type(e).__name__}: {e}", raw=tb)


def _checked(score: Any, metric: Metric) -> Score:
    if isinstance(score, Score):
        return score
    return Score.invalid(
        "MetricError", f"metric {metric.name!r} returned {type(score).__name__}, not a Score"
    )


async def score_one(job: Job, judge: Judge) -> tuple[Score, CallLog, float]:
    """Run one job; every failure becomes an invalid Score with its cause. Never raises for a
    judge or metric failure (cancellation still propagates)."""
    log = CallLog()
    token = current_call_log.set(log)
    start = time.perf_counter()
    question: str | None = None
    try:
        try:  # a conversation's turn is scored with its question made standalone (run/turns.py)
            sample, question = await scoring_sample(job.sample, job.metric, judge)
        except (asyncio.CancelledError, KeyboardInterrupt, EndpointError):
            raise
        except Exception as e:
            failed = _invalid_from(e, job.metric)
            assert failed.error is not None
            score = Score.invalid(
                failed.error.kind,
                f"the turn's standalone question could not be made: {failed.error.message}",
                raw=failed.error.raw,
            )
        else:
            with judge_images(sample, judge) as seen:  # image contexts (ragmeter.run.images)
                score = _checked(await job.metric.score(seen, judge), job.metric)
            if question is not None:
                score = with_question(score, question)
    except (asyncio.CancelledError, KeyboardInterrupt, EndpointError):
        raise  # EndpointError: every later call would fail the same way, so the run stops
    except Exception as e:  # a judge error, or a bug in a (custom) metric: not the run's end
        score = _invalid_from(e, job.metric)
        if question is not None:
            score = with_question(score, question)
    finally:
        current_call_log.reset(token)
    return score, log, time.perf_counter() - start


async def score_batch(batch: Batch, judge: Judge) -> list[tuple[Job, Score, CallLog, float]]:
    """Score a batch in one call. The batch's model calls (if any) are logged with its first job;
    each job gets an equal share of the wall time. If the batch call fails, or returns the wrong
    number of scores, each job is scored on its own."""
    log = CallLog()
    token = current_call_log.set(log)
    start = time.perf_counter()
    try:
        scores = list(await batch.metric.score_batch([j.sample for j in batch.jobs], judge))
        if len(scores) != len(batch.jobs):
            raise ValueError(f"score_batch returned {len(scores)} scores for {len(batch.jobs)} samples")
    except (asyncio.CancelledError, KeyboardInterrupt):
        raise
    except Exception:
        scores = None
    finally:
        current_call_log.reset(token)
    if scores is None:
        return [(job, *await score_one(job, judge)) for job in batch.jobs]
    share = (time.perf_counter() - start) / len(batch.jobs)
    empty = CallLog()  # the other jobs' (nothing is added to a finished job's log)
    return [
        (job, _checked(s, batch.metric), log if i == 0 else empty, share)
        for i, (job, s) in enumerate(zip(batch.jobs, scores, strict=True))
    ]


def work_units(jobs: Iterable[Job]) -> Iterator[Job | Batch]:
    """Jobs in order, with the jobs of each batchable metric gathered into batches of its
    ``batch_size`` (a batch is yielded once full, or at the end)."""
    pending: dict[int, list[Job]] = {}
    for job in jobs:
        size = int(getattr(job.metric, "batch_size", 0) or 0)
        if size <= 0 or needs_rewrite(job.sample, job.metric):  # a turn's question is rewritten first
            yield job
            continue
        group = pending.setdefault(id(job.metric), [])
        group.append(job)
        if len(group) >= size:
            yield Batch(job.metric, tuple(group))
            pending[id(job.metric)] = []
    for group in pending.values():
        if group:
            yield Batch(group[0].metric, tuple(group))


def load_summary_tools() -> None:
    """Import the bootstrap and start NumPy's random generator once (about 20-30 ms the first time),
    so that the summary at the end of a run does not wait for them. Nobody awaits it: a failure
    here is left to the summary itself, which meets it again and reports it."""
    with contextlib.suppress(Exception):
        from ragmeter.stats import bootstrap_ci

        bootstrap_ci([0.0, 1.0], n_resamples=2, seed=0)


def apply_run_concurrency(judge: Judge, n: int) -> None:
    """Give the judge the run's requests-in-flight limit (judges without endpoints ignore it)."""
    setter = getattr(judge, "set_run_concurrency", None)
    if callable(setter):
        setter(n)


class Recorder:
    """Where finished jobs go, whatever engine ran them: the run store (committed in groups, and
    every ``COMMIT_INTERVAL_S`` by a background task while the recorder is entered), the progress
    bar, when ``keep_rows`` a list for an in-memory result, and ``sink`` (a callable given each
    row, with its calls as dicts, as it is recorded)."""

    def __init__(
        self,
        store: Any,
        run_id: str,
        total: int,
        *,
        progress: bool | None,
        keep_rows: bool,
        in_flight: Callable[[], int] | None = None,
        sink: Callable[[ScoreRow], None] | None = None,
    ) -> None:
        self.store = store
        self.run_id = run_id
        self.keep_rows = keep_rows
        self.sink = sink
        self.rows: list[ScoreRow] = []
        self.done = 0
        self._progress = Progress(total, enabled=progress, in_flight=in_flight)
        self._commit_task: asyncio.Future[None] | None = None
        self._summary_tools_started = False

    def prefetch_summary_tools(self) -> None:
        """Load what the run's summary will need (:func:`load_summary_tools`) in a thread, once:
        when the judge's warm-up says the process is only waiting on the endpoint (its first wave
        of requests is out, its models are loaded), else when the first job is done. Loaded at
        the first reply instead, those imports would hold the interpreter lock while the first
        wave of replies is turned into the next requests."""
        if self._summary_tools_started:
            return
        with contextlib.suppress(RuntimeError):  # no running loop (a synchronous caller)
            asyncio.get_running_loop().run_in_executor(None, load_summary_tools)
            self._summary_tools_started = True

    def on_retry(self, notice: Any) -> None:
        """A judge call waits to be retried: the progress bar says so (see :class:`Progress`)."""
        self._progress.on_retry(notice)

    def add(self, row: ScoreRow, calls: Sequence[Any] | None = None) -> None:
        """Record one finished job. ``calls``: its model calls as records (default: ``row.calls``)."""
        self.done += 1
        if self.done == 1:  # the run is under way (if the judge's warm-up has not said so before)
            self.prefetch_summary_tools()
        if self.store is not None:
            self.store.record_score(
                self.run_id,
                row.idx,
                row.metric,
                row.score,
                row.calls if calls is None else calls,
                row.duration_s,
            )
        if self.keep_rows:
            self.rows.append(row)
        if self.sink is not None:
            self.sink(row)
        self._progress.advance(invalid=not row.score.valid, usage=row.usage)

    def add_log(self, job: Job, score: Score, log: CallLog, duration: float) -> None:
        calls = [call_to_dict(c) for c in log.calls] if self.keep_rows or self.sink is not None else []
        self.add(ScoreRow(job.idx, job.metric.name, score, log.usage, calls, duration), log.calls)

    async def _commit_loop(self) -> None:
        while True:
            await asyncio.sleep(COMMIT_INTERVAL_S)
            self.store.flush()

    async def __aenter__(self) -> Recorder:
        if self.store is not None:
            self._commit_task = asyncio.ensure_future(self._commit_loop())
        return self

    async def __aexit__(self, *exc: object) -> None:
        try:
            if self._commit_task is not None:
                self._commit_task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self._commit_task
            if self.store is not None:
                self.store.flush()
        finally:
            self._progress.close()


async def run_jobs(
    jobs: Iterable[Job],
    judge: Judge,
    config: RunConfig,
    store: Any,
    run_id: str,
    *,
    keep_rows: bool,
    total: int | None = None,
    steps: frozenset[str] | None = None,
    sink: Callable[[ScoreRow], None] | None = None,
) -> tuple[list[ScoreRow], int]:
    """Run ``jobs`` in this process; record each result. Returns (rows kept in memory when
    ``keep_rows``, jobs done).

    ``jobs`` may be a lazy iterator (a run's jobs are made as the workers ask for them, so only
    those in flight are in memory); then ``total`` (how many there are) and ``steps`` (the judge
    steps their metrics ask, for the judge's warm-up) are given, as a list's are found from it.
    ``sink``: see :class:`Recorder`."""
    if total is None or steps is None:
        listed = jobs if isinstance(jobs, Sequence) else list(jobs)
        jobs, total, steps = listed, len(listed), steps_of(listed) if steps is None else steps
    in_flight = (lambda: int(getattr(judge, "in_flight", 0))) if hasattr(judge, "in_flight") else None
    recorder = Recorder(
        store, run_id, total, progress=config.progress, keep_rows=keep_rows, in_flight=in_flight, sink=sink
    )
    units = work_units(jobs)

    async def worker() -> None:
        for unit in units:  # one shared iterator: each unit goes to exactly one worker
            if isinstance(unit, Batch):
                for job, score, log, duration in await score_batch(unit, judge):
                    recorder.add_log(job, score, log, duration)
            else:
                recorder.add_log(unit, *await score_one(unit, judge))

    n_workers = max(1, min(config.concurrency * JOBS_PER_SLOT, total))
    async with recorder:
        listening = current_retry_listener.set(recorder.on_retry)  # the workers inherit it
        tasks: list[asyncio.Future[None]] = []
        try:
            # Started STARTING_WORKERS at a time, with a turn of the event loop in between, so the
            # first requests connect and go out while the rest of the workers start, instead of
            # after every worker has taken its first step (at 64 slots, 512 of them: ~80 ms).
            for start in range(0, n_workers, STARTING_WORKERS):
                if start:
                    await asyncio.sleep(0)
                tasks.extend(
                    asyncio.ensure_future(worker()) for _ in range(min(STARTING_WORKERS, n_workers - start))
                )
        except BaseException:
            for t in tasks:
                t.cancel()
            raise
        finally:
            current_retry_listener.reset(listening)
        warm_up = getattr(judge, "warm_up", None)

        async def warm() -> None:
            assert callable(warm_up)
            await warm_up(steps)
            recorder.prefetch_summary_tools()

        warming = asyncio.ensure_future(warm()) if callable(warm_up) and total else None
        try:
            await gather_or_cancel(tasks)
        finally:
            if warming is not None:  # done by now, or waiting for something the run never needed
                warming.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await warming
    return recorder.rows, recorder.done


def steps_of(jobs: Iterable[Job]) -> frozenset[str]:
    """The judge steps the jobs' metrics ask for."""
    return steps_of_metrics({id(j.metric): j.metric for j in jobs}.values())


def steps_of_metrics(metrics: Iterable[Metric]) -> frozenset[str]:
    """The judge steps ``metrics`` ask for."""
    return frozenset(step for m in metrics for step in m.steps)
