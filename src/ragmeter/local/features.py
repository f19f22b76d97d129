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
#: a score ("2-0", "3–2"): the nil of a score is a number the source rarely writes ("from two
#: goals down", "a clean sheet"), so it is not one of the text's numbers
_SCORE_RE = re.compile(r"(?<![\d.,\-–])(\d{1,2})[-–](\d{1,2})(?![\d\-–]|[.,]\d)")
#: negations that state what is not known yet, not that something is not so: "the cause is not
#: yet known" says what "it is too early to say what caused it" says
_UNKNOWN_RE = re.compile(
    r"(?:\bnot|n['’]t)\s+(?:yet\s+)?(?:been\s+)?(?:made\s+)?"
    r"(?:known|clear|certain|decided|determined|disclosed)\b",
    re.IGNORECASE,
)
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
_NUMBER_WORDS.update({"twice": "2", "dozen": "12", "fortnight": "2"})  # a fortnight: two weeks
del _NUMBER_WORDS["one"]  # mostly a pronoun ("one of the", "the one who")
_TENS = {w: _NUMBER_WORDS[w] for w in "twenty thirty forty fifty sixty seventy eighty ninety".split()}
_UNITS = {w: i for i, w in enumerate("_ one two three four five six seven eight nine".split()) if i}
# ordinals from "third" on ("sixteenth century" = "16th century"; "first" and "second" are mostly
# not counts: "first released", "a second time")
_NUMBER_WORDS.update(
    {
        w: str(i)
        for i, w in enumerate(
            "_ _ _ third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth "
            "fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth".split()
        )
        if i >= 3
    }
)

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
_ZH_NUM_RE = re.compile(r"[零〇一二两三四五六七八九十百千万]{1,12}")
# a percentage in words: 百分之二十一 is 21% (its 百 is not a hundred of anything)
_ZH_PERCENT_RE = re.compile(r"百分之([零〇一二两三四五六七八九十百千万]{1,12}(?:点[零〇一二三四五六七八九]+)?)")
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


def _hyphenated_numbers(word: str) -> list[str]:
    """The numbers of a hyphenated word: "sixteen-year-old" -> 16, "two-kilometre" -> 2,
    "twenty-five" -> 25 (a ten and a unit are one number)."""
    parts = word.split("-")
    if len(parts) >= 2 and parts[0] in _TENS and parts[1] in _UNITS:
        return [str(int(_TENS[parts[0]]) + _UNITS[parts[1]])]
    return [_NUMBER_WORDS[p] for p in parts if p in _NUMBER_WORDS and p not in ("hundred", "thousand")][:1]


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


def _zh_percent(numeral: str) -> str | None:
    """The number of a percentage in words, 百分之<numeral>: 二十一 -> "21", 三点五 -> "3.5"."""
    whole, _, frac = numeral.partition("点")
    val = _zh_number(whole)
    if val is None:
        return None
    if not frac:
        return str(val)
    return _canon_number(f"{val}.{''.join(str(_ZH_DIGITS[c]) for c in frac)}")


def _zh_percentages(text: str) -> list[tuple[int, int, str | None]]:
    """Each percentage in words of ``text``: (its start, its end, its number), 百分之二十一 -> "21"."""
    return [(m.start(), m.end(), _zh_percent(m.group(1))) for m in _ZH_PERCENT_RE.finditer(text)]


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


def zh_negations(text: str) -> int:
    """How many Chinese negation markers ``text`` holds, the words that only contain one
    (:data:`ZH_NEGATION_EXCEPTIONS`: 不同, 非常, 未来...) aside."""
    s = text
    for exc in ZH_NEGATION_EXCEPTIONS:
        s = s.replace(exc, "")
    return sum(s.count(n) for n in ZH_NEGATIONS)


def _has_zh_negation(text: str) -> bool:
    return zh_negations(text) > 0


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
    nil = {m.start(g) for m in _SCORE_RE.finditer(ascii_part) for g in (1, 2) if int(m.group(g)) == 0}
    unknown = [m.span() for m in _UNKNOWN_RE.finditer(ascii_part)]
    for m in _WORD_RE.finditer(ascii_part):
        tok = m.group(0)
        n_tokens += 1
        if tok[0].isdigit():
            if m.start() not in nil:
                numbers.add(_canon_number(tok))
            terms.append(_canon_number(tok))
            continue
        low = tok.lower().replace("’", "'")
        flat = low.replace("'", "")
        if (flat in EN_NEGATIONS or low.endswith("n't")) and not any(a < m.end() and m.start() < b for a, b in unknown):
            negated = True
        if low in _NUMBER_WORDS:
            numbers.add(_NUMBER_WORDS[low])
        elif "-" in low:  # "sixteen-year-old", "two-kilometre", "twenty-five"
            numbers.update(_hyphenated_numbers(low))
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
        percents = _zh_percentages(run)
        numbers.update(value for _, _, value in percents if value is not None)
        for nm in _ZH_NUM_RE.finditer(run):
            if (
                m.start() + nm.start() > 0
                and s[m.start() + nm.start() - 1].isdigit()
                and all(c in _ZH_UNITS for c in nm.group(0))
            ):
                continue  # the unit of 5700万: read with its digits below
            if nm.group(0) == "百" and run.startswith("分之", nm.end()):
                continue  # 百分之: the percentage is the numeral after it
            if any(a <= nm.start() < b for a, b, _ in percents):
                continue  # a percentage's numeral and decimals, read above
            end = nm.end()
            nxt = run[end] if end < len(run) else ""
            # a lone 一 before a counter is mostly the article ("一天最多两次": a day; "一位诗人":
            # a poet), as "a" is in English: not a number the contexts must hold (its slot is
            # still read for swaps: 一次 against 两次, number_slots)
            if nm.group(0) == "一":
                continue
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


