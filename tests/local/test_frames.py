"""The frame reading (ragmeter.local.frames): a claim against each sentence that speaks to it."""

from __future__ import annotations

import pytest

from ragmeter.local import LocalJudge
from ragmeter.local.frames import clauses, read_frames, verdict
from ragmeter.local.support import index_contexts


def said(claim: str, context: str) -> str:
    ctx = index_contexts([context])
    found, _ = verdict(
        read_frames(claim, ctx.sentences, ctx.context_of, ctx.text, ctx.frame_norms, ctx.frame_names)
    )
    return found


AUSTRALIA = "Canberra is the capital city of Australia. Sydney is the largest city in Australia."
MUSEUM = "The museum is open from Tuesday to Sunday. It is closed on Mondays."


@pytest.mark.parametrize(
    ("claim", "context", "expected"),
    [
        # a filler from another sentence, word order aside
        ("The capital of Australia is Sydney.", AUSTRALIA, "conflict"),
        ("Sydney is the largest city in Australia.", AUSTRALIA, "agrees"),
        # a noun from another sentence in a noun's place
        (
            "Insulin is produced by the liver.",
            "Insulin is a hormone produced by the pancreas. The liver stores glucose as glycogen.",
            "conflict",
        ),
        # a number from another clause of the same sentence
        (
            "The library opens at 11 a.m. on weekdays.",
            "The library opens at 9 a.m. on weekdays and at 11 a.m. on Saturdays.",
            "conflict",
        ),
        # roles exchanged around the same verb; the passive and the opposite verb cancel it
        (
            "Lena Marsh beat Serena Okafor in the final.",
            "Serena Okafor beat Lena Marsh in the final.",
            "conflict",
        ),
        (
            "Blood is pumped through the body by the heart.",
            "The heart pumps blood through the body.",
            "agrees",
        ),
        (
            "The Atlantic Ocean is smaller than the Pacific Ocean.",
            "The Pacific Ocean is larger than the Atlantic Ocean.",
            "agrees",
        ),
        (
            "The Atlantic Ocean is larger than the Pacific Ocean.",
            "The Pacific Ocean is larger than the Atlantic Ocean.",
            "conflict",
        ),
        # a negation and an opposite cancel; a negated claim with another filler is no contradiction
        ("The museum does not open on Mondays.", MUSEUM, "agrees"),
        ("The museum is open on Mondays.", MUSEUM, "conflict"),
        # Chinese: a name from another sentence, roles exchanged, a comparative turned round
        ("中国的首都是上海。", "北京是中华人民共和国的首都。上海是中国最大的城市。", "conflict"),
        ("日本队在决赛中战胜了中国队。", "在决赛中，中国队以3比1战胜了日本队。", "conflict"),
        ("深圳的人口比广州少。", "广州的人口比深圳多。", "agrees"),
        ("深圳的人口比广州多。", "广州的人口比深圳多。", "conflict"),
        # a converse verb with the roles exchanged says the same; a swap in a clause about another
        # thing is no swap, and the clause that states the claim wins over it
        ("日本队在决赛中输给了中国队。", "在决赛中，中国队以3比1战胜了日本队。", "agrees"),
        ("深圳的人口比广州少。", "广州的人口比深圳多，但深圳的人均收入比广州高。", "agrees"),
        (
            "今年一季度该公司的利润减少了百分之三。",
            "今年一季度，该公司的销售额增长了百分之十五，但利润下降了百分之三。",
            "",
        ),
        (
            "今年一季度该公司的利润增长了百分之十五。",
            "今年一季度，该公司的销售额增长了百分之十五，但利润下降了百分之三。",
            "conflict",
        ),
        # a name of several words swapped whole
        (
            "Alexander Graham Bell developed a practical incandescent light bulb.",
            "Thomas Edison developed a practical incandescent light bulb in 1879. Alexander Graham Bell was "
            "awarded the first patent for the telephone in 1876.",
            "conflict",
        ),
    ],
)
def test_frame_verdicts(claim: str, context: str, expected: str) -> None:
    assert said(claim, context) == expected


@pytest.mark.parametrize(
    ("claim", "context", "expected"),
    [
        # an adjunct put first is no argument of the relation: no exchange
        (
            "Off the coast of Queensland lies the Great Barrier Reef.",
            "The Great Barrier Reef lies off the coast of Queensland in Australia.",
            "agrees",
        ),
        (
            "In 2014 the company opened a store in Marseille.",
            "The company opened its first store in Lyon in 2009. Its second store, in Marseille, opened in 2014.",
            "agrees",
        ),
        ("In the final, England beat Spain.", "In the final, Spain beat England 2-1.", "conflict"),
        # a name the claim gives by part of it is named ("Bach"), one that only shares a word is not
        (
            "Bach was born in Halle.",
            "Johann Sebastian Bach was born in Eisenach. George Frideric Handel was born in Halle.",
            "conflict",
        ),
        (
            "The Pacific Ocean is the smallest of the five oceans.",
            "The Pacific Ocean is larger than the Atlantic Ocean. The Arctic Ocean is the smallest of the five oceans.",
            "conflict",
        ),
    ],
)
def test_fronted_adjuncts_and_names_given_in_part(claim: str, context: str, expected: str) -> None:
    assert said(claim, context) == expected


