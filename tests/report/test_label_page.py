"""The labelling page of ``ragmeter view``: its HTTP endpoints (the page, one sample as JSON, the
label writes and their guards) and the page itself in headless Chromium (keyboard labelling,
blind mode, undo, skip, hostile text, Chinese)."""

from __future__ import annotations

import json
import re
import shutil
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import ragmeter
from helpers.browser import Browser
from ragmeter import Metric, Score
from ragmeter.log import Label, RunStore
from ragmeter.report.page import DATA_ELEMENT_ID
from ragmeter.report.server import TOKEN_HEADER, ViewApp, ViewServer

RUN = "report-test"
FAITH = "Is everything the answer states supported by the contexts?"
LONG_CONTEXT = "长城是古代中国的防御工程。" * 250  # 3,250 characters: folded on the page


def _zh_rows() -> list[dict[str, Any]]:
    return [
        {
            "id": "长城",
            "question": "长城有多长？",
            "contexts": [LONG_CONTEXT, "故宫位于北京。"],
            "answer": "长城全长约两万一千公里。",
            "reference": "长城全长约两万一千公里。",
        },
        {
            "id": "故宫",
            "question": "故宫在哪里？",
            "contexts": ["故宫位于北京市中心。"],
            "answer": "故宫在北京。",
            "reference": "故宫位于北京。",
        },
        {
            "id": "黄河",
            "question": "黄河流入哪个海？",
            "contexts": ["黄河注入渤海。"],
            "answer": "黄河流入渤海。",
            "reference": "黄河注入渤海。",
        },
    ]


@pytest.fixture(scope="module")
def label_store(report_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report run (LLM judge: hostile text, Chinese, an invalid score, a sample without a
    reference) plus a Chinese run scored offline."""
    store = tmp_path_factory.mktemp("label") / "runs"
    shutil.copytree(report_store, store)
    ragmeter.evaluate(_zh_rows(), ["token_f1"], None, out=store, run_id="zh")
    ragmeter.evaluate(_big_rows(), ["token_f1"], None, out=store, run_id="big")
    examples = Path(__file__).resolve().parents[2] / "examples" / "conversations.jsonl"
    ragmeter.evaluate(str(examples), [Whole(), "token_f1"], None, out=store, run_id="conv", progress=False)
    return store


class Whole(Metric):
    """A per-conversation metric of the test's own (every conversation scores 0.8)."""

    name = "whole"
    level = "conversation"
    requires = ("messages",)

    async def score(self, sample: Any, judge: Any) -> Score:
        return Score(0.8, "whole")


def _big_rows() -> list[dict[str, Any]]:
    """40 samples whose token F1 is high for some and low for others."""
    return [
        {
            "id": f"q{i}",
            "question": f"How many apples are in basket {i}?",
            "contexts": [f"Basket {i} holds {i} apples."],
            "answer": f"Basket {i} holds {i} apples." if i % 3 else "I am not sure about that basket.",
            "reference": f"Basket {i} holds {i} apples.",
        }
        for i in range(40)
    ]


@pytest.fixture(scope="module")
def server(label_store: Path) -> Iterator[ViewServer]:
    srv = ViewServer(label_store, port=0)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join(10)


@pytest.fixture(autouse=True)
def no_labels(label_store: Path) -> None:
    """Each test starts from a store without labels."""
    with RunStore(label_store) as store:
        for run in (RUN, "zh", "big", "conv"):
            for lab in store.list_labels(run):
                store.delete_label(run, lab.idx, lab.metric)


def _labels(server: ViewServer, run: str = RUN, metric: str = "faithfulness") -> list[Label]:
    with RunStore(server.app.store_dir) as store:
        return store.list_labels(run, metric)


def _order(server: ViewServer, metric: str = "faithfulness", run: str = RUN) -> tuple[int, ...]:
    with RunStore(server.app.store_dir) as store:
        return store.draw_progress(run, metric).order


def _request(
    url: str, method: str = "GET", body: bytes | None = None, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], str]:
    req = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:  # loopback only
            return r.status, dict(r.headers), r.read().decode("utf-8")
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read().decode("utf-8")


