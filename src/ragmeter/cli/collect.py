"""ragmeter collect: receive OTLP/HTTP traces and append them to a trace file."""

from __future__ import annotations

from pathlib import Path

import click

from ragmeter.cli.common import handle_errors


@click.command("collect")
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to bind. The default takes traces from this machine only.",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=4318,
    show_default=True,
    help="Port (4318 is OTLP/HTTP's; 0: any free one).",
)
@click.option(
    "--out",
    "-o",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path("ragmeter-traces"),
    show_default=True,
    help="Directory of the trace file (traces.otlp.jsonl, appended to).",
)
@click.option("--verbose", is_flag=True, help="Log each export to stderr.")
@handle_errors
def collect_cmd(host: str, port: int, out: Path, verbose: bool) -> None:
    """Receive traces over OTLP/HTTP (POST /v1/traces; protobuf or JSON, gzip or not) and append
    each export to OUT/traces.otlp.jsonl, for `ragmeter evaluate OUT/traces.otlp.jsonl`.

    Point the app's OpenTelemetry exporter at it (OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318).
    Ctrl-C stops it: the exports in progress are written, the file is closed, the exit code is 0.
    """
    import asyncio

    from ragmeter.traces.collect import Collector, serve

    log = (lambda line: click.echo(line, err=True)) if verbose else None
    collector = Collector(out, host=host, port=port, log=log)

    def started(c: Collector) -> None:
        click.echo(f"ragmeter collect: {c.endpoint} -> {c.path}; Ctrl-C stops it", err=False)

    try:
        asyncio.run(serve(collector, started))
    except KeyboardInterrupt:  # where signal handlers cannot be set (Windows)
        pass
    counts = collector.counts
    click.echo(
        f"stopped: {counts.exports} export(s), {counts.spans} span(s) written to {collector.path}"
        + (f"; {counts.rejected_spans} span(s) refused" if counts.rejected_spans else "")
        + (f"; {counts.bad_requests} bad request(s)" if counts.bad_requests else ""),
        err=True,
    )
