"""ragmeter evaluate: score a data file."""

from __future__ import annotations

from collections.abc import Coroutine, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import click

from ragmeter.cli.common import (
    JUDGE_OPTION_NAMES,
    concurrency_option,
    echo_json,
    finish_gates,
    handle_errors,
    judge_from_spec,
    judge_options,
    judge_spec_from_options,
    junit_option,
    out_option,
    parse_metric_list,
    resolve_concurrency,
)
from ragmeter.errors import ConfigError

T = TypeVar("T")

#: Metrics run when --metrics is not given, in this order; each is kept only when the judge can
#: compute it and the data has the fields it needs.
DEFAULT_METRICS = (
    "faithfulness",
    "answer_relevance",
    "context_relevance",
    "semantic_similarity",
    "token_f1",
    "rouge_l",
    "bleu",
    "exact_match",
)


def default_metrics(judge: Any, samples: Iterable[Any]) -> tuple[list[str], list[str]]:
    """(chosen, notes): the default metrics this judge and these data allow, and why others are out.

    ``samples`` is read once, and only until every default metric the judge can compute has found
    a sample with the fields it needs (a stream of a large file is not read to its end for this)."""
    from ragmeter.metrics.registry import get_metric, list_metrics

    registry = list_metrics()
    needs: dict[str, tuple[str, ...]] = {}
    unsupported: dict[str, list[str]] = {}
    for name in DEFAULT_METRICS:
        cls = registry.get(name)
        if cls is None:
            continue
        missing = get_metric(name).missing_steps(judge)
        if missing:
            unsupported[name] = list(missing)
        else:
            needs[name] = tuple(cls.requires)
    found: set[str] = set()
    for sample in samples:
        found.update(n for n, fields in needs.items() if n not in found and all(sample.has(f) for f in fields))
        if len(found) == len(needs):
            break
    chosen, notes = [], []
    for name in DEFAULT_METRICS:
        if name in unsupported:
            notes.append(f"{name}: needs an LLM judge for {', '.join(unsupported[name])} (name one with --judge)")
        elif name in found:
            chosen.append(name)
        elif name in needs:
            notes.append(f"{name}: the data has no rows with {', '.join(needs[name])}")
    return chosen, notes