@pytest.mark.parametrize(
    ("claim", "context", "expected"),
    [
        # a number the sentence gives to another word of its own: a swap, though every word is there
        (
            "Marie Curie won the Nobel Prize in Chemistry in 1903.",
            "Marie Curie won the Nobel Prize in Physics in 1903 and the Nobel Prize in Chemistry in 1911.",
            "conflict",
        ),
        (
            "Marie Curie won the Nobel Prize in Physics in 1903.",
            "Marie Curie won the Nobel Prize in Physics in 1903 and the Nobel Prize in Chemistry in 1911.",
            "agrees",
        ),
        # two numbers given to two words the other way round: an exchange
        (
            "The library lends DVDs for three weeks and books for one week.",
            "The library lends books for three weeks and DVDs for one week.",
            "conflict",
        ),
        # not a binding: a range ("from two hours to 45 minutes"), a date's day
        (
            "The journey takes 45 minutes on the new train line.",
            "The new train line cuts the journey from two hours to 45 minutes.",
            "",
        ),
        ("The Berlin Wall fell in 1989.", "The Berlin Wall fell on 9 November 1989.", "agrees"),
        # a clause with a subject of its own does not take the previous clause's
        (
            "The Nile is about 6,400 kilometres long.",
            "The Nile, at about 6,650 kilometres, is the longest river, while the Amazon is about 6,400 kilometres long.",
            "conflict",
        ),
    ],
)
def test_numbers_bound_to_their_words(claim: str, context: str, expected: str) -> None:
    assert said(claim, context) == expected


async def test_a_chinese_claim_giving_a_sentences_numbers_about_its_subject_is_a_close_paraphrase() -> None:
    from ragmeter.local.support import _numbers_anchored

    lakes = ["西湖位于杭州，面积约6.4平方公里。", "太湖横跨江苏和浙江两省，面积约2400平方公里。"]
    assert _numbers_anchored("太湖的面积大约是2400平方公里。", lakes)
    assert not _numbers_anchored("西湖的面积约2400平方公里。", lakes)  # not the sentence about 西湖
    assert not _numbers_anchored("太湖的面积很大。", lakes)  # no number
    judge = LocalJudge()
    (v,) = await judge.verify_claims(["太湖的面积大约是2400平方公里。"], ["".join(lakes)])
    assert v.confidence is not None and v.confidence >= 0.7
    (v,) = await judge.verify_claims(["西湖的面积约2400平方公里。"], ["".join(lakes)])
    assert v.confidence is not None and v.confidence <= 0.3


def test_two_sides_sharing_a_character_exchanged_around_a_comparative() -> None:
    water = "水在零摄氏度结冰。盐水的冰点比纯水低。"
    assert said("纯水的冰点比盐水高。", water) == "agrees"  # exchanged and opposite: two flips
    assert said("盐水的冰点比纯水高。", water) == "conflict"


def test_a_claim_naming_what_the_sentence_does_not_is_no_swap_of_it() -> None:
    cups = "Brazil has won the FIFA World Cup five times. Germany and Italy have each won it four times."
    ctx = index_contexts([cups])
    readings = read_frames(
        "Italy has won the World Cup as many times as Germany.",
        ctx.sentences, ctx.context_of, ctx.text, ctx.frame_norms, ctx.frame_names,
    )
    assert all(not r.swaps for r in readings)  # not "Italy" for "Brazil": Germany is no part of that sentence
    assert said("Italy has won the FIFA World Cup five times.", cups) == "conflict"


def test_a_negated_change_states_what_stayed() -> None:
    fares = "The city council raised bus fares in January. Fares for students stayed at $1.00."
    assert said("Student fares did not change.", fares) == "agrees"
    assert said("Student fares changed.", fares) == "conflict"


