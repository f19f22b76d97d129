from __future__ import annotations

import pytest

from ragmeter.dataset.sample import Sample
from ragmeter.errors import JudgeOutputError, TransportError
from ragmeter.metrics import Faithfulness, get_metric
from ragmeter.metrics.base import Score

QUESTION = "Where and when was Einstein born?"
ANSWER = "Einstein was born in Germany on 20 March 1879. He won the Nobel Prize."
CONTEXTS = (
    "Albert Einstein (born 14 March 1879) was a German-born theoretical physicist.",
    "He received the 1921 Nobel Prize in Physics.",
    "Einstein was born in Ulm, in the Kingdom of Württemberg in the German Empire.",
)
CLAIMS = [
    "Einstein was born in Germany.",
    "Einstein was born on 20 March 1879.",
    "Einstein won the Nobel Prize.",
]


async def test_some_claims_unsupported(make_judge):
    judge = make_judge(claims=CLAIMS, supported={CLAIMS[0], CLAIMS[2]})
    s = await Faithfulness().score(Sample(question=QUESTION, contexts=CONTEXTS, answer=ANSWER), judge)
    assert s.valid
    assert s.value == pytest.approx(2 / 3)
    assert s.details["n_claims"] == 3
    assert s.details["n_supported"] == 2
    rows = s.details["claims"]
    assert [r["claim"] for r in rows] == CLAIMS
    assert [r["supported"] for r in rows] == [True, False, True]
    assert rows[0]["evidence"] == CONTEXTS[0]
    assert rows[1]["confidence"] == 0.0
    assert set(rows[0]) == {"claim", "hedged", "supported", "reason", "evidence", "confidence"}
    assert not any(r["hedged"] for r in rows)
    assert "2 of 3" in s.reason
    assert "20 March 1879" in s.reason  # names the unsupported claim
    assert "Germany" not in s.reason


async def test_calls_and_arguments(make_judge):
    judge = make_judge(claims=CLAIMS, supported=set(CLAIMS))
    s = await Faithfulness().score(Sample(question=QUESTION, contexts=CONTEXTS, answer=ANSWER), judge)
    assert s.value == 1.0
    assert "all 3 claims" in s.reason
    assert judge.steps_called() == ["extract_claims", "verify_claims"]
    extract, verify = judge.calls[0][1], judge.calls[1][1]
    assert extract == {"text": ANSWER, "question": QUESTION, "lang": "en"}
    # one verify call for all claims against all contexts
    assert verify["claims"] == CLAIMS
    assert verify["contexts"] == list(CONTEXTS)


async def test_many_contexts_one_verify_call(make_judge):
    contexts = tuple(f"Context number {i} says the sky is blue." for i in range(25))
    claims = ["The sky is blue.", "The grass is red."]
    judge = make_judge(claims=claims, supported={"The sky is blue."})
    s = await Faithfulness().score(
        Sample(question="q?", contexts=contexts, answer="Sky blue, grass red."), judge
    )
    assert s.value == 0.5
    assert judge.steps_called().count("verify_claims") == 1
    assert len(judge.calls) == 2
    assert judge.calls[1][1]["contexts"] == list(contexts)


async def test_one_context(make_judge):
    judge = make_judge(claims=["Paris is the capital of France."], supported=lambda c, ctx: "Paris" in ctx[0])
    s = await Faithfulness().score(
        Sample(question="Capital of France?", contexts=["Paris is the capital of France."], answer="Paris."),
        judge,
    )
    assert s.value == 1.0
    assert s.details["n_claims"] == 1


async def test_no_claims_is_invalid(make_judge):
    judge = make_judge(claims=[])
    s = await Faithfulness().score(Sample(question="Hi", contexts=CONTEXTS, answer="Hello there!"), judge)
    assert not s.valid
    assert s.value is None
    assert s.error is not None and s.error.kind == "NoClaims"
    assert "no claims" in s.reason
    assert judge.steps_called() == ["extract_claims"]  # nothing to verify


async def test_blank_claims_are_dropped(make_judge):
    judge = make_judge(claims=["  ", "A real claim.", ""], supported={"A real claim."})
    s = await Faithfulness().score(Sample(question="q", contexts=["ctx"], answer="ans"), judge)
    assert s.value == 1.0
    assert judge.calls[1][1]["claims"] == ["A real claim."]

    judge = make_judge(claims=["  ", "\n"])
    s = await Faithfulness().score(Sample(question="q", contexts=["ctx"], answer="ans"), judge)
    assert s.error is not None and s.error.kind == "NoClaims"


async def test_chinese(make_judge):
    claims = ["爱因斯坦出生于德国。", "爱因斯坦出生于1879年3月20日。"]
    judge = make_judge(claims=claims, supported={claims[0]})
    sample = Sample(
        question="爱因斯坦在哪里出生？",
        contexts=["阿尔伯特·爱因斯坦（1879年3月14日出生）是一位德国出生的理论物理学家。"],
        answer="爱因斯坦于1879年3月20日出生于德国。",
    )
    s = await Faithfulness().score(sample, judge)
    assert s.value == 0.5
    assert s.details["lang"] == "zh"
    assert all(kw["lang"] == "zh" for _, kw in judge.calls)
    assert "1879年3月20日" in s.reason


