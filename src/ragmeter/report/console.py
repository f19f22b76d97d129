"""Terminal reports: a run (one table of metrics, then usage and skipped rows) and a comparison of
two runs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ragmeter.metrics._common import short
from ragmeter.traces.summary import summary_line, trace_summary

if TYPE_CHECKING:
    from ragmeter.report.comparison import Comparison
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


def _endpoint_line(judge: dict[str, object]) -> str:
    """``endpoint URL  structured MODE  key from $VAR`` for an LLM judge ('' for the local one)."""
    provider = judge.get("provider")
    if not isinstance(provider, dict) or not provider.get("base_url"):
        return ""
    mode = provider.get("structured_resolved") or provider.get("structured")
    parts = [f"[bold]endpoint[/bold] {provider['base_url']}", f"[bold]structured[/bold] {mode}"]
    key = str(provider.get("api_key_from") or "")
    if key.startswith("env:"):
        parts.append(f"[bold]key from[/bold] ${key[4:]}")
    elif key:
        parts.append(f"[bold]key[/bold] {key}")
    return "  ".join(parts)


def _calibration_line(judge: dict[str, object]) -> str:
    """``calibrated with FILE (fitted on ...)`` for a local judge scoring with a calibration file
    (``ragmeter calibrate``), else ''."""
    combiner = judge.get("support_combiner")
    cal = combiner.get("calibration") if isinstance(combiner, dict) else None
    if not isinstance(cal, dict):
        return ""
    return (
        f"[bold]calibrated with[/bold] {escape(str(cal.get('file')))} (fitted on the {cal.get('n_labels')} "
        f"{escape(str(cal.get('metric')))} labels of run {escape(str(cal.get('run')))})"
    )


def render_result(result: Result, console: Console | None = None, *, max_problems: int = 10) -> None:
    console = console or make_console()
    judge = result.meta.get("judge", {}).get("name", "?")
    source = result.meta.get("source") or "<data>"
    n_conv = sum(1 for _, s in result.samples if s.messages is not None)
    conv = f" ({n_conv} conversations and their turns)" if n_conv else ""
    console.print(
        f"[bold]run[/bold] {result.run_id}  [bold]data[/bold] {source}  [bold]judge[/bold] {judge}  "
        f"[bold]samples[/bold] {result.n_samples}{conv}  [bold]skipped rows[/bold] {result.n_skipped}"
        + ("" if result.status == "finished" else f"  [bold red]status[/bold red] {result.status}")
    )
    judge_meta = result.meta.get("judge", {})
    for line in (_endpoint_line(judge_meta), _calibration_line(judge_meta)):
        if line:
            console.print(line)
    error = (result.meta.get("summary") or {}).get("error")
    if result.status == "failed" and error:
        console.print(f"[bold red]failed:[/bold red] {escape(str(error))}")
    table = Table(show_header=True, header_style="bold")
    table.add_column("metric")
    table.add_column("mean", justify="right")
    table.add_column("95% CI", justify="right")
    table.add_column("scored", justify="right")
    table.add_column("invalid", justify="right")
    table.add_column("skipped", justify="right")
    table.add_column("pass", justify="right")
    # a run that sent no request (the local judge) has no usage columns: zeros there say nothing
    sent = bool(result.usage.requests or result.usage.cached_requests or result.usage.total_tokens)
    if sent:
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
            "—"
            if s.pass_rate is None
            else f"{s.pass_rate:.0%} {'≥' if s.higher_is_better else '≤'} {s.threshold:g}",
            *(
                [
                    str(s.usage.requests)
                    + (f" (+{s.usage.cached_requests} cached)" if s.usage.cached_requests else ""),
                    str(s.usage.total_tokens),
                ]
                if sent
                else []
            ),
        )
    console.print(table)
    for left in result.meta.get("metrics_left_out") or ():
        console.print(f"[yellow]left out[/yellow] {left['metric']}: {escape(str(left['why']))}")
    render_calibrated(result, console)
    for name, s in result.summary().items():
        if s.judge_spread is not None:
            console.print(
                f"{name}: repeated judging, mean per-sample standard deviation {s.judge_spread:.3f}"
            )
    u = result.usage
    if sent:
        line = (
            f"usage: {u.requests} requests, {u.prompt_tokens} prompt + {u.completion_tokens} completion tokens"
            f", {u.cached_requests} served from cache"
        )
        if u.cached_tokens:
            line += f", {u.cached_tokens} prompt tokens from the server's prompt cache"
        cost = result.cost
        if cost is not None:
            line += f", cost {cost:.4f}"
        console.print(line)
    traces = trace_summary(s for _, s in result.samples)
    if traces is not None:
        console.print(summary_line(traces), markup=False, highlight=False)
    if result.problems:
        console.print(f"[yellow]{len(result.problems)} input problem(s):[/yellow]")
        for p in result.problems[:max_problems]:
            console.print(f"  {p}", markup=False, highlight=False)
        if len(result.problems) > max_problems:
            console.print(f"  ... and {len(result.problems) - max_problems} more (see --json)")
    if result.store_dir is not None:
        console.print(f"recorded in {result.store_dir} (ragmeter runs show {result.run_id})")


#: what a judge-only interval is and is not, in words (console, report)
JUDGE_CI_NOTE = (
    "The 95% CI is of the judge's mean: how far it could move on other samples like these, not how far "
    "the judge is from what people would say."
)


def render_calibrated(result: Result, console: Console) -> None:
    """Under the metrics table: what the judge's interval means, and for each metric with random
    labels the calibrated estimate of the human mean beside it."""
    lines = []
    for name, s in result.summary().items():
        c = s.calibrated
        if c is None:
            continue
        if c.get("mean") is None:
            lines.append(
                f"{escape(name)}: {c['n_labels']} random label(s); {c['needed']} more for a calibrated estimate"
            )
            continue
        lo, hi = c["ci95"]
        text = (
            f"[bold]{escape(name)}[/bold] calibrated to people's labels: [bold]{c['mean']:.3f}[/bold] "
            f"[{lo:.3f}, {hi:.3f}] ({c['method']}, {c['n_labels']} random labels, λ {c['lambda']:.2f}; "
            f"labels alone [{c['labels_only_ci95'][0]:.3f}, {c['labels_only_ci95'][1]:.3f}]); judge {_fmt(s.mean)}"
        )
        lines.append(text)
        if c.get("warning"):
            lines.append(f"  [yellow]{escape(str(c['warning']))}[/yellow]")
    console.print(
        f"[dim]{JUDGE_CI_NOTE}[/dim]"
        + ("" if lines else " Label samples to know: ragmeter labels (docs/trust.md).")
    )
    for line in lines:
        console.print(line)


def render_comparison(
    comparison: Comparison,
    console: Console | None = None,
    *,
    margin: float = 0.0,
    max_new_invalid: int = 0,
    show_moved: int = 3,
) -> None:
    """Terminal view of :func:`~ragmeter.report.comparison.compare_runs`: counts, a loud warning
    when the runs are not comparable, one row per metric, then the samples that moved most and
    those scored validly in one run only."""
    from ragmeter.stats.paired import TEST_NAME

    console = console or make_console()
    c = comparison
    console.print(
        f"[bold]A[/bold] {escape(c.run_a)}  [bold]B[/bold] {escape(c.run_b)}  [bold]matched[/bold] {c.n_matched}  "
        f"[bold]only in A[/bold] {c.n_only_a}  [bold]only in B[/bold] {c.n_only_b}"
    )
    if not c.comparable:
        console.print(
            "[bold red]WARNING: these runs are NOT COMPARABLE; read the differences with care:[/bold red]"
        )
        for issue in c.issues:
            console.print(f"  - {issue}", style="red", markup=False, highlight=False)
    title = "B - A per metric" + ("" if c.comparable else " [NOT COMPARABLE]")
    table = Table(title=title, show_header=True, header_style="bold")
    for col, justify in (
        ("metric", "left"),
        ("mean A", "right"),
        ("mean B", "right"),
        ("B - A", "right"),
        ("95% CI", "right"),
        ("p", "right"),
        ("B better/tie/worse", "right"),
        ("pairs", "right"),
        ("invalid A/B", "right"),
        ("newly invalid/valid in B", "right"),
        ("verdict", "left"),
    ):
        table.add_column(col, justify=justify)  # type: ignore[arg-type]
    for name, m in c.metrics.items():
        verdict = m.verdict(margin, max_new_invalid)
        style = {"worse": "[bold red]worse[/bold red]", "better": "[green]better[/green]"}.get(
            verdict, verdict
        )
        if m.n_new_invalid > max_new_invalid:
            style += f" ({m.n_new_invalid} newly invalid)"
        paired = m.diff is not None and m.ci95 is not None and m.p_value is not None
        table.add_row(
            escape(name),
            _fmt(m.mean_a),
            _fmt(m.mean_b),
            f"{m.diff:+.3f}" if paired else "—",
            f"[{m.ci95[0]:+.3f}, {m.ci95[1]:+.3f}]" if m.ci95 is not None else "—",
            f"{m.p_value:.3g}" if m.p_value is not None else "—",
            f"{m.wins}/{m.ties}/{m.losses}" if paired else "—",
            str(m.n_pairs),
            f"{m.n_invalid_a}/{m.n_invalid_b}",
            f"{m.n_new_invalid}/{m.n_new_valid}",
            style,
        )
    console.print(table)
    console.print(
        f"CI: paired bootstrap of the mean difference over the pairs both runs scored validly, on the judge's "
        f"scale; p: {TEST_NAME}; newly invalid: valid in A, invalid or not scored in B (a regression of B), "
        f"newly valid the reverse; verdict at margin {margin:g}, at most {max_new_invalid} newly invalid"
    )
    for name, m in c.metrics.items():
        cal = m.calibrated
        if cal is None:
            continue
        if cal.get("diff") is None:
            console.print(
                f"{escape(name)}: {cal['n_labels']} pair(s) labelled in both runs; {cal['needed']} more for a "
                "calibrated difference"
            )
            continue
        console.print(
            f"[bold]{escape(name)}[/bold] calibrated to people's labels: B - A {cal['diff']:+.3f} "
            f"[{cal['ci95'][0]:+.3f}, {cal['ci95'][1]:+.3f}] ({cal['method']}, {cal['n_labels']} pairs labelled "
            f"in both runs, λ {cal['lambda']:.2f})"
        )
    if c.metrics_only_a or c.metrics_only_b:
        console.print(
            f"not compared: only in A {', '.join(c.metrics_only_a) or '-'}; only in B {', '.join(c.metrics_only_b) or '-'}"
        )
    if show_moved <= 0:
        return
    for name, m in c.metrics.items():
        for label, items in (("worse in B", m.worsened), ("better in B", m.improved)):
            if not items:
                continue
            console.print(f"[bold]{name}[/bold]: {label} (most moved first)")
            for s in items[:show_moved]:
                console.print(
                    f"  {s.key}  {s.value_a:.3f} -> {s.value_b:.3f} ({s.diff:+.3f})  {short(s.question, 70)}",
                    markup=False,
                    highlight=False,
                )
                console.print(f"    A: {short(s.reason_a, 90)}", markup=False, highlight=False)
                console.print(f"    B: {short(s.reason_b, 90)}", markup=False, highlight=False)
        for label, changes, total in (
            ("newly invalid in B (valid in A)", m.new_invalid, m.n_new_invalid),
            ("newly valid in B (invalid or not scored in A)", m.new_valid, m.n_new_valid),
        ):
            if not changes:
                continue
            console.print(f"[bold]{name}[/bold]: {total} {label}")
            for v in changes[:show_moved]:
                side_a = f"{v.value_a:.3f}" if v.value_a is not None else v.error_a
                side_b = f"{v.value_b:.3f}" if v.value_b is not None else v.error_b
                console.print(
                    f"  {v.key}  {side_a} -> {side_b}  {short(v.question, 70)}", markup=False, highlight=False
                )
                console.print(f"    A: {short(v.reason_a, 90)}", markup=False, highlight=False)
                console.print(f"    B: {short(v.reason_b, 90)}", markup=False, highlight=False)
