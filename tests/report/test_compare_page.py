"""compare --html: one self-contained page with A and B side by side, data as text, in a real browser."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import ragmeter
from helpers.browser import Browser
from helpers.report_runs import HOSTILE
from ragmeter.cli.main import cli
from ragmeter.errors import ConfigError
from ragmeter.report.compare_html import comparison_data, render_comparison, write_comparison
from ragmeter.report.comparison import Comparison, compare_runs

METRICS = ["faithfulness", "token_f1"]
CONTEXT = "The Great Wall of China was built over many centuries; most of what stands today dates from the Ming dynasty."


def _rows() -> list[dict[str, Any]]:
    rows = [
        {
            "id": f"s{i}",
            "question": f"When was the Great Wall built? ({i})",
            "contexts": [CONTEXT],
            "answer": "Most of the Great Wall that stands today dates from the Ming dynasty.",
            "reference": "Over many centuries; most of it in the Ming dynasty.",
        }
        for i in range(5)
    ]
    rows[0]["question"] = "长城是什么时候修建的？"
    return rows


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Run A; run B with hostile, unfaithful answers and one sample less and one more."""
    out = tmp_path_factory.mktemp("compare-page")
    rows = _rows()
    a = ragmeter.evaluate(rows, METRICS, None, out=out)
    hostile = [
        dict(r, answer=h + " The wall was finished in 2001 by a private company.")
        for r, h in zip(rows, HOSTILE[: len(rows)], strict=True)
    ]
    extra = dict(rows[1], id="extra", question="An extra question only B asked?")
    b = ragmeter.evaluate([*hostile[1:], extra], METRICS, None, out=out)
    return {"out": out, "a": a.run_id, "b": b.run_id}


@pytest.fixture(scope="module")
def comparison(store: dict[str, Any]) -> Comparison:
    return compare_runs(store["a"], store["b"], store=store["out"])


def _embedded(page: str) -> Any:
    m = re.search(r'<script type="application/json" id="ragmeter-data">(.*?)</script>', page, flags=re.S)
    assert m is not None
    return json.loads(m.group(1))


def test_page_embeds_the_comparison_as_escaped_json(comparison: Comparison) -> None:
    page = render_comparison(comparison, margin=0.02)
    data = _embedded(page)
    assert data == json.loads(
        json.dumps(comparison_data(comparison, 0.02) | {"generated_at": data["generated_at"]})
    )
    assert data["kind"] == "compare" and data["metric_names"] == METRICS
    assert data["comparison"]["n_matched"] == 4 and "faithfulness" in data["comparison"]["regressions"]
    assert [o["key"] for o in data["only_a"]] == ["id:s0"] and [o["key"] for o in data["only_b"]] == [
        "id:extra"
    ]
    pair = data["pairs"][0]
    assert pair["a"]["answer"].startswith("Most of the Great Wall") and pair["b"]["answer"].startswith(
        "</script>"
    )
    assert [j is not None for j in pair["b"]["scores"]] == [True, True]
    assert pair["a"]["contexts"] == [CONTEXT] and pair["b"]["contexts"] is None  # same as A's: sent once
    # hostile text never appears raw in the document: only the page's own two script elements exist
    assert page.count("<script") == 2 and page.count("</script>") == 2
    assert "onerror=" not in page.replace("\\u003cimg src=x onerror=", "")
    assert 'http-equiv="Content-Security-Policy"' in page and "default-src &#x27;none&#x27;" in page


def test_write_and_cli(comparison: Comparison, store: dict[str, Any], tmp_path: Path) -> None:
    path = write_comparison(comparison, tmp_path / "c.html")
    assert path.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    with pytest.raises(ConfigError, match="is a directory"):
        write_comparison(comparison, tmp_path)
    target = tmp_path / "cli.html"
    res = CliRunner().invoke(
        cli, ["compare", store["a"], store["b"], "--out", str(store["out"]), "--json", "--html", str(target)]
    )
    assert res.exit_code == 0, res.stderr
    assert json.loads(res.stdout)["n_matched"] == 4  # stdout stays one JSON object
    assert f"comparison page written to {target}" in res.stderr and target.exists()
    res = CliRunner().invoke(cli, ["compare", "a", "b", "--out", str(tmp_path / "nothing-here")])
    assert res.exit_code == 2 and "no run store" in res.stderr and not (tmp_path / "nothing-here").exists()


@pytest.fixture
def page(comparison: Comparison, browser: Browser, tmp_path: Path) -> Browser:
    path = write_comparison(comparison, tmp_path / "compare.html", margin=0.02)
    browser.console_errors()
    browser.open(path.as_uri())
    return browser


def _safe(b: Browser, comparison: Comparison) -> None:
    assert b.driver.execute_script("return window.__pwned") is None
    assert b.driver.title == f"ragmeter compare {comparison.run_a} {comparison.run_b}"
    assert b.resources() == []
    assert b.console_errors() == []


