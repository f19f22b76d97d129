"""Faithfulness + context recall sharing, factual / answer correctness, noise sensitivity,
with the scripted LLM judge: formulas on worked examples, calls shared through the memo."""

from __future__ import annotations

from typing import Any

import pytest

from conftest import FixedEmbedder
from ragmeter import Sample
from ragmeter.errors import ConfigError
from ragmeter.metrics import (
    AnswerCorrectness,
    ContextRecall,
    FactualCorrectness,
    Faithfulness,
    NoiseSensitivity,
)


def v(*supported: bool) -> dict[str, Any]:
    return {
        "verdicts": [
            {"index": i, "claim": "", "evidence": "", "reason": "", "supported": s}
            for i, s in enumerate(supported, 1)
        ]
    }


def texts(*claim_lists: list[str]) -> dict[str, Any]:
    return {"texts": [{"index": i, "claims": c} for i, c in enumerate(claim_lists, 1)]}


SAMPLE = Sample(
    question="Tell me about X.",
    contexts=("X was founded in 1990 in Oslo.",),
    answer="X was founded in 1990. X is in Paris. X has 5 staff.",
    reference="X was founded in 1990. X is in Oslo.",
)
A = ["X was founded in 1990.", "X is in Paris.", "X has 5 staff."]
R = ["X was founded in 1990.", "X is in Oslo."]


async def test_faithfulness_and_context_recall_share_two_calls(llm_judge) -> None:
    checked = {
        "verdicts": [
            {"index": i, "reason": "", "evidence": 1 if s else 0, "supported": s}
            for i, s in enumerate((True, False, False, True, True), 1)
        ],
        "passages": [{"index": 1, "useful": True}],
        "needed": [1],
    }
    judge, script = llm_judge({"extract_claims_many": [texts(A, R)], "check_contexts": [checked]})
    faith = await Faithfulness().score(SAMPLE, judge)
    recall = await ContextRecall().score(SAMPLE, judge)
    assert faith.value == pytest.approx(1 / 3)
    assert recall.value == pytest.approx(1.0)
    assert script.steps() == ["extract_claims_many", "check_contexts"]
    check_prompt = script.requests[1].messages[1].content
    assert "5. X is in Oslo." in check_prompt  # both claim sets in one call, with the contexts once
    assert check_prompt.count("X was founded in 1990 in Oslo.") == 1
    assert faith.details["claims"][0]["evidence"] == "X was founded in 1990 in Oslo."  # sentence 1


async def test_factual_correctness_f1_precision_recall(llm_judge) -> None:
    judge, script = llm_judge(
        {
            "extract_claims_many": [texts(A, R)],
            # answer claims vs reference: TP=1 (1990), FP=2; reference claims vs answer: FN=1 (Oslo)
            "verify_claims": [v(True, False, False), v(True, False)],
        }
    )
    score = await FactualCorrectness().score(SAMPLE, judge)
    p, r = 1 / 3, 1 / 2
    assert score.value == pytest.approx(2 * p * r / (p + r))
    assert (score.details["tp"], score.details["fp"], score.details["fn"]) == (1, 2, 1)
    assert sorted(script.steps()) == ["extract_claims_many", "verify_claims", "verify_claims"]
    # the same sample again in precision mode: every call is a memo hit
    prec = await FactualCorrectness(mode="precision").score(SAMPLE, judge)
    assert prec.value == pytest.approx(1 / 3)
    assert len(script.requests) == 3


async def test_factual_correctness_recall_mode_and_bad_params(llm_judge) -> None:
    judge, _ = llm_judge(
        {"extract_claims_many": [texts(A, R)], "verify_claims": [v(True, True, True), v(False, True)]}
    )
    score = await FactualCorrectness(mode="recall").score(SAMPLE, judge)
    assert score.value == pytest.approx(3 / 4)  # TP=3 answer claims, FN=1
    with pytest.raises(ConfigError):
        FactualCorrectness(mode="accuracy")
    with pytest.raises(ConfigError):
        FactualCorrectness(beta=0)


async def test_factual_correctness_no_answer_claims_and_empty_answer(llm_judge) -> None:
    judge, _ = llm_judge({"extract_claims_many": [texts([], R)]})
    score = await FactualCorrectness().score(SAMPLE, judge)
    assert not score.valid and score.error is not None and score.error.kind == "NoClaims"
    empty = await FactualCorrectness().score(SAMPLE.replace(answer="  "), judge)
    assert not empty.valid and empty.error is not None and empty.error.kind == "EmptyInput"


async def test_answer_correctness_weights_factual_f1_and_similarity(llm_judge) -> None:
    emb = FixedEmbedder({SAMPLE.answer: [1.0, 0.0], SAMPLE.reference: [0.6, 0.8]})  # type: ignore[dict-item]
    judge, _ = llm_judge(
        {"extract_claims_many": [texts(A, R)], "verify_claims": [v(True, False, False), v(True, False)]},
        embedder=emb,
    )
    score = await AnswerCorrectness().score(SAMPLE, judge)
    f1 = 2 * (1 / 3) * (1 / 2) / (1 / 3 + 1 / 2)
    assert score.value == pytest.approx(0.75 * f1 + 0.25 * 0.6, abs=1e-6)
    assert score.details["similarity"] == pytest.approx(0.6, abs=1e-6)


async def test_noise_sensitivity_relevant_and_irrelevant(llm_judge) -> None:
    sample = SAMPLE.replace(contexts=["X was founded in 1990 in Oslo.", "Y is in Paris. X has 5 staff."])

    def replies() -> dict[str, list[Any]]:
        # per context, answer claims then reference claims; then answer claims vs reference
        return {
            "extract_claims_many": [texts(A, R)],
            "verify_claims": [
                v(True, False, False, True, True),  # ctx 1: relevant (supports reference claims)
                v(False, True, True, False, False),  # ctx 2: irrelevant; supports "Paris", "5 staff"
                v(True, False, False),  # answer claims vs the reference
            ],
        }

    judge, _ = llm_judge(replies())
    judge.client.config = judge.client.config  # same judge object for clarity
    rel = await NoiseSensitivity().score(sample, judge)
    assert rel.value == 0.0  # no incorrect claim comes from the relevant context
    judge2, script2 = llm_judge(replies())
    irr = await NoiseSensitivity(mode="irrelevant").score(sample, judge2)
    assert irr.value == pytest.approx(2 / 3)  # "Paris" and "5 staff": incorrect, from the irrelevant context
    assert script2.steps().count("verify_claims") == 3  # k + 1 verify calls for k = 2 contexts
    assert NoiseSensitivity.higher_is_better is False
