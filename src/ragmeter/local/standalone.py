"""The local judge's standalone question: a rule that carries earlier turns' entities into a follow-up.

``standalone_question(question, history)`` rewrites the user's latest message of a conversation so
that it reads without the conversation, the way the LLM judge's ``standalone_question`` prompt asks
for, with rules instead of a model (English and Chinese):

1. **The topic of each earlier user message**, oldest first, each read in its own rewritten form
   (so a topic carried once is carried on): its named entities (English: runs of capitalised
   words such as "the Eiffel Tower", "Marie Curie", "World War II", not the sentence's first word
   unless more follow), else the object of a topic phrase ("tell me about X", "what is X", "who was
   X"; Chinese "介绍一下X", "什么是X", "X是什么", "X有多高": the noun phrase before the first
   predicate word). The assistant's answers give entities only when the user's messages have none.
2. **A follow-up** is a message with an anaphor (English: it, its, they, them, their, he, him,
   his, she, her, this / that / these / those when no noun follows; Chinese: 它(们), 他(们),
   她(们), 其, 该, 此, 这个 / 那个 / 这些 / 那些 when no noun follows) or an ellipsis ("what about
   X?", "how about X?", "and X?"; Chinese "那X呢？", "X呢？").
3. **The rewrite**: the first anaphor becomes the most recent topic (a possessive takes "'s":
   "its height" -> "the Eiffel Tower's height"; Chinese "它的" -> "埃菲尔铁塔的"); a person pronoun
   (he, she, 他, 她) prefers the most recent topic that looks like a person's name, a plural one
   (they, 它们) a plural topic when there is one. An ellipsis "what about X?" repeats the previous
   question with its topic replaced by X ("What is the population of France?" + "What about
   Germany?" -> "What is the population of Germany?"). A message with neither is returned as it is.

What it cannot do: implicit references without an anaphor ("What's the average salary in the
UK?" meaning a physician assistant's), references to a turn's answer rather than its topic ("the
second one"), and choosing between two earlier entities by meaning. docs/conversations.md gives
its agreement with people's labels (TREC CAsT 2019 follow-up labels) and with constructed rewrites.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ragmeter.text import detect_lang

# ------------------------------------------------------------------------------------- English

_EN_PRONOUNS = {
    "it": "thing",
    "its": "thing's",
    "itself": "thing",
    "they": "plural",
    "them": "plural",
    "their": "plural's",
    "theirs": "plural's",
    "he": "person",
    "him": "person",
    "his": "person's",
    "she": "person",
    "her": "person?",  # object or possessive: decided by the next word
}
_EN_DEMONSTRATIVES = ("this", "that", "these", "those")
#: "it" that refers to nothing (a dummy subject): "how long does it take to get the money back",
#: "is it possible to ...", "it is easy to ...", "it costs 10 dollars to ..."
_DUMMY_IT_RE = re.compile(
    r"^(?:.*?\b)?(?:it\s+(?:takes?|took|costs?|cost|seems?|matters?|depends|is\s+\w+\s+to|was\s+\w+\s+to|'s\s+\w+\s+to)\b"
    r"|(?:does|did|will|would|can|could|is|was|would)\s+it\s+(?:take|cost|matter|depend|be\s+\w+\s+to|possible|"
    r"necessary|safe|okay|ok|true|worth|hard|easy|better|better\s+to|allowed|legal)\b)",
    re.IGNORECASE,
)
#: a demonstrative followed by one of these (or by the end) stands alone: "What is that?"
_EN_AFTER_ALONE = frozenset(
    "is was are were do does did has have had mean means meant happen happened work works cost "
    "costs take takes come came go went affect affects cause caused".split()
)
_EN_FUNCTION = frozenset(
    "a an the of in on at to for from by with about and or but as is was are were be been being do does "
    "did has have had can could will would should may might must what which who whom whose when where "
    "why how tell me more about please give list describe explain i you we my your our".split()
)
#: words that start a question or request (never an entity when capitalised at the start)
_EN_STARTERS = frozenset(
    "what which who whom whose when where why how is are was were do does did can could will would "
    "should may might tell give list describe explain please and but so also now then ok okay thanks "
    "thank yes no hi hello i you we they it he she this that these those my your our their "
    "in on at for from by with about of the a an".split()
)
#: the capitalised first person, never an entity
_EN_I = frozenset({"I", "I'm", "I’m", "I've", "I'd", "I'll"})
_EN_CONNECTORS = frozenset({"of", "the", "de", "du", "von", "van", "and", "&", "'s", "la", "le"})
_EN_PLACE_WORDS = frozenset(
    "tower bridge river lake mountain mount city country state kingdom republic university college "
    "company corporation inc museum park street island ocean sea war age empire church cathedral "
    "palace castle wall canal airport station stadium festival prize award act treaty movement".split()
)
_EN_WORD_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’\-.]*[A-Za-z0-9]|[A-Za-z0-9]")
_EN_TOPIC_RE = re.compile(
    r"\b(?:tell me(?: more)? about|what (?:is|are|was|were)|who (?:is|are|was|were)|"
    r"information (?:on|about)|learn about|talk about|explain|describe|define)\s+(.+?)\s*(?:[?.!,;]|$)",
    re.IGNORECASE,
)
#: a question without entity or anaphor is read as about the conversation's topic when it has at
#: most this many content words ("Who are the most famous artists?"), none of them the topic's
IMPLICIT_MAX_WORDS = 2
_EN_PREPOSITIONS = frozenset("in on at for during before after since from to with without by near".split())
_QUESTION_START_EN = re.compile(
    r"\?\s*$|^\s*(?:what|which|who|whom|whose|when|where|why|how|is|are|was|were|do|does|did|can|could|"
    r"will|would|should|tell|give|list|describe|explain|show)\b",
    re.IGNORECASE,
)
_EN_ELLIPSIS_RE = re.compile(
    r"^\s*(?:and\s+)?(?:what|how)\s+about\s+(.+?)\s*[?.!]*\s*$|^\s*and\s+(.+?)\s*\?\s*$", re.IGNORECASE
)

# ------------------------------------------------------------------------------------- Chinese

_ZH_PRONOUNS = (
    ("它们", "plural"),
    ("他们", "plural"),
    ("她们", "plural"),
    ("它", "thing"),
    ("他", "person"),
    ("她", "person"),
    ("其", "thing"),
)
_ZH_DEMONSTRATIVES = ("这个", "那个", "这些", "那些", "该", "此")
_ZH_LEAD_RE = re.compile(
    r"^(?:请问|请|你知道|您知道|能否|可以|告诉我|给我)?\s*"
    r"(?:介绍一下|介绍|讲讲|说说|谈谈|解释一下|解释|关于|我想了解|我想知道|想了解|想知道|我想问)"
)
_ZH_WHAT_IS_RE = re.compile(r"^(?:请问)?\s*什么是(.+?)[？?。！!，,]*$")
#: a Chinese question's topic ends where its predicate starts
_ZH_PREDICATE_RE = re.compile(
    r"是|有|在|的|能|会|可以|为什么|为何|怎么|怎样|如何|多少|多高|多大|多长|多久|什么|哪|吗|呢|建|成立|位于|属于|发生|出生|去世|"
    r"说|讲|用|叫|吃|喝|住|写|做|产"
)
_ZH_ELLIPSIS_RE = re.compile(r"^\s*(?:那么?|那)?\s*(.+?)\s*呢\s*[？?]*\s*$")
_ZH_PUNCT = "？?。！!，,、；;：:“”\"'（）()《》 "
_ZH_QUESTION_RE = re.compile(r"[？?]|吗|呢|什么|怎么|怎样|如何|哪|谁|几|多少|是否|多[高大长久远]")
_LATIN_ENTITY_RE = re.compile(r"[A-Z][A-Za-z0-9\-]*(?:\s+[A-Z][A-Za-z0-9\-]*)*")


@dataclass(frozen=True)
class Topic:
    """An entity a later message may refer to: its text, whether it looks like a person's name,
    whether it is plural."""

    text: str
    person: bool = False
    plural: bool = False
    #: named only as a place where something is or happened ("a tent I bought in Canada"): "it"
    #: later is that thing, not the place
    where: bool = False


# ---------------------------------------------------------------------------------- topics (en)


def _en_entities(text: str) -> list[Topic]:
    """Runs of capitalised words, with a leading "the" kept ("the Eiffel Tower")."""
    words = list(_EN_WORD_RE.finditer(text))
    out: list[Topic] = []
    i = 0
    while i < len(words):
        w = words[i].group(0)
        start_of_sentence = i == 0 or text[: words[i].start()].rstrip().endswith((".", "?", "!", ":"))
        if not w[0].isupper() or (start_of_sentence and w.lower() in _EN_STARTERS) or w in _EN_I:
            i += 1
            continue
        j = i + 1
        while j < len(words):
            nxt = words[j].group(0)
            if nxt[0].isupper() or (nxt[0].isdigit() and words[j - 1].group(0)[0].isupper()):
                j += 1
            elif nxt.lower() in _EN_CONNECTORS and j + 1 < len(words) and words[j + 1].group(0)[0].isupper():
                j += 2
            else:
                break
        if start_of_sentence and j == i + 1:  # a lone capitalised first word: "Country of ...", "Tell"
            i = j
            continue
        span = re.sub(r"['’]s?$", "", text[words[i].start() : words[j - 1].end()])
        before = text[: words[i].start()].rstrip()
        if before.lower().endswith(" the") or before.lower() == "the":
            span = "the " + span
        parts = span.split()
        person = (
            not span.lower().startswith("the ")
            and 2 <= len(parts) <= 3
            and all(p[0].isupper() for p in parts)
            and parts[-1].lower() not in _EN_PLACE_WORDS
        )
        where = re.search(r"\b(?:in|at|from|near|across|inside|outside)$", before, re.IGNORECASE) is not None
        out.append(Topic(span, person=person, plural=parts[-1].lower().endswith("s") and not person, where=where))
        i = j
    return out


def _en_phrase_topic(text: str) -> Topic | None:
    """The object of a topic phrase: "tell me about throat cancer" -> "throat cancer"."""
    m = _EN_TOPIC_RE.search(text)
    if not m:
        return None
    phrase = m.group(1).strip()
    phrase = re.sub(r"^(?:a|an)\s+", "", phrase, flags=re.IGNORECASE)
    words = phrase.split()
    if not words or words[0].lower() in _EN_PRONOUNS or words[0].lower() in _EN_DEMONSTRATIVES:
        return None
    if len(words) > 8:  # a clause, not a topic
        return None
    return Topic(phrase, plural=words[-1].lower().endswith("s") and not words[-1].lower().endswith("ss"))


def _en_topics(text: str, opening: bool) -> list[Topic]:
    """Named entities of ``text``, else its topic phrase when it opens the conversation or
    introduces a topic (a later "what are the symptoms?" asks about the topic, it is none)."""
    ents = _en_entities(text)
    if ents:
        return ents
    phrase = _en_phrase_topic(text)
    if phrase is None or (not opening and phrase.text.lower().startswith("the ")):
        return []
    return [phrase]


# ---------------------------------------------------------------------------------- topics (zh)


def _zh_topics(text: str) -> list[Topic]:
    s = text.strip().strip(_ZH_PUNCT)
    latin = [Topic(m.group(0)) for m in _LATIN_ENTITY_RE.finditer(s) if len(m.group(0)) > 1]
    m = _ZH_WHAT_IS_RE.match(s)
    if m:
        topic = m.group(1).strip(_ZH_PUNCT)
    else:
        s = _ZH_LEAD_RE.sub("", s).strip(_ZH_PUNCT)
        cut = _ZH_PREDICATE_RE.search(s)
        topic = s[: cut.start()] if cut else s
        topic = topic.strip(_ZH_PUNCT)
    if topic and not any(topic.startswith(p) for p, _ in _ZH_PRONOUNS) and len(topic) <= 16:
        return [Topic(topic, plural=topic.endswith("们"))]
    return latin


def _topics(text: str, lang: str, opening: bool) -> list[Topic]:
    return _zh_topics(text) if lang == "zh" else _en_topics(text, opening)


# ---------------------------------------------------------------------------------- rewriting


def _pick(topics: Sequence[Topic], kind: str) -> Topic | None:
    """The most recent topic for an anaphor of ``kind`` (person / plural / thing)."""
    if not topics:
        return None
    recent = list(reversed(topics))
    if kind.startswith("person"):
        return next((t for t in recent if t.person), recent[0])
    if kind.startswith("plural"):
        return next((t for t in recent if t.plural), recent[0])
    things = [t for t in recent if not t.person]
    if things and all(t.where for t in things):
        return None  # "it" is the thing that was somewhere, which no topic names: left as it is
    return next((t for t in things if not t.where), recent[0])


def _possessive(text: str) -> str:
    return text + ("'" if text.endswith("s") and not text.endswith("ss") else "'s")


def _en_ellipsis(question: str, previous: str | None, previous_topic: Topic | None) -> str | None:
    """ "What about Germany?" -> the previous question with its topic replaced; "How about on
    Christmas eve?" -> the previous question with that phrase in place of (or added to) its own."""
    m = _EN_ELLIPSIS_RE.match(question)
    if not m or not previous:
        return None
    new = (m.group(1) or m.group(2) or "").strip()
    words = new.split()
    if not words or len(words) > 5 or words[0].lower() in _EN_STARTERS - _EN_PREPOSITIONS:
        return None  # "And who edited the movie?" is a question of its own
    if words[0].lower() in _EN_PREPOSITIONS:
        body = previous.rstrip(" ?.!")
        same = re.search(rf"\b{re.escape(words[0])}\b[^,;?]*$", body, re.IGNORECASE)
        body = body[: same.start()].rstrip() if same else body
        return f"{body} {new}?"
    if previous_topic is not None and previous_topic.text in previous:
        return previous.replace(previous_topic.text, new, 1)
    return None


