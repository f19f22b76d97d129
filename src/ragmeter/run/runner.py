"""The async core of evaluation: read the data into the run, run its (sample x metric) jobs under
a bound, record each.

``aevaluate`` is the one implementation; ``evaluate`` (in :mod:`ragmeter.run.api`) only runs it.
Rows stream (:mod:`ragmeter.run.intake`): the data are read, checked and recorded a chunk at a
time, then the jobs are made from the recorded samples as the workers ask for them, and the
result reads the record back; memory holds a window of the run, not the run.
"""

from __future__ import annotations

import asyncio
import contextlib
import platform
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from ragmeter.dataset.seen import SpilledSeen
from ragmeter.dataset.sources import DatasetErrors, SampleStream
from ragmeter.errors import ConfigError, DatasetError, RagmeterError, RunError, UnsupportedStepError, add_note
from ragmeter.judges.base import Judge
from ragmeter.metrics.base import Metric
from ragmeter.metrics.registry import resolve_metrics
from ragmeter.run.config import RunConfig
from ragmeter.run.executor import COMMIT_GROUP_ROWS, Job, apply_run_concurrency, run_jobs, steps_of_metrics
from ragmeter.run.intake import (
    Intake,
    count_stored_jobs,
    intake_to_memory,
    intake_to_store,
    memory_jobs,
    stored_jobs,
)
from ragmeter.run.result import Result
from ragmeter.run.turns import check_rewrite_support

RUN_FORMAT_VERSION = 1


def resolve_judge(judge: Any) -> Judge:
    """A Judge instance, a spec string ("openai:gpt-4o-mini"), None for the local judge, a recipe
    dict (see :func:`ragmeter.judges.factory.make_judge_from_recipe`), or a LlamaIndex LLM object
    (:mod:`ragmeter.judges.providers.llama_index_llm`)."""
    if judge is None or isinstance(judge, str):
        from ragmeter.judges.factory import make_judge

        return make_judge(judge)
    if isinstance(judge, Mapping):
        from ragmeter.judges.factory import make_judge_from_recipe

        return make_judge_from_recipe(judge)
    if callable(getattr(judge, "supports", None)) and isinstance(getattr(judge, "name", None), str):
        return judge  # type: ignore[no-any-return]
    from ragmeter.judges.providers.llama_index_llm import is_llama_index_llm, judge_from_llama_index_llm

    if is_llama_index_llm(judge):
        return judge_from_llama_index_llm(judge)  # type: ignore[no-any-return]
    raise ConfigError(
        f"not a judge: {judge!r}; pass a Judge, a spec such as 'openai:gpt-4o-mini', a LlamaIndex LLM, or None"
    )


#: how to name an LLM judge, in the Python API's terms and the CLI's
NAME_AN_LLM_JUDGE = (
    "name an LLM judge (in Python judge='openai:gpt-4o-mini', or any Judge or spec such as "
    "'openai-compatible:MODEL' with base_url; on the command line --judge openai:gpt-4o-mini, or "
    "--judge openai-compatible:MODEL --base-url URL)"
)


def check_judge_supports(metrics: Sequence[Metric], judge: Judge) -> None:
    """Refuse, before any call, metrics whose steps the judge cannot do."""
    missing = [(m.name, s) for m in metrics for s in m.missing_steps(judge)]
    if missing:
        names = sorted({m for m, _ in missing})
        steps = sorted({s for _, s in missing})
        raise UnsupportedStepError(
            judge.name,
            ", ".join(steps),
            f"needed by {', '.join(names)}; {NAME_AN_LLM_JUDGE}, or drop these metrics",
        )


def left_out_metrics(metrics: Sequence[Metric], judge: Judge) -> list[dict[str, Any]]:
    """The metrics of ``metrics`` that ``judge`` cannot compute, each with the steps it lacks and
    why, in the run record's shape (``meta["metrics_left_out"]``)."""
    out = []
    for m in metrics:
        steps = m.missing_steps(judge)
        if steps:
            why = f"judge {judge.name!r} cannot do step(s) {', '.join(steps)}; {NAME_AN_LLM_JUDGE}"
            out.append({"metric": m.name, "steps": list(steps), "why": why})
    return out


def _package_versions() -> dict[str, str]:
    from ragmeter import __version__

    return {"ragmeter": __version__, "python": platform.python_version()}


