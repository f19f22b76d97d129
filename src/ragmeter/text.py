"""Text utilities shared by metrics and judges: language detection, sentence splitting,
tokenisation for lexical metrics and SQuAD-style answer normalisation.

Pure Python and regular expressions; no segmenter (jieba) dependency. Every function reads the
characters themselves, so English, Chinese and text that mixes them are handled by the same code:

- :func:`detect_lang` -> ``"zh"`` or ``"en"`` (share of CJK ideographs among the tokens).
- :func:`split_sentences` -> sentences, rule-based (English abbreviations, decimals, ellipses,
  quotes; Chinese 。！？；… with full- and half-width mixes; line breaks and bullets).
- :func:`tokenize` -> lowercase tokens without punctuation; English words and numbers are tokens,
  each Chinese character is a token (character level, the usual choice for ROUGE / F1 on Chinese,
  as in the CMRC and DuReader evaluation scripts).
- :func:`normalize_answer` -> the SQuAD normalisation (lowercase, no punctuation, no articles, single
  spaces), extended to Chinese (no punctuation, no spaces next to Chinese characters).

This module imports nothing else of ragmeter: what a sentence states (filler, refusals, hedges,
short answers) is decided in :mod:`ragmeter.statements`, which builds on it.
"""

from __future__ import annotations

import re
import string
import unicodedata
from functools import lru_cache
from typing import Literal

__all__ = [
    "ZH_SHARE_THRESHOLD",
    "detect_lang",
    "is_cjk",
    "normalize_answer",
    "split_sentences",
    "tokenize",
]

Lang = Literal["zh", "en"]

#: detect_lang answers "zh" when CJK ideographs make up at least this share of the tokens
#: (each ideograph one token, each run of other letters one token). 0.3 means "substantial":
#: a Chinese sentence with English terms in it stays "zh" ("请解释 Retrieval-Augmented Generation
#: 的原理" is 6 of 9), an English sentence that quotes a short Chinese name in a longer text stays
#: "en".
ZH_SHARE_THRESHOLD = 0.3

# CJK Unified Ideographs, Extension A, Compatibility Ideographs, Extensions B-G, and 〇.
_CJK_CLASS = (
    "\u3007\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
    "\U00020000-\U0002a6df\U0002a700-\U0002ebef\U00030000-\U0003134f"
)
_CJK_RE = re.compile(f"[{_CJK_CLASS}]")
_LETTERS_RE = re.compile(r"[^\W\d_]+")


def is_cjk(ch: str) -> bool:
    """True when ``ch`` (one character) is a CJK ideograph."""
    return bool(ch) and _CJK_RE.match(ch) is not None


def has_cjk(text: str) -> bool:
    """Whether ``text`` holds a CJK ideograph."""
    return _CJK_RE.search(text) is not None


def detect_lang(text: str) -> Lang:
    """``"zh"`` when CJK ideographs are at least :data:`ZH_SHARE_THRESHOLD` of the tokens, else ``"en"``.

    Tokens are counted as :func:`tokenize` counts them: each ideograph is one, each run of other
    letters is one (digits and punctuation do not count). Text with no letters at all is ``"en"``.
    Only Chinese and English are told apart; other scripts count as "en".
    """
    if not text:
        return "en"
    n_cjk = len(_CJK_RE.findall(text))
    if n_cjk == 0:
        return "en"
    n_words = len(_LETTERS_RE.findall(_CJK_RE.sub(" ", text)))
    return "zh" if n_cjk / (n_cjk + n_words) >= ZH_SHARE_THRESHOLD else "en"


def _check_lang(lang: str | None) -> None:
    if lang not in (None, "auto", "en", "zh"):
        raise ValueError(f"lang must be 'en', 'zh', 'auto' or None, not {lang!r}")


# --------------------------------------------------------------------------- sentences

# Always end a sentence (Chinese / full-width): 。！？； and the ellipsis …… (also ‥ and ｡).
_ZH_TERMINATORS = "。！？；｡‥"
_ELLIPSIS = "…"
# Half-width terminators; ';' only ends a sentence next to Chinese text.
_EN_TERMINATORS = ".!?;"
_ALL_TERMINATORS = _ZH_TERMINATORS + _ELLIPSIS + _EN_TERMINATORS + "．"
# Closing quotes and brackets that stay with the sentence they close.
_CLOSERS = "\"'”’」』）)]】》〉〕］｝}"
# Opening quotes and brackets skipped when looking at the first letter of the next sentence.
_OPENERS = "\"'“‘「『（([【《〈〔［｛{"

