"""The ragmeter command line: one module per command; options are parsed here, logic lives in the API."""

from __future__ import annotations

import atexit
import os
import sys
import threading
from typing import Any

import click

from ragmeter import __version__
from ragmeter.cli.agreement import agreement_cmd
from ragmeter.cli.calibrate import calibrate_cmd
from ragmeter.cli.collect import collect_cmd
from ragmeter.cli.compare import compare_cmd
from ragmeter.cli.evaluate import evaluate_cmd
from ragmeter.cli.generate import generate_cmd
from ragmeter.cli.labels import labels_group
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
cli.add_command(labels_group)
cli.add_command(calibrate_cmd)
cli.add_command(generate_cmd)
cli.add_command(report_cmd)
cli.add_command(compare_cmd)
cli.add_command(view_cmd)
cli.add_command(collect_cmd)


def main() -> None:
    """The ``ragmeter`` program: run the command, then leave without tearing the interpreter down.

    Once the command has returned, its output is flushed, the exit handlers have run (``atexit``:
    Ray's shutdown, for one) and every thread's work is done, an exiting interpreter only frees
    its modules and objects one by one: 40-60 ms after a run that loaded NumPy and the local
    embedder (docs/performance.md), which the user waits for and nothing needs. So the process
    ends there, with the command's exit status, as Python would have set it (``sys.exit``'s code:
    None is 0, an int itself, anything else printed to stderr and 1; output that cannot be written
    out, e.g. to a closed pipe, is 120). Under a profiler or a tracer (``python -m cProfile``,
    coverage, a debugger), which may still have to write what it gathered, the exit is Python's own.
    """
    try:
        cli()
        code: Any = 0
    except SystemExit as stop:
        if sys.getprofile() is not None or sys.gettrace() is not None:
            raise
        code = stop.code
    if sys.getprofile() is not None or sys.gettrace() is not None:
        return
    if code is None:
        code = 0
    elif not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: what Python reports as status 120
            code = code or 120
    threading_shutdown = getattr(threading, "_shutdown", None)
    if callable(threading_shutdown):  # joins threads still running, as the interpreter would
        threading_shutdown()
    atexit._run_exitfuncs()
    os._exit(code)


if __name__ == "__main__":  # pragma: no cover
    main()