@click.command("evaluate")
@click.argument("data", required=False, type=click.Path(path_type=Path))
@click.option("--metrics", "-m", default=None, help="Comma-separated metric names (see `ragmeter metrics`).")
@judge_options
@concurrency_option(
    "Judge requests in flight per endpoint (the runner keeps enough jobs going to fill them)."
)
@out_option
@click.option(
    "--engine",
    type=click.Choice(["local", "ray"]),
    default="local",
    show_default=True,
    help='Where jobs run: this process, or sharded over a Ray cluster (pip install "ragmeter[ray]").',
)
@click.option(
    "--ray-address",
    default=None,
    metavar="ADDR",
    help="Ray cluster to join with --engine ray (default: a new local one).",
)
@click.option("--run-id", default=None, help="Id for the new run (default: time-based).")
@click.option(
    "--resume", default=None, metavar="RUN", help="Finish an interrupted run without repeating work."
)
@click.option(
    "--map",
    "mappings",
    multiple=True,
    metavar="FIELD=COLUMN",
    help="Read a sample field from another column, e.g. --map question=query_text (repeatable).",
)
@click.option("--strict", is_flag=True, help="Any bad row stops the run before any judge call.")
@click.option(
    "--fail-under",
    default=None,
    metavar="METRIC=BOUND,...",
    help="Gate: exit 1 when a metric is worse than its bound, e.g. faithfulness=0.8,answer_relevance=0.7 "
    "(below it; above it for lower-is-better metrics).",
)
@click.option(
    "--gate",
    "gate_on",
    type=click.Choice(["mean", "lower", "calibrated"]),
    default="mean",
    show_default=True,
    help="What --fail-under bounds: the mean, the 95% CI's end on the worse side ('lower'), or that "
    "end of the calibrated CI from people's random-drawn labels ('calibrated'; see --labels).",
)
@click.option(
    "--labels",
    "labels_file",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    default=None,
    metavar="FILE",
    help="After scoring, import people's labels of these samples (what `ragmeter labels import` "
    "reads) before the gates apply.",
)
@click.option(
    "--max-invalid",
    type=click.FloatRange(0.0, 1.0),
    default=None,
    metavar="RATE",
    help="Gate: exit 1 when a metric's share of invalid scores exceeds RATE (e.g. 0.05).",
)
@click.option(
    "--fail-on-invalid", is_flag=True, help="Gate: exit 1 when any score is invalid (= --max-invalid 0)."
)
@junit_option
@click.option(
    "--lang",
    type=click.Choice(["auto", "en", "zh"]),
    default=None,
    help="Prompt language of the judge (default: detected per sample).",
)
@click.option(
    "--samples",
    "n_samples",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Ask the judge N times per score (temperature > 0) and report mean and spread.",
)
@click.option("--limit", type=int, default=None, help="Score only the first N rows.")
@click.option("--dry-run", is_flag=True, help="Check the data and estimate calls and tokens; call nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of the table.")
@click.option(
    "--output",
    type=click.Path(path_type=Path),
    default=None,
    help="Also write per-sample rows (csv/jsonl/parquet).",
)
@click.option(
    "--progress/--no-progress", default=None, help="Progress bar (default: when stderr is a terminal)."
)
@click.option(
    "--pipeline",
    default=None,
    metavar="MODULE:FN",
    help="Run this RAG pipeline on the questions, then score.",
)
@click.option(
    "--retriever", default=None, metavar="MODULE:FN", help="Run this retriever; score retrieval metrics."
)
@handle_errors
def evaluate_cmd(
    data: Path | None,
    metrics: str | None,
    concurrency: int | None,
    out: Path,
    engine: str,
    ray_address: str | None,
    run_id: str | None,
    resume: str | None,
    mappings: tuple[str, ...],
    strict: bool,
    fail_under: str | None,
    gate_on: str,
    labels_file: Path | None,
    max_invalid: float | None,
    fail_on_invalid: bool,
    junit: Path | None,
    lang: str | None,
    n_samples: int,
    limit: int | None,
    dry_run: bool,
    as_json: bool,
    output: Path | None,
    progress: bool | None,
    pipeline: str | None,
    retriever: str | None,
    **judge_opts: Any,
) -> None:
    """Score DATA (JSONL, JSON, CSV, Parquet, or OpenTelemetry traces as OTLP JSON lines) and record
    the run.

    With no --judge the offline local judge is used and nothing leaves this machine.
    Exit codes: 0 done (every gate passed), 1 a gate failed (--fail-under, --max-invalid,
    --fail-on-invalid) or a metric has no valid score at all (unless --max-invalid is given), 2
    bad input or configuration, or a judge that cannot serve the run (a bad key, an unknown model,
    an endpoint no connection reaches).
    """
    from ragmeter.dataset import parse_mapping
    from ragmeter.dataset.sources import SampleStream
    from ragmeter.report.gates import check_gate_metrics, parse_bounds, threshold_checks
    from ragmeter.run.config import RunConfig
    from ragmeter.run.runner import aevaluate
    from ragmeter.run.sync import run_sync

    opts = {k: judge_opts.get(k) for k in JUDGE_OPTION_NAMES}
    concurrency = resolve_concurrency(concurrency, opts.get("judge_concurrency"))
    if ray_address is not None and engine != "ray":
        raise click.UsageError("--ray-address needs --engine ray")
    engine_opts: dict[str, Any] = {"engine": engine, "ray_address": ray_address}
    mapping = parse_mapping(list(mappings)) if mappings else None
    metric_names = parse_metric_list(metrics)
    bounds = parse_bounds(fail_under)
    if fail_on_invalid and max_invalid is not None:
        raise ConfigError("--fail-on-invalid is --max-invalid 0: give one of them")
    if fail_on_invalid:
        max_invalid = 0.0
    gated = bool(bounds) or max_invalid is not None
    if dry_run and (gated or junit is not None):
        raise ConfigError(
            "--dry-run scores nothing, so it cannot apply gates (--fail-under, --max-invalid, --junit)"
        )

    if resume is not None:
        from ragmeter.log.store import RunStore

        if pipeline or retriever:
            raise ConfigError("--resume finishes a recorded run; its pipeline outputs are already stored")

        with RunStore(out) as store:
            info = store.get_run(resume)
        recipe = info.meta.get("judge_recipe")
        if recipe is None:
            raise ConfigError(
                f"run {info.run_id} does not record how to rebuild its judge; resume it from Python"
            )
        if opts.get("judge") is not None:
            recipe = judge_spec_from_options(opts, out)
        metric_names = metric_names or [m["name"] for m in info.meta.get("metrics", [])]
        check_gate_metrics(bounds, metric_names)
        judge = judge_from_spec(recipe)
        metric_objs = _metrics_from_meta(info.meta, metric_names)
        config = RunConfig(
            concurrency=concurrency, out=out, resume=info.run_id, progress=progress, **engine_opts
        )
        result = run_sync(
            _closing(judge, aevaluate(data, metric_objs, judge, config=config, mapping=mapping))
        )
    else:
        if data is None:
            raise click.UsageError("give DATA, or --resume RUN")
        recipe = judge_spec_from_options(opts, out)
        judge = _judge_for_dry_run(recipe) if dry_run else judge_from_spec(recipe)
        extra_meta: dict[str, Any] = {}
        if pipeline or retriever:
            from ragmeter.pipeline.run import pipeline_data

            if dry_run:
                raise ConfigError("--dry-run calls nothing, so it cannot run --pipeline / --retriever")

            data, metric_names, extra_meta = pipeline_data(  # type: ignore[assignment]
                data,
                pipeline=pipeline,
                retriever=retriever,
                metric_names=metric_names,
                mapping=mapping,
                limit=limit,
                workers=concurrency,
                progress=progress,
            )
            mapping = None
        if metric_names is None:
            stream = SampleStream(data, mapping=mapping, limit=limit)
            metric_names, notes = default_metrics(judge, (item.sample for item in stream))
            for note in notes:
                click.echo(f"note: not running {note}", err=True)
            if not metric_names:
                raise ConfigError("no default metric can run on these data with this judge; give --metrics")
        if dry_run:
            from ragmeter.run.estimate import estimate_run

            estimate = estimate_run(data, metric_names, judge, mapping=mapping, limit=limit)
            if as_json:
                echo_json(estimate.to_dict())
            else:
                click.echo(estimate.render())
            return
        check_gate_metrics(bounds, metric_names)
        metric_names = _configure_metrics(metric_names, lang, n_samples)  # type: ignore[assignment]
        _check_gates_computable(bounds, metric_names, judge)
        config = RunConfig(
            concurrency=concurrency,
            out=out,
            run_id=run_id,
            strict=strict,
            fail_on_invalid=fail_on_invalid,
            progress=progress,
            limit=limit,
            **engine_opts,
        )
        result = run_sync(
            _closing(
                judge,
                aevaluate(
                    data,
                    metric_names,
                    judge,
                    config=config,
                    mapping=mapping,
                    meta={"judge_recipe": recipe, **extra_meta},
                ),
            )
        )

    if labels_file is not None:
        done = result.add_labels(labels_file)
        for problem in done.problems:
            click.echo(f"labels: skipped: {problem}", err=True)
        click.echo(f"labels: {len(done.labels)} imported from {labels_file}", err=True)
    if output is not None:
        result.export(output)
    checks = threshold_checks(result, bounds, gate=gate_on, max_invalid=max_invalid)
    if as_json:
        echo_json({**result.to_dict(), **({"gates": [c.to_dict() for c in checks]} if checks else {})})
    else:
        from ragmeter.report.console import render_result

        render_result(result)
    if gated or junit is not None or any(not c.passed for c in checks):
        finish_gates(
            checks,
            junit=junit,
            suite=f"ragmeter evaluate {result.run_id}",
            properties={
                "run_id": result.run_id,
                "store": result.store_dir or "",
                "source": result.meta.get("source"),
            },
        )


