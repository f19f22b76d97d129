"""Ragas's own ToolCallF1 and ToolCallAccuracy (``ragas.metrics.collections``), where ragas is installed, on the 58 written
trajectories (tests/agents/tool_call_cases.json): the stored Ragas values the default suite holds
ragmeter to are what this ragas computes, and ragmeter reads the same ``MultiTurnSample`` objects
(through its one reader) to the same scores."""

from __future__ import annotations

import asyncio
import warnings
from typing import Any

import pytest

import ragmeter
from agents.cases import load_cases

pytest.importorskip("ragas")

CASES = load_cases()


def _ragas_sample(case: dict[str, Any]) -> Any:
    from ragas.dataset_schema import MultiTurnSample
    from ragas.messages import AIMessage, HumanMessage, ToolCall, ToolMessage

    messages: list[Any] = [HumanMessage(content="Please do it.")]
    if case["actual"]:
        messages.append(
            AIMessage(
                content="", tool_calls=[ToolCall(name=c["name"], args=c["arguments"]) for c in case["actual"]]
            )
        )
        messages += [ToolMessage(content="ok") for _ in case["actual"]]
    messages.append(AIMessage(content="Done."))
    return MultiTurnSample(
        user_input=messages,
        reference_tool_calls=[ToolCall(name=c["name"], args=c["arguments"]) for c in case["expected"]],
    )


def test_stored_values_are_this_ragas_and_ragmeter_equals_them() -> None:
    from ragas.metrics.collections import ToolCallAccuracy, ToolCallF1

    samples = [_ragas_sample(c) for c in CASES]
    metrics = {
        "tool_call_f1": ToolCallF1(),
        "tool_call_accuracy,strict_order=True": ToolCallAccuracy(strict_order=True),
        "tool_call_accuracy,strict_order=False": ToolCallAccuracy(strict_order=False),
    }

    async def ragas_scores() -> list[dict[str, float]]:
        out = []
        for s in samples:
            args = {"user_input": s.user_input, "reference_tool_calls": s.reference_tool_calls}
            out.append({k: (await m.ascore(**args)).value for k, m in metrics.items()})
        return out

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ToolCallAccuracy warns on length mismatches
        live = asyncio.run(ragas_scores())
    for case, got in zip(CASES, live, strict=True):
        assert got == pytest.approx(case["ragas"]), case["id"]

    # ragmeter reads the MultiTurnSample objects themselves (reference_tool_calls included)
    ds = ragmeter.load_dataset(samples)
    conversations = [s for s in ds if s.level == "conversation"]
    assert len(conversations) == len(CASES) and not ds.problems
    result = ragmeter.evaluate(
        conversations,
        ["tool_call_f1", ragmeter.get_metric("tool_call_accuracy", strict_order=False)],
        progress=False,
    )
    f1s, accuracies = result.scores("tool_call_f1"), result.scores("tool_call_accuracy")
    for case, got, f1, accuracy in zip(CASES, live, f1s, accuracies, strict=True):
        want_f1 = 1.0 if not case["actual"] and not case["expected"] else got["tool_call_f1"]
        assert f1 is not None and f1.value == pytest.approx(want_f1, abs=5e-5), case["id"]
        assert accuracy is not None
        assert accuracy.value == pytest.approx(got["tool_call_accuracy,strict_order=False"]), case["id"]
