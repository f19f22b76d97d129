"""Agents end to end: a plain OpenAI-messages log scored from the CLI; a LlamaIndex FunctionAgent
(a scripted function-calling LLM, two real Python tools) instrumented with OpenInference, its traces
collected by `ragmeter collect`'s server and scored from the CLI; the same agent run through
run_pipeline; labelled trajectories through `ragmeter agreement` against the loopback server; and
LlamaIndex's agent evaluators."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import ragmeter
from agents.cases import load_cases
from helpers.server import FakeOpenAIServer
from ragmeter.cli.main import cli
from ragmeter.evaluators import AgentGoalSuccessEvaluator, ToolCallCorrectnessEvaluator

pytestmark = [
    # llama-index-core's workflows read every attribute of the agent (inspect.getmembers), pydantic's
    # deprecated ones included, on each run
    pytest.mark.filterwarnings("ignore::pydantic.warnings.PydanticDeprecatedSince20"),
    pytest.mark.filterwarnings("ignore::pydantic.warnings.PydanticDeprecatedSince211"),
]

ROOT = Path(__file__).resolve().parents[2]
LOG = ROOT / "examples" / "agent_messages.jsonl"
DEV = ROOT / "data" / "dev" / "agent_trajectories_dev.jsonl"
TRAJECTORY_METRICS = "tool_call_correctness,tool_call_f1,tool_call_accuracy,tool_args_valid,redundant_calls"


def _cli(*args: str) -> dict[str, Any]:
    res = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_an_openai_messages_log_scored_from_the_cli(tmp_path: Path) -> None:
    out = _cli(
        "evaluate", str(LOG), "--metrics", f"{TRAJECTORY_METRICS},agent_goal_success,faithfulness",
        "--json", "--out", str(tmp_path), "--no-progress",
    )  # fmt: skip
    m = out["metrics"]
    # six conversations; the judge-free figures are exact
    assert m["tool_call_correctness"]["n_scored"] == 6
    assert m["tool_call_correctness"]["mean"] == pytest.approx(4 / 6)  # the loop and the wrong city miss
    assert m["tool_args_valid"]["mean"] == pytest.approx(5 / 6)  # order_id given as a number, twice
    assert (
        m["redundant_calls"]["mean"] == pytest.approx(0.5 / 6)
        and m["redundant_calls"]["higher_is_better"] is False
    )
    assert m["agent_goal_success"]["n_scored"] == 6 and m["faithfulness"]["n_scored"] == 6  # turns
    result = ragmeter.Result.from_store(tmp_path, out["run_id"])
    goal = {
        s.id: result.score(i, "agent_goal_success") for i, s in result.samples if s.level == "conversation"
    }
    assert goal["weather-paris"].value >= 0.5 and goal["refund-checked"].value >= 0.5
    assert (
        goal["refund-unchecked-loop"].value < 0.5
        and "failed and the reply does not say so" in goal["refund-unchecked-loop"].reason
    )
    assert goal["zh-weather"].value >= 0.5 and goal["zh-order-made-up"].value < 0.5
    # docs/agents.md (and its Chinese page) quote this run
    for page in ("docs/agents.md", "docs/zh/agents.md"):
        quoted = re.findall(
            r"^\| (\w+) \| (\d\.\d{3}) \| (\d+) \|$", (ROOT / page).read_text(encoding="utf-8"), re.M
        )
        assert len(quoted) == 4, page
        for name, mean, n in quoted:
            assert f"{m[name]['mean']:.3f}" == mean and m[name]["n_scored"] == int(n), (page, name)


# ------------------------------------------------------------------- a LlamaIndex agent


def get_weather(city: str) -> str:
    """Current weather of a city."""
    return {"Paris": "Paris: 18°C, sunny.", "Oslo": "Oslo: 3°C, snow."}.get(city, f"{city}: no data")


def convert_currency(amount: float, from_currency: str, to_currency: str) -> str:
    """Convert an amount between currencies at today's rate."""
    rate = {("EUR", "USD"): 1.08, ("USD", "EUR"): 0.93}.get((from_currency, to_currency), 1.0)
    return json.dumps({"result": round(amount * rate, 2), "rate": rate})


QUESTIONS = {
    "What is the weather in Paris?": [("get_weather", {"city": "Paris"})],
    "How much is 100 EUR in USD, and is it snowing in Oslo?": [
        ("convert_currency", {"amount": 100, "from_currency": "EUR", "to_currency": "USD"}),
        ("get_weather", {"city": "Oslo"}),
    ],
}


