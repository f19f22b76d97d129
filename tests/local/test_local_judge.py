from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from ragmeter.dataset.sample import Sample
from ragmeter.errors import ConfigError, JudgeError, UnsupportedStepError
from ragmeter.judges.base import STEPS, Judge, Rubric
from ragmeter.local import SUPPORTED_STEPS, LocalJudge, default_embedder
from ragmeter.metrics.faithfulness import Faithfulness

CTX_EN = [
    "The Eiffel Tower is a wrought-iron lattice tower in Paris, France. It was completed in 1889 "
    "for the World's Fair. The tower is 330 metres tall and was designed by the company of Gustave Eiffel.",
    "Bananas are rich in potassium. They grow in tropical regions.",
]
CTX_ZH = ["埃菲尔铁塔位于法国巴黎。铁塔于1889年建成，高330米。它是由古斯塔夫·埃菲尔的公司设计的。"]


class _TinyEmbedder:
    name = "tiny"
    dim = 2

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        return np.array([[1.0, 0.0] for _ in texts], dtype=np.float32)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name}


@pytest.fixture(scope="module")
def judge() -> LocalJudge:
    return LocalJudge()


async def _p(judge: LocalJudge, claim: str, contexts: list[str]) -> float:
    (v,) = await judge.verify_claims([claim], contexts)
    assert v.confidence is not None and 0.0 <= v.confidence <= 1.0
    assert v.supported == (v.confidence >= 0.5)
    assert v.reason.endswith("(local judge)")
    return v.confidence


def test_is_a_judge_and_supports_exactly_its_steps() -> None:
    j = LocalJudge()
    assert isinstance(j, Judge)
    assert j.name == "local"
    assert j.embedder is default_embedder()
    assert {s for s in STEPS if j.supports(s)} == set(SUPPORTED_STEPS)
    assert set(SUPPORTED_STEPS) == {
        "extract_claims",
        "verify_claims",
        "rate_sentences",
        "rate_chunks",
        "assess_relevance",
        "embed",
        "standalone_question",
        "rate_turn_relevance",
        "check_completeness",
        "check_retention",
        "check_goal",
    }


async def test_embed_uses_the_embedder_and_describe() -> None:
    j = LocalJudge(_TinyEmbedder())
    assert (await j.embed(["a", "b"])).tolist() == [[1.0, 0.0], [1.0, 0.0]]
    d = j.describe()
    assert d["name"] == "local" and d["embedder"] == {"name": "tiny"}
    assert d["support_combiner"]["name"] == "support"
    await j.aclose()


async def test_default_embed_is_normalised(judge: LocalJudge) -> None:
    out = await judge.embed(["hello", "你好"])
    assert out.shape == (2, 512)
    assert np.allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)


@pytest.mark.parametrize(
    ("step", "call"),
    [
        ("generate_questions", lambda j: j.generate_questions("an answer")),
        ("grade", lambda j: j.grade(Rubric(name="r", criteria="c"), {"answer": "a"})),
        ("compare", lambda j: j.compare("q", "a", "b")),
    ],
)
async def test_other_steps_are_refused(step: str, call: Any) -> None:
    j = LocalJudge(_TinyEmbedder())
    assert not j.supports(step)
    with pytest.raises(UnsupportedStepError, match="name an LLM judge with --judge") as info:
        await call(j)
    assert isinstance(info.value, ConfigError)
    assert info.value.judge == "local" and info.value.step == step


# ------------------------------------------------------------------ extract_claims


async def test_extract_claims_english(judge: LocalJudge) -> None:
    text = (
        "Sure! The Eiffel Tower is in Paris, and it was completed in 1889 by Gustave Eiffel's company. "
        "Would you like to know more? I hope this helps."
    )
    claims = await judge.extract_claims(text, question="Where is the Eiffel Tower?")
    assert claims == ["The Eiffel Tower is in Paris", "It was completed in 1889 by Gustave Eiffel's company."]


async def test_extract_claims_chinese(judge: LocalJudge) -> None:
    text = "好的。埃菲尔铁塔位于巴黎；它于1889年建成。希望对你有帮助！"
    assert await judge.extract_claims(text) == ["埃菲尔铁塔位于巴黎；", "它于1889年建成。"]


@pytest.mark.parametrize(
    "text",
    [
        "Sure! I hope this helps.",
        "I don't know.",
        "I'm not sure, sorry.",
        "我不知道。",
        "你好！谢谢！",
        "   ",
        "Maybe.",  # only a hedge
        "I think so.",
        "我不确定。",
        "可能吧。",
    ],
)
async def test_no_claims_from_filler_refusal_or_a_bare_hedge(judge: LocalJudge, text: str) -> None:
    assert await judge.extract_claims(text) == []


