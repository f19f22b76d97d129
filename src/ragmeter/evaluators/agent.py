"""LlamaIndex's agent evaluators (``llama_index.core.evaluation.agent``) over ragmeter's agent
metrics (docs/agents.md):

- :class:`ToolCallCorrectnessEvaluator` -- ``evaluate(expected_tool_calls=, actual_tool_calls=)``,
  calls as ``{"tool_name", "tool_kwargs"}`` dicts (or ``ToolSelection`` / ``ToolCallResult``
  objects, or ``{"name", "arguments"}``); no judge. ``score``: the matched share of the expected
  calls; ``passing`` at ``threshold`` (default 1.0).
- :class:`AgentGoalSuccessEvaluator` -- ``evaluate(query=, response=, contexts=, reference=)`` as
  LlamaIndex's (``contexts``: the tool history as lines), or with ``actual_tool_calls`` (the
  ``ToolCallResult`` list of an ``AgentOutput``, with their results), or ``response`` an
  ``AgentOutput`` itself. ``score``: ragmeter's ``agent_goal_success`` in [0, 1] (LlamaIndex's is
  1-5); ``passing`` at ``threshold`` (default 0.5), or at LlamaIndex's ``score_threshold`` on its
  1-5 scale, read as ``(score_threshold - 1) / 4``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragmeter.dataset.messages import ChatMessage, ToolCall
from ragmeter.dataset.sample import Sample
from ragmeter.dataset.trajectory import agent_messages, is_agent_output, read_tool_calls
from ragmeter.errors import ConfigError
from ragmeter.evaluators.core import BaseEvaluator, EvaluationResult
from ragmeter.metrics.agent import AgentGoalSuccess
from ragmeter.metrics.tool_calls import ToolCallCorrectness


def _calls(value: Any, field: str) -> tuple[ToolCall, ...]:
    return read_tool_calls([_call_dict(c) for c in value], field=field)


def _call_dict(call: Any) -> Any:
    """A LlamaIndex ``ToolSelection`` / ``ToolCallResult`` (attributes) as a dict."""
    if hasattr(call, "tool_name") and not isinstance(call, dict):
        return {"tool_name": call.tool_name, "tool_kwargs": getattr(call, "tool_kwargs", None) or {}}
    return call


class ToolCallCorrectnessEvaluator(BaseEvaluator):
    """LlamaIndex's ``ToolCallCorrectnessEvaluator`` on ``tool_call_correctness`` (no judge call)."""

    def __init__(
        self, ordered: bool = False, strict_kwargs: bool = False, threshold: float = 1.0, *, judge: Any = None
    ) -> None:
        super().__init__(
            ToolCallCorrectness(ordered=ordered, strict_kwargs=strict_kwargs), judge, threshold=threshold
        )

    async def aevaluate(  # type: ignore[override]
        self,
        query: str | None = None,
        response: str | None = None,
        contexts: Sequence[str] | None = None,
        reference: str | None = None,
        expected_tool_calls: Sequence[Any] | None = None,
        actual_tool_calls: Sequence[Any] | None = None,
        **kwargs: Any,
    ) -> EvaluationResult:
        if expected_tool_calls is None or actual_tool_calls is None:
            raise ConfigError(
                "ToolCallCorrectnessEvaluator: give both expected_tool_calls and actual_tool_calls"
            )
        meta = dict(kwargs.pop("metadata", {}) or {})
        meta["expected_tool_calls"] = _calls(expected_tool_calls, "expected_tool_calls")
        meta["actual_tool_calls"] = _calls(actual_tool_calls, "actual_tool_calls")
        return await super().aevaluate(query, response, contexts, reference, metadata=meta, **kwargs)

    def _sample(
        self,
        query: str | None,
        response: str | None,
        contexts: Sequence[str] | None,
        reference: str | None,
        metadata: dict[str, Any],
    ) -> Sample:
        """The calls as a trajectory: the query, one assistant message making the actual calls."""
        expected, actual = metadata.pop("expected_tool_calls"), metadata.pop("actual_tool_calls")
        messages = [ChatMessage("user", query or "")]
        if actual:
            messages.append(ChatMessage("assistant", "", tool_calls=actual))
        return Sample(
            question=query or "",
            answer=response,
            messages=tuple(messages),
            reference_tool_calls=expected,
            metadata=metadata,
        )


class AgentGoalSuccessEvaluator(BaseEvaluator):
    """LlamaIndex's ``AgentGoalSuccessEvaluator`` on ``agent_goal_success`` (one judge call; the
    local judge reads it too, see docs/agents.md)."""

    def __init__(
        self,
        judge: Any = None,
        *,
        threshold: float | None = None,
        score_threshold: float | None = None,
        lang: str = "auto",
        llm: Any = None,
    ) -> None:
        if threshold is not None and score_threshold is not None:
            raise ConfigError(
                "AgentGoalSuccessEvaluator: give threshold (0-1) or score_threshold (1-5), not both"
            )
        if score_threshold is not None:
            threshold = (float(score_threshold) - 1.0) / 4.0
        super().__init__(
            AgentGoalSuccess(lang=lang), judge, threshold=0.5 if threshold is None else threshold, llm=llm
        )

    def _sample(
        self,
        query: str | None,
        response: Any,
        contexts: Sequence[str] | None,
        reference: str | None,
        metadata: dict[str, Any],
    ) -> Sample:
        calls = metadata.pop("actual_tool_calls", None)
        if is_agent_output(response):
            messages = agent_messages(query or "", response)
        elif calls is not None:
            messages = agent_messages(query or "", _Run(calls, response))
        else:  # LlamaIndex's tool history: one line per call, read as that call's result
            messages = [ChatMessage("user", query or "")]
            for k, line in enumerate(contexts or (), 1):
                call = ToolCall("tool_history", "", f"h{k}")
                messages += [
                    ChatMessage("assistant", "", tool_calls=(call,)),
                    ChatMessage("tool", str(line), tool_call_id=call.id),
                ]
            messages.append(ChatMessage("assistant", str(response or "")))
        return Sample(
            question=query or "",
            answer=messages[-1].content,
            messages=tuple(messages),
            reference=reference,
            metadata=metadata,
        )

    async def aevaluate(  # type: ignore[override]
        self,
        query: str | None = None,
        response: Any = None,
        contexts: Sequence[str] | None = None,
        reference: str | None = None,
        actual_tool_calls: Sequence[Any] | None = None,
        **kwargs: Any,
    ) -> EvaluationResult:
        meta = dict(kwargs.pop("metadata", {}) or {})
        if actual_tool_calls is not None:
            meta["actual_tool_calls"] = list(actual_tool_calls)
        text = response.response.content if is_agent_output(response) else response
        result = await super().aevaluate(query, response, contexts, reference, metadata=meta, **kwargs)
        return result.model_copy(update={"response": text})

    def _missing_inputs(self, sample: Sample) -> str | None:
        if not sample.question.strip():
            return "missing query"
        if not (sample.answer or "").strip():
            return "missing response"
        return None


class _Run:
    """``ToolCallResult`` objects and a response text, shaped as an ``AgentOutput``."""

    def __init__(self, calls: Sequence[Any], response: Any) -> None:
        self.tool_calls = list(calls)
        self.response = ChatMessage("assistant", str(response or ""))


__all__ = ["AgentGoalSuccessEvaluator", "ToolCallCorrectnessEvaluator"]