def _judge_for_dry_run(recipe: dict[str, Any]) -> Any:
    """The judge a dry run estimates for. A dry run sends nothing, so it needs no API key: where
    the key's environment variable is unset, the judge is built with a placeholder key."""
    import os
    from unittest import mock

    from ragmeter.judges.providers.openai_compat import _DEFAULT_KEY_ENV

    kind = str(recipe.get("spec") or "").partition(":")[0]
    names = {recipe.get("api_key_env"), _DEFAULT_KEY_ENV.get(kind)} - {None}
    placeholders = {str(n): "dry-run-no-key" for n in names if not os.environ.get(str(n))}
    with mock.patch.dict(os.environ, placeholders):
        return judge_from_spec(recipe)


async def _closing(judge: Any, coro: Coroutine[Any, Any, T]) -> T:
    """Await ``coro``, then close the judge on the same event loop."""
    try:
        return await coro
    finally:
        await judge.aclose()


def _check_gates_computable(bounds: Mapping[str, float], metrics: list[Any], judge: Any) -> None:
    """A gate on a metric the judge cannot compute (which the run would leave out) is a
    configuration error, raised before any call: there would be nothing to gate on."""
    from ragmeter.run.runner import left_out_metrics

    gated = [x for x in left_out_metrics(metrics, judge) if x["metric"] in bounds]
    if gated:
        raise ConfigError(f"--fail-under names {gated[0]['metric']}, which the run cannot compute: {gated[0]['why']}")


def _configure_metrics(names: list[str], lang: str | None, n_samples: int) -> list[Any]:
    """Metric instances for --lang (metrics that take ``lang``) and --samples N (repeated judging)."""
    import inspect

    from ragmeter.metrics.registry import get_metric, list_metrics, resolve_alias
    from ragmeter.metrics.repeat import Repeated

    registry = list_metrics()
    out: list[Any] = []
    for name in names:
        cls = registry.get(resolve_alias(name)[0])
        takes_lang = cls is not None and "lang" in inspect.signature(cls).parameters
        metric = get_metric(name, lang=lang) if lang and takes_lang else get_metric(name)
        out.append(Repeated(metric, n_samples) if n_samples > 1 else metric)
    return out


def _metrics_from_meta(meta: dict[str, Any], names: list[str]) -> list[Any]:
    from ragmeter.metrics.registry import get_metric
    from ragmeter.metrics.repeat import Repeated

    specs = {m["name"]: m for m in meta.get("metrics", [])}
    out: list[Any] = []
    for n in names:
        params = dict(specs.get(n, {}).get("params") or {})
        repeats, temperature = params.pop("samples", None), params.pop("temperature", None)
        metric = get_metric(n, **params)
        out.append(Repeated(metric, int(repeats), float(temperature)) if repeats else metric)
    return out
