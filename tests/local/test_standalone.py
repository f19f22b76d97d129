"""The local judge's standalone-question rule (ragmeter.local.standalone), English and Chinese."""

from __future__ import annotations

import pytest

from ragmeter.local import LocalJudge
from ragmeter.local.standalone import standalone_question as rewrite

EIFFEL = [("user", "Tell me about the Eiffel Tower."), ("assistant", "It is a wrought-iron tower in Paris.")]
FRANCE = [("user", "What is the population of France?"), ("assistant", "About 68 million.")]
CURIE = [("user", "Who was Marie Curie?"), ("assistant", "A physicist and chemist.")]
TENT = [("user", "Can I return a tent I bought in Canada?"), ("assistant", "Yes, within 30 days.")]
ZH_EIFFEL = [("user", "介绍一下埃菲尔铁塔。"), ("assistant", "埃菲尔铁塔是巴黎的一座铁塔。")]


@pytest.mark.parametrize(
    ("question", "history", "expected"),
    [
        ("How tall is it?", EIFFEL, "How tall is the Eiffel Tower?"),
        ("What is its height?", EIFFEL, "What is the Eiffel Tower's height?"),
        ("Who designed this?", EIFFEL, "Who designed the Eiffel Tower?"),
        ("Is this building old?", EIFFEL, "Is this building old?"),  # a determiner, and a word of its own
        ("What about Germany?", FRANCE, "What is the population of Germany?"),
        ("And Spain?", FRANCE, "What is the population of Spain?"),
        ("When did she win her first Nobel Prize?", CURIE, "When did Marie Curie win her first Nobel Prize?"),
        ("Where was he born?", [("user", "Tell me about Albert Einstein")], "Where was Albert Einstein born?"),
        ("What causes throat cancer?", EIFFEL, "What causes throat cancer?"),  # standalone already
        ("How tall is it?", [], "How tall is it?"),  # nothing to carry
        # a topic carried once is carried on
        (
            "What are its symptoms?",
            [("user", "What is throat cancer?"), ("assistant", "..."), ("user", "Is it treatable?")],
            "What are throat cancer's symptoms?",
        ),
        # without an entity in the user's messages, the answer's entities are used
        ("When was it built?", [("user", "Hi"), ("assistant", "The Golden Gate Bridge is lovely.")],
         "When was the Golden Gate Bridge built?"),
        # a dummy "it" refers to nothing: the country of the history is not put in its place
        ("How long does it take to get the money back?", TENT, "How long does it take to get the money back?"),
        ("Is it possible to get a refund in cash?", TENT, "Is it possible to get a refund in cash?"),
        ("Will it cost anything to return it?", TENT, "Will it cost anything to return it?"),
        ("When does it close?", EIFFEL, "When does the Eiffel Tower close?"),
        ("它有多高？", ZH_EIFFEL, "埃菲尔铁塔有多高？"),
        ("它的设计者是谁？", ZH_EIFFEL, "埃菲尔铁塔的设计者是谁？"),
        ("这个是什么时候建的？", ZH_EIFFEL, "埃菲尔铁塔是什么时候建的？"),
        ("这座城市有多大？", ZH_EIFFEL, "这座城市有多大？"),
        ("德国呢？", [("user", "法国的人口是多少？"), ("assistant", "约六千八百万。")], "德国的人口是多少？"),
        ("他写了哪些诗？", [("user", "李白是哪个朝代的诗人？"), ("assistant", "唐朝。")], "李白写了哪些诗？"),
        ("它们吃什么？", [("user", "什么是大熊猫？")], "大熊猫吃什么？"),
    ],
)  # fmt: skip
def test_rule(question: str, history: list[tuple[str, str]], expected: str) -> None:
    assert rewrite(question, history) == expected


async def test_the_local_judge_offers_the_rule_as_its_step() -> None:
    judge = LocalJudge.__new__(LocalJudge)  # the step needs no model: no embedder is loaded
    assert LocalJudge.supports(judge, "standalone_question")
    assert await LocalJudge.standalone_question(judge, "How tall is it?", EIFFEL) == "How tall is the Eiffel Tower?"
