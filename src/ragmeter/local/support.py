"""Claim support against contexts, offline: alignment + consistency features -> a probability.

For each claim the contexts are split into sentences (:func:`ragmeter.text.split_sentences`, the
same sentences context relevance embeds, so the embedding cache serves both) and each sentence is
given a window (itself and its neighbours in the same context). Then:

- ``sim_max``     highest cosine between the claim and a context sentence (sentence embeddings)
- ``cov_best``    share of the claim's content terms found in the best-aligned window
  (alignment = 0.5 * cosine + 0.5 * window coverage)
- ``cov_all``     share of the claim's content terms found anywhere in the contexts
- ``num_missing`` share of the claim's numbers (digits, number words, Chinese numerals) that
  appear nowhere in the contexts (dates and quantities must match)
- ``ent_novel``   share of the claim's capitalised names that appear nowhere in the contexts
  (Chinese: the share of its ideographs in runs of two or more that the contexts lack,
  :func:`zh_novel_share`)
- ``neg_flip``    the claim and its best-aligned sentence differ in negation (only when they share
  most content terms: "X is not Y" against "X is Y")
- ``antonym``     the claim uses a word whose opposite is in the best-aligned sentence
- ``log_terms``   log(1 + number of content terms) (short claims carry less evidence)
- ``first_person`` the claim speaks in the first person ("I think", "my", "我觉得"): an opinion or
  experience of the speaker, which contexts rarely support
- ``bigram_cov``  share of the claim's word bigrams (all words; Chinese: character bigrams) found
  in the contexts: how much of the wording is taken from them
- ``word_cov``    share of the claim's words, stop words included (Chinese: characters), found in
  the contexts

- ``entail``      (English claims, when the verifier is on) the entailment verifier's highest
  probability that one of the claim's premises entails it (:mod:`ragmeter.local.verifier`). The
  premises, SummaC-style: the claim's best-aligned context sentence (with the sentence before it
  when it starts by referring back: "It was designed by ..."); unless that one entails the claim
  confidently (>= :data:`CONFIDENT`), also the two-sentence windows around it and the second-best
  sentence (a claim drawn from two neighbouring sentences, or from a sentence the wording points
  away from), read in a second batch

A logistic combiner turns them into ``p``; ``supported = p >= 0.5``. Both combiners are trained by
``scripts/train_local_combiner.py``: ``weights/support.json`` with ``entail`` (English claims with
the verifier) and ``weights/support_plain.json`` without it (Chinese claims, or no verifier).

Then two rules (:func:`support_probability`) that no combiner reads off overlap-heavy training
data: a contradiction the features confirm (:data:`RULE_FEATURES`: a number the contexts give
another value in the same slot, a confirmed negation flip, an antonym, a Chinese character swap,
words a premise sentence reports from another named speaker)
caps ``p`` at :data:`CONTRADICTED_CAP`; a confident entailment with no such sign floors it at
:data:`ENTAILED_FLOOR`.
"""

from __future__ import annotations

import difflib
import functools
import itertools
import math
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ragmeter.local.calibration import Combiner
from ragmeter.local.features import (
    TextFeatures,
    analyze,
    antonym_conflict,
    coverage,
    number_slots,
    number_swap,
    stem,
)
from ragmeter.local.frames import (
    ZH_OPENING_RE,
    FrameReading,
    context_names,
    context_norms,
    lexical,
    numeric_comparison,
    read_frames,
    verdict,
)
from ragmeter.local.lexicon import EN_STOPWORDS, ZH_ANTONYMS, ZH_EQUIVALENT_CHARS, ZH_STOPCHARS
from ragmeter.local.verifier import Verifier, languages_of
from ragmeter.statements import ANSWER_LEAD_RE
from ragmeter.text import is_cjk, split_sentences, tokenize

_FIRST_PERSON_RE = re.compile(
    r"\b(?:[Ii](?=\s+[a-z])|[Ii]['’](?:m|ve|d|ll)|[Mm]e|[Mm]y|[Mm]ine|[Mm]yself|[Ww]e|[Oo]ur)\b|我"
)

_PRONOUN_SUBJECT_RE = re.compile(
    r"\s*(?:it|its|he|his|she|her|they|their|them|this|these|those|that|there)\b|\s*[它他她这那]",
    re.IGNORECASE,
)

SUPPORT_FEATURES: tuple[str, ...] = (
    "sim_max",
    "cov_best",
    "cov_all",
    "num_missing",
    "ent_novel",
    "neg_flip",
    "antonym",
    "log_terms",
    "first_person",
    "bigram_cov",
    "word_cov",
)
#: the verifier's feature; a combiner that lists it is fed by the verifier
ENTAIL = "entail"
#: features no combiner reads: the rules of :func:`support_probability` do
RULE_FEATURES: tuple[str, ...] = (
    "num_swap",
    "term_swap",
    "neg_confirmed",
    "speaker_swap",
    "frame_conflict",
    "frame_agrees",
    "num_anchored",
)
#: best-aligned context sentences of each claim whose premises the verifier may read
TOP_PREMISES = 2
#: an entailment probability at which the first premise settles the claim (no second round)
CONFIDENT = 0.9
#: the plain combiner's probability under which the features settle a claim as unsupported when
#: its first premise does not entail it either (no second round: the verifier's cost, measured in
#: docs/performance.md, buys nothing on claims that share little with the contexts)
SECOND_ROUND_FLOOR = 0.3
#: premises read at most in the second round (windows first, then the second-best sentence)
SECOND_PREMISES = 2
#: the verifier reads a claim only when the features alone leave it inside this band of
#: probability (the plain combiner's); (0, 1), the default, reads every English claim. A
#: narrower band saves the verifier's cost on the claims outside it, which the plain combiner
#: then scores (docs/local-judge.md, "The verifier")
VERIFY_BAND = (0.0, 1.0)