def _keys(b: Browser) -> list[str]:
    return [r.get_attribute("data-key") for r in b.driver.find_elements("css selector", "#rows .row")]


def test_browser_shows_metrics_warning_and_rows(page: Browser, comparison: Comparison) -> None:
    d = page.driver
    _safe(page, comparison)
    assert len(_keys(page)) == comparison.n_matched == 4
    assert d.find_element("id", "count").text == "4 matched samples"
    rows = d.find_elements("css selector", "#metrics tbody tr")
    assert [r.get_attribute("data-metric") for r in rows] == METRICS
    assert "worse" in rows[0].text
    warning = d.find_element("id", "not-comparable")
    assert "NOT COMPARABLE" in warning.text and "different evaluation sets" in warning.text
    assert "4 matched samples, 1 only in A, 1 only in B" in d.find_element("id", "counts").text


def test_browser_side_by_side_with_hostile_text_as_text(page: Browser, comparison: Comparison) -> None:
    d = page.driver
    for key in _keys(page):
        d.find_element("css selector", f'#rows .row[data-key="{key}"]').click()
        detail = d.find_element("id", "detail")
        a, b = (detail.find_element("css selector", f'.side[data-side="{s}"]') for s in "AB")
        assert "Most of the Great Wall" in a.text
        answer_b = b.find_element("css selector", ".text").text
        assert any(answer_b.startswith(h.strip()[:20]) for h in HOSTILE), answer_b
        claims = b.find_elements(
            "css selector", '.metric-block[data-metric="faithfulness"] table.claims tr.claim'
        )
        assert claims and "not supported" in b.text
        for side in (a, b):  # B shows A's contexts, which the data carries once
            assert [c.text for c in side.find_elements("css selector", ".context")] == [CONTEXT]
        assert detail.find_elements("css selector", "img, svg, a[href^='javascript'], script") == []
    _safe(page, comparison)


def test_browser_filters(page: Browser, comparison: Comparison) -> None:
    d = page.driver

    def choose(css: str, value: str) -> None:
        d.execute_script(
            "const e = document.querySelector(arguments[0]); e.value = arguments[1];"
            "e.dispatchEvent(new Event('change'));",
            css,
            value,
        )

    worst_first = _keys(page)
    gains = {m.key: m.diff for m in comparison.metrics["faithfulness"].worsened}
    assert worst_first[0] == min(gains, key=lambda k: gains[k])
    choose("#f-show", "better")
    assert _keys(page) == []
    choose("#f-show", "worse")
    assert sorted(_keys(page)) == sorted(k for k, _, _ in comparison.pairs)
    choose("#f-dir", "-1")
    assert _keys(page) == list(reversed(worst_first))
    d.execute_script(
        "const e = document.querySelector('#q'); e.value = arguments[0]; e.dispatchEvent(new Event('input'));",
        "s3",
    )
    d.execute_script("return new Promise(function (r) { setTimeout(r, 300); })")
    assert _keys(page) == ["id:s3"]
    _safe(page, comparison)


@pytest.fixture(scope="module")
def hedged(store: dict[str, Any]) -> Comparison:
    """A against B2: the same answers, two of them turned into "I don't know." (unscorable)."""
    rows = _rows()
    for i in (1, 3):
        rows[i] = dict(rows[i], answer="I don't know.")
    b = ragmeter.evaluate(rows, METRICS, None, out=store["out"])
    return compare_runs(store["a"], b.run_id, store=store["out"])


def test_browser_shows_newly_invalid_samples_as_a_regression(
    hedged: Comparison, browser: Browser, tmp_path: Path
) -> None:
    m = hedged.metrics["faithfulness"]
    assert m.n_new_invalid == 2 and m.verdict() == "worse"
    browser.console_errors()
    browser.open(write_comparison(hedged, tmp_path / "hedged.html").as_uri())
    d = browser.driver
    row = d.find_element("css selector", '#metrics tbody tr[data-metric="faithfulness"]')
    assert row.find_element("css selector", '[data-col="new-invalid"]').text == "2 / 0"
    verdict = row.find_element("css selector", '[data-col="verdict"] .badge')
    assert verdict.text == "worse" and "2 sample(s) valid in A have no valid score in B" in verdict.get_attribute("title")
    d.execute_script(
        "const e = document.querySelector('#f-show'); e.value = 'new-invalid'; e.dispatchEvent(new Event('change'));"
    )
    assert sorted(_keys(browser)) == ["id:s1", "id:s3"]
    cell = d.find_element("css selector", '#rows .row[data-key="id:s1"] .num.bad')
    assert "NoClaims" in cell.text
    assert browser.console_errors() == []
    # with the two allowed, the pairs decide: nothing changed there
    browser.open(write_comparison(hedged, tmp_path / "allowed.html", max_new_invalid=2).as_uri())
    row = browser.driver.find_element("css selector", '#metrics tbody tr[data-metric="faithfulness"]')
    assert row.find_element("css selector", '[data-col="verdict"]').text == "no clear change"
