"""The async core of evaluation: plan (sample x metric) jobs, run them under a bound, record each.

``aevaluate`` is the one implementation; ``evaluate`` (in :mod:`ragmeter.run.api`) only runs it.
"""

from __future__ import annotations

import asyncio
import contextlib
import platform
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from ragmeter.dataset.keys import sample_keys
from ragmeter.dataset.sample import Dataset
from ragmeter.errors import ConfigError, DatasetError, RagmeterError, RunError, UnsupportedStepError, add_note
from ragmeter.judges.base import Judge
from ragmeter.metrics.base import Metric
from ragmeter.metrics.registry import resolve_metrics
from ragmeter.run.config import RunConfig
from ragmeter.run.executor import COMMIT_GROUP_ROWS, Job, apply_run_concurrency, run_jobs
from ragmeter.run.result import Result
from ragmeter.run.turns import check_rewrite_support

RUN_FORMAT_VERSION = 1


@dataclass(frozen=True)
class Plan:
    """What a run will do: the jobs, and the problems found before any judge call."""

    dataset: Dataset
    metrics: list[Metric]
    jobs: list[Job]
    problems: list[DatasetError]  # load problems + missing fields, in input order
    n_skipped_rows: int  # rows that cannot be scored by any metric (or could not be read)


def resolve_judge(judge: Any) -> Judge:
    """A Judge instance, a spec string ("openai:gpt-4o-mini"), None for the local judge, or a
    recipe dict (see :func:`ragmeter.judges.factory.make_judge_from_recipe`)."""
    if judge is None or isinstance(judge, str):
        from ragmeter.judges.factory import make_judge

        return make_judge(judge)
    if isinstance(judge, Mapping):
        from ragmeter.judges.factory import make_judge_from_recipe

        return make_judge_from_recipe(judge)
    if callable(getattr(judge, "supports", None)) and isinstance(getattr(judge, "name", None), str):
        return judge  # type: ignore[no-any-return]
    raise ConfigError(f"not a judge: {judge!r}; pass a Judge, a spec such as 'openai:gpt-4o-mini', or None")


def check_judge_supports(metrics: Sequence[Metric], judge: Judge) -> None:
    """Refuse, before any call, metrics whose steps the judge cannot do."""
    missing = [(m.name, s) for m in metrics for s in m.missing_steps(judge)]
    if missing:
        names = sorted({m for m, _ in missing})
        steps = sorted({s for _, s in missing})
        raise UnsupportedStepError(
            judge.name,
            ", ".join(steps),
            f"needed by {', '.join(names)}; name an LLM judge (e.g. --judge openai:gpt-4o-mini, or "
            "--judge openai-compatible:MODEL --base-url URL) or drop these metrics",
        )


def plan_jobs(dataset: Dataset, metrics: Sequence[Metric], *, strict: bool = False) -> Plan:
    """Check every sample against the required fields of every metric of its level (a conversation
    metric scores conversation samples, the others plain and turn samples); build the job list. A
    sample that no metric of its level can score is skipped; one of a level no metric has is not."""
    from ragmeter.dataset.sources import DatasetErrors

    problems: list[DatasetError] = list(dataset.problems)
    jobs: list[Job] = []
    rows = getattr(dataset, "rows", None)
    unscorable = 0
    levels = {m.level for m in metrics}
    for idx, sample in enumerate(dataset.samples):
        row = rows[idx] if rows else idx + 1
        n_jobs = 0
        for metric in metrics:
            if metric.level != sample.level:  # a conversation metric on a turn, or the reverse
                continue
            missing = [f for f in metric.requires if not sample.has(f)]
            if missing:
                for f in missing:
                    value = getattr(sample, f, None)
                    what = "is empty" if value not in (None, ()) else "is missing"
                    problems.append(
                        DatasetError(
                            f"{what}; metric {metric.name!r} needs it",
                            file=dataset.source,
                            row=row,
                            field=f,
                        )
                    )
                continue
            jobs.append(Job(idx, metric, sample))
            n_jobs += 1
        if n_jobs == 0 and sample.level in levels:
            unscorable += 1
    if strict and problems:
        raise DatasetErrors(problems)
    return Plan(dataset, list(metrics), jobs, problems, len(dataset.problems) + unscorable)


