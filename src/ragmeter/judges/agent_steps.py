"""The LLM judge's agent steps (docs/agents.md).

Mixed into :class:`ragmeter.judges.llm.LLMJudge`. Each step is ONE call per trajectory, cached and
memoised like the other steps, with its prompt file in ``prompts/<lang>/<step>.toml``:

- ``check_goal(messages, outcome=)`` -> :class:`~ragmeter.judges.base.Verdict`: the user's goal
  (``claim``), whether it was achieved (``supported``; with ``outcome``, also whether the end
  state matches it), the end state read (``evidence``).
- ``check_tool_selection(messages, tools)`` -> one :class:`~ragmeter.judges.base.TurnVerdict` per
  tool call (``turn``: the call's number): the right tool to call at that point?
- ``check_topics(messages, topics)`` -> one :class:`~ragmeter.judges.base.TopicVerdict` per topic
  the user raised: allowed, and answered?

The trajectory is sent as numbered lines (:func:`trajectory_text`): "User:", "Assistant:",
"Call [k]: name({...})" and "Result [k]: ..." (cut at :data:`RESULT_LIMIT` characters), all of it
fenced as untrusted data -- a tool result is text from outside, like a retrieved document.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ragmeter.dataset.messages import ChatMessage
from ragmeter.dataset.trajectory import tool_steps
from ragmeter.errors import JudgeOutputError
from ragmeter.judges.base import TopicVerdict, TurnVerdict, Verdict
from ragmeter.judges.conversation_steps import turn_verdicts
from ragmeter.judges.llm_steps import AskingMixin
from ragmeter.judges.prompts import Untrusted

#: longest tool result shown to the judge (characters); a longer one is cut, and says so
RESULT_LIMIT = 1500
_LABELS = {
    "en": {"user": "User", "assistant": "Assistant", "system": "System", "call": "Call", "result": "Result"},
    "zh": {"user": "用户", "assistant": "助手", "system": "系统", "call": "调用", "result": "结果"},
}
_NO_OUTCOME = {"en": "(none given)", "zh": "（未提供）"}
_CUT = {"en": "[... {n} more characters]", "zh": "[……另有 {n} 个字符]"}


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def trajectory_text(messages: Sequence[ChatMessage], lang: str) -> tuple[str, int]:
    """(the trajectory as lines, the number of tool calls). Each message is one line; a call and
    its result carry the call's number."""
    names = _LABELS.get(lang, _LABELS["en"])
    colon = "：" if lang == "zh" else ": "
    steps = tool_steps(messages)
    by_call: dict[int, list[int]] = {}
    by_result = {s.result_at: s.index for s in steps if s.result_at is not None}
    for s in steps:
        by_call.setdefault(s.call_at, []).append(s.index)
    lines: list[str] = []
    for at, m in enumerate(messages):
        if m.role in ("system", "user") and m.content.strip():
            lines.append(f"{names[m.role]}{colon}{_one_line(m.content)}")
        elif m.role == "assistant":
            if m.content.strip():
                lines.append(f"{names['assistant']}{colon}{_one_line(m.content)}")
            for k, call in zip(by_call.get(at, []), m.tool_calls, strict=True):
                lines.append(f"{names['call']} [{k}]{colon}{call.show(600)}")
        elif m.role == "tool":
            text = _one_line(m.content)
            if len(text) > RESULT_LIMIT:
                text = (
                    text[:RESULT_LIMIT] + " " + _CUT.get(lang, _CUT["en"]).format(n=len(text) - RESULT_LIMIT)
                )
            number = by_result.get(at)
            label = f"{names['result']} [{number}]" if number is not None else names["result"]
            lines.append(f"{label}{colon}{text}")
    return "\n".join(lines), len(steps)


def tools_text(tools: Sequence[Mapping[str, Any]]) -> str:
    """One line per declared tool: ``name: description; parameters: {schema}``."""
    lines = []
    for t in tools:
        params = json.dumps(t.get("parameters") or {}, ensure_ascii=False, sort_keys=True)
        desc = _one_line(str(t.get("description") or ""))
        lines.append(f"- {t.get('name')}: {desc}; parameters: {params}")
    return "\n".join(lines)


class AgentSteps(AskingMixin):
    """Agent steps of :class:`~ragmeter.judges.llm.LLMJudge` (a mixin)."""

    async def check_goal(
        self, messages: Sequence[ChatMessage], *, outcome: str | None = None, lang: str = "en"
    ) -> Verdict:
        lang = self._lang(lang)
        text, _ = trajectory_text(messages, lang)
        given = outcome.strip() if outcome and outcome.strip() else None
        inputs = {"trajectory": text, "outcome": _one_line(given) if given else _NO_OUTCOME[lang]}
        values = {"trajectory": Untrusted(text), "outcome": Untrusted(given) if given else inputs["outcome"]}

        def convert(obj: Any) -> Verdict:
            achieved = obj.get("achieved")
            if not isinstance(achieved, bool):
                raise JudgeOutputError(f"'achieved' must be true or false, got {achieved!r}")
            goal = _one_line(str(obj.get("goal") or ""))
            end = _one_line(str(obj.get("end_state") or ""))
            reason = _one_line(str(obj.get("reason") or ""))
            return Verdict(goal, achieved, reason, end, 1.0 if achieved else 0.0)

        return await self._memo_ask("check_goal", lang, inputs, values, convert)

    async def check_tool_selection(
        self, messages: Sequence[ChatMessage], tools: Sequence[Mapping[str, Any]], *, lang: str = "en"
    ) -> list[TurnVerdict]:
        lang = self._lang(lang)
        text, n = trajectory_text(messages, lang)
        if n == 0:
            return []
        inputs = {"tools": tools_text(tools), "trajectory": text}
        values = {k: Untrusted(v) for k, v in inputs.items()}

        def convert(obj: Any) -> list[TurnVerdict]:
            return turn_verdicts(obj["verdicts"], n, "right_tool")

        return await self._memo_ask("check_tool_selection", lang, inputs, values, convert, {"verdicts": n})

    async def check_topics(
        self, messages: Sequence[ChatMessage], topics: Sequence[str], *, lang: str = "en"
    ) -> list[TopicVerdict]:
        lang = self._lang(lang)
        text, _ = trajectory_text(messages, lang)
        inputs = {"topics": "\n".join(f"- {_one_line(t)}" for t in topics), "trajectory": text}
        values = {k: Untrusted(v) for k, v in inputs.items()}

        def convert(obj: Any) -> list[TopicVerdict]:
            raw = obj.get("topics")
            if not isinstance(raw, list):
                raise JudgeOutputError("'topics' must be a list")
            out = []
            for t in raw:
                if not isinstance(t, dict):
                    raise JudgeOutputError(f"a topic must be an object: {t!r}")
                topic = _one_line(str(t.get("topic") or ""))
                allowed, answered = t.get("allowed"), t.get("answered")
                if not topic or not isinstance(allowed, bool) or not isinstance(answered, bool):
                    raise JudgeOutputError(
                        f"a topic needs 'topic', 'allowed' and 'answered' (true or false): {t!r}"
                    )
                out.append(TopicVerdict(topic, allowed, answered, _one_line(str(t.get("reason") or ""))))
            return out

        return await self._memo_ask("check_topics", lang, inputs, values, convert)


__all__ = ["RESULT_LIMIT", "AgentSteps", "tools_text", "trajectory_text"]