_TERMINATOR_RE = re.compile(f"[{re.escape(_ALL_TERMINATORS)}]")

# Abbreviations after which a period does not end a sentence (compared lowercased, without the
# final period). Words that often end a sentence (etc., Inc., Ltd., a.m.) are left out on purpose:
# for them the case of the next word decides.
_ABBREVIATIONS = frozenset(
    """
    mr mrs ms messrs dr prof st mt ft gen col lt sgt capt cmdr gov sen rep rev hon pres
    e.g i.e cf al vs viz approx ca resp ibid fig figs eq eqs sec ch vol vols pp p op
    jan feb mar apr jun jul aug sep sept oct nov dec
    """.split()
)
# Abbreviations that are only abbreviations before a number: "No. 5", "Art. 3".
_NUMBER_ABBREVIATIONS = frozenset({"no", "nos", "art", "nr"})
_INITIALISM_RE = re.compile(r"^(?:[A-Za-z]\.)+[A-Za-z]$")  # U.S, e.g, U.S.A
_TIME_RE = re.compile(r"^[ap]\.m$", re.IGNORECASE)  # a.m / p.m often end a sentence

# A bullet or list marker at the start of a line: - * • · ▪ ● ◦ ‣, 1. 1) 1、 (1) （1） a) 一、 （一） and
# Markdown headings. The marker is dropped from the sentence.
_BULLET_RE = re.compile(
    r"^(?:[-*•·▪●◦‣■□➢►]\s+|#{1,6}\s+|\d{1,3}[.)]\s+|\d{1,3}、\s*|[(（]\d{1,3}[)）]\s*"
    r"|[a-z]\)\s+|[一二三四五六七八九十]+、\s*|[(（][一二三四五六七八九十]+[)）]\s*)"
)
# A single line break joins two lines when the first looks hard-wrapped: at least this display
# width (a CJK character counts 2) and no sentence end, or ending in a comma.
_WRAP_MIN_WIDTH = 40


def split_sentences(text: str, lang: str | None = None) -> list[str]:
    """Split ``text`` into sentences (stripped, none empty).

    Rules, driven by the characters themselves so mixed English/Chinese text splits right:

    - Chinese / full-width ``。！？；`` (and runs such as ``？！``, ``……``) always end a sentence.
    - ``. ! ?`` (and ``...``) end a sentence when followed by a space and a word that does not start
      with a lowercase letter, or by a Chinese character; ``;`` only next to Chinese characters
      (``他来了;我走了``). A ``.`` between digits (3.14) or inside a token (example.com) never ends one.
    - A period after a known abbreviation (Mr., Dr., e.g., i.e., cf., et al., Fig., Jan.), an
      initialism (U.S., J. K. Rowling) or ``No.`` before a number does not end a sentence.
      Limitation: an initialism that really ends a sentence ("moved to the U.S. Then") is not split.
    - Closing quotes and brackets after the end stay with the sentence (``他说：“好。”``, ``"Stop."``).
    - A blank line always ends a sentence, and so does a line that starts with a bullet or list
      marker (the marker is dropped). A single line break ends a sentence unless the line looks
      hard-wrapped: the next line starts with a lowercase letter, or the previous line ends with a
      comma, or it is long (display width >= 40) and does not end a sentence; a short line without
      final punctuation (a heading, a label) stands alone.

    ``lang`` ("en", "zh", "auto" or None) is accepted for symmetry with the other functions; the
    rules above need no language hint, so it does not change the result.
    """
    _check_lang(lang)
    if not text or not text.strip():
        return []
    out: list[str] = []
    for unit in _line_units(text):
        out.extend(_split_unit(unit))
    return out


def _display_width(s: str) -> int:
    return len(s) + len(_CJK_RE.findall(s))


def _ends_sentence(line: str) -> bool:
    stripped = line.rstrip(_CLOSERS)
    return bool(stripped) and stripped[-1] in _ALL_TERMINATORS


