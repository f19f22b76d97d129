"""ragmeter labels: people's labels of a run's samples, in and out of the run store."""

from __future__ import annotations

import json
from pathlib import Path

import click

from ragmeter.cli.common import echo_json, handle_errors, out_option

#: skipped rows named on stderr before "... and N more"
MAX_LISTED = 50


@click.group("labels")
def labels_group() -> None:
    """People's labels of a run's samples: import, export (docs/runs.md, "Labels")."""


@labels_group.command("import")
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "--run", "run", required=True, help="The run the labels are of: an id, a unique prefix, or 'latest'."
)
@out_option
@click.option(
    "--drawn",
    type=click.Choice(["picked", "random"]),
    default="picked",
    show_default=True,
    help="For records that do not say: 'random' when each sample was the next of the run's draw "
    "(only those count as a random sample of the run), 'picked' when chosen otherwise.",
)
@click.option("--labeller", default=None, help="Who labelled, for records that do not say.")
@click.option("--json", "as_json", is_flag=True, help="Print what was imported as one JSON object.")
@handle_errors
def labels_import(file: Path, run: str, out: Path, drawn: str, labeller: str | None, as_json: bool) -> None:
    """Store the labels in FILE (JSONL point records keyed by the samples' ids) with RUN.

    A record is {"id", "metric" (or "aspect"), "label"} with optional "label_kind", "drawn",
    "labeller", "created_at". Records whose id, metric or label does not fit the run are named with
    their row and skipped; a label replaces the one stored for the same sample and metric.
    """
    from ragmeter.log.store import RunStore
    from ragmeter.run.labels import import_labels

    run_id, done = import_labels(out, run, file, drawn=drawn, labeller=labeller)
    metrics = sorted({lab.metric for lab in done.labels})
    with RunStore(out) as store:
        progress = [store.draw_progress(run_id, m) for m in metrics]
    if as_json:
        echo_json({"run_id": run_id, **done.to_dict(), "draw": [p.to_dict() for p in progress]})
        return
    for problem in done.problems[:MAX_LISTED]:
        click.echo(f"skipped: {problem}", err=True)
    if len(done.problems) > MAX_LISTED:
        click.echo(
            f"skipped: ... and {len(done.problems) - MAX_LISTED} more (--json lists every one)", err=True
        )
    replaced = f" ({done.n_replaced} replaced)" if done.n_replaced else ""
    skipped = f"; {len(done.problems)} row(s) skipped" if done.problems else ""
    click.echo(f"run {run_id}: {len(done.labels)} label(s) imported{replaced}{skipped}")
    for p in progress:
        line = f"  {p.metric}: {len(p.prefix)} random label(s) on the draw's labelled prefix"
        if p.n_held_back:
            line += f", {p.n_held_back} held back behind {len(p.skipped)} unlabelled sample(s) of the draw"
        if p.n_picked:
            line += f", {p.n_picked} picked"
        click.echo(line)


@labels_group.command("export")
@click.argument("run")
@out_option
@click.option(
    "--output",
    "-O",
    "output",
    type=click.Path(path_type=Path, dir_okay=False),
    required=True,
    help="JSONL file to write.",
)
@click.option("--metric", default=None, help="Only the labels of this metric.")
@click.option(
    "--next",
    "next_n",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="Instead: the next N samples of the run's draw without a random label for --metric, with "
    '"label": null, to label elsewhere and import back.',
)
@handle_errors
def labels_export(run: str, out: Path, output: Path, metric: str | None, next_n: int | None) -> None:
    """Write RUN's labels to a JSONL file: point records keyed by the samples' ids, with the samples'
    fields (what `labels import` reads back, and a judgement file for `ragmeter agreement FILE`)."""
    from ragmeter.errors import ConfigError
    from ragmeter.run.labels import export_records

    run_id, records = export_records(out, run, metric=metric, next_n=next_n)
    try:
        with output.open("w", encoding="utf-8") as fh:
            for rec in records:
                fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
    except OSError as exc:
        raise ConfigError(f"cannot write {output}: {exc}") from exc
    what = "sample(s) to label" if next_n is not None else "label(s)"
    click.echo(f"run {run_id}: {len(records)} {what} written to {output}")