def test_a_comparative_is_read_against_the_numbers_of_its_two_sides() -> None:
    from ragmeter.local.frames import numeric_comparison

    rivers = [
        "The Amazon River discharges more water than any other river.",
        "The Nile, at about 6,650 kilometres, is the longest river, while the Amazon is about 6,400 kilometres long.",
    ]
    assert numeric_comparison("The Amazon is longer than the Nile.", rivers) is False
    assert numeric_comparison("The Nile is longer than the Amazon.", rivers) is True
    assert numeric_comparison("The Amazon is shorter than the Nile.", rivers) is True
    whales = ["An adult blue whale can weigh up to 150 tonnes, while an adult African elephant weighs about 6 tonnes."]
    assert numeric_comparison("The African elephant is heavier than the blue whale.", whales) is False
    # nothing to read: no comparative, another unit, a year (older is the smaller year), one side unmeasured
    assert numeric_comparison("The Nile is a river.", rivers) is None
    assert numeric_comparison("The bridge is longer than the tunnel.", ["The bridge is 2 km long and the tunnel 900 m."]) is None
    assert numeric_comparison("Oxford is older than Cambridge.", ["Oxford was founded in 1096 and Cambridge in 1209."]) is None
    assert numeric_comparison("The Amazon is wider than the Danube.", rivers) is None


def test_a_name_added_beside_the_sentences_is_no_swap() -> None:
    context = "Johann Sebastian Bach was born in Eisenach in 1685. George Frideric Handel was born in Halle in 1685."
    ctx = index_contexts([context])
    readings = read_frames(
        "Bach and Handel were born in 1685.", ctx.sentences, ctx.context_of, ctx.text, ctx.frame_norms, ctx.frame_names
    )
    assert all(not r.swaps for r in readings)


def test_a_sentence_that_does_not_speak_to_the_claim_decides_nothing() -> None:
    assert said("The bridge opened in 1937.", AUSTRALIA) == ""


def test_clauses() -> None:
    assert clauses("Revenue grew by 12 percent, while profit fell by 4 percent.") == (
        "Revenue grew by 12 percent",
        "profit fell by 4 percent.",
    )
    assert clauses("在决赛中，中国队以3比1战胜了日本队。") == ("在决赛中中国队以3比1战胜了日本队。",)
    assert clauses("植物吸收二氧化碳，释放氧气。") == ("植物吸收二氧化碳", "释放氧气。")


async def test_the_judge_reads_the_issue_cases_and_says_why() -> None:
    judge = LocalJudge()
    wrong, right = await judge.verify_claims(
        ["The capital of Australia is Sydney.", "Canberra is the capital of Australia."], [AUSTRALIA]
    )
    assert wrong.confidence is not None and wrong.confidence <= 0.3
    assert "says otherwise" in wrong.reason
    assert right.confidence is not None and right.confidence >= 0.9
    (v,) = await judge.verify_claims(["The museum does not open on Mondays."], [MUSEUM])
    assert v.confidence is not None and v.confidence >= 0.9 and "states it" in v.reason


def test_a_close_paraphrase_the_verifier_cannot_read_reads_supported() -> None:
    """support.close_paraphrase: close in meaning, made of the contexts' words, and no sign of
    departing from them; any one sign (or the verifier having read the claim) leaves p as it is."""
    from ragmeter.local.support import PARAPHRASE_FLOOR, after_rules, close_paraphrase

    plain = {"sim_max": 0.85, "word_cov": 0.89, "cov_best": 0.57, "ent_novel": 0.0, "num_missing": 0.0,
             "neg_flip": 0.0, "antonym": 0.0, "term_swap": 0.0, "num_swap": 0.0, "neg_confirmed": 0.0,
             "speaker_swap": 0.0, "first_person": 0.0, "frame_conflict": 0.0, "frame_agrees": 0.0}  # fmt: skip
    assert close_paraphrase(plain) and after_rules(plain, 0.66, False) == PARAPHRASE_FLOOR
    assert after_rules(plain, 0.66, True) == 0.66  # the verifier read it: its reading decides
    assert after_rules(plain, 0.9, False) == 0.9  # a floor, not a cap
    for sign in ("ent_novel", "num_missing", "term_swap", "antonym", "neg_flip", "first_person"):
        assert not close_paraphrase({**plain, sign: 1.0}), sign
    assert not close_paraphrase({**plain, "sim_max": 0.75}) and not close_paraphrase(
        {**plain, "word_cov": 0.6}
    )
    assert after_rules({**plain, "frame_conflict": 1.0}, 0.66, False) == 0.3  # a swap: capped


async def test_the_reason_names_the_close_paraphrase_floor() -> None:
    from ragmeter.local import LocalJudge

    (v,) = await LocalJudge().verify_claims(
        ["《阿Q正传》是鲁迅写的。"], ["鲁迅创作了小说《阿Q正传》。《骆驼祥子》的作者是老舍。"]
    )
    assert v.confidence == 0.75
    assert "a context sentence in other words, nothing said otherwise: at least 0.75" in v.reason
