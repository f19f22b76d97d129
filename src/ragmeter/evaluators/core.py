"""LlamaIndex-shaped evaluators over ragmeter metrics (see the package docstring)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import Field

from ragmeter.dataset.sample import Sample
from ragmeter.errors import ConfigError, RagmeterError, UnsupportedStepError
from ragmeter.evaluators.framework import FrameworkEvaluator, FrameworkResult
from ragmeter.metrics.answer_relevance import AnswerRelevance
from ragmeter.metrics.base import Metric, Score, meets_bound
from ragmeter.metrics.context import ContextRelevance
from ragmeter.metrics.faithfulness import Faithfulness
from ragmeter.metrics.graded import Correctness, GuidelineAdherence, Pairwise, Relevancy
from ragmeter.metrics.similarity import SemanticSimilarity
from ragmeter.run.images import judge_images
from ragmeter.run.sync import run_sync


class EvaluationResult(FrameworkResult):
    """LlamaIndex's ``EvaluationResult`` (a subclass of it when llama-index-core is installed), plus
    ``details``: the underlying ragmeter score's details (claims, verdicts, raw replies, tokens) and,
    for an invalid result, ``details["error"]`` with its kind, message and the judge's raw reply."""

    details: dict[str, Any] = Field(default_factory=dict)


class BaseEvaluator(FrameworkEvaluator):
    """Wraps one metric. ``judge`` (or LlamaIndex's name for it, ``llm``): a Judge, a spec string
    (``"openai:gpt-4o-mini"``), a LlamaIndex LLM object, or None (the local judge).

    With llama-index-core installed this is a ``llama_index.core.evaluation.BaseEvaluator``."""

    def __init__(
        self, metric: Metric, judge: Any = None, *, threshold: float | None = None, llm: Any = None
    ) -> None:
        from ragmeter.run.runner import resolve_judge

        if judge is not None and llm is not None:
            raise ConfigError(f"{type(self).__name__}: pass judge= or llm= (the same thing), not both")
        judge = judge if judge is not None else llm
        self.metric = metric
        #: an evaluator's own passing threshold, which takes precedence over the metric's
        self.threshold = None if threshold is None else float(threshold)
        self.judge = resolve_judge(judge)
        steps = metric.missing_steps(self.judge)
        if steps:  # in Python's terms: no CLI flag to point at here
            cls = type(self).__name__
            raise UnsupportedStepError(
                self.judge.name,
                ", ".join(steps),
                f"{cls} needs an LLM judge (its metric, {metric.name}, has no local reading); pass one: "
                f"{cls}(judge='openai:gpt-4o-mini'), or a Judge for any OpenAI-compatible server: "
                f"{cls}(judge=ragmeter.make_judge('openai-compatible:MODEL', base_url='http://HOST/v1'))",
            )

    # LlamaIndex's PromptMixin: ragmeter's prompts are data files, overridden through a prompts
    # directory (docs/judges.md), not PromptTemplate objects
    def _get_prompts(self) -> dict[str, Any]:
        return {}

    def _get_prompt_modules(self) -> dict[str, Any]:
        return {}

    def _update_prompts(self, prompts: Any) -> None:
        if prompts:
            raise ConfigError(
                "ragmeter's prompts are data files: override them with a prompts directory (docs/judges.md)"
            )

    def _passing(self, score: Score) -> bool | None:
        if self.threshold is not None:
            return None if score.value is None else score.value >= self.threshold
        if score.details.get("passing") is not None:
            return bool(score.details["passing"])
        t = self.metric.threshold
        if t is None or score.value is None:
            return None
        return meets_bound(score.value, t, self.metric.higher_is_better)

    def _sample(
        self,
        query: str | None,
        response: str | None,
        contexts: Sequence[str] | None,
        reference: str | None,
        metadata: dict[str, Any],
    ) -> Sample:
        return Sample(
            question=query or "",
            answer=response,
            contexts=tuple(contexts or ()),
            reference=reference,
            metadata=metadata,
        )

    async def aevaluate(
        self,
        query: str | None = None,
        response: str | None = None,
        contexts: Sequence[str] | None = None,
        reference: str | None = None,
        **kwargs: Any,
    ) -> EvaluationResult:
        sample = self._sample(query, response, contexts, reference, dict(kwargs.pop("metadata", {}) or {}))
        if kwargs:
            raise ConfigError(f"{type(self).__name__}.evaluate: unknown argument(s) {sorted(kwargs)}")
        message = self._missing_inputs(sample)
        if message is not None:
            score = Score.invalid("MissingInput", message)
        else:
            try:
                with judge_images(sample, self.judge) as seen:  # image contexts (ragmeter.run.images)
                    score = await self.metric.score(seen, self.judge)
            except RagmeterError as e:
                score = Score.invalid(type(e).__name__, str(e), raw=getattr(e, "raw", None))
        return self._finish(self._result(sample, score, query, contexts, response))

    def _finish(self, result: EvaluationResult) -> EvaluationResult:
        """The evaluator's last word on a result (the batch runner's results pass here too)."""
        return result

    def _missing_inputs(self, sample: Sample) -> str | None:
        """``"missing contexts"`` (in LlamaIndex's field names) when ``sample`` lacks what the metric
        reads, else None."""
        missing = [f for f in self.metric.requires if not sample.has(f)]
        if not missing:
            return None
        names = {"question": "query", "answer": "response"}
        return f"missing {', '.join(names.get(f, f) for f in missing)}"

    async def aevaluate_response(
        self, query: str | None = None, response: Any = None, **kwargs: Any
    ) -> EvaluationResult:
        """Evaluate a LlamaIndex ``Response`` (its text and source nodes), as LlamaIndex's evaluators do."""
        from ragmeter.pipeline.outputs import normalize_output

        answer, contexts = None, None
        if response is not None:
            out = normalize_output(response)
            answer, contexts = out.answer, list(out.contexts)
        return await self.aevaluate(query=query, response=answer, contexts=contexts, **kwargs)

    def evaluate_response(
        self, query: str | None = None, response: Any = None, **kwargs: Any
    ) -> EvaluationResult:
        """Sync form of :meth:`aevaluate_response`."""
        return run_sync(self.aevaluate_response(query, response, **kwargs))

    def _result(
        self,
        sample: Sample,
        score: Score,
        query: str | None,
        contexts: Sequence[str] | None,
        response: str | None,
    ) -> EvaluationResult:
        if score.error is not None:
            reason = f"{score.error.kind}: {score.error.message}"
            error = {"kind": score.error.kind, "message": score.error.message, "raw": score.error.raw}
            return EvaluationResult(
                query=query,
                contexts=contexts,
                response=response,
                feedback=f"invalid: {reason}",
                invalid_result=True,
                invalid_reason=reason,
                details={**dict(score.details), "error": error},
            )
        return EvaluationResult(
            query=query,
            contexts=contexts,
            response=response,
            passing=self._passing(score),
            feedback=score.reason,
            score=score.value,
            details=dict(score.details),
        )

    def evaluate(self, *args: Any, **kwargs: Any) -> EvaluationResult:
        """Sync form of :meth:`aevaluate`, with its arguments (works inside a running event loop
        too): one sync form for every evaluator, whatever arguments its ``aevaluate`` takes."""
        return run_sync(self.aevaluate(*args, **kwargs))

    async def aclose(self) -> None:
        await self.judge.aclose()


