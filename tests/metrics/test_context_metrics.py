"""Context relevance / precision / utilization / recall with the scripted LLM judge: formulas on
worked examples, one call whatever the number of contexts, Chinese, edge cases."""

from __future__ import annotations

from typing import Any

import pytest

from ragmeter import Sample
from ragmeter.metrics import ContextPrecision, ContextRecall, ContextRelevance, ContextUtilization
from ragmeter.metrics._shared import average_precision
from ragmeter.run.runner import aevaluate


def verdicts(*useful: bool) -> dict[str, Any]:
    return {"verdicts": [{"index": i, "reason": "r", "useful": u} for i, u in enumerate(useful, 1)]}


Q = "When was the Eiffel Tower completed?"
CTX = [
    "The Eiffel Tower is in Paris. It was completed in 1889. It is 330 metres tall.",
    "Paris has many cafés. The Louvre is a museum.",
]


async def test_context_relevance_is_needed_sentences_over_all_sentences(llm_judge) -> None:
    judge, script = llm_judge({"rate_sentences": [{"needed": [2, 3]}]})
    score = await ContextRelevance().score(Sample(question=Q, contexts=tuple(CTX)), judge)
    assert score.value == pytest.approx(2 / 5)
    assert script.steps() == ["rate_sentences"]  # one call for both contexts
    prompt = script.requests[0].messages[1].content
    assert "[1] The Eiffel Tower is in Paris." in prompt and "[5] The Louvre is a museum." in prompt
    assert score.details["n_sentences"] == 5
    assert [r["rating"] for r in score.details["contexts"][0]] == [0.0, 1.0, 1.0]


async def test_context_relevance_with_reference_uses_the_combined_analysis(llm_judge) -> None:
    judge, script = llm_judge({"analyse_contexts": [{**verdicts(True, False), "needed": [2]}]})
    sample = Sample(question=Q, contexts=tuple(CTX), reference="It was completed in 1889.")
    rel = await ContextRelevance().score(sample, judge)
    prec = await ContextPrecision().score(sample, judge)
    assert rel.value == pytest.approx(1 / 5)
    assert prec.value == pytest.approx(1.0)
    assert script.steps() == ["analyse_contexts"]  # the second metric was served by the memo


async def test_context_relevance_chinese_splits_on_chinese_punctuation(llm_judge) -> None:
    judge, script = llm_judge({"rate_sentences": [{"needed": [1]}]})
    sample = Sample(
        question="中国的首都是哪里？", contexts=("北京是中国的首都。上海是最大的城市！广州在南方；",)
    )
    score = await ContextRelevance().score(sample, judge)
    assert score.value == pytest.approx(1 / 3)
    assert score.details["lang"] == "zh"
    assert "中国的首都是哪里？</data-" in script.requests[0].messages[1].content.split("问题：<data-")[-1]


async def test_context_relevance_out_of_range_number_is_invalid_with_raw(llm_judge) -> None:
    judge, _ = llm_judge({"rate_sentences": [{"needed": [9]}, "still not json"]})
    result = await aevaluate([{"question": Q, "contexts": CTX}], ["context_relevance"], judge)
    score = result.scores("context_relevance")[0]
    assert score is not None and not score.valid
    assert score.error is not None and score.error.kind == "JudgeOutputError"
    assert score.error.raw == "still not json"


def test_average_precision_worked_examples() -> None:
    assert average_precision([1, 0, 1]) == pytest.approx((1 + 2 / 3) / 2)
    assert average_precision([0, 1]) == pytest.approx(0.5)
    assert average_precision([0, 0]) == 0.0
    assert average_precision([1]) == 1.0


async def test_context_precision_ranks_matter_one_call_for_many_contexts(llm_judge) -> None:
    reply = {**verdicts(False, True, False, True, False, False), "needed": []}
    judge, script = llm_judge({"analyse_contexts": [reply]})
    ctx = tuple(f"context number {i}." for i in range(6))
    score = await ContextPrecision().score(Sample(question=Q, contexts=ctx, reference="ref"), judge)
    assert score.value == pytest.approx((1 / 2 + 2 / 4) / 2)
    assert script.steps() == ["analyse_contexts"]  # one call for six contexts
    assert [c["useful"] for c in score.details["contexts"]] == [False, True, False, True, False, False]


@pytest.fixture
def plain_judge(llm_judge):  # an LLM judge without combined steps
    def make(replies: dict[str, list[Any]]) -> Any:
        judge, script = llm_judge(replies)
        judge.combine_steps = False
        return judge, script

    return make


async def test_context_precision_without_combined_steps(plain_judge) -> None:
    judge, script = plain_judge({"rate_chunks": [verdicts(True, False, True)]})
    ctx = ("a", "b", "c")
    score = await ContextPrecision().score(Sample(question=Q, contexts=ctx, reference="ref"), judge)
    assert score.value == pytest.approx((1 + 2 / 3) / 2)
    assert script.steps() == ["rate_chunks"]


async def test_context_precision_none_useful_is_zero_and_empty_contexts_invalid(plain_judge) -> None:
    judge, _ = plain_judge({"rate_chunks": [verdicts(False)]})
    score = await ContextPrecision().score(Sample(question=Q, contexts=("x",), reference="r"), judge)
    assert score.value == 0.0
    empty = await ContextPrecision().score(Sample(question=Q, contexts=(" ",), reference="r"), judge)
    assert not empty.valid and empty.error is not None and empty.error.kind == "EmptyInput"


async def test_context_utilization_judges_against_the_answer(llm_judge) -> None:
    judge, script = llm_judge({"rate_chunks": [verdicts(False, True)]})
    score = await ContextUtilization().score(
        Sample(question=Q, contexts=("a", "b"), answer="In 1889."), judge
    )
    assert score.value == pytest.approx(0.5)
    assert "In 1889.</data-" in script.requests[0].messages[1].content.split("Target answer: <data-")[1]


async def test_context_recall_is_supported_reference_claims_share(plain_judge) -> None:
    claims = ["A is 1.", "B is 2.", "C is 3.", "D is 4."]
    judge, script = plain_judge(
        {
            "extract_claims": [{"claims": claims}],
            "verify_claims": [
                {
                    "verdicts": [
                        {"index": i, "claim": c, "evidence": "", "reason": "", "supported": i != 3}
                        for i, c in enumerate(claims, 1)
                    ]
                }
            ],
        }
    )
    sample = Sample(question="q", contexts=("A is 1. B is 2. D is 4.",), reference="A1, B2, C3, D4 and E5.")
    score = await ContextRecall().score(sample, judge)
    assert score.value == pytest.approx(0.75)
    assert "C is 3." in score.reason
    assert script.steps() == ["extract_claims", "verify_claims"]


async def test_context_recall_no_claims_is_invalid(plain_judge) -> None:
    judge, _ = plain_judge({"extract_claims": [{"claims": []}]})
    score = await ContextRecall().score(Sample(question="q", contexts=("c",), reference="Hello!"), judge)
    assert not score.valid and score.error is not None and score.error.kind == "NoClaims"
