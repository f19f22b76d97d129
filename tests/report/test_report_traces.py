"""A run of samples read from traces: the terminal and HTML reports show the app's latency and token
counts (header, table columns, the drill-down's trace line), in a real headless browser."""

from __future__ import annotations

from pathlib import Path

from helpers.browser import Browser
from helpers.otlp import export, rag_trace, write_lines
from ragmeter import evaluate


def _trace_run(tmp_path: Path):  # type: ignore[no-untyped-def]
    traces = []
    for i, latency in ((1, 30.0), (2, 1500.0), (3, 12.0)):
        spans = rag_trace(i, f"question {i}?", [f"context {i}."], f"answer {i}.", tokens=(10 * i, i))
        spans[2]["endTimeUnixNano"] = str(int(spans[2]["startTimeUnixNano"]) + int(latency * 1e6))
        traces.append(export(*spans))
    path = write_lines(tmp_path / "t.otlp.jsonl", traces)
    return evaluate(path, ["hit_rate"], out=tmp_path / "runs")


def test_the_html_report_shows_latency_and_tokens(tmp_path: Path, browser: Browser) -> None:
    result = _trace_run(tmp_path)
    page = result.to_html(tmp_path / "report.html")
    browser.console_errors()
    browser.open(page.as_uri())
    d = browser.driver
    header = d.find_element("id", "header").text
    assert "3 samples from traces" in header
    assert "latency median 30 ms, p95 1.50 s, max 1.50 s" in header
    assert "the app's tokens 60 prompt + 6 completion in 3 LLM call(s)" in header
    heads = [h.text for h in d.find_elements("css selector", "#table .head div")]
    assert heads[3:5] == ["latency", "tokens"]
    d.find_element("css selector", "#table .head div[data-key='latency_ms']").click()
    rows = d.find_elements("css selector", "#rows .row")
    assert [r.find_elements("css selector", "div")[3].text for r in rows] == ["12 ms", "30 ms", "1.50 s"]
    assert [r.find_elements("css selector", "div")[4].text for r in rows] == ["33", "11", "22"]
    rows[0].click()
    line = d.find_element("id", "trace-line").text
    assert line.startswith("trace 00000000000000000000000000000003")
    assert "latency 12 ms" in line and "33 tokens (30 prompt + 3 completion)" in line and "gpt-test" in line
    assert browser.console_errors() == []


def test_the_terminal_report_shows_latency_and_tokens(tmp_path: Path) -> None:
    from rich.console import Console

    from ragmeter.report.console import render_result

    console = Console(record=True, width=200)
    render_result(_trace_run(tmp_path), console)
    text = console.export_text()
    assert "traces: 3 sample(s) read from traces; latency median 30 ms, p95 1.50 s, max 1.50 s" in text
    assert "the app's tokens 60 prompt + 6 completion (66 total, 22 a trace) in 3 LLM call(s)" in text