@pytest.mark.parametrize(
    ("text", "claims"),
    [
        # a hedged statement is a claim, kept as written (the metrics take the hedge off)
        ("I'm not sure, but it was completed in 1889.", ["I'm not sure, but it was completed in 1889."]),
        ("I am not sure, but it was probably completed in 1925.", ["I am not sure, but it was probably completed in 1925."]),
        ("我不确定，但可能是1925年建成的。", ["我不确定，但可能是1925年建成的。"]),
        # each clause of a hedged sentence keeps its hedge
        (
            "I think it opened in 1889, and it is 300 metres tall.",
            ["I think it opened in 1889", "I think it is 300 metres tall."],
        ),
    ],
)
async def test_hedged_statements_are_claims(judge: LocalJudge, text: str, claims: list[str]) -> None:
    assert await judge.extract_claims(text) == claims


@pytest.mark.parametrize(
    ("text", "claims"),
    [
        # a list joined by ", and" is one claim, not "... the beauty, intelligence" + a fragment
        (
            "The purpose of the pageant is to celebrate the beauty, intelligence, and cultural diversity "
            "of Dominican women.",
            [
                "The purpose of the pageant is to celebrate the beauty, intelligence, and cultural diversity "
                "of Dominican women."
            ],
        ),
        ("He grew apples, pears, and plums on the farm.", ["He grew apples, pears, and plums on the farm."]),
        # the right side has no subject of its own: one claim
        ("The tower was built in 1889, and is 300 metres tall.", ["The tower was built in 1889, and is 300 metres tall."]),
        # both sides are full statements: two claims
        ("The tower was built in 1889, and it is 300 metres tall.", ["The tower was built in 1889", "It is 300 metres tall."]),
        ("She studied in Paris, but she taught in Lyon.", ["She studied in Paris", "She taught in Lyon."]),
        # the comma of a number does not open a list item; only ", and" can close a list
        (
            "The festival drew 18,000 people over three days, and the director said costs were covered.",
            ["The festival drew 18,000 people over three days", "The director said costs were covered."],
        ),
        (
            "The van killed Peter Haines, 47, a father of two; his wife said the family was destroyed.",
            ["The van killed Peter Haines, 47, a father of two", "His wife said the family was destroyed."],
        ),
        (
            "Prichard won the men's race, the fastest time since 2016, while Wanjiru took the women's title.",
            ["Prichard won the men's race, the fastest time since 2016", "Wanjiru took the women's title."],
        ),
        # verbless items under a colon belong to the sentence that introduces them
        (
            "The pageant celebrates:\n- beauty\n- intelligence\n- cultural diversity",
            ["The pageant celebrates: beauty, intelligence, cultural diversity"],
        ),
        (
            "Key facts:\n- The tower opened in 1889.\n- It is 300 metres tall.",
            ["The tower opened in 1889.", "It is 300 metres tall."],
        ),
        ("长江是中国最长的河流，但黄河是中国第二长的河流。", ["长江是中国最长的河流", "黄河是中国第二长的河流。"]),
    ],
)
async def test_claims_split_only_into_full_statements(judge: LocalJudge, text: str, claims: list[str]) -> None:
    assert await judge.extract_claims(text) == claims


async def test_no_claims_makes_faithfulness_invalid(judge: LocalJudge) -> None:
    sample = Sample(id="1", question="Where is it?", answer="Sure! I hope this helps.", contexts=("Paris.",))
    score = await Faithfulness().score(sample, judge)
    assert not score.valid and score.error is not None and score.error.kind == "NoClaims"


async def test_faithfulness_metric_runs_on_the_local_judge(judge: LocalJudge) -> None:
    good = Sample(
        id="g", question="When?", answer="The Eiffel Tower was completed in 1889.", contexts=tuple(CTX_EN)
    )
    bad = Sample(
        id="b",
        question="When?",
        answer="The Eiffel Tower was completed in 1925 in Rome.",
        contexts=tuple(CTX_EN),
    )
    sg = await Faithfulness().score(good, judge)
    sb = await Faithfulness().score(bad, judge)
    # The value is the expected share of supported claims (the verdicts' probabilities).
    assert sg.value is not None and sb.value is not None
    assert sg.value > 0.9 and sb.value < 0.1
    assert sg.details["n_supported"] == 1 and sb.details["n_supported"] == 0
    assert sg.details["claims"][0]["confidence"] > 0.5


# ------------------------------------------------------------------ verify_claims


