"""Judge-free lexical metrics of the answer against the reference: exact match, token F1, ROUGE-L, BLEU.

All four compare ``answer`` with ``reference`` through :mod:`ragmeter.text`, so English is compared
word by word and Chinese character by character (mixed text works: English words and Chinese
characters are both tokens). They make no judge call.

Shared edge cases: an empty (whitespace-only) answer or reference is invalid (``EmptyInput``); a
reference with no token left after normalisation (only punctuation, or only articles for exact
match / token F1) cannot be scored and is invalid (``NoTokens``); an answer with no token left scores
0.0, with a reason that says so.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from ragmeter.metrics._common import blank, empty_input
from ragmeter.metrics.base import Metric, Score, register_metric
from ragmeter.text import normalize_answer, tokenize

if TYPE_CHECKING:
    from ragmeter.dataset.sample import Sample
    from ragmeter.judges.base import Judge

#: samples per ``score_batch`` call: the runner's cost per call is then negligible next to the
#: arithmetic (the default ``score_batch`` scores each sample in turn, with no await between)
BATCH_SIZE = 256

__all__ = ["Bleu", "ExactMatch", "RougeL", "TokenF1", "clipped_overlap", "lcs_length", "sentence_bleu"]


# The four metrics tokenise the same answer and reference: a small cache shares the work across
# them (the runner scores one batch of samples with each metric in turn, so it stays warm).
_CACHE = 4096


@lru_cache(maxsize=_CACHE)
def _tokens(text: str) -> tuple[str, ...]:
    return tuple(tokenize(text))


@lru_cache(maxsize=_CACHE)
def _normalized(text: str) -> str:
    return normalize_answer(text)


@lru_cache(maxsize=_CACHE)
def _normalized_tokens(text: str) -> tuple[str, ...]:
    return tuple(tokenize(_normalized(text)))


def _check_inputs(sample: Sample) -> Score | None:
    if sample.answer is None or blank(sample.answer):
        return empty_input("answer")
    if sample.reference is None or blank(sample.reference):
        return empty_input("reference")
    return None


def _no_reference_tokens(what: str) -> Score:
    return Score.invalid("NoTokens", f"the reference has no {what} left after normalisation: cannot compare")


def _prf(overlap: int, n_answer: int, n_reference: int) -> tuple[float, float, float]:
    """Precision, recall and F1 (beta = 1) from an overlap count."""
    if overlap == 0:
        return 0.0, 0.0, 0.0
    p = overlap / n_answer
    r = overlap / n_reference
    return p, r, 2 * p * r / (p + r)


@register_metric("exact_match")
class ExactMatch(Metric):
    """1.0 when the normalised answer equals the normalised reference, else 0.0.

    Normalisation is SQuAD's (:func:`ragmeter.text.normalize_answer`): lowercase, no punctuation,
    no articles a/an/the, single spaces; for Chinese, no punctuation and no spaces. No judge call.
    """

    name = "exact_match"
    requires = ("answer", "reference")
    batch_size = BATCH_SIZE

    async def score(self, sample: Sample, judge: Judge) -> Score:
        bad = _check_inputs(sample)
        if bad is not None:
            return bad
        a = _normalized(sample.answer or "")
        r = _normalized(sample.reference or "")
        if not r:
            return _no_reference_tokens("text")
        match = a == r
        return Score(
            value=1.0 if match else 0.0,
            reason=f"normalised answer {'equals' if match else 'differs from'} the reference",
            # no copy of the texts: the run record holds each sample's text once, and
            # normalize_answer(sample.answer) gives the compared form again
            details={"n_answer_chars": len(a), "n_reference_chars": len(r)},
        )


@register_metric("token_f1")
class TokenF1(Metric):
    """SQuAD token F1 between answer and reference.

    Tokens: :func:`~ragmeter.text.tokenize` of :func:`~ragmeter.text.normalize_answer` (for
    English exactly SQuAD's ``normalize_answer(s).split()``; Chinese by character)::

        overlap   = |answer tokens ∩ reference tokens|   (multiset intersection)
        precision = overlap / |answer tokens|,  recall = overlap / |reference tokens|
        token_f1  = 2 * precision * recall / (precision + recall)   (0 when overlap is 0)

    No judge call.
    """

    name = "token_f1"
    requires = ("answer", "reference")
    batch_size = BATCH_SIZE

    async def score(self, sample: Sample, judge: Judge) -> Score:
        bad = _check_inputs(sample)
        if bad is not None:
            return bad
        a = _normalized_tokens(sample.answer or "")
        r = _normalized_tokens(sample.reference or "")
        if not r:
            return _no_reference_tokens("token")
        overlap = clipped_overlap(Counter(a), Counter(r))
        p, rec, f1 = _prf(overlap, len(a), len(r))
        return Score(
            value=f1,
            reason=_reason(overlap, a, r, p, rec),
            details={
                "precision": p,
                "recall": rec,
                "n_common": overlap,
                "n_answer_tokens": len(a),
                "n_reference_tokens": len(r),
            },
        )


def _reason(
    overlap: int, a: Sequence[str], r: Sequence[str], p: float, rec: float, what: str = "shared"
) -> str:
    if not a:
        return "the answer has no token left after normalisation"
    return (
        f"{overlap} {what} tokens; precision {p:.3f} ({len(a)} answer tokens), "
        f"recall {rec:.3f} ({len(r)} reference tokens)"
    )


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence of two token sequences.

    Bit-parallel (Allison & Dix 1986; Hyyrö 2004): the row of the dynamic-programming table is
    one integer with a bit per token of the shorter sequence, updated with a few integer
    operations per token of the longer one, so Python does O(len(a)) work on integers of
    len(b) bits instead of O(len(a) * len(b)) steps. Same result as the textbook table.
    """
    if len(a) < len(b):
        a, b = b, a
    if not b:
        return 0
    masks: dict[str, int] = {}
    for j, y in enumerate(b):
        masks[y] = masks.get(y, 0) | (1 << j)
    full = (1 << len(b)) - 1
    row = full  # bit j set: the LCS does not grow at position j yet
    for x in a:
        m = masks.get(x)
        if m:
            u = row & m
            row = ((row + u) | (row - u)) & full
    return len(b) - row.bit_count()


@register_metric("rouge_l")
class RougeL(Metric):
    """ROUGE-L F-measure (Lin 2004, sentence level, beta = 1), as Google's ``rouge_score`` reports it.

    Tokens: :func:`~ragmeter.text.tokenize` (lowercase, no punctuation, Chinese by character; no
    stemming, articles kept)::

        lcs = longest common subsequence of answer and reference tokens
        precision = lcs / |answer|,  recall = lcs / |reference|
        rouge_l = 2 * precision * recall / (precision + recall)   (0 when lcs is 0)

    No judge call.
    """

    name = "rouge_l"
    requires = ("answer", "reference")
    batch_size = BATCH_SIZE

    async def score(self, sample: Sample, judge: Judge) -> Score:
        bad = _check_inputs(sample)
        if bad is not None:
            return bad
        a = _tokens(sample.answer or "")
        r = _tokens(sample.reference or "")
        if not r:
            return _no_reference_tokens("token")
        lcs = lcs_length(a, r)
        p, rec, f = _prf(lcs, len(a), len(r))
        return Score(
            value=f,
            reason=_reason(lcs, a, r, p, rec, what="in-order (LCS)"),
            details={
                "precision": p,
                "recall": rec,
                "lcs": lcs,
                "n_answer_tokens": len(a),
                "n_reference_tokens": len(r),
            },
        )


def clipped_overlap(a: Mapping[Any, int], b: Mapping[Any, int]) -> int:
    """``sum((Counter(a) & Counter(b)).values())``: the multiset intersection's size, counted over
    the keys both have (a set intersection in C) instead of building the intersection."""
    if len(b) < len(a):
        a, b = b, a
    return sum(min(n, b[k]) for k, n in a.items() if k in b)


def _ngram_counts(tokens: Sequence[str], n: int) -> Counter[Any]:
    """The n-grams of ``tokens`` counted: tuples of n tokens, or (n = 1) the tokens themselves."""
    if n == 1:
        return Counter(tokens)
    return Counter(zip(*(tokens[i:] for i in range(n)), strict=False))  # shortest slice ends it


def sentence_bleu(
    hypothesis: Sequence[str], reference: Sequence[str], *, max_n: int = 4, epsilon: float = 0.1
) -> tuple[float, list[float], float]:
    """Sentence BLEU of one hypothesis against one reference, as NLTK's ``sentence_bleu`` with
    ``SmoothingFunction().method1`` computes it.

    Returns ``(bleu, smoothed precisions p_1..p_max_n, brevity penalty)``::

        p_n = clipped matching n-grams / max(1, hypothesis n-grams);  p_n = epsilon / denominator if 0
        BP  = 1 if c > r, 0 if c == 0, else exp(1 - r / c)     (c, r: hypothesis, reference lengths)
        bleu = BP * exp( sum_n (1/max_n) * log p_n )            and 0 when no unigram matches
    """
    precisions: list[float] = []
    first_numerator = 0
    for n in range(1, max_n + 1):
        hyp = _ngram_counts(hypothesis, n)
        numerator = clipped_overlap(hyp, _ngram_counts(reference, n))  # clipped: min of the two counts
        denominator = max(1, len(hypothesis) - n + 1)  # the hypothesis's n-grams
        if n == 1:
            first_numerator = numerator
        precisions.append((numerator if numerator else epsilon) / denominator)
    c, r = len(hypothesis), len(reference)
    bp = 1.0 if c > r else (0.0 if c == 0 else math.exp(1 - r / c))
    if first_numerator == 0:
        return 0.0, precisions, bp
    return bp * math.exp(math.fsum(math.log(p) / max_n for p in precisions)), precisions, bp


@register_metric("bleu")
class Bleu(Metric):
    """Sentence BLEU-4 (Papineni et al. 2002) of the answer against the reference.

    Tokens: :func:`~ragmeter.text.tokenize` (lowercase, no punctuation, Chinese by character).
    Uniform weights 1/4 over 1- to 4-gram clipped precisions, brevity penalty, and smoothing
    method 1 of Chen & Cherry (2014): an n-gram order with no match gets ``0.1 / count`` instead of
    0, so one missing 4-gram does not zero a sentence score. As in NLTK, an answer sharing no
    unigram with the reference scores 0. Same numbers as ``nltk.translate.bleu_score.sentence_bleu(
    [ref], hyp, smoothing_function=SmoothingFunction().method1)`` on the same tokens. See
    :func:`sentence_bleu`. No judge call.
    """

    name = "bleu"
    requires = ("answer", "reference")
    batch_size = BATCH_SIZE

    async def score(self, sample: Sample, judge: Judge) -> Score:
        bad = _check_inputs(sample)
        if bad is not None:
            return bad
        a = _tokens(sample.answer or "")
        r = _tokens(sample.reference or "")
        if not r:
            return _no_reference_tokens("token")
        value, precisions, bp = sentence_bleu(a, r)
        if not a:
            reason = "the answer has no token left after normalisation"
        else:
            reason = (
                f"BLEU-4 {value:.3f}: n-gram precisions "
                + ", ".join(f"{p:.3f}" for p in precisions)
                + f"; brevity penalty {bp:.3f} ({len(a)} answer / {len(r)} reference tokens)"
            )
        return Score(
            value=value,
            reason=reason,
            details={
                "precisions": precisions,
                "brevity_penalty": bp,
                "n_answer_tokens": len(a),
                "n_reference_tokens": len(r),
            },
        )