def _en_implicit(question: str, topic: Topic | None) -> str | None:
    """A question with no entity, no anaphor and no word of the topic: "About <topic>: ..."."""
    if topic is None or not _QUESTION_START_EN.search(question) or _en_entities(question):
        return None
    if _en_phrase_topic(question) is not None and not question.lower().startswith(
        ("what is the", "what are the")
    ):
        return None  # it introduces a topic of its own
    words = _content_words(question)
    if len(words) > IMPLICIT_MAX_WORDS or set(words) & set(_content_words(topic.text)):
        return None  # a question with content of its own ("What causes throat cancer?")
    first, rest = question.split(" ", 1) if " " in question else (question, "")
    lead = first.lower() if first.lower() in _EN_STARTERS else first
    return f"About {topic.text}: {lead}{(' ' + rest) if rest else ''}"


def _content_words(text: str) -> list[str]:
    return [
        w.lower().rstrip("s")
        for w in _EN_WORD_RE.findall(text)
        if w.lower() not in _EN_FUNCTION and len(w) > 2
    ]


def _en_rewrite(
    question: str, topics: list[Topic], previous: str | None, previous_topic: Topic | None, main: Topic | None
) -> str:
    elliptic = _en_ellipsis(question, previous, previous_topic)
    if elliptic is not None:
        return elliptic
    words = list(_EN_WORD_RE.finditer(question))
    for k, w in enumerate(words):
        low = w.group(0).lower()
        kind = _EN_PRONOUNS.get(low)
        nxt = words[k + 1].group(0).lower() if k + 1 < len(words) else ""
        if kind is None and low in _EN_DEMONSTRATIVES:
            if nxt and nxt not in _EN_AFTER_ALONE and w.end() < len(question) and question[w.end()] == " ":
                continue  # "this book": a determiner
            kind = "plural" if low in ("these", "those") else "thing"
        if kind is None or low == "one":
            continue
        if low == "it" and _DUMMY_IT_RE.search(question[max(0, w.start() - 12) :]):
            continue  # "How long does it take to ...": "it" refers to nothing
        if kind == "person?":  # "her" before a noun is possessive
            kind = "person's" if nxt and nxt not in _EN_FUNCTION and nxt not in _EN_AFTER_ALONE else "person"
        topic = _pick(topics, kind)
        if topic is None:
            return question
        text = _possessive(topic.text) if kind.endswith("'s") else topic.text
        if w.start() == 0 and text[:1].islower() and not text.lower().startswith("the "):
            text = text[0].upper() + text[1:]
        elif w.start() == 0:
            text = text[0].upper() + text[1:]
        return question[: w.start()] + text + question[w.end() :]
    implicit = _en_implicit(question, main)
    return implicit if implicit is not None else question