def _post(
    server: ViewServer, body: dict[str, Any], token: str | None = "ok", run: str = RUN, **headers: str
) -> tuple[int, dict[str, Any]]:
    h = {"Content-Type": "application/json", **{k.replace("_", "-"): v for k, v in headers.items()}}
    if token is not None:
        h[TOKEN_HEADER] = str(server.token) if token == "ok" else token
    status, _, text = _request(
        server.url + f"run/{run}/label", "POST", json.dumps({"page": "p1", **body}).encode(), h
    )
    return status, json.loads(text) if text.startswith("{") else {"text": text}


def _label(
    server: ViewServer, idx: int, value: float = 1, mode: str = "draw", **extra: Any
) -> dict[str, Any]:
    status, data = _post(
        server,
        {"action": "label", "metric": "faithfulness", "idx": idx, "value": value, "mode": mode, **extra},
    )
    assert status == 200, data
    return data


def _page_data(body: str) -> dict[str, Any]:
    m = re.search(rf'<script type="application/json" id="{DATA_ELEMENT_ID}">(.*?)</script>', body, re.S)
    assert m is not None
    return json.loads(m.group(1))


def _sample(
    server: ViewServer, idx: int | None = None, blind: bool = True, metric: str = "faithfulness"
) -> dict:
    q = f"run/{RUN}/label/sample?metric={metric}&blind={int(blind)}" + ("" if idx is None else f"&idx={idx}")
    status, headers, text = _request(server.url + q)
    assert status == 200 and headers["Content-Type"] == "application/json; charset=utf-8", text
    return json.loads(text)


# ---------------------------------------------------------------------------------------------- HTTP


def test_binds_to_loopback_and_makes_a_token(server: ViewServer) -> None:
    assert server.server_address[0] == "127.0.0.1"
    assert server.token and len(server.token) >= 32
    other = ViewServer(server.app.store_dir, port=0)
    try:
        assert other.token and other.token != server.token  # one per start
    finally:
        other.server_close()


def test_the_page_carries_the_first_sample_of_the_draw(server: ViewServer) -> None:
    status, headers, body = _request(server.url + f"run/{RUN}/label?metric=faithfulness")
    assert status == 200
    csp = headers["Content-Security-Policy"]
    assert "default-src 'none'" in csp and "connect-src 'self'" in csp
    assert '<html lang="en">' in body
    data = _page_data(body)
    assert data["kind"] == "label" and data["token"] == server.token
    assert data["metric"]["name"] == "faithfulness" and data["metric"]["question"] == FAITH
    assert [m["name"] for m in data["metrics"]] == ragmeter.Result.from_store(
        server.app.store_dir, RUN
    ).metric_names
    start = data["start"]
    order = _order(server)
    assert start["sample"]["idx"] == order[0] and start["sample"]["position"] == 1
    assert start["progress"]["n_draw"] == len(order) == 6 and start["progress"]["n_prefix"] == 0
    assert start["progress"]["needed"]["n_needed"] == 97  # no label yet: the worst case p = 1/2
    assert data["mode"] == "draw" and data["blind"] is True
    # the report links here per metric (only as served by the viewer)
    report = _page_data(_request(server.url + f"run/{RUN}")[2])
    assert report["label_page"] == f"/run/{RUN}/label"
    runs = _request(server.url)[2]
    assert "label" in runs  # runs.js links each metric's labelling page


def test_the_question_per_metric_and_language(server: ViewServer) -> None:
    data = _page_data(_request(server.url + f"run/{RUN}/label?metric=answer_relevance&lang=zh")[2])
    assert data["lang"] == "zh" and data["metric"]["question"] == "回答是否回应了所提的问题？"
    assert data["metric"]["term"] == "答案相关性" and data["texts"]["yes"] == "是"
    zh = _request(server.url + "run/zh/label")[2]  # no metric: the run's first; no lang: the data's
    assert '<html lang="zh">' in zh
    assert _page_data(zh)["metric"]["name"] == "token_f1"
    status, _, body = _request(server.url + f"run/{RUN}/label?metric=nope")
    assert status == 404 and "no metric 'nope'" in body
    assert _request(server.url + f"run/{RUN}/label?metric=faithfulness&lang=fr")[0] == 400
    assert _request(server.url + "run/nope/label?metric=faithfulness")[0] == 404


