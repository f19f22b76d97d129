"""ragmeter report: write a run's HTML report (one self-contained file)."""

from __future__ import annotations

from pathlib import Path

import click

from ragmeter.cli.common import handle_errors, out_option


@click.command("report")
@click.argument("run")
@out_option
@click.option(
    "--html",
    "html_path",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="File to write (default ragmeter-report-RUN.html).",
)
@handle_errors
def report_cmd(run: str, out: Path, html_path: Path | None) -> None:
    """Write RUN's HTML report (RUN: an id, a unique prefix, or 'latest') and print its path.

    One self-contained file: metrics with confidence intervals and histograms, every sample
    (sortable, filterable), claims with their evidence highlighted in the contexts, invalid
    scores with the judge's raw reply. It loads nothing from the network; open it in any browser.
    """
    from ragmeter.log.store import require_store
    from ragmeter.run.result import Result

    require_store(out)
    result = Result.from_store(out, run)
    click.echo(str(result.to_html(html_path)))
