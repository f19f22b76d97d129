"""The report's calibrated estimates and its agreement section in headless Chromium: drawn from
the run's labels, hostile ids stay text, a disagreement opens its sample; the viewer's page
changes when a label is added."""

from __future__ import annotations

import re
from pathlib import Path

from helpers.browser import Browser
from ragmeter import Result, evaluate
from ragmeter.log import Label, RunStore
from ragmeter.report.server import ViewApp

HOSTILE = '<img src=x onerror="window.__pwned=1">'


def _labelled_run(out: Path) -> Result:
    rows = [
        {"id": (HOSTILE if i == 4 else f"s{i}"), "question": f"question {i}?", "reference": f"the answer {i}",
         "answer": f"the answer {i}" if i % 4 else "长城 something else"}
        for i in range(24)
    ]  # fmt: skip
    r = evaluate(rows, ["token_f1"], None, out=out)
    with RunStore(out) as store:
        order = store.label_draw(r.run_id).order
        # label 1 when the answer is right, but call sample 4 (the hostile id) right when it is not
        store.put_labels(
            r.run_id,
            [Label(i, "token_f1", 1.0 if (i % 4 or i == 4) else 0.0, drawn="random") for i in order[:20]],
        )
        if 4 not in order[:20]:
            store.put_label(r.run_id, 4, "token_f1", 1, drawn="picked")
    return Result.from_store(out, r.run_id)


def test_calibrated_card_and_agreement_section(browser: Browser, tmp_path: Path) -> None:
    r = _labelled_run(tmp_path / "runs")
    path = r.to_html(tmp_path / "report.html")
    browser.console_errors()
    browser.open(path.as_uri())
    d = browser.driver
    card = d.find_element("css selector", "#cards .card .calibrated")
    assert "calibrated to people's labels" in card.text and "20 random labels" in card.text
    assert "not how far the judge is from what people would say" in d.find_element("id", "judge-ci-note").text
    section = d.find_element("id", "agreement")
    assert "agreement with your labels" in section.text and "kappa" in section.text
    assert "judge passes" in section.text
    section.find_element("css selector", "details.disagreements summary").click()
    buttons = section.find_elements("css selector", "details.disagreements button")
    assert HOSTILE in [b.text for b in buttons]  # the id is shown as text, not markup
    assert d.execute_script("return window.__pwned") is None
    target = next(b for b in buttons if b.text == HOSTILE)
    target.click()
    assert d.find_element("css selector", "#detail h2").text.startswith("sample 4")
    assert browser.console_errors() == [] and browser.resources() == []


def test_the_viewer_page_follows_new_labels(tmp_path: Path) -> None:
    r = _labelled_run(tmp_path / "runs")
    app = ViewApp(tmp_path / "runs")
    first = app.respond(f"/run/{r.run_id}")[2]
    assert first == app.respond(f"/run/{r.run_id}")[2]  # a finished run's page is cached
    with RunStore(tmp_path / "runs") as store:
        order = store.label_draw(r.run_id).order
        store.put_label(r.run_id, order[20], "token_f1", 1, drawn="random")
    second = app.respond(f"/run/{r.run_id}")[2]
    assert second != first and re.search(r'"n_labels":\s*21', second)


def test_the_comparison_page_shows_the_calibrated_difference(browser: Browser, tmp_path: Path) -> None:
    from ragmeter.report.compare_html import render_comparison
    from ragmeter.report.comparison import compare_runs

    a = _labelled_run(tmp_path / "runs")
    b = _labelled_run(tmp_path / "runs")
    page = tmp_path / "compare.html"
    page.write_text(
        render_comparison(compare_runs(a.run_id, b.run_id, store=tmp_path / "runs")), encoding="utf-8"
    )
    browser.console_errors()
    browser.open(page.as_uri())
    text = browser.driver.find_element("id", "calibrated").text
    assert (
        "token_f1 calibrated to people's labels: B \u2212 A" in text
        and "20 pairs labelled in both runs" in text
    )
    assert "on the judge's scale" in browser.driver.find_element("id", "app").text
    assert browser.console_errors() == []