def test_blind_sample_json_hides_the_score_until_labelled(server: ViewServer) -> None:
    first = _order(server)[0]
    s = _sample(server, first)["sample"]
    assert s["score_hidden"] is True and s["score"] is None and s["label"] is None
    shown = _sample(server, first, blind=False)["sample"]
    assert shown["score_hidden"] is False and isinstance(shown["score"]["value"], float)
    _label(server, first, 1)
    s = _sample(server, first)["sample"]
    assert s["score_hidden"] is False and s["score"] == shown["score"]
    assert s["label"]["value"] == 1.0 and s["label"]["drawn"] == "random"


def test_a_label_is_stored_at_once_and_the_walk_goes_on(server: ViewServer) -> None:
    order = _order(server)
    data = _label(server, order[0], 1, labeller="ann")
    assert data["label"]["drawn"] == "random" and data["label"]["labeller"] == "ann"
    assert data["replaced"] is None and data["next_unlabelled"] == order[1]
    assert data["progress"]["n_prefix"] == 1
    assert [(lab.idx, lab.value, lab.drawn, lab.labeller) for lab in _labels(server)] == [
        (order[0], 1.0, "random", "ann")
    ]
    again = _label(server, order[0], 0.5)
    assert again["replaced"]["value"] == 1.0 and again["label"]["label_kind"] == "graded"
    assert [lab.value for lab in _labels(server)] == [0.5]


def test_out_of_order_is_picked_except_the_draws_next(server: ViewServer) -> None:
    order = _order(server)
    assert _label(server, order[3], 1, mode="pick")["label"]["drawn"] == "picked"
    assert _label(server, order[0], 1, mode="pick")["label"]["drawn"] == "random"  # the draw's next
    _label(server, order[1], 0)  # along the draw
    assert _label(server, order[1], 1, mode="pick")["label"]["drawn"] == "random"  # stays random
    drawn = {lab.idx: lab.drawn for lab in _labels(server)}
    assert drawn == {order[0]: "random", order[1]: "random", order[3]: "picked"}
    progress = _sample(server)["progress"]
    assert progress["n_prefix"] == 2 and progress["n_picked"] == 1 and progress["next_idx"] == order[2]


def test_a_skip_holds_later_labels_back(server: ViewServer) -> None:
    order = _order(server)
    data = _label(server, order[1], 1)  # order[0] skipped
    p = data["progress"]
    assert (p["n_prefix"], p["n_held_back"], p["skipped"], p["first_skipped"]) == (0, 1, [order[0]], order[0])
    assert data["next_unlabelled"] == order[2]
    p = _label(server, order[0], 0)["progress"]  # labelling it releases the one behind it
    assert (p["n_prefix"], p["n_held_back"], p["next_idx"]) == (2, 0, order[2])


def test_undo_restores_what_was_there(server: ViewServer) -> None:
    order = _order(server)
    _label(server, order[0], 1, page="undo")
    _label(server, order[0], 0, page="undo")
    status, data = _post(server, {"action": "undo", "metric": "faithfulness", "page": "undo"})
    assert status == 200 and data["undone"]["idx"] == order[0] and data["undone"]["label"]["value"] == 1.0
    assert [lab.value for lab in _labels(server)] == [1.0]
    status, data = _post(server, {"action": "undo", "metric": "faithfulness", "page": "undo"})
    assert data["undone"]["label"] is None and _labels(server) == []
    status, data = _post(server, {"action": "undo", "metric": "faithfulness", "page": "undo"})
    assert status == 200 and data["undone"] is None  # nothing left to undo
    # another page's undo is its own; a label changed since is not undone
    _label(server, order[0], 1, page="undo")
    status, data = _post(server, {"action": "undo", "metric": "faithfulness", "page": "other"})
    assert data["undone"] is None and len(_labels(server)) == 1
    with RunStore(server.app.store_dir) as store:
        store.put_label(RUN, order[0], "faithfulness", 0, drawn="random")
    status, data = _post(server, {"action": "undo", "metric": "faithfulness", "page": "undo"})
    assert status == 409 and "changed" in data["error"]
    assert [lab.value for lab in _labels(server)] == [0.0]


