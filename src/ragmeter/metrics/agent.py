"""Judged agent metrics: the goal, the choice of tools, the topics (docs/agents.md).

Each scores a conversation sample (``level = "conversation"``) with ONE judge call for the whole
trajectory (its ``messages``: the user's messages, the tool calls and their results, the replies).
The judge-free trajectory metrics are in :mod:`ragmeter.metrics.tool_calls`; the final answer's
faithfulness to the tool results is the turn sample's ``faithfulness`` (tool results are its
contexts).

- ``agent_goal_success`` (LlamaIndex's ``AgentGoalSuccessEvaluator``, Ragas's
  ``AgentGoalAccuracyWithReference`` / ``WithoutReference``): did the trajectory achieve what the
  user asked; with a reference outcome (the conversation's ``reference``), does the end state match.
- ``tool_selection``: the share of tool calls that were the right tool to call, given the request
  and the declared tools (no reference needed).
- ``topic_adherence`` (Ragas's ``TopicAdherenceScore``): the topics the user raised, each allowed or
  not (``reference_topics``) and answered or refused: precision, recall or F1 of answering the
  allowed ones.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from ragmeter.dataset.trajectory import tool_steps
from ragmeter.errors import ConfigError
from ragmeter.metrics._common import resolve_lang
from ragmeter.metrics.base import Score, register_metric
from ragmeter.metrics.conversation import _ConversationMetric

if TYPE_CHECKING:
    from ragmeter.dataset.sample import Sample
    from ragmeter.judges.base import Judge


class _AgentMetric(_ConversationMetric):
    """A per-conversation metric whose language is read from the user's messages."""

    def _user_lang(self, sample: Sample) -> str:
        return resolve_lang(self.lang, *(m.content for m in sample.messages or () if m.role == "user"))


def _no_request(sample: Sample) -> Score | None:
    if not any(m.role == "user" and m.content.strip() for m in sample.messages or ()):
        return Score.invalid("EmptyInput", "the trajectory has no user message: no goal to judge")
    return None


@register_metric("agent_goal_success")
class AgentGoalSuccess(_AgentMetric):
    """Did the agent achieve what the user asked?

    Inputs: ``messages``; ``reference`` (the expected outcome), used when present. Judge calls: 1 --
    ``check_goal(messages, outcome=)``: the goal, the end state, achieved or not (LLM: 1 / 0; the
    local judge: a probability, the weakest of "the final answer addresses the request", "it is
    supported by the tool results" and, with an outcome, "the outcome's claims are in the end state").

        agent_goal_success = P(achieved)

    ``use_reference``: None (the default) uses the reference when the sample has one; False never
    (Ragas's ``AgentGoalAccuracyWithoutReference``); True requires it.
    """

    name = "agent_goal_success"
    steps = ("check_goal",)
    threshold = 0.5

    def __init__(self, lang: str = "auto", use_reference: bool | None = None) -> None:
        super().__init__(lang)
        self.use_reference = use_reference

    def params(self) -> dict[str, Any]:
        return {"lang": self.lang, "use_reference": self.use_reference}

    async def score(self, sample: Sample, judge: Judge) -> Score:
        bad = _no_request(sample)
        if bad is not None:
            return bad
        outcome = sample.reference if self.use_reference is not False and sample.has("reference") else None
        if self.use_reference and outcome is None:
            return Score.invalid(
                "MissingInput", "use_reference=True, and the sample has no reference outcome"
            )
        lang = self._user_lang(sample)
        v = await judge.check_goal(sample.messages or (), outcome=outcome, lang=lang)
        value = float(v.confidence) if v.confidence is not None else (1.0 if v.supported else 0.0)
        verdict = "achieved" if v.supported else "not achieved"
        parts = [f"{verdict}: {v.claim}" if v.claim else verdict]
        if v.evidence:
            parts.append(f"end state: {v.evidence}")
        if v.reason:
            parts.append(v.reason)
        return Score(
            value=value,
            reason="; ".join(parts),
            details={
                "goal": v.claim,
                "end_state": v.evidence,
                "achieved": v.supported,
                "outcome": outcome,
                "lang": lang,
            },
        )


