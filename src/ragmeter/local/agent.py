"""The local judge's reading of an agent's trajectory: what it can read honestly (docs/agents.md).

``check_goal`` reads the replies, not the world: the goal counts as achieved to the degree of the
weakest of

- **addressed**: every request the user made is met by a reply (the conversation completeness
  reading, :func:`ragmeter.local.conversation.check_completeness`: each request made standalone,
  met to the degree of its best later reply; a refusal or an evasion meets none); when no message
  reads as a request, the share of the user's needs the last reply meets (``assess_relevance``);
- **grounded**: the replies say what the tool results say. When the replies state numbers (amounts,
  ids, times, dates), the share of them found in the sources -- the tool results, the calls'
  arguments and the user's own messages (a time counts in its 12- and 24-hour forms), halved when
  any is missing (a number no source gives is made up); otherwise
  the mean support of the replies' claims by the same sources (``verify_claims``). A tool call
  that failed (its result reads as an error) and was never retried with success, while the last
  reply does not say anything went wrong, caps it at 0.1: the agent claims a success it did not get;
- **matches the outcome**: with a reference outcome, the share of its numbers found in the replies
  (or, without numbers, the support of its claims by the replies and the tool results).

It cannot tell whether the right action was taken beyond what the results and the replies say, nor
judge the choice of tools or topics: ``tool_selection`` and ``topic_adherence`` need an LLM judge.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ragmeter.dataset.conversations import tool_result_contexts
from ragmeter.dataset.messages import ChatMessage, dialogue
from ragmeter.dataset.trajectory import ToolStep, tool_steps
from ragmeter.judges.base import Verdict
from ragmeter.local import conversation as _conversation
from ragmeter.local.features import _zh_number, analyze

if TYPE_CHECKING:
    from ragmeter.local.judge import LocalJudge

MARK = "(local judge)"
#: the cap on "grounded" when a failed call was never retried with success and the reply says
#: nothing went wrong
FAILED_CALL_CAP = 0.1
_ERROR_KEYS = ("error", "errors", "exception", "错误", "失败")
_ERROR_TEXT_RE = re.compile(
    r"^\s*(?:error|exception|traceback|failed|failure|错误|失败|异常)\b", re.IGNORECASE
)
#: a reply that says something went wrong (English and Chinese)
_ADMITS_RE = re.compile(
    r"\b(?:sorry|unfortunately|unable|couldn't|could not|can't|cannot|failed|no (?:table|room|seat|slot)s?"
    r"|not (?:available|possible)|instead)\b|抱歉|无法|未能|失败|没有|不能|改订|改为",
    re.IGNORECASE,
)
_TIME_RE = re.compile(r"\b([01]?\d|2[0-3]):[0-5]\d\b")
_PM_RE = re.compile(r"\b(1[0-2]|[1-9])(?::[0-5]\d)?\s*(?:pm|p\.m\.)", re.IGNORECASE)
_ZH_PM_RE = re.compile(r"(?:下午|晚上|傍晚)([一二两三四五六七八九十]{1,2}|\d{1,2})点")


def values(text: str) -> set[str]:
    """The numbers ``text`` states (:func:`ragmeter.local.features.analyze`), a clock time in both
    its 12- and 24-hour forms and without its ":00" minutes."""
    out = set(analyze(text).numbers)
    for m in _TIME_RE.finditer(text):
        hour = int(m.group(1))
        out.add(str(hour % 12 or 12))
        if text[m.end(1) + 1 : m.end(1) + 3] == "00":
            out.discard("0")
    for m in _PM_RE.finditer(text):
        out.add(str(int(m.group(1)) % 12 + 12))
    for m in _ZH_PM_RE.finditer(text):
        n = int(m.group(1)) if m.group(1).isdigit() else _zh_number(m.group(1))
        if n is not None:
            out.add(str(n % 12 + 12))
    return out


def readable(value: Any) -> str:
    """A JSON tool result as "key: value" text (nested keys joined by dots); other text as it is."""
    if isinstance(value, str):
        text = value.strip()
        if text[:1] not in "[{":
            return text
        try:
            value = json.loads(text)
        except ValueError:
            return text
    parts: list[str] = []

    def walk(v: Any, key: str) -> None:
        if isinstance(v, Mapping):
            for k, item in v.items():
                walk(item, f"{key}.{k}" if key else str(k))
        elif isinstance(v, list):
            for item in v:
                walk(item, key)
        else:
            parts.append(f"{key}: {v}" if key else str(v))

    walk(value, "")
    return "; ".join(parts)


def _failed(step: ToolStep) -> bool:
    text = (step.result or "").strip()
    if _ERROR_TEXT_RE.match(text):
        return True
    if text[:1] == "{":
        try:
            obj = json.loads(text)
        except ValueError:
            return False
        return isinstance(obj, Mapping) and any(k in obj for k in _ERROR_KEYS)
    return False


def unresolved_failure(steps: Sequence[ToolStep]) -> ToolStep | None:
    """The first failed call never followed by a successful call of the same tool."""
    for i, s in enumerate(steps):
        if _failed(s) and not any(t.call.name == s.call.name and not _failed(t) for t in steps[i + 1 :]):
            return s
    return None


async def _claim_support(
    judge: LocalJudge, text: str, sources: Sequence[str], question: str, lang: str
) -> float | None:
    claims = await judge.extract_claims(text, question=question, lang=lang)
    if not claims or not sources:
        return None
    verdicts = await judge.verify_claims(claims, sources, lang=lang)
    return sum(float(v.confidence or 0.0) for v in verdicts) / len(verdicts)


async def _holds(
    judge: LocalJudge, text: str, sources: Sequence[str], question: str, lang: str
) -> tuple[float, str] | None:
    """(how far ``text`` is held by ``sources``, how it was read); None when it states nothing."""
    wanted = values(text)
    if wanted:
        have = set().union(*(values(s) for s in sources)) if sources else set()
        found = len(wanted & have)
        # a number the sources do not give is made up: it halves what the others found
        share = found / len(wanted) if found == len(wanted) else 0.5 * found / len(wanted)
        return share, f"{found} of {len(wanted)} number(s) found"
    support = await _claim_support(judge, text, sources, question, lang)
    return None if support is None else (support, "claim support")


async def check_goal(
    judge: LocalJudge, messages: Sequence[ChatMessage], outcome: str | None, lang: str
) -> Verdict:
    requests = [m.content.strip() for m in messages if m.role == "user" and m.content.strip()]
    goal = " ".join(requests)
    replies = [m.content.strip() for m in messages if m.role == "assistant" and m.content.strip()]
    if not replies:
        return Verdict(goal, False, f"the agent gave no reply {MARK}", "", 0.0)
    answer = replies[-1]
    met = await _conversation.check_completeness(judge, [(m.role, m.content) for m in dialogue(messages)])
    parts: list[tuple[str, float]] = []
    if met:
        worst = min(met, key=lambda v: float(v.confidence or 0.0))
        parts.append(
            (f"requests met ({len(met)}; weakest: {worst.claim[:60]!r})", float(worst.confidence or 0.0))
        )
    else:  # no message reads as a request ("Email Dana that ..."): the whole of what was said
        assessed = await judge.assess_relevance(goal, answer, lang=lang)
        needs = 0.0 if assessed.noncommittal else float(assessed.details.get("needs_met", assessed.score))
        parts.append(("the last reply meets the request", needs))
    steps = tool_steps(messages)
    results = [readable(c) for s in steps if s.result for c in tool_result_contexts(s.result)]
    sources = [*results, *(s.call.show(400) for s in steps), *requests]
    said = " ".join(replies)
    if steps:
        held = await _holds(judge, said, sources, goal, lang)
        grounded, how = held if held is not None else (1.0, "nothing stated")
        failure = unresolved_failure(steps)
        if failure is not None and not _ADMITS_RE.search(answer):
            grounded = min(grounded, FAILED_CALL_CAP)
            how += f"; call {failure.index} ({failure.call.name}) failed and the reply does not say so"
        parts.append((f"grounded in the tool results ({how})", grounded))
    if outcome:
        held = await _holds(judge, outcome, [*replies, *results], goal, lang)
        if held is not None:
            parts.append((f"matches the expected outcome ({held[1]})", held[0]))
    weakest = min(p for _, p in parts)
    reason = "; ".join(f"{what} {p:.2f}" for what, p in parts)
    return Verdict(goal, weakest >= 0.5, f"{reason}: the weakest counts {MARK}", answer, weakest)


__all__ = ["check_goal", "readable", "unresolved_failure", "values"]
