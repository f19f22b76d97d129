from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragmeter.errors import ConfigError
from ragmeter.local.calibration import Combiner, fixed, load_combiner, sigmoid
from ragmeter.local.claims import extract_claims
from ragmeter.local.features import analyze, antonym_conflict, coverage, stem
from ragmeter.local.relevance import answer_type, question_needs
from ragmeter.local.support import ENTAIL, RULE_FEATURES, SUPPORT_FEATURES
from ragmeter.statements import is_evasive, is_filler, is_refusal


@pytest.mark.parametrize(
    ("a", "b"),
    [("combines", "combined"), ("companies", "company"), ("founded", "founding"), ("approaches", "approach")],
)
def test_stem_matches_inflections(a: str, b: str) -> None:
    assert stem(a) == stem(b)


def test_analyze_english() -> None:
    f = analyze("Gigi Lee Chang founded Plum Organics in 2,006 and it isn't 3.50 dollars or twelve.")
    assert {"2006", "3.5", "12"} <= f.numbers
    assert {"gigi", "chang", "plum", "organic"} <= f.entities
    assert f.negated
    assert "found" in f.terms and "the" not in f.terms
    assert not analyze("The tower is in Paris.").negated


def test_analyze_chinese() -> None:
    f = analyze("埃菲尔铁塔于1889年建成，有三个平台，二〇二三年重新开放。")
    assert {"1889", "3", "2023"} <= f.numbers
    assert "铁塔" in f.terms and f.has_cjk
    assert not f.negated
    assert analyze("铁塔不在巴黎。").negated
    assert not analyze("这两座塔不同。").negated  # 不同 is not a negation


def test_coverage_and_antonyms() -> None:
    assert coverage(frozenset(), frozenset({"a"})) == 1.0
    assert coverage(frozenset({"a", "b"}), frozenset({"a"})) == 0.5
    c, e = "Sales increased in 2020.", "Sales decreased in 2020."
    assert antonym_conflict(analyze(c), c, analyze(e), e)
    assert not antonym_conflict(analyze(c), c, analyze(c), c)
    c2, e2 = "It happened before the war.", "It happened after the war."
    assert antonym_conflict(analyze(c2), c2, analyze(e2), e2)
    # inflected forms the stems do not join, and a kept state against a change
    c3, e3 = "Falling sea temperatures caused bleaching.", "Rising sea temperatures caused bleaching."
    assert antonym_conflict(analyze(c3), c3, analyze(e3), e3)
    c4, e4 = "The council lowered bus fares.", "The council raised bus fares."
    assert antonym_conflict(analyze(c4), c4, analyze(e4), e4)


def test_filler_evasive_refusal() -> None:
    assert is_filler("Sure!") and is_filler("I hope this helps.") and is_filler("希望对你有帮助！")
    assert not is_filler("Sure enough, the tower fell.")
    assert is_evasive("The context does not mention the date.") and is_evasive("我无法回答")
    assert is_refusal("I don't know.") and not is_refusal(
        "The date is not provided in the report of 1990 by ISRO."
    )
    assert extract_claims("Is it red? It is red.") == ["It is red."]


def test_leading_meta_sentences_are_not_claims() -> None:
    assert extract_claims("Here is a summary of the article. The tower opened in 1889.") == [
        "The tower opened in 1889."
    ]
    assert extract_claims("Sure, here is a brief overview: the tower is tall.") == ["The tower is tall."]
    assert extract_claims("Based on the context, the tower is tall.") == ["The tower is tall."]
    assert extract_claims("以下是本文的摘要。埃菲尔铁塔建于1889年。") == ["埃菲尔铁塔建于1889年。"]
    # only leading ones: later in the answer such a sentence is kept as it is
    assert extract_claims("The tower is tall. Here is a summary of the rest.") == [
        "The tower is tall.",
        "Here is a summary of the rest.",
    ]


def test_question_needs_and_types() -> None:
    needs = question_needs("Who directed Oppenheimer and who stars as J. Robert Oppenheimer in the film?")
    assert [n.answer_type for n in needs] == ["person", "person"]
    assert answer_type("How many people live in Paris?") == "number"
    assert answer_type("Is Paris in France?") == "yesno"
    assert answer_type("What is the purpose of the project?") == "other"
    assert answer_type("埃菲尔铁塔在哪里？") == "place"
    assert answer_type("他什么时候出生？") == "date"
    assert answer_type("巴黎在法国吗？") == "yesno"
    assert len(question_needs("埃菲尔铁塔在哪里，以及它是什么时候建成的？")) == 2