def build_meta(
    metrics: Sequence[Metric],
    judge: Judge,
    config: RunConfig,
    extra: Mapping[str, Any] | None = None,
    data: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The run record's header. ``data``: what the intake found (:meth:`Intake.meta`: source,
    dataset hash, counts); a run with a store records it once its data have been read."""
    judge_desc = dict(judge.describe())
    judge_desc.setdefault("name", judge.name)
    return {
        "format_version": RUN_FORMAT_VERSION,
        "created_at": datetime.now(timezone.utc).isoformat(),
        "versions": _package_versions(),
        **dict(data or {}),
        "metrics": [
            {
                **m.spec(),
                "requires": list(m.requires),
                "steps": list(m.steps),
                "threshold": m.threshold,
                "higher_is_better": m.higher_is_better,
                "level": m.level,
            }
            for m in metrics
        ],
        "judge": judge_desc,
        "prompt_versions": judge_desc.get("prompts", {}),
        "config": config.to_dict(),
        **dict(extra or {}),
    }


async def aevaluate(
    data: Any,
    metrics: Any,
    judge: Any = None,
    *,
    config: RunConfig | None = None,
    mapping: Mapping[str, str] | None = None,
    meta: Mapping[str, Any] | None = None,
    **options: Any,
) -> Result:
    """Score ``data`` with ``metrics`` using ``judge``; the one async implementation.

    ``data``: a path (JSONL, JSON, CSV, Parquet), a DataFrame, a list of dicts or Samples, or a
    Dataset. ``metrics``: names, instances, or a comma-separated string. ``judge``: a Judge, a spec
    string, None for the offline local judge, or a recipe dict (``{"spec": ..., "base_url": ...,
    "config": {...}}``, see :func:`ragmeter.judges.factory.make_judge_from_recipe`), which
    ``engine="ray"`` needs unless the judge is a spec or None. ``config``: a :class:`RunConfig`; keyword
    ``options`` (``concurrency``, ``out``, ``strict``, ``resume``, ...) build one when not given.
    ``meta``: extra fields stored in the run record (the CLI stores how to rebuild the judge).
    """
    if config is None:
        config = RunConfig(**options)
    elif options:
        raise ConfigError(f"give either config or keyword options, not both: {sorted(options)}")

    metric_list = resolve_metrics(metrics)
    owns_judge = judge is None or isinstance(judge, (str, Mapping))  # we built it, so we close it
    the_judge = resolve_judge(judge)
    # one rule for metrics the judge cannot compute: the run scores the others and records which it
    # left out and why; strict (and a run of nothing else) refuses before any call
    left_out = left_out_metrics(metric_list, the_judge)
    if left_out and (config.strict or len(left_out) == len(metric_list)):
        check_judge_supports(metric_list, the_judge)
    if left_out:
        dropped = {x["metric"] for x in left_out}
        metric_list = [m for m in metric_list if m.name not in dropped]
        meta = {**dict(meta or {}), "metrics_left_out": left_out}
    apply_run_concurrency(the_judge, config.concurrency)

    store = None
    if config.out is not None:
        from ragmeter.log.store import RunStore

        store = RunStore(config.out, group_rows=COMMIT_GROUP_ROWS)
        try:
            store.check_writable()  # a read-only or full disk fails here, before any judge call
        except RunError:
            store.close()
            raise
    try:
        memory: tuple[list[tuple[int, Any]], list[str], list[DatasetError]] | None = None
        if config.resume is not None:
            if store is None:
                raise ConfigError("resume needs the run store directory (out=...)")
            run_id, run_meta, intake = _prepare_resume(store, config.resume, data, mapping, metric_list)
            check_rewrite_support(intake.rewrites.values(), the_judge)
            jobs: Iterable[Job] = stored_jobs(store, run_id, metric_list, skip_done=True)
            store.set_status(run_id, "running")
        else:
            # with a store, what the stream remembers of earlier rows goes to a temporary file too
            stream = SampleStream(
                data, mapping=mapping, limit=config.limit, seen=SpilledSeen() if store else None
            )
            extra_meta = dict(meta or {})
            if isinstance(judge, Mapping):  # a recipe rebuilds the judge for --resume and Ray workers
                extra_meta.setdefault("judge_recipe", dict(judge))
            if store is not None:
                from ragmeter.log.store import new_run_id

                run_id = config.run_id or new_run_id()
                run_meta = build_meta(metric_list, the_judge, config, extra_meta, {"source": stream.source})
                store.create_run(run_id, run_meta)
                intake = _read_into_store(stream, metric_list, store, run_id, the_judge, strict=config.strict)
                store.update_meta(run_id, intake.meta())
                run_meta.update(intake.meta())
                jobs = stored_jobs(store, run_id, metric_list)
            else:
                run_id = config.run_id or "in-memory"
                intake, samples, keys, problems = intake_to_memory(stream, metric_list)
                if config.strict and problems:
                    raise DatasetErrors(problems, file=stream.source)
                check_rewrite_support(intake.rewrites.values(), the_judge)
                memory = (samples, keys, problems)
                run_meta = build_meta(metric_list, the_judge, config, extra_meta, intake.meta())
                jobs = memory_jobs(samples, metric_list)
        per_metric = intake.jobs_per_metric
        total = sum(per_metric.values())
        steps = steps_of_metrics(m for m in metric_list if per_metric.get(m.name))
        if config.engine == "ray":
            from ragmeter.run.ray_engine import judge_source, run_jobs_ray

            recipe = judge_source(judge, run_meta)
            rows, n_done = await run_jobs_ray(
                jobs,
                recipe,
                config,
                store,
                run_id,
                keep_rows=store is None,
                total=total,
                n_samples=max(per_metric.values(), default=0),
            )
        else:
            rows, n_done = await run_jobs(
                jobs, the_judge, config, store, run_id, keep_rows=store is None, total=total, steps=steps
            )

        if store is not None:
            _record_judge(store, run_id, the_judge)
            store.set_status(run_id, "finished", {"finished_jobs": n_done})
            del jobs
            result = Result.from_store(config.out, run_id)  # type: ignore[arg-type]
        else:
            assert memory is not None
            samples, keys, problems = memory
            result = Result(
                run_id=run_id,
                meta=run_meta,
                samples=samples,
                keys=dict(enumerate(keys)),
                problems=problems,
                rows=rows,
                metric_names=[m.name for m in metric_list],
                bootstrap_resamples=config.bootstrap_resamples,
            )
        return result
    except (asyncio.CancelledError, KeyboardInterrupt):
        if store is not None and "run_id" in locals():
            with contextlib.suppress(Exception):
                store.set_status(run_id, "interrupted")
        raise
    except RagmeterError as e:
        if store is not None and "run_id" in locals():
            _record_failure(store, run_id, e, config, the_judge)
        raise
    finally:
        if store is not None:
            store.close()
        if owns_judge:
            with contextlib.suppress(Exception):
                await the_judge.aclose()


def _read_into_store(
    stream: SampleStream, metrics: Sequence[Metric], store: Any, run_id: str, judge: Judge, *, strict: bool
) -> Intake:
    """The intake of a new run with a store. A run whose data cannot be read (or, ``strict``, has a
    bad row; or has turns to rewrite and a judge without that step) is deleted again, nothing of it
    scored, and the error raised."""
    try:
        intake, problems = intake_to_store(stream, metrics, store, run_id, keep_problems=strict)
        if strict and problems:
            raise DatasetErrors(problems, file=stream.source)
        check_rewrite_support(intake.rewrites.values(), judge)
    except BaseException:
        with contextlib.suppress(Exception):
            store.delete_run(run_id)
        raise
    return intake


def _prepare_resume(
    store: Any, ref: str, data: Any, mapping: Mapping[str, str] | None, metrics: Sequence[Metric]
) -> tuple[str, dict[str, Any], Intake]:
    """(run id, run meta, what is left to score) of the run to resume; RunError when the data given
    differ from the run's (the dataset hash, computed as the data stream past) or the metrics do."""
    info = store.get_run(ref)
    run_id, run_meta = info.run_id, info.meta
    if run_meta.get("dataset_hash") is None:
        raise RunError(
            f"run {run_id} stopped while its data were being read, before any score; start a new run"
        )
    if data is not None:
        limit = (run_meta.get("config") or {}).get("limit")
        stream = SampleStream(data, mapping=mapping, limit=limit, seen=SpilledSeen())
        for _ in stream:
            pass
        if stream.content_hash() != run_meta.get("dataset_hash"):
            raise RunError(
                f"the data differs from run {run_id}'s (dataset hash changed); "
                "start a new run instead of resuming"
            )
    stored_names = [m["name"] for m in run_meta.get("metrics", [])]
    if stored_names != [m.name for m in metrics]:
        raise RunError(
            f"run {run_id} was started with metrics {stored_names}; "
            f"resume with the same metrics, not {[m.name for m in metrics]}"
        )
    return run_id, run_meta, count_stored_jobs(store, run_id, metrics)


def _record_judge(store: Any, run_id: str, judge: Judge) -> None:
    """Store what the run learnt about its judge (the structured-output mode ``auto`` settled on)."""
    desc = dict(judge.describe())
    desc.setdefault("name", judge.name)
    store.update_meta(run_id, {"judge": desc})


def _record_failure(store: Any, run_id: str, error: RagmeterError, config: RunConfig, judge: Judge) -> None:
    """Commit what is pending, mark the run failed (when the store still takes writes), and say on
    the error what was saved and how to finish the run."""
    for step in (store.flush, lambda: _record_judge(store, run_id, judge)):
        with contextlib.suppress(Exception):
            step()
    with contextlib.suppress(Exception):
        store.set_status(run_id, "failed", {"error": f"{type(error).__name__}: {error}"})
    try:
        saved = len(store.completed_jobs(run_id))
    except Exception:  # the store itself failed: nothing more to tell
        return
    add_note(
        error,
        f"run {run_id}: {saved} finished job(s) are saved in {store.path}; after fixing the cause, "
        f"finish it with: ragmeter evaluate --resume {run_id} --out {config.out}",
    )
