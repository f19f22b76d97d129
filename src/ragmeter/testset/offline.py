"""Offline test-set questions: cloze (fill-in-the-blank) questions with an answer span.

Without an LLM nothing can write natural questions, so this mode is deliberately simple and marked
as such (``metadata.generator = "offline-cloze"``): from a chunk's sentences it picks ones holding
an answer span — a date, a number (with its unit) or a named entity — blanks the span out, and
keeps the span as the reference answer. The chunk is the reference context.

Spans, in order of preference:

- English: dates ("14 July 1789", "March 2020", "1889"), numbers with a unit or scale word
  ("330 metres", "3.5 million", "40%"), then capitalised multi-word names not at the start of the
  sentence ("World's Fair", "Gustave Eiffel").
- Chinese: dates (1889年, 1949年10月1日), numbers with a unit (330米, 3.5亿, 40%), titles in
  《》 and quoted terms in “” or 「」.

These questions test retrieval (is the chunk found?) and extractive answering; they say nothing
about reasoning. Use an LLM judge for natural questions.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from ragmeter.testset.chunking import Chunk
from ragmeter.text import split_sentences

__all__ = ["GENERATOR_NAME", "ClozeQuestion", "cloze_questions", "find_spans"]

GENERATOR_NAME = "offline-cloze"
BLANK = "_____"

_MONTHS = (
    "January|February|March|April|May|June|July|August|September|October|November|December|"
    "Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec"
)
_EN_DATE = re.compile(
    rf"\b(?:\d{{1,2}}\s+(?:{_MONTHS})\.?\s+\d{{4}}|(?:{_MONTHS})\.?\s+\d{{1,2}},\s*\d{{4}}|"
    rf"(?:{_MONTHS})\.?\s+\d{{4}}|(?:1[0-9]|20)\d{{2}}s?)\b"
)
_UNITS = (
    "percent|per cent|metres|meters|metre|meter|kilometres|kilometers|km|cm|mm|kg|tonnes|tons|grams|"
    "years|months|days|hours|minutes|seconds|degrees|million|billion|thousand|hundred|people|"
    "employees|pages|times|bytes|KB|MB|GB|TB|GHz|MHz|mph|miles|feet|litres|liters|dollars|euros"
)
_EN_NUMBER = re.compile(rf"(?:[$€£]\s?)?\b\d[\d,]*(?:\.\d+)?(?:\s?%|\s(?:{_UNITS})\b)?")
_EN_ENTITY = re.compile(
    r"(?<![.!?]\s)(?<!^)\b(?:[A-Z][a-z'’]+|[A-Z]{2,})(?:\s+(?:of\s+|the\s+)?(?:[A-Z][a-z'’]+|[A-Z]{2,}))+"
)
_ZH_DATE = re.compile(r"\d{3,4}年(?:\d{1,2}月(?:\d{1,2}日)?)?|\d{1,2}月\d{1,2}日")
_ZH_NUMBER = re.compile(
    r"\d+(?:\.\d+)?\s?(?:%|％|万|亿|千|百|米|公里|千米|厘米|毫米|公斤|千克|吨|克|个|人|年|天|小时|分钟|秒|度|倍|元|美元|页|名|座|种|项|次)"
)
_ZH_QUOTED = re.compile(r"《[^》]{1,30}》|“[^”]{2,20}”|「[^」]{2,20}」")
_SPAN_KINDS = ("date", "number", "entity")


@dataclass(frozen=True)
class ClozeQuestion:
    question: str
    answer: str
    sentence: str
    span_kind: str  # "date", "number" or "entity"


def find_spans(sentence: str, lang: str) -> list[tuple[str, str]]:
    """Answer spans in ``sentence`` as (kind, text), most preferred first."""
    if lang == "zh":
        patterns = [("date", _ZH_DATE), ("number", _ZH_NUMBER), ("entity", _ZH_QUOTED)]
    else:
        patterns = [("date", _EN_DATE), ("number", _EN_NUMBER), ("entity", _EN_ENTITY)]
    out: list[tuple[str, str]] = []
    taken: list[tuple[int, int]] = []
    for kind, pattern in patterns:
        for m in pattern.finditer(sentence):
            start, end = m.span()
            text = m.group(0).strip()
            if not text or any(start < e and s < end for s, e in taken):
                continue
            if kind == "number" and not re.search(r"\d", text):
                continue
            taken.append((start, end))
            out.append((kind, text))
    return out


def _question(sentence: str, span: str, lang: str, title: str) -> str:
    blanked = sentence.replace(span, BLANK, 1)
    if lang == "zh":
        about = f"（出自《{title}》）" if title else ""
        return f"填空{about}：{blanked}"
    about = f" (from “{title}”)" if title else ""
    return f"Fill in the blank{about}: {blanked}"


def cloze_questions(chunk: Chunk, n: int, *, rng: random.Random | None = None) -> list[ClozeQuestion]:
    """Up to ``n`` cloze questions from different sentences of ``chunk``."""
    rng = rng or random.Random(0)
    candidates: list[ClozeQuestion] = []
    for sentence in split_sentences(chunk.text):
        if len(sentence) < 20 or len(sentence) > 400:
            continue
        spans = find_spans(sentence, chunk.lang)
        if not spans:
            continue
        rank = min(_SPAN_KINDS.index(k) for k, _ in spans)
        best = [s for s in spans if _SPAN_KINDS.index(s[0]) == rank]
        kind, span = best[rng.randrange(len(best))]
        if len(span) >= len(sentence) * 0.6:
            continue
        candidates.append(
            ClozeQuestion(_question(sentence, span, chunk.lang, chunk.title), span, sentence, kind)
        )
    candidates.sort(key=lambda c: _SPAN_KINDS.index(c.span_kind))
    return candidates[:n]