@pytest.mark.parametrize("name", ["support", "support_plain"])
def test_packaged_support_combiners_have_a_training_record(name: str) -> None:
    c = load_combiner(name)
    assert c.features == (SUPPORT_FEATURES if name == "support_plain" else (*SUPPORT_FEATURES, ENTAIL))
    rec = c.record
    assert rec["kind"] == "trained" and rec["seed"] == 0
    assert rec["script"] == "scripts/train_local_combiner.py"
    root = Path(__file__).resolve().parents[2]
    assert rec["data"] and all((root / d.split(" ")[0]).is_file() for d in rec["data"])
    assert any(d.startswith("data/dev/") for d in rec["data"])
    assert "heldout" in rec
    # the signs the features must have (the coverage measures are collinear: their sum)
    w = dict(zip(c.features, c.weights, strict=True))
    assert w["cov_best"] + w["cov_all"] + w["bigram_cov"] + w["word_cov"] > 0
    assert w["num_missing"] < 0 and w["ent_novel"] < 0 and w["neg_flip"] < 0
    if name == "support":
        assert w[ENTAIL] > 0 and rec["verifier"] == "verifier:minilm-l6-int8"


def test_combiner_round_trip_and_errors() -> None:
    c = fixed("t", {"x": 2.0, "y": -1.0}, bias=0.5, note="test")
    assert Combiner.from_dict(json.loads(json.dumps(c.to_dict()))) == c
    assert c.probability({"x": 0.0, "y": 0.0}) == pytest.approx(sigmoid(0.5))
    assert 0.0 <= c.probability({"x": 1e6, "y": -1e6}) <= 1.0
    with pytest.raises(ConfigError, match="malformed"):
        Combiner.from_dict({"name": "x"})
    with pytest.raises(ConfigError, match="weights"):
        Combiner("x", ("a",), (1.0, 2.0), 0.0)
    with pytest.raises(ConfigError, match="missing"):
        load_combiner("no-such-combiner")


def test_single_blas_thread_restores_the_setting() -> None:
    from ragmeter.local import blas

    ob = blas._openblas()
    if ob is None:
        pytest.skip("NumPy's BLAS is not OpenBLAS: nothing to read the setting from")
    before = ob[0]()
    for _ in range(2):  # the second time through the cached threadpoolctl controller, if installed
        with blas.single_blas_thread():
            assert ob[0]() == 1
        assert ob[0]() == before


def test_chinese_units_after_arabic_digits_make_one_number() -> None:
    # 5700万元 is 57,000,000 yuan, the same number as "57,000,000"; not "5700" and a stray "0"
    assert analyze("该公司的收入为5700万元。").numbers == {"57000000"}
    assert analyze("Revenue was 57,000,000 yuan.").numbers == {"57000000"}
    assert analyze("约3.5亿人").numbers == {"350000000"}
    assert analyze("三万人").numbers == {"30000"}
    assert analyze("一万二千").numbers == {"12000"}
    assert analyze("万元").numbers == {"10000"}  # 万 alone is ten thousand, never 0
    assert analyze("2023年5月").numbers == {"2023", "5"}  # 年 and 月 are not units


def test_chinese_percentages_long_numerals_and_the_article_yi() -> None:
    from ragmeter.local.features import number_slots

    # 百分之二十一 is 21%: its 百 is not a hundred, and the slot is the percentage's
    assert analyze("空气中的氧气约为百分之二十一。").numbers == analyze("氧气约占21%。").numbers == {"21"}
    assert number_slots("利润下降了百分之三。") == number_slots("利润下降了3%。") == {("3", "%")}
    assert analyze("百分之三点五的人").numbers == {"3.5"}
    # a numeral of more than six characters is one number
    assert analyze("黄河全长约五千四百六十四公里").numbers == {"5464"}
    # a lone 一 before a counter is the article: no number the contexts must hold ...
    assert analyze("成年人一天最多可以服用两次这种药。").numbers == {"2"}
    assert analyze("他是一位诗人。").numbers == set()
    # ... but its slot is still read, so "once" against "twice" is a swap
    assert ("1", "次") in number_slots("每天一次")


