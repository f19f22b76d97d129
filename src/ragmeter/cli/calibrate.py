"""ragmeter calibrate: refit the local judge's claim support on a run's labels."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ragmeter.cli.common import echo_json, handle_errors, out_option

_STATS = {
    "binary": ("auc", "accuracy", "balanced_accuracy", "kappa", "tpr", "tnr"),
    "graded": ("auc", "spearman", "kendall"),
}


def default_output(out: Path, run_id: str, metric: str) -> Path:
    """Where a calibration file goes unless ``--output`` says: ``<store>/calibrations/<run>-<metric>.json``."""
    return out / "calibrations" / f"{run_id}-{metric}.json"


@click.command("calibrate")
@click.argument("run")
@click.option(
    "--metric", required=True, help="The metric whose labels to fit on: faithfulness or context_recall."
)
@out_option
@click.option(
    "--output",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="The calibration file to write [default: <--out>/calibrations/<run>-<metric>.json].",
)
@click.option(
    "--folds", type=click.IntRange(min=2), default=5, show_default=True, help="Cross-validation folds."
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the folds.")
@click.option(
    "--l2",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="Strength of the prior towards the packaged weights (higher: closer to them) [default: 4].",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
@handle_errors
def calibrate_cmd(
    run: str,
    metric: str,
    out: Path,
    output: Path | None,
    folds: int,
    seed: int,
    l2: float | None,
    as_json: bool,
) -> None:
    """Adapt the local judge to RUN's labels (an id, a unique prefix or 'latest' of the --out store).

    Refits the support combiners of the local judge (claim features -> P(supported)) on the
    run's labels of --metric, with a prior towards the packaged weights; prints the
    cross-validated agreement with the labels before (the packaged judge) and after (the refit,
    each fold scored by a refit on the others), and writes the refit on all labels to a
    calibration file that `--judge local:FILE` loads. Needs at least 30 labelled samples with
    claims to check, 10 of each class.
    """
    from ragmeter.log.store import require_store
    from ragmeter.run.calibrate import acalibrate
    from ragmeter.run.result import Result
    from ragmeter.run.sync import run_sync

    result = Result.from_store(require_store(out), run)
    report = run_sync(acalibrate(result, metric, folds=folds, seed=seed, l2=l2))
    path = report.save(output if output is not None else default_output(out, result.run_id, metric))
    if as_json:
        echo_json({**report.to_dict(), "file": str(path)})
        return
    render(report, path)


def _num(v: Any) -> str:
    return "—" if v is None else f"{v:.3f}"


def _ci(v: Any) -> str:
    return "—" if not v else f"[{v[0]:.3f}, {v[1]:.3f}]"


def render(report: Any, path: Path) -> None:
    from rich.table import Table

    from ragmeter.report.console import make_console

    console = make_console()
    labels = report.labels
    head = (
        f"run {report.run_id} · {report.metric} ({report.label_kind} labels): {report.n_labels} labelled "
        f"samples with claims to check ({labels.get('random', 0)} random, {labels.get('picked', 0)} picked)"
    )
    if report.n_without_claims:
        head += f", {report.n_without_claims} without a claim (left out)"
    console.print(head, markup=False, highlight=False)
    console.print(
        f"cross-validated agreement with the labels: {report.folds} folds (seed {report.seed}), each scored "
        f"by a refit on the other folds; prior l2 {report.l2:g}",
        markup=False,
        highlight=False,
    )
    table = Table(header_style="bold")
    for col in ("statistic", "packaged judge", "95% CI", "calibrated", "95% CI"):
        table.add_column(col)
    b, a = dict(report.before), dict(report.after)
    for key in _STATS[report.label_kind]:
        table.add_row(
            key,
            _num(b.get(key)),
            _ci((b.get("ci95") or {}).get(key)),
            _num(a.get(key)),
            _ci((a.get("ci95") or {}).get(key)),
        )
    console.print(table)
    gain = dict(report.gain)
    if gain.get("auc") is not None:
        ci_text = "—" if not gain.get("ci95") else f"[{gain['ci95'][0]:+.3f}, {gain['ci95'][1]:+.3f}]"
        console.print(
            f"ROC AUC gain, calibrated - packaged: {gain['auc']:+.3f} {ci_text} (paired bootstrap)",
            markup=False,
            highlight=False,
        )
        ci = gain.get("ci95") or [0.0, 0.0]
        if ci[1] < 0:
            console.print(
                "  the refit agrees worse with these labels than the packaged judge: keep the packaged one",
                markup=False,
                highlight=False,
            )
        elif ci[0] <= 0:
            console.print(
                "  no clear gain in ROC AUC: the packaged judge ranks these samples about as well (the "
                "rows at the threshold say whether the verdicts agree better)",
                markup=False,
                highlight=False,
            )
    if labels.get("picked"):
        console.print(
            "  picked labels count here: samples chosen by hand are no random sample, so these figures "
            "may not hold for the run as a whole",
            markup=False,
            highlight=False,
        )
    console.print(f"calibration written to {path}", markup=False, highlight=False)
    console.print(f"score with it: --judge local:{path}", markup=False, highlight=False)
