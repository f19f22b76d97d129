"""ragmeter view: a local, read-only web app over a run store."""

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
    help="Address to bind. The default serves this machine only; another address exposes your runs.",
)
@click.option("--verbose", is_flag=True, help="Log each request to stderr.")
@handle_errors
def view_cmd(out: Path, port: int, host: str, verbose: bool) -> None:
    """Browse the runs in a store: their summaries, each run's report, and a comparison of two runs.

    Read-only; nothing is re-run. Stop it with Ctrl-C.
    """
    from ragmeter.errors import ConfigError
    from ragmeter.report.server import ViewServer

    try:
        server = ViewServer(out, host=host, port=port, verbose=verbose)
    except OSError as exc:
        raise ConfigError(f"cannot listen on {host}:{port}: {exc}") from exc
    click.echo(f"ragmeter view: {server.url} (runs in {out}); Ctrl-C stops it")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        click.echo("stopped", err=True)
    finally:
        server.server_close()