def _zh_implicit(question: str, topic: Topic | None) -> str | None:
    """A question that names nothing of its topic: "关于<topic>，..."."""
    q = question.strip()
    if topic is None or topic.text in q or not _ZH_QUESTION_RE.search(q):
        return None
    if _ZH_WHAT_IS_RE.match(q) or _ZH_LEAD_RE.match(q) or _LATIN_ENTITY_RE.search(q):
        return None  # it introduces a topic of its own
    head = _zh_topics(q)
    if head and len(head[0].text) >= 2 and head[0].text not in ("请问", "那么", "那"):
        return None  # it has a subject of its own ("长城有多长？")
    return f"关于{topic.text}，{q}"


def _zh_rewrite(
    question: str, topics: list[Topic], previous: str | None, previous_topic: Topic | None, main: Topic | None
) -> str:
    m = _ZH_ELLIPSIS_RE.match(question)
    if m and previous and previous_topic is not None and previous_topic.text in previous:
        new = m.group(1).strip(_ZH_PUNCT)
        if new and len(new) <= 12 and not any(p in new for p, _ in _ZH_PRONOUNS):
            return previous.replace(previous_topic.text, new, 1)
    best: tuple[int, int, str] | None = None  # (position, length, kind)
    for word, kind in _ZH_PRONOUNS:
        at = question.find(word)
        if at >= 0 and (best is None or at < best[0] or (at == best[0] and len(word) > best[1])):
            best = (at, len(word), kind)
    if best is None:
        for word in _ZH_DEMONSTRATIVES:
            at = question.find(word)
            if at < 0:
                continue
            after = question[at + len(word) : at + len(word) + 1]
            if word in ("该", "此") and not after:
                continue
            if (
                word in ("这个", "那个", "这些", "那些")
                and after
                and after not in _ZH_PUNCT
                and not _ZH_PREDICATE_RE.match(question[at + len(word) :])
            ):
                continue  # "这个城市": a determiner
            kind = "plural" if word in ("这些", "那些") else "thing"
            if best is None or at < best[0]:
                best = (at, len(word), kind)
    if best is None:
        implicit = _zh_implicit(question, main)
        return implicit if implicit is not None else question
    topic = _pick(topics, best[2])
    if topic is None:
        return question
    at, length, _ = best
    return question[:at] + topic.text + question[at + length :]


