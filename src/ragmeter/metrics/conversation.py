"""Per-conversation metrics: knowledge retention, relevancy, completeness, role adherence.

Each scores a conversation sample (``level = "conversation"``: its ``messages``), with ONE judge
call per conversation. The conversation is read as its dialogue -- the user and assistant messages
with text, as numbered exchanges (:func:`ragmeter.judges.base.exchanges`: exchange ``k`` is the
user's message and the assistant's reply); system and tool messages are not part of it (the role
adherence step gets the system messages as the role). DeepEval has metrics of these names; the
algorithms here are ragmeter's own (docs/metrics.md, "Conversation metrics").

A turn verdict counts as its ``confidence`` when the judge gives one (the local judge's relevance
score) and as 1 / 0 otherwise (an LLM judge), so each score below is a mean of values in [0, 1].
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from ragmeter.dataset.messages import dialogue
from ragmeter.metrics._common import check_lang, resolve_lang
from ragmeter.metrics.base import Metric, Score, register_metric

if TYPE_CHECKING:
    from ragmeter.dataset.sample import Sample
    from ragmeter.judges.base import Judge, TurnVerdict, Verdict


def _dialogue(sample: Sample) -> list[tuple[str, str]]:
    return [(m.role, m.content) for m in dialogue(sample.messages)]


def _value(v: TurnVerdict | Verdict) -> float:
    """A verdict's confidence when the judge gives one, else 1 / 0 by its decision."""
    ok = getattr(v, "ok", None)
    if ok is None:
        ok = getattr(v, "supported", False)
    c = v.confidence
    return float(c) if c is not None else (1.0 if ok else 0.0)


def _rows(verdicts: list[TurnVerdict]) -> list[dict[str, Any]]:
    return [v.to_dict() for v in verdicts]


class _ConversationMetric(Metric):
    level = "conversation"
    requires: ClassVar[tuple[str, ...]] = ("messages",)

    def __init__(self, lang: str = "auto") -> None:
        self.lang = check_lang(lang)

    def params(self) -> dict[str, Any]:
        return {"lang": self.lang}

    def _lang(self, turns: list[tuple[str, str]]) -> str:
        return resolve_lang(self.lang, *(t for r, t in turns if r == "user"))


def _no_replies(turns: list[tuple[str, str]]) -> Score | None:
    if not any(r == "assistant" for r, _ in turns):
        return Score.invalid("NoTurns", "the conversation has no assistant reply to judge")
    return None


def _exchange_mean(
    verdicts: list[TurnVerdict], keeps: str, off: str, lang: str, **details: Any
) -> Score:
    """The mean of one verdict per answered exchange, its reason ("3 of 4 replies <keeps>; <off>
    exchange(s) 2") and details (``details`` first, then the verdicts, their count and the language)."""
    if not verdicts:
        return Score.invalid("NoTurns", "no exchange has both a user message and a reply")
    missed = [v.turn for v in verdicts if not v.ok]
    reason = f"{len(verdicts) - len(missed)} of {len(verdicts)} replies {keeps}"
    if missed:
        reason += f"; {off} exchange(s) {', '.join(map(str, missed))}"
    return Score(
        value=sum(_value(v) for v in verdicts) / len(verdicts),
        reason=reason,
        details={**details, "turns": _rows(verdicts), "n_turns": len(verdicts), "lang": lang},
    )


@register_metric("conversation_relevancy")
class ConversationRelevancy(_ConversationMetric):
    """Does each reply address what the user said in its exchange, read with the conversation
    before it?

    Inputs: ``messages``. Judge calls: 1 -- ``rate_turn_relevance(dialogue)``: one verdict per
    answered exchange (LLM: relevant yes/no, small talk answered in kind counts as relevant; local
    judge: the relevance assessment of the reply against the user's message made standalone).

        conversation_relevancy = mean over answered exchanges of r_k

    Invalid: no assistant reply (``NoTurns``); a verdict missing or for an exchange that does not
    exist (``JudgeOutputError``).
    """

    name = "conversation_relevancy"
    steps = ("rate_turn_relevance",)

    async def score(self, sample: Sample, judge: Judge) -> Score:
        turns = _dialogue(sample)
        bad = _no_replies(turns)
        if bad is not None:
            return bad
        lang = self._lang(turns)
        verdicts = await judge.rate_turn_relevance(turns, lang=lang)
        return _exchange_mean(verdicts, "address their exchange", "off:", lang)


