"""Correctness, relevancy, guideline adherence, pairwise, user rubrics and repeated judging,
with the scripted LLM judge."""

from __future__ import annotations

import pytest

from ragmeter import Sample
from ragmeter.errors import ConfigError
from ragmeter.metrics import (
    Correctness,
    Faithfulness,
    GuidelineAdherence,
    Pairwise,
    Relevancy,
    Repeated,
    get_metric,
    list_metrics,
    rubric,
)
from ragmeter.run.runner import aevaluate

S = Sample(question="What is the boiling point of water?", answer="100 °C at sea level.", reference="100 °C")


async def test_correctness_is_the_1_to_5_score_passing_at_4(llm_judge) -> None:
    judge, script = llm_judge({"grade": [{"reason": "correct", "score": 4}]})
    score = await Correctness().score(S, judge)
    assert score.value == 4.0 and score.details["passing"] is True
    assert Correctness.threshold == 4.0
    prompt = script.requests[0].messages[1].content
    assert "Reference: 100 °C" in prompt and "from 1 to 5" in prompt


async def test_correctness_out_of_scale_is_repaired_once_then_invalid(llm_judge) -> None:
    judge, script = llm_judge({"grade": [{"reason": "r", "score": 7}, {"reason": "r", "score": 9}]})
    result = await aevaluate([S.to_dict()], ["correctness"], judge)
    score = result.scores("correctness")[0]
    assert score is not None and not score.valid
    assert score.error is not None and "outside the scale" in score.error.message
    assert score.error.raw is not None and '"score": 9' in score.error.raw
    assert len(script.requests) == 2


async def test_correctness_chinese_prompt(llm_judge) -> None:
    judge, script = llm_judge({"grade": [{"reason": "正确", "score": 5}]})
    sample = Sample(question="水的沸点是多少？", answer="海平面上是 100 摄氏度。", reference="100 摄氏度")
    score = await Correctness().score(sample, judge)
    assert score.value == 5.0 and score.details["lang"] == "zh"
    assert "参考答案：100 摄氏度" in script.requests[0].messages[1].content


async def test_relevancy_yes_no(llm_judge) -> None:
    judge, _ = llm_judge({"grade": [{"reason": "in line", "score": 1}, {"reason": "off", "score": 0}]})
    s = S.replace(contexts=["Water boils at 100 °C."])
    yes = await Relevancy().score(s, judge)
    no = await Relevancy().score(s.replace(answer="Paris is nice."), judge)
    assert (yes.value, no.value) == (1.0, 0.0)
    assert yes.reason.startswith("YES") and no.reason.startswith("NO")


async def test_guideline_adherence_is_the_share_of_guidelines_followed(llm_judge) -> None:
    judge, _ = llm_judge(
        {
            "grade": [
                {"reason": "ok", "score": 1},
                {"reason": "vague", "score": 0},
                {"reason": "ok", "score": 1},
            ]
        }
    )
    metric = GuidelineAdherence(guidelines=["Be complete.", "Be specific.", "Be polite."])
    score = await metric.score(S, judge)
    assert score.value == pytest.approx(2 / 3)
    assert score.details["passing"] is False
    assert [g["passing"] for g in score.details["guidelines"]] == [True, False, True]
    with pytest.raises(ConfigError):
        GuidelineAdherence(guidelines=[" "])


async def test_pairwise_both_orders_and_position_bias(llm_judge) -> None:
    s = S.replace(metadata={"answer_b": "Water boils at 50 °C."})
    judge, script = llm_judge(
        {"compare": [{"reason": "A right", "winner": "A"}, {"reason": "B right", "winner": "B"}]}
    )
    score = await Pairwise().score(s, judge)
    assert score.value == 1.0 and score.details["position_bias"] is False
    assert len(script.requests) == 2
    judge2, _ = llm_judge(
        {"compare": [{"reason": "first", "winner": "A"}, {"reason": "first", "winner": "A"}]}
    )
    flipped = await Pairwise().score(s, judge2)
    assert flipped.value == 0.5 and flipped.details["position_bias"] is True
    missing = await Pairwise().score(S, judge2)
    assert not missing.valid and missing.error is not None and missing.error.kind == "EmptyInput"


async def test_rubric_defines_a_registered_g_eval_metric(llm_judge, monkeypatch: pytest.MonkeyPatch) -> None:
    from ragmeter.metrics import base

    # registered in a copy of the registry, so the test metric does not outlive the test (a later
    # test lists the built-in metrics)
    monkeypatch.setattr(base, "_REGISTRY", dict(base._REGISTRY))
    m = rubric(
        "conciseness_test",
        criteria="Is the answer concise?",
        steps=["Find padding.", "Score."],
        scale=(1, 5),
        threshold=4,
    )
    assert "conciseness_test" in list_metrics()
    assert get_metric("conciseness_test", **m.params()).name == "conciseness_test"
    judge, script = llm_judge({"grade": [{"reason": "short", "score": 5}]})
    score = await m.score(S, judge)
    assert score.value == 5.0 and score.details["normalized"] == 1.0 and score.details["passing"] is True
    prompt = script.requests[0].messages[1].content
    assert "1. Find padding.\n2. Score." in prompt and "Criteria: Is the answer concise?" in prompt
    with pytest.raises(ConfigError, match="built-in"):
        rubric("faithfulness", criteria="x")
    with pytest.raises(ConfigError, match="inputs"):
        rubric("bad_inputs", criteria="x", inputs=("nonsense",))


async def test_repeated_judging_reports_mean_and_spread(llm_judge) -> None:
    judge, script = llm_judge(
        {"grade": [{"reason": "a", "score": 3}, {"reason": "b", "score": 5}, {"reason": "c", "score": 4}]}
    )
    metric = Repeated(Correctness(), 3)
    assert metric.name == "correctness" and metric.threshold == 4.0
    score = await metric.score(S, judge)
    assert score.value == pytest.approx(4.0)
    assert score.details["samples"] == [3.0, 5.0, 4.0]
    assert score.details["std"] == pytest.approx((2 / 3) ** 0.5)
    temps = {r.temperature for r in script.requests}
    versions = [r.prompt_version for r in script.requests]
    assert temps == {0.7} and len(set(versions)) == 3 and versions[2].endswith("#rep2")


async def test_repeated_judging_shares_steps_within_a_repeat_only(llm_judge) -> None:
    judge, script = llm_judge(
        {
            "extract_claims": [{"claims": ["A."]}, {"claims": ["A."]}],
            "verify_claims": [
                {"verdicts": [{"index": 1, "claim": "A.", "evidence": "", "reason": "", "supported": True}]},
                {"verdicts": [{"index": 1, "claim": "A.", "evidence": "", "reason": "", "supported": False}]},
            ],
        }
    )
    s = Sample(question="q", contexts=("A.",), answer="A is the first of many letters here.")
    score = await Repeated(Faithfulness(), 2).score(s, judge)
    assert score.details["samples"] == [1.0, 0.0] and score.value == 0.5
    assert len(script.requests) == 4
    with pytest.raises(ConfigError):
        Repeated(Faithfulness(), 0)