@dataclass(frozen=True)
class ContextIndex:
    """The contexts of one sample, split and analysed once."""

    sentences: tuple[str, ...]
    features: tuple[TextFeatures, ...]
    windows: tuple[frozenset[str], ...]  # content terms of each sentence with its neighbours
    context_of: tuple[int, ...]  # which context each sentence comes from
    all_terms: frozenset[str]
    all_numbers: frozenset[str]
    all_entities: frozenset[str]
    all_bigrams: frozenset[tuple[str, str]]
    all_words: frozenset[str]
    all_slots: frozenset[tuple[str, str]] = frozenset()  # (number, unit) pairs (number_slots)
    all_stems: frozenset[str] = frozenset()  # stems of all_words (swap_candidates)
    frame_norms: frozenset[str] = frozenset()  # content words as frames.tokens reads them
    frame_names: frozenset[str] = frozenset()  # names as frames.tokens reads them

    @functools.cached_property
    def text(self) -> str:
        """All the sentences, joined (once per sample: every claim reads it)."""
        return " ".join(self.sentences)

    @functools.cached_property
    def whole(self) -> TextFeatures:
        """The text features of all the contexts' sentences together (analysed on first use)."""
        return analyze(self.text)


def token_bigrams(text: str) -> set[tuple[str, str]]:
    toks = tokenize(text)
    return set(itertools.pairwise(toks)) if len(toks) > 1 else {(t, "") for t in toks}


def context_sentences(contexts: Sequence[str]) -> list[list[str]]:
    """Sentences of each context (a context without sentence ends is one sentence)."""
    out: list[list[str]] = []
    for ctx in contexts:
        sents = split_sentences(ctx)
        if not sents and ctx.strip():
            sents = [ctx.strip()]
        out.append(sents)
    return out


def index_contexts(contexts: Sequence[str]) -> ContextIndex:
    per_context = context_sentences(contexts)
    sentences: list[str] = []
    feats: list[TextFeatures] = []
    windows: list[frozenset[str]] = []
    context_of: list[int] = []
    for k, sents in enumerate(per_context):
        context_of.extend([k] * len(sents))
        fs = [analyze(s) for s in sents]
        for i in range(len(sents)):
            win: set[str] = set(fs[i].terms)
            if i > 0:
                win |= fs[i - 1].terms
            if i + 1 < len(sents):
                win |= fs[i + 1].terms
            windows.append(frozenset(win))
        sentences.extend(sents)
        feats.extend(fs)
    all_terms: set[str] = set()
    all_numbers: set[str] = set()
    all_entities: set[str] = set()
    all_bigrams: set[tuple[str, str]] = set()
    all_words: set[str] = set()
    all_slots: set[tuple[str, str]] = set()
    for sent in sentences:
        all_bigrams |= token_bigrams(sent)
        all_words.update(tokenize(sent))
        all_slots |= number_slots(sent)
    for f in feats:
        all_terms |= f.terms
        all_numbers |= f.numbers
        all_entities |= f.entities
    return ContextIndex(
        tuple(sentences),
        tuple(feats),
        tuple(windows),
        tuple(context_of),
        frozenset(all_terms),
        frozenset(all_numbers),
        frozenset(all_entities),
        frozenset(all_bigrams),
        frozenset(all_words),
        frozenset(all_slots),
        frozenset(stem(w) for w in all_words),
        context_norms(sentences),
        context_names(sentences),
    )


#: where a sentence divides into clauses (commas, semicolons, colons; Chinese punctuation too)
_CLAUSE_RE = re.compile(r"[,;:，；：、]\s*")
#: a clause that does not stand alone: it joins its neighbour ("If X, Y"; "X, while Y")
_SUBORDINATE_RE = re.compile(
    r"\s*(?:(?:if|when|whenever|unless|although|though|because|since|while|whereas|even if)\b"
    r"|如果|假如|虽然|尽管|因为|由于|即使|除非|只要|只有|而)",
    re.IGNORECASE,
)
_BACK_REFERENCE_RE = re.compile(
    r"^(?:it|its|he|his|she|her|they|their|them|this|these|those|that|there|the (?:company|city|team|"
    r"group|film|book|band|tower|building|river|country|state|town|university|school|club|player|party))\b",
    re.IGNORECASE,
)


def premise_text(ctx: ContextIndex, i: int) -> str:
    """What the verifier reads for context sentence ``i``: the sentence, preceded by the sentence
    before it in the same context when it starts by referring back ("It was designed by ...")."""
    sent = ctx.sentences[i]
    if i > 0 and ctx.context_of[i - 1] == ctx.context_of[i] and _BACK_REFERENCE_RE.match(sent):
        return f"{ctx.sentences[i - 1]} {sent}"
    return sent


@dataclass(frozen=True)
class SupportFeatures:
    values: dict[str, float]
    best: int  # index of the best-aligned context sentence (-1: none)
    top: tuple[int, ...] = ()  # the verifier's TOP_PREMISES sentences, best first
    swaps: tuple[tuple[str, str], ...] = ()  # swap_candidates: (claim words, sentence words)
    frame: FrameReading | None = None  # the sentence reading that decided frame_conflict / frame_agrees


#: endings that make a people's or a language's word of a place's name (stemmed as the
#: entities are: "Chinese" is "chines"): American / America, Italian / Italy, Chinese / China
_DEMONYM_ENDINGS = ("ian", "an", "n", "ese", "es", "ish", "i")


@functools.lru_cache(maxsize=16384)
def name_forms(name: str) -> tuple[str, ...]:
    """``name`` (a stemmed entity) and the forms of it that name the same place or people, so that
    a claim's "South American countries" finds "South America" in the contexts and "Italy" finds
    "Italian": the name with a demonym ending added (after its final vowel, if any) or removed
    (with its "a" or "y" put back; a root of four letters at least). Names under four letters have
    no other forms. A person's name can meet another this way (Julian / Julia): a swap between two
    such names is not read as a new name."""
    if len(name) < 4:
        return (name,)
    forms = {name}
    base = name[:-1] if name[-1] in "aeiouy" else name
    forms.update(base + end for end in _DEMONYM_ENDINGS)
    forms.update(name + end for end in _DEMONYM_ENDINGS)
    for end in _DEMONYM_ENDINGS:
        if name.endswith(end) and len(name) - len(end) >= 4:
            root = name[: -len(end)]
            forms.add(root)
            forms.update((root + "a", root + "y"))
    return tuple(forms)


