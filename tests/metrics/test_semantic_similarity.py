from __future__ import annotations

import numpy as np
import pytest

from ragmeter.dataset.sample import Sample
from ragmeter.errors import ConfigError, TransportError
from ragmeter.metrics import SemanticSimilarity, get_metric


def fixed(*rows: list[float]):
    def fn(texts):
        return np.array(rows[: len(texts)], dtype=np.float32)

    return fn


async def test_raw_cosine_and_passing(make_judge):
    judge = make_judge(embed_fn=fixed([1.0, 0.0], [0.6, 0.8]))
    s = await SemanticSimilarity().score(Sample(answer="Paris.", reference="It is Paris."), judge)
    assert s.value == pytest.approx(0.6, abs=1e-6)
    assert s.details["passing"] is False
    assert s.details["threshold"] == 0.8
    assert judge.steps_called() == ["embed"]
    assert judge.calls[0][1]["texts"] == ["Paris.", "It is Paris."]

    s = await SemanticSimilarity(threshold=0.5).score(Sample(answer="a", reference="b"), judge)
    assert s.details["passing"] is True
    assert "threshold 0.5" in s.reason


async def test_negative_cosine_is_reported_raw(make_judge):
    judge = make_judge(embed_fn=fixed([1.0, 0.0], [-2.0, 0.0]))
    s = await SemanticSimilarity().score(Sample(answer="yes", reference="no"), judge)
    assert s.value == pytest.approx(-1.0)
    assert s.details["passing"] is False


async def test_identical_text_bag_of_words(make_judge):
    judge = make_judge()
    s = await SemanticSimilarity().score(Sample(answer="北京是首都", reference="北京是首都"), judge)
    assert s.value == pytest.approx(1.0, abs=1e-6)
    assert s.details["passing"] is True


async def test_zero_vector_is_invalid(make_judge):
    judge = make_judge(embed_fn=fixed([0.0, 0.0], [1.0, 0.0]))
    s = await SemanticSimilarity().score(Sample(answer="a", reference="b"), judge)
    assert s.error is not None and s.error.kind == "EmbeddingError"


@pytest.mark.parametrize("sample", [Sample(answer=" ", reference="x"), Sample(answer="x", reference=None)])
async def test_empty_inputs(make_judge, sample):
    judge = make_judge()
    s = await SemanticSimilarity().score(sample, judge)
    assert s.error is not None and s.error.kind == "EmptyInput"
    assert judge.calls == []


async def test_transport_error_propagates(make_judge):
    def boom(texts):
        raise TransportError("connection refused")

    with pytest.raises(TransportError):
        await SemanticSimilarity().score(Sample(answer="a", reference="b"), make_judge(embed_fn=boom))


def test_threshold_param_and_registry():
    m = get_metric("semantic_similarity", threshold=0.7)
    assert isinstance(m, SemanticSimilarity)
    assert m.threshold == 0.7
    assert SemanticSimilarity.threshold == 0.8
    assert m.spec()["params"] == {"threshold": 0.7}
    assert m.steps == ("embed",)
    with pytest.raises(ConfigError):
        SemanticSimilarity(threshold="high")  # type: ignore[arg-type]