@register_metric("tool_selection")
class ToolSelection(_AgentMetric):
    """Was each tool call the right tool to call, for the request and with the tools declared?

    Inputs: ``messages``; ``tools`` when declared (else the judge reads the calls' names). Judge
    calls: 1 -- ``check_tool_selection(messages, tools)``: one verdict per call (LLM only).

        tool_selection = right calls / calls

    Invalid (``NoToolCalls``) when the agent made no call.
    """

    name = "tool_selection"
    steps = ("check_tool_selection",)
    threshold = 1.0

    async def score(self, sample: Sample, judge: Judge) -> Score:
        steps = tool_steps(sample.messages)
        if not steps:
            return Score.invalid("NoToolCalls", "the agent made no tool call: no choice to judge")
        lang = self._user_lang(sample)
        verdicts = await judge.check_tool_selection(sample.messages or (), sample.tools or (), lang=lang)
        wrong = [v for v in verdicts if not v.ok]
        reason = f"{len(verdicts) - len(wrong)} of {len(verdicts)} call(s) chose the right tool"
        if wrong:
            shown = "; ".join(f"call {v.turn} {steps[v.turn - 1].call.name}: {v.reason}" for v in wrong[:3])
            reason += f"; wrong: {shown}"
        value = sum(v.confidence if v.confidence is not None else float(v.ok) for v in verdicts) / len(
            verdicts
        )
        rows = [{**v.to_dict(), "name": steps[v.turn - 1].call.name} for v in verdicts]
        return Score(value, reason, {"calls": rows, "lang": lang})


_MODES = ("f1", "precision", "recall")


@register_metric("topic_adherence")
class TopicAdherence(_AgentMetric):
    """Does the agent answer the topics it may talk about, and only those? (Ragas's
    ``TopicAdherenceScore``.)

    Inputs: ``messages``, ``reference_topics``. Judge calls: 1 -- ``check_topics(messages, topics)``:
    the topics the user raised, each allowed or not, answered or refused (LLM only). With
    TP = allowed and answered, FP = not allowed and answered, FN = allowed and refused:

        precision = TP / (TP + FP), recall = TP / (TP + FN), f1 = 2PR / (P + R)

    ``mode``: ``"f1"`` (default), ``"precision"`` or ``"recall"``. A ratio with nothing to count is
    1.0 (no topic wrongly answered / wrongly refused; Ragas gives 0.0). Invalid (``NoTopics``) when
    the judge finds no topic.
    """

    name = "topic_adherence"
    requires: ClassVar[tuple[str, ...]] = ("messages", "reference_topics")
    steps = ("check_topics",)

    def __init__(self, lang: str = "auto", mode: str = "f1") -> None:
        super().__init__(lang)
        if mode not in _MODES:
            raise ConfigError(f"topic_adherence: mode must be one of {', '.join(_MODES)}, not {mode!r}")
        self.mode = mode

    def params(self) -> dict[str, Any]:
        return {"lang": self.lang, "mode": self.mode}

    async def score(self, sample: Sample, judge: Judge) -> Score:
        lang = self._user_lang(sample)
        topics = await judge.check_topics(sample.messages or (), sample.reference_topics or (), lang=lang)
        if not topics:
            return Score.invalid("NoTopics", "the judge found no topic the user raised")
        tp = sum(1 for t in topics if t.allowed and t.answered)
        fp = sum(1 for t in topics if not t.allowed and t.answered)
        fn = sum(1 for t in topics if t.allowed and not t.answered)
        p = tp / (tp + fp) if tp + fp else 1.0
        r = tp / (tp + fn) if tp + fn else 1.0
        f1 = 2 * p * r / (p + r) if p + r else 0.0
        value = {"f1": f1, "precision": p, "recall": r}[self.mode]
        reason = f"{len(topics)} topic(s): {tp} allowed and answered"
        if fp:
            reason += (
                f"; answered off-topic: {', '.join(t.topic for t in topics if not t.allowed and t.answered)}"
            )
        if fn:
            reason += (
                f"; refused allowed: {', '.join(t.topic for t in topics if t.allowed and not t.answered)}"
            )
        return Score(
            value,
            reason,
            {"topics": [t.to_dict() for t in topics], "precision": p, "recall": r, "f1": f1, "lang": lang},
        )


__all__ = ["AgentGoalSuccess", "ToolSelection", "TopicAdherence"]