def support_features(claim: str, ctx: ContextIndex, sims: np.ndarray) -> SupportFeatures:
    """Features of one claim; ``sims`` holds its cosine with each context sentence."""
    cf = analyze(claim)
    n = len(ctx.sentences)
    if n == 0:
        raise ValueError("no context sentences to verify against")
    covs = np.array([coverage(cf.terms, w) for w in ctx.windows], dtype=np.float64)
    align = 0.5 * sims + 0.5 * covs
    best = int(np.argmax(align))
    # the verifier's premises: aligned by the sentence's own terms (a window's terms are shared
    # with its neighbours, so they cannot tell which of them states the claim)
    own = np.array([coverage(cf.terms, f.terms) for f in ctx.features], dtype=np.float64)
    top = tuple(int(i) for i in np.argsort(-(0.5 * sims + 0.5 * own), kind="stable")[:TOP_PREMISES])
    bf = ctx.features[best]
    # the sentences the claim is read against beyond the word counts: the best-aligned one and
    # the verifier's premises (each once, best first)
    near = tuple(dict.fromkeys((best, *top)))
    premises = [ctx.sentences[i] for i in near]
    cov_best = float(covs[best])
    num_missing = (
        sum(1 for x in cf.numbers if x not in ctx.all_numbers) / len(cf.numbers) if cf.numbers else 0.0
    )
    pool = ctx.all_terms | ctx.all_entities
    ent_novel = (
        sum(1 for e in cf.entities if not any(f in pool for f in name_forms(e))) / len(cf.entities)
        if cf.entities
        else 0.0
    )
    if cf.has_cjk:  # Chinese has no capitals: a name is a run of ideographs the contexts lack
        ent_novel = max(ent_novel, zh_novel_share(claim, ctx.all_words))
    sent_cov = coverage(cf.terms, bf.terms)
    neg_flip = 0.0
    neg_confirmed = 0.0
    if max(sent_cov, cov_best, max(own[i] for i in top)) >= 0.5:  # the cheap test first
        # the clause that shares most of the claim's terms, in the best-aligned sentence or in
        # one of the verifier's premises ("Loans can be renewed, but reference books cannot be
        # borrowed" for "Reference books can be borrowed for three weeks", whose best-aligned
        # sentence is the one about three weeks)
        # (a tie goes to the clause with fewer terms of its own beyond the claim's)
        clause = max(
            (_aligned_clause(cf, ctx.sentences[i], ctx.features[i]) for i in near),
            key=lambda f: (coverage(cf.terms, f.terms), coverage(f.terms, cf.terms)),
        )
        flipped = _flipped_clause(claim, cf, clause, premises)
        if flipped is not None:
            neg_flip = 1.0
            side_text, side, clause = flipped
            shares = sorted((coverage(side.terms, clause.terms), coverage(clause.terms, side.terms)))
            # confirmed: the claim and the clause say mostly the same (one covers the other, at
            # least half of each is shared), and the flip is not only a leading answer word ("No,
            # ...", "Not really, ...": it answers the question, it does not negate the statement)
            lead = ANSWER_LEAD_RE.match(side_text)
            if (
                shares[1] >= NEG_CONFIRMED_COVERAGE
                and shares[0] >= 0.5
                and len(side.terms & clause.terms) >= 2
                and (lead is None or analyze(side_text[lead.end() :]).negated != clause.negated)
            ):
                neg_confirmed = 1.0
    word_cov = coverage(frozenset(tokenize(claim)), ctx.all_words)
    swaps = (  # mostly copied claims (the cheap test first)
        tuple(
            dict.fromkeys(
                pair
                for i in near
                for pair in swap_candidates(claim, ctx.sentences[i], ctx.all_stems, ctx.text)
            )
        )
        if word_cov >= SWAP_MATCHED
        else ()
    )
    # the best-aligned sentence, or a premise sentence when the claim's word is nowhere in the
    # contexts ("Insulin raises ..." against "..., which lowers the blood sugar level"; not "The
    # bakery does not open on Sundays." against "The bakery closes at 6 p.m.": "open" is there too)
    antonym = (
        1.0
        if _says_opposite(cf, claim, ctx.sentences[best], bf)
        or any(
            _says_opposite(cf, claim, ctx.sentences[i], ctx.features[i])
            and antonym_conflict(cf, claim, ctx.whole, ctx.text)
            for i in top
            if i != best
        )
        else 0.0
    )
    # who says it: a quote put in another speaker's mouth (English claims)
    speaker_swap = 0.0 if cf.has_cjk else speaker_swapped(claim, premises, ctx.all_entities)
    # the claim read against each sentence that speaks to it (frames): a filler from elsewhere,
    # roles exchanged, flips that cancel
    said, frame = verdict(
        read_frames(claim, ctx.sentences, ctx.context_of, ctx.text, ctx.frame_norms, ctx.frame_names)
    )
    if said != "conflict" and not cf.has_cjk and numeric_comparison(claim, ctx.sentences) is False:
        # the contexts' numbers say the other way ("The Amazon is longer than the Nile."): no one
        # sentence's reading decides it
        said, frame = "conflict", None
    values = {
        "sim_max": float(np.max(sims)),
        "cov_best": cov_best,
        "cov_all": coverage(cf.terms, ctx.all_terms),
        "num_missing": float(num_missing),
        "ent_novel": float(ent_novel),
        "neg_flip": neg_flip,
        "antonym": antonym,
        "log_terms": math.log1p(len(cf.terms)),
        "first_person": 1.0 if _FIRST_PERSON_RE.search(claim) else 0.0,
        "bigram_cov": _bigram_cov(claim, ctx.all_bigrams),
        "word_cov": word_cov,
        # rule features (:func:`support_probability`), not read by the combiners
        "num_swap": 1.0 if cf.numbers and number_swap(claim, ctx.all_slots, ctx.all_numbers) else 0.0,
        # an English claim's swap counts only where the verifier does not entail it (claim_support)
        "term_swap": 1.0 if swaps and cf.has_cjk else 0.0,
        "neg_confirmed": neg_confirmed,
        "speaker_swap": speaker_swap,
        "frame_conflict": 1.0 if said == "conflict" else 0.0,
        # a Chinese claim whose numbers a context sentence about its subject gives in the same slots
        "num_anchored": 1.0 if cf.has_cjk and _numbers_anchored(claim, [ctx.sentences[i] for i in near]) else 0.0,
        # stated, where the claim says who or what it is about (a pronoun's referent is not read),
        # states rather than asks, and does not speak for the speaker
        "frame_agrees": 1.0
        if said == "agrees"
        and num_missing == 0
        and ent_novel == 0
        and not _FIRST_PERSON_RE.search(claim)
        and not claim.rstrip().endswith(("?", "？"))
        and not _PRONOUN_SUBJECT_RE.match(claim)
        else 0.0,
    }
    return SupportFeatures(values, best, top, swaps, frame)


