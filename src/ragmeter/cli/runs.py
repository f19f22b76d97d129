"""ragmeter runs: list, show and export recorded runs."""

from __future__ import annotations

from pathlib import Path

import click

from ragmeter.cli.common import echo_json, handle_errors, out_option
from ragmeter.log.store import require_store as require_store  # the commands that read a store use it


@click.group("runs")
def runs_group() -> None:
    """Recorded runs: list, show, export."""


@runs_group.command("list")
@out_option
@click.option("--limit", type=int, default=None, help="Newest N runs only.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per run, a line each.")
@handle_errors
def runs_list(out: Path, limit: int | None, as_json: bool) -> None:
    """List runs, newest first."""
    from rich.table import Table

    from ragmeter.log.store import RunStore
    from ragmeter.report.console import make_console

    if not (out / "runs.sqlite").exists():
        click.echo(f"no runs recorded in {out}", err=True)
        return
    with RunStore(out) as store:
        runs = store.list_runs(limit=limit)
    if as_json:
        for r in runs:
            echo_json(
                {
                    "run_id": r.run_id,
                    "created_at": r.created_at,
                    "finished_at": r.finished_at,
                    "status": r.status,
                    "source": r.meta.get("source"),
                    "judge": r.meta.get("judge", {}).get("name"),
                    "metrics": [m["name"] for m in r.meta.get("metrics", [])],
                    "n_samples": r.meta.get("n_samples"),
                }
            )
        return
    table = Table(header_style="bold")
    for col in ("run", "created", "status", "data", "judge", "samples", "metrics"):
        table.add_column(col)
    for r in runs:
        table.add_row(
            r.run_id,
            str(r.created_at)[:19],
            r.status,
            str(r.meta.get("source")),
            str(r.meta.get("judge", {}).get("name")),
            str(r.meta.get("n_samples")),
            ", ".join(m["name"] for m in r.meta.get("metrics", [])),
        )
    make_console().print(table)


@runs_group.command("show")
@click.argument("run")
@out_option
@click.option("--json", "as_json", is_flag=True, help="Print the run's summary as one JSON object.")
@click.option("--samples", "show_samples", is_flag=True, help="Also print each sample's scores and reasons.")
@handle_errors
def runs_show(run: str, out: Path, as_json: bool, show_samples: bool) -> None:
    """Show RUN (an id, a unique prefix, or 'latest') from its record; nothing is re-run."""
    from ragmeter.report.console import render_result
    from ragmeter.run.result import Result

    result = Result.from_store(out, run)
    if as_json:
        d = result.to_dict()
        if show_samples:
            d["samples"] = result.to_records()
        echo_json(d)
        return
    render_result(result)
    if show_samples:
        for rec in result.to_records():
            click.echo(f"\n[{rec['idx']}] {rec['sample_id']}: {rec['question']}")
            for m in result.metric_names:
                value = rec[m]
                shown = "—" if value is None else f"{value:.3f}"
                err = f" [{rec[m + '_error']}]" if rec[m + "_error"] else ""
                click.echo(f"  {m}: {shown}{err}  {rec[m + '_reason']}")


@runs_group.command("export")
@click.argument("run")
@out_option
@click.option(
    "--format", "fmt", type=click.Choice(["csv", "jsonl", "parquet"]), default=None, help="Write a file."
)
@click.option(
    "--output",
    "-O",
    "output",
    type=click.Path(path_type=Path),
    default=None,
    help="File to write (default RUN.FORMAT).",
)
@click.option(
    "--to",
    "target",
    type=click.Choice(["mlflow"]),
    default=None,
    help="Log the run to a tracking service instead of writing a file (needs ragmeter[mlflow]).",
)
@click.option(
    "--tracking-uri",
    default=None,
    help="With --to mlflow: where MLflow keeps runs (sqlite:///mlflow.db, http://host:5000, ...); "
    "default: MLflow's own (MLFLOW_TRACKING_URI).",
)
@click.option(
    "--experiment",
    default=None,
    help="With --to mlflow: the experiment to log into, created when missing [default: ragmeter].",
)
@handle_errors
def runs_export(
    run: str,
    out: Path,
    fmt: str | None,
    output: Path | None,
    target: str | None,
    tracking_uri: str | None,
    experiment: str | None,
) -> None:
    """Write RUN's per-sample scores as csv, jsonl or parquet (--format), or log RUN to MLflow
    (--to mlflow): its config as params, each metric's mean, 95% CI and counts as metrics, the
    per-sample table, the summary and the HTML report as artifacts."""
    from ragmeter.errors import ConfigError
    from ragmeter.run.result import Result

    if (fmt is None) == (target is None):
        raise ConfigError("give --format csv|jsonl|parquet to write a file, or --to mlflow")
    if target is None and (tracking_uri or experiment):
        raise ConfigError("--tracking-uri and --experiment go with --to mlflow")
    if target is not None and output is not None:
        raise ConfigError("--output writes a file; with --to mlflow the run goes to the tracking store")
    require_store(out)
    result = Result.from_store(out, run)
    if target == "mlflow":
        from ragmeter.log.mlflow_export import DEFAULT_EXPERIMENT, export_to_mlflow

        name = experiment or DEFAULT_EXPERIMENT
        mlflow_run = export_to_mlflow(result, tracking_uri=tracking_uri, experiment=name)
        click.echo(f"run {result.run_id} -> MLflow experiment {name!r}, run {mlflow_run}")
        return
    assert fmt is not None
    path = result.export(output or Path(f"{result.run_id}.{fmt}"), fmt)
    click.echo(str(path))