def _agent() -> Any:
    llama = pytest.importorskip("llama_index.core.llms")
    if not hasattr(llama, "MockFunctionCallingLLM"):
        pytest.skip("this llama-index-core has no MockFunctionCallingLLM (added in 0.13)")
    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.core.base.llms.types import ToolCallBlock
    from llama_index.core.llms import ChatMessage, MockFunctionCallingLLM
    from llama_index.core.tools import FunctionTool

    def scripted(messages: Any, **kwargs: Any) -> Any:
        question = next(m.content for m in messages if m.role == "user")
        if messages[-1].role == "user":  # first step: call the tools the question needs
            blocks = [
                ToolCallBlock(tool_call_id=f"c{k}", tool_name=name, tool_kwargs=args)
                for k, (name, args) in enumerate(QUESTIONS[question])
            ]
            return ChatMessage(role="assistant", blocks=blocks)
        results = [m.content for m in messages if m.role == "tool"]
        return ChatMessage(role="assistant", content="From the tools: " + " ".join(results))

    llm = MockFunctionCallingLLM(response_generator=scripted, is_chat_model=True)
    tools = [FunctionTool.from_defaults(get_weather), FunctionTool.from_defaults(convert_currency)]
    return FunctionAgent(tools=tools, llm=llm)


async def _run(agent: Any, question: str) -> Any:
    return await agent.run(question)


@pytest.mark.filterwarnings("ignore:The `json` method is deprecated:DeprecationWarning:openinference")
@pytest.mark.filterwarnings("ignore:You should use InstrumentationScope:DeprecationWarning")
def test_a_llamaindex_agent_traced_with_openinference_scored_from_the_cli(tmp_path: Path) -> None:
    agent = _agent()
    pytest.importorskip("opentelemetry.exporter.otlp.proto.http.trace_exporter")
    from openinference.instrumentation.llama_index import LlamaIndexInstrumentor
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    from ragmeter.traces.collect import collecting

    instrumentor = LlamaIndexInstrumentor()
    answers = {}
    with collecting(tmp_path / "traces") as collector:
        provider = TracerProvider(resource=Resource.create({"service.name": "agent-app"}))
        provider.add_span_processor(
            SimpleSpanProcessor(OTLPSpanExporter(endpoint=collector.endpoint, timeout=10))
        )
        instrumentor.instrument(tracer_provider=provider)
        try:
            for q in QUESTIONS:
                answers[q] = str(asyncio.run(_run(agent, q)).response.content)
        finally:
            instrumentor.uninstrument()
            provider.shutdown()
    out = _cli(
        "evaluate", str(collector.path), "--metrics", "tool_args_valid,redundant_calls,agent_goal_success,faithfulness",
        "--json", "--out", str(tmp_path / "runs"), "--no-progress",
    )  # fmt: skip
    assert (
        out["metrics"]["tool_args_valid"]["n_scored"] == 2
        and out["metrics"]["tool_args_valid"]["mean"] == 1.0
    )
    assert out["metrics"]["redundant_calls"]["mean"] == 0.0
    result = ragmeter.Result.from_store(tmp_path / "runs", out["run_id"])
    conversations = [s for _, s in result.samples if s.level == "conversation"]
    by_question = {next(m.content for m in s.messages if m.role == "user"): s for s in conversations}
    assert set(by_question) == set(QUESTIONS)
    for q, expected in QUESTIONS.items():
        s = by_question[q]
        calls = [c for m in s.messages if m.role == "assistant" for c in m.tool_calls]
        assert [(c.name, json.loads(c.arguments)) for c in calls] == expected
        # declared by the TOOL spans of the calls made (the mock LLM's spans offer no JSON schemas)
        assert {t["name"] for t in s.tools or ()} == {name for name, _ in expected}
        assert all(t["parameters"].get("required") for t in s.tools or ())
        assert s.messages[-1].content == answers[q]
    oslo = by_question["How much is 100 EUR in USD, and is it snowing in Oslo?"]
    assert [m.content for m in oslo.messages if m.role == "tool"] == [
        convert_currency(100, "EUR", "USD"),
        "Oslo: 3°C, snow.",
    ]