#: a negation flip confirms a contradiction when the claim's terms are at least this share of
#: the aligned clause's (:func:`support_probability`)
NEG_CONFIRMED_COVERAGE = 0.75
#: a swap is at most this many words (Chinese: characters) on either side
SWAP_MAX = 3
#: share of the claim's words that must match the sentence for a substitution to be a swap
SWAP_MATCHED = 0.6
#: the same for an English claim, whose candidates the verifier gates: a near copy (news summaries
#: reword more: "came back from two goals behind" for "came from two goals down")
SWAP_MATCHED_EN = 0.75
_AUXILIARIES = frozenset(
    "is are was were be been being has have had do does did will would shall should can could may might must".split()
)
#: a swap candidate whose two sides have at least this cosine is a synonym, not a swap
#: ("purchasing" / "buying" 0.93, "went" / "reached" 0.73; "liver" / "pancreas" 0.64)
SWAP_SYNONYM = 0.7
#: an English claim's swap candidate is a swap when the verifier entails the claim below this
SWAP_UNENTAILED = 0.5


def _numbers_anchored(claim: str, sentences: Sequence[str]) -> bool:
    """Every number of a Chinese claim stands in the same slot (its unit) in one of ``sentences``,
    which also names the claim's subject (the first two characters of its opening run of content
    characters): "太湖的面积大约是2400平方公里" in "太湖横跨江苏和浙江两省，面积约2400平方公里" (not
    "西湖的面积约2400平方公里": that sentence is not about 西湖)."""
    slots = number_slots(claim)
    m = ZH_OPENING_RE.match(claim.strip())
    if not slots or any(not unit for _, unit in slots) or m is None or len(m.group(0)) < 2:
        return False
    subject = m.group(0)[:2]
    return any(subject in s and slots <= number_slots(s) for s in sentences)


def _novel_content(tokens: Sequence[str], replaced: Sequence[str], context_stems: frozenset[str]) -> bool:
    """The claim's tokens are content the contexts lack: not stop words, no stem of theirs in the
    contexts, not a shortening of the replaced words ("pro" for "professional", "US" for "United
    States")."""
    if any(t in _AUXILIARIES for t in tokens):
        return False  # "has led" for "joined": a verb phrase reworded, not a filler swapped
    content = [t for t in tokens if t not in EN_STOPWORDS and t not in ZH_STOPCHARS]
    if not content or any(f in context_stems for t in content for f in name_forms(stem(t))):
        return False  # (a place's people: "Kenya's" for "Kenyan")
    joined = "".join(replaced)
    initials = "".join(t[0] for t in replaced if t)
    return not any(joined.startswith(t) or t == initials for t in content if t.isascii())


def swap_candidates(
    claim: str, sentence: str, context_stems: frozenset[str], context_text: str = ""
) -> list[tuple[str, str]]:
    """The (claim words, sentence words) pairs where the claim is ``sentence`` with a few words
    (Chinese: characters) replaced by words the contexts lack, between words it shares with it:
    "Insulin is a hormone produced by the liver." against "Insulin is a hormone produced by the
    pancreas." -> ("liver", "pancreas"); "故宫位于南京市中心" against "故宫位于北京市中心" -> ("南",
    "北"), a one-character swap. The replaced part is at most :data:`SWAP_MAX` tokens on either
    side, follows at least two shared tokens (or opens an English claim, before three shared ones:
    "Saturn is the largest planet ..." against "Jupiter is the largest planet ...") and is
    followed by a shared one or ends the claim,
    and :data:`SWAP_MATCHED` of the claim is shared. A paraphrase rewords more than that; a synonym
    put in one word's place is a candidate too, which :func:`claim_support` drops by the words'
    cosine (:data:`SWAP_SYNONYM`). The judge reads it for every Chinese claim, which the verifier
    does not read, and for an English claim only where the verifier does not entail it either
    (:data:`SWAP_UNENTAILED`): on English dialogue (BEGIN) a word put in another's place is mostly
    a synonym the cosine does not catch (docs/local-judge.md)."""
    a = tokenize(claim)
    b = tokenize(sentence)
    if len(a) < 3 or not b:
        return []
    cjk = analyze(claim).has_cjk
    ops = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    matched = sum(i2 - i1 for tag, i1, i2, _, _ in ops if tag == "equal")
    if matched < (SWAP_MATCHED if cjk else SWAP_MATCHED_EN) * len(a):
        return []
    out: list[tuple[str, str]] = []
    joiner = "" if cjk else " "
    for k, (tag, i1, i2, j1, j2) in enumerate(ops):
        if tag == "replace" and i2 == len(a) and i2 - i1 == 1:  # the claim's last token: what lines up
            j2 = j1 + 1
        if tag != "replace" or i2 - i1 > SWAP_MAX or j2 - j1 > SWAP_MAX:
            continue
        before = ops[k - 1] if k > 0 else None
        after = ops[k + 1] if k + 1 < len(ops) else None
        # an English claim's opening words in place of the sentence's, before three shared words:
        # a subject put in the subject's place ("Saturn is the largest planet ...")
        opening = not cjk and k == 0 and after is not None and after[0] == "equal" and after[2] - after[1] >= 3
        if not opening and (before is None or before[0] != "equal" or before[2] - before[1] < 2):
            continue
        if i2 < len(a) and (after is None or after[0] != "equal"):
            continue
        span = a[i1:i2]
        if all(is_cjk(t[0]) for t in span):
            # characters: new next to their neighbours ("峪山" for "嘉峪关": 山 is elsewhere in
            # the contexts, 山海关, but not after 峪)
            joined = "".join(span)
            replaced = "".join(b[j1:j2])
            if any(joined in group and replaced in group for group in ZH_EQUIVALENT_CHARS):
                continue  # 里 for 中: the same function in the same place
            novel = any(t not in ZH_STOPCHARS for t in span) and (a[i1 - 1] + joined) not in context_text
            novel = novel and (i2 == len(a) or (joined + a[i2]) not in context_text)
        else:
            novel = _novel_content(span, b[j1:j2], context_stems)
        if novel:
            out.append((joiner.join(a[i1:i2]), joiner.join(b[j1:j2])))
    return out