@register_metric("knowledge_retention")
class KnowledgeRetention(_ConversationMetric):
    """Do the replies keep what the user stated earlier (no contradiction, no asking again)?

    Inputs: ``messages``. Judge calls: 1 -- ``check_retention(dialogue)``: the facts the user states
    about themselves or their situation, each with its exchange, and one verdict per answered
    exchange (retained: the reply neither contradicts a fact stated before it -- in an earlier
    exchange or its own -- nor asks for one again; asking to confirm is not forgetting).

        knowledge_retention = mean of r_k over the answered exchanges k >= the first fact's exchange

    Invalid: the user states no fact before a reply (``NoFacts``: nothing to retain, so no score; a
    1.0 would count conversations that never tested retention), no reply (``NoTurns``), a verdict
    missing or out of range (``JudgeOutputError``).
    """

    name = "knowledge_retention"
    steps = ("check_retention",)

    async def score(self, sample: Sample, judge: Judge) -> Score:
        turns = _dialogue(sample)
        bad = _no_replies(turns)
        if bad is not None:
            return bad
        lang = self._lang(turns)
        check = await judge.check_retention(turns, lang=lang)
        facts = [{"turn": f.turn, "fact": f.fact} for f in check.facts]
        if not check.facts:
            return Score.invalid(
                "NoFacts",
                "the user states no fact about themselves or their situation: nothing to retain",
                details={"facts": [], "turns": _rows(list(check.verdicts)), "lang": lang},
            )
        first = min(f.turn for f in check.facts)
        judged = [v for v in check.verdicts if v.turn >= first]
        if not judged:
            return Score.invalid(
                "NoFacts",
                "no reply follows the user's first fact: nothing could be forgotten",
                details={"facts": facts, "turns": _rows(list(check.verdicts)), "lang": lang},
            )
        return _exchange_mean(
            judged, "after the user's facts keep them", "forgotten in", lang, facts=facts, n_facts=len(facts)
        )


@register_metric("conversation_completeness")
class ConversationCompleteness(_ConversationMetric):
    """Were the user's requests met by the end of the conversation?

    Inputs: ``messages``. Judge calls: 1 -- ``check_completeness(dialogue)``: each request the user
    makes (a question, a task, something to find; several in one message are separate; greetings,
    thanks and statements are not requests) and whether some reply met it (LLM: yes/no; a refusal,
    an evasion or an unkept promise is not meeting it; local judge: the best relevance assessment of
    a later reply to the request).

        conversation_completeness = mean over requests of met_j

    Invalid: the user makes no request (``NoRequests``), no reply (``NoTurns``).
    """

    name = "conversation_completeness"
    steps = ("check_completeness",)

    async def score(self, sample: Sample, judge: Judge) -> Score:
        turns = _dialogue(sample)
        bad = _no_replies(turns)
        if bad is not None:
            return bad
        lang = self._lang(turns)
        requests = await judge.check_completeness(turns, lang=lang)
        if not requests:
            return Score.invalid("NoRequests", "the user makes no request: nothing to complete")
        unmet = [r.claim for r in requests if not r.supported]
        reason = f"{len(requests) - len(unmet)} of {len(requests)} requests met"
        if unmet:
            reason += "; unmet: " + "; ".join(f'"{u[:60]}"' for u in unmet[:3])
        rows = [
            {"request": r.claim, "met": r.supported, "reason": r.reason, "confidence": r.confidence}
            for r in requests
        ]
        return Score(
            value=sum(_value(r) for r in requests) / len(requests),
            reason=reason,
            details={"requests": rows, "n_requests": len(rows), "lang": lang},
        )


@register_metric("role_adherence")
class RoleAdherence(_ConversationMetric):
    """Does each reply keep the role the conversation's system message gives the assistant?

    Inputs: ``messages`` with a system message (``system_prompt``: the text of the system messages;
    DeepEval's ``chatbot_role`` is one); a conversation without one is skipped. Judge calls: 1 --
    ``check_role_adherence(role, dialogue)``: one verdict per answered exchange (persona, tone, the
    topics and rules the role sets). LLM judges only: the local judge cannot judge a role, and a run
    of it with the local judge is refused before any call.

        role_adherence = mean over answered exchanges of in_role_k

    Invalid: no reply (``NoTurns``), a verdict missing or out of range (``JudgeOutputError``).
    """

    name = "role_adherence"
    requires = ("messages", "system_prompt")
    steps = ("check_role_adherence",)

    async def score(self, sample: Sample, judge: Judge) -> Score:
        turns = _dialogue(sample)
        bad = _no_replies(turns)
        if bad is not None:
            return bad
        lang = self._lang(turns)
        role = sample.system_prompt
        verdicts = await judge.check_role_adherence(role, turns, lang=lang)
        return _exchange_mean(verdicts, "keep the role", "out of role:", lang, role=role)


__all__ = ["ConversationCompleteness", "ConversationRelevancy", "KnowledgeRetention", "RoleAdherence"]