@pytest.mark.parametrize(
    ("body", "status", "words"),
    [
        ({"value": 0.3}, 400, "value must be 1, 0.5 or 0"),
        ({"value": True}, 400, "value must be"),
        ({"mode": "other"}, 400, "mode must be"),
        ({"idx": 99}, 400, "no sample 99"),
        ({"idx": "x"}, 400, "sample index"),
        ({"metric": "nope"}, 404, "no metric 'nope'"),
        ({"metric": "context_precision", "idx": 5}, 400, "no score for context_precision"),
        ({"action": "delete"}, 400, "action must be"),
        ({"labeller": 3}, 400, "labeller must be text"),
    ],
)
def test_bad_writes_are_refused_and_store_nothing(
    server: ViewServer, body: dict[str, Any], status: int, words: str
) -> None:
    full = {"action": "label", "metric": "faithfulness", "idx": _order(server)[0], "value": 1, **body}
    got, data = _post(server, full)
    assert got == status and words in data["error"]
    assert _labels(server) == [] and _labels(server, metric="context_precision") == []


@pytest.mark.parametrize(
    ("token", "headers", "status"),
    [
        (None, {}, 403),  # no token
        ("wrong", {}, 403),
        ("ok", {"Origin": "http://evil.example"}, 403),  # another site's page
        ("ok", {"Sec-Fetch-Site": "cross-site"}, 403),
        ("ok", {"Host": "evil.example"}, 403),  # DNS rebinding
        ("ok", {"Content-Type": "text/plain"}, 415),  # what a plain form could send
    ],
)
def test_writes_need_the_token_and_this_origin(
    server: ViewServer, token: str | None, headers: dict[str, str], status: int
) -> None:
    body = {"action": "label", "metric": "faithfulness", "idx": _order(server)[0], "value": 1}
    got, data = _post(server, body, token=token, **headers)
    assert got == status, data
    assert _labels(server) == []


def test_writes_from_the_servers_own_origin_pass(server: ViewServer) -> None:
    port = server.server_address[1]
    for origin in (f"http://127.0.0.1:{port}", f"http://localhost:{port}"):
        body = {"action": "label", "metric": "faithfulness", "idx": _order(server)[0], "value": 1}
        got, _ = _post(server, body, Origin=origin, Sec_Fetch_Site="same-origin")
        assert got == 200, origin
    assert (
        _post(server, {"action": "undo", "metric": "faithfulness"}, Origin=f"http://127.0.0.1:{port + 1}")[0]
        == 403
    )


def test_oversized_or_malformed_bodies(server: ViewServer) -> None:
    h = {"Content-Type": "application/json", TOKEN_HEADER: str(server.token)}
    big = json.dumps({"action": "label", "pad": "x" * 70_000}).encode()
    assert _request(server.url + f"run/{RUN}/label", "POST", big, h)[0] == 413
    assert _request(server.url + f"run/{RUN}/label", "POST", b"{not json", h)[0] == 400
    assert _request(server.url + f"run/{RUN}/label", "POST", b"[1]", h)[0] == 400
    assert _request(server.url, "POST", b"{}", h)[0] == 405  # the only write is a label
    assert _labels(server) == []


def test_a_server_on_another_address_takes_no_labels(label_store: Path) -> None:
    """Bound to an address that is not one of the loopback names (127.0.0.2 here), the page is
    read-only: no token is made and every write is refused."""
    srv = ViewServer(label_store, host="127.0.0.2", port=0)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        assert srv.token is None
        data = _page_data(_request(srv.url + f"run/{RUN}/label?metric=faithfulness")[2])
        assert data["token"] is None
        body = json.dumps({"action": "label", "metric": "faithfulness", "idx": 0, "value": 1, "page": "p"})
        h = {"Content-Type": "application/json", TOKEN_HEADER: "anything"}
        assert _request(srv.url + f"run/{RUN}/label", "POST", body.encode(), h)[0] == 403
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join(10)
    assert ViewApp(label_store).respond_post(f"/run/{RUN}/label", b"{}")[0] == 403
    with RunStore(label_store) as store:
        assert store.list_labels(RUN) == []


