"""Conversations in the HTML report, `ragmeter view` and the comparison page: a chat with each
turn's scores after its answer, the conversation metrics' tables, a turn's history and standalone
question; hostile text in messages, tool calls and tool results stays text (headless Chromium)."""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import ragmeter
from helpers.browser import Browser
from ragmeter.report.compare_html import write_comparison
from ragmeter.report.comparison import compare_runs
from ragmeter.report.html_data import report_data
from ragmeter.report.server import ViewServer

HOSTILE = "<img src=x onerror=\"window.__pwned = 1\"><script>window.__pwned = 2</script>"
CHAT: dict[str, Any] = {
    "id": "trip",
    "messages": [
        {"role": "system", "content": "You are a travel guide. " + HOSTILE},
        {"role": "user", "content": "I use a wheelchair. Tell me about the Eiffel Tower."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "search", "arguments": HOSTILE}}],
        },
        {
            "role": "tool",
            "tool_call_id": "c1",
            "content": json.dumps(["The Eiffel Tower is a lattice tower in Paris, completed in 1889. " + HOSTILE]),
        },
        {"role": "assistant", "content": "The Eiffel Tower is a lattice tower in Paris, completed in 1889."},
        {"role": "user", "content": "How tall is it? " + HOSTILE},
        {"role": "assistant", "content": "It is 330 metres tall.", "contexts": ["The tower is 330 metres tall."]},
    ],
}
METRICS = ["faithfulness", "context_relevance", "knowledge_retention", "conversation_relevancy"]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("conv-pages") / "runs"
    ragmeter.evaluate([CHAT], METRICS, None, out=out, run_id="conv-a")
    other = copy.deepcopy(CHAT)
    other["messages"][6]["content"] = "It is 300 metres tall."
    ragmeter.evaluate([other], METRICS, None, out=out, run_id="conv-b")
    return out


def _safe(b: Browser) -> None:
    d = b.driver
    assert d.execute_script("return window.__pwned") is None
    assert d.find_elements("css selector", "#detail img, #detail script, #detail iframe") == []
    assert b.resources() == [] and b.console_errors() == []


def test_report_data_lays_the_chat_out(store: Path) -> None:
    data = report_data(ragmeter.Result.from_store(store, "conv-a"))
    conv = next(s for s in data["samples"] if "messages" in s)
    assert [(m["role"], m["turn"], m["answer"]) for m in conv["messages"]] == [
        ("system", 0, False),
        ("user", 1, False),
        ("assistant", 1, False),
        ("tool", 1, False),
        ("assistant", 1, True),
        ("user", 2, False),
        ("assistant", 2, True),
    ]
    turn = next(s for s in data["samples"] if s.get("turn") == 2)
    assert turn["standalone_question"].startswith("How tall is the Eiffel Tower?")
    assert [m["role"] for m in turn["history"]] == ["user", "assistant"]
    assert {m["name"]: m["level"] for m in data["metrics"]}["knowledge_retention"] == "conversation"
    assert data["run"]["n_conversations"] == 1


def test_the_report_shows_the_conversation_as_a_chat(store: Path, browser: Browser, tmp_path: Path) -> None:
    result = ragmeter.Result.from_store(store, "conv-a")
    conv_idx = next(i for i, s in result.samples if s.messages is not None)
    path = result.to_html(tmp_path / "conv.html")
    browser.console_errors()
    browser.open(path.as_uri() + f"#sample-{conv_idx}")
    d = browser.driver
    detail = d.find_element("id", "detail")
    roles = [m.get_attribute("data-role") for m in detail.find_elements("css selector", ".chat .msg")]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "user", "assistant"]
    blocks = detail.find_elements("css selector", ".turn-block")
    assert [b.get_attribute("data-turn") for b in blocks] == ["1", "2"]
    assert "scored as: How tall is the Eiffel Tower?" in blocks[1].text
    assert [m.get_attribute("data-metric") for m in blocks[1].find_elements("css selector", ".metric-block")] == [
        "faithfulness",
        "context_relevance",
    ]
    # the conversation metrics above the chat: their facts and per-exchange verdicts
    top = [m.get_attribute("data-metric") for m in detail.find_elements("css selector", ":scope > .metric-block")]
    assert top == ["knowledge_retention", "conversation_relevancy"]
    assert "I use a wheelchair." in detail.find_element("css selector", "table.facts").text
    assert len(detail.find_elements("css selector", "table.turns tbody tr")) == 4  # 2 exchanges x 2 metrics
    # the hostile text is there, as text
    assert "window.__pwned = 2" in detail.find_element("css selector", ".msg-system").text
    assert HOSTILE in detail.find_element("css selector", ".tool-call").text
    _safe(browser)
    # a turn, then back to its conversation
    blocks[1].find_element("css selector", ".open-turn").click()
    detail = d.find_element("id", "detail")
    assert "conversation trip \u00b7 turn 2" in detail.text
    assert [m.get_attribute("data-role") for m in detail.find_elements("css selector", ".chat.history .msg")] == [
        "user",
        "assistant",
    ]
    assert "How tall is the Eiffel Tower?" in detail.find_element("css selector", ".standalone-text").text
    detail.find_element("css selector", ".open-conversation").click()
    assert len(d.find_elements("css selector", "#detail .turn-block")) == 2
    # the table line of a conversation is its first user message
    assert any("[conversation] I use a wheelchair." in r.text for r in d.find_elements("css selector", "#rows .row"))
    _safe(browser)


@pytest.fixture
def server(store: Path) -> Iterator[ViewServer]:
    srv = ViewServer(store, port=0)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join(10)


def test_view_and_compare_match_turns(store: Path, server: ViewServer, browser: Browser, tmp_path: Path) -> None:
    comparison = compare_runs("conv-a", "conv-b", store=store)
    assert sorted(key for key, _, _ in comparison.pairs) == ["id:trip", "id:trip/turn:1", "id:trip/turn:2"]
    browser.console_errors()
    browser.open(server.url + "run/conv-a")
    browser.wait_ready(server.url + "run/conv-a")
    assert len(browser.driver.find_elements("css selector", "#rows .row")) == 3
    _safe(browser)
    path = write_comparison(comparison, tmp_path / "compare.html")
    browser.open(path.as_uri())
    d = browser.driver
    rows = {r.get_attribute("data-key"): r for r in d.find_elements("css selector", "#rows .row")}
    assert set(rows) == {"id:trip", "id:trip/turn:1", "id:trip/turn:2"}  # turns matched by conversation and turn
    rows["id:trip"].click()
    sides = d.find_elements("css selector", "#detail .side")
    assert [len(s.find_elements("css selector", ".chat .msg")) for s in sides] == [7, 7]
    d.find_element("css selector", '#rows .row[data-key="id:trip/turn:2"]').click()
    side_b = d.find_element("css selector", '#detail .side[data-side="B"]')
    assert "It is 300 metres tall." in side_b.text and "scored as:" in side_b.text
    _safe(browser)
