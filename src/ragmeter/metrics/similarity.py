"""Semantic similarity of answer and reference (LlamaIndex ``SemanticSimilarityEvaluator``)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ragmeter.errors import ConfigError
from ragmeter.metrics._common import blank, cosine_rows, empty_input
from ragmeter.metrics.base import Metric, Score, register_metric

if TYPE_CHECKING:

    from ragmeter.dataset.sample import Sample
    from ragmeter.judges.base import Judge


@register_metric("semantic_similarity")
class SemanticSimilarity(Metric):
    """Cosine similarity of the embeddings of the answer and the reference.

    Inputs: ``answer`` and ``reference``. Judge calls: 1 -- ``embed([answer, reference])``.

    ::

        semantic_similarity = cos(E(answer), E(reference))     in [-1, 1]
        passing             = semantic_similarity >= threshold   (default 0.8, as LlamaIndex)

    The value is the raw cosine, not clipped, as LlamaIndex reports it (Ragas' ``SemanticSimilarity``
    likewise); most embedders keep it in [0, 1] for text pairs, and a negative value is information.
    ``details["passing"]`` holds the pass decision.

    Edge cases: an empty (whitespace-only) answer or reference, or an unusable embedding reply
    (wrong shape, zero vector, NaN), is invalid. Judge errors propagate to the runner.

    Batched (``score_batch``): the texts of up to ``batch_size`` samples go to the judge in one
    ``embed`` call, so the embedder (local or remote) works on large batches; the values are those
    of ``score`` sample by sample.
    """

    name = "semantic_similarity"
    requires = ("answer", "reference")
    steps = ("embed",)
    threshold = 0.8
    batch_size = 128

    def __init__(self, threshold: float = 0.8) -> None:
        if (
            isinstance(threshold, bool)
            or not isinstance(threshold, (int, float))
            or not math.isfinite(threshold)
        ):
            raise ConfigError(f"semantic_similarity: threshold must be a number, not {threshold!r}")
        # An instance value shadows the class default, so reports and gates read this one.
        setattr(self, "threshold", float(threshold))  # noqa: B010

    def params(self) -> dict[str, Any]:
        return {"threshold": self.threshold}

    async def score(self, sample: Sample, judge: Judge) -> Score:
        return (await self.score_batch([sample], judge))[0]

    async def score_batch(self, samples: Sequence[Sample], judge: Judge) -> list[Score]:
        import numpy as np

        out: list[Score | None] = []
        texts: list[str] = []
        for sample in samples:
            answer, reference = sample.answer, sample.reference
            if answer is None or blank(answer):
                out.append(empty_input("answer"))
            elif reference is None or blank(reference):
                out.append(empty_input("reference"))
            else:
                out.append(None)
                texts += [answer.strip(), reference.strip()]
        pairs: list[Any] = []
        if texts:
            embedded = np.asarray(await judge.embed(texts))
            if embedded.ndim != 2 or embedded.shape[0] != len(texts):
                why = f"embed returned an array of shape {embedded.shape} for {len(texts)} texts"
                return [s if s is not None else Score.invalid("EmbeddingError", why) for s in out]
            pairs = [embedded[i : i + 2] for i in range(0, len(texts), 2)]
        vectors = iter(pairs)
        return [s if s is not None else self._from_pair(next(vectors)) for s in out]

    def _from_pair(self, pair: Any) -> Score:
        rows, why = cosine_rows(pair, 2)
        if rows is None:
            return Score.invalid("EmbeddingError", why)
        value = float(rows[0] @ rows[1])
        value = min(max(value, -1.0), 1.0)  # rounding can push a cosine a hair past +-1
        threshold = float(self.threshold if self.threshold is not None else 0.8)
        passing = value >= threshold
        return Score(
            value=value,
            reason=f"cosine similarity {value:.3f} {'>=' if passing else '<'} threshold {threshold:g}",
            details={"similarity": value, "threshold": threshold, "passing": passing},
        )