class FaithfulnessEvaluator(BaseEvaluator):
    """Is the response supported by the contexts? ``score`` is the supported share of its claims
    (the expected share with a judge that gives its confidence, the local one); ``passing`` when
    the share of claims judged supported reaches ``threshold`` (default 1.0: every claim supported,
    as LlamaIndex's YES/NO), so that ``passing`` and the reason ("all 2 claims supported") agree."""

    def __init__(
        self, judge: Any = None, *, threshold: float = 1.0, lang: str = "auto", llm: Any = None
    ) -> None:
        super().__init__(Faithfulness(lang=lang), judge, threshold=threshold, llm=llm)

    def _passing(self, score: Score) -> bool | None:
        n, supported = score.details.get("n_claims"), score.details.get("n_supported")
        if score.value is None or not n or supported is None or self.threshold is None:
            return super()._passing(score)
        return supported / n >= self.threshold


class RelevancyEvaluator(BaseEvaluator):
    """Is the response, with its contexts, in line with the query? YES (1.0) / NO (0.0)."""

    def __init__(self, judge: Any = None, *, lang: str = "auto", llm: Any = None) -> None:
        super().__init__(Relevancy(lang=lang), judge, llm=llm)


class CorrectnessEvaluator(BaseEvaluator):
    """A 1-5 score of relevance and correctness against the reference; passing at ``score_threshold``."""

    def __init__(
        self, judge: Any = None, *, score_threshold: float = 4.0, lang: str = "auto", llm: Any = None
    ) -> None:
        super().__init__(Correctness(lang=lang), judge, threshold=score_threshold, llm=llm)

    @property
    def score_threshold(self) -> float | None:
        """LlamaIndex's name for the passing threshold."""
        return self.threshold


class GuidelineEvaluator(BaseEvaluator):
    """Does the response follow the guidelines? ``passing`` when all do; ``score`` the share that do."""

    def __init__(
        self,
        judge: Any = None,
        *,
        guidelines: Sequence[str] | str | None = None,
        lang: str = "auto",
        llm: Any = None,
    ) -> None:
        super().__init__(GuidelineAdherence(guidelines=guidelines, lang=lang), judge, llm=llm)


