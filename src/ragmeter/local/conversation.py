"""The local judge's conversation steps: what rules, embeddings and the relevance assessment can
judge of a conversation, and nothing more (docs/conversations.md).

- ``rate_turn_relevance``: each reply against its exchange's user message made standalone with the
  earlier dialogue (:mod:`ragmeter.local.standalone`), by the local ``assess_relevance``
  (information needs met, padding, evasion); ``confidence`` is that score, ``ok`` is score >= 0.5.
  A user message that asks for nothing (a greeting, thanks, a statement such as "I use a
  wheelchair": not a request, see below) has nothing to address: any reply to it counts as relevant.
- ``check_completeness``: the user's requests are their messages that ask for something (a
  question mark, a question word, a request such as "can you", "please", "tell me", 请, 帮我, 介绍,
  吗, 什么...); each is met to the degree of the best ``assess_relevance`` of a later reply to the
  request made standalone; ``supported`` is that score >= 0.5.
- ``check_retention``: the user's facts are their first-person statements that are not questions
  ("I use a wheelchair", "my budget is 500 euros", "我对花生过敏"); a reply forgets one when it
  *restates it otherwise* -- a sentence addressed to the user ("you", "your", 你, 您) that shares
  content terms with the fact and gives another number of the same thing ("5 children" for "2
  children", "500 euros" for "300 euros"), or none of the fact's numbers, or negates what the fact
  affirms (or the reverse) --
  or names another place or person in a statement that shares the fact's other words ("since you
  live in the United States" after "I live in Canada") --
  or *asks for it again*: a question to the user that shares a content term with the fact and is
  not far from it (cosine >= :data:`REASK_SIMILARITY`): "What is your budget?" after "my budget is
  300 euros". An offer of help ("How can I help with your tent?", "有什么可以帮您") asks for nothing.

What it cannot judge: a reply that contradicts a fact by implication ("take the stairs" to a user
in a wheelchair), relevance that needs world knowledge, and any role (``check_role_adherence`` is not
a step of the local judge: role adherence needs an LLM judge).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ragmeter.judges.base import Exchange, RetentionCheck, TurnVerdict, UserFact, Verdict, exchanges
from ragmeter.local.features import analyze
from ragmeter.local.standalone import standalone_question
from ragmeter.statements import is_filler
from ragmeter.text import detect_lang, split_sentences

if TYPE_CHECKING:
    from ragmeter.local.judge import LocalJudge

MARK = "(local judge)"
#: a reply's question to the user that shares a content term with a user fact and is at least this
#: close to it (cosine; a question and the statement answering it are far apart in embedding space:
#: "What is your budget?" / "My budget is 300 euros." 0.45) asks for it again
REASK_SIMILARITY = 0.2

_FIRST_PERSON_EN = re.compile(
    r"\b(?:i|i'm|i am|i've|i have|i'd|my|mine|we|we're|we are|our)\b", re.IGNORECASE
)
_FIRST_PERSON_ZH = re.compile(r"我")
_SECOND_PERSON_EN = re.compile(r"\b(?:you|your|you're|yours)\b", re.IGNORECASE)
_SECOND_PERSON_ZH = re.compile(r"[你您]")
_QUESTION_EN = re.compile(
    r"\?\s*$|^\s*(?:what|which|who|whom|whose|when|where|why|how|is|are|was|were|do|does|did|can|could|"
    r"will|would|should|may|shall)\b",
    re.IGNORECASE,
)
_REQUEST_EN = re.compile(
    r"\b(?:can you|could you|would you|will you|please|tell me|show me|give me|help me|find|recommend|"
    r"suggest|explain|describe|list|compare|book|i want|i need|i'd like|i would like|let me know)\b",
    re.IGNORECASE,
)
_REQUEST_ZH = re.compile(
    r"[？?]|吗|呢|什么|怎么|怎样|如何|哪|谁|几|多少|是否|请|帮我|帮忙|介绍|推荐|告诉我|想知道|需要|想要"
)


def _pairs(history: Sequence[Exchange]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for ex in history:
        out.append(("user", ex.user))
        if ex.assistant:
            out.append(("assistant", ex.assistant))
    return out


def _standalone(items: Sequence[Exchange], k: int) -> str:
    """The user's message of exchange ``k`` (0-based) made standalone with the exchanges before it."""
    return standalone_question(items[k].user, _pairs(items[:k]))


