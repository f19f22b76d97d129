from __future__ import annotations

import math
import re
import string
from collections import Counter

import pytest

from ragmeter.dataset.sample import Sample
from ragmeter.metrics import Bleu, ExactMatch, RougeL, TokenF1, list_metrics
from ragmeter.metrics.lexical import lcs_length, sentence_bleu
from ragmeter.text import tokenize


def s(answer: str | None, reference: str | None) -> Sample:
    return Sample(question="q", answer=answer, reference=reference)


# --------------------------------------------------------------------------- exact match


@pytest.mark.parametrize(
    ("answer", "reference", "expected"),
    [
        ("The Eiffel Tower!", "eiffel tower", 1.0),
        ("  an  apple ", "Apple.", 1.0),
        ("Paris, France", "Paris", 0.0),
        ("北京。", " 北京 ", 1.0),
        ("北京 是 首都", "北京是首都！", 1.0),
        ("北京市", "北京", 0.0),
        ("ＡＢＣ　１２３", "abc 123", 1.0),  # full-width forms
        ("?", "Paris", 0.0),  # no token left in the answer: a real 0
    ],
)
async def test_exact_match(judge, answer, reference, expected):
    score = await ExactMatch().score(s(answer, reference), judge)
    assert score.value == expected
    assert judge.calls == []


# --------------------------------------------------------------------------- token F1


async def test_token_f1_squad_example(judge):
    # normalised: "cat sat on mat" vs "cat sat on hat": 3 common, P = R = 3/4
    score = await TokenF1().score(s("The cat sat on the mat.", "A cat sat on a hat"), judge)
    assert score.value == pytest.approx(0.75)
    assert score.details["precision"] == pytest.approx(0.75)
    assert score.details["recall"] == pytest.approx(0.75)
    assert score.details["n_common"] == 3


async def test_token_f1_counts_multisets(judge):
    # red red blue / red blue blue green: common = 1 red + 1 blue = 2; P = 2/3, R = 2/4 -> 4/7
    score = await TokenF1().score(s("red red blue", "red blue blue green"), judge)
    assert score.value == pytest.approx(4 / 7)


async def test_token_f1_chinese_is_character_level(judge):
    # 首 都 是 北 京 (5) vs 中 国 的 首 都 是 北 京 (8): 5 common, P = 1, R = 5/8 -> 10/13
    score = await TokenF1().score(s("首都是北京", "中国的首都是北京。"), judge)
    assert score.value == pytest.approx(10 / 13)
    assert score.details["n_answer_tokens"] == 5
    assert score.details["n_reference_tokens"] == 8


async def test_token_f1_mixed(judge):
    # python 是 一 种 语 言 (6) vs python 语 言 (3): 3 common -> P = 1/2, R = 1 -> 2/3
    score = await TokenF1().score(s("Python 是一种语言", "Python语言"), judge)
    assert score.value == pytest.approx(2 / 3)


async def test_token_f1_no_overlap_and_empty_answer(judge):
    assert (await TokenF1().score(s("dog", "cat"), judge)).value == 0.0
    score = await TokenF1().score(s("The!", "cat"), judge)  # nothing left after normalisation
    assert score.value == 0.0
    assert "no token" in score.reason


