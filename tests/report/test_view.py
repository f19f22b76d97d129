"""ragmeter view: the local read-only web app, over HTTP (port 0, a server thread) and in a browser."""

from __future__ import annotations

import json
import re
import shutil
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

import ragmeter
from helpers.browser import Browser
from ragmeter.cli.main import cli
from ragmeter.report.page import DATA_ELEMENT_ID
from ragmeter.report.server import ViewApp, ViewServer


@pytest.fixture(scope="module")
def view_store(report_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report run plus a second, offline run of the same rows."""
    from helpers.report_runs import report_rows

    store = tmp_path_factory.mktemp("view") / "runs"
    shutil.copytree(report_store, store)
    ragmeter.evaluate(report_rows(), ["token_f1"], None, out=store, run_id="second")
    return store


@pytest.fixture(scope="module")
def server(view_store: Path) -> Iterator[ViewServer]:
    srv = ViewServer(view_store, port=0)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join(10)


def _get(url: str, method: str = "GET", host: str | None = None) -> tuple[int, dict[str, str], str]:
    req = urllib.request.Request(url, method=method, headers={} if host is None else {"Host": host})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:  # loopback only
            return r.status, dict(r.headers), r.read().decode("utf-8")
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read().decode("utf-8")


def _data(page: str) -> dict:
    m = re.search(rf'<script type="application/json" id="{DATA_ELEMENT_ID}">(.*?)</script>', page, re.S)
    assert m is not None
    return json.loads(m.group(1))


def test_binds_to_loopback_by_default(server: ViewServer) -> None:
    assert server.server_address[0] == "127.0.0.1"
    assert server.url.startswith("http://127.0.0.1:")


def test_runs_page_lists_runs_with_summaries(server: ViewServer) -> None:
    status, headers, body = _get(server.url)
    assert status == 200 and headers["Content-Type"] == "text/html; charset=utf-8"
    assert "default-src 'none'" in headers["Content-Security-Policy"]
    runs = _data(body)["runs"]
    assert [r["run_id"] for r in runs] == ["second", "report-test"]
    test_run = runs[1]
    faith = next(m for m in test_run["metrics"] if m["name"] == "faithfulness")
    result = ragmeter.Result.from_store(server.app.store_dir, "report-test")
    s = result.summary()["faithfulness"]
    assert faith["mean"] == pytest.approx(s.mean) and faith["n_scored"] == s.n_scored
    assert faith["n_invalid"] == s.n_invalid
    assert [m["name"] for m in test_run["metrics"]] == result.metric_names


def test_run_page_is_the_report(server: ViewServer) -> None:
    status, headers, body = _get(server.url + "run/report-test")
    assert status == 200
    data = _data(body)
    assert data["kind"] == "report" and data["run"]["run_id"] == "report-test" and len(data["samples"]) == 6
    assert _get(server.url + "run/report")[0] == 200  # a unique prefix works as on the command line
    assert "Content-Security-Policy" in headers


def test_errors_and_read_only(server: ViewServer) -> None:
    status, _, body = _get(server.url + "run/nope")
    assert status == 404 and "no run 'nope'" in body
    assert _get(server.url + "elsewhere")[0] == 404
    status, _, body = _get(server.url + "compare?a=second")
    assert status == 400 and "two runs" in body
    assert _get(server.url, method="POST")[0] == 405
    assert _get(server.url + "run/report-test", method="DELETE")[0] == 405


def test_compare_page(server: ViewServer) -> None:
    status, headers, body = _get(server.url + "compare?a=report-test&b=second")
    assert status == 200 and "default-src 'none'" in headers["Content-Security-Policy"]
    data = _data(body)
    assert data["kind"] == "compare"
    assert (data["runs"]["a"]["run_id"], data["runs"]["b"]["run_id"]) == ("report-test", "second")
    assert len(data["pairs"]) == 6  # the same rows: every sample is matched
    assert data["metric_names"] == ["token_f1"]  # the one metric both runs scored
    assert _get(server.url + "compare?a=report&b=second&margin=0.05")[0] == 200
    for bad in ("-1", "x"):
        status, _, body = _get(server.url + f"compare?a=report-test&b=second&margin={bad}")
        assert status == 400 and "margin" in body, bad
    status, _, body = _get(server.url + "compare?a=report-test&b=second&max_new_invalid=3")
    assert status == 200 and _data(body)["comparison"]["max_new_invalid"] == 3
    for bad in ("-1", "0.5", "x"):
        status, _, body = _get(server.url + f"compare?a=report-test&b=second&max_new_invalid={bad}")
        assert status == 400 and ("max_new_invalid" in body or "newly invalid" in body), bad
    assert _get(server.url + "compare?a=report-test&b=nope")[0] == 404


def test_finished_run_page_is_cached(view_store: Path) -> None:
    app = ViewApp(view_store)
    assert app.run_page("second") is app.run_page("second")


def test_refuses_a_missing_store(tmp_path: Path) -> None:
    res = CliRunner().invoke(cli, ["view", "--out", str(tmp_path / "none"), "--port", "0"])
    assert res.exit_code == 2 and "no run store in" in res.stderr
    assert not (tmp_path / "none").exists()


def test_in_the_browser(server: ViewServer, browser: Browser) -> None:
    browser.console_errors()
    browser.open(server.url)
    d = browser.driver
    rows = d.find_elements("css selector", "#runs tbody tr")
    assert [r.get_attribute("data-run") for r in rows] == ["second", "report-test"]
    rows[1].find_element("css selector", "a").click()
    browser.wait_ready(server.url + "run/report-test")
    assert len(d.find_elements("css selector", "#rows .row")) == 6
    assert d.execute_script("return window.__pwned") is None
    assert browser.console_errors() == []


def test_compare_in_the_browser(server: ViewServer, browser: Browser) -> None:
    """The comparison chosen on the run list."""
    d = browser.driver
    browser.console_errors()
    browser.open(server.url)
    d.execute_script("document.getElementById('cmp-a').value = 'report-test';")
    d.execute_script("document.getElementById('cmp-b').value = 'second';")
    d.find_element("id", "cmp-go").click()
    browser.wait_ready(server.url + "compare?a=report-test&b=second")
    assert (
        d.execute_script("return JSON.parse(document.getElementById('ragmeter-data').textContent).kind")
        == "compare"
    )
    assert browser.console_errors() == [] and browser.resources() == []


def test_a_failing_page_is_a_500_not_a_dropped_connection(
    view_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = ViewApp(view_store)

    def broken(run: str) -> str:
        raise RuntimeError("boom")

    monkeypatch.setattr(app, "run_page", broken)
    status, ctype, body = app.respond("/run/second")
    assert (status, ctype) == (500, "text/plain") and "RuntimeError: boom" in body


def test_head_and_quoted_paths(server: ViewServer) -> None:
    status, headers, body = _get(server.url + "run/report%2Dtest", method="HEAD")
    assert status == 200 and body == "" and int(headers["Content-Length"]) > 1000


def test_refuses_other_host_names(server: ViewServer) -> None:
    """DNS rebinding: a page on evil.example whose name resolves to 127.0.0.1 gets nothing."""
    status, _, body = _get(server.url, host="evil.example:8765")
    assert status == 403 and "unexpected Host" in body
    port = server.server_address[1]
    for ok in (f"localhost:{port}", f"127.0.0.1:{port}", f"[::1]:{port}"):
        assert _get(server.url, host=ok)[0] == 200, ok
