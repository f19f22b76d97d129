from __future__ import annotations

import numpy as np
import pytest

from ragmeter.dataset.sample import Sample
from ragmeter.errors import ConfigError, JudgeOutputError
from ragmeter.metrics import AnswerRelevance, get_metric

QUESTION = "What is the capital of France?"
ANSWER = "Paris is the capital of France."
GENERATED = ["Which city is the capital of France?", "What is Paris?", "How big is Paris?"]


def vectors(mapping: dict[str, list[float]]):
    """An embed_fn that returns scripted (not normalised) vectors."""

    def fn(texts):
        return np.array([mapping[t] for t in texts], dtype=np.float32)

    return fn


async def test_mean_cosine_worked_example(make_judge):
    # cosines with the question: 1.0, 0.6, 0.0 -> mean 1.6 / 3
    emb = vectors(
        {
            QUESTION: [1.0, 0.0, 0.0],
            GENERATED[0]: [2.0, 0.0, 0.0],  # same direction: 1.0 (the metric normalises)
            GENERATED[1]: [0.6, 0.8, 0.0],  # 0.6
            GENERATED[2]: [0.0, 0.0, 3.0],  # 0.0
        }
    )
    judge = make_judge(questions=GENERATED, embed_fn=emb)
    s = await AnswerRelevance().score(Sample(question=QUESTION, answer=ANSWER), judge)
    assert s.valid
    assert s.value == pytest.approx(1.6 / 3, abs=1e-6)
    sims = [q["similarity"] for q in s.details["questions"]]
    assert sims == pytest.approx([1.0, 0.6, 0.0], abs=1e-6)
    assert [q["question"] for q in s.details["questions"]] == GENERATED
    assert s.details["noncommittal"] is False
    assert "Which city is the capital of France?" in s.reason  # the closest one


async def test_two_calls_one_embed(make_judge):
    judge = make_judge(questions=GENERATED)
    await AnswerRelevance(n=3).score(Sample(question=QUESTION, answer=ANSWER), judge)
    assert judge.steps_called() == ["generate_questions", "embed"]
    assert judge.calls[0][1] == {"answer": ANSWER, "n": 3, "lang": "en"}
    assert judge.calls[1][1]["texts"] == [QUESTION, *GENERATED]


async def test_bag_of_words_embedder(make_judge, bow_embed):
    # identical question -> cosine exactly 1; the other one as the embedder says
    q = "capital of france"
    gen = ["capital of france", "weather today"]
    e = np.stack([bow_embed(t) for t in [q, *gen]])
    expected = (1.0 + float(e[0] @ e[2])) / 2
    judge = make_judge(questions=gen)
    s = await AnswerRelevance(n=2).score(Sample(question=q, answer="Paris."), judge)
    assert s.value == pytest.approx(expected, abs=1e-6)


async def test_negative_mean_is_clipped_to_zero(make_judge):
    emb = vectors({QUESTION: [1.0, 0.0], "Opposite?": [-1.0, 0.0]})
    judge = make_judge(questions=["Opposite?"], embed_fn=emb)
    s = await AnswerRelevance(n=1).score(Sample(question=QUESTION, answer=ANSWER), judge)
    assert s.value == 0.0
    assert s.details["mean_cosine"] == pytest.approx(-1.0)
    assert s.details["questions"][0]["similarity"] == pytest.approx(-1.0)


async def test_noncommittal_scores_zero_without_embedding(make_judge):
    judge = make_judge(questions=["What is the capital of France?"], noncommittal=True)
    s = await AnswerRelevance().score(Sample(question=QUESTION, answer="I don't know."), judge)
    assert s.valid
    assert s.value == 0.0
    assert s.details["noncommittal"] is True
    assert "noncommittal" in s.reason
    assert judge.steps_called() == ["generate_questions"]


async def test_no_questions_is_invalid(make_judge):
    judge = make_judge(questions=["", "  "])
    s = await AnswerRelevance().score(Sample(question=QUESTION, answer=ANSWER), judge)
    assert s.error is not None and s.error.kind == "NoQuestions"
    assert judge.steps_called() == ["generate_questions"]


async def test_chinese(make_judge):
    q = "法国的首都是哪里？"
    gen = ["法国的首都是哪里？", "巴黎是哪个国家的首都？"]
    judge = make_judge(questions=gen)
    s = await AnswerRelevance(n=2).score(Sample(question=q, answer="法国的首都是巴黎。"), judge)
    assert s.details["lang"] == "zh"
    assert judge.calls[0][1]["lang"] == "zh"
    sims = [x["similarity"] for x in s.details["questions"]]
    assert sims[0] == pytest.approx(1.0, abs=1e-6)
    assert 0.0 < sims[1] < 1.0  # shares characters 国 的 首 都 是 ...
    assert s.value == pytest.approx(sum(sims) / 2, abs=1e-6)


@pytest.mark.parametrize(
    ("emb", "why"),
    [
        (lambda texts: np.zeros((len(texts), 4), dtype=np.float32), "all-zero"),
        (lambda texts: np.full((len(texts), 4), np.nan, dtype=np.float32), "non-finite"),
        (lambda texts: np.ones((1, 4), dtype=np.float32), "shape"),
    ],
)
async def test_bad_embeddings_are_invalid_never_nan(make_judge, emb, why):
    judge = make_judge(questions=GENERATED, embed_fn=emb)
    s = await AnswerRelevance().score(Sample(question=QUESTION, answer=ANSWER), judge)
    assert s.value is None
    assert s.error is not None and s.error.kind == "EmbeddingError"
    assert why in s.reason


@pytest.mark.parametrize(
    "sample",
    [
        Sample(question="  ", answer=ANSWER),
        Sample(question=QUESTION, answer="\n\t"),
        Sample(question=QUESTION),
    ],
)
async def test_empty_inputs_are_invalid(make_judge, sample):
    judge = make_judge(questions=GENERATED)
    s = await AnswerRelevance().score(sample, judge)
    assert s.error is not None and s.error.kind == "EmptyInput"
    assert judge.calls == []


async def test_judge_output_error_propagates(make_judge):
    judge = make_judge(questions=JudgeOutputError("bad JSON", raw="{oops"))
    with pytest.raises(JudgeOutputError):
        await AnswerRelevance().score(Sample(question=QUESTION, answer=ANSWER), judge)


@pytest.mark.parametrize("n", [0, -1, 2.5, True])
def test_bad_n(n):
    with pytest.raises(ConfigError, match="n must be"):
        AnswerRelevance(n=n)


def test_registry_and_params():
    m = get_metric("answer_relevance", n=5)
    assert isinstance(m, AnswerRelevance)
    assert m.params() == {"n": 5, "lang": "auto"}
    assert m.requires == ("question", "answer")
    assert m.steps == ("generate_questions", "embed")
