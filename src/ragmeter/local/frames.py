"""A claim read against each context sentence that speaks to it, as a reader does: a slot filled
from elsewhere in the contexts, roles exchanged, and flips that cancel.

The commonest hallucination in RAG assembles a false statement from the contexts' own words: "The
capital of Australia is Sydney." against "Canberra is the capital city of Australia. Sydney is the
largest city in Australia." Word overlap, and an entailment model trained on overlap, read it as
supported: every word of the claim is in the contexts. A reader compares the claim with the
sentence about the same thing, and sees another filler in its place. This module does that, for
English and Chinese, one sentence at a time (:func:`read_frames`):

- **a slot swap**: the claim shares its frame with a sentence (at least :data:`FRAME_SHARE` of its
  content words, two or more) but puts in one slot a name, number or word that the sentence does
  not have and the contexts do have elsewhere ("Sydney" from the next sentence), while the
  sentence has another of the same kind there ("Canberra"), which the claim lacks. English words
  of no capital need a shared neighbour on the same side (the slot is the same), Chinese spans
  come from the character alignment. A synonym is no swap (the caller drops pairs whose embedding
  cosine says so: :func:`ragmeter.local.support.claim_support`).
- **flips**: an exchange of two of the sentence's arguments around the same relation ("Lena Marsh
  beat Serena Okafor" against "Okafor beat Lena Marsh"), a passive against an active ("... is
  pumped by the heart"), a word against its opposite ("smaller" / "larger", "closed" / "open",
  "lost to" / "defeated"), and a negation against none ("does not open" / "is closed";
  "except" negates). An odd number of flips says the opposite of the sentence; an even number says
  the same thing in other words ("The Atlantic is smaller than the Pacific" against "The Pacific is
  larger than the Atlantic": an exchange and an opposite).

A sentence that states the claim without a swap and with even flips settles it as said there
(:attr:`FrameReading.agrees`), whatever another sentence looks like; otherwise a sentence whose
frame the claim shares and contradicts settles it as contradicted (:attr:`FrameReading.conflict`).
The judge caps a contradicted claim like its other confirmed contradictions, and a claim a
sentence states with cancelling flips is not capped by the single-flip rules (a negation or an
opposite alone): :func:`ragmeter.local.support.support_probability`.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from ragmeter.local.features import analyze, antonym_conflict, is_year, stem, zh_negations
from ragmeter.local.frames_zh import (
    _ORDINAL_RE,
    _ZH_NUM_RE,
    _zh_comparative_flip,
    _zh_exchange,
    _zh_run_swap,
    _zh_swaps,
    _zh_units,
)
from ragmeter.local.lexicon import EN_ANTONYMS, EN_NEGATIONS, EN_STOPWORDS, ZH_STOPCHARS
from ragmeter.statements import ANSWER_LEAD_RE
from ragmeter.text import has_cjk, is_cjk

#: the share of the claim's content words a sentence must have to speak to the same thing
FRAME_SHARE = 0.5
#: the share of the claim's other content words (its swapped fillers aside) a sentence must have for
#: a swap to say otherwise
SWAP_FRAME = 0.75
#: the most content words (Chinese: characters) a swapped slot holds on either side
SLOT_MAX = 3

_TOKEN_RE = re.compile(
    r"(?P<num>\d+(?:[,.]\d+)*)"
    r"|(?P<zhnum>[零〇一二两三四五六七八九十百千万亿]+(?=[年月日号岁次个名位座条米倍天周点分%公百千万]))"
    r"|(?P<word>[A-Za-z]+(?:[-'’][A-Za-z]+)*)"
    r"|(?P<cjk>[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff])"
)
_EN_NUMBER_WORDS = frozenset(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred "
    "thousand million billion".split()
)
#: words that negate the slot that follows in English ("open every day except Sunday")
_EN_EXCEPT = frozenset({"except", "excluding"})
_ZH_PASSIVE = ("被", "由")
#: a word right before which a content word is a noun, not a relation ("the capital of")
_NOUN_LEAD = frozenset({"the", "a", "an", "its", "their", "his", "her", "our", "my", "'s", "’s", "of"})


@dataclass(frozen=True)
class Token:
    norm: str  # English: lowercased and stemmed; Chinese: the character (a numeral: its run)
    kind: str  # "num", "name", "cap" (a capital that starts the text), "word", "zh", "stop"
    raw: str


@lru_cache(maxsize=8192)
def tokens(text: str) -> tuple[Token, ...]:
    out: list[Token] = []
    for m in _TOKEN_RE.finditer(text):
        raw = m.group(0)
        if m.group("num") is not None:
            out.append(Token(raw.replace(",", ""), "num", raw))
        elif m.group("zhnum") is not None:
            out.append(Token(raw, "num", raw))
        elif m.group("cjk") is not None:
            out.append(Token(raw, "stop" if raw in ZH_STOPCHARS else "zh", raw))
        else:
            low = raw.lower().replace("’", "'")
            if low.endswith("'s"):  # the genitive: the word, then its marker
                out.append(_word(raw[:-2], low[:-2], bool(out)))
                out.append(Token("'s", "stop", "'s"))
                continue
            if len(raw) == 1 and text[m.end() : m.end() + 1] == ".":
                out.append(Token(low, "stop", raw))  # an initial: "J. Robert Oppenheimer"
                continue
            out.append(_word(raw, low, bool(out)))
    return tuple(out)


def _word(raw: str, low: str, inside: bool) -> Token:
    if low in _EN_NUMBER_WORDS:
        return Token(low, "num", raw)
    if len(raw) == 1 and raw.isupper() and inside and raw not in "IA":
        return Token(low, "name", raw)  # vitamin C, Plan B
    if low in EN_STOPWORDS or low.replace("'", "") in EN_NEGATIONS:
        return Token(low, "stop", raw)
    if raw[0].isupper():  # a capital inside the text is a name; the first word's says nothing
        return Token(stem(low), "name" if inside else "cap", raw)
    return Token(stem(low), "word", raw)


_NEGATION_NOUNS = re.compile(r"\b(?:lack|lacks|absence)\s+of\b", re.IGNORECASE)


def _negations(toks: Sequence[Token], text: str) -> int:
    """How many negations the text holds ("except" negates; "without X" and "a lack of X" qualify a
    noun, they do not negate the statement)."""
    if has_cjk(text):
        return zh_negations(text)
    lead = ANSWER_LEAD_RE.match(text)
    if lead is not None:  # "No, not all dogs are dogs": the "No" answers, the "not" negates
        text = text[lead.end() :]
        toks = tokens(text)
    text_neg = len(_NEGATION_NOUNS.findall(text))
    n = 0
    for t in toks:
        low = t.raw.lower().replace("’", "'")
        if low == "without":
            continue
        if low.replace("'", "") in EN_NEGATIONS or low in _EN_EXCEPT or low.endswith("n't"):
            n += 1
    return n - text_neg


@lru_cache(maxsize=16384)
def _opposites(word: str) -> frozenset[str]:
    out = set(EN_ANTONYMS.get(word.lower(), ()))
    return frozenset(stem(o) for o in out) | frozenset(out)


def _are_opposite(a: Token, b: Token) -> bool:
    return bool((_opposites(a.raw) | _opposites(a.norm)) & {b.raw.lower(), b.norm})


@dataclass(frozen=True)
class FrameReading:
    """How a claim reads against one context sentence."""

    sentence: int  # the sentence's index in the contexts (:class:`ContextIndex`)
    share: float  # share of the claim's content words the sentence has
    swaps: tuple[tuple[str, str], ...]  # (claim's filler, sentence's filler)
    flips: tuple[str, ...]  # "exchange", "passive", "opposite", "negation"
    complete: bool  # every content word of the claim is in the sentence (or its opposite is)
    closeness: float = 0.0  # similarity of the wordings, stop words included (difflib ratio)
    frame_share: float = 0.0  # share of the claim's other content words there, its swapped fillers aside

    @property
    def conflict(self) -> bool:
        """The sentence says otherwise: a slot swapped, or every word there with odd flips."""
        if self.swaps:  # a negated claim with another filler is no contradiction ("... not on Sundays")
            # and the rest of the claim must be the sentence's: a swap in a clause about another
            # thing is no swap ("利润减少了百分之三" against "销售额增长了百分之十五")
            return "negation" not in self.flips and self.frame_share >= SWAP_FRAME
        return self.complete and len(self.flips) % 2 == 1

    @property
    def agrees(self) -> bool:
        """The sentence states the claim: no swap, every word there, flips that cancel."""
        return self.complete and not self.swaps and len(self.flips) % 2 == 0


_IRREGULAR_VERBS = frozenset(
    "beat beats won win wins lost lose loses wrote write writes built build builds led lead leads ran run "
    "runs took take takes gave give gives sold sell sells bought buy buys hit hits met meet meets held "
    "hold holds rose fell grew made make makes found find finds knew told sent ate eat eats overtook "
    "overtake overtakes".split()
)
_COPULAS = frozenset({"is", "are", "was", "were", "of", "'s"})


def _relation_like(toks: Sequence[Token], k: int) -> bool:
    """Token ``k`` can be the relation of two arguments: a verb or a comparative by its form, not
    a noun after a determiner, a number or a genitive, nor the head of a subject ("language is")."""
    t = toks[k]
    if t.kind not in ("word", "cap", "zh"):
        return False
    prev = toks[k - 1] if k > 0 else None
    nxt = toks[k + 1] if k + 1 < len(toks) else None
    if prev is not None and (prev.raw.lower() in _NOUN_LEAD or prev.kind == "num"):
        return False
    if nxt is not None and nxt.raw.lower() in _COPULAS:
        return False
    low = t.raw.lower()
    if nxt is not None and nxt.raw.lower() == "than":  # a comparative
        return True
    verb_form = low.endswith(("ed", "es", "s")) and not low.endswith(("ss", "us", "is"))
    return low in _IRREGULAR_VERBS or verb_form or bool(_opposites(low))


#: prepositions that open an adjunct ("In 2014 the company opened ...", "Off the coast of
#: Queensland lies the reef"): the words of such a phrase are no argument of the relation after it
_PREPOSITIONS = frozenset(
    "in on at off of from to by for with into onto during after before since until across along "
    "around through over under near behind beyond within without among between".split()
)
_DETERMINERS = frozenset({"the", "a", "an", "its", "their", "his", "her", "our", "my", "this", "that", "these", "those"})


def _in_adjunct(toks: Sequence[Token], i: int) -> bool:
    """Token ``i`` stands in a prepositional phrase: the words of its noun phrase (content words,
    then a determiner, if any) are led by a preposition ("coast" and "Queensland" in "Off the coast
    of Queensland lies ..."; not "company" in "In 2014 the company opened ...")."""
    named = toks[i].kind in ("name", "cap")
    j = i - 1
    while j >= 0 and toks[j].kind != "stop" and (toks[j].kind in ("name", "cap")) == named:
        j -= 1  # (a name after a common noun starts a phrase of its own: "In the final, England beat ...")
    if j >= 0 and toks[j].raw.lower() in _DETERMINERS:
        j -= 1
    return j >= 0 and toks[j].raw.lower() in _PREPOSITIONS


def _exchange(claim: Sequence[Token], sent: Sequence[Token]) -> bool:
    """The arguments on either side of a relation word stand on the other sides of the same word
    (or of its opposite) in the sentence ("A beat B" / "B beat A", "A is smaller than B" / "B is
    larger than A"), or a word the claim attaches to one relation the sentence attaches to another
    of the claim's ("absorb oxygen and release carbon dioxide" / "absorb carbon dioxide and release
    oxygen"). Arguments are words each text has once."""
    def once(toks: Sequence[Token]) -> dict[str, int]:
        pos: dict[str, int] = {}
        seen: set[str] = set()
        for i, t in enumerate(toks):
            if t.kind != "stop":
                if t.norm in seen:
                    pos.pop(t.norm, None)
                else:
                    pos[t.norm] = i
                    seen.add(t.norm)
        return pos

    cpos, spos = once(claim), once(sent)
    shared = sorted(i for w, i in cpos.items() if w in spos)
    for k, r in enumerate(claim):
        if not _relation_like(claim, k):
            continue
        partners = [i for i, t in enumerate(sent) if t.kind != "stop" and (t.norm == r.norm or _are_opposite(r, t))]
        # (an adjunct put first is no argument: "In 2014 the company opened a store in Marseille"
        # against "Its second store, in Marseille, opened in 2014")
        before = [i for i in shared if i < k and claim[i].norm != r.norm and not _in_adjunct(claim, i)]
        after = [i for i in shared if i > k and claim[i].norm != r.norm]
        if not partners or not before or not after:
            continue
        # the argument right before the relation, and any after it (an adjunct may come first:
        # "Marsh lost the final to Okafor")
        x = spos[claim[before[-1]].norm]
        if any(spos[claim[j].norm] < m < x for j in after for m in partners):
            return True
    # attachment: the word right before a shared word differs, and both are the claim's words
    c_left = {claim[i].norm: claim[i - 1] for i in range(1, len(claim)) if claim[i].kind != "stop"}
    s_left = {sent[i].norm: sent[i - 1] for i in range(1, len(sent)) if sent[i].kind != "stop"}
    c_norms = {t.norm for t in claim if t.kind != "stop"}
    s_norms = {t.norm for t in sent if t.kind != "stop"}
    for w, lc in c_left.items():
        ls = s_left.get(w)
        if ls is None or w not in cpos or w not in spos or claim[cpos[w]].kind != "word":
            continue
        if (
            lc.kind == "word"
            and ls.kind == "word"
            and lc.norm != ls.norm
            and lc.norm in s_norms
            and ls.norm in c_norms
            and _relation_like(claim, cpos[w] - 1)
            and _relation_like(sent, spos[w] - 1)
        ):  # both attach it to a verb ("absorbs oxygen" / "releases oxygen"), not "ugly ducks" / "become ducks"
            return True
    return False


def _passive(toks: Sequence[Token], text: str) -> bool:
    if any(p in text for p in _ZH_PASSIVE):
        return True
    raws = [t.raw.lower() for t in toks]
    for i, w in enumerate(raws):  # a participle with its agent: "is pumped ... by", "film directed by"
        if w == "by" and any(n.endswith(("ed", "en", "wn")) or n in _IRREGULAR_PARTICIPLES for n in raws[max(0, i - 5) : i]):
            return True
    return False


_IRREGULAR_PARTICIPLES = frozenset(
    "made built written done taken given found held known led paid put read run said seen sent set shown "
    "sold spent told thought understood won beat hit cut brought bought caught taught fought".split()
)
#: words after which an English word stands as a noun, the filler of a slot
_SLOT_LEAD = frozenset(
    "the a an of by in on at for from with into its their his her our than to 's".split()
)


def _noun_slot(toks: Sequence[Token], t: Token) -> bool:
    """``t`` stands where a noun does: after a determiner or a preposition, or first in the text."""
    i = toks.index(t)
    if i == 0 or all(x.kind == "stop" and x.raw.lower() in ("the", "a", "an") for x in toks[:i]):
        return True
    if all(x.kind == "stop" for x in toks[i + 1 :]):
        return True  # the object that ends the text
    return toks[i - 1].raw.lower() in _SLOT_LEAD


def _kind(t: Token, names: frozenset[str]) -> str:
    if t.kind == "cap":
        return "name" if t.norm in names else "word"
    return t.kind


def _swap_ok(claim: Sequence[Token], u: Token, sent: Sequence[Token], v: Token, names: frozenset[str]) -> bool:
    """``u`` of the claim and ``v`` of the sentence, aligned in one slot, are fillers of one kind:
    numbers, or names and nouns (a word in a noun's place: after a determiner or preposition)."""
    ku, kv = _kind(u, names), _kind(v, names)
    if (ku == "num") != (kv == "num") or _are_opposite(u, v):
        return False
    if ku == "num" or (ku == "name" and kv == "name") or (u.kind == v.kind == "cap"):
        return True  # (two words that open their texts: subjects, whatever their case says)
    return ku == kv == "word" and _noun_slot(claim, u) and _noun_slot(sent, v)


def _name_runs(toks: Sequence[Token]) -> list[frozenset[str]]:
    """The words of each run of capitalised words ("Johann Sebastian Bach", "Arctic Ocean")."""
    runs: list[frozenset[str]] = []
    run: list[str] = []
    for t in (*toks, Token("", "stop", "")):
        if t.kind in ("name", "cap"):
            run.append(t.norm)
        elif run:
            runs.append(frozenset(run))
            run = []
    return runs


def _named(sent: Sequence[Token], claim: Sequence[Token], c_norms: set[str]) -> set[str]:
    """``c_norms`` and every word of a name of the sentence that the claim names by part of it:
    "Johann Sebastian Bach" is named by "Bach", so "Johann" is no filler the claim lacks; "Arctic
    Ocean" is not named by "Pacific Ocean" (the claim's name is not part of it)."""
    out = set(c_norms)
    claim_runs = _name_runs(claim)
    for run in _name_runs(sent):
        if any(c <= run for c in claim_runs):
            out.update(run)
    return out


def _coordinated(claim: Sequence[Token], u: Token, s_norms: set[str] | frozenset[str]) -> bool:
    """``u`` is joined by "and" / "or" to a word the sentence has ("Bach and Handel")."""
    k = claim.index(u)
    for step in (-1, 1):
        j = k + step
        while 0 <= j < len(claim) and claim[j].kind in ("name", "cap") and claim[j].norm not in s_norms:
            j += step  # the other words of u's own name
        if 0 <= j + step < len(claim) and claim[j].raw.lower() in ("and", "or") and claim[j + step].norm in s_norms:
            return True
    return False


def _en_swaps(
    claim: Sequence[Token],
    sent: Sequence[Token],
    implied: frozenset[str],
    context_norms: frozenset[str],
    names: frozenset[str],
) -> list[tuple[str, str]]:
    """Slots the claim fills from elsewhere in the contexts: fillers the alignment puts in one
    place (a replaced span), and names or numbers of the claim the sentence lacks where it has
    others the claim lacks (word order aside: "The capital of Australia is Sydney" against
    "Canberra is the capital city of Australia")."""
    c_content = [t for t in claim if t.kind != "stop"]
    s_content = [t for t in sent if t.kind != "stop"]
    s_norms = {t.norm for t in s_content} | implied
    c_norms = {t.norm for t in c_content}
    named = _named(sent, claim, c_norms)
    out: list[tuple[str, str]] = []
    sm = difflib.SequenceMatcher(None, [t.norm for t in c_content], [t.norm for t in s_content], autojunk=False)
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag != "replace" or i2 - i1 > SLOT_MAX or j2 - j1 > SLOT_MAX:
            continue
        # the claim's filler comes from elsewhere in the contexts, not from this sentence (a word
        # the contexts lack is a new claim, read by the other features: on BEGIN such words are
        # mostly paraphrase, and reading them as swaps cost its ROC AUC 0.017)
        us = [t for t in c_content[i1:i2] if t.norm in context_norms and t.norm not in s_norms]
        vs = [t for t in s_content[j1:j2] if t.norm not in named]
        if len(us) == i2 - i1 and vs:
            for u in us:
                v = next((v for v in vs if _swap_ok(claim, u, sent, v, names)), None)
                if v is not None:  # the whole replaced spans ("Alexander Graham Bell" / "Thomas Edison")
                    out.append((" ".join(t.raw for t in us), " ".join(t.raw for t in vs)))
                    break
    # a number of the claim that the sentence gives to another word, joined the same way: "The
    # Berlin Wall fell in 1961." against "... was built in 1961 and fell in 1989"
    for k in range(1, len(claim)):
        u = claim[k]
        if out or u.kind != "num" or u.norm not in s_norms:
            continue
        i = k - 1
        while i >= 0 and claim[i].kind == "stop":
            i -= 1
        if i < 0 or claim[i].kind != "word":
            continue
        lead, joint = claim[i], [t.norm for t in claim[i + 1 : k]]
        for j, t in enumerate(sent):
            if t.norm != lead.norm:
                continue
            n = j + 1 + len(joint)
            if n < len(sent) and [x.norm for x in sent[j + 1 : n]] == joint:
                v = sent[n]
                if v.kind == "num" and v.norm != u.norm and v.norm not in c_norms and is_year(v.raw) == is_year(u.raw):
                    out.append((u.raw, v.raw))
                    break
    extra = [t for t in c_content if t.norm not in s_norms]
    own = {t.norm for t in s_content} & c_norms  # what the sentence itself shares, pronouns aside
    if out or not extra or len(extra) > 2 or len(own) < 2:
        return out
    for u in extra:
        if u.norm not in context_norms or _kind(u, names) not in ("name", "num"):
            continue  # (a new name is ent_novel's: read as a swap here, it cost BEGIN's ROC AUC 0.014)
        if _coordinated(claim, u, s_norms):
            continue  # "Bach and Handel were born ...": a name added beside the sentence's, not in its place
        v = next(
            (v for v in s_content if v.norm not in named and _kind(v, names) == _kind(u, names)), None
        )
        if v is not None:
            out.append((u.raw, v.raw))
    return out


#: the opening run of a Chinese text, up to its first function character or number: what it is
#: about ("大熊猫主要生活在……" -> 大熊猫)
ZH_OPENING_RE = re.compile(r"[^约占是在有为于被由把将向从到的了，,。\d]{1,4}")
_PRONOUN_RE = re.compile(r"\b(?:it|its|they|their|them|he|his|him|she|her)\b|[它他她其]", re.IGNORECASE)
_ELLIPTICAL_RE = re.compile(r"\s*(?:at|on|in|for|from|to|by)\b", re.IGNORECASE)


@lru_cache(maxsize=8192)  # per sentence, not per claim: every claim of a sample reads the same ones
def _implied(prev: str, verb: bool = False) -> frozenset[str]:
    """What a pronoun of the next sentence, or the elided subject of the next clause, can stand
    for: the words of the opening noun phrase of ``prev`` ("The city library opens ..." -> city,
    library; with ``verb``, for a clause that elides the verb too, "... and at 11 a.m. on
    Saturdays": city, library, open). Chinese: its first run of content characters, at most four."""
    if has_cjk(prev):  # the first run of content characters, at most four
        m = ZH_OPENING_RE.match(prev)
        return frozenset(ch for ch in (m.group(0) if m else "") if is_cjk(ch) and ch not in ZH_STOPCHARS)
    run: list[Token] = []
    for t in tokens(prev):
        if t.kind == "stop":
            if run:
                break
            continue
        low = t.raw.lower()
        if run and t.kind == "word" and (low in _IRREGULAR_VERBS or low.endswith(("s", "ed"))):
            if verb:  # an elliptical clause ("... and at 11 a.m. on Saturdays") shares the verb too
                run.append(t)
            break  # "The city library opens": the verb closes the subject
        run.append(t)
    return frozenset(t.norm for t in run)


def _number_bindings(claim: Sequence[Token], sent: Sequence[Token]) -> tuple[list[tuple[str, str]], bool]:
    """Numbers the claim gives to another word than the sentence does, where the sentence holds
    both ("Marie Curie won the Nobel Prize in Chemistry in 1903." against "... in Physics in 1903
    and the Nobel Prize in Chemistry in 1911."): each number is bound to the nearest word before it
    that each text has once. (the claim's number, the sentence's number for the claim's word) when
    the sentence binds the claim's number to a word the claim lacks, and the claim's word to a
    number the claim lacks (a swap); True when the two texts bind two of the claim's numbers to
    two of its words the other way round ("lends DVDs for three weeks and books for one week"
    against "lends books for three weeks and DVDs for one week": an exchange)."""

    def unique(toks: Sequence[Token]) -> set[str]:
        seen: dict[str, int] = {}
        for t in toks:
            if t.kind not in ("stop", "num"):
                seen[t.norm] = seen.get(t.norm, 0) + 1
        return {w for w, n in seen.items() if n == 1}

    def owners(toks: Sequence[Token], anchors: set[str]) -> tuple[dict[str, str], dict[str, str]]:
        """number -> the anchor before it, anchor -> the first number after it (numbers once)."""
        counts: dict[str, int] = {}
        for t in toks:
            if t.kind == "num":
                counts[t.norm] = counts.get(t.norm, 0) + 1
        owner: dict[str, str] = {}
        first: dict[str, str] = {}
        last = None
        for t in toks:
            if t.kind == "num" and counts[t.norm] == 1:
                if last is not None:
                    owner[t.norm] = last
                    first.setdefault(last, t.norm)
            elif t.norm in anchors:
                last = t.norm
        return owner, first

    def kinds(toks: Sequence[Token]) -> dict[str, tuple[bool, str]]:
        """number -> (a year, the word after it): 1903 and 1911 are of a kind, 45 minutes and two
        hours are not, nor 9 (November) and 1989."""
        out: dict[str, tuple[bool, str]] = {}
        for i, t in enumerate(toks):
            if t.kind == "num":
                nxt = toks[i + 1] if i + 1 < len(toks) else None
                out[t.norm] = (is_year(t.raw), nxt.norm if nxt is not None and nxt.kind == "word" else "")
        return out

    anchors = unique(claim) & unique(sent)
    c_nums = {t.norm for t in claim if t.kind == "num"}
    if not c_nums or sum(1 for t in sent if t.kind == "num") < 2:
        return [], False
    c_owner, c_first = owners(claim, anchors)
    s_owner, s_first = owners(sent, anchors | unique(sent))
    c_words = {t.norm for t in claim if t.kind != "stop"}
    c_kind, s_kind = kinds(claim), kinds(sent)
    swaps: list[tuple[str, str]] = []
    for n, a in c_owner.items():
        other, m = s_owner.get(n), s_first.get(a)
        if other is None or m is None or other == a or m == n or c_kind[n] != s_kind[m]:
            continue
        if other not in c_words and m not in c_nums:
            swaps.append((n, m))
        elif c_owner.get(m) == other and c_first.get(other) == m:
            return [], True
    return swaps[:1], False


#: "X is longer than Y", "X has more ... than Y" (English): the comparative and its two sides
_EN_COMPARATIVE_RE = re.compile(
    r"^(?P<x>[^,;]+?) (?:is|are|was|were|has|have|had|weighs?|costs?)\s+"
    r"(?:(?P<more>more|less|fewer)\s+[a-z]+|(?P<adj>[a-z]+?)i?er)\b(?: [a-z]+){0,3}? than (?P<y>[^,;]+?)\s*[.!]?\s*$",
    re.IGNORECASE,
)
#: comparatives that say "greater" and "smaller" of a measured quantity (age and time are left
#: out: an older thing has the smaller year)
_GREATER = frozenset("larg bigg long heav tall high fast wid deep far great more".split())
_SMALLER = frozenset("small short light low slow cheap narrow shallow thinn near less fewer".split())


def numeric_comparison(claim: str, sentences: Sequence[str]) -> bool | None:
    """A comparative claim read against the numbers the contexts give its two sides: "The Amazon
    is longer than the Nile." against "The Nile, at about 6,650 kilometres, ..., while the Amazon is
    about 6,400 kilometres long." -> False. Each side is its last word ("the blue whale" ->
    whale), and its number the first one after that word in a sentence (not a year), before the
    other side's word; both numbers must come with the same word after them (kilometres, tonnes).
    True when they bear the claim out, None when the claim is no comparative or a side has no
    single number of that kind."""
    m = _EN_COMPARATIVE_RE.match(claim.strip())
    if m is None:
        return None
    word = (m.group("more") or m.group("adj") or "").lower()
    greater = word in _GREATER or word == "more"
    if not greater and word not in _SMALLER:
        return None
    heads = []
    for side in (m.group("x"), m.group("y")):
        content = [t for t in tokens(side) if t.kind not in ("stop", "num")]
        if not content:
            return None
        heads.append(content[-1].norm)
    if heads[0] == heads[1]:
        return None
    values: list[tuple[float, str]] = []
    for head, other in (heads, heads[::-1]):
        found: set[tuple[float, str]] = set()
        for sentence in sentences:
            toks = tokens(sentence)
            for i, t in enumerate(toks):
                if t.norm != head:
                    continue
                for j in range(i + 1, len(toks)):
                    u = toks[j]
                    if u.norm == other or u.norm == head:
                        break
                    if u.kind == "num" and not is_year(u.raw):
                        nxt = toks[j + 1].norm if j + 1 < len(toks) and toks[j + 1].kind == "word" else ""
                        try:
                            found.add((float(u.norm), nxt))
                        except ValueError:
                            break  # a number word ("two"): its value is not read here
                        break
        if len(found) != 1:
            return None
        values.append(found.pop())
    (a, unit_a), (b, unit_b) = values
    if unit_a != unit_b or not unit_a or a == b:
        return None
    return (a > b) == greater


def _number_order_flip(claim: Sequence[Token], sent: Sequence[Token]) -> bool:
    """The claim has the sentence's numbers in the other order ("from 45 minutes to two hours")."""
    cn = [t.norm for t in claim if t.kind == "num"]
    sn = [t.norm for t in sent if t.kind == "num" and t.norm in cn]
    return len(set(cn)) >= 2 and len(cn) == len(set(cn)) and set(cn) <= set(sn) and cn != sn[: len(cn)]


def read_sentence(
    claim: str,
    sentence: str,
    index: int,
    context_text: str,
    context_norms: frozenset[str],
    names: frozenset[str] = frozenset(),
    implied: frozenset[str] = frozenset(),
) -> FrameReading:
    """The claim read against one sentence or clause (module docstring); ``implied``: the words
    a pronoun or an elided subject of it stands for (:func:`_implied`)."""
    ct, st = tokens(claim), tokens(sentence)
    zh = has_cjk(claim)
    swaps: list[tuple[str, str]]
    if zh:  # characters and numbers
        c_units = _zh_units(claim)
        s_nums = set(_ZH_NUM_RE.findall(sentence))
        missing = [
            w
            for w in c_units
            if (w not in s_nums if _ZH_NUM_RE.fullmatch(w) else w not in sentence and w not in implied)
        ]
        # numbers as the features read them (十 and 十二 are two numbers, not shared characters)
        missing += sorted(analyze(claim).numbers - analyze(sentence).numbers)
    else:
        c_units = [t.norm for t in ct if t.kind != "stop"]
        s_units = {t.norm for t in st if t.kind != "stop"} | implied
        missing = [w for w in c_units if w not in s_units]
    share = 1 - len(missing) / len(c_units) if c_units else 0.0
    if share < FRAME_SHARE or len(c_units) < 2:  # (the cheap test first: most sentences stop here)
        return FrameReading(index, share, (), (), False)
    closeness = difflib.SequenceMatcher(None, [t.norm for t in ct], [t.norm for t in st], autojunk=False).ratio()
    opposite = antonym_conflict(analyze(claim), claim, analyze(sentence), sentence)
    flips: list[str] = []
    if zh:
        swaps = _zh_swaps(claim, sentence, context_text, implied)
        pairs = set(swaps)  # the same two fillers exchanged is a flip of roles, not two swaps
        exchanged = any((v, u) in pairs for u, v in swaps) or _zh_exchange(claim, sentence)
        opposite = opposite or _zh_comparative_flip(claim, sentence)
        swaps = [(u, v) for u, v in swaps if (v, u) not in pairs]
        if len(swaps) > 1:
            swaps = []  # several places reworded: a paraphrase, not one filler swapped
        if not swaps and not exchanged:
            swaps = _zh_run_swap(claim, sentence, context_text, implied)
        c_nums = set(_ZH_NUM_RE.findall(claim))
        new = [n for n in c_nums - s_nums if n in context_text]
        other = [n for n in s_nums - c_nums]
        if new and other and not swaps:  # a number from elsewhere where the sentence has another
            swaps.append((new[0], other[0]))
    else:
        swaps = _en_swaps(ct, st, implied, context_norms, names)
        swapped_in = {t.norm for u, _ in swaps for t in tokens(u)}
        s_all = {t.norm for t in st} | implied
        if any(t.kind == "name" and t.norm not in s_all and t.norm not in swapped_in for t in ct):
            swaps = []  # a name of the claim's own that the sentence lacks: it speaks of something else
        bound, rebound = _number_bindings(ct, st)
        if not swaps:
            swaps = bound
        exchanged = _exchange(ct, st) or _number_order_flip(ct, st) or rebound
    if exchanged:
        flips.append("exchange")
        if _passive(ct, claim) != _passive(st, sentence):
            flips.append("passive")
    if opposite:
        flips.append("opposite")
    if (_negations(ct, claim) % 2) != (_negations(st, sentence) % 2):
        flips.append("negation")
    if zh:
        complete = not missing or (opposite and share >= 0.75)
        filled = [w for w in missing if any(w in u for u, _ in swaps)]
    else:
        complete = not missing or (opposite and len(missing) == 1)
        fillers = {t.norm for u, _ in swaps for t in tokens(u)}
        filled = [w for w in missing if w in fillers]
    rest = len(c_units) - len(filled)
    frame_share = (rest - (len(missing) - len(filled))) / rest if rest > 0 else 0.0
    return FrameReading(index, share, tuple(swaps), tuple(flips), complete, closeness, frame_share)


_EN_CLAUSE_RE = re.compile(
    r",?\s+(?:while|whereas|but)\s+|;\s*|,?\s+and\s+(?=(?:at|on|in|for|from|to|by)\b)"
)
_ZH_CLAUSE_RE = re.compile(r"[，；,;]")


@lru_cache(maxsize=8192)
def clauses(sentence: str) -> tuple[str, ...]:
    """The clauses of a sentence, where it joins statements: English "..., while ...", "...; ...",
    "... and at ..."; Chinese commas (a clause of under six characters stays with the next one:
    "在决赛中，中国队...", while a short last one stands alone: "...，释放氧气")."""
    if has_cjk(sentence):
        parts = [p for p in _ZH_CLAUSE_RE.split(sentence) if p.strip()]
        out: list[str] = []
        carry = ""
        for p in parts:
            if len(carry + p) < 6:
                carry += p
                continue
            out.append(carry + p)
            carry = ""
        if carry:  # a short last clause is a statement of its own ("..., 释放氧气")
            out.append(carry)
        return tuple(out)
    return tuple(p for p in _EN_CLAUSE_RE.split(sentence) if p.strip())


_CONJUNCTIONS = frozenset({"while", "whereas", "but", "and", "or", "yet", "so"})


def _own_subject(clause: str) -> bool:
    """An English clause that opens with a noun phrase of its own ("while the Amazon is ...",
    "but Germany won ..."), whose subject is not the previous clause's; one that opens with a verb,
    a pronoun or a possessive ("and stands 330 metres tall", "while its profit fell") is read with
    the previous clause's subject (Chinese clauses always are)."""
    if has_cjk(clause):
        return False
    toks = [t for t in tokens(clause) if t.raw.lower() not in _CONJUNCTIONS]
    if not toks:
        return False
    first = toks[0]
    return first.raw.lower() in ("the", "a", "an") or (first.kind == "name" or (first.kind == "cap" and first.raw[0].isupper()))


def read_frames(
    claim: str,
    sentences: Sequence[str],
    context_of: Sequence[int],
    context_text: str,
    context_norms: frozenset[str],
    names: frozenset[str],
) -> list[FrameReading]:
    """The claim read against every sentence, and every clause of a sentence of several, that
    shares its frame (:data:`FRAME_SHARE`)."""
    out = []
    for i, s in enumerate(sentences):
        prev = sentences[i - 1] if i > 0 and context_of[i - 1] == context_of[i] else None
        implied = _implied(prev) if prev and _PRONOUN_RE.search(s) else frozenset()
        parts = clauses(s)
        units = [(s, implied)]
        if len(parts) > 1:  # read clause by clause (the whole would hold another clause's words)
            subject = _implied(parts[0])
            with_verb = _implied(parts[0], verb=True)
            units = [
                (
                    p,
                    implied
                    | (
                        (with_verb if _ELLIPTICAL_RE.match(p) else subject)
                        if k and not _own_subject(p)
                        else frozenset()
                    ),
                )
                for k, p in enumerate(parts)
            ]
        for text, imp in units:
            r = read_sentence(claim, text, i, context_text, context_norms, names, imp)
            if r.share >= FRAME_SHARE:
                out.append(r)
    return out


def verdict(readings: Sequence[FrameReading]) -> tuple[str, FrameReading | None]:
    """("agrees", the reading) when a sentence or clause states the claim and none that is closer
    to its wording says otherwise; ("conflict", the reading) when one of those that share most of
    its frame says otherwise; ("", None) when neither."""
    if not readings:
        return "", None
    top = max(r.share for r in readings)
    conflicts = [r for r in readings if r.conflict and (max(r.share, r.frame_share) >= top - 0.05 or r.complete)]
    agrees = [r for r in readings if r.agrees]
    best_conflict = max(conflicts, key=lambda r: r.closeness, default=None)
    best_agree = max(agrees, key=lambda r: r.closeness, default=None)
    # a sentence that states the claim wins over one that says otherwise without every word of the
    # claim (a swap in a clause about something else: "人均收入" against "人口"); between two
    # complete readings the closer wording decides
    if best_agree is not None and (
        best_conflict is None
        or not best_conflict.complete
        or best_agree.closeness >= best_conflict.closeness
    ):
        return "agrees", best_agree
    if best_conflict is not None:
        return "conflict", best_conflict
    return "", None


def lexical(pair: tuple[str, str]) -> bool:
    """A swap of common words, which may be synonyms (the caller asks the embedder): not numbers,
    not names."""
    def plain(t: str) -> bool:
        return not any(ch.isdigit() for ch in t) and not t[:1].isupper() and not _ORDINAL_RE.match(t) and not (
            _ZH_NUM_RE.fullmatch(t)
        )

    return plain(pair[0]) and plain(pair[1])


def context_norms(sentences: Sequence[str]) -> frozenset[str]:
    """The content words of the contexts as :func:`tokens` normalises them."""
    return frozenset(t.norm for s in sentences for t in tokens(s) if t.kind != "stop")


def context_names(sentences: Sequence[str]) -> frozenset[str]:
    """The names of the contexts: words capitalised inside a sentence, and words that open one
    and are never written in lower case ("Acme", "Copper")."""
    toks = [t for s in sentences for t in tokens(s)]
    lower = {t.norm for t in toks if t.kind == "word"}
    return frozenset(t.norm for t in toks if t.kind == "name" or (t.kind == "cap" and t.norm not in lower))