def test_an_opposite_is_read_in_the_clause_the_claim_copies_and_cancels_with_a_negation() -> None:
    from ragmeter.local.support import _says_opposite

    def opposed(claim: str, sentence: str) -> bool:
        return _says_opposite(analyze(claim), claim, sentence, analyze(sentence))

    sales = "今年一季度，该公司的销售额增长了百分之十五，但利润下降了百分之三。"
    assert not opposed("该公司一季度的销售额上升了百分之十五。", sales)  # 下降 is the profit's
    assert opposed("今年一季度该公司的销售额下降了。", sales)
    older = "It is approved for adults and for children aged five and older."
    assert not opposed("The vaccine has no approval for children younger than five.", older)
    assert opposed("The vaccine is approved for children younger than five.", older)


def test_a_chinese_function_character_put_in_an_equivalent_ones_place_is_no_swap() -> None:
    from ragmeter.local.support import index_contexts, swap_candidates

    ctx = index_contexts(["木星是太阳系中最大的行星。"])
    assert swap_candidates("木星是太阳系里最大的行星。", ctx.sentences[0], ctx.all_stems, ctx.text) == []
    assert swap_candidates("木星是银河系中最大的行星。", ctx.sentences[0], ctx.all_stems, ctx.text) != []


def test_a_people_or_language_word_names_its_place() -> None:
    from ragmeter.local.support import name_forms

    assert "america" in name_forms("american") and "american" in name_forms("america")
    assert "italy" in name_forms("italian") and "italian" in name_forms("italy")
    assert "china" in name_forms("chines")  # "Chinese", stemmed as entities are
    assert "brazil" in name_forms("brazilian") and "canada" in name_forms("canadian")
    assert "austria" not in name_forms("australian") and "paris" not in name_forms("pari")
    import numpy as np

    from ragmeter.local.support import index_contexts, support_features

    ctx = index_contexts(["Spanish is spoken in most other countries of South America."])
    sims = np.zeros(len(ctx.sentences))
    assert support_features("Most other South American countries speak Spanish.", ctx, sims).values["ent_novel"] == 0
    assert support_features("Most other South African countries speak Spanish.", ctx, sims).values["ent_novel"] > 0


def test_negation_is_read_from_the_clause_the_claim_copies() -> None:
    from ragmeter.local.support import _aligned_clause

    def negated(claim: str, sentence: str) -> bool:
        return _aligned_clause(analyze(claim), sentence, analyze(sentence)).negated

    # the negation belongs to another clause of the same sentence
    assert not negated("新大桥于2021年5月通车。", "新大桥于2021年5月通车，不允许十吨以上的卡车通行。")
    assert negated("新大桥允许十吨以上的卡车通行。", "新大桥于2021年5月通车，不允许十吨以上的卡车通行。")
    assert not negated("The bridge opened in May.", "The bridge opened in May, but trucks are not allowed.")
    # a one-word lead and subordinate clauses are not clauses of their own
    assert negated(
        "Nuclear power is a safe source.", "No, studies conclude that nuclear power is a safe source."
    )
    assert negated("Eating late causes weight gain.", "If you eat late, nothing in particular happens.")
    assert negated("卡车可以通行。", "不，卡车可以通行。")


def test_numbers_of_scores_hyphenated_words_and_fortnights() -> None:
    # the nil of a score is rarely written as a number in the source ("from two goals down")
    assert analyze("Rovers recovered from 2-0 down to win 3-2.").numbers == {"2", "3"}
    assert analyze("They lost 0–1.").numbers == {"1"}
    assert analyze("in the 2019-20 season").numbers == {"2019", "20"}  # not a score
    # a number word inside a hyphenated word, a ten and a unit as one number
    assert analyze("Sixteen-year-old Maisie Tranter won.").numbers == {"16"}
    assert analyze("along a two-kilometre stretch").numbers == {"2"}
    assert analyze("twenty-five people").numbers == {"25"}
    assert analyze("every fortnight").numbers == analyze("every two weeks").numbers == {"2"}


def test_what_is_not_yet_known_is_no_negation() -> None:
    assert not analyze("The cause is not yet known.").negated
    assert not analyze("It isn't clear who won.").negated
    assert not analyze("The price was not disclosed.").negated
    assert analyze("The bridge is not closed.").negated
    assert analyze("He did not know the answer.").negated