def _package_versions() -> dict[str, str]:
    from ragmeter import __version__

    return {"ragmeter": __version__, "python": platform.python_version()}


def build_meta(
    plan: Plan, judge: Judge, config: RunConfig, extra: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    judge_desc = dict(judge.describe())
    judge_desc.setdefault("name", judge.name)
    return {
        "format_version": RUN_FORMAT_VERSION,
        "created_at": datetime.now(timezone.utc).isoformat(),
        "versions": _package_versions(),
        "source": plan.dataset.source,
        "dataset_hash": plan.dataset.content_hash(),
        "n_samples": len(plan.dataset),
        "n_skipped_rows": plan.n_skipped_rows,
        "n_problems": len(plan.problems),
        "metrics": [
            {
                **m.spec(),
                "requires": list(m.requires),
                "steps": list(m.steps),
                "threshold": m.threshold,
                "higher_is_better": m.higher_is_better,
                "level": m.level,
            }
            for m in plan.metrics
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

    from ragmeter.dataset.sources import load_dataset

    metric_list = resolve_metrics(metrics)
    owns_judge = judge is None or isinstance(judge, (str, Mapping))  # we built it, so we close it
    the_judge = resolve_judge(judge)
    check_judge_supports(metric_list, the_judge)
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
        if config.resume is not None:
            if store is None:
                raise ConfigError("resume needs the run store directory (out=...)")
            info = store.get_run(config.resume)
            run_id = info.run_id
            dataset = Dataset(tuple(s for _, s in store.load_samples(run_id)), source=info.meta.get("source"))
            if data is not None:
                if load_dataset(data, mapping=mapping).content_hash() != info.meta.get("dataset_hash"):
                    raise RunError(
                        f"the data differs from run {run_id}'s (dataset hash changed); "
                        "start a new run instead of resuming"
                    )
            stored_names = [m["name"] for m in info.meta.get("metrics", [])]
            if stored_names != [m.name for m in metric_list]:
                raise RunError(
                    f"run {run_id} was started with metrics {stored_names}; "
                    f"resume with the same metrics, not {[m.name for m in metric_list]}"
                )
            plan = plan_jobs(dataset, metric_list, strict=False)
            check_rewrite_support(plan.jobs, the_judge)
            done = store.completed_jobs(run_id)
            jobs = [j for j in plan.jobs if (j.idx, j.metric.name) not in done]
            run_meta = info.meta
            store.set_status(run_id, "running")
        else:
            dataset = load_dataset(data, mapping=mapping, strict=config.strict, limit=config.limit)
            keys = sample_keys(dataset.samples, getattr(dataset, "generated_ids", ()))
            plan = plan_jobs(dataset, metric_list, strict=config.strict)
            check_rewrite_support(plan.jobs, the_judge)
            jobs = plan.jobs
            if store is not None:
                from ragmeter.log.store import new_run_id

                run_id = config.run_id or new_run_id()
            else:
                run_id = config.run_id or "in-memory"
            extra_meta = dict(meta or {})
            if isinstance(judge, Mapping):  # a recipe rebuilds the judge for --resume and Ray workers
                extra_meta.setdefault("judge_recipe", dict(judge))
            run_meta = build_meta(plan, the_judge, config, extra_meta)
            if store is not None:
                store.create_run(run_id, run_meta)
                store.add_samples(run_id, list(enumerate(dataset.samples)), keys)
                store.add_problems(run_id, plan.problems)

        if config.engine == "ray":
            from ragmeter.run.ray_engine import judge_source, run_jobs_ray

            recipe = judge_source(judge, run_meta)
            rows, n_done = await run_jobs_ray(jobs, recipe, config, store, run_id, keep_rows=store is None)
        else:
            rows, n_done = await run_jobs(jobs, the_judge, config, store, run_id, keep_rows=store is None)

        if store is not None:
            _record_judge(store, run_id, the_judge)
            store.set_status(run_id, "finished", {"finished_jobs": n_done})
            # the record is the result: drop the inputs' object graph before reading it back
            del jobs, plan, dataset
            result = Result.from_store(config.out, run_id)  # type: ignore[arg-type]
        else:
            result = Result(
                run_id=run_id,
                meta=run_meta,
                samples=list(enumerate(dataset.samples)),
                keys=dict(enumerate(keys)),
                problems=plan.problems,
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