_SLOT_RE = re.compile(
    r"(\d+(?:[.,]\d+)*)([十百千万亿]*)\s*([A-Za-z%]+|[\u3400-\u4dbf\u4e00-\u9fff])?"
)
_EN_NUMBER_SLOT_RE = re.compile(r"\b([A-Za-z]+)\b(?=(?:\s+([A-Za-z]+))?)")
_ZH_NUMBER_SLOT_RE = re.compile(r"([零〇一二两三四五六七八九十百千万]{1,12})([\u3400-\u4dbf\u4e00-\u9fff])")
_YEAR = "(year)"


def is_year(value: str) -> bool:
    """A number that stands for a year when it stands alone: four digits, 1000-2100."""
    return value.isdigit() and len(value) == 4 and 1000 <= int(value) <= 2100


def _slot(value: str, unit: str) -> tuple[str, str]:
    if unit in ("", "年") and is_year(value):
        return value, _YEAR
    return value, unit


@lru_cache(maxsize=65536)
def number_slots(text: str) -> frozenset[tuple[str, str]]:
    """(number, unit) of each number of ``text``, the unit being the word or ideograph right after
    it ("42 million" -> ("42", "million"), "8月" -> ("8", "月"), "fourteen satellites" ->
    ("14", "satellit")) and a year standing on its own (1000-2100: "in 1889") having the unit
    "(year)". Two texts that give one slot different numbers state different values: a swap."""
    s = _norm(text)
    out: set[tuple[str, str]] = set()
    for m in _SLOT_RE.finditer(s):
        unit = m.group(3) or ""
        if m.group(2):  # 5700万元: one number, its unit the ideograph after the multiplier
            value = float(m.group(1).replace(",", ""))
            for c in m.group(2):
                value *= _ZH_MULTIPLIERS[c]
            number = _canon_number(f"{value:.6f}")
        else:
            number = _canon_number(m.group(1))
        unit = unit if is_cjk(unit[:1]) or unit == "%" else stem(unit) if unit else ""
        out.add(_slot(number, unit))
    for m in _EN_NUMBER_SLOT_RE.finditer(s):
        low = m.group(1).lower()
        if low in _NUMBER_WORDS:
            out.add((_NUMBER_WORDS[low], stem(m.group(2)) if m.group(2) else ""))
    percents = _zh_percentages(s)  # 百分之二十一: the slot of 21%
    out.update((value, "%") for _, _, value in percents if value is not None)
    for m in _ZH_NUMBER_SLOT_RE.finditer(s):
        if any(a <= m.start() < b for a, b, _ in percents):
            continue  # read as a percentage above
        if m.start() > 0 and s[m.start() - 1].isdigit():
            continue  # the multiplier of 5700万, read above
        if m.group(2) in _ZH_COUNTERS:
            val = _zh_number(m.group(1))
            if val is not None:
                out.add(_slot(str(val), m.group(2)))
    return frozenset(out)


def number_swap(claim_text: str, context_slots: frozenset[tuple[str, str]], context_numbers: frozenset[str]) -> bool:
    """A number of the claim is absent from the contexts, and the contexts give the same slot
    (unit, or a year) another number the claim lacks: "revenue of $57 million" against "$42
    million", "2021年8月" against "2021年5月". A number the contexts lack without a counterpart
    ("two thirds" against "71 percent") is a paraphrase or an addition, not a swap."""
    slots = number_slots(claim_text)
    claim_numbers = {n for n, _ in slots}
    for number, unit in slots:
        if number in context_numbers or not unit:
            continue
        if any(u == unit and n not in claim_numbers for n, u in context_slots):
            return True
    return False


#: the English antonyms by stem too, so inflected forms match ("raises" / "lowers")
_EN_ANTONYM_STEMS: dict[str, frozenset[str]] = {}
for _word, _opposites in EN_ANTONYMS.items():
    _EN_ANTONYM_STEMS[stem(_word)] = _EN_ANTONYM_STEMS.get(stem(_word), frozenset()) | {stem(o) for o in _opposites}