# ---------------------------------------------------------------------------------------------- browser


def _open(b: Browser, server: ViewServer, query: str, run: str = RUN) -> None:
    b.console_errors()
    b.open(server.url + f"run/{run}/label?{query}")


def _wait_idle(b: Browser) -> None:
    """Wait until the page has carried out every action asked of it (its requests answered)."""
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(b.driver, 30).until(
        lambda d: d.execute_script("return document.documentElement.dataset.pending") == "0"
    )


def _press(b: Browser, *keys: str) -> None:
    """Press each key and wait until the page has carried it out."""
    from selenium.webdriver.common.action_chains import ActionChains

    for k in keys:
        ActionChains(b.driver).send_keys(k).perform()
        _wait_idle(b)


def _text(b: Browser, element_id: str) -> str:
    return str(b.driver.find_element("id", element_id).text)


def _shown(b: Browser) -> int:
    return int(b.driver.find_element("id", "sample").get_attribute("data-idx"))


def _clean(b: Browser, server: ViewServer) -> None:
    """No script from the data ran, nothing went wrong, nothing was fetched from elsewhere."""
    assert b.driver.execute_script("return window.__pwned") is None
    assert "pwned" not in b.driver.title
    assert b.console_errors() == []
    assert all(url.startswith(server.url) for url in b.resources())


def test_label_by_keyboard_and_reload(server: ViewServer, browser: Browser) -> None:
    from selenium.webdriver.common.keys import Keys

    order = _order(server)
    _open(browser, server, "metric=faithfulness")
    assert _text(browser, "ask") == FAITH
    assert _shown(browser) == order[0] and "1 of 6 in the draw" in _text(browser, "position")
    assert (
        _text(browser, "progress-line")
        == "0 labelled; ±0.10 would take about 97 labels, more than the 6 samples of the draw"
    )
    _press(browser, "1")
    assert _shown(browser) == order[1]
    _press(browser, "0", "h")
    assert {lab.idx: (lab.value, lab.drawn) for lab in _labels(server)} == {
        order[0]: (1.0, "random"),
        order[1]: (0.0, "random"),
        order[2]: (0.5, "random"),
    }
    browser.driver.refresh()
    browser.wait_ready(browser.driver.current_url)
    assert _shown(browser) == order[3]  # the walk goes on where it was
    assert _text(browser, "progress-line").startswith("3 labelled")
    _press(browser, Keys.ARROW_LEFT)
    assert _shown(browser) == order[2]
    assert _text(browser, "status") == "your label: partly, in the draw's order"
    _press(browser, Keys.ARROW_LEFT, Keys.ARROW_RIGHT, Keys.ARROW_RIGHT)
    assert _shown(browser) == order[3]
    _clean(browser, server)


def test_blind_mode_hides_the_score_until_labelled(server: ViewServer, browser: Browser) -> None:
    from selenium.webdriver.common.keys import Keys

    d = browser.driver
    _open(browser, server, "metric=token_f1")
    first = _order(server, "token_f1")[0]
    assert _shown(browser) == first
    assert d.find_elements("id", "score") == [] and d.find_elements("id", "score-hidden")
    truth = _sample(server, first, blind=False, metric="token_f1")["sample"]["score"]["value"]
    _press(browser, "1")
    assert f"the judge: {truth:.3f}" in _text(browser, "last")
    assert d.find_elements("id", "score") == []  # the next sample is blind again
    _press(browser, Keys.ARROW_LEFT)
    assert _text(browser, "score").startswith(f"{truth:.3f}")
    # the switch: scores shown before labelling
    d.find_element("id", "blind").click()
    _wait_idle(browser)
    _press(browser, Keys.ARROW_RIGHT)
    assert d.find_elements("id", "score") and "blind=0" in d.current_url
    assert _labels(server, metric="token_f1")[0].idx == first
    _clean(browser, server)


