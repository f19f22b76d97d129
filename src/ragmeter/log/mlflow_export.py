"""Export a recorded run to MLflow (``ragmeter runs export RUN --to mlflow``).

One MLflow run per ragmeter run, in the experiment named (default ``ragmeter``):

- **params**: the run's configuration, flattened with dots (``judge.name``,
  ``metric.faithfulness.lang``, ``config.concurrency``, ``source``, ``dataset_hash``, versions,
  prompt versions); values longer than MLflow's limit are cut and end with ``...``;
- **metrics**: per ragmeter metric ``<name>/mean``, ``<name>/ci95_low``, ``<name>/ci95_high``,
  ``<name>/n_scored``, ``<name>/n_invalid``, ``<name>/n_skipped`` (and ``<name>/pass_rate`` with a
  threshold, ``<name>/judge_spread`` with repeated judging); a metric with no valid score has no
  mean or CI, never a 0. Run totals: ``usage/requests``, ``usage/prompt_tokens``,
  ``usage/completion_tokens``, ``n_samples``, ``n_skipped``;
- **tags**: ``ragmeter.run_id`` (how a second export of the same run is refused), status, judge,
  data source; the MLflow run's name is the ragmeter run id;
- **artifacts**: ``samples.csv`` (one row per sample: inputs, each metric's value, reason and error),
  ``summary.json`` (what ``runs show --json`` prints), ``run_meta.json`` (the full run record's
  metadata) and ``report.html`` (the run's HTML report, as ``ragmeter report`` writes it).

MLflow is optional (``pip install "ragmeter[mlflow]"``, which installs ``mlflow-skinny``) and imported
only here.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragmeter.errors import ConfigError

if TYPE_CHECKING:
    from ragmeter.run.result import Result

__all__ = ["DEFAULT_EXPERIMENT", "export_to_mlflow", "flatten_params"]

DEFAULT_EXPERIMENT = "ragmeter"
#: MLflow's limit on a param value (500 before MLflow 2.x raised it; 500 is safe everywhere)
PARAM_MAX = 500
#: meta keys that are not configuration: summaries, timings and what is exported elsewhere
_NOT_PARAMS = frozenset({"created_at", "finished_at", "status", "summary", "usage", "problems"})


def _flatten(prefix: str, value: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(value, Mapping):
        for k, v in value.items():
            yield from _flatten(f"{prefix}.{k}" if prefix else str(k), v)
    else:
        yield prefix, value


def flatten_params(meta: Mapping[str, Any]) -> dict[str, str]:
    """The run's configuration as MLflow params: nested keys joined with dots, each metric's
    parameters under ``metric.<name>.``, values as text (JSON for lists), at most 500 characters."""
    out: dict[str, str] = {}
    for key, value in meta.items():
        if key in _NOT_PARAMS:
            continue
        if key == "metrics" and isinstance(value, list):
            out["metrics"] = ",".join(str(m.get("name")) for m in value)
            for m in value:
                for k, v in _flatten("", {"version": m.get("version"), **(m.get("params") or {})}):
                    out[f"metric.{m.get('name')}.{k}"] = _text(v)
            continue
        for k, v in _flatten(key, value):
            out[k] = _text(v)
    return out


def _text(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= PARAM_MAX else text[: PARAM_MAX - 3] + "..."


def _metrics(result: Result) -> dict[str, float]:
    out: dict[str, float] = {}
    for name, s in result.summary().items():
        values: dict[str, float | None] = {
            "mean": s.mean,
            "ci95_low": None if s.ci95 is None else s.ci95[0],
            "ci95_high": None if s.ci95 is None else s.ci95[1],
            "n_scored": s.n_scored,
            "n_invalid": s.n_invalid,
            "n_skipped": s.n_skipped,
            "pass_rate": s.pass_rate,
            "judge_spread": s.judge_spread,
        }
        out.update({f"{name}/{k}": float(v) for k, v in values.items() if v is not None})
    usage = result.usage
    out.update(
        {
            "usage/requests": float(usage.requests),
            "usage/prompt_tokens": float(usage.prompt_tokens),
            "usage/completion_tokens": float(usage.completion_tokens),
            "n_samples": float(result.n_samples),
            "n_skipped": float(result.n_skipped),
        }
    )
    return out


def export_to_mlflow(
    result: Result,
    *,
    tracking_uri: str | None = None,
    experiment: str = DEFAULT_EXPERIMENT,
) -> str:
    """Log ``result`` as one MLflow run; return the MLflow run id.

    ``tracking_uri``: where MLflow keeps runs (``sqlite:///mlflow.db``, ``file:///...``, an
    ``http://`` server); None uses MLflow's own default (``MLFLOW_TRACKING_URI``). ``experiment`` is
    created when missing. A ragmeter run already exported to that experiment is a
    :class:`ConfigError` naming the MLflow run.
    """
    try:
        from mlflow.entities import Metric, Param, RunTag
        from mlflow.tracking import MlflowClient
    except ImportError as e:
        raise ConfigError('exporting to MLflow needs mlflow: pip install "ragmeter[mlflow]"') from e
    import time

    if not experiment or not experiment.strip():
        raise ConfigError("the MLflow experiment name is empty")
    client = MlflowClient(tracking_uri=tracking_uri)
    found = client.get_experiment_by_name(experiment)
    experiment_id = found.experiment_id if found is not None else client.create_experiment(experiment)
    existing = client.search_runs(
        [experiment_id], filter_string=f"tags.`ragmeter.run_id` = '{result.run_id}'", max_results=1
    )
    if existing:
        raise ConfigError(
            f"run {result.run_id} is already in MLflow experiment {experiment!r} "
            f"as run {existing[0].info.run_id}"
        )
    meta = result.meta
    tags = {
        "ragmeter.run_id": result.run_id,
        "ragmeter.status": result.status,
        "ragmeter.judge": str((meta.get("judge") or {}).get("name")),
        "ragmeter.source": str(meta.get("source")),
        "ragmeter.version": str((meta.get("versions") or {}).get("ragmeter")),
    }
    run = client.create_run(experiment_id, run_name=result.run_id, tags=tags)
    run_id = run.info.run_id
    try:
        now = int(time.time() * 1000)
        params = [Param(k, v) for k, v in flatten_params(meta).items()]
        metrics = [Metric(k, v, now, 0) for k, v in _metrics(result).items()]
        for i in range(0, len(params), 100):  # MLflow takes at most 100 params per batch
            client.log_batch(run_id, params=params[i : i + 100])
        for i in range(0, len(metrics), 1000):
            client.log_batch(run_id, metrics=metrics[i : i + 1000])
        client.log_batch(run_id, tags=[RunTag(k, v) for k, v in tags.items()])
        with tempfile.TemporaryDirectory(prefix="ragmeter-mlflow-") as tmp:
            folder = Path(tmp)
            result.to_csv(folder / "samples.csv")
            (folder / "summary.json").write_text(
                json.dumps(result.to_dict(), ensure_ascii=False, indent=2, default=str), encoding="utf-8"
            )
            (folder / "run_meta.json").write_text(
                json.dumps(meta, ensure_ascii=False, indent=2, default=str), encoding="utf-8"
            )
            result.to_html(folder / "report.html")
            for name in ("samples.csv", "summary.json", "run_meta.json", "report.html"):
                client.log_artifact(run_id, str(folder / name))
    except BaseException:
        client.set_terminated(run_id, status="FAILED")
        raise
    client.set_terminated(run_id, status="FINISHED")
    return run_id