def standalone_question(question: str, history: Sequence[tuple[str, str]], *, lang: str | None = None) -> str:
    """``question`` rewritten with the topics of ``history`` (earlier ``(role, text)`` pairs) by
    the rules of the module docstring; unchanged when it needs none or none applies."""
    q = question.strip()
    if not q or not history:
        return q
    lang = lang if lang in ("en", "zh") else detect_lang(q)
    topics: list[Topic] = []  # every entity of the user's messages, oldest first
    answer_topics: list[Topic] = []
    main: Topic | None = None  # the topic the conversation is about now (its last introduction)
    previous: str | None = None
    previous_topic: Topic | None = None
    opening = True
    for role, text in history:
        if not text.strip():
            continue
        if role == "user":
            resolved = _rewrite(text.strip(), topics or answer_topics, previous, previous_topic, main, lang)
            found = _topics(resolved, lang, opening)
            if found:
                topics.extend(found)
                previous_topic = found[-1] if lang == "zh" else found[0]
                if opening or resolved == text.strip():  # a topic introduced, not carried
                    main = previous_topic
            opening = False
            previous = resolved
        elif role == "assistant" and not topics:
            answer_topics.extend(_topics(text, lang, True))
    return _rewrite(q, topics or answer_topics, previous, previous_topic, main or _last(answer_topics), lang)


def _last(topics: list[Topic]) -> Topic | None:
    return topics[-1] if topics else None


def _rewrite(
    q: str,
    topics: list[Topic],
    previous: str | None,
    previous_topic: Topic | None,
    main: Topic | None,
    lang: str,
) -> str:
    if lang == "zh":
        return _zh_rewrite(q, topics, previous, previous_topic, main)
    return _en_rewrite(q, topics, previous, previous_topic, main)


__all__ = ["Topic", "standalone_question"]