async def test_verify_supported_claim_with_evidence(judge: LocalJudge) -> None:
    (v,) = await judge.verify_claims(["The Eiffel Tower was finished in 1889."], CTX_EN)
    assert v.supported and v.confidence is not None and v.confidence > 0.6
    assert "1889" in v.evidence


async def test_number_mismatch_lowers_support(judge: LocalJudge) -> None:
    right = await _p(judge, "The Eiffel Tower was completed in 1889.", CTX_EN)
    wrong = await _p(judge, "The Eiffel Tower was completed in 1901.", CTX_EN)
    assert right >= 0.5 > wrong
    assert await _p(judge, "The tower is 330 metres tall.", CTX_EN) > await _p(
        judge, "The tower is 420 metres tall.", CTX_EN
    )


async def test_negation_lowers_support(judge: LocalJudge) -> None:
    pos = await _p(judge, "The Eiffel Tower was designed by the company of Gustave Eiffel.", CTX_EN)
    neg = await _p(judge, "The Eiffel Tower was not designed by the company of Gustave Eiffel.", CTX_EN)
    assert pos > neg + 0.2


async def test_novel_entity_lowers_support(judge: LocalJudge) -> None:
    assert await _p(judge, "The Eiffel Tower is in Paris.", CTX_EN) >= 0.5
    assert await _p(judge, "The Eiffel Tower is in Rome.", CTX_EN) < 0.5


async def test_a_word_the_contexts_lack_put_in_a_copied_sentence_is_a_swap_unless_entailed(
    judge: LocalJudge,
) -> None:
    # one word of the sentence replaced by one the contexts lack, and the verifier does not entail
    # it: a confirmed contradiction, whatever the overlap says
    ctx = ["Insulin is produced by the pancreas."]
    (v,) = await judge.verify_claims(["Insulin is produced by the liver."], ctx)
    assert v.confidence is not None and v.confidence <= 0.3 and not v.supported
    assert "words of the closest context sentence are replaced" in v.reason
    gas = ["Plants absorb carbon dioxide from the air for photosynthesis."]
    assert await _p(judge, "Plants absorb nitrogen from the air for photosynthesis.", gas) <= 0.3
    # the sentence itself, and a claim the verifier entails, are not swaps
    assert await _p(judge, "Insulin is produced by the pancreas.", ctx) >= 0.7
    (features,) = await judge.claim_features(["Plants absorb carbon dioxide from the air."], gas)
    assert features["term_swap"] == 0
    # an English subject in the subject's place
    planet = ["Jupiter is the largest planet in the Solar System."]
    assert await _p(judge, "Saturn is the largest planet in the Solar System.", planet) <= 0.3
    # not a swap: a reworded verb phrase, a place's people, a claim that rewords more than a copy
    bello = ["Headteacher Karen Bello, who joined the school in September 2024, said pupils had worked hard."]
    (features,) = await judge.claim_features(
        ["Headteacher Karen Bello, who has led the school since September 2024, said pupils had worked hard."], bello
    )
    assert features["term_swap"] == 0
    runner = ["Kenyan runner Esther Wanjiru won the women's race in 2:36:12."]
    (features,) = await judge.claim_features(["Kenya's Esther Wanjiru won the women's race in 2:36:12."], runner)
    assert features["term_swap"] == 0


async def test_context_decides_not_world_knowledge(judge: LocalJudge) -> None:
    counterfactual = ["The Eiffel Tower is a lattice tower in Rome, Italy. It was completed in 1889."]
    assert await _p(judge, "The Eiffel Tower is in Rome.", counterfactual) > await _p(
        judge, "The Eiffel Tower is in Paris.", counterfactual
    )


async def test_verify_chinese(judge: LocalJudge) -> None:
    right = await _p(judge, "埃菲尔铁塔于1889年建成。", CTX_ZH)
    wrong_year = await _p(judge, "埃菲尔铁塔于1901年建成。", CTX_ZH)
    negated = await _p(judge, "埃菲尔铁塔不在巴黎。", CTX_ZH)
    located = await _p(judge, "埃菲尔铁塔在巴黎。", CTX_ZH)
    assert right >= 0.5 > wrong_year
    assert located > negated


async def test_verify_is_deterministic_and_ordered(judge: LocalJudge) -> None:
    claims = ["The tower is in Paris.", "Bananas grow in tropical regions.", "The moon is made of cheese."]
    a = await judge.verify_claims(claims, CTX_EN)
    b = await judge.verify_claims(claims, CTX_EN)
    assert [v.claim for v in a] == claims
    assert [v.confidence for v in a] == [v.confidence for v in b]
    assert a[0].supported and a[1].supported and not a[2].supported


