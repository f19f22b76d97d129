"""ragmeter compare: two recorded runs, sample by sample, with paired statistics and a gate."""

from __future__ import annotations

from pathlib import Path

import click

from ragmeter.cli.common import (
    echo_json,
    finish_gates,
    handle_errors,
    junit_option,
    out_option,
    parse_metric_list,
)
from ragmeter.cli.runs import require_store


@click.command("compare")
@click.argument("run_a")
@click.argument("run_b")
@out_option
@click.option(
    "--out-b",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Run store of RUN_B when it is not in --out (e.g. a baseline store downloaded in CI).",
)
@click.option("--metrics", "-m", default=None, help="Compare only these metrics (comma-separated).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of the tables.")
@click.option(
    "--top",
    type=click.IntRange(min=0),
    default=5,
    show_default=True,
    help="Samples that moved most, per metric and direction, to keep (the table shows 3).",
)
@click.option(
    "--fail-on-regression",
    is_flag=True,
    help="Gate: exit 1 when a metric is worse in B: the 95% CI of B - A entirely beyond -margin, or more "
    "samples than --max-new-invalid scored validly in A and not in B.",
)
@click.option(
    "--margin",
    type=click.FloatRange(min=0.0),
    default=0.0,
    show_default=True,
    help="Drop that a regression must exceed (in the metric's units, e.g. 0.02).",
)
@click.option(
    "--max-new-invalid",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    metavar="N",
    help="Samples per metric that may be valid in A and invalid or unscored in B (a count, not a rate) "
    "before the metric counts as worse.",
)
@click.option(
    "--html",
    "html_path",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    metavar="FILE",
    help="Also write one self-contained HTML page: the metrics, and A and B side by side per sample.",
)
@junit_option
@handle_errors
def compare_cmd(
    run_a: str,
    run_b: str,
    out: Path,
    out_b: Path | None,
    metrics: str | None,
    as_json: bool,
    top: int,
    fail_on_regression: bool,
    margin: float,
    max_new_invalid: int,
    html_path: Path | None,
    junit: Path | None,
) -> None:
    """Compare RUN_B against RUN_A (ids, unique prefixes, or 'latest'); nothing is re-scored.

    Samples are matched by their stable key (the data's id, else a hash of question and
    reference). Per metric: means, the paired difference B - A with a paired bootstrap 95% CI,
    a paired permutation (sign-flip) test p-value, and wins/ties/losses, over the pairs both
    runs scored validly; and the samples newly invalid in B (valid in A, invalid or not scored
    in B: a regression, however the pairs read) and newly valid. A loud warning marks runs that
    are not comparable (judge, prompts, metric parameters or evaluation set differ).

    Exit codes: 0 done (no regression, or no --fail-on-regression), 1 a metric regressed with
    --fail-on-regression, 2 bad input or configuration.
    """
    from ragmeter.report.comparison import compare_runs
    from ragmeter.report.console import render_comparison
    from ragmeter.report.gates import regression_checks

    require_store(out)
    if out_b is not None:
        require_store(out_b)
    comparison = compare_runs(
        run_a, run_b, store=out, store_b=out_b, metrics=parse_metric_list(metrics), n_top=top
    )
    if as_json:
        echo_json(comparison.to_dict(margin, max_new_invalid))
    else:
        render_comparison(comparison, margin=margin, max_new_invalid=max_new_invalid)
    if html_path is not None:
        from ragmeter.report.compare_html import write_comparison

        click.echo(f"comparison page written to {write_comparison(comparison, html_path, margin, max_new_invalid)}", err=True)
    if not comparison.comparable:
        click.echo(
            "warning: the runs are NOT COMPARABLE: " + " | ".join(comparison.issues),
            err=True,
        )
    if fail_on_regression or junit is not None:
        finish_gates(
            regression_checks(comparison, margin, max_new_invalid),
            junit=junit,
            suite=f"ragmeter compare {comparison.run_a} {comparison.run_b}",
            enforce=fail_on_regression,
            properties={
                "run_a": comparison.run_a,
                "run_b": comparison.run_b,
                "comparable": comparison.comparable,
                "issues": " | ".join(comparison.issues),
            },
        )
