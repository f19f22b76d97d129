"""ragmeter agreement: how well a metric agrees with people on labelled judgement files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ragmeter.cli.common import (
    JUDGE_OPTION_NAMES,
    concurrency_option,
    echo_json,
    handle_errors,
    judge_from_spec,
    judge_options,
    judge_spec_from_options,
    resolve_concurrency,
)

#: disagreements listed per report in the text output (--json has all of them)
SHOWN_DISAGREEMENTS = 10
_POINT_STATS = {
    "binary": ("accuracy", "kappa", "tpr", "tnr", "balanced_accuracy", "auc"),
    "graded": ("spearman", "kendall", "auc"),
}


class FileOrRun(click.ParamType):
    """A judgement file that exists, or a run (an id, a prefix, 'latest': no file suffix, no '/')."""

    name = "file-or-run"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        text = str(value)
        path = Path(text)
        if path.exists():
            if path.is_dir():
                self.fail(f"{text!r} is a directory, not a judgement file", param, ctx)
            return text
        if path.suffix or "/" in text or "\\" in text:
            self.fail(f"file {text!r} does not exist", param, ctx)
        return text


@click.command("agreement")
@click.argument("targets", nargs=-1, required=True, metavar="FILE... | RUN", type=FileOrRun())
@judge_options
@click.option(
    "--metric",
    default=None,
    help="Score every aspect with this metric instead of the aspect's own (RUN: only this metric).",
)
@concurrency_option("Judge requests in flight per endpoint.")
@click.option("--limit", type=int, default=None, help="Only the first N judgements of each file.")
@click.option(
    "--json", "as_json", is_flag=True, help="One JSON object per file (or metric) and aspect, a line each."
)
@click.option(
    "--progress/--no-progress", default=None, help="Progress bar (default: when stderr is a terminal)."
)
@click.option(
    "--out",
    "-o",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path("ragmeter-runs"),
    show_default=True,
    help="RUN: the run store. FILE: where the LLM cache lives (the judgement runs themselves are not recorded).",
)
@handle_errors
def agreement_cmd(
    targets: tuple[str, ...],
    metric: str | None,
    concurrency: int | None,
    limit: int | None,
    as_json: bool,
    progress: bool | None,
    out: Path,
    **judge_opts: Any,
) -> None:
    """Agreement of the judge with people: on labelled judgement FILES (pair or point records, scored
    now), or on the labels of RUN (an id, a unique prefix or 'latest' of the --out store, whose
    stored scores are compared with its labels; nothing is scored).

    pairs: accuracy (ties count one half); binary labels: accuracy, kappa, tpr and tnr at the
    metric's threshold, balanced_accuracy, auc; graded labels: spearman, kendall, auc (label >= 0.5);
    each with a 95% bootstrap CI, n, n_invalid, the base rate, a confusion table and the
    disagreements, worst first.
    """
    from ragmeter.errors import ConfigError
    from ragmeter.run.sync import run_sync

    paths = [Path(t) for t in targets]
    if len(targets) == 1 and not paths[0].exists():
        from ragmeter.log.store import require_store
        from ragmeter.run.label_agreement import run_agreement
        from ragmeter.run.result import Result

        result = Result.from_store(require_store(out), targets[0])
        reports = run_agreement(result, metric=metric)
        if not reports:
            what = f"metric {metric!r} of run" if metric else "run"
            raise ConfigError(
                f"{what} {result.run_id} has no labels; add some with "
                f"`ragmeter labels import FILE --run {result.run_id} --out {out}`"
            )
        judge_name = result.meta.get("judge", {}).get("name")
    else:
        for p in paths:
            if not p.is_file():
                raise ConfigError(
                    f"{p}: no such judgement file"
                    + ("" if len(paths) > 1 else " (nor a run: a run is named by its id)")
                )
        from ragmeter.run.agreement import aagreement

        opts = {k: judge_opts.get(k) for k in JUDGE_OPTION_NAMES}
        concurrency = resolve_concurrency(concurrency, opts.get("judge_concurrency"))
        judge = judge_from_spec(judge_spec_from_options(opts, out))
        judge_name = judge.name

        async def go() -> Any:
            try:
                return await aagreement(
                    paths, judge, metric=metric, concurrency=concurrency, limit=limit, progress=progress
                )
            finally:
                await judge.aclose()

        reports = run_sync(go())
    if as_json:
        for r in reports:
            echo_json(r.to_dict())
        return
    render_reports(reports)
    click.echo(f"judge: {judge_name}")


def _ci(v: Any) -> str:
    return "—" if not v else f"[{v[0]:.3f}, {v[1]:.3f}]"


def _num(v: Any) -> str:
    return "—" if v is None else f"{v:.3f}"


def render_reports(reports: Any) -> None:
    """Pairs as one table; each point report as its own block: statistics with their intervals,
    the confusion table at the threshold, the worst disagreements."""
    from rich.table import Table

    from ragmeter.report.console import make_console

    console = make_console()
    pairs = [r for r in reports if r.kind == "pair"]
    if pairs:
        table = Table(header_style="bold")
        for col in ("file", "aspect", "metric", "kind", "agreement", "95% CI", "n", "invalid"):
            table.add_column(col)
        for r in pairs:
            s = dict(r.stats)
            main = f"accuracy {s['accuracy']:.3f}" if s.get("accuracy") is not None else "—"
            table.add_row(
                Path(r.file or "").name, r.aspect, r.metric, r.kind, main, _ci(s.get("ci95")),
                str(s.get("n")), str(s.get("n_invalid")),
            )  # fmt: skip
        console.print(table)
    for r in reports:
        if r.kind == "left_out":
            console.print(
                f"{Path(r.file or '').name} · {r.metric}: left out ({r.stats['n']} judgement(s)): {r.stats['left_out']}",
                markup=False,
                highlight=False,
            )
    for r in reports:
        if r.kind in ("pair", "left_out"):
            continue
        s = dict(r.stats)
        where = f"run {r.run_id}" if r.run_id else Path(r.file or "").name
        head = (
            f"{where} · {r.metric} ({r.kind} labels): n {s['n']}, {s['n_invalid']} without a valid score, "
            f"base rate {_num(s.get('base_rate'))}"
        )
        if r.labels is not None:
            head += f"; labels: {r.labels.get('random', 0)} random, {r.labels.get('picked', 0)} picked"
        console.print(head, markup=False, highlight=False)
        if r.labels and r.labels.get("picked"):
            console.print(
                "  picked labels count here: samples chosen by hand are no random sample, so these "
                "figures may not hold for the run as a whole",
                markup=False,
                highlight=False,
            )
        table = Table(header_style="bold")
        for col in ("statistic", "value", "95% CI"):
            table.add_column(col)
        for key in _POINT_STATS[r.kind]:
            table.add_row(key, _num(s.get(key)), _ci((s.get("ci95") or {}).get(key)))
        console.print(table)
        c = s.get("confusion") or {}
        confusion = Table(title=f"at threshold {s.get('threshold')}", header_style="bold")
        for col in (
            "",
            "label 1" if r.kind == "binary" else "label ≥ 0.5",
            "label 0" if r.kind == "binary" else "label < 0.5",
        ):
            confusion.add_column(col)
        confusion.add_row("judge passes", str(c.get("tp", 0)), str(c.get("fp", 0)))
        confusion.add_row("judge fails", str(c.get("fn", 0)), str(c.get("tn", 0)))
        console.print(confusion)
        worst = list(s.get("disagreements") or [])
        if worst:
            table = Table(title=f"{len(worst)} disagreement(s), worst first", header_style="bold")
            for col in ("id", "score", "label"):
                table.add_column(col)
            for d in worst[:SHOWN_DISAGREEMENTS]:
                table.add_row(str(d.get("id")), _num(d.get("score")), _num(d.get("label")))
            console.print(table)
            if len(worst) > SHOWN_DISAGREEMENTS:
                console.print(f"  ... and {len(worst) - SHOWN_DISAGREEMENTS} more (--json lists every one)")
