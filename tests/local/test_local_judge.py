from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from ragmeter.errors import ConfigError, UnsupportedStepError
from ragmeter.judges.base import STEPS, Judge
from ragmeter.local import LocalJudge, default_embedder


class _TinyEmbedder:
    name = "tiny"
    dim = 2

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        return np.array([[1.0, 0.0] for _ in texts], dtype=np.float32)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name}


def test_is_a_judge_and_supports_only_embed() -> None:
    judge = LocalJudge()
    assert isinstance(judge, Judge)
    assert judge.name == "local"
    assert judge.embedder is default_embedder()
    assert {s for s in STEPS if judge.supports(s)} == {"embed"}


async def test_embed_uses_the_embedder() -> None:
    judge = LocalJudge(_TinyEmbedder())
    out = await judge.embed(["a", "b"])
    assert out.tolist() == [[1.0, 0.0], [1.0, 0.0]]
    assert judge.describe() == {"name": "local", "embedder": {"name": "tiny"}}
    await judge.aclose()


async def test_default_embed_is_normalised() -> None:
    out = await LocalJudge().embed(["hello", "你好"])
    assert out.shape == (2, 512)
    assert np.allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
    assert LocalJudge().describe()["embedder"]["name"] == "use-multilingual-v3"


@pytest.mark.parametrize(
    ("step", "call"),
    [
        ("extract_claims", lambda j: j.extract_claims("some text")),
        ("verify_claims", lambda j: j.verify_claims(["c"], ["ctx"])),
        ("generate_questions", lambda j: j.generate_questions("an answer")),
    ],
)
async def test_other_steps_are_refused(step: str, call: Any) -> None:
    judge = LocalJudge(_TinyEmbedder())
    with pytest.raises(UnsupportedStepError, match="name an LLM judge with --judge") as info:
        await call(judge)
    assert isinstance(info.value, ConfigError)
    assert info.value.judge == "local" and info.value.step == step