_CJK_RUN_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
#: share of a Chinese claim's other characters that must come from the contexts for a new run to
#: count as a swapped name (:func:`zh_novel_share`)
ZH_SWAP_COPIED = 0.8


#: quantifiers and frequency words: how much or how often, never a name ("大熊猫几乎只吃竹子"
#: against "它们的食物中百分之九十九是竹子": 几乎只 says the share in words)
_ZH_QUANTIFIER_RE = re.compile(
    "几乎|主要|大部分|大多数|大多|多数|少数|全部|所有|一半|大约|左右|通常|经常|总是|很少|从不|一直|只|仅|都"
)


_ZH_LEXICON_RE = re.compile("|".join(sorted(map(re.escape, ZH_ANTONYMS), key=len, reverse=True)))


def zh_novel_share(claim: str, context_chars: frozenset[str]) -> float:
    """Share of a Chinese claim's ideographs that stand in runs of two or more that appear nowhere
    in the contexts (function characters break a run), when the rest of the claim is taken from
    the contexts: "埃菲尔铁塔位于伦敦" against a context about Paris -> 伦敦, 2 of 9. That is a swapped
    name, place or title in an otherwise copied statement; a claim that words things its own way
    (most of its other characters new too) is a paraphrase, not a swap, and gets 0."""
    total = 0
    novel = 0
    other = 0  # characters outside the novel runs
    copied = 0  # of them, those the contexts have
    claim = _ZH_QUANTIFIER_RE.sub(lambda m: "\u3000" * len(m.group(0)), claim)
    # a word of the opposites lexicon is no name either ("输给" for "战胜": the frame reading's)
    claim = _ZH_LEXICON_RE.sub(lambda m: "\u3000" * len(m.group(0)), claim)
    for m in _CJK_RUN_RE.finditer(claim):
        run: list[str] = []
        for ch in m.group(0) + "\0":
            if ch != "\0" and ch not in context_chars and ch not in ZH_STOPCHARS:
                run.append(ch)
                continue
            if len(run) >= 2:
                novel += len(run)
            else:
                other += len(run)  # a single new character: part of the wording
            run = []
            if ch != "\0":
                other += 1
                copied += ch in context_chars
        total += len(m.group(0))
    if not novel or copied < ZH_SWAP_COPIED * other:
        return 0.0
    return novel / total


def _flipped_clause(
    claim: str, cf: TextFeatures, clause: TextFeatures, sentences: Sequence[str]
) -> tuple[str, TextFeatures, TextFeatures] | None:
    """Where the claim's negation differs from the evidence: (the claim's text, its features, the
    evidence clause), or None. A claim of one clause is read against ``clause`` (the evidence
    clause that shares most of its terms). A claim of several clauses is read clause by clause,
    each against the clause of ``sentences`` that shares most of its terms, where that shares at
    least half of them: "A sea wall collapse closed the road, but nobody was hurt." is not flipped
    by "The road was closed after a section of sea wall collapsed." (its negation is in the other
    clause, which that sentence does not state), nor "..., an object that is no danger to Earth."
    by a first sentence without a negation when another says "poses no threat to Earth"."""
    if cf.negated == clause.negated:
        return None
    sides = _clause_texts(claim)
    if len(sides) < 2:
        return claim, cf, clause
    evidence = [analyze(c) for sent in sentences for c in _clause_texts(sent)]
    for text in sides:
        side = analyze(text)
        if not side.terms:
            continue
        ev = max(evidence, key=lambda f: (coverage(side.terms, f.terms), coverage(f.terms, side.terms)))
        if coverage(side.terms, ev.terms) >= 0.5 and side.negated != ev.negated:
            return text, side, ev
    return None


_SPEECH_RE = re.compile(
    r"\b(?:said|says|say|told|tells|argued|argues|warned|warns|added|adds|claimed|claims|stated|states|"
    r"insisted|insists|admitted|admits|explained|explains|described|describes|called|calls)\b"
)
_NAME_RE = re.compile(r"\b[A-Z][A-Za-z'’\-]+")
#: share of the reported words of the claim that the sentence must report too for a different
#: speaker to be a swap (:func:`speaker_swapped`)
SPEAKER_CONTENT = 0.75


def _reported(text: str) -> tuple[str, str] | None:
    """(the speaker's name, the words reported) of a sentence that reports speech, "<speaker> said
    <words>": the speaker is the last capitalised word before the first reporting verb that is not
    a stop word ("Councillor Priya Nandakumar, who chairs the committee, said ..." -> Nandakumar);
    None when there is no reporting verb or no named speaker ("He said ...", "Police say ...": a
    pronoun or a word capitalised only because it starts the sentence)."""
    m = _SPEECH_RE.search(text)
    if m is None:
        return None
    names = [w for w in _NAME_RE.findall(text[: m.start()]) if w.lower() not in EN_STOPWORDS]
    if not names:
        return None
    return names[-1], text[m.end() :]


