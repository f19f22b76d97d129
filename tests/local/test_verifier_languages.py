"""Which claims a verifier reads: its declared languages, and two verifiers as one (ByLanguage)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from ragmeter.errors import ConfigError
from ragmeter.local import LocalJudge, OnnxVerifier
from ragmeter.local.support import ENTAIL
from ragmeter.local.verifier import ByLanguage, check_languages, languages_of


class Constant:
    """A verifier that answers one probability and records what it was asked."""

    def __init__(self, value: float, languages: Sequence[str] | None = None) -> None:
        self.value = value
        self.name = f"constant:{value}"
        self.asked: list[tuple[str, str]] = []
        if languages is not None:
            self.languages = frozenset(languages)

    def entailment_sync(self, premises: Sequence[str], hypotheses: Sequence[str]) -> list[float]:
        self.asked.extend(zip(premises, hypotheses, strict=True))
        return [self.value] * len(premises)

    async def entailment(self, premises: Sequence[str], hypotheses: Sequence[str]) -> list[float]:
        return self.entailment_sync(premises, hypotheses)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name}


CONTEXT = ["长江是中国最长的河流。黄河是中国第二长河。", "The Danube flows through ten countries."]


def test_a_verifier_without_languages_reads_english_only() -> None:
    assert languages_of(Constant(0.5)) == {"en"}
    assert languages_of(Constant(0.5, ("en", "zh"))) == {"en", "zh"}
    assert check_languages(["zh", "en"]) == {"en", "zh"}
    for bad in ([], ["fr"], ["en", "de"]):
        with pytest.raises(ConfigError, match="languages must be among"):
            check_languages(bad)
    with pytest.raises(ConfigError, match="languages must be among"):
        OnnxVerifier(languages=("fr",))
    assert OnnxVerifier(languages=("en", "zh")).describe()["languages"] == ["en", "zh"]


async def test_the_judge_gives_chinese_claims_only_to_a_verifier_that_reads_chinese() -> None:
    claims = ["长江是中国最长的河流。", "The Danube flows through ten countries."]
    english = Constant(0.99)
    en_feats = await LocalJudge(verifier=english).claim_features(claims, CONTEXT)
    assert ENTAIL not in en_feats[0] and en_feats[1][ENTAIL] == pytest.approx(0.99)
    assert all("长江" not in h for _, h in english.asked)
    both = Constant(0.99, ("en", "zh"))
    zh_feats = await LocalJudge(verifier=both).claim_features(claims, CONTEXT)
    assert zh_feats[0][ENTAIL] == pytest.approx(0.99) and zh_feats[1][ENTAIL] == pytest.approx(0.99)
    assert any("长江" in h for _, h in both.asked)


async def test_by_language_routes_each_pair_and_keeps_the_order() -> None:
    english, chinese = Constant(0.1), Constant(0.9, ("en", "zh"))
    routed = ByLanguage(english, chinese)
    assert languages_of(routed) == {"en", "zh"}
    premises = ["The sky is blue.", "长江很长。", "Paris is in France.", "The river is long."]
    hypotheses = ["It is blue.", "长江是一条长河。", "巴黎在法国。", "It is long."]
    assert routed.entailment_sync(premises, hypotheses) == [0.1, 0.9, 0.9, 0.1]
    assert await routed.entailment(premises, hypotheses) == [0.1, 0.9, 0.9, 0.1]
    assert [p for p, _ in english.asked] == ["The sky is blue.", "The river is long."] * 2
    assert routed.describe() == {"name": "constant:0.1+constant:0.9", "english": {"name": "constant:0.1"},
                                 "chinese": {"name": "constant:0.9"}}  # fmt: skip
    with pytest.raises(ValueError, match="2 premises for 1 hypotheses"):
        routed.entailment_sync(["a", "b"], ["c"])