_OFFER_RE = re.compile(
    r"^\s*(?:how|what)\s+(?:can|could|may|shall)\s+i\s+(?:help|assist|do)\b|^\s*(?:can|could|may|shall)\s+i\s+"
    r"(?:help|assist)\b|\banything else\b|^\s*would you like\b|有什么(?:可以|能)?(?:帮|为)|需要(?:我)?帮",
    re.IGNORECASE,
)


def is_request(text: str) -> bool:
    """A user message that asks for something (see the module docstring)."""
    s = text.strip()
    if not s or is_filler(s):
        return False
    if detect_lang(s) == "zh":
        return bool(_REQUEST_ZH.search(s))
    return bool(_QUESTION_EN.search(s) or _REQUEST_EN.search(s))


def _is_question(sentence: str) -> bool:
    s = sentence.strip()
    return s.endswith(("?", "？")) or (
        detect_lang(s) == "zh" and bool(re.search(r"吗[。！]?$|呢[。！]?$", s))
    )


def user_facts(items: Sequence[Exchange]) -> list[UserFact]:
    """First-person statements of the user that are not questions, with their exchange (1-based)."""
    facts = []
    for k, ex in enumerate(items, 1):
        for sentence in split_sentences(ex.user) or [ex.user]:
            s = sentence.strip()
            if not s or is_filler(s) or _is_question(s):
                continue
            zh = detect_lang(s) == "zh"
            if (_FIRST_PERSON_ZH if zh else _FIRST_PERSON_EN).search(s):
                facts.append(UserFact(k, s))
    return facts


async def rate_turn_relevance(judge: LocalJudge, dialogue: Sequence[tuple[str, str]]) -> list[TurnVerdict]:
    items = exchanges(dialogue)
    out = []
    for k, ex in enumerate(items):
        if not ex.assistant:
            continue
        if not is_request(ex.user):
            why = "small talk" if is_filler(ex.user) else "a statement that asks for nothing"
            out.append(
                TurnVerdict(k + 1, True, f"the user's message is {why}: nothing to address {MARK}", 1.0)
            )
            continue
        question = _standalone(items, k)
        assessed = await judge.assess_relevance(question, ex.assistant)
        score = float(assessed.score)
        out.append(TurnVerdict(k + 1, score >= 0.5, f'for "{question[:80]}": {assessed.reason}', score))
    return out


async def check_completeness(judge: LocalJudge, dialogue: Sequence[tuple[str, str]]) -> list[Verdict]:
    items = exchanges(dialogue)
    out = []
    for k, ex in enumerate(items):
        if not is_request(ex.user):
            continue
        request = _standalone(items, k)
        replies = [(j + 1, later.assistant) for j, later in enumerate(items[k:], k) if later.assistant]
        best, where, why = 0.0, None, "no reply after it"
        for j, reply in replies:
            assessed = await judge.assess_relevance(request, reply)
            if assessed.score > best or where is None:
                best, where, why = float(assessed.score), j, assessed.reason
        reason = f"best met by reply {where}: {why}" if where is not None else f"{why} {MARK}"
        out.append(Verdict(request, best >= 0.5, reason, "", best))
    return out


_EN_COUNT_RE = re.compile(r"(\d+(?:[.,]\d+)?)\s+([A-Za-z]{3,})")
_ZH_COUNT_RE = re.compile(
    r"(\d+(?:\.\d+)?|[一二两三四五六七八九十百千万]+)\s*[个位名只条本件张家次]?([\u4e00-\u9fff]{2})"
)