def speaker_swapped(claim: str, sentences: Sequence[str], entities: frozenset[str]) -> float:
    """1.0 when the claim reports words (``"<speaker> said <words>"``) that one of ``sentences``
    reports from another named speaker, and no sentence that reports them names the claim's
    speaker: "Councillor Derek Holt said the lanes would make the town centre safer" against
    "Councillor Priya Nandakumar, ..., said the lanes would make the town centre safer". The
    claim's speaker must be a name of the contexts (``entities``; a new name is ``ent_novel``'s),
    and the sentence must report at least :data:`SPEAKER_CONTENT` of the claim's reported terms."""
    said = _reported(claim)
    if said is None or stem(said[0].lower()) not in entities:
        return 0.0
    speaker, words = said
    terms = analyze(words).terms
    if len(terms) < 2:
        return 0.0
    swapped = False
    for sentence in sentences:
        other = _reported(sentence)
        if other is None or coverage(terms, analyze(other[1]).terms) < SPEAKER_CONTENT:
            continue
        if speaker in sentence:
            return 0.0  # a sentence reports the words from the claim's speaker (or names them)
        if other[0] not in claim:
            swapped = True
    return 1.0 if swapped else 0.0


def _clause_texts(sentence: str) -> list[str]:
    """The clauses of ``sentence`` (:data:`_CLAUSE_RE`; a one-word lead and a subordinate clause
    stay with their neighbour)."""
    clauses: list[str] = []
    for part in _CLAUSE_RE.split(sentence):
        if clauses and (
            (len(clauses[-1].split()) < 2 and len(clauses[-1].strip()) < 4)  # "No, it is not": one clause
            or _SUBORDINATE_RE.match(clauses[-1])  # "If you do X, nothing happens": one assertion
            or _SUBORDINATE_RE.match(part)  # "X, while Y is Z"
        ):
            clauses[-1] += " " + part
        elif part.strip():
            clauses.append(part)
    return clauses


def _says_opposite(cf: TextFeatures, claim: str, sentence: str, whole: TextFeatures) -> bool:
    """The clause of ``sentence`` that shares most of the claim's terms has the opposite of one of
    its words (:func:`antonym_conflict`) and the same polarity: "该公司的销售额上升了百分之十五" is
    not opposed by "销售额增长了百分之十五，但利润下降了百分之三" (下降 is the other clause's), and
    "The vaccine has no approval for children younger than five." not by "It is approved for
    children aged five and older." (an opposite and a negation: flips that cancel)."""
    text, ev = _aligned_clause_text(cf, sentence, whole)
    return cf.negated == ev.negated and antonym_conflict(cf, claim, ev, text)


def _aligned_clause_text(cf: TextFeatures, sentence: str, whole: TextFeatures) -> tuple[str, TextFeatures]:
    """The clause of ``sentence`` that shares most of the claim's terms, and its features: the
    claim "The bridge opened in May" copies the first clause of "The bridge opened in May, and
    trucks are not allowed", whose negation belongs to the other clause (``whole``: the
    sentence's own features, for a sentence of one clause)."""
    clauses = _clause_texts(sentence)
    if len(clauses) < 2:
        return sentence, whole
    return max(((c, analyze(c)) for c in clauses), key=lambda t: coverage(cf.terms, t[1].terms))


def _aligned_clause(cf: TextFeatures, sentence: str, whole: TextFeatures) -> TextFeatures:
    """The features of :func:`_aligned_clause_text`'s clause."""
    return _aligned_clause_text(cf, sentence, whole)[1]


def _bigram_cov(claim: str, pool: frozenset[tuple[str, str]]) -> float:
    grams = token_bigrams(claim)
    if not grams:
        return 1.0
    if len(grams) == 1 and next(iter(grams))[1] == "":
        return 1.0 if any(g[0] == next(iter(grams))[0] or g[1] == next(iter(grams))[0] for g in pool) else 0.0
    return sum(1 for g in grams if g in pool) / len(grams)


def explain(values: dict[str, float], p: float) -> str:
    """A one-line reason for a verdict, naming the features that decided it."""
    parts = [f"p={p:.2f}", f"similarity {values['sim_max']:.2f}", f"term coverage {values['cov_best']:.0%}"]
    if values["num_missing"] > 0:
        parts.append("a number or date is not in the contexts")
    if values["ent_novel"] > 0:
        parts.append("a name is not in the contexts")
    if values.get("neg_confirmed", 0) > 0:
        parts.append("the contexts say the same with the negation flipped")
    elif values["neg_flip"] > 0:
        parts.append("negation differs from the closest context sentence")
    if values["antonym"] > 0:
        parts.append("the closest context sentence says the opposite")
    if values.get("num_swap", 0) > 0:
        parts.append("the contexts give this number another value")
    if values.get("term_swap", 0) > 0:
        parts.append("words of the closest context sentence are replaced")
    if values.get("speaker_swap", 0) > 0:
        parts.append("the contexts give these words to another speaker")
    if values.get("frame_conflict", 0) > 0:
        parts.append("a context sentence about the same thing says otherwise")
    if values.get("frame_agrees", 0) > 0:
        parts.append("a context sentence states it")
    if ENTAIL in values:
        parts.append(f"entailment {values[ENTAIL]:.2f}")
    if contradiction_confirmed(values):
        parts.append(f"a confirmed contradiction: at most {CONTRADICTED_CAP}")
    elif values.get("frame_agrees", 0) > 0:
        parts.append(f"stated: at least {STATED_FLOOR}")
    elif entailed_confidently(values):
        parts.append(f"entailed confidently: at least {ENTAILED_FLOOR}")
    elif ENTAIL not in values and close_paraphrase(values):
        parts.append(f"a context sentence in other words, nothing said otherwise: at least {PARAPHRASE_FLOOR}")
    return "; ".join(parts) + " (local judge)"