async def test_verify_edge_cases(judge: LocalJudge) -> None:
    assert await judge.verify_claims([], CTX_EN) == []
    with pytest.raises(JudgeError, match="no text"):
        await judge.verify_claims(["x"], ["  ", ""])


# ------------------------------------------------------------------ rate_sentences / rate_chunks


async def test_rate_sentences(judge: LocalJudge) -> None:
    q = "When was the Eiffel Tower completed?"
    sents = [
        "The Eiffel Tower was completed in 1889.",
        "Bananas are rich in potassium.",
        "The Eiffel Tower is in Paris.",
    ]
    ps = await judge.rate_sentences(q, sents)
    assert len(ps) == 3 and all(0.0 <= p <= 1.0 for p in ps)
    assert ps[0] > ps[2] > ps[1]
    assert ps[0] >= 0.5 > ps[1]
    assert await judge.rate_sentences(q, []) == []
    zh = await judge.rate_sentences("埃菲尔铁塔是哪一年建成的？", ["铁塔于1889年建成。", "香蕉富含钾。"])
    assert zh[0] > zh[1]


async def test_rate_chunks(judge: LocalJudge) -> None:
    vs = await judge.rate_chunks("When was the tower completed?", CTX_EN, "It was completed in 1889.")
    assert [v.claim for v in vs] == CTX_EN
    assert vs[0].supported and not vs[1].supported
    assert vs[0].confidence is not None and vs[1].confidence is not None
    assert vs[0].confidence > vs[1].confidence
    assert await judge.rate_chunks("q", [], "t") == []


# ------------------------------------------------------------------ assess_relevance


async def test_assess_relevance_complete_beats_partial(judge: LocalJudge) -> None:
    q = "When was PharmaCann founded and where is its headquarters?"
    full = await judge.assess_relevance(q, "PharmaCann was founded in 2014. Its headquarters is in Illinois.")
    part = await judge.assess_relevance(q, "PharmaCann was founded in 2014. It sells cannabis products.")
    assert 0.0 <= part.score < full.score <= 1.0
    assert [n["type"] for n in full.details["needs"]] == ["date", "place"]
    assert full.details["judge"] == "local" and full.reason.endswith("(local judge)")


async def test_assess_relevance_off_topic_and_padding(judge: LocalJudge) -> None:
    q = "When was the Eiffel Tower completed?"
    on = await judge.assess_relevance(q, "The Eiffel Tower was completed in 1889.")
    padded = await judge.assess_relevance(
        q, "The Eiffel Tower was completed in 1889. Bananas are yellow. My cat likes fish."
    )
    off = await judge.assess_relevance(q, "Bananas are rich in potassium.")
    assert on.score > padded.score > off.score
    assert padded.details["padding"] > 0


@pytest.mark.parametrize(
    "answer",
    ["I don't know.", "I'm not sure, I cannot answer that.", "我不知道。", "抱歉，我无法回答这个问题。"],
)
async def test_evasive_answers_are_noncommittal(judge: LocalJudge, answer: str) -> None:
    r = await judge.assess_relevance("When was the Eiffel Tower completed?", answer)
    assert r.noncommittal and r.score == 0.0


async def test_partly_evasive_answer_is_penalised(judge: LocalJudge) -> None:
    q = "When is the launch and where will it take place?"
    ok = await judge.assess_relevance(
        q, "The launch is on 30 July 2023. It will take place at Sriharikota, India."
    )
    evasive = await judge.assess_relevance(
        q, "The launch date has not been provided. It will take place at Sriharikota, India."
    )
    assert not evasive.noncommittal and evasive.details["evasive_share"] > 0
    assert ok.score > evasive.score


async def test_assess_relevance_chinese(judge: LocalJudge) -> None:
    q = "埃菲尔铁塔是哪一年建成的？"
    good = await judge.assess_relevance(q, "埃菲尔铁塔于1889年建成。")
    bad = await judge.assess_relevance(q, "香蕉富含钾，生长在热带地区。")
    assert good.score > bad.score
    assert good.details["needs"][0]["type"] == "date"


async def test_assess_relevance_rejects_empty(judge: LocalJudge) -> None:
    with pytest.raises(JudgeError):
        await judge.assess_relevance("", "x")


