"""Judges that answer valid JSON with wrong content (issue 9, section 5): each case is detected and
named (the JudgeOutputError subclass is the invalid score's kind), gets one repair round, and a
reply cut off at max_tokens is asked again once with twice the budget -- never a silently wrong
number. All with the scripted FakeProvider."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ragmeter.errors import (
    CountMismatch,
    DuplicateIndex,
    EvidenceNotFound,
    IndexOutOfRange,
    JudgeOutputError,
    ReplyTruncated,
    ScoreOutOfScale,
)
from ragmeter.judges import FakeProvider, JudgeConfig, LLMJudge, ModelClient
from ragmeter.judges.base import Rubric
from ragmeter.judges.types import ChatResponse, Usage
from ragmeter.run.runner import aevaluate

FAST = JudgeConfig(backoff_base_s=0.0, backoff_max_s=0.0, timeout_s=5, max_tokens=300)
CTX = ["Paris is the capital of France. It has two million people."]


def judge_with(replies: list[Any]) -> tuple[LLMJudge, FakeProvider]:
    provider = FakeProvider(replies)
    return LLMJudge(ModelClient(provider, FAST)), provider


def verdicts(*items: tuple[Any, bool], evidence: str = "") -> str:
    return json.dumps(
        {"verdicts": [{"index": i, "evidence": evidence, "reason": "r", "supported": s} for i, s in items]}
    )


def cut(text: str) -> ChatResponse:
    return ChatResponse(text=text, usage=Usage(1, 10, 300), model="m", finish_reason="length")


GOOD = verdicts((1, True), (2, False))
CLAIMS = ["Paris is the capital of France.", "Paris has ten million people."]


@pytest.mark.parametrize(
    ("bad", "kind", "message"),
    [
        (verdicts((1, True), (3, False)), IndexOutOfRange, r"index\(es\) \[3\] out of range 1..2"),
        (verdicts((1, True), (1, False), (2, False)), DuplicateIndex, "claim 1 got two different verdicts"),
        (verdicts((1, True)), CountMismatch, r"no verdict for claim\(s\) \[2\]"),
        (
            json.dumps({"verdicts": [{"supported": True}, {"supported": False}, {"supported": True}]}),
            CountMismatch,
            "3 verdict.s. without indices for 2 claim",
        ),
        (
            verdicts((1, True), (2, False), evidence="Paris is the largest city of Europe."),
            EvidenceNotFound,
            r"supported claim\(s\) \[1\] is not in the contexts",
        ),
    ],
)
async def test_verify_claims_wrong_content_is_named_repaired_once_then_fails(
    bad: str, kind: type[JudgeOutputError], message: str
) -> None:
    # one repair round fixes it ...
    judge, provider = judge_with([bad, GOOD])
    out = await judge.verify_claims(CLAIMS, CTX)
    assert [v.supported for v in out] == [True, False]
    assert len(provider.requests) == 2
    repair = provider.requests[1].messages[-1].content
    assert kind.__name__ in repair  # the judge is told what was wrong
    # ... and when it does not, the error names the problem and keeps the last reply
    judge, provider = judge_with([bad, bad])
    with pytest.raises(kind, match=message) as ei:
        await judge.verify_claims(CLAIMS, CTX)
    assert ei.value.raw is not None and len(provider.requests) == 2


async def test_evidence_is_compared_without_case_spacing_punctuation_and_across_an_ellipsis() -> None:
    quote = "paris is the capital of france ... two  million people"
    judge, provider = judge_with([verdicts((1, True), (2, False), evidence=quote)])
    out = await judge.verify_claims(CLAIMS, CTX)
    assert out[0].evidence == quote and len(provider.requests) == 1
    # ragmeter's own data tags and item labels copied along with the quote do not count
    label = "<data-0a1b2c3d>[1] Paris is the capital of France."
    judge, provider = judge_with([verdicts((1, True), (2, False), evidence=label)])
    assert (await judge.verify_claims(CLAIMS, CTX))[0].evidence == label and len(provider.requests) == 1
    # evidence of an unsupported claim carries no number: it is not checked
    judge, provider = judge_with([verdicts((1, False), (2, False), evidence="made up")])
    assert [v.supported for v in await judge.verify_claims(CLAIMS, CTX)] == [False, False]


async def test_a_reply_cut_off_at_max_tokens_is_asked_again_with_twice_the_budget() -> None:
    judge, provider = judge_with([cut('{"verdicts": [{"index": 1, "evi'), GOOD])
    out = await judge.verify_claims(CLAIMS, CTX)
    assert [v.supported for v in out] == [True, False]
    assert [r.max_tokens for r in provider.requests] == [300, 600]


async def test_a_reply_cut_off_twice_is_reply_truncated_not_a_missing_key() -> None:
    # the cut-off reply is even valid JSON with a key missing: it must not be parsed as an answer
    judge, provider = judge_with([cut('{"claims": ["a"]}'), cut('{"claims": ["a", "b"]}')])
    with pytest.raises(ReplyTruncated, match=r"max_tokens=300, and again at 600") as ei:
        await judge.extract_claims("A. B. C.")
    assert ei.value.raw == '{"claims": ["a", "b"]}'
    assert len(provider.requests) == 2  # no repair round: asking for JSON again cannot help


async def test_a_score_outside_the_scale_is_named() -> None:
    rubric = Rubric(name="r", criteria="c", scale=(1, 5))
    judge, _ = judge_with([json.dumps({"reason": "r", "score": 7})] * 2)
    with pytest.raises(ScoreOutOfScale, match=r"outside the scale 1..5"):
        await judge.grade(rubric, {"answer": "a"})


async def test_sentence_numbers_and_text_indices_out_of_range_or_repeated() -> None:
    judge, _ = judge_with([json.dumps({"needed": [1, 7]})] * 2)
    with pytest.raises(IndexOutOfRange, match=r"sentence number\(s\) \[7\] out of range 1..2"):
        await judge.rate_sentences("q", ["s one", "s two"])
    many = [
        json.dumps({"texts": [{"index": 1, "claims": ["a"]}, {"index": 3, "claims": ["b"]}]}),
        json.dumps({"texts": [{"index": 1, "claims": ["a"]}, {"index": 1, "claims": ["b"]}]}),
    ]
    judge, _ = judge_with(many)
    with pytest.raises(DuplicateIndex, match="text 1 got two different claim lists"):
        await judge.extract_claims_many(["A.", "B."])
    judge, _ = judge_with([many[0], many[0]])
    with pytest.raises(IndexOutOfRange, match=r"text index\(es\) \[3\] out of range 1..2"):
        await judge.extract_claims_many(["A.", "B."])


async def test_check_contexts_evidence_is_a_sentence_number_in_range() -> None:
    reply = {
        "verdicts": [{"index": 1, "reason": "r", "evidence": 9, "supported": True}],
        "passages": [{"index": 1, "useful": True}],
        "needed": [1],
    }
    judge, _ = judge_with([json.dumps(reply)] * 2)
    with pytest.raises(IndexOutOfRange, match=r"evidence sentence number\(s\) \[9\] out of range 1..2"):
        await judge.check_contexts("q?", CTX, ["Paris is the capital."], "Paris.")
    reply["verdicts"][0]["evidence"] = 2  # type: ignore[index]
    judge, _ = judge_with([json.dumps(reply)])
    result = await judge.check_contexts("q?", CTX, ["Paris is the capital."], "Paris.")
    assert result.verdicts[0].evidence == "It has two million people."
    assert result.chunks is not None and result.chunks[0].supported
    assert result.ratings == [[1.0, 0.0]]


async def test_the_run_records_the_named_kind_with_the_raw_reply() -> None:
    bad = verdicts((1, True), (5, True))
    judge, _ = judge_with([json.dumps({"claims": CLAIMS}), bad, bad])
    data = [{"question": "q", "contexts": CTX, "answer": "Paris is the capital. It has 10M people."}]
    result = await aevaluate(data, ["faithfulness"], judge, concurrency=1)
    score = result.scores("faithfulness")[0]
    assert score is not None and not score.valid and score.error is not None
    assert score.error.kind == "IndexOutOfRange" and score.error.raw == bad
    assert "after one repair round" in score.error.message


async def test_a_part_left_out_of_a_combined_reply_is_not_read_as_empty() -> None:
    # no "needed" although a question was given: that is not "no sentence is needed" (0 relevance)
    reply = json.dumps({"verdicts": [{"index": 1, "supported": True}], "passages": [{"index": 1, "useful": True}]})
    judge, _ = judge_with([reply, reply])
    with pytest.raises(JudgeOutputError, match="lacks 'needed'"):
        await judge.check_contexts("q?", CTX, ["Paris is the capital."], "Paris.")
    judge, _ = judge_with([json.dumps({"verdicts": [{"index": 1, "useful": True}]})] * 2)
    with pytest.raises(JudgeOutputError, match="needed"):
        await judge.analyse_contexts("q?", CTX, "Paris.")
    # a part the request did not ask for may be left out
    judge, _ = judge_with([json.dumps({"verdicts": [{"index": 1, "supported": True}]})])
    result = await judge.check_contexts(None, CTX, ["Paris is the capital."], None)
    assert result.chunks is None and result.ratings is None and result.verdicts[0].supported
