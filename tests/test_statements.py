"""What a sentence states (ragmeter.statements): hedges, text that states nothing, short answers."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from ragmeter.statements import split_hedge, statement_of, states_nothing

SRC = Path(__file__).resolve().parents[1] / "src" / "ragmeter"


@pytest.mark.parametrize(
    ("sentence", "bare"),
    [
        ("I am not sure, but it was probably completed in 1925.", "It was completed in 1925."),
        ("I'm not sure, but it was completed in 1889.", "It was completed in 1889."),
        ("I think it was completed in 1925.", "It was completed in 1925."),
        ("I'm not sure, but I think the tower opened in 1889.", "The tower opened in 1889."),
        ("If I remember correctly, the bridge opened in May.", "The bridge opened in May."),
        ("The bridge opened in May, if I remember correctly.", "The bridge opened in May."),
        ("It was, I think, completed in 1925.", "It was completed in 1925."),
        ("Maybe the museum closes at six.", "The museum closes at six."),
        ("It seems that the river floods every spring.", "The river floods every spring."),
        ("As far as I know, Canberra is the capital.", "Canberra is the capital."),
        ("The station was likely built in 1890.", "The station was built in 1890."),
        ("It is most likely made of granite.", "It is made of granite."),
        ("I'm pretty sure that the lake is frozen.", "The lake is frozen."),
        ("我不确定，但可能是1925年建成的。", "是1925年建成的。"),
        ("我不确定，但我记得它是1889年建成的。", "它是1889年建成的。"),
        ("大熊猫好像主要吃竹子吧。", "大熊猫主要吃竹子。"),
        ("我记得这座桥是五月通车的。", "这座桥是五月通车的。"),
        ("应该是1889年建成的。", "是1889年建成的。"),
        ("它大概有三百米高。", "它有三百米高。"),
        ("如果我没记错的话，会议改到了周四。", "会议改到了周四。"),
        ("据我所知，该公司总部设在深圳。", "该公司总部设在深圳。"),
    ],
)
def test_hedges_are_taken_off(sentence: str, bare: str) -> None:
    h = split_hedge(sentence)
    assert h.hedged and h.text == bare
    assert not states_nothing(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "The Eiffel Tower is in Paris.",
        "The team is likely to win the cup.",  # an adjective with "to": not a hedge
        "The new law makes such checks possible.",
        "I believe in the value of public libraries.",
        "You should drink more water.",
        "The test is not impossible.",
        "他不可能在那里。",  # 不可能: a negation, not a hedge
        "尽可能多地收集数据。",
        "这种可能性很小。",
        "你应该多喝水。",  # 应该 as "should"
        "长江是中国最长的河流。",
    ],
)
def test_plain_sentences_are_left_as_they_are(sentence: str) -> None:
    assert split_hedge(sentence).hedged is False
    assert split_hedge(sentence).text == sentence


@pytest.mark.parametrize(
    "sentence",
    [
        "Maybe.",
        "I think so.",
        "Maybe not.",
        "Probably.",
        "I'm not sure.",
        "I don't know.",
        "可能吧。",
        "我不确定。",
        "不知道。",
    ],
)
def test_a_sentence_that_only_hedges_or_refuses_states_nothing(sentence: str) -> None:
    assert states_nothing(sentence)
    assert statement_of(sentence) is None


def test_statement_of_cuts_source_prefixes_and_leading_meta_sentences() -> None:
    assert statement_of("based on the context, the tower is tall.") == "The tower is tall."
    assert statement_of("Here is a summary of the article.", leading=True) is None
    assert statement_of("Here is a summary: the tower is tall.", leading=True) == "The tower is tall."
    assert statement_of("Is it tall?") is None and statement_of("Thanks!") is None


def test_text_imports_nothing_of_ragmeter() -> None:
    # text.py once deferred an import of local.claims, which imports text through local.features
    # (tests/test_import_cycles.py holds the whole package free of cycles)
    tree = ast.parse((SRC / "text.py").read_text("utf-8"))
    names = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    names += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert [m for m in names if m.startswith("ragmeter")] == []


@pytest.mark.parametrize(
    ("answer", "question", "says"),
    [
        (
            "No, the Great Wall cannot be seen from the Moon.",
            "Can the Great Wall be seen from the Moon?",
            False,
        ),
        ("Yes, it can.", "Can the Great Wall be seen from the Moon?", True),
        ("It cannot be seen from the Moon.", "Can it be seen from the Moon?", False),
        ("It can be seen from low orbit.", "Can it be seen from orbit?", True),
        ("不是。", "鲸鱼是鱼吗？", False),
        ("不能，肉眼看不到。", "在月球上能看到长城吗？", False),
        ("能看到。", "能看到吗？", True),
        ("I don't know.", "Can it be seen?", None),
        ("", "Can it be seen?", None),
    ],
)
def test_polarity_reads_what_an_answer_says_to_a_yes_no_question(
    answer: str, question: str, says: bool | None
) -> None:
    from ragmeter.statements import polarity

    assert polarity(answer, question) is says


def test_a_bare_yes_no_reference_is_read_by_polarity() -> None:
    import ragmeter

    q = "Can the Great Wall be seen from the Moon with the naked eye?"
    rows = [
        {
            "question": q,
            "answer": "No, the Great Wall cannot be seen from the Moon with the naked eye.",
            "reference": "No.",
        },
        {"question": q, "answer": "Yes, it is easy to see from the Moon.", "reference": "No."},
        {"question": "鲸鱼是鱼吗？", "answer": "不是，鲸鱼是哺乳动物。", "reference": "不是。"},
        {"question": q, "answer": "I don't know.", "reference": "No."},
    ]
    result = ragmeter.evaluate(rows, ["factual_correctness"], progress=False)
    scores = result.scores("factual_correctness")
    assert [s.value for s in scores[:3]] == [1.0, 0.0, 1.0]
    assert (
        scores[0].reason == 'f1 1.000: the reference answers the yes/no question "no"; the answer says "no"'
    )
    assert scores[1].details["yes_no"] == {"reference": "no", "answer": "yes"}
    assert scores[3].error is not None  # an evasion says neither: the claim reading, which finds no claim
