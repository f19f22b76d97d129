"""What made SmolLM2-135M's scores invalid behind a real llama-cpp-python server (issue 9), fixed at
the cause and tested without the model:

- under ``--structured auto`` the grammar-shaped schema (exact item counts, fixed indices) never
  reached the server, because the shape was chosen before ``auto`` had settled on
  ``json_object_schema``: a small model then copied the prompt's example (two verdicts, one index
  twice, ``"claims": []``) and every check_contexts reply failed with ``DuplicateIndex``;
- a one-word answer ("Scottish", "Delhi") holds no statement of its own, so claim extraction found
  none (``NoClaims``) or, forced by the grammar to give one, made one up.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from helpers.server import FakeOpenAIServer, load_fixture
from ragmeter.dataset.sample import Sample
from ragmeter.judges import FakeProvider, JudgeConfig, LLMJudge, ModelClient, OpenAICompatibleProvider
from ragmeter.metrics.context import ContextRecall
from ragmeter.metrics.faithfulness import Faithfulness
from ragmeter.statements import short_answer_claim

FAST = JudgeConfig(backoff_base_s=0.01, backoff_max_s=0.05, timeout_s=5.0)
CHUNKS_REPLY = json.dumps(
    {"verdicts": [{"index": 1, "reason": "", "useful": True}, {"index": 2, "reason": "", "useful": False}]}
)


def _schema_sent(body: dict[str, Any]) -> dict[str, Any] | None:
    rf = body.get("response_format") or {}
    if rf.get("type") == "json_schema":
        return rf["json_schema"]["schema"]
    return rf.get("schema") or body.get("guided_json") or body.get("format")


# -- the grammar-shaped schema under auto ---------------------------------------------------------


async def test_auto_sends_the_grammar_shape_once_it_settles_on_json_object_schema(
    fake_openai_server: FakeOpenAIServer,
) -> None:
    fake_openai_server.replay = load_fixture("llama_cpp_python_json_schema")  # 500 to json_schema
    fake_openai_server.responder = lambda body: CHUNKS_REPLY
    provider = OpenAICompatibleProvider("smollm2", base_url=fake_openai_server.url)
    async with LLMJudge(ModelClient(provider, FAST)) as judge:
        first = await judge.rate_chunks("q", ["a", "b"], "t")
        second = await judge.rate_chunks("q", ["c", "d"], "t")
    assert [v.supported for v in first] == [v.supported for v in second] == [True, False]
    modes = fake_openai_server.structured_modes
    assert modes == ["json_schema", "json_object_schema", "json_object_schema"]
    probe, *settled = [_schema_sent(b) for b in fake_openai_server.requests]
    assert probe is not None and "prefixItems" not in json.dumps(probe)  # OpenAI strict: no such keywords
    for schema in settled:  # llama.cpp builds its grammar from this: two items, indices 1 and 2, no more
        assert schema is not None
        arr = schema["properties"]["verdicts"]
        assert arr["minItems"] == arr["maxItems"] == 2 and arr["items"] is False
        assert [i["properties"]["index"] for i in arr["prefixItems"]] == [{"const": 1}, {"const": 2}]
        assert all(i["required"] == ["index", "reason", "useful"] for i in arr["prefixItems"])
        assert all(i["additionalProperties"] is False for i in arr["prefixItems"])
        assert arr["prefixItems"][0]["properties"]["reason"]["maxLength"] == 160


@pytest.mark.parametrize("mode", ["json_schema", "json_object"])
async def test_modes_without_a_grammar_never_get_the_grammar_shape(
    fake_openai_server: FakeOpenAIServer, mode: str
) -> None:
    fake_openai_server.responder = lambda body: CHUNKS_REPLY
    provider = OpenAICompatibleProvider("m", base_url=fake_openai_server.url, structured=mode)
    async with LLMJudge(ModelClient(provider, FAST)) as judge:
        await judge.rate_chunks("q", ["a", "b"], "t")
    sent = _schema_sent(fake_openai_server.requests[0])
    assert sent is None if mode == "json_object" else "prefixItems" not in json.dumps(sent)


async def test_generated_questions_are_bounded_under_a_grammar() -> None:
    provider = FakeProvider([json.dumps({"questions": ["Who?", "What?"], "noncommittal": 0})])
    judge = LLMJudge(ModelClient(provider, FAST))
    out = await judge.generate_questions("A long enough answer about a topic.", n=2)
    assert out.questions == ("Who?", "What?")
    tight = provider.requests[0].grammar_schema
    assert tight is not None
    assert tight["properties"]["questions"]["minItems"] == 1
    assert tight["properties"]["questions"]["maxItems"] == 2
    assert "maxItems" not in (provider.requests[0].json_schema or {})["properties"]["questions"]


async def test_the_grammar_shape_is_part_of_the_cache_key() -> None:
    from ragmeter.judges.types import ChatRequest, Message

    base = ChatRequest(messages=(Message("user", "x"),), json_schema={"type": "object"})
    tighter = ChatRequest(
        messages=(Message("user", "x"),), json_schema={"type": "object"}, grammar_schema={"type": "object", "a": 1}
    )
    assert "grammar_schema" not in base.cache_fields()  # keys of requests without one are unchanged
    assert tighter.cache_fields()["grammar_schema"] == {"type": "object", "a": 1}


# -- short answers -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "question", "lang", "claim"),
    [
        # a question whose form allows it: the statement itself (statements.answer_statement)
        ("Paris", "What is the capital of France?", "en", "The capital of France is Paris."),
        ("Shakespeare", "Who wrote Hamlet?", "en", "Shakespeare wrote Hamlet."),
        ("Scottish", "What nationality was the author?", "en", "The author was Scottish."),
        # the superlative keeps its noun
        ("Jupiter", "Which planet is the largest in the Solar System?", "en",
         "Jupiter is the largest planet in the Solar System."),
        ("Hydrogen", "Which element is the most abundant in the universe?", "en",
         "Hydrogen is the most abundant element in the universe."),
        ("The Nile", "Which river is the longest?", "en", "The Nile is the longest river."),
        ("In Paris.", "Where is the Eiffel Tower?", "en", "The Eiffel Tower is in Paris."),
        ("巴黎", "法国的首都是哪里？", "zh", "法国的首都是巴黎。"),
        ("十二个月", "一年有多少个月？", "zh", "一年有十二个月。"),
        ("东海", "长江注入哪个海？", "zh", "长江注入东海。"),
        # otherwise the template
        ("Paris", "Tell me the capital of France.", "en",
         'The answer to the question "Tell me the capital of France." is "Paris".'),
        ("1998.", "When was Google founded?", "en", 'The answer to the question "When was Google founded?" is "1998".'),
        ("Yes", "Are both bands American?", "en", 'The answer to the question "Are both bands American?" is "Yes".'),
        ("President Richard Nixon", "Who was Milhouse named after?", "en",
         'The answer to the question "Who was Milhouse named after?" is "President Richard Nixon".'),
        ("是的", "两个乐队都是美国的吗？", "zh", "问题“两个乐队都是美国的吗？”的答案是“是的”。"),
        # an object asked with do-support has no plain rewrite here ("do" is no part of the noun)
        ("Carbon dioxide", "Which gas do plants absorb from the air?", "en",
         'The answer to the question "Which gas do plants absorb from the air?" is "Carbon dioxide".'),
    ],
)
def test_short_answer_claim_is_built_from_question_and_answer(
    answer: str, question: str, lang: str, claim: str
) -> None:
    assert short_answer_claim(answer, question, lang) == claim


@pytest.mark.parametrize(
    ("answer", "question"),
    [
        ("Paris", None),  # no question: nothing to make it a statement
        ("Paris", "  "),
        ("", "What is the capital of France?"),
        ("   ", "What is the capital of France?"),
        ("I don't know.", "What is the capital of France?"),  # declines: states nothing
        ("Thanks!", "What is the capital of France?"),
        ("不知道", "法国的首都是哪里？"),
        ("Paris is the capital and the largest city.", "What is the capital of France?"),  # a statement
        ("It is Paris. It is big.", "What is the capital of France?"),  # two sentences
        ("巴黎是法国的首都和最大的城市", "法国的首都是哪里？"),
    ],
)
def test_no_short_answer_claim(answer: str, question: str | None) -> None:
    assert short_answer_claim(answer, question) is None


async def test_a_one_word_answer_gets_its_claim_without_a_call() -> None:
    provider = FakeProvider([])
    judge = LLMJudge(ModelClient(provider, FAST))
    assert await judge.extract_claims("Delhi", question="What is the capital of India?") == [
        "The capital of India is Delhi."
    ]
    assert await judge.extract_claims("巴黎", question="法国的首都是哪里？", lang="zh") == ["法国的首都是巴黎。"]
    assert await judge.extract_claims("1998", question="When was Google founded?") == [
        'The answer to the question "When was Google founded?" is "1998".'
    ]
    assert provider.requests == []


async def test_an_evasive_short_answer_is_still_asked_and_may_have_no_claims() -> None:
    provider = FakeProvider([json.dumps({"claims": []})])
    judge = LLMJudge(ModelClient(provider, FAST))
    assert await judge.extract_claims("I don't know.", question="What is the capital of India?") == []
    assert len(provider.requests) == 1


async def test_combined_extraction_asks_only_for_the_texts_that_are_not_short() -> None:
    reply = json.dumps({"claims": ["Mumbai is the financial capital of India.", "Mumbai is the capital of India."]})
    provider = FakeProvider([reply])
    judge = LLMJudge(ModelClient(provider, FAST))
    q = "What is the capital of India?"
    out = await judge.extract_claims_many(["Mumbai, the financial capital of India and its capital.", "Delhi"], question=q)
    assert out == [
        ["Mumbai is the financial capital of India.", "Mumbai is the capital of India."],
        ["The capital of India is Delhi."],
    ]
    assert [r.step for r in provider.requests] == ["extract_claims"]  # one text left: the plain step
    both_short = LLMJudge(ModelClient(FakeProvider([]), FAST))
    assert await both_short.extract_claims_many(["Scottish", "American"], question="Which nationality?") == [
        ['The answer to the question "Which nationality?" is "Scottish".'],
        ['The answer to the question "Which nationality?" is "American".'],
    ]


async def test_faithfulness_and_recall_of_one_word_answers_are_scores_not_no_claims() -> None:
    q = "What nationality was the author?"
    contexts = ["The author was born in Edinburgh and was Scottish."]
    check = json.dumps(
        {
            "verdicts": [
                {"index": 1, "reason": "stated", "evidence": 1, "supported": True},
                {"index": 2, "reason": "contradicted", "evidence": 1, "supported": False},
            ],
            "passages": [{"index": 1, "useful": False}],
            "needed": [1],
        }
    )
    provider = FakeProvider([check])
    judge = LLMJudge(ModelClient(provider, FAST))
    sample = Sample(question=q, contexts=contexts, answer="Scottish", reference="American")
    faith = await Faithfulness().score(sample, judge)
    recall = await ContextRecall().score(sample, judge)
    assert faith.valid and faith.value == 1.0
    assert recall.valid and recall.value == 0.0
    assert faith.details["claims"][0]["claim"] == "The author was Scottish."
    assert [r.step for r in provider.requests] == ["check_contexts"]  # no claim-extraction call at all
    claims_sent = provider.requests[0].messages[1].content
    assert "Scottish" in claims_sent and "American" in claims_sent


async def test_an_empty_answer_stays_invalid() -> None:
    judge = LLMJudge(ModelClient(FakeProvider([]), FAST))
    s = await Faithfulness().score(Sample(question="q?", contexts=["c"], answer="  "), judge)
    assert not s.valid and s.error is not None and s.error.kind in ("EmptyInput", "NoClaims")
    evasive = LLMJudge(ModelClient(FakeProvider([json.dumps({"claims": []})]), FAST))
    s = await Faithfulness().score(Sample(question="q?", contexts=["c"], answer="I don't know."), evasive)
    assert not s.valid and s.error is not None and s.error.kind == "NoClaims"


# -- a reply that repeats the prompt's example ------------------------------------------------------

EINSTEIN = json.dumps(
    {"claims": ["Albert Einstein was a German-born theoretical physicist.", "Albert Einstein developed relativity."]}
)
QUESTIONS = json.dumps({"questions": ["Where was Albert Einstein born?", "When and where was Einstein born?"],
                        "noncommittal": 0})


async def test_a_copied_example_gets_the_repair_round_then_counts() -> None:
    answer = "Shen Tong is the Managing Director of FoodFutureCo, profiled by Forbes."
    real = json.dumps({"claims": ["Shen Tong is the Managing Director of FoodFutureCo."]})
    provider = FakeProvider([EINSTEIN, real])
    judge = LLMJudge(ModelClient(provider, FAST))
    assert await judge.extract_claims(answer, question="Who runs FoodFutureCo?") == [
        "Shen Tong is the Managing Director of FoodFutureCo."
    ]
    repair = provider.requests[1].messages[-1].content
    assert "CopiedExample" in repair and "repeats the prompt's example" in repair


async def test_a_copied_example_twice_is_an_invalid_score_with_its_kind() -> None:
    from ragmeter.errors import CopiedExample
    from ragmeter.run.runner import aevaluate

    answer = "Shen Tong is the Managing Director of FoodFutureCo, profiled by Forbes."
    judge = LLMJudge(ModelClient(FakeProvider([QUESTIONS, QUESTIONS]), FAST))
    with pytest.raises(CopiedExample, match="Where was Albert Einstein born"):
        await judge.generate_questions(answer, n=2)
    judge = LLMJudge(ModelClient(FakeProvider([EINSTEIN, EINSTEIN]), FAST))
    result = await aevaluate(
        [{"question": "Who runs FoodFutureCo?", "contexts": ["Shen Tong runs it."], "answer": answer}],
        ["faithfulness"],
        judge,
        progress=False,
    )
    score = result.scores("faithfulness")[0]
    assert score is not None and not score.valid and score.error is not None
    assert score.error.kind == "CopiedExample" and "Einstein" in (score.error.raw or "")


@pytest.mark.parametrize(
    "answer",
    [
        "Albert Einstein was a German-born theoretical physicist who developed relativity.",  # the same topic
        "Albert Einstein was born in Ulm, Germany, in 1879.",
    ],
)
async def test_a_reply_about_data_on_the_examples_topic_is_not_a_copy(answer: str) -> None:
    provider = FakeProvider([EINSTEIN, QUESTIONS])
    judge = LLMJudge(ModelClient(provider, FAST))
    assert len(await judge.extract_claims(answer, question="Who was Einstein?")) == 2
    assert (await judge.generate_questions(answer, n=2)).questions[0] == "Where was Albert Einstein born?"
    assert len(provider.requests) == 2  # no repair round


def test_check_not_copied_ignores_short_and_generic_texts() -> None:
    from ragmeter.judges.replies import check_not_copied

    wording = 'Example Output: {"reason": "Height not mentioned.", "x": "It is supported."}'
    check_not_copied({"reason": "Not stated."}, wording, "data about something else")  # too short
    check_not_copied({"reason": "It is supported."}, wording, "It is supported by the data.")  # in the data
    from ragmeter.errors import CopiedExample

    with pytest.raises(CopiedExample):
        check_not_copied({"verdicts": [{"reason": "Height not mentioned."}]}, wording, "Shen Tong runs a company.")
    zh = "示例 输出：{\"claims\": [\"阿尔伯特·爱因斯坦是德国出生的物理学家。\"]}"
    with pytest.raises(CopiedExample):
        check_not_copied({"claims": ["阿尔伯特·爱因斯坦是德国出生的物理学家。"]}, zh, "沈彤是食品公司的董事总经理。")
    check_not_copied({"claims": ["阿尔伯特·爱因斯坦是德国出生的物理学家。"]}, zh, "爱因斯坦是德国出生的物理学家吗？")