async def test_lang_param_overrides_detection(make_judge):
    judge = make_judge(claims=["c"], supported={"c"})
    await Faithfulness(lang="zh").score(
        Sample(question="q", contexts=["ctx"], answer="English answer"), judge
    )
    assert [kw["lang"] for _, kw in judge.calls] == ["zh", "zh"]


def test_bad_lang_is_config_error():
    from ragmeter.errors import ConfigError

    with pytest.raises(ConfigError, match="lang"):
        Faithfulness(lang="fr")


@pytest.mark.parametrize(
    ("sample", "field"),
    [
        (Sample(question="q", contexts=["ctx"], answer="   \n"), "answer"),
        (Sample(question="q", contexts=["ctx"], answer=None), "answer"),
        (Sample(question="q", contexts=[], answer="a"), "contexts"),
        (Sample(question="q", contexts=["  ", "\t"], answer="a"), "contexts"),
    ],
)
async def test_empty_inputs_are_invalid_without_calls(make_judge, sample, field):
    judge = make_judge(claims=["c"], supported={"c"})
    s = await Faithfulness().score(sample, judge)
    assert s.error is not None and s.error.kind == "EmptyInput"
    assert field in s.reason
    assert judge.calls == []


async def test_blank_contexts_are_not_sent(make_judge):
    judge = make_judge(claims=["c"], supported={"c"})
    await Faithfulness().score(Sample(question="q", contexts=["", "real context", "  "], answer="a"), judge)
    assert judge.calls[1][1]["contexts"] == ["real context"]


async def test_no_question_passes_none(make_judge):
    judge = make_judge(claims=["c"], supported=set())
    s = await Faithfulness().score(Sample(question="", contexts=["ctx"], answer="an answer"), judge)
    assert s.value == 0.0
    assert judge.calls[0][1]["question"] is None


async def test_verdict_count_mismatch_is_invalid(make_judge):
    judge = make_judge(claims=CLAIMS, supported=set(CLAIMS), n_verdicts=2)
    s = await Faithfulness().score(Sample(question=QUESTION, contexts=CONTEXTS, answer=ANSWER), judge)
    assert s.error is not None and s.error.kind == "JudgeOutputError"
    assert "2 verdicts for 3 claims" in s.reason


@pytest.mark.parametrize("step", ["extract", "verify"])
async def test_judge_errors_propagate(make_judge, step):
    err = JudgeOutputError("could not parse the reply", raw="not json")
    judge = make_judge(claims=err) if step == "extract" else make_judge(claims=CLAIMS, supported=err)
    with pytest.raises(JudgeOutputError) as info:
        await Faithfulness().score(Sample(question=QUESTION, contexts=CONTEXTS, answer=ANSWER), judge)
    assert info.value.raw == "not json"


async def test_transport_error_propagates(make_judge):
    judge = make_judge(claims=TransportError("timeout"))
    with pytest.raises(TransportError):
        await Faithfulness().score(Sample(question=QUESTION, contexts=CONTEXTS, answer=ANSWER), judge)


async def test_stateless_and_registered(make_judge):
    m = get_metric("faithfulness")
    assert isinstance(m, Faithfulness)
    assert m.requires == ("answer", "contexts")
    assert m.steps == ("extract_claims", "verify_claims")
    assert m.spec() == {"name": "faithfulness", "version": "1", "params": {"lang": "auto"}}
    before = dict(vars(m))
    judge = make_judge(claims=CLAIMS, supported={CLAIMS[0]})
    s = await m.score(Sample(question=QUESTION, contexts=CONTEXTS, answer=ANSWER), judge)
    assert isinstance(s, Score)
    assert vars(m) == before
    # the score survives a round trip through the run record format
    assert Score.from_dict(s.to_dict()) == s


@pytest.mark.parametrize(
    ("written", "bare"),
    [
        ("I'm not sure, but the tower was probably completed in 1925.", "The tower was completed in 1925."),
        ("我不确定，但埃菲尔铁塔可能是1925年建成的。", "埃菲尔铁塔是1925年建成的。"),
    ],
)
async def test_a_hedged_claim_is_verified_without_its_hedge_and_recorded(make_judge, written, bare):
    # one rule for every judge: the claim as the judge wrote it keeps its hedge; the metric takes
    # it off, asks for the bare statement and records that it was hedged
    judge = make_judge(claims=[written, "The tower is in Paris.", "I think so."], supported={bare})
    s = await Faithfulness().score(Sample(question=QUESTION, contexts=CONTEXTS, answer="x"), judge)
    assert judge.steps_called() == ["extract_claims", "verify_claims"]
    assert judge.calls[1][1]["claims"] == [bare, "The tower is in Paris."]  # "I think so." states nothing
    rows = s.details["claims"]
    assert rows[0]["claim"] == bare and rows[0]["hedged"] is True and rows[0]["as_written"] == written
    assert rows[0]["supported"] is True
    assert rows[1]["hedged"] is False and "as_written" not in rows[1]
    assert s.value == pytest.approx(0.5)
