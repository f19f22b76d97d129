"""The ragmeter command line: one module per command; options are parsed here, logic lives in the API."""

from __future__ import annotations

import click

from ragmeter import __version__
from ragmeter.cli.agreement import agreement_cmd
from ragmeter.cli.compare import compare_cmd
from ragmeter.cli.evaluate import evaluate_cmd
from ragmeter.cli.generate import generate_cmd
from ragmeter.cli.metrics import metrics_cmd
from ragmeter.cli.report import report_cmd
from ragmeter.cli.runs import runs_group
from ragmeter.cli.view import view_cmd


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ragmeter")
def cli() -> None:
    """ragmeter: measure the quality of retrieval-augmented generation.

    Offline by default (the local judge); name an LLM judge with --judge to use one.
    """


cli.add_command(evaluate_cmd)
cli.add_command(runs_group)
cli.add_command(metrics_cmd)
cli.add_command(agreement_cmd)
cli.add_command(generate_cmd)
cli.add_command(report_cmd)
cli.add_command(compare_cmd)
cli.add_command(view_cmd)


def main() -> None:
    cli()


if __name__ == "__main__":  # pragma: no cover
    main()