def test_a_claim_of_several_clauses_is_read_clause_by_clause_for_negation() -> None:
    from ragmeter.local.support import _flipped_clause

    def flipped(claim: str, sentences: list[str]) -> bool:
        cf = analyze(claim)
        clause = max((analyze(s) for s in sentences), key=lambda f: coverage(cf.terms, f.terms))
        return _flipped_clause(claim, cf, clause, sentences) is not None

    road = "The coastal road between Penhallow and Port Ennis was closed after a section of sea wall collapsed."
    # the negation is in a clause the sentence does not state: no flip
    assert not flipped("A sea wall collapse closed the Penhallow to Port Ennis road, but nobody was hurt.", [road])
    # the negated clause is stated, negated, by another premise sentence: no flip
    assert not flipped(
        "The club found an asteroid between Mars and Jupiter, an object that is no danger to Earth.",
        ["The club has discovered an asteroid.", "The asteroid orbits between Mars and Jupiter and poses no threat to Earth."],
    )
    # a clause the evidence states the other way is a flip
    assert flipped("The road was not closed, but the sea wall held.", [road])
    assert flipped("The bridge is not open.", ["The bridge is open."])


def test_a_chinese_name_the_contexts_lack_is_a_novel_entity() -> None:
    from ragmeter.local.support import index_contexts, zh_novel_share

    ctx = index_contexts(["埃菲尔铁塔位于巴黎，由古斯塔夫·埃菲尔的工程公司设计，于1889年建成。"])
    assert zh_novel_share("埃菲尔铁塔位于伦敦。", ctx.all_words) == pytest.approx(2 / 9)  # 伦敦
    assert zh_novel_share("埃菲尔铁塔位于巴黎。", ctx.all_words) == 0.0
    assert zh_novel_share("铁塔是公司设计的。", ctx.all_words) == 0.0  # 的 / 是 are function characters
    assert zh_novel_share("The tower is in Paris.", ctx.all_words) == 0.0


def test_fit_combiner_fits_named_feature_rows_and_says_what_is_wrong() -> None:
    from ragmeter.local.calibration import fit_combiner

    rows = [{"a": float(i % 7), "b": float(i % 3)} for i in range(60)]
    labels = [1.0 if r["a"] >= 3 else 0.0 for r in rows]
    c = fit_combiner(rows, labels, ("a", "b"), name="t", l2=0.1, record={"note": "test"})
    assert c.features == ("a", "b") and c.weights[0] > 0
    assert c.record["note"] == "test" and c.record["rows"] == 60 and c.record["positives"] == sum(labels)
    assert c.probability({"a": 6.0, "b": 0.0}) > 0.9 > 0.1 > c.probability({"a": 0.0, "b": 0.0})
    assert Combiner.from_dict(json.loads(json.dumps(c.to_dict()))) == c
    with pytest.raises(ConfigError, match=r"row 1 has no feature 'b'"):
        fit_combiner([{"a": 1.0, "b": 0.0}, {"a": 0.0}], [1.0, 0.0], ("a", "b"), name="t")
    with pytest.raises(ConfigError, match="both labels"):
        fit_combiner([{"a": 1.0}, {"a": 0.0}], [1.0, 1.0], ("a",), name="t")


async def test_claim_features_are_the_rows_the_packaged_combiner_reads() -> None:
    from ragmeter.local import LocalJudge

    judge = LocalJudge()
    en, zh = await judge.claim_features(
        ["I think the tower was completed in 1889.", "铁塔位于巴黎。"],
        ["The tower is in Paris. It was completed in 1889.", "埃菲尔铁塔位于巴黎。"],
    )
    assert set(judge.support.features) <= set(en)
    assert set(judge.support_plain.features) | set(RULE_FEATURES) == set(zh)
    assert en["first_person"] == 0.0  # the hedge is off before the features are read
    assert await judge.claim_features([], ["x"]) == []


def test_number_slots_find_a_swapped_value_in_the_same_slot() -> None:
    from ragmeter.local.features import number_slots, number_swap

    assert ("42", "million") in number_slots("Revenue was $42 million in 2023.")
    assert ("2023", "(year)") in number_slots("Revenue was $42 million in 2023.")
    assert ("8", "book") in number_slots("It lends up to eight books.")
    assert ("16", "century") in number_slots("in the sixteenth century")  # ordinals are numbers
    assert ("42000000", "元") in number_slots("收入为4200万元")
    ctx = "Acme reported revenue of $42 million for 2023. 新大桥于2021年5月通车。"
    slots = frozenset().union(*(number_slots(s) for s in ctx.split(". ")))
    numbers = analyze(ctx).numbers
    assert number_swap("Acme reported revenue of $57 million.", slots, numbers)
    assert number_swap("新大桥于2021年8月通车。", slots, numbers)
    assert not number_swap("Acme reported revenue of $42 million.", slots, numbers)
    # a number with no counterpart in the contexts is an addition or a paraphrase, not a swap
    assert not number_swap("Acme has two thirds of the market.", slots, numbers)