def second_premises(ctx: ContextIndex, top: Sequence[int]) -> list[str]:
    """The premises read when the first does not settle a claim: the two-sentence windows around
    its best-aligned sentence (within one context) and the second-best sentence's premise."""
    if not top:
        return []
    i = top[0]
    out: list[str] = []
    if i > 0 and ctx.context_of[i - 1] == ctx.context_of[i]:
        out.append(f"{ctx.sentences[i - 1]} {ctx.sentences[i]}")
    if i + 1 < len(ctx.sentences) and ctx.context_of[i + 1] == ctx.context_of[i]:
        out.append(f"{ctx.sentences[i]} {ctx.sentences[i + 1]}")
    out.extend(premise_text(ctx, j) for j in top[1:])
    first = premise_text(ctx, i)
    return [p for p in dict.fromkeys(out) if p != first][:SECOND_PREMISES]


async def claim_support(
    claims: Sequence[str],
    ctx: ContextIndex,
    sims: np.ndarray,
    verifier: Verifier | None,
    plain: Combiner | None = None,
    band: tuple[float, float] = (0.0, 1.0),
    embed: Callable[[list[str]], Awaitable[np.ndarray]] | None = None,
) -> list[SupportFeatures]:
    """Features of each claim; ``sims``: (len(claims), n_sentences) cosines.

    With a ``verifier``, English claims also get :data:`ENTAIL`: the highest entailment probability
    over their premises (module docstring), in at most two verifier calls for all claims: the
    first premise of each, then :func:`second_premises` for those it did not settle. Only claims
    whose ``plain`` probability lies inside ``band`` are read (with no ``plain``, all). Chinese
    claims and premises are not read (the verifier's vocabulary is English). With ``embed`` (the
    judge's embedder), a swap candidate whose two sides are synonyms (:data:`SWAP_SYNONYM`) is
    dropped from ``term_swap``, in one call for all claims; without it every candidate counts."""
    feats = [support_features(c, ctx, sims[i]) for i, c in enumerate(claims)]
    # a frame swap of common words may be a synonym put in the word's place; names and numbers not
    frame_pairs = [
        f.frame.swaps
        if f.frame is not None and f.values["frame_conflict"] and all(map(lexical, f.frame.swaps))
        else ()
        for f in feats
    ]
    pairs = list(
        dict.fromkeys([*(pair for f in feats for pair in f.swaps), *(p for fp in frame_pairs for p in fp)])
    )
    synonym: dict[tuple[str, str], bool] = {}
    if pairs and embed is not None:
        emb = np.asarray(await embed([t for pair in pairs for t in pair]), dtype=np.float64)
        synonym = {pair: float(emb[2 * k] @ emb[2 * k + 1]) >= SWAP_SYNONYM for k, pair in enumerate(pairs)}
        for claim, f, fp in zip(claims, feats, frame_pairs, strict=True):
            if analyze(claim).has_cjk:  # (an English claim's swaps wait for the verifier, below)
                f.values["term_swap"] = 1.0 if any(not synonym[pair] for pair in f.swaps) else 0.0
            if fp and f.frame is not None and not f.frame.flips and all(synonym[pair] for pair in fp):
                f.values["frame_conflict"] = 0.0  # a synonym in the sentence's place, not a swap
    if verifier is None:
        return feats
    chinese = "zh" in languages_of(verifier)
    read: list[int] = []
    for i, (claim, f) in enumerate(zip(claims, feats, strict=True)):
        if (analyze(claim).has_cjk and not chinese) or not f.top:
            continue
        if plain is not None and band != (0.0, 1.0) and not band[0] <= plain.probability(f.values) <= band[1]:
            continue
        read.append(i)

    def second(i: int) -> list[str]:
        f = feats[i]
        if f.values.get(ENTAIL, 0.0) >= CONFIDENT:
            return []
        if plain is not None and plain.probability(f.values) < SECOND_ROUND_FLOOR:
            return []
        return second_premises(ctx, f.top)

    rounds = (lambda i: [premise_text(ctx, feats[i].top[0])], second)
    for premises_of in rounds:
        premises: list[str] = []
        owners: list[int] = []
        for i in read:
            for premise in premises_of(i):
                if chinese or not analyze(premise).has_cjk:
                    premises.append(premise)
                    owners.append(i)
        if not premises:
            continue
        probs = await verifier.entailment(premises, [claims[i] for i in owners])
        for i, p in zip(owners, probs, strict=True):
            f = feats[i]
            f.values[ENTAIL] = max(f.values.get(ENTAIL, 0.0), min(max(float(p), 0.0), 1.0))
    for i in read:
        f = feats[i]
        if not analyze(claims[i]).has_cjk and ENTAIL in f.values:
            # an English word put in another's place, which the contexts lack, is a swap when the
            # verifier does not entail the claim either ("Insulin is produced by the liver."
            # against "... by the pancreas."): alone it is mostly a synonym on English dialogue
            unsynonymous = [pair for pair in f.swaps if not synonym.get(pair, False)]
            f.values["term_swap"] = 1.0 if unsynonymous and f.values[ENTAIL] < SWAP_UNENTAILED else 0.0
    return feats


def reads_entail(values: Mapping[str, float], combiner: Combiner) -> bool:
    """Whether a claim with these feature ``values`` is scored by ``combiner`` rather than by the
    plain one: the verifier read it and ``combiner`` reads :data:`ENTAIL`."""
    return ENTAIL in values and ENTAIL in combiner.features


#: the most a claim whose contradiction the features confirm reads (:func:`support_probability`)
CONTRADICTED_CAP = 0.3
#: the least a claim the verifier entails confidently reads, at :data:`CONFIDENT` (rising to
#: :data:`ENTAILED_FLOOR_TOP` at entailment 1)
ENTAILED_FLOOR = 0.8
ENTAILED_FLOOR_TOP = 0.95
#: the least a claim reads that a context sentence states, every content word there with no
#: filler swapped and flips that cancel (:mod:`ragmeter.local.frames`)
STATED_FLOOR = 0.9