def test_undo_and_skip(server: ViewServer, browser: Browser) -> None:
    order = _order(server)
    _open(browser, server, "metric=faithfulness")
    _press(browser, "1", "u")
    assert _labels(server) == [] and _shown(browser) == order[0]
    assert _text(browser, "message") == f"undone: sample #{order[0]}"
    assert _text(browser, "status") == "not labelled yet"
    _press(browser, "u")
    assert _text(browser, "message") == "nothing to undo"
    _press(browser, "s")  # skip order[0]
    assert _shown(browser) == order[1]
    _press(browser, "0")
    assert [(lab.idx, lab.drawn) for lab in _labels(server)] == [(order[1], "random")]
    assert _text(browser, "progress-line").startswith("0 labelled")
    assert "1 more label(s) held back behind 1 skipped sample(s)" in _text(browser, "held-back")
    _press(browser, "n")  # back to the skipped one
    assert _shown(browser) == order[0]
    _press(browser, "1")
    assert _text(browser, "progress-line").startswith("2 labelled")
    assert browser.driver.find_elements("id", "held-back") == []
    _clean(browser, server)


def test_a_sample_opened_out_of_order_is_picked(server: ViewServer, browser: Browser) -> None:
    order = _order(server)
    _open(browser, server, f"metric=faithfulness&at={order[4]}")
    assert _shown(browser) == order[4] and _text(browser, "picked-note").startswith("You opened this sample")
    name = browser.driver.find_element("id", "labeller")
    name.send_keys("bo\n")
    _press(browser, "0")
    assert [(lab.idx, lab.drawn, lab.labeller) for lab in _labels(server)] == [(order[4], "picked", "bo")]
    assert _shown(browser) == order[0]  # back to the draw
    assert "1 picked label(s)" in _text(browser, "picked")
    _press(browser, "1")
    assert {lab.idx: lab.drawn for lab in _labels(server)}[order[0]] == "random"
    _clean(browser, server)


def test_hostile_text_stays_text(server: ViewServer, browser: Browser) -> None:
    _open(browser, server, "metric=faithfulness&at=2&blind=0")
    sample = browser.driver.find_element("id", "sample")
    text = sample.text
    assert "window.__pwned = 1; document.title = 'pwned';" in text
    assert '<img src=x onerror="window.__pwned = 3' in text
    assert "javascript:window.__pwned = 4" in text
    for tag in ("script", "img", "a", "svg", "iframe", "b"):
        assert sample.find_elements("css selector", tag) == [], tag
    _press(browser, "1")
    _clean(browser, server)


def test_chinese_page_and_folded_context(server: ViewServer, browser: Browser) -> None:
    _open(browser, server, "metric=token_f1", run="zh")
    d = browser.driver
    assert d.execute_script("return document.documentElement.lang") == "zh"
    assert _text(browser, "ask") == "回答说的是否就是参考答案所说的内容？"
    assert d.find_element("css selector", "#keys button[data-key='1']").text == "1 是"
    assert _text(browser, "progress-line").startswith("已标注 0 个")
    assert d.find_element("id", "ask").size["width"] > 0
    # the long context starts folded
    order = _order(server, "token_f1", run="zh")
    _press(browser, *["s"] * order.index(0))
    assert _shown(browser) == 0
    fold = d.find_element("css selector", "details.context-fold")
    assert fold.get_attribute("open") is None and "3,250" in fold.text
    fold.find_element("css selector", "summary").click()
    assert LONG_CONTEXT[:40] in fold.text
    _press(browser, "1")
    assert [lab.idx for lab in _labels(server, run="zh", metric="token_f1")] == [0]
    _clean(browser, server)


def test_a_write_from_the_page_without_the_token_is_refused(server: ViewServer, browser: Browser) -> None:
    _open(browser, server, "metric=faithfulness")
    status = browser.driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "fetch(location.pathname, {method: 'POST', headers: {'Content-Type': 'application/json',"
        " 'X-Ragmeter-Token': 'wrong'}, body: JSON.stringify({action: 'label', metric: 'faithfulness',"
        " idx: 0, value: 1, page: 'x'})}).then(function (r) { done(r.status); });"
    )
    assert status == 403 and _labels(server) == []


# ---------------------------------------------------------------------------------------------- words