_NO_COMPARATIVE_RE = re.compile(
    r"^\s*No (?P<cls>[A-Za-z][\w'’ -]*?) (?P<vp>(?:is|are|was|were|has|have|had|[a-z]+s|[a-z]+ed)"
    r"(?: [a-z]+){0,2}? (?:more|less|fewer|[a-z]+er)(?: [\w'’-]+){0,4}?) than (?P<other>[^,;]+?)\s*(?P<end>[.!]?)\s*$"
)
#: "No other river flows through as many countries as the Danube."
_NO_EQUATIVE_RE = re.compile(
    r"^\s*No (?:other )?(?P<cls>[A-Za-z][\w'’ -]*?) (?P<verb>(?:is|are|was|were|has|have|had|[a-z]+s|[a-z]+ed)"
    r"(?: [a-z]+){0,2}?) as (?P<much>many|much) (?P<what>[\w'’ -]+?) as (?P<other>[^,;]+?)\s*(?P<end>[.!]?)\s*$"
)
#: "中国没有比长江更长的河流。", "世界上没有比珠穆朗玛峰更高的山峰。"
_ZH_NO_COMPARATIVE_RE = re.compile(
    r"^(?P<where>[^，。,]*?)没有(?:任何)?比(?P<other>[^，。,]+?)更(?P<adj>[^，。,的]+)的(?P<cls>[^，。,]+?)(?P<end>[。！]?)$"
)


_THAN_EVERY_OTHER_RE = re.compile(
    r"^(?P<x>[^,;]+?) (?P<be>is|are|was|were) (?:(?P<more>more|less) (?P<word>[a-z]+)|(?P<adj>[a-z]+?)(?P<er>i?er))"
    r"(?P<rest>(?: [\w'’-]+){0,4}?) than (?:any|every|all(?: the)?) other (?P<cls>[\w'’ -]+?)\s*(?P<end>[.!]?)\s*$"
)


def superlative(text: str) -> str:
    """A comparative against every other of a class said as the superlative it is: "Mercury is
    smaller than every other planet." -> "Mercury is the smallest planet."; "The cheetah is faster
    than any other land animal." -> "The cheetah is the fastest land animal." (what the contexts
    mostly say, in their words). Any other text is returned as it is."""
    m = _THAN_EVERY_OTHER_RE.match(text)
    if m is None or len(m.group("cls").split()) > 6:
        return text
    if m.group("more"):
        head = f"{'most' if m.group('more') == 'more' else 'least'} {m.group('word')}"
    else:
        adj = m.group("adj")
        head = (adj + "iest") if m.group("er") == "ier" else (adj + "est")
    rest = m.group("rest") or ""
    return f"{m.group('x')} {m.group('be')} the {head} {m.group('cls')}{rest}{m.group('end') or '.'}"


def positive_comparative(text: str) -> str:
    """A negated comparative said the positive way, as a superlative (:func:`superlative`): "No hot
    desert is bigger than the Sahara." -> "The Sahara is the biggest hot desert." (no negation to
    flip, and the verifier, which misreads the negated form, reads this one). Any other text is
    returned as it is, but for a comparative against every other, which becomes its superlative."""
    return superlative(_positive_comparative(text))


def _positive_comparative(text: str) -> str:
    z = _ZH_NO_COMPARATIVE_RE.match(text.strip())
    if z is not None:
        return f"{z.group('other')}是{z.group('where')}最{z.group('adj')}的{z.group('cls')}{z.group('end') or '。'}"
    e = _NO_EQUATIVE_RE.match(text)
    if e is not None and len(e.group("cls").split()) <= 6:
        other = e.group("other")
        other = other[0].upper() + other[1:]
        what, cls, end = e.group("what"), e.group("cls"), e.group("end") or "."
        return f"{other} {e.group('verb')} more {what} than any other {cls}{end}"
    m = _NO_COMPARATIVE_RE.match(text)
    if (
        m is None
        or len(m.group("cls").split()) > 6
        or m.group("cls").lower() in ("one", "body", "other")
        or m.group("other").lower() in ("me", "him", "her", "us", "them", "it", "you", "that", "this")
    ):
        return text
    other = m.group("other")
    other = other[0].upper() + other[1:]
    return f"{other} {m.group('vp')} than any other {m.group('cls')}{m.group('end') or '.'}"


def antonym_conflict(
    claim: TextFeatures, claim_text: str, evidence: TextFeatures, evidence_text: str
) -> bool:
    """The claim uses a word whose opposite is in the evidence, and the evidence lacks the word."""
    for term in claim.terms:
        opposites = _EN_ANTONYM_STEMS.get(term)
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
