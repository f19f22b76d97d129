"""The HTML report as a file: escaping, embedded data, CSP, no remote URL, the CLI and the API."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from helpers.report_runs import BROKEN_REPLY, HOSTILE
from ragmeter import Result
from ragmeter.cli.main import cli
from ragmeter.report.html import render_report
from ragmeter.report.html_data import histogram, locate, report_data
from ragmeter.report.page import DATA_ELEMENT_ID, asset, embed_json, render_page

SCRIPT_RE = re.compile(r"<script\b([^>]*)>(.*?)</script>", re.S | re.I)


def _scripts(page: str) -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in SCRIPT_RE.finditer(page)]


def _embedded(page: str) -> dict:
    (attrs, body), _ = _scripts(page)
    assert f'id="{DATA_ELEMENT_ID}"' in attrs and 'type="application/json"' in attrs
    return json.loads(body)


# ---------------------------------------------------------------- embedding


@pytest.mark.parametrize(
    "value",
    [
        "</script><script>alert(1)</script>",
        "<!-- <script> -->",
        "a & b > c < d",
        "line\u2028separator\u2029paragraph",
        "长城 🚀",
        {"</SCRIPT>": ["<img src=x onerror=alert(1)>"]},
    ],
)
def test_embed_json_round_trips_and_cannot_close_the_tag(value: object) -> None:
    text = embed_json({"v": value})
    assert json.loads(text) == {"v": value}
    for ch in "<>&\u2028\u2029":
        assert ch not in text


def test_embed_json_keeps_chinese_as_utf8_and_escapes_lone_surrogates() -> None:
    text = embed_json({"q": "长城有多长？", "bad": "x\ud800y"})
    assert "长城有多长？" in text
    assert "\\ud800" in text
    text.encode("utf-8")  # a lone surrogate would make the file unwritable
    assert json.loads(text)["bad"] == "x\ud800y"


def test_embed_json_writes_what_json_cannot_hold_as_the_run_store_does() -> None:
    import numpy as np

    text = embed_json({"x": float("nan"), "n": np.float32(0.5), "s": {2, 1}})
    assert json.loads(text) == {"x": "nan", "n": 0.5, "s": [1, 2]}


# ---------------------------------------------------------------- the page shell


def test_page_has_csp_that_allows_only_its_own_script() -> None:
    page = render_page("t <b>", {"x": 1}, scripts=())
    m = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', page)
    assert m is not None
    csp = m.group(1).replace("&#x27;", "'")
    assert "default-src 'none'" in csp and "img-src data:" in csp and "base-uri 'none'" in csp
    assert "'unsafe-inline'" not in csp.split("script-src", 1)[1].split(";", 1)[0]
    scripts = _scripts(page)
    assert len(scripts) == 2
    body = scripts[1][1]
    digest = base64.b64encode(hashlib.sha256(body.encode("utf-8")).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in csp
    assert "<title>t &lt;b&gt;</title>" in page
    assert '<meta charset="utf-8">' in page


def test_assets_never_parse_data_as_html() -> None:
    for name in ("common.js", "sample.js", "report.js", "runs.js"):
        js = asset(name)
        for banned in (
            "innerHTML",
            "outerHTML",
            "insertAdjacentHTML",
            "document.write",
            "eval(",
            "Function(",
            "</script",
            "<!--",
            "fetch(",
            "XMLHttpRequest",
            "import(",
        ):
            assert banned not in js, (name, banned)
    with pytest.raises(ValueError):
        asset("../page.py")


# ---------------------------------------------------------------- the report of a run


def test_report_embeds_the_run(report_result: Result) -> None:
    page = render_report(report_result)
    data = _embedded(page)
    assert data["kind"] == "report"
    assert data["run"]["run_id"] == "report-test"
    assert [m["name"] for m in data["metrics"]] == report_result.metric_names
    assert len(data["samples"]) == report_result.n_samples == 6
    summary = report_result.summary()
    for m in data["metrics"]:
        s = summary[m["name"]]
        assert m["mean"] == s.mean and m["n_scored"] == s.n_scored and m["n_invalid"] == s.n_invalid
        assert sum(m["histogram"]["counts"]) == s.n_scored
    # skipped jobs are null, invalid ones carry kind, message and the judge's raw reply
    by_id = {s["id"]: s for s in data["samples"]}
    names = report_result.metric_names
    assert by_id["no-reference"]["scores"][names.index("token_f1")] is None
    broken = by_id["broken"]["scores"][names.index("faithfulness")]
    assert broken["value"] is None and broken["error"]["kind"] == "JudgeOutputError"
    assert BROKEN_REPLY in broken["error"]["raw"]
    assert any(c.get("reply") for c in broken["calls"])  # the replies of an invalid score are kept
    evasive = by_id["evasive"]["scores"][names.index("faithfulness")]
    assert evasive["error"]["kind"] == "NoClaims"
    paris = by_id["paris"]["scores"][names.index("faithfulness")]
    assert all("reply" not in c for c in paris["calls"])  # a valid score's details say it all
    assert paris["usage"]["requests"] >= 1 and paris["duration_s"] > 0


def test_evidence_is_located_in_its_context(report_result: Result) -> None:
    data = report_data(report_result)
    paris = next(s for s in data["samples"] if s["id"] == "paris")
    faith = paris["scores"][report_result.metric_names.index("faithfulness")]
    first = faith["details"]["claims"][0]
    assert first["supported"] is True
    sentence = "Paris is the capital and largest city of France."
    assert "evidence" not in first  # the page reads it back from the context
    k, start, end = first["evidence_at"]
    assert paris["contexts"][k][start:end] == sentence
    # context relevance: each rated sentence is placed in its context
    rel = paris["scores"][report_result.metric_names.index("context_relevance")]["details"]["contexts"]
    placed = [paris["contexts"][x["at"][0]][x["at"][1] : x["at"][2]] for g in rel for x in g]
    assert placed == [
        "Paris is the capital and largest city of France.",
        "It lies on the Seine.",
        "Lyon is a city in France known for its food.",
    ]
    # context precision: ranks count the non-blank contexts only; they map back to the sample's
    cp = paris["scores"][report_result.metric_names.index("context_precision")]["details"]["contexts"]
    assert [(c["rank"], c["context_index"], c["useful"]) for c in cp] == [(1, 0, True), (2, 2, False)]
    assert [x["at"][0] for g in rel for x in g] == [0, 0, 2]


def test_locate_verbatim_then_ignoring_case_and_spaces() -> None:
    ctxs = ["First context.", "The Eiffel  Tower\nis in Paris. It is tall."]
    assert locate("is in Paris.", ctxs) == [1, 18, 30]
    k, a, b = locate("the eiffel tower is in paris.", ctxs) or [0, 0, 0]
    assert (k, ctxs[k][a:b]) == (1, "The Eiffel  Tower\nis in Paris.")
    assert locate("Paris is in France.", ctxs) is None
    assert locate("   ", ctxs) is None


def test_histogram_bins() -> None:
    assert histogram([0.0, 0.05, 0.5, 1.0])["counts"] == [2, 0, 0, 0, 0, 1, 0, 0, 0, 1]
    h = histogram([1.0, 3.0, 5.0])
    assert (h["lo"], h["hi"], sum(h["counts"])) == (1.0, 5.0, 3)
    assert histogram([4.0, 4.0]) == {"lo": 4.0, "hi": 4.0, "counts": [2]}
    assert sum(histogram([])["counts"]) == 0


def test_hostile_text_is_data_only(report_result: Result) -> None:
    page = render_report(report_result)
    scripts = _scripts(page)
    assert len(scripts) == 2  # the data and the page's own script; nothing from the data
    data_body = scripts[0][1]
    assert "<" not in data_body and ">" not in data_body
    outside = page.replace(data_body, "")
    for payload in HOSTILE:
        assert payload not in outside
    assert "__pwned" not in outside
    data = json.loads(data_body)
    hostile = next(s for s in data["samples"] if s["id"].startswith("<b>hostile</b>"))
    assert HOSTILE[1] in hostile["question"]
    assert hostile["metadata"] == {"note": HOSTILE[2]}


def test_no_remote_url_in_the_page(report_result: Result) -> None:
    page = render_report(report_result)
    urls = set(re.findall(r"(?:https?:|wss?:|ftp:)?//[\w.-]+\.[a-z]{2,}[^\s\"')]*", page, re.I))
    assert urls <= {"http://www.w3.org/2000/svg"}  # an XML namespace name, never fetched
    assert "@import" not in page and "url(" not in page.replace("data:", "")


def test_report_of_a_large_string(tmp_path: Path) -> None:
    import ragmeter

    big = "<script>window.__pwned = 7</script> " * 30_000  # about 1 MB
    result = ragmeter.evaluate(
        [{"question": "q?", "answer": big, "reference": "window pwned"}], ["token_f1"], None, out=tmp_path
    )
    page = render_report(result)
    assert len(page) > 1_000_000
    assert _embedded(page)["samples"][0]["answer"] == big


# ---------------------------------------------------------------- the command and the API


def test_report_command_writes_the_file(
    report_store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runner = CliRunner()
    target = tmp_path / "r.html"
    res = runner.invoke(cli, ["report", "report", "--out", str(report_store), "--html", str(target)])
    assert res.exit_code == 0, res.output
    assert res.stdout.strip() == str(target)
    assert _embedded(target.read_text(encoding="utf-8"))["run"]["run_id"] == "report-test"
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(cli, ["report", "latest", "--out", str(report_store)])
    assert res.exit_code == 0 and res.stdout.strip() == "ragmeter-report-report-test.html"
    assert (tmp_path / "ragmeter-report-report-test.html").is_file()


def test_report_command_errors(report_store: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(cli, ["report", "nope", "--out", str(report_store)])
    assert res.exit_code == 2 and "no run 'nope'" in res.stderr
    missing = tmp_path / "no-store"
    res = runner.invoke(cli, ["report", "latest", "--out", str(missing)])
    assert res.exit_code == 2 and "no run store in" in res.stderr
    assert not missing.exists()  # reading never creates a store


def test_result_to_html(report_result: Result, tmp_path: Path) -> None:
    path = report_result.to_html(tmp_path / "x.html")
    text = path.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and "长城有多长？" in text
    from ragmeter.errors import ConfigError

    with pytest.raises(ConfigError, match="is a directory"):
        report_result.to_html(tmp_path)


def test_in_memory_run_with_unusual_details(tmp_path: Path) -> None:
    """A run kept in memory (no store) whose custom metric records numpy values and a NaN."""
    import numpy as np

    import ragmeter
    from ragmeter import Metric, Score

    class Odd(Metric):
        name = "odd"
        requires = ("answer",)

        async def score(self, sample, judge):  # type: ignore[no-untyped-def]
            return Score(value=0.5, reason="odd", details={"vec": np.arange(3), "nan": float("nan")})

    result = ragmeter.evaluate([{"question": "q?", "answer": "a"}], [Odd()], None)
    assert result.store_dir is None
    data = _embedded(result.to_html(tmp_path / "odd.html").read_text(encoding="utf-8"))
    details = data["samples"][0]["scores"][0]["details"]
    assert details == {"vec": [0, 1, 2], "nan": "nan"}
    assert data["run"]["store"] is None


def test_browser_tests_say_why_they_skip(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import helpers.browser as hb

    monkeypatch.setattr(hb, "CHROMIUM", tmp_path / "no-chromium")
    reason = hb.missing_browser()
    assert reason is not None and "no-chromium is not installed" in reason and "apt-get install" in reason
