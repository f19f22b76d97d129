"""Agents in the HTML report and the comparison page: a trajectory as numbered steps (the call, an
excerpt of its result, each trajectory metric's verdict on it), paired by sample across two runs
(headless Chromium)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ragmeter
from helpers.browser import Browser
from ragmeter.report.compare_html import write_comparison
from ragmeter.report.comparison import compare_runs
from ragmeter.report.html_data import report_data

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "agent_messages.jsonl"
METRICS = ["tool_call_correctness", "tool_args_valid", "redundant_calls", "agent_goal_success"]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("agent-pages") / "runs"
    rows = [json.loads(line) for line in EXAMPLE.read_text(encoding="utf-8").splitlines()]
    ragmeter.evaluate(rows, METRICS, None, out=out, run_id="agent-a")
    fixed = [r for r in rows if r["id"] == "refund-unchecked-loop"]
    fixed[0]["messages"][1]["tool_calls"][0]["function"] = {
        "name": "get_order",
        "arguments": '{"order_id": "55120"}',
    }
    ragmeter.evaluate(rows, METRICS, None, out=out, run_id="agent-b")
    return out


def test_report_data_has_the_steps_and_their_verdicts(store: Path) -> None:
    data = report_data(ragmeter.Result.from_store(store, "agent-a"))
    loop = next(s for s in data["samples"] if s.get("id") == "refund-unchecked-loop")
    steps = loop["steps"]
    assert [(s["index"], s["name"]) for s in steps] == [(1, "refund_order"), (2, "refund_order")]
    assert steps[0]["result"] == '{"error": "order_id must be a string"}'
    said = {(v["metric"], v["ok"]) for v in steps[1]["verdicts"]}
    assert ("redundant_calls", False) in said and ("tool_args_valid", False) in said
    problem = next(v["text"] for v in steps[0]["verdicts"] if v["metric"] == "tool_args_valid")
    assert "order_id: 55120 is not of type 'string'" in problem
    good = next(s for s in data["samples"] if s.get("id") == "weather-paris")
    assert [v["ok"] for v in good["steps"][0]["verdicts"]] == [True]  # valid arguments, nothing else said
    assert "steps" not in next(s for s in data["samples"] if s.get("id") == "weather-paris:1")  # a turn


def test_the_report_and_the_comparison_show_the_trajectory(
    store: Path, browser: Browser, tmp_path: Path
) -> None:
    result = ragmeter.Result.from_store(store, "agent-a")
    idx = next(i for i, s in result.samples if s.id == "refund-unchecked-loop")
    path = result.to_html(tmp_path / "agent.html")
    browser.console_errors()
    browser.open(path.as_uri() + f"#sample-{idx}")
    rows = browser.driver.find_elements("css selector", "#detail table.steps tbody tr.step")
    assert [r.get_attribute("data-step") for r in rows] == ["1", "2"]
    assert "refund_order(" in rows[1].text and "redundant_calls: repeats call 1" in rows[1].text
    assert browser.driver.find_elements("css selector", "#detail table.steps .verdicts .bad")
    assert browser.console_errors() == []
    comparison = compare_runs("agent-a", "agent-b", store=store)
    page = write_comparison(comparison, tmp_path / "compare.html")
    browser.open(page.as_uri())
    d = browser.driver
    d.find_element("css selector", '#rows .row[data-key="id:refund-unchecked-loop"]').click()
    sides = d.find_elements("css selector", "#detail .side")
    names = [
        [c.text.split("(")[0] for c in s.find_elements("css selector", "table.steps td.call")] for s in sides
    ]
    assert names == [["refund_order", "refund_order"], ["get_order", "refund_order"]]
    assert browser.console_errors() == []
