"""The HTML report in a real headless browser (Debian chromium + chromedriver, via Selenium)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from helpers.browser import Browser
from ragmeter import Result

ROW = "#rows .row"


@pytest.fixture
def page(report_result: Result, browser: Browser, tmp_path: Path) -> Browser:
    path = report_result.to_html(tmp_path / "report.html")
    browser.console_errors()  # drop what earlier pages logged
    browser.open(path.as_uri())
    return browser


def _rows(b: Browser) -> list[str]:
    return [r.get_attribute("data-idx") for r in b.driver.find_elements("css selector", ROW)]


def _safe(b: Browser) -> None:
    """No script from the data ran, nothing was fetched, nothing went wrong."""
    assert b.driver.execute_script("return window.__pwned") is None
    assert b.driver.title == "ragmeter report report-test"
    assert b.resources() == []
    assert b.console_errors() == []


def _set(b: Browser, css: str, value: str) -> None:
    """Type ``value`` into the input ``css`` (replacing its text) and let the page react."""
    b.driver.execute_script(
        "const e = document.querySelector(arguments[0]); e.value = arguments[1];"
        "e.dispatchEvent(new Event('input')); e.dispatchEvent(new Event('change'));",
        css,
        value,
    )
    b.driver.execute_script("return new Promise(function (r) { setTimeout(r, 250); })")


def test_loads_offline_with_every_sample(page: Browser, report_result: Result) -> None:
    _safe(page)
    d = page.driver
    assert len(_rows(page)) == report_result.n_samples == 6
    assert d.find_element("id", "count").text == "6 samples"
    cards = d.find_elements("css selector", "#cards .card")
    assert [c.get_attribute("data-metric") for c in cards] == report_result.metric_names
    assert len(d.find_elements("css selector", "#cards svg.hist")) == len(cards)
    assert "NoClaims" in cards[0].text and "JudgeOutputError" in cards[0].text
    assert "report-test" in d.find_element("id", "header").text
    skipped = d.find_element("id", "skipped")
    skipped.find_element("css selector", "summary").click()
    # the rows are filled on the details' "toggle" event, which the browser fires as a later task
    from selenium.webdriver.support.ui import WebDriverWait

    problems = WebDriverWait(d, 10).until(lambda drv: skipped.find_elements("css selector", "tbody tr"))
    assert len(problems) == 2 and all("reference" in p.text for p in problems)  # one sample lacks it
    # worst first: faithfulness ascending, then the invalid scores
    # (ties by position; invalid scores by kind: JudgeOutputError before NoClaims)
    assert _rows(page) == ["0", "1", "2", "5", "4", "3"]


def test_clicking_a_row_shows_claims_and_highlighted_evidence(page: Browser) -> None:
    d = page.driver
    d.find_element("css selector", ROW + '[data-idx="0"]').click()
    detail = d.find_element("id", "detail")
    assert detail.is_displayed()
    faith = detail.find_element("css selector", '.metric-block[data-metric="faithfulness"]')
    claims = faith.find_elements("css selector", "table.claims tr.claim")
    assert [c.find_elements("css selector", "td")[1].text for c in claims] == [
        "Paris is the capital of France.",
        "Paris has nine moons. hedged",  # the hedge is taken off the claim, and the claim is marked
    ]
    badge = claims[1].find_element("css selector", ".badge.hedged")
    assert badge.get_attribute("title") == "as written: I think Paris has nine moons."
    assert not claims[0].find_elements("css selector", ".badge.hedged")
    marks = claims[0].find_elements("css selector", "mark.evidence")
    assert [m.text for m in marks] == ["Paris is the capital and largest city of France."]
    assert "ev-sup" in marks[0].get_attribute("class")
    assert "not supported" in claims[1].text
    # the same sentence is marked inside the full context, and the needed sentences too
    ctx = detail.find_element("css selector", '.context[data-context="0"]')
    assert "Paris is the capital and largest city of France." in [
        m.text for m in ctx.find_elements("css selector", "mark")
    ]
    sentences = detail.find_elements(
        "css selector", '.metric-block[data-metric="context_relevance"] table.sentences tbody tr'
    )
    assert [[td.text for td in r.find_elements("css selector", "td")][:2] for r in sentences] == [
        ["1", "Paris is the capital and largest city of France."],
        ["1", "It lies on the Seine."],
        ["3", "Lyon is a city in France known for its food."],
    ]
    ranked = detail.find_elements(
        "css selector", '.metric-block[data-metric="context_precision"] table.contexts tbody tr'
    )
    assert "Lyon is a city" in ranked[1].text and "not useful" in ranked[1].text
    questions = detail.find_elements(
        "css selector", '.metric-block[data-metric="answer_relevance"] table.questions tbody tr'
    )
    assert len(questions) == 3
    usage = faith.find_element("css selector", ".usage").text
    assert re.fullmatch(r"2 request\(s\), \d+ prompt \+ \d+ completion tokens, \d+\.\d\d s", usage), usage
    _safe(page)


def test_keys_walk_the_table_in_its_order(page: Browser) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    d = page.driver
    d.find_element("css selector", ROW + '[data-idx="0"]').click()
    order = _rows(page)
    ActionChains(d).send_keys("j").perform()
    assert d.find_element("css selector", "#detail h2").text.startswith(f"sample {order[1]}")
    assert d.find_element("css selector", ROW + ".selected").get_attribute("data-idx") == order[1]
    ActionChains(d).send_keys("k").send_keys("k").perform()
    assert d.find_element("css selector", "#detail h2").text.startswith(f"sample {order[0]}")
    _safe(page)


def test_invalid_score_shows_the_raw_reply(page: Browser) -> None:
    d = page.driver
    d.find_element("css selector", ROW + '[data-idx="4"]').click()
    block = d.find_element("css selector", '#detail .metric-block[data-metric="faithfulness"]')
    assert "invalid (JudgeOutputError)" in block.text
    raw = block.find_element("css selector", "pre.raw")
    assert "<b>maybe</b> {not json" in raw.text
    assert block.find_elements("css selector", "b") == []
    _safe(page)


def test_filters(page: Browser) -> None:
    d = page.driver
    _set(page, "#q", "长城")
    assert _rows(page) == ["1"]
    assert d.find_element("id", "count").text == "1 of 6 samples"
    _set(page, "#q", "")
    assert len(_rows(page)) == 6
    _set(page, "#f-invalid", "any")
    assert sorted(_rows(page)) == ["3", "4"]
    _set(page, "#f-invalid", "0:NoClaims")
    assert _rows(page) == ["3"]
    _set(page, "#f-invalid", "")
    metric = str(
        ["faithfulness", "answer_relevance", "context_relevance", "context_precision", "token_f1"].index(
            "token_f1"
        )
    )
    _set(page, "#f-metric", metric)
    _set(page, "#f-min", "0.9")
    assert _rows(page) == ["1"]  # the only token_f1 of 1.0
    _set(page, "#f-min", "")
    assert len(_rows(page)) == 6
    # sorting by a column header: token_f1 ascending then descending
    header = d.find_element("css selector", '#table .head div[data-key="m4"]')
    header.click()
    first = _rows(page)[0]
    header.click()
    assert _rows(page)[0] == "1" and first != "1"
    _safe(page)


def test_hostile_sample_runs_no_script(page: Browser) -> None:
    d = page.driver
    d.find_element("css selector", ROW + '[data-idx="2"]').click()
    detail = d.find_element("id", "detail")
    text = detail.text
    assert "window.__pwned = 1; document.title = 'pwned';" in text
    assert '<img src=x onerror="window.__pwned = 3' in text
    assert "javascript:window.__pwned = 4" in text
    for tag in ("script", "img", "a", "svg", "iframe"):
        assert detail.find_elements("css selector", tag) == [], tag
    # every other way in: the search box, the hash
    _set(page, "#q", "<script>")
    assert _rows(page) == ["2"]
    _safe(page)


def test_one_megabyte_of_markup_is_text(browser: Browser, tmp_path: Path) -> None:
    import ragmeter

    big = "<script>window.__pwned = 7</script><img src=x onerror=window.__pwned=8> " * 14_000
    result = ragmeter.evaluate(
        [{"id": "big", "question": "q?", "answer": big, "reference": "pwned"}],
        ["token_f1"],
        None,
        out=tmp_path / "runs",
        run_id="big",
    )
    path = result.to_html(tmp_path / "big.html")
    browser.console_errors()
    browser.open(path.as_uri() + "#sample-0")  # opens with the sample shown
    d = browser.driver
    answer = d.execute_script("return document.querySelectorAll('#detail .text')[1].textContent")
    assert answer == big
    assert d.execute_script("return window.__pwned") is None
    assert d.find_elements("css selector", "#detail img, #detail script") == []
    assert browser.resources() == [] and browser.console_errors() == []


def test_local_judge_details_and_repeated_judging(browser: Browser, tmp_path: Path) -> None:
    """The local judge's information needs, and a metric judged twice (--samples 2)."""
    import ragmeter
    from ragmeter.metrics.registry import get_metric
    from ragmeter.metrics.repeat import Repeated

    rows = [
        {
            "id": "tower",
            "question": "When was the Eiffel Tower built?",
            "contexts": ["The Eiffel Tower was built between 1887 and 1889. It is in Paris."],
            "answer": "The Eiffel Tower was built between 1887 and 1889.",
        }
    ]
    metrics = [Repeated(get_metric("faithfulness"), 2), get_metric("answer_relevance")]
    result = ragmeter.evaluate(rows, metrics, None, out=tmp_path / "runs", run_id="local")
    path = result.to_html(tmp_path / "local.html")
    browser.console_errors()
    browser.open(path.as_uri() + "#sample-0")
    d = browser.driver
    faith = d.find_element("css selector", '#detail .metric-block[data-metric="faithfulness"]')
    assert faith.find_element("css selector", ".repeats").text.startswith("judged 2 times: ")
    marks = faith.find_elements("css selector", "table.claims mark.evidence")
    assert [m.text for m in marks] == ["The Eiffel Tower was built between 1887 and 1889."]
    needs = d.find_elements(
        "css selector", '#detail .metric-block[data-metric="answer_relevance"] table.needs tbody tr'
    )
    assert needs and "Eiffel Tower" in needs[0].text
    assert browser.console_errors() == [] and browser.resources() == []