def test_every_builtin_metric_has_its_question_in_every_language() -> None:
    """Every metric a description file describes (exactly the built-in ones, which
    tests/docs/test_docs_commands.py holds) has its question, in every language."""
    from ragmeter.metrics.descriptions import description_languages, load_descriptions

    for lang in description_languages():
        texts = load_descriptions(lang)
        assert len(texts.metrics) >= 25
        missing = [n for n, entry in texts.metrics.items() if not entry.label_question]
        assert not missing, f"{texts.source}: no label_question for {missing}"


def test_the_page_words_are_the_same_keys_in_every_language() -> None:
    from ragmeter.metrics.descriptions import description_languages, load_descriptions
    from ragmeter.report.page import asset

    script = asset("label.js")
    used = set(re.findall(r"\bT\.(\w+)", script)) | set(re.findall(r'\bt\("(\w+)"', script))
    pages = {lang: load_descriptions(lang).label_page for lang in description_languages()}
    en = pages["en"]
    assert used <= set(en), f"label.js uses words en.toml lacks: {sorted(used - set(en))}"
    for lang, words in pages.items():
        assert set(words) == set(en), f"{lang}: keys differ from en: {sorted(set(words) ^ set(en))}"
        for key, text in words.items():
            slots = set(re.findall(r"\{(\w+)\}", text))
            assert slots == set(re.findall(r"\{(\w+)\}", en[key])), f"{lang} [label_page] {key}: {text!r}"


def test_questions_for_named_variants_and_unknown_metrics() -> None:
    from ragmeter.report.labelling import metric_question

    assert metric_question("ndcg@5", "en")["question"] == "Are the most relevant contexts ranked first?"
    assert (
        metric_question("answer_relevancy", "zh")["question"] == "回答是否回应了所提的问题？"
    )  # a Ragas alias
    mine = metric_question("my_metric", "en")
    assert mine["question"] == "Does this sample deserve a high my_metric score? (my_metric)"


@pytest.mark.parametrize(("page", "lang"), [("docs/report.md", "en"), ("docs/zh/reports.md", "zh")])
def test_the_docs_quote_the_questions_the_page_asks(page: str, lang: str) -> None:
    from ragmeter.metrics.descriptions import load_descriptions

    text = (Path(__file__).resolve().parents[2] / page).read_text(encoding="utf-8")
    texts = load_descriptions(lang)
    rows = [r for r in re.findall(r"^\| `([a-z_]+)` \| ([^|`]+?) \|$", text, re.M) if r[0] in texts.metrics]
    assert len(rows) >= 4
    for name, question in rows:
        assert question == texts.describe(name).label_question, (page, name)


def test_progress_follows_the_calibrated_estimate(server: ViewServer) -> None:
    """Below 10 labels the count is the labels-only bound (and at least what the calibrated
    estimate needs); with 10 of each kind on the prefix it is the projection of the calibrated
    interval, whose half-width now is the one the run's summary has; with fewer of one kind, the
    labels-only bound again, and the page says why."""
    order = _order(server, "token_f1", run="big")
    with RunStore(server.app.store_dir) as store:
        scores = store.score_values("big", "token_f1")

    def progress() -> dict[str, Any]:
        status, _, text = _request(server.url + "run/big/label/sample?metric=token_f1")
        assert status == 200
        return json.loads(text)["progress"]

    def put(k: int, zeros: int, judge: bool = True) -> None:
        """Label the first k samples of the draw 0, then the judge's verdict (or 1)."""
        with RunStore(server.app.store_dir) as store:
            for pos, idx in enumerate(order[:k]):
                value = 0 if pos < zeros else int((scores[idx] or 0) >= 0.5) if judge else 1
                store.put_label("big", idx, "token_f1", value, drawn="random")

    put(4, zeros=2)
    p = progress()
    assert p["needed"]["method"].startswith("labels-only") and p["calibrated"] is None
    assert p["needed"]["more"] >= 6
    for zeros, method in ((12, "ppi++"), (3, "labels-only")):
        put(30, zeros, judge=method == "ppi++")
        p = progress()
        summary = ragmeter.Result.from_store(server.app.store_dir, "big").summary()["token_f1"].calibrated
        assert summary is not None and summary["n_labels"] == p["n_prefix"] == 30
        low, high = summary["ci95"]
        assert p["calibrated"]["half_width"] == pytest.approx((high - low) / 2)
        assert p["needed"]["method"].startswith(method), zeros
        assert (
            (p["calibrated"]["few_of_a_kind"] is None) == (summary["warning"] is None) == (method == "ppi++")
        )