def contradiction_confirmed(values: Mapping[str, float]) -> bool:
    """The features find the claim at odds with the contexts in a way a reader sees at once: a
    number the contexts give another value in the same slot (``num_swap``), a negation the
    aligned clause lacks (or has) with most of the claim's terms in that clause
    (``neg_confirmed``), an antonym of the aligned sentence's word (``antonym``), words a premise
    sentence reports from another named speaker (``speaker_swap``), or a few characters of an
    otherwise copied sentence replaced by ones the contexts lack (``term_swap``, Chinese claims;
    whatever a verifier says: a Chinese-capable one entailed such copies with a name changed,
    "……是土星。" against "……是木星。", docs/local-judge.md, "Chinese")."""
    if (
        values.get("frame_conflict", 0.0) > 0
        or values.get("num_swap", 0.0) > 0
        or values.get("speaker_swap", 0.0) > 0
    ):
        return True
    # a negation or an opposite alone says otherwise, unless a sentence states the claim with
    # flips that cancel ("does not open" / "is closed": frames)
    if values.get("frame_agrees", 0.0) == 0 and (
        values.get("neg_confirmed", 0.0) > 0 or values.get("antonym", 0.0) > 0
    ):
        return True
    return values.get("term_swap", 0.0) > 0 and values.get("frame_agrees", 0.0) == 0


def entailed_confidently(values: Mapping[str, float]) -> bool:
    """The verifier entails the claim with at least :data:`CONFIDENT`, and the claim brings no
    name the contexts lack, no negation flip and no first-person statement: it reads supported
    (:func:`support_probability`) unless a contradiction is confirmed."""
    return (
        values.get(ENTAIL, 0.0) >= CONFIDENT
        and values["ent_novel"] == 0
        and values["neg_flip"] == 0
        and values["first_person"] == 0
    )


def support_probability(feats: SupportFeatures, combiner: Combiner, plain: Combiner) -> float:
    """P(supported): ``combiner`` (which reads :data:`ENTAIL`) when the verifier read the claim,
    else ``plain`` (:func:`reads_entail`); then the rules the combiners, fitted on overlap-heavy
    data, do not learn (:func:`after_rules`)."""
    values = feats.values
    entail = reads_entail(values, combiner)
    use = combiner if entail else plain
    return after_rules(values, use.probability(values), entail)


def after_rules(values: Mapping[str, float], p: float, entail: bool) -> float:
    """A combiner's probability ``p`` for a claim with these feature ``values`` after the rules. A
    contradiction the features confirm (:func:`contradiction_confirmed`) caps it at
    :data:`CONTRADICTED_CAP`, whatever the verifier says (it reads numbers and swapped words
    poorly); otherwise a claim a context sentence states (``frame_agrees``) reads at least
    :data:`STATED_FLOOR`, and, when the verifier entails the claim confidently (>=
    :data:`CONFIDENT`, ``entail``: the combiner read it) and the claim brings no name the contexts
    lack and no negation flip, it reads supported: at least :data:`ENTAILED_FLOOR`, whatever the
    lexical overlap. :func:`ragmeter.local.refit.bag_scores` applies the same rules."""
    p = min(max(float(p), 0.0), 1.0)
    if contradiction_confirmed(values):
        return min(p, CONTRADICTED_CAP)
    if values.get("frame_agrees", 0.0) > 0:
        p = max(p, STATED_FLOOR)
    if entail and entailed_confidently(values):
        e = values[ENTAIL]
        floor = ENTAILED_FLOOR + (ENTAILED_FLOOR_TOP - ENTAILED_FLOOR) * (e - CONFIDENT) / (1.0 - CONFIDENT)
        return max(p, floor)
    if not entail and close_paraphrase(values):
        return max(p, PARAPHRASE_FLOOR)
    return p


#: a claim the verifier did not read that is this close to a context sentence (cosine) ...
PARAPHRASE_SIM = 0.8
#: ... with this share of its words (Chinese: characters) in the contexts ...
PARAPHRASE_COVERAGE = 0.75
#: ... and no sign that it says otherwise reads at least this (:func:`close_paraphrase`)
PARAPHRASE_FLOOR = 0.75
#: the features that say a claim departs from the contexts; any one of them keeps it from reading
#: as a close paraphrase
_DEPARTURES = (
    "frame_conflict", "num_swap", "term_swap", "neg_confirmed", "speaker_swap", "antonym", "neg_flip",
    "num_missing", "ent_novel", "first_person",
)  # fmt: skip


def close_paraphrase(values: Mapping[str, float]) -> bool:
    """A claim the verifier does not read (Chinese claims: its vocabulary is English) that restates
    a context sentence in other words: close in meaning (``sim_max`` >= :data:`PARAPHRASE_SIM`), or
    giving its numbers as a sentence about its subject does (``num_anchored``: "太湖的面积大约是2400
    平方公里" against "太湖……面积约2400平方公里", cosine 0.77),
    made of the contexts' words (``word_cov`` >= :data:`PARAPHRASE_COVERAGE`), and with no sign of
    departing from them: no swapped filler or flip of the frame reading, no number, name or
    negation of its own, no antonym. The plain combiner reads character-pair coverage, which a
    paraphrase lowers ("《阿Q正传》是鲁迅写的" against "鲁迅创作了《阿Q正传》": 0.66); the contradictions
    such a claim could hide are the ones those features look for. The counterpart of the verifier's
    confident entailment, for the claims it cannot read."""
    return (
        (values.get("sim_max", 0.0) >= PARAPHRASE_SIM or values.get("num_anchored", 0.0) > 0)
        and values.get("word_cov", 0.0) >= PARAPHRASE_COVERAGE
        and not any(values.get(name, 0.0) > 0 for name in _DEPARTURES)
    )