def _squad_normalize(text: str) -> str:
    text = "".join(ch for ch in text.lower() if ch not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def _squad_f1(prediction: str, truth: str) -> float:
    p, t = _squad_normalize(prediction).split(), _squad_normalize(truth).split()
    common = sum((Counter(p) & Counter(t)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(p), common / len(t)
    return 2 * precision * recall / (precision + recall)


@pytest.mark.parametrize(
    ("answer", "reference"),
    [
        ("Denver Broncos", "The Denver Broncos"),
        ("in the late 1990s, the state-of-the-art", "state-of-the-art in 1990s"),
        ("Saint Bernadette Soubirous", "a Saint Bernadette"),
        ("It's 3.14 meters", "it is 3.14 meters long"),
        ("$1,000 per year", "1,000 dollars a year"),
    ],
)
async def test_token_f1_equals_squad_on_english(judge, answer, reference):
    score = await TokenF1().score(s(answer, reference), judge)
    assert score.value == pytest.approx(_squad_f1(answer, reference))


# --------------------------------------------------------------------------- ROUGE-L


def test_lcs_length():
    assert lcs_length(list("abcbdab"), list("bdcaba")) == 4
    assert lcs_length([], ["a"]) == 0
    assert lcs_length(["a", "b"], ["a", "b"]) == 2
    assert lcs_length(list("xyz"), list("abc")) == 0


async def test_rouge_l_known_example(judge):
    # The rouge_score README example: LCS = the quick brown jumps the = 5; P = 5/8, R = 5/9, F = 10/17
    score = await RougeL().score(
        s("The quick brown dog jumps on the log.", "The quick brown fox jumps over the lazy dog"), judge
    )
    assert score.value == pytest.approx(10 / 17)
    assert score.details["precision"] == pytest.approx(0.625)
    assert score.details["recall"] == pytest.approx(5 / 9)
    assert score.details["lcs"] == 5


async def test_rouge_l_chinese(judge):
    # 我 爱 北 京 天 安 门 (7) vs 我 爱 上 海 (4): LCS 2, P = 2/7, R = 1/2 -> 4/11
    score = await RougeL().score(s("我爱北京天安门", "我爱上海"), judge)
    assert score.value == pytest.approx(4 / 11)


async def test_rouge_l_is_order_sensitive(judge):
    a = await RougeL().score(s("a b c d", "a b c d"), judge)
    b = await RougeL().score(s("d c b a", "a b c d"), judge)
    assert a.value == 1.0
    assert b.value == pytest.approx(0.25)  # LCS 1 of 4


# --------------------------------------------------------------------------- BLEU


async def test_bleu_hand_computed(judge):
    # hyp: the cat sat on the mat / ref: the cat is on the mat (6 tokens each, BP = 1)
    # p1 = 5/6, p2 = 3/5, p3 = 1/4, p4 = 0/3 -> smoothed 0.1/3
    expected = (5 / 6 * 3 / 5 * 1 / 4 * (0.1 / 3)) ** 0.25
    score = await Bleu().score(s("The cat sat on the mat.", "The cat is on the mat."), judge)
    assert score.value == pytest.approx(expected)
    assert score.details["precisions"] == pytest.approx([5 / 6, 3 / 5, 1 / 4, 0.1 / 3])
    assert score.details["brevity_penalty"] == 1.0
    assert judge.calls == []


async def test_bleu_brevity_penalty(judge):
    # hyp "the cat" (2) vs 6 reference tokens: p1 = p2 = 1, p3 = p4 = 0.1/1 (no n-grams), BP = e^(1-3)
    score = await Bleu().score(s("the cat", "the cat sat on the mat"), judge)
    assert score.details["brevity_penalty"] == pytest.approx(math.exp(-2))
    assert score.value == pytest.approx(math.exp(-2) * (0.1 * 0.1) ** 0.25)


async def test_bleu_chinese(judge):
    # 我爱北京 vs 我爱北京天安门: all n-gram precisions 1, BP = exp(1 - 7/4)
    score = await Bleu().score(s("我爱北京", "我爱北京天安门"), judge)
    assert score.value == pytest.approx(math.exp(1 - 7 / 4))


async def test_bleu_no_overlap_is_zero_and_perfect_is_one(judge):
    assert (await Bleu().score(s("completely different", "nothing shared here"), judge)).value == 0.0
    assert (
        await Bleu().score(s("one two three four five", "One, two, three, four, five."), judge)
    ).value == (pytest.approx(1.0))


def test_sentence_bleu_nltk_docstring_example():
    # nltk.translate.bleu_score.SmoothingFunction docstring: method1 on this pair gives 0.4118...
    hyp = "It is a guide to action which ensures that the military always obeys the commands of the party"
    ref = "It is a guide to action that ensures that the military will forever heed Party commands"
    value, _, bp = sentence_bleu(hyp.split(), ref.split())
    assert bp == 1.0
    assert value == pytest.approx(0.4118, abs=5e-5)


# --------------------------------------------------------------------------- shared edge cases


@pytest.mark.parametrize("cls", [ExactMatch, TokenF1, RougeL, Bleu])
@pytest.mark.parametrize(
    ("answer", "reference", "kind"),
    [
        ("   ", "Paris", "EmptyInput"),
        (None, "Paris", "EmptyInput"),
        ("Paris", "\n\t ", "EmptyInput"),
        ("Paris", None, "EmptyInput"),
        ("Paris", "...!?。", "NoTokens"),
    ],
)
async def test_unscorable_inputs_are_invalid(judge, cls, answer, reference, kind):
    score = await cls().score(s(answer, reference), judge)
    assert score.value is None
    assert score.error is not None and score.error.kind == kind


@pytest.mark.parametrize("cls", [ExactMatch, TokenF1, RougeL, Bleu])
async def test_punctuation_only_answer_scores_zero(judge, cls):
    score = await cls().score(s("!!!", "Paris is the capital"), judge)
    assert score.value == 0.0
    assert score.valid


def test_registered_and_judge_free():
    names = list_metrics()
    for name, cls in [
        ("exact_match", ExactMatch),
        ("token_f1", TokenF1),
        ("rouge_l", RougeL),
        ("bleu", Bleu),
    ]:
        assert names[name] is cls
        assert cls.steps == ()
        assert cls.requires == ("answer", "reference")


# --------------------------------------------------------------------------- reference implementations
# Only when one happens to be installed; ragmeter does not depend on them.

PAIRS = [
    ("the cat sat on the mat", "the cat is on the mat"),
    ("a quick brown fox jumped over the lazy dog today", "the quick brown fox jumps over the lazy dog"),
    ("there is a cat on the mat", "the cat is on the mat"),
    ("police killed the gunman", "the gunman was shot dead by police"),
    ("short", "a much longer reference sentence here"),
]


@pytest.mark.parametrize(("answer", "reference"), PAIRS)
async def test_bleu_matches_nltk_if_installed(judge, answer, reference):
    bleu_score = pytest.importorskip("nltk.translate.bleu_score")
    expected = bleu_score.sentence_bleu(
        [tokenize(reference)], tokenize(answer), smoothing_function=bleu_score.SmoothingFunction().method1
    )
    assert (await Bleu().score(s(answer, reference), judge)).value == pytest.approx(expected)


@pytest.mark.parametrize(("answer", "reference"), PAIRS)
async def test_rouge_l_matches_rouge_score_if_installed(judge, answer, reference):
    rouge_scorer = pytest.importorskip("rouge_score.rouge_scorer")
    expected = rouge_scorer.RougeScorer(["rougeL"]).score(reference, answer)["rougeL"].fmeasure
    assert (await RougeL().score(s(answer, reference), judge)).value == pytest.approx(expected)


def _lcs_table(a: list[str], b: list[str]) -> int:
    """The textbook O(len(a) * len(b)) table, to check the bit-parallel lcs_length against."""
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def test_lcs_length_equals_the_textbook_table_on_random_sequences():
    import random

    rng = random.Random(3)
    for _ in range(500):
        alphabet = "abcdefgh"[: rng.randint(1, 8)]
        a = [rng.choice(alphabet) for _ in range(rng.randint(0, 40))]
        b = [rng.choice(alphabet) for _ in range(rng.randint(0, 90))]
        assert lcs_length(a, b) == lcs_length(b, a) == _lcs_table(a, b), (a, b)