async def test_the_reason_names_the_rule_that_decided_a_claim(judge: LocalJudge) -> None:
    """A claim held down by a confirmed contradiction says which one and that it caps the claim;
    a claim a context sentence states says so, and a paraphrase the verifier entails confidently
    says that it reads supported."""
    ctx = [
        "Councillor Priya Nandakumar, who chairs the transport committee, said the lanes would make "
        "the town centre safer for children. Opponents, led by Councillor Derek Holt, argued that "
        "removing 60 parking spaces would hurt small shops."
    ]
    swapped, negated, copied = await judge.verify_claims(
        [
            "Councillor Derek Holt said the lanes would make the town centre safer.",
            "Removing 60 parking spaces would not hurt small shops.",
            "Councillor Priya Nandakumar chairs the transport committee.",
        ],
        ctx,
    )
    assert not swapped.supported and swapped.confidence is not None and swapped.confidence <= 0.3
    assert "the contexts give these words to another speaker" in swapped.reason
    assert "a confirmed contradiction: at most 0.3" in swapped.reason
    assert not negated.supported
    assert "the contexts say the same with the negation flipped" in negated.reason
    assert "negation differs" not in negated.reason
    assert "a confirmed contradiction: at most 0.3" in negated.reason
    assert copied.supported and "a context sentence states it" in copied.reason
    assert "stated: at least 0.9" in copied.reason and "at most" not in copied.reason
    (paraphrase,) = await judge.verify_claims(
        ["Refunds take up to 14 days after the item is received."],
        ["Refunds are issued within 14 days of receiving the returned item."],
    )
    assert paraphrase.supported and "entailed confidently: at least 0.8" in paraphrase.reason


async def test_retention_names_a_place_given_otherwise_and_never_blames_an_offer(judge: LocalJudge) -> None:
    """A reply that puts the user in another country than the one they named forgets the fact; an
    offer of help that mentions the user's thing asks for nothing (English and Chinese)."""
    from ragmeter.local.conversation import check_retention

    dialogue = [
        ("user", "Hi, I live in Canada and I bought a tent from you last week."),
        ("assistant", "Hello! How can I help with your tent?"),
        ("user", "It has a broken pole. Can I return it?"),
        ("assistant", "Yes. Since you live in the United States, you can return it at any of our US stores."),
    ]
    greet, wrong = (await check_retention(judge, dialogue)).verdicts
    assert greet.ok and "asks again" not in greet.reason
    assert not wrong.ok and "names another place or person" in wrong.reason
    right = [*dialogue[:3], ("assistant", "Yes. Since you live in Canada, you can return it at any Canadian store.")]
    assert (await check_retention(judge, right)).verdicts[1].ok
    zh = [("user", "我住在北京，上周买了一顶帐篷。"), ("assistant", "您好！有什么可以帮您处理帐篷的吗？")]
    assert (await check_retention(judge, zh)).verdicts[0].ok


async def test_a_policy_question_is_met_by_the_policy(judge: LocalJudge) -> None:
    """A question that names the kind of answer ("What is your refund policy?") is met by an answer
    that gives it without the word; an answer about something else still is not."""
    from ragmeter.local.conversation import check_completeness

    (met,) = await check_completeness(
        judge,
        [("user", "What is your refund policy?"),
         ("assistant", "You can return any item within 30 days of purchase for a full refund, as long as it is unused.")],
    )  # fmt: skip
    assert met.supported
    (unmet,) = await check_completeness(
        judge, [("user", "What is your refund policy?"), ("assistant", "We sell tents, sleeping bags and stoves.")]
    )
    assert not unmet.supported
    # the same in Chinese: 政策 names the kind of answer, and the particles and asking words of the
    # question are no key terms (的退, 策是, 么时)
    for request, reply in (
        ("你们的退款政策是什么？", "购买后30天内，未使用的商品都可以全额退款。"),
        ("你们的退货政策是怎样的？", "商品在收到后七天内可以无理由退货，运费由我们承担。"),
    ):
        (met,) = await check_completeness(judge, [("user", request), ("assistant", reply)])
        assert met.supported, (request, met.reason)
    (unmet,) = await check_completeness(
        judge, [("user", "你们的退款政策是什么？"), ("assistant", "我们销售帐篷、睡袋和炉具。")]
    )
    assert not unmet.supported


def test_chinese_key_terms_leave_out_the_asking_words() -> None:
    from ragmeter.local.relevance import question_needs, type_satisfied

    assert [n.terms for n in question_needs("你们的退款政策是什么？")] == [frozenset({"退款"})]
    (when, which) = question_needs("长城是什么时候开始修建的？现在看到的长城主要是哪个朝代的？")
    assert {"长城", "修建"} <= when.terms and not when.terms & {"么时", "候修"}
    # a dynasty answers "哪个朝代"
    assert which.answer_type == "date"
    assert type_satisfied("date", "现在看到的砖石长城大多是明代修建的。", which.text) == 1.0
    assert type_satisfied("date", "长城东起辽宁虎山，西至甘肃嘉峪关。", which.text) == 0.0