def test_column_names_wrap_instead_of_being_cut(page: Browser, report_result: Result) -> None:
    """Every metric's column name is whole on the page (it wraps at its underscores when the column
    is narrow), not cut with an ellipsis."""
    d = page.driver
    heads = d.find_elements("css selector", "#table .head div[data-key^='m']")
    assert len(heads) == len(report_result.metric_names)
    for head, name in zip(heads, report_result.metric_names, strict=True):
        assert head.text.replace("\u200b", "").replace("\n", "") == name
        assert d.execute_script("return arguments[0].scrollWidth <= arguments[0].clientWidth + 1", head), name


def test_chinese_is_drawn_with_a_cjk_font(page: Browser) -> None:
    """The page's font list names the CJK fonts machines have, and where Debian's fonts-wqy-microhei
    is installed (.ci/run installs it) the browser has it for Chinese text: no boxes."""
    if not Path("/usr/share/fonts/truetype/wqy/wqy-microhei.ttc").exists():
        pytest.skip("fonts-wqy-microhei is not installed (.ci/run installs it)")
    d = page.driver
    family = d.execute_script("return getComputedStyle(document.body).fontFamily")
    for font in ("Noto Sans CJK SC", "Source Han Sans SC", "PingFang SC", "Microsoft YaHei", "WenQuanYi Micro Hei"):
        assert font in family
    assert d.execute_script(
        "return document.fonts.load('14px \"WenQuanYi Micro Hei\"', '长城').then(f => f.length > 0 || "
        "document.fonts.check('14px \"WenQuanYi Micro Hei\"', '长城'))"
    )
    # drawn: the glyphs of two different ideographs differ in a canvas rendered with the page's font
    differ = d.execute_script(
        "const c = document.createElement('canvas'); c.width = 40; c.height = 20; const x = c.getContext('2d');"
        "x.font = '16px ' + getComputedStyle(document.body).fontFamily;"
        "x.fillText('长', 0, 16); const a = x.getImageData(0, 0, 20, 20).data.join();"
        "x.clearRect(0, 0, 40, 20); x.fillText('城', 0, 16); const b = x.getImageData(0, 0, 20, 20).data.join();"
        "return a !== b"
    )
    assert differ


def test_a_local_judge_run_shows_no_usage(browser: Browser, tmp_path: Path) -> None:
    """A run that sent no request (the local judge's): no usage line in the header and none under
    the metric cards."""
    from ragmeter import evaluate

    rows = [{"question": "Q?", "contexts": ["Paris is the capital of France."], "answer": "Paris is the capital of France."}]
    path = evaluate(rows, ["faithfulness"]).to_html(tmp_path / "local.html")
    browser.open(path.as_uri())
    d = browser.driver
    assert "faithfulness" in d.find_element("id", "cards").text
    assert "requests" not in d.find_element("id", "header").text
    assert "requests" not in d.find_element("id", "cards").text
