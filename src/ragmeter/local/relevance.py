"""Relevance, offline: of a context sentence to a question, and of an answer to a question.

Question analysis (English and Chinese): the question is split into its information needs ("When
was X founded and where is its headquarters?" -> two needs), each with its key terms and the answer
type its question word asks for:

=========  ============================================  =====================================
type       English cue                                   Chinese cue
=========  ============================================  =====================================
date       when, what year/date/time, how long ago       什么时候, 何时, 哪一年, 哪年, 几月, 几号
number     how many/much/old/long/far/tall/big, what %   多少, 几个, 几岁, 多大, 多长, 多高, 多远
person     who, whom, whose, which person                谁, 哪位, 什么人
place      where, which country/city/state               哪里, 哪儿, 在哪, 哪个国家, 哪个城市
yes/no     is/are/does/did/can/... at the start          吗 at the end, 是否, 是不是, 有没有
other      what, how, why, which, ...                    什么, 怎么, 为什么, 如何, ...
=========  ============================================  =====================================

An answer sentence *meets* a need when it is close to it (cosine), shares its key terms, and,
for typed needs, brings a value of that type that the question does not already contain (a number
or date, a capitalised name; for yes/no any statement will do).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ragmeter.local.calibration import fixed, sigmoid
from ragmeter.local.features import TextFeatures, analyze, coverage, stem

_MONTHS = (
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday "
    "saturday sunday century decade"
).split()
_DATE_RE = re.compile(
    r"\b(?:1[0-9]{3}|20[0-9]{2})s?\b|\b(?:" + "|".join(_MONTHS) + r")\b|\d{1,2}:\d{2}|\b(?:bc|ad|bce|ce)\b"
    r"|\d+\s*(?:年|月|日|号|世纪)|[一二三四五六七八九十]+(?:月|日|号|世纪)|(?:今年|去年|明年|春|夏|秋|冬)"
    # a dynasty or an era answers "哪个朝代" / "什么时候" ("明代", "唐朝", "战国时期")
    r"|[\u4e00-\u9fff](?:代|朝)|时期",
    re.IGNORECASE,
)
_NUM_RE = re.compile(r"\d|[一二两三四五六七八九十百千万]+(?:个|岁|次|年|米|公里|元|倍|人)", re.IGNORECASE)

_EN_TYPES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "date",
        re.compile(r"\bwhen\b|\bwhat (?:year|date|day|month|time|century|decade)\b|\bhow long ago\b", re.I),
    ),
    (
        "number",
        re.compile(
            r"\bhow (?:many|much|old|long|far|tall|big|large|high|often|fast)\b|\bwhat percentage\b", re.I
        ),
    ),
    (
        "person",
        re.compile(
            r"\bwho(?:m|se)?\b|\bwhich (?:person|actor|actress|author|director|player|artist)\b", re.I
        ),
    ),
    (
        "place",
        re.compile(
            r"\bwhere\b|\b(?:which|what) (?:country|city|state|town|place|region|continent|location)\b"
            r"|\b(?:headquarters|location)\b",
            re.I,
        ),
    ),
)
_ZH_TYPES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("date", re.compile(r"什么时候|何时|哪一年|哪年|几月|几号|哪天|哪一天|什么时间|哪个朝代")),
    ("number", re.compile(r"多少|几个|几岁|多大|多长|多高|多远|多久|几次|几位|几种")),
    ("person", re.compile(r"谁|哪位|什么人|哪个人")),
    ("place", re.compile(r"哪里|哪儿|在哪|哪个国家|哪个城市|哪个省|什么地方|何处")),
)
_YESNO_EN_RE = re.compile(
    r"^(?:is|are|was|were|do|does|did|can|could|will|would|should|has|have|had|may|might|must)\b", re.I
)
_YESNO_ZH_RE = re.compile(r"吗[？?]?$|是否|是不是|有没有|能不能|会不会|可不可以")
_EN_SPLIT_RE = re.compile(
    r"\?\s*|,?\s+and\s+(?=(?:what|who|whom|whose|when|where|why|how|which|is|are|does|did|do|can)\b)", re.I
)
_ZH_SPLIT_RE = re.compile(
    r"[？?]|[，,]?(?:以及|并且|还有|同时)|[，,](?=(?:什么|谁|哪|为什么|怎么|如何|多少|何时))"
)
# Words that ask, not name: left out of a need's key terms.
_QUESTION_TERMS = frozenset(
    "what who whom whose when where why how which name describe explain tell list give purpose "
    "main role way kind type mean meaning example examples briefly".split()
)
_ZH_QUESTION_CHARS = frozenset("什么谁哪里儿怎样如何为多少几吗呢请问是否")
#: particles that never start or end a content word: a character pair with one of them spans a
#: word boundary ("你们的退款政策是什么": 的退, 策是), so it is no key term of a need
_ZH_PARTICLES = frozenset("的是吗呢吧啊呀嘛")
#: the words that ask in a Chinese question, cut out before its key terms are read: the character
#: pairs across them ("长城是什么时候修建的": 么时, 候修) are no words of the question's content
_ZH_ASKING_RE = re.compile(
    r"什么时候|什么时间|什么地方|什么人|为什么|怎么样|怎样|怎么|如何|哪里|哪儿|哪一年|哪年|哪个|哪位|哪些"
    r"|多少|多久|多长|多大|多高|多远|几个|几岁|是否|是不是|有没有|请问|什么|谁|吗|呢"
)
#: nouns that name the kind of answer asked for rather than its content (their stems)
_FRAME_NOUNS = frozenset(
    stem(w)
    for w in "policy policies rule rules procedure procedures process requirement requirements condition "
    "conditions term terms step steps option options method methods guideline guidelines regulation "
    "regulations instruction instructions".split()
)
_ZH_FRAME_NOUNS = ("政策", "规定", "流程", "条件", "办法", "步骤", "规则", "要求")

#: Sentence relevance to a question (context relevance). Hand-set, see docs/local-judge.md.
SENTENCE_RELEVANCE = fixed(
    "sentence_relevance",
    {"sim": 6.0, "qcov": 4.0, "type_match": 1.0, "rel_sim": 2.0},
    bias=-7.0,
    note="hand-set: a sentence is needed when it is close to the question and shares its key terms",
)


@dataclass(frozen=True)
class Need:
    """One information need of a question."""

    text: str
    answer_type: str  # date | number | person | place | yesno | other
    terms: frozenset[str]


def _asked_about(text: str) -> TextFeatures:
    """The features of ``text`` with its asking words cut out (Chinese; English keeps its words,
    which ``_QUESTION_TERMS`` leaves out)."""
    f = analyze(text)
    return analyze(_ZH_ASKING_RE.sub("，", text)) if f.has_cjk else f


def _key_terms(f: TextFeatures, text: str = "") -> frozenset[str]:
    out = set()
    for t in f.terms:
        if t in _QUESTION_TERMS:
            continue
        if len(t) == 2 and all(c in _ZH_QUESTION_CHARS for c in t):
            continue
        out.add(t)
    spanning = {t for t in out if len(t) == 2 and any(c in _ZH_PARTICLES for c in t)}
    if out - spanning:
        out -= spanning
    # a frame noun ("What is your refund policy?") names the kind of answer, which an answer that
    # gives one rarely repeats ("You can return any item within 30 days for a full refund"): it is
    # a key term only when the question has no other
    zh_frame = "".join(n for n in _ZH_FRAME_NOUNS if n in text)  # Chinese terms are character pairs
    framed = {t for t in out if t in _FRAME_NOUNS or (zh_frame and any(c in zh_frame for c in t))}
    return frozenset(out - framed) if out - framed else frozenset(out)


def answer_type(text: str) -> str:
    f = analyze(text)
    table = _ZH_TYPES if f.has_cjk else _EN_TYPES
    for name, pattern in table:
        if pattern.search(text):
            return name
    s = text.strip()
    if (f.has_cjk and _YESNO_ZH_RE.search(s)) or (not f.has_cjk and _YESNO_EN_RE.match(s)):
        return "yesno"
    return "other"


def question_needs(question: str) -> list[Need]:
    """The information needs of ``question`` (at least one when it has any content)."""
    q = question.strip()
    f = analyze(q)
    parts = (_ZH_SPLIT_RE if f.has_cjk else _EN_SPLIT_RE).split(q)
    parts = [p.strip(" ,，;；") for p in parts if p and p.strip(" ,，;；")]
    needs: list[Need] = []
    for p in parts:
        pf = analyze(p)
        terms = _key_terms(_asked_about(p), p)
        if not terms and pf.n_tokens < 2:
            continue
        needs.append(Need(p, answer_type(p), terms))
    if not needs and q:
        needs.append(Need(q, answer_type(q), _key_terms(_asked_about(q), q)))
    return needs


def type_values(kind: str, sentence: str, question: str) -> frozenset[str]:
    """The values of the asked type that ``sentence`` brings and the question does not contain
    (numbers, dates, names); a non-empty set means the type is satisfied. For untyped needs and
    yes/no questions any sentence satisfies it (``{"*"}``)."""
    sf = analyze(sentence)
    qf = analyze(question)
    if kind == "date":
        if not _DATE_RE.search(sentence):
            return frozenset()
        return frozenset(sf.numbers - qf.numbers) or (frozenset({"date"}) if not sf.numbers else frozenset())
    if kind == "number":
        new = sf.numbers - qf.numbers
        if new:
            return frozenset(new)
        return frozenset({"number"}) if _NUM_RE.search(sentence) and not qf.numbers else frozenset()
    if kind in ("person", "place"):
        if sf.has_cjk:
            new = sf.terms - qf.terms
            return frozenset(new) if len(new) >= 2 else frozenset()
        return frozenset(sf.entities - qf.entities - qf.terms)
    return frozenset({"*"})


def type_satisfied(kind: str, sentence: str, question: str, exclude: frozenset[str] = frozenset()) -> float:
    """1.0 when ``sentence`` brings a value of the asked type that the question does not contain
    (and that another need of the same question has not already used: ``exclude``)."""
    values = type_values(kind, sentence, question)
    return 1.0 if values and (values == {"*"} or values - exclude) else 0.0


def sentence_relevance_features(
    question: str, sentence: str, sim: float, max_sim: float, needs: Sequence[Need]
) -> dict[str, float]:
    sf = analyze(sentence)
    qcov = max((coverage(n.terms, sf.terms) if n.terms else 0.0) for n in needs) if needs else 0.0
    typed = [n for n in needs if n.answer_type in ("date", "number", "person", "place")]
    type_match = max((type_satisfied(n.answer_type, sentence, question) for n in typed), default=0.0)
    return {
        "sim": sim,
        "qcov": qcov,
        "type_match": type_match,
        "rel_sim": sim / max_sim if max_sim > 0 else 0.0,
    }


def need_met(
    need: Need,
    sentences: Sequence[str],
    sims: Sequence[float],
    question: str,
    exclude: frozenset[str] = frozenset(),
) -> tuple[float, frozenset[str]]:
    """How well the answer's ``sentences`` meet one need, in [0, 1], and the typed values the best
    sentence used. The best sentence is judged with its neighbours (an answer often names the
    subject in one sentence and the value in the next).

    Per sentence: ``sigmoid(-3 + 3 * cosine + 3 * key-term coverage + type)``, where ``type`` is
    +2 when a typed need (date, number, person, place) gets a value of its type that no earlier
    need used (``exclude``: two who-questions need two names), -1.5 when not.
    """
    if not sentences:
        return 0.0, frozenset()
    feats = [analyze(s) for s in sentences]
    typed = need.answer_type in ("date", "number", "person", "place")
    best, used = 0.0, frozenset[str]()
    for i, (sentence, sim) in enumerate(zip(sentences, sims, strict=True)):
        window = set(feats[i].terms)
        if i > 0:
            window |= feats[i - 1].terms
        if i + 1 < len(sentences):
            window |= feats[i + 1].terms
        cov = coverage(need.terms, frozenset(window)) if need.terms else 0.5
        z = -3.0 + 3.0 * float(sim) + 3.0 * cov
        values: frozenset[str] = frozenset()
        if typed:
            values = type_values(need.answer_type, sentence, question) - exclude
            z += 2.0 if values else -1.5
        p = sigmoid(z)
        if p > best:
            best, used = p, values
    return best, used


def informativeness(answer_terms: frozenset[str], question_terms: frozenset[str]) -> float:
    """Saturating count of the answer's content terms that the question does not already contain."""
    new = len(answer_terms - question_terms)
    return 1.0 - math.exp(-new / 12.0)
