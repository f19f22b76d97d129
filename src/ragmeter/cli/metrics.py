"""ragmeter metrics: the registered metrics and what each needs."""

from __future__ import annotations

import click

from ragmeter.cli.common import echo_json, handle_errors


@click.command("metrics")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per metric, a line each.")
@click.option(
    "--aliases",
    "show_aliases",
    is_flag=True,
    help="List other tools' metric names (Ragas) that ragmeter accepts, with the metric each maps to.",
)
@handle_errors
def metrics_cmd(as_json: bool, show_aliases: bool) -> None:
    """List metrics, the sample fields each needs and the judge steps it asks for."""
    from rich.table import Table

    from ragmeter.metrics.base import list_aliases, list_metrics
    from ragmeter.report.console import make_console

    if show_aliases:
        aliases = list_aliases()
        if as_json:
            for a in aliases.values():
                echo_json(
                    {
                        "alias": a.name,
                        "source": a.source,
                        "metric": a.target,
                        "args": dict(a.kwargs),
                        "difference": a.difference,
                    }
                )
            return
        table = Table(header_style="bold")
        for col in ("alias", "from", "ragmeter metric", "difference in definition"):
            table.add_column(col)
        for a in aliases.values():
            args = ", ".join(f"{k}={v!r}" for k, v in a.kwargs.items())
            table.add_row(a.name, a.source, f"{a.target}({args})" if args else a.target, a.difference)
        make_console().print(table)
        return

    registry = list_metrics()
    if as_json:
        for name, cls in registry.items():
            echo_json(
                {
                    "name": name,
                    "requires": list(cls.requires),
                    "steps": list(cls.steps),
                    "needs_llm": any(s != "embed" for s in cls.steps),
                    "threshold": cls.threshold,
                    "description": (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else "",
                }
            )
        return
    table = Table(header_style="bold")
    for col in ("metric", "needs fields", "judge steps", "description"):
        table.add_column(col)
    for name, cls in registry.items():
        doc = (cls.__doc__ or "").strip().splitlines()
        table.add_row(
            name,
            ", ".join(cls.requires),
            ", ".join(cls.steps) or "none (no judge)",
            doc[0] if doc else "",
        )
    make_console().print(table)