def counts(text: str) -> dict[str, set[str]]:
    """What each number of ``text`` counts: ``{"child": {"2"}, "euro": {"300"}}`` ("2 children",
    "300 euros"; Chinese "2个孩子", "300欧元")."""
    out: dict[str, set[str]] = {}
    for number, unit in _EN_COUNT_RE.findall(text):
        key = unit.lower()
        key = key[:-3] + "y" if key.endswith("ies") else key[:-2] if key.endswith("ren") else key.rstrip("s")
        out.setdefault(key, set()).add(number.replace(",", ""))
    for number, unit in _ZH_COUNT_RE.findall(text):
        out.setdefault(unit, set()).add(number)
    return out


def _conflict(fact: str, sentence: str) -> str | None:
    """How ``sentence`` (addressed to the user) restates ``fact`` otherwise, or None: a number of
    the same thing that differs ("5 children" for "2 children"), or a negation the other lacks."""
    f, s = analyze(fact), analyze(sentence)
    shared = (f.terms - f.numbers) & (s.terms - s.numbers)
    if not shared:
        return None
    fc, sc = counts(fact), counts(sentence)
    for unit in fc.keys() & sc.keys():
        if not fc[unit] & sc[unit] and shared - {unit, unit + "s"}:
            return f"gives {', '.join(sorted(sc[unit]))} {unit} where the user said {', '.join(sorted(fc[unit]))}"
    if f.numbers and s.numbers and not (f.numbers & s.numbers):
        return f"gives {', '.join(sorted(s.numbers))} where the user said {', '.join(sorted(f.numbers))}"
    if f.negated != s.negated:
        return "negates what the user said" if s.negated else "affirms what the user denied"
    if f.entities and s.entities and not f.entities & s.entities and shared - f.entities - s.entities:
        # the same statement with another name: "you live in the United States" for "I live in Canada"
        return "names another place or person than the user did"
    return None


async def check_retention(judge: LocalJudge, dialogue: Sequence[tuple[str, str]]) -> RetentionCheck:
    items = exchanges(dialogue)
    facts = user_facts(items)
    verdicts = []
    fact_vecs: np.ndarray | None = None
    if facts:
        fact_vecs = await judge._embed([f.fact for f in facts])
    for k, ex in enumerate(items, 1):
        if not ex.assistant:
            continue
        known = [(i, f) for i, f in enumerate(facts) if f.turn <= k]  # stated before the reply
        found: list[str] = []
        sentences = [s.strip() for s in split_sentences(ex.assistant) or [ex.assistant] if s.strip()]
        addressed = [
            s
            for s in sentences
            if (_SECOND_PERSON_ZH if detect_lang(s) == "zh" else _SECOND_PERSON_EN).search(s)
        ]
        for _, fact in known:
            for s in addressed:
                why = _conflict(fact.fact, s)
                if why:
                    found.append(f'"{s[:80]}" {why} ("{fact.fact[:80]}")')
        # an offer of help is no question about the user's facts ("How can I help with your tent?")
        questions = [s for s in addressed if _is_question(s) and not _OFFER_RE.search(s)]
        if questions and known and fact_vecs is not None:
            q_vecs = await judge._embed(questions)
            sims = q_vecs @ fact_vecs[[i for i, _ in known]].T
            for qi, q in enumerate(questions):
                for fi, (_, fact) in enumerate(known):
                    shared = analyze(q).terms & analyze(fact.fact).terms
                    if float(sims[qi, fi]) >= REASK_SIMILARITY and shared:
                        found.append(f'asks again "{q[:80]}" though the user said "{fact.fact[:80]}"')
        if found:
            verdicts.append(TurnVerdict(k, False, "; ".join(found[:3]) + f" {MARK}", 0.0))
        else:
            verdicts.append(
                TurnVerdict(k, True, f"no restated fact conflicts, nothing asked again {MARK}", 1.0)
            )
    return RetentionCheck(tuple(facts), tuple(verdicts))


__all__ = [
    "REASK_SIMILARITY",
    "check_completeness",
    "check_retention",
    "is_request",
    "rate_turn_relevance",
    "user_facts",
]