def test_a_llamaindex_agent_through_run_pipeline() -> None:
    agent = _agent()

    async def ask(question: str) -> Any:
        return await agent.run(question)

    rows = [
        {"id": "paris", "question": "What is the weather in Paris?",
         "reference_tool_calls": [{"tool_name": "get_weather", "tool_kwargs": {"city": "Paris"}}]},
        {"id": "oslo", "question": "How much is 100 EUR in USD, and is it snowing in Oslo?",
         "reference_tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}]},
    ]  # fmt: skip
    ds = ragmeter.run_pipeline(ask, rows, workers=1)
    assert [s.id for s in ds] == ["paris", "paris:1", "oslo", "oslo:1"] and not ds.problems
    result = ragmeter.evaluate(ds, ["tool_call_correctness", "tool_call_f1", "faithfulness"], progress=False)
    scores = {s.id: result.score(i, "tool_call_f1") for i, s in result.samples if s.level == "conversation"}
    assert scores["paris"].value == 1.0 and scores["oslo"].value == pytest.approx(2 / 3)
    turn = next(s for _, s in result.samples if s.id == "paris:1")
    assert turn.contexts == ("Paris: 18°C, sunny.",) and "latency_s" in turn.metadata


def test_labelled_trajectories_through_agreement_against_the_loopback_server() -> None:
    with FakeOpenAIServer() as server:
        res = CliRunner().invoke(
            cli,
            ["agreement", str(DEV), "--judge", "openai-compatible:toy", "--base-url", server.url, "--json"],
            catch_exceptions=False,
        )
    assert res.exit_code == 0, res.output
    reports = {r["metric"]: r for r in map(json.loads, res.stdout.splitlines())}
    assert reports["agent_goal_success"]["n"] == 44 and reports["agent_goal_success"]["n_invalid"] == 0
    assert reports["tool_selection"]["n"] == 24 and reports["tool_selection"]["n_invalid"] == 0
    assert reports["agent_goal_success"]["ci95"]["accuracy"] is not None


# ------------------------------------------------------------------- LlamaIndex's evaluators


def test_tool_call_correctness_evaluator_equals_llamaindex() -> None:
    for ordered in (False, True):
        for strict in (False, True):
            ev = ToolCallCorrectnessEvaluator(ordered=ordered, strict_kwargs=strict)
            for case in load_cases():
                li = lambda calls: [{"tool_name": c["name"], "tool_kwargs": c["arguments"]} for c in calls]  # noqa: E731
                r = ev.evaluate(
                    expected_tool_calls=li(case["expected"]), actual_tool_calls=li(case["actual"])
                )
                want = case["llamaindex"][f"ordered={ordered},strict_kwargs={strict}"]
                assert r.score == pytest.approx(want), case["id"]
                assert r.passing == (want >= 1.0)
    with pytest.raises(ragmeter.ConfigError, match="expected_tool_calls and actual_tool_calls"):
        ToolCallCorrectnessEvaluator().evaluate(expected_tool_calls=[])


def test_agent_goal_success_evaluator_in_llamaindex_shape() -> None:
    ev = AgentGoalSuccessEvaluator()  # the local judge
    ok = ev.evaluate(
        query="Find the weather in San Francisco",
        response="The weather in San Francisco is 65F and sunny.",
        contexts=["weather_api(city='San Francisco') -> '65F, sunny'"],
    )
    bad = ev.evaluate(
        query="Find the weather in San Francisco",
        response="The weather in San Francisco is 80F and stormy.",
        contexts=["weather_api(city='San Francisco') -> '65F, sunny'"],
    )
    assert ok.passing is True and bad.passing is False and ok.score > bad.score
    assert AgentGoalSuccessEvaluator(score_threshold=4.0).threshold == 0.75
    calls = [
        {"tool_name": "get_weather", "tool_kwargs": {"city": "Paris"}, "tool_output": "Paris: 18°C, sunny."}
    ]
    with FakeOpenAIServer() as server:
        judge = ragmeter.make_judge("openai-compatible:toy", base_url=server.url)
        r = AgentGoalSuccessEvaluator(llm=judge).evaluate(
            query="Weather in Paris?", response="18°C and sunny.", actual_tool_calls=calls
        )
        prompt = server.requests[-1]["messages"][-1]["content"]
    assert r.score == 1.0 and r.passing is True and r.response == "18°C and sunny."
    assert (
        'Call [1]: get_weather({"city": "Paris"})' in prompt and "Result [1]: Paris: 18°C, sunny." in prompt
    )
