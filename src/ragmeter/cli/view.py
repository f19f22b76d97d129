"""ragmeter view: a local web app over a run store (its one write: people's labels)."""

from __future__ import annotations

from pathlib import Path

import click

from ragmeter.cli.common import handle_errors, out_option


@click.command("view")
@out_option
@click.option(
    "--port", type=click.IntRange(0, 65535), default=8765, show_default=True, help="Port (0: any free one)."
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to bind. The default serves this machine only; another address exposes your runs "
    "(and takes no labels).",
)
@click.option("--verbose", is_flag=True, help="Log each request to stderr.")
@handle_errors
def view_cmd(out: Path, port: int, host: str, verbose: bool) -> None:
    """Browse the runs in a store: their summaries, each run's report, a comparison of two runs,
    and a page to label a run's samples (/run/RUN/label?metric=M).

    Nothing is re-run. The one write is a label given on the labelling page, taken only on a
    loopback address and only with the token made at start. Stop it with Ctrl-C.
    """
    from ragmeter.errors import ConfigError
    from ragmeter.report.server import ViewServer

    try:
        server = ViewServer(out, host=host, port=port, verbose=verbose)
    except OSError as exc:
        raise ConfigError(f"cannot listen on {host}:{port}: {exc}") from exc
    click.echo(f"ragmeter view: {server.url} (runs in {out}); Ctrl-C stops it")
    if server.token is not None:
        click.echo(
            f"label a run's samples: {server.url}run/RUN/label?metric=METRIC (linked from each report)"
        )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        click.echo("stopped", err=True)
    finally:
        server.server_close()
