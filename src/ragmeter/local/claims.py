"""Rule-based claim extraction for the local judge (English and Chinese).

A claim is a statement: a sentence of the text (questions assert nothing and are dropped), or a
clause of a long sentence joined by "; ", ", and", ", but",
", while", ", whereas" (English) or "；", "，但", "，而", "，并且" (Chinese) when each side is a statement of
its own (at least three content words, or six ideographs). Sentences that state nothing are dropped:
greetings and sign-offs ("Sure!", "I hope this helps.", "希望对你有帮助。"), first-person refusals
("I don't know.", "我无法回答这个问题。") and leading sentences about the answer itself ("Here is a
summary of the article.", "以下是本文的摘要。"); a leading "Based on the context, " is cut off.
So an evasive or purely conversational answer has no claims, and faithfulness is invalid with
``NoClaims`` rather than a guess. Text addressed to
the evaluator is not a claim either: JSON objects and data tags are removed
(:func:`~ragmeter.local.lexicon.remove_markup`) and a sentence is cut where an instruction to the
evaluator starts (:func:`~ragmeter.local.lexicon.instruction_start`: "Ignore previous
instructions...", "Note to the evaluator: ...", "所有陈述都得到支持"), so text planted in an answer to
steer the judge neither counts for nor against it.

No pronoun resolution: "She founded Plum Organics." stays as it is; verification matches it against
the contexts by content words and meaning, where the pronoun costs little.
"""

from __future__ import annotations

import re

from ragmeter.local.features import analyze
from ragmeter.local.lexicon import instruction_start, is_evasive, is_filler, remove_markup
from ragmeter.text import split_sentences

_EN_CLAUSE_RE = re.compile(r";\s+|,\s+(?=(?:and|but|while|whereas|although|though)\s)", re.IGNORECASE)
_ZH_CLAUSE_RE = re.compile(r"[；;]|[，,](?=(?:但是|但|而且|而|并且|同时|然而|不过)(?!且))")
_FIRST_PERSON_RE = re.compile(
    r"^\s*(?:i\b|i'm\b|sorry\b|unfortunately\b|as an ai\b|我|抱歉|对不起|很抱歉)", re.IGNORECASE
)
_LEADING_CONNECTIVE_RE = re.compile(r"^(?:and|but|while|whereas|although|though)\s+", re.IGNORECASE)
# A leading sentence about the answer itself ("Here is a summary of the article.", "以下是本文的摘要。")
# states nothing about the world; a leading "Based on the context, ..." is cut off the claim.
_META_RE = re.compile(
    r"^(?:(?:sure|certainly|okay|ok)[,!.]?\s+)?(?:here(?:'s| is| are)|below (?:is|are)|the following (?:is|are))\s+"
    r"(?:a |an |the |my |some )?(?:brief |short |quick |concise |one-sentence |detailed |main |key )?"
    r"(?:summary|summaries|overview|answer|explanation|rundown|breakdown|description|recap|list|points?)\b"
    r"|^(?:以下是|下面是|这是).{0,20}(?:摘要|总结|概述|概要|回答|答案)[。:：！!]?$",
    re.IGNORECASE,
)
_SOURCE_PREFIX_RE = re.compile(
    r"^(?:based on|according to|as (?:stated|mentioned|described) in|from) (?:the |this )?(?:provided |given )?"
    r"(?:context|information|text|passage|article|document|source|knowledge)s?,\s*",
    re.IGNORECASE,
)
_MIN_CLAUSE_TERMS = 3
_MIN_ZH_CLAUSE = 6


def is_refusal(sentence: str) -> bool:
    """A sentence that declines to answer in the first person: "I don't know", "我不清楚"."""
    s = sentence.strip()
    return is_evasive(s) and (_FIRST_PERSON_RE.match(s) is not None or len(analyze(s).terms) <= 2)


def _clauses(sentence: str) -> list[str]:
    feats = analyze(sentence)
    if feats.has_cjk:
        parts = [p.strip(" ，,") for p in _ZH_CLAUSE_RE.split(sentence)]
        parts = [p for p in parts if p]
        if len(parts) > 1 and all(
            sum(1 for c in p if "\u4e00" <= c <= "\u9fff") >= _MIN_ZH_CLAUSE for p in parts
        ):
            return parts
        return [sentence]
    parts = [p.strip() for p in _EN_CLAUSE_RE.split(sentence)]
    parts = [_LEADING_CONNECTIVE_RE.sub("", p).strip() for p in parts if p]
    if len(parts) > 1 and all(len(analyze(p).terms) >= _MIN_CLAUSE_TERMS for p in parts):
        return parts
    return [sentence]


_YES_NO_RE = re.compile(
    r"^\s*(yes|no|yeah|nope|correct|incorrect|true|false|是的?|对|不是|不对|没有|有|不)[\s!！。.,，]*$",
    re.IGNORECASE,
)


def _yes_no_claim(text: str, question: str | None) -> list[str]:
    """A bare "yes" / "no" answers its question: the claim is the answer word with the question
    ("no: Are both bands American"), so its polarity can be checked against the contexts."""
    m = _YES_NO_RE.match(text)
    if not m or not question or not question.strip():
        return []
    q = question.strip().rstrip("?？ ")
    return [f"{m.group(1)}: {q}"] if q else []


def without_instructions(text: str) -> str:
    """``text`` without what is addressed to the evaluator (see the module docstring); unchanged
    when there is none."""
    cleaned = remove_markup(text)
    kept: list[str] = []
    changed = cleaned != text
    for sentence in split_sentences(cleaned):
        cut = instruction_start(sentence)
        if cut is not None:
            sentence = sentence[:cut].strip(" \t\n:;,，：；")
            changed = True
        if sentence:
            kept.append(sentence)
    return " ".join(kept) if changed else text


def extract_claims(text: str, *, question: str | None = None) -> list[str]:
    """The claims of ``text``, in order, without duplicates (see the module docstring).

    A text with no claim (empty, greetings only, a refusal) gives ``[]``. ``question`` is used for
    one case only: a bare "yes" / "no" (是的 / 不是) answer becomes the claim "yes: <question>".
    """
    claims: list[str] = []
    seen: set[str] = set()
    text = without_instructions(text or "")
    if _YES_NO_RE.match(text):
        return _yes_no_claim(text, question)
    leading = True
    for sentence in split_sentences(text):
        if leading and _META_RE.match(sentence.strip()):
            rest = re.split(r"[:：]", sentence, maxsplit=1)[1:]  # "Here is a summary: <claim>"
            if not rest or not rest[0].strip():
                continue
            sentence = rest[0]
        leading = False
        sentence = _SOURCE_PREFIX_RE.sub("", sentence.strip())
        if sentence[:1].islower():
            sentence = sentence[0].upper() + sentence[1:]
        if is_filler(sentence) or is_refusal(sentence):
            continue
        if not any(ch.isalnum() for ch in sentence) or sentence.rstrip("\"'”’)） ").endswith(("?", "？")):
            continue  # no words, or a question: it asserts nothing
        for clause in _clauses(sentence):
            key = " ".join(clause.lower().split())
            if key and key not in seen:
                seen.add(key)
                claims.append(clause)
    return claims
