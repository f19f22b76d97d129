"""Terminal report of a run: one table of metrics, then usage and skipped rows."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:
    from ragmeter.run.result import Result


def _fmt(x: float | None, digits: int = 3) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def make_console() -> Console:
    """A console for stdout; when stdout is not a terminal (a pipe, a CI log), wide enough that
    tables are not cut."""
    console = Console()
    if not console.is_terminal:
        console = Console(width=160)
    return console


def render_result(result: Result, console: Console | None = None, *, max_problems: int = 10) -> None:
    console = console or make_console()
    judge = result.meta.get("judge", {}).get("name", "?")
    source = result.meta.get("source") or "<data>"
    console.print(
        f"[bold]run[/bold] {result.run_id}  [bold]data[/bold] {source}  [bold]judge[/bold] {judge}  "
        f"[bold]samples[/bold] {result.n_samples}  [bold]skipped rows[/bold] {result.n_skipped}"
        + ("" if result.status == "finished" else f"  [bold red]status[/bold red] {result.status}")
    )
    table = Table(show_header=True, header_style="bold")
    table.add_column("metric")
    table.add_column("mean", justify="right")
    table.add_column("95% CI", justify="right")
    table.add_column("scored", justify="right")
    table.add_column("invalid", justify="right")
    table.add_column("skipped", justify="right")
    table.add_column("pass", justify="right")
    table.add_column("requests", justify="right")
    table.add_column("tokens", justify="right")
    for name, s in result.summary().items():
        ci = "—" if s.ci95 is None else f"[{s.ci95[0]:.3f}, {s.ci95[1]:.3f}]"
        invalid = str(s.n_invalid)
        if s.invalid_kinds:
            invalid += " (" + ", ".join(f"{k}: {v}" for k, v in sorted(s.invalid_kinds.items())) + ")"
        table.add_row(
            name,
            _fmt(s.mean),
            ci,
            str(s.n_scored),
            f"[red]{invalid}[/red]" if s.n_invalid else invalid,
            str(s.n_skipped),
            "—" if s.pass_rate is None else f"{s.pass_rate:.0%} ≥ {s.threshold:g}",
            str(s.usage.requests)
            + (f" (+{s.usage.cached_requests} cached)" if s.usage.cached_requests else ""),
            str(s.usage.total_tokens),
        )
    console.print(table)
    for name, s in result.summary().items():
        if s.judge_spread is not None:
            console.print(
                f"{name}: repeated judging, mean per-sample standard deviation {s.judge_spread:.3f}"
            )
    u = result.usage
    line = (
        f"usage: {u.requests} requests, {u.prompt_tokens} prompt + {u.completion_tokens} completion tokens"
        f", {u.cached_requests} served from cache"
    )
    cost = result.cost
    if cost is not None:
        line += f", cost {cost:.4f}"
    console.print(line)
    if result.problems:
        console.print(f"[yellow]{len(result.problems)} input problem(s):[/yellow]")
        for p in result.problems[:max_problems]:
            console.print(f"  {p}", markup=False, highlight=False)
        if len(result.problems) > max_problems:
            console.print(f"  ... and {len(result.problems) - max_problems} more (see --json)")
    if result.store_dir is not None:
        console.print(f"recorded in {result.store_dir} (ragmeter runs show {result.run_id})")