def test_the_page_shows_the_calibrated_width(server: ViewServer, browser: Browser) -> None:
    order = _order(server, "token_f1", run="big")
    with RunStore(server.app.store_dir) as store:
        for pos, idx in enumerate(order[:30]):
            store.put_label("big", idx, "token_f1", pos % 2, drawn="random")
    _open(browser, server, "metric=token_f1", run="big")
    half = json.loads(_request(server.url + "run/big/label/sample?metric=token_f1")[2])
    width = half["progress"]["calibrated"]["half_width"]
    assert _text(browser, "calibrated") == f"the calibrated interval is ±{width:.2f} now"
    line = browser.driver.find_element("id", "progress-line")
    assert line.get_attribute("data-method") == "ppi++" and line.text.startswith("30 labelled")
    assert browser.driver.find_elements("id", "few") == []
    _clean(browser, server)


def test_conversations_show_their_messages(server: ViewServer, browser: Browser) -> None:
    """A per-conversation metric labels the conversation, shown message by message; a turn shows
    the conversation before it."""
    status, _, text = _request(server.url + "run/conv/label/sample?metric=whole")
    conv = json.loads(text)["sample"]
    assert status == 200 and conv["messages"] and conv["history"] is None
    assert {m["role"] for m in conv["messages"]} >= {"user", "assistant"}
    turn = json.loads(_request(server.url + "run/conv/label/sample?metric=token_f1")[2])["sample"]
    assert turn["messages"] is None and turn["history"] and turn["question"]
    _open(browser, server, "metric=whole&lang=en", run="conv")
    d = browser.driver
    assert _text(browser, "ask") == "Does this sample deserve a high whole score? (whole)"
    shown = d.find_elements("css selector", "#sample .conversation .message-turn")
    assert len(shown) == len(conv["messages"])
    assert [m.find_element("css selector", ".role").text.split(" ")[0] for m in shown] == [
        m["role"] for m in conv["messages"]
    ]
    _press(browser, "1")
    assert [lab.idx for lab in _labels(server, run="conv", metric="whole")] == [conv["idx"]]
    _open(browser, server, "metric=token_f1&lang=zh", run="conv")
    history = d.find_element("css selector", "#sample details.history")
    assert history.text.startswith(f"此前的对话（{len(turn['history'])} 条消息）")
    _clean(browser, server)


def test_a_metric_with_no_score_yet_has_nothing_to_label(tmp_path: Path, browser: Browser) -> None:
    """A run that has its samples but no score of the metric yet (it is still running)."""
    from ragmeter.dataset.sample import Sample

    with RunStore(tmp_path) as store:
        store.create_run("fresh", {"metrics": [{"name": "faithfulness", "requires": ["answer", "contexts"]}]})
        store.add_samples("fresh", [(0, Sample(question="q?", answer="a", contexts=("c",)))])
    srv = ViewServer(tmp_path, port=0)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        data = _page_data(_request(srv.url + "run/fresh/label?metric=faithfulness")[2])
        assert data["start"]["sample"] is None and data["start"]["progress"]["n_draw"] == 0
        browser.console_errors()
        browser.open(srv.url + "run/fresh/label?metric=faithfulness")
        assert browser.driver.find_element("id", "empty").text.startswith("No sample has a score")
        assert browser.driver.find_elements("id", "progress-line") == []
        assert browser.console_errors() == []
        status, _, body = _request(
            srv.url + "run/fresh/label",
            "POST",
            json.dumps(
                {"action": "label", "metric": "faithfulness", "idx": 0, "value": 1, "page": "p"}
            ).encode(),
            {"Content-Type": "application/json", TOKEN_HEADER: str(srv.token)},
        )
        assert status == 400 and "no score for faithfulness" in body
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join(10)
