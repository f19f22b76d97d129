"""ragmeter metrics: the registered metrics and what each needs, in English or Chinese."""

from __future__ import annotations

import click

from ragmeter.cli.common import echo_json, handle_errors
from ragmeter.metrics.descriptions import description_languages


@click.command("metrics")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per metric, a line each.")
@click.option(
    "--lang",
    type=click.Choice(description_languages()),
    default="en",
    show_default=True,
    help="Language of the descriptions (zh: Chinese names and descriptions).",
)
@click.option(
    "--aliases",
    "show_aliases",
    is_flag=True,
    help="List other tools' metric names (Ragas) that ragmeter accepts, with the metric each maps to.",
)
@handle_errors
def metrics_cmd(as_json: bool, lang: str, show_aliases: bool) -> None:
    """List metrics, the sample fields each needs and the judge steps it asks for."""
    if show_aliases:
        _print_aliases(as_json)
        return
    from rich.table import Table

    from ragmeter.metrics.descriptions import load_descriptions
    from ragmeter.metrics.registry import list_metrics
    from ragmeter.report.console import make_console

    registry = list_metrics()
    texts = load_descriptions(lang)
    described = {name: texts.describe(name, cls) for name, cls in registry.items()}
    if as_json:
        for name, cls in registry.items():
            row = {
                "name": name,
                "requires": list(cls.requires),
                "steps": list(cls.steps),
                "needs_llm": any(s != "embed" for s in cls.steps),
                "threshold": cls.threshold,
                "description": described[name].description,
            }
            if described[name].term is not None:
                row["term"] = described[name].term
            echo_json(row)
        return
    with_terms = any(d.term is not None for d in described.values())
    labels = texts.labels
    table = Table(header_style="bold")
    columns = ["metric", "term", "requires", "steps", "description"]
    if not with_terms:
        columns.remove("term")
    for col in columns:
        # fold: Chinese text has no spaces to wrap at, and a description must not be cut off
        table.add_column(labels[col], overflow="fold")
    for name, cls in registry.items():
        cells = {
            "metric": name,
            "term": described[name].term or "",
            "requires": ", ".join(cls.requires),
            "steps": ", ".join(cls.steps) or labels["no_judge"],
            "description": described[name].description,
        }
        table.add_row(*(cells[c] for c in columns))
    make_console().print(table)


def _print_aliases(as_json: bool) -> None:
    from rich.table import Table

    from ragmeter.metrics.registry import list_aliases
    from ragmeter.report.console import make_console

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
