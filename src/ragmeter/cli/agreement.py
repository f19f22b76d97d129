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


@click.command("agreement")
@click.argument(
    "files", nargs=-1, required=True, type=click.Path(path_type=Path, exists=True, dir_okay=False)
)
@judge_options
@click.option(
    "--metric", default=None, help="Score every aspect with this metric instead of the aspect's own."
)
@concurrency_option("Judge requests in flight per endpoint.")
@click.option("--limit", type=int, default=None, help="Only the first N judgements of each file.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per file and aspect, a line each.")
@click.option(
    "--progress/--no-progress", default=None, help="Progress bar (default: when stderr is a terminal)."
)
@click.option(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path("ragmeter-runs"),
    show_default=True,
    help="Where the LLM cache lives (the judgement runs themselves are not recorded).",
)
@handle_errors
def agreement_cmd(
    files: tuple[Path, ...],
    metric: str | None,
    concurrency: int | None,
    limit: int | None,
    as_json: bool,
    progress: bool | None,
    out: Path,
    **judge_opts: Any,
) -> None:
    """Score labelled judgement FILES (pair or point records) and report agreement with the labels.

    pairs: accuracy (ties count one half); binary points: auc, balanced_accuracy; graded points:
    spearman, kendall, auc (label >= 0.5); each with ci95 (bootstrap), n and n_invalid.
    """
    from rich.table import Table

    from ragmeter.report.console import make_console
    from ragmeter.run.agreement import aagreement
    from ragmeter.run.sync import run_sync

    opts = {k: judge_opts.get(k) for k in JUDGE_OPTION_NAMES}
    concurrency = resolve_concurrency(concurrency, opts.get("judge_concurrency"))
    judge = judge_from_spec(judge_spec_from_options(opts, out))

    async def go() -> Any:
        try:
            return await aagreement(
                list(files), judge, metric=metric, concurrency=concurrency, limit=limit, progress=progress
            )
        finally:
            await judge.aclose()

    reports = run_sync(go())
    if as_json:
        for r in reports:
            echo_json(r.to_dict())
        return
    table = Table(header_style="bold")
    for col in ("file", "aspect", "metric", "kind", "agreement", "95% CI", "n", "invalid"):
        table.add_column(col)
    for r in reports:
        s = dict(r.stats)
        ci = s.get("ci95")
        if r.kind == "pair":
            main = f"accuracy {s['accuracy']:.3f}" if s.get("accuracy") is not None else "—"
            ci_text = "—" if not ci else f"[{ci[0]:.3f}, {ci[1]:.3f}]"
        else:
            keys = ["auc", "balanced_accuracy"] if r.kind == "binary" else ["spearman", "kendall", "auc"]
            main = ", ".join(f"{k} {s[k]:.3f}" for k in keys if s.get(k) is not None) or "—"
            ci_text = (
                ", ".join(f"{k} [{v[0]:.3f}, {v[1]:.3f}]" for k, v in (ci or {}).items() if v is not None)
                or "—"
            )
        table.add_row(
            Path(r.file).name,
            r.aspect,
            r.metric,
            r.kind,
            main,
            ci_text,
            str(s.get("n")),
            str(s.get("n_invalid")),
        )
    make_console().print(table)
    click.echo(f"judge: {judge.name}")