def _continues(prev: str, line: str) -> bool:
    """Whether ``line`` continues ``prev`` across a single line break (hard-wrapped text)."""
    if _ends_sentence(prev):
        return False
    first = line[0]
    if first.isalpha() and first.islower() and not is_cjk(first):
        return True
    if prev[-1] in ",，、":
        return True
    return _display_width(prev) >= _WRAP_MIN_WIDTH


def _line_units(text: str) -> list[str]:
    """Group lines into units that sentence splitting then works on."""
    units: list[str] = []
    cur: list[str] = []

    def flush() -> None:
        if cur:
            units.append(_join_lines(cur))
            cur.clear()

    for raw in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        line = " ".join(raw.split())
        if not line:
            flush()
            continue
        m = _BULLET_RE.match(line)
        if m:
            flush()
            line = line[m.end() :].strip()
            if line:
                cur.append(line)
            continue
        if cur and not _continues(cur[-1], line):
            flush()
        cur.append(line)
    flush()
    return units


def _join_lines(lines: list[str]) -> str:
    out = lines[0]
    for line in lines[1:]:
        # No space between two Chinese characters joined across a wrapped line.
        if is_cjk(out[-1]) and is_cjk(line[0]):
            out += line
        else:
            out += " " + line
    return out


def _next_word_start(s: str, j: int) -> str:
    """The first character at or after ``j`` that is not a space or an opening quote ('' at end)."""
    n = len(s)
    while j < n and (s[j].isspace() or s[j] in _OPENERS):
        j += 1
    return s[j] if j < n else ""


def _word_before(s: str, i: int) -> str:
    """The token that ends just before position ``i`` (without leading quotes or brackets)."""
    start = i
    while start > 0 and not s[start - 1].isspace():
        start -= 1
    return s[start:i].lstrip(_OPENERS)


def _is_abbreviation(word: str, next_char: str) -> bool:
    if not word:
        return False
    low = word.lower()
    if low in _ABBREVIATIONS:
        return True
    if low in _NUMBER_ABBREVIATIONS and next_char.isdigit():
        return True
    if len(word) == 1 and word.isupper() and word.isascii():
        return True  # an initial: "J. K. Rowling"
    return _INITIALISM_RE.match(word) is not None and not _TIME_RE.match(word)


def _starts_lowercase(ch: str) -> bool:
    return ch.isalpha() and ch.islower()


_DOTTED_RE = re.compile(r"\S*\.\w")  # the next token has a dot inside: a domain, a file name


def _boundary(s: str, i: int, run_end: int, close_end: int) -> bool:
    """Whether the terminator run ``s[i:run_end]`` (followed by closers up to ``close_end``) ends a
    sentence."""
    run = s[i:run_end]
    if any(c in _ZH_TERMINATORS for c in run):
        return True
    if close_end >= len(s):
        return True
    prev = s[i - 1] if i > 0 else ""
    after = s[close_end]
    single_period = len(run) == 1 and run in ".．"
    if single_period and run_end == close_end and prev.isdigit() and after.isdigit():
        return False  # 3.14
    if is_cjk(after):
        # "他来了.然后", "Hello!你好", but not "U.S.政府".
        return not (single_period and _is_abbreviation(_word_before(s, i), after))
    if run == ";":
        return is_cjk(prev)
    if not after.isspace():
        # "in 2014.PharmaCann is" / "treatments.Theranostics": a sentence glued to the next one
        # (a missing space, common in generated text): a lowercase letter or digit, one period, a
        # capitalised word. Not an abbreviation or initialism (e.g.The, U.S.Army).
        if (
            single_period
            and run_end == close_end
            and (prev.isdigit() or _starts_lowercase(prev))
            and after.isupper()
            and close_end + 1 < len(s)
            and _starts_lowercase(s[close_end + 1])
            and not _is_abbreviation(_word_before(s, i), after)
            and not _DOTTED_RE.match(s, close_end)
        ):
            return True
        # example.com, e.g., Yahoo!Inc, ?q=1 -- unless a Chinese sentence ends in a half-width mark.
        return is_cjk(prev) and not after.isalnum()
    if is_cjk(prev):
        return True
    nxt = _next_word_start(s, close_end)
    if single_period and _is_abbreviation(_word_before(s, i), nxt):
        return False
    return not _starts_lowercase(nxt)


