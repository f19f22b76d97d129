"""Text analysis for the local judge: content terms, numbers, entities, negation, antonyms.

Everything here is deterministic, pure Python and language-aware without a segmenter:

- English: lowercase words without stop words, lightly stemmed (``founded`` -> ``found``,
  ``companies`` -> ``company``) so inflections match; capitalised words are entity candidates.
- Chinese: overlapping character bigrams of each run of ideographs (the usual segmenter-free
  unit for matching Chinese), minus bigrams made only of function characters; ASCII words and
  numbers inside Chinese text are handled as in English.
- Numbers: digits (``1,000`` -> ``1000``, ``3.50`` -> ``3.5``) and English number words up to
  ninety; Chinese numerals of one to four characters (``三``, ``十二``, ``两千``).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from ragmeter.local.lexicon import (
    EN_ANTONYMS,
    EN_NEGATIONS,
    EN_STOPWORDS,
    ZH_ANTONYMS,
    ZH_NEGATION_EXCEPTIONS,
    ZH_NEGATIONS,
    ZH_STOPCHARS,
)
from ragmeter.text import is_cjk

_CJK_RUN_RE = re.compile(r"[\u3007\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_WORD_RE = re.compile(r"[A-Za-z][A-Za-z'’\-]*[A-Za-z]|[A-Za-z]|\d+(?:[.,]\d+)*")
_NUMBER_RE = re.compile(r"\d+(?:[.,]\d+)*")
_CAP_RE = re.compile(r"\b[A-Z][A-Za-z0-9\-]*[A-Za-z0-9]\b|\b[A-Z]\b")

_NUMBER_WORDS: dict[str, str] = {
    w: str(i)
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
        "fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
}
_NUMBER_WORDS.update({"thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70"})
_NUMBER_WORDS.update({"eighty": "80", "ninety": "90", "hundred": "100", "thousand": "1000"})
_NUMBER_WORDS.update({"twice": "2", "dozen": "12"})
del _NUMBER_WORDS["one"]  # mostly a pronoun ("one of the", "the one who")

_ZH_DIGITS = {
    "零": 0,
    "〇": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
_ZH_UNITS = {"十": 10, "百": 100, "千": 1000, "万": 10000}
_ZH_NUM_RE = re.compile(r"[零〇一二两三四五六七八九十百千万]{1,6}")
# Arabic digits with a Chinese unit: 5700万 (57,000,000), 3.5亿, 5千
_MIXED_NUM_RE = re.compile(r"(\d+(?:\.\d+)?)([十百千万亿]+)")
_ZH_MULTIPLIERS = {**_ZH_UNITS, "亿": 100_000_000}
# Ideographs that follow a Chinese numeral when it really is a count or a date part.
_ZH_COUNTERS = "个年月日号岁次位名人种件天元米公里吨倍条座家所项届本张只头匹架辆层周点分秒"


def _stem(word: str) -> str:
    w = word
    # plurals and 3rd person -s
    if len(w) > 4 and w.endswith("ies"):
        w = w[:-3] + "y"
    elif len(w) > 4 and w.endswith("sses"):
        w = w[:-2]
    elif len(w) > 4 and w.endswith("es") and (w[-3] in "xz" or w[-4:-2] in ("sh", "ch", "ss")):
        w = w[:-2]
    elif len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    # -ing, -ed, -ly
    if len(w) > 5 and w.endswith("ing"):
        w = w[:-3]
        if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "ls":
            w = w[:-1]
    elif len(w) > 4 and w.endswith("ied"):
        w = w[:-3] + "y"
    elif len(w) > 4 and w.endswith("ed"):
        w = w[:-2]
        if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "ls":
            w = w[:-1]
    elif len(w) > 4 and w.endswith("ly"):
        w = w[:-2]
    # a final silent e: combine / combined / combining -> combin
    if len(w) > 4 and w.endswith("e"):
        w = w[:-1]
    return w


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Light English stemming, enough to match inflections (cached)."""
    return _stem(word.lower())


def _norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text)


def _zh_number(s: str) -> int | None:
    if all(c in _ZH_DIGITS for c in s):
        if len(s) == 1:
            return _ZH_DIGITS[s]
        return int("".join(str(_ZH_DIGITS[c]) for c in s))  # 二〇二三 -> 2023
    total, section, digit = 0, 0, None
    for c in s:
        if c in _ZH_DIGITS:
            digit = _ZH_DIGITS[c]
        elif c in _ZH_UNITS:
            unit = _ZH_UNITS[c]
            if unit == 10000:
                total += ((section + (digit or 0)) or 1) * unit  # 万 alone: ten thousand
                section, digit = 0, None
            else:
                section += (1 if digit is None else digit) * unit
                digit = None
        else:
            return None
    return total + section + (digit or 0)


def _canon_number(raw: str) -> str:
    s = raw.replace(",", "")
    if s.count(".") > 1:
        return raw  # 1.2.3: a version or a date, compared as written
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    s = s.lstrip("0") or "0"
    return s


@dataclass(frozen=True)
class TextFeatures:
    """What the local judge reads off one text."""

    terms: frozenset[str]  # content terms (stems / bigrams)
    term_list: tuple[str, ...]  # in order, with repeats
    numbers: frozenset[str]
    entities: frozenset[str]  # stems of capitalised words (English only)
    negated: bool
    n_tokens: int  # words + ideographs, a length measure
    has_cjk: bool


_NEXT_WORD_RE = re.compile(r"\s+([A-Za-z])")


def _sentence_initial(text: str, start: int) -> bool:
    before = text[:start].rstrip(" \"'“‘([")
    return not before or before[-1] in ".!?:;\n"


