"""Hedged answers are scored like any other: faithfulness on the local judge.

``data/hedged_cases.jsonl``: short contexts and one-sentence answers wrapped in a hedge or an
attitude marker ("I'm not sure, but", "I think", "probably", "if I remember correctly", "我不确定，但",
"可能", "我记得", "应该是……吧"), in English and Chinese, some true to the context and some false. Every
one must be scored (none ``NoClaims``: a hallucination cannot hide behind a hedge); true ones
should read at least 0.6 and false ones at most 0.3, and the test holds the judge to the level it
reaches (:data:`MIN_RIGHT`: 18 of the 20, two wrong), so a change that loses a case fails here.
docs/local-judge.md ("Hedges") gives the figures and the two wrong cases.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from ragmeter.dataset.sample import Sample
from ragmeter.local import LocalJudge
from ragmeter.metrics.faithfulness import Faithfulness

CASES = [
    json.loads(line)
    for line in (Path(__file__).parent / "data" / "hedged_cases.jsonl").read_text("utf-8").splitlines()
    if line.strip()
]
#: cases read right (true >= 0.6, false <= 0.3) by the packaged judge, per language
MIN_RIGHT = {"en": 10, "zh": 8}


@pytest.fixture(scope="module")
def scores() -> list[tuple[bool, float | None, bool]]:
    """(valid, value, hedged) of each case's faithfulness score."""
    judge = LocalJudge()

    async def run() -> list[tuple[bool, float | None, bool]]:
        out = []
        for i, c in enumerate(CASES):
            sample = Sample(id=str(i), question=c["question"], answer=c["answer"], contexts=(c["context"],))
            s = await Faithfulness().score(sample, judge)
            hedged = bool(s.details.get("claims")) and all(r["hedged"] for r in s.details["claims"])
            out.append((s.valid, s.value, hedged))
        return out

    return asyncio.run(run())


def test_the_case_set() -> None:
    assert len(CASES) >= 20
    for lang in ("en", "zh"):
        assert {c["expected"] for c in CASES if c["lang"] == lang} == {"true", "false"}


def test_every_hedged_answer_is_scored_and_recorded_as_hedged(scores: list[tuple[bool, float | None, bool]]) -> None:
    unscored = [c["answer"] for c, (valid, _, _) in zip(CASES, scores, strict=True) if not valid]
    assert unscored == []
    assert [c["answer"] for c, (_, _, hedged) in zip(CASES, scores, strict=True) if not hedged] == []


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_hedged_answers_read_right(scores: list[tuple[bool, float | None, bool]], lang: str) -> None:
    def right(case: dict[str, str], value: float | None) -> bool:
        return value is not None and (value >= 0.6 if case["expected"] == "true" else value <= 0.3)

    got = [(c, v) for c, (_, v, _) in zip(CASES, scores, strict=True) if c["lang"] == lang]
    wrong = [f"{c['expected']} {v} {c['answer']}" for c, v in got if not right(c, v)]
    n_right = len(got) - len(wrong)
    assert n_right >= MIN_RIGHT[lang], f"{n_right}/{len(got)} right; wrong:\n" + "\n".join(wrong)
