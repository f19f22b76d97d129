"""The Ray engine: a run's jobs sharded over a Ray cluster, results streamed into the driver's store.

``aevaluate(..., engine="ray")`` / ``ragmeter evaluate --engine ray [--ray-address ADDR]``.

- Workers are Ray actors, one per CPU the cluster offers (or ``RunConfig.ray_workers``). Each
  builds its own judge once, from the judge's spec or the CLI's judge recipe (a judge object is not
  shipped: its clients, caches and models belong to the process that made them), so the local
  judge loads its models once per worker, and keeps one event loop, so the step memo and the
  local judge's caches live as long as the worker.
- An LLM judge's limit is split: each of W workers gets ``concurrency // W`` requests in flight
  (at least 1; with fewer slots than workers, only ``concurrency`` workers run), so the endpoint
  never sees more than ``concurrency`` requests in flight in total.
- Shards hold whole samples (every metric of a sample goes to the same worker, so the memo shares
  their steps). Each worker has at most two shards queued; as a shard finishes, its scores are
  recorded in the driver's run store (committed in groups, like the local engine) and the worker
  gets the next one, cut then from the run's jobs (which the driver reads back from its store a
  page at a time, as the local engine does: the driver holds the shards queued, not the run). A
  run that stops half way resumes with either engine.

Ray is an optional dependency (``pip install "ragmeter[ray]"``), imported only here.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ragmeter.errors import ConfigError
from ragmeter.run.executor import Job, Recorder, apply_run_concurrency, run_jobs

if TYPE_CHECKING:
    from ragmeter.log.store import ScoreRow
    from ragmeter.run.config import RunConfig

#: samples per shard at most (fewer when that leaves a worker idle)
SHARD_SAMPLES = 256
#: shards queued per worker: one running, one waiting, so a worker never waits on the driver
SHARDS_PER_WORKER = 2


def import_ray() -> Any:
    try:
        import ray
    except ImportError as e:
        raise ConfigError('the Ray engine needs Ray: pip install "ragmeter[ray]"') from e
    return ray


def judge_source(judge: Any, meta: Mapping[str, Any] | None) -> dict[str, Any]:
    """The judge recipe each worker builds its judge from (see
    :func:`ragmeter.judges.factory.make_judge_from_recipe`): the judge given as a spec string (or
    None, the local judge) or as a recipe, else the recipe the CLI stored in the run record. A
    judge object cannot be shipped: its clients, caches and models belong to this process."""
    if judge is None or isinstance(judge, str):
        return {"spec": judge}
    if isinstance(judge, Mapping):
        return dict(judge)
    recipe = (meta or {}).get("judge_recipe")
    if isinstance(recipe, Mapping):
        return dict(recipe)
    raise ConfigError(
        "engine='ray' builds the judge on each worker, so give it as a spec or a recipe: judge=None (the "
        "local judge), a string such as 'openai:gpt-4o-mini', or a dict such as {'spec': "
        "'openai-compatible:MODEL', 'base_url': URL, 'config': {...}}; a judge object cannot be sent "
        "to the workers (the CLI's --engine ray works with every --judge option)"
    )


def build_judge(recipe: Mapping[str, Any], concurrency: int) -> Any:
    """A worker's judge, with ``concurrency`` requests in flight at most (its share of the run's)."""
    from ragmeter.judges.factory import make_judge_from_recipe

    config = {k: v for k, v in (recipe.get("config") or {}).items() if k != "concurrency"}
    judge = make_judge_from_recipe({**recipe, "config": config})
    apply_run_concurrency(judge, concurrency)
    return judge


class Worker:
    """One Ray actor: a judge built once, one event loop, shards scored by the local executor."""

    def __init__(self, recipe: Mapping[str, Any], concurrency: int) -> None:
        from ragmeter.run.config import RunConfig

        self.judge = build_judge(recipe, concurrency)
        self.config = RunConfig(concurrency=concurrency, progress=False)
        self.loop = asyncio.new_event_loop()

    def score(self, jobs: Sequence[Job]) -> list[ScoreRow]:
        rows, _ = self.loop.run_until_complete(
            run_jobs(jobs, self.judge, self.config, None, "ray-shard", keep_rows=True)
        )
        return rows

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.loop.run_until_complete(self.judge.aclose())
        self.loop.close()


def shards(jobs: Iterable[Job], n_workers: int, n_samples: int | None = None) -> Iterator[list[Job]]:
    """Jobs in shards of whole samples: at most SHARD_SAMPLES samples, and small enough that each
    worker gets several shards (a slow shard at the end then costs less). ``jobs`` may be a lazy
    iterator (a shard is cut as it is needed); then ``n_samples`` says about how many samples
    they hold (a list is counted)."""
    if n_samples is None:
        jobs = list(jobs)
        n_samples = len({j.idx for j in jobs})
    size = max(1, min(SHARD_SAMPLES, -(-n_samples // (n_workers * 4))))
    shard: list[Job] = []
    samples: set[int] = set()
    for job in jobs:
        if job.idx not in samples and len(samples) >= size:
            yield shard
            shard, samples = [], set()
        samples.add(job.idx)
        shard.append(job)
    if shard:
        yield shard


def _worker_count(ray: Any, config: RunConfig, total: int) -> int:
    n = config.ray_workers or int(ray.cluster_resources().get("CPU", 1) or 1)
    return max(1, min(n, total))


def total_concurrency(recipe: Mapping[str, Any], config: RunConfig) -> int:
    """Requests in flight the endpoint may see in all: the recipe's explicit judge limit, else the run's."""
    explicit = (recipe.get("config") or {}).get("concurrency")
    return min(int(explicit), config.concurrency) if explicit else config.concurrency


async def run_jobs_ray(
    jobs: Iterable[Job],
    recipe: Mapping[str, Any],
    config: RunConfig,
    store: Any,
    run_id: str,
    *,
    keep_rows: bool,
    total: int | None = None,
    n_samples: int | None = None,
) -> tuple[list[ScoreRow], int]:
    """Run ``jobs`` on Ray workers; record each result on the driver as its shard returns. ``jobs``
    may be a lazy iterator: shards are cut from it as workers free up, so the driver holds the
    shards queued, not the run; ``total`` is then their number and ``n_samples`` about how many
    samples they hold (both are found from a list)."""
    if total is None:
        jobs = list(jobs)
        total = len(jobs)
        n_samples = len({j.idx for j in jobs})
    ray = import_ray()
    started_here = not ray.is_initialized()
    if started_here:
        local = config.ray_address is None
        ray.init(
            address=config.ray_address,
            include_dashboard=False,
            log_to_driver=False,
            configure_logging=False,
            # a local cluster's workers import what the driver imports (a remote one has its own)
            runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join(_import_paths())}} if local else None,
        )
    recorder = Recorder(store, run_id, total, progress=config.progress, keep_rows=keep_rows)
    actors: list[Any] = []
    pending: dict[Any, Any] = {}  # ObjectRef -> actor
    try:
        if not total:
            return [], 0
        slots = total_concurrency(recipe, config)
        n_workers = _worker_count(ray, config, slots)
        per_worker = max(1, slots // n_workers)
        actor_cls = ray.remote(num_cpus=1)(Worker)
        actors = [actor_cls.remote(dict(recipe), per_worker) for _ in range(n_workers)]
        todo = shards(jobs, n_workers, n_samples if n_samples is not None else total)

        def submit(actor: Any) -> None:
            shard = next(todo, None)
            if shard is not None:
                pending[actor.score.remote(shard)] = actor

        for actor in actors:
            for _ in range(SHARDS_PER_WORKER):
                submit(actor)
        async with recorder:
            while pending:
                futures = {asyncio.wrap_future(ref.future()): ref for ref in pending}
                done, _ = await asyncio.wait(futures, return_when=asyncio.FIRST_COMPLETED)
                for fut in done:
                    actor = pending.pop(futures[fut])
                    for row in fut.result():
                        recorder.add(row)
                    submit(actor)
        return recorder.rows, recorder.done
    finally:
        for actor in actors:
            if not pending:  # finished: close each judge; interrupted: stop the workers at once
                with contextlib.suppress(Exception):
                    ray.get(actor.close.remote(), timeout=30)
            with contextlib.suppress(Exception):
                ray.kill(actor)
        if started_here:
            ray.shutdown()


def _import_paths() -> list[str]:
    """The driver's import path, so that workers of a local cluster import the same ragmeter
    (and the user's metric modules) as the driver does."""
    import sys

    return [p for p in sys.path if p and os.path.isdir(p)]