def _looks_like_name(word: str, text: str, end: int) -> bool:
    """A sentence-initial word is a name when it has an inner capital or is all caps (PharmaCann,
    NASA), or when the next word is capitalised too (Gigi Lee Chang)."""
    if any(c.isupper() for c in word[1:]):
        return True
    m = _NEXT_WORD_RE.match(text, end)
    return m is not None and m.group(1).isupper()


def _has_zh_negation(text: str) -> bool:
    s = text
    for exc in ZH_NEGATION_EXCEPTIONS:
        s = s.replace(exc, "")
    return any(n in s for n in ZH_NEGATIONS)


@lru_cache(maxsize=65536)
def analyze(text: str) -> TextFeatures:
    """Content terms, numbers, entities and negation of ``text`` (cached; texts repeat a lot)."""
    s = _norm(text)
    terms: list[str] = []
    numbers: set[str] = set()
    entities: set[str] = set()
    negated = False
    n_tokens = 0
    # ASCII part: words and numbers
    for mm in _MIXED_NUM_RE.finditer(s):  # 5700万: one number, 57000000
        value = float(mm.group(1))
        for c in mm.group(2):
            value *= _ZH_MULTIPLIERS[c]
        number = _canon_number(f"{value:.6f}")
        numbers.add(number)
        terms.append(number)
    ascii_part = _CJK_RUN_RE.sub(" ", _MIXED_NUM_RE.sub(" ", s))
    for m in _WORD_RE.finditer(ascii_part):
        tok = m.group(0)
        n_tokens += 1
        if tok[0].isdigit():
            numbers.add(_canon_number(tok))
            terms.append(_canon_number(tok))
            continue
        low = tok.lower().replace("’", "'")
        flat = low.replace("'", "")
        if flat in EN_NEGATIONS or low.endswith("n't"):
            negated = True
        if low in _NUMBER_WORDS:
            numbers.add(_NUMBER_WORDS[low])
        if low in EN_STOPWORDS or flat in EN_STOPWORDS or flat in EN_NEGATIONS:
            continue
        if "-" in low:
            for part in low.split("-"):
                if part and part not in EN_STOPWORDS:
                    terms.append(stem(part))
        else:
            terms.append(stem(flat))
    for m in _CAP_RE.finditer(ascii_part):
        word = m.group(0)
        low = word.lower()
        if low in EN_STOPWORDS or low in _NUMBER_WORDS or len(word) < 2:
            continue
        if _sentence_initial(ascii_part, m.start()) and not _looks_like_name(word, ascii_part, m.end()):
            continue  # "Plants capture light": capitalised because it starts the sentence
        entities.add(stem(low.replace("-", "")) if "-" not in low else low)
    # Chinese part: bigrams, numerals, negation
    has_cjk = False
    for m in _CJK_RUN_RE.finditer(s):
        run = m.group(0)
        has_cjk = True
        n_tokens += len(run)
        if len(run) == 1:
            if run not in ZH_STOPCHARS:
                terms.append(run)
        for i in range(len(run) - 1):
            bg = run[i : i + 2]
            if bg[0] in ZH_STOPCHARS and bg[1] in ZH_STOPCHARS:
                continue
            terms.append(bg)
        for nm in _ZH_NUM_RE.finditer(run):
            if (
                m.start() + nm.start() > 0
                and s[m.start() + nm.start() - 1].isdigit()
                and all(c in _ZH_UNITS for c in nm.group(0))
            ):
                continue  # the unit of 5700万: read with its digits below
            end = nm.end()
            nxt = run[end] if end < len(run) else ""
            val = _zh_number(nm.group(0))
            if val is not None and (nxt in _ZH_COUNTERS or len(nm.group(0)) >= 2):
                numbers.add(str(val))
    if has_cjk and _has_zh_negation(s):
        negated = True
    return TextFeatures(
        terms=frozenset(terms),
        term_list=tuple(terms),
        numbers=frozenset(numbers),
        entities=frozenset(entities),
        negated=negated,
        n_tokens=n_tokens,
        has_cjk=has_cjk,
    )


def antonym_conflict(
    claim: TextFeatures, claim_text: str, evidence: TextFeatures, evidence_text: str
) -> bool:
    """The claim uses a word whose opposite is in the evidence, and the evidence lacks the word."""
    for term in claim.terms:
        opposites = EN_ANTONYMS.get(term)
        if opposites and term not in evidence.terms and any(o in evidence.terms for o in opposites):
            return True
    # stop-word antonyms (before/after, more/less...) are not terms: look at the raw words
    cw = set(re.findall(r"[a-z]+", claim_text.lower()))
    ew = set(re.findall(r"[a-z]+", evidence_text.lower()))
    for w in cw:
        opposites = EN_ANTONYMS.get(w)
        if opposites and w not in ew and any(o in ew for o in opposites):
            return True
    if claim.has_cjk:
        for word, opposites in ZH_ANTONYMS.items():
            if (
                word in claim_text
                and word not in evidence_text
                and any(o in evidence_text for o in opposites)
            ):
                return True
    return False


def coverage(claim_terms: frozenset[str], pool: frozenset[str] | set[str]) -> float:
    """Share of ``claim_terms`` found in ``pool`` (1.0 for a claim without content terms)."""
    if not claim_terms:
        return 1.0
    return sum(1 for t in claim_terms if t in pool) / len(claim_terms)


def is_mostly_cjk(text: str) -> bool:
    n = sum(1 for c in text if is_cjk(c))
    return n > 0 and n >= 0.3 * len(text.replace(" ", ""))