def test_a_quote_put_in_another_speakers_mouth_is_a_speaker_swap() -> None:
    from ragmeter.local.support import index_contexts, speaker_swapped

    ctx = index_contexts(
        [
            "Councillor Priya Nandakumar, who chairs the transport committee, said the lanes would make "
            "the town centre safer for children. Opponents, led by Councillor Derek Holt, argued that "
            "removing 60 parking spaces would hurt small shops. He said he would ask for a review."
        ]
    )
    sents, names = list(ctx.sentences), ctx.all_entities
    assert speaker_swapped("Councillor Derek Holt said the lanes would make the town centre safer.", sents, names)
    # the right speaker, a speaker the contexts do not name (ent_novel's case), or other words: no swap
    assert not speaker_swapped("Nandakumar said the lanes would make the town centre safer for children.", sents, names)
    assert not speaker_swapped("Mayor Jo Bloggs said the lanes would make the town centre safer.", sents, names)
    assert not speaker_swapped("Holt said removing parking spaces would hurt small shops.", sents, names)
    # the sentence's speaker is a pronoun: who it is, the words do not say
    assert not speaker_swapped("Nandakumar said he would ask for a review.", sents, names)


def test_a_negated_comparative_is_read_the_positive_way() -> None:
    from ragmeter.local.features import positive_comparative

    # a comparative against every other of a class is its superlative, as contexts mostly say it
    assert positive_comparative("No hot desert is bigger than the Sahara.") == "The Sahara is the biggest hot desert."
    assert positive_comparative("No planet is nearer to the Sun than Mercury.") == (
        "Mercury is the nearest planet to the Sun."
    )
    assert positive_comparative("Mercury is smaller than every other planet in the Solar System.") == (
        "Mercury is the smallest planet in the Solar System."
    )
    assert positive_comparative("Gold is more expensive than any other metal.") == "Gold is the most expensive metal."
    # a verb that is no copula keeps the comparative form
    assert positive_comparative("No river in the world carries more water than the Amazon.") == (
        "The Amazon carries more water than any other river in the world."
    )
    assert positive_comparative("中国没有比长江更长的河流。") == "长江是中国最长的河流。"
    for text in ("No one knows more than him.", "No, the tower is taller than the church.", "Nothing is better.",
                 "The tower is taller than the church."):
        assert positive_comparative(text) == text


def test_chinese_character_swaps_and_what_is_not_one() -> None:
    from ragmeter.local.support import index_contexts, swap_candidates

    ctx = index_contexts(["故宫位于北京市中心，是明清两代的皇家宫殿。", "长城东起山海关，西至嘉峪关。"])
    def swaps(claim: str) -> list[tuple[str, str]]:
        return [p for s in ctx.sentences for p in swap_candidates(claim, s, ctx.all_stems, ctx.text)]

    assert swaps("故宫位于南京市中心。") == [("南", "北")]
    assert swaps("长城西至嘉峪山。") == [("山", "关")]  # 山 is in the contexts, not after 峪
    assert swaps("故宫位于北京市中心。") == []  # copied
    assert swaps("明朝和清朝的皇帝住在故宫。") == []  # reworded, not one fact swapped


async def test_rules_after_the_combiner_cap_a_confirmed_contradiction_and_floor_an_entailment() -> None:
    from ragmeter.local import LocalJudge
    from ragmeter.local.support import CONTRADICTED_CAP, ENTAILED_FLOOR

    judge = LocalJudge()
    ctx = [
        "Insulin is a hormone produced by the pancreas. It lets cells take up glucose from the blood, "
        "which lowers the blood sugar level.",
        "该公司2023年的收入为4200万元，员工共有300人。",
    ]
    got = await judge.verify_claims(
        ["Insulin raises the blood sugar level.", "该公司2023年的收入为5700万元。", "The pancreas makes insulin."], ctx
    )
    assert got[0].confidence is not None and got[0].confidence <= CONTRADICTED_CAP  # antonym by stem
    assert got[1].confidence is not None and got[1].confidence <= CONTRADICTED_CAP  # num_swap
    assert got[2].confidence is not None and got[2].confidence >= ENTAILED_FLOOR
    assert "another value" in got[1].reason