class PairwiseComparisonEvaluator(BaseEvaluator):
    """Is ``response`` better than ``second_response``? ``score`` 1.0 / 0.0 / 0.5 (tie, also when the
    verdict flips with the order); ``pairwise_source`` says which order was consistent."""

    def __init__(
        self, judge: Any = None, *, criteria: str | None = None, lang: str = "auto", llm: Any = None
    ) -> None:
        super().__init__(Pairwise(criteria=criteria, lang=lang), judge, llm=llm)

    async def aevaluate(
        self,
        query: str | None = None,
        response: str | None = None,
        contexts: Sequence[str] | None = None,
        reference: str | None = None,
        second_response: str | None = None,
        **kwargs: Any,
    ) -> EvaluationResult:
        meta = dict(kwargs.pop("metadata", {}) or {})
        if second_response is not None:
            meta["answer_b"] = second_response
        return await super().aevaluate(query, response, contexts, reference, metadata=meta, **kwargs)

    def _finish(self, result: EvaluationResult) -> EvaluationResult:
        if result.invalid_result:
            return result
        source = "position_bias: inconsistent" if result.details.get("position_bias") else "both orders agree"
        return result.model_copy(update={"pairwise_source": source, "passing": (result.score or 0) > 0.5})


class SemanticSimilarityEvaluator(BaseEvaluator):
    """Cosine similarity of response and reference embeddings; passing at ``similarity_threshold``."""

    def __init__(self, judge: Any = None, *, similarity_threshold: float = 0.8, llm: Any = None) -> None:
        super().__init__(SemanticSimilarity(threshold=similarity_threshold), judge, llm=llm)


class _ScoreInUnitRange(BaseEvaluator):
    """A LlamaIndex evaluator whose score lies in [0, 1] and which sets no ``passing`` of its own:
    ``metric_class``'s score; ``passing`` only with a ``threshold``."""

    metric_class: type[AnswerRelevance] | type[ContextRelevance]

    def __init__(
        self, judge: Any = None, *, threshold: float | None = None, lang: str = "auto", llm: Any = None
    ) -> None:
        super().__init__(self.metric_class(lang=lang), judge, threshold=threshold, llm=llm)

    def _passing(self, score: Score) -> bool | None:
        return None if self.threshold is None else super()._passing(score)


class AnswerRelevancyEvaluator(_ScoreInUnitRange):
    """Does the response address the query (the contexts are not read)? ``score`` in [0, 1], as
    LlamaIndex's (its 0-2 points divided by 2); ragmeter's ``answer_relevance`` metric gives it: the
    Ragas way with an LLM judge, the query's information needs with the local one (docs/metrics.md).
    ``passing`` only with a ``threshold`` (LlamaIndex's evaluator sets none)."""

    metric_class = AnswerRelevance


class ContextRelevancyEvaluator(_ScoreInUnitRange):
    """Are the retrieved contexts relevant to the query (the response is not read)? ``score`` in
    [0, 1], as LlamaIndex's (its 0-4 points divided by 4); ragmeter's ``context_relevance`` metric
    gives it: the share of context sentences needed to answer the query. ``passing`` only with a
    ``threshold`` (LlamaIndex's evaluator sets none)."""

    metric_class = ContextRelevance


class _ImagesJoinContexts(BaseEvaluator):
    """``evaluate(query, response, contexts, image_paths, image_urls)``, LlamaIndex's multi-modal
    signature: the images join the contexts (:mod:`ragmeter.run.images`)."""

    async def aevaluate(  # type: ignore[override]
        self,
        query: str | None = None,
        response: str | None = None,
        contexts: Sequence[str] | None = None,
        image_paths: Sequence[str] | None = None,
        image_urls: Sequence[str] | None = None,
        **kwargs: Any,
    ) -> EvaluationResult:
        every = [*(contexts or ()), *(image_paths or ()), *(image_urls or ())]
        return await super().aevaluate(query, response, every, **kwargs)


class MultiModalFaithfulnessEvaluator(_ImagesJoinContexts, FaithfulnessEvaluator):
    """LlamaIndex's multi-modal faithfulness: an LLM judge gets the images as image parts; the local
    judge reads the text contexts, and a sample with only images is invalid, saying why."""


class MultiModalRelevancyEvaluator(_ImagesJoinContexts, RelevancyEvaluator):
    """LlamaIndex's multi-modal relevancy, on the relevancy metric (an LLM judge), images as image parts."""


#: LlamaIndex's older names, the same classes there too
QueryResponseEvaluator = RelevancyEvaluator
ResponseEvaluator = FaithfulnessEvaluator