def _split_unit(s: str) -> list[str]:
    pieces: list[str] = []
    start = 0
    pos = 0
    n = len(s)
    for m in _TERMINATOR_RE.finditer(s):
        i = m.start()
        if i < pos:
            continue  # inside a run already handled
        run_end = i
        while run_end < n and s[run_end] in _ALL_TERMINATORS:
            run_end += 1
        close_end = run_end
        while close_end < n and s[close_end] in _CLOSERS:
            close_end += 1
        pos = run_end
        if _boundary(s, i, run_end, close_end):
            pieces.append(s[start:close_end])
            start = pos = close_end
    pieces.append(s[start:])
    out: list[str] = []
    for piece in pieces:
        piece = piece.strip()
        if not piece:
            continue
        if out and not any(c.isalnum() for c in piece):
            out[-1] += piece  # stray punctuation or a closing quote belongs to the sentence before
        else:
            out.append(piece)
    return out


# --------------------------------------------------------------------------- tokens

_APOSTROPHE_RE = re.compile(r"(?<=\w)['’](?=\w)")
_THOUSANDS_RE = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_TOKEN_RE = re.compile(r"\d+(?:\.\d+)+|[^\W_]+")


def tokenize(text: str, lang: str | None = None) -> list[str]:
    """Tokens for lexical metrics (ROUGE-L, BLEU, token F1).

    NFKC-normalised (full-width letters and digits become ASCII) and lowercased; punctuation and
    symbols (ASCII and CJK) are dropped. A run of letters and digits is one token, so is a decimal
    number (``3.14``); a thousands separator (``1,000``) and an apostrophe inside a word (``don't``
    -> ``dont``) are removed; hyphens split (``state-of-the-art`` -> 4 tokens). Each CJK ideograph
    is its own token: Chinese is compared character by character, the common choice for ROUGE and
    F1 on Chinese (no word segmenter needed, and no segmenter errors). ``lang`` is accepted for
    symmetry; the rules need no language hint.
    """
    _check_lang(lang)
    if not text:
        return []
    ascii_only = text.isascii()  # then NFKC changes nothing and there is no CJK character
    s = (text if ascii_only else unicodedata.normalize("NFKC", text)).lower()
    if "'" in s or "’" in s:
        s = _APOSTROPHE_RE.sub("", s)
    if "," in s:
        s = _THOUSANDS_RE.sub("", s)
    if not ascii_only:
        s = _CJK_RE.sub(r" \g<0> ", s)
    return _TOKEN_RE.findall(s)


@lru_cache(maxsize=4096)
def _is_punct(ch: str) -> bool:
    return ch in string.punctuation or unicodedata.category(ch)[0] in "PS"


class _PunctDeleter(dict[int, "int | None"]):
    """A ``str.translate`` table that deletes punctuation and symbols (:func:`_is_punct`), filled
    as characters are met, so the per-character work runs in C once a character is known."""

    def __missing__(self, code: int) -> int | None:
        value = None if _is_punct(chr(code)) else code
        self[code] = value
        return value


_DELETE_PUNCT = _PunctDeleter()


_ARTICLES_RE = re.compile(r"\b(?:a|an|the)\b")
_SPACE_NEAR_CJK_RE = re.compile(f"\\s+(?=[{_CJK_CLASS}])|(?<=[{_CJK_CLASS}])\\s+")


def normalize_answer(text: str) -> str:
    """SQuAD answer normalisation, extended to Chinese.

    For English it is the official SQuAD v1.1 ``normalize_answer``: lowercase, delete punctuation
    (every Unicode punctuation and symbol character, a superset of ``string.punctuation``), delete
    the articles a/an/the, collapse whitespace. Before that the text is NFKC-normalised (full-width
    forms become ASCII). For Chinese, punctuation (。，、“”…) is deleted the same way and the spaces
    next to a Chinese character are removed, so "北京 是 首都。" and "北京是首都" are equal.
    """
    if not text:
        return ""
    ascii_only = text.isascii()  # then NFKC changes nothing and there is no CJK character
    s = (text if ascii_only else unicodedata.normalize("NFKC", text)).lower()
    s = s.translate(_DELETE_PUNCT)
    s = _ARTICLES_RE.sub(" ", s)
    s = " ".join(s.split())
    return s if ascii_only else _SPACE_NEAR_CJK_RE.sub("", s)
