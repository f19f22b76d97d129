"""LlamaIndex's ``BatchEvalRunner`` on ragmeter's runner.

::

    from ragmeter.evaluators import BatchEvalRunner, FaithfulnessEvaluator, RelevancyEvaluator

    runner = BatchEvalRunner({"faithfulness": FaithfulnessEvaluator(), "relevancy": RelevancyEvaluator(llm=llm)},
                             workers=8)
    results = await runner.aevaluate_queries(query_engine, queries=questions)
    results["faithfulness"][0].passing

The same methods as LlamaIndex's (``aevaluate_queries``, ``aevaluate_responses``,
``aevaluate_response_strs`` and their sync twins ``evaluate_*``), the same inputs (per-query lists,
and ``eval_kwargs_lists``: ``reference=[...]`` for every evaluator, or ``{"correctness":
{"reference": [...]}}`` for one), and the same result: ``{name: [EvaluationResult, ...]}`` in query
order. Underneath, the queries become samples and each judge's evaluators score them in one run of
:func:`ragmeter.aevaluate`: its concurrency (``workers``), retries, reply cache and memo (one
claim extraction serves faithfulness and the metrics that share it), and, with ``out=``, its run
store, so the results open in ``ragmeter runs show``, the report and the viewer (``runner.runs``).
A query whose engine failed, or that lacks what an evaluator reads, gets an invalid result saying
why; nothing is dropped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ragmeter.dataset.sample import Sample
from ragmeter.errors import ConfigError
from ragmeter.evaluators.core import BaseEvaluator, EvaluationResult
from ragmeter.metrics.base import Score
from ragmeter.run.sync import run_sync

__all__ = ["BatchEvalRunner"]

#: keyword lists that go into the sample rather than its metadata
_SAMPLE_FIELDS = {"reference": "reference", "contexts": "contexts"}


class BatchEvalRunner:
    """``evaluators``: name -> a ``ragmeter.evaluators`` evaluator. ``workers``: judge calls in
    flight (the run's concurrency). ``out``: a run store to record each run in (None: in memory)."""

    def __init__(
        self,
        evaluators: Mapping[str, BaseEvaluator],
        workers: int = 2,
        show_progress: bool = False,
        *,
        out: str | Path | None = None,
    ) -> None:
        if not evaluators:
            raise ConfigError("BatchEvalRunner needs at least one evaluator")
        for name, ev in evaluators.items():
            if not isinstance(ev, BaseEvaluator):
                raise ConfigError(
                    f"evaluator {name!r} is a {type(ev).__name__}, not a ragmeter evaluator: this runner scores "
                    "with ragmeter's runner (use llama_index.core.evaluation.BatchEvalRunner for LlamaIndex's own)"
                )
        if not isinstance(workers, int) or workers < 1:
            raise ConfigError(f"workers must be a positive integer, got {workers!r}")
        self.evaluators = dict(evaluators)
        self.workers = workers
        self.show_progress = show_progress
        self.out = Path(out) if out is not None else None
        #: the runs of the last call (one per judge), as :class:`ragmeter.Result`
        self.runs: list[Any] = []

    # -- inputs ---------------------------------------------------------------------------------

    @staticmethod
    def _lists(*inputs: Sequence[Any] | None) -> tuple[int, list[list[Any]]]:
        n = next((len(x) for x in inputs if x is not None), None)
        if n is None:
            raise ConfigError("at least one of the input lists (queries, responses...) must be given")
        out = []
        for x in inputs:
            if x is not None and len(x) != n:
                raise ConfigError(f"all input lists must have the same length ({n}), got one of {len(x)}")
            out.append(list(x) if x is not None else [None] * n)
        return n, out

    def _kwargs_for(self, name: str, eval_kwargs_lists: Mapping[str, Any], n: int) -> dict[str, list[Any]]:
        """The keyword lists ``name`` reads: the flat ones, and its own nested ones over them."""
        flat = {k: v for k, v in eval_kwargs_lists.items() if k not in self.evaluators}
        own = eval_kwargs_lists.get(name, {})
        if not isinstance(own, Mapping):
            raise ConfigError(
                f"eval_kwargs_lists[{name!r}] must be a dict of lists, got {type(own).__name__}"
            )
        merged = {**flat, **own}
        for key, values in merged.items():
            if not isinstance(values, (list, tuple)) or len(values) != n:
                raise ConfigError(f"eval kwarg {key!r} must be a list with one value per query ({n})")
        return {k: list(v) for k, v in merged.items()}

    @staticmethod
    def _sample(query: Any, response: Any, contexts: Any, kwargs: Mapping[str, Any], i: int) -> Sample:
        fields: dict[str, Any] = {}
        meta: dict[str, Any] = {}
        for key, values in kwargs.items():
            value = values[i]
            if key in _SAMPLE_FIELDS:
                fields[_SAMPLE_FIELDS[key]] = value
            elif key == "second_response":
                meta["answer_b"] = value
            else:
                meta[key] = value
        if contexts is not None and "contexts" not in fields:
            fields["contexts"] = contexts
        return Sample(
            question=query or "",
            answer=response,
            contexts=tuple(fields.pop("contexts", None) or ()),
            reference=fields.pop("reference", None),
            metadata=meta,
        )

    # -- scoring --------------------------------------------------------------------------------

    async def _score(
        self,
        queries: list[Any],
        responses: list[Any],
        contexts: list[Any],
        failures: Mapping[int, str],
        eval_kwargs_lists: Mapping[str, Any],
    ) -> dict[str, list[EvaluationResult]]:
        from ragmeter.run.api import aevaluate
        from ragmeter.run.config import RunConfig

        n = len(queries)
        samples: dict[str, list[Sample]] = {}
        for name in self.evaluators:
            kw = self._kwargs_for(name, eval_kwargs_lists, n)
            samples[name] = [self._sample(queries[i], responses[i], contexts[i], kw, i) for i in range(n)]
        # one run per (judge, samples, metric name): evaluators that share a judge and their inputs
        # share the run, and so its memo and cache
        groups: list[tuple[Any, list[Sample], dict[str, BaseEvaluator]]] = []
        for name, ev in self.evaluators.items():
            for judge, group_samples, members in groups:
                if (
                    _same_judge(judge, ev.judge)
                    and group_samples == samples[name]
                    and all(m.metric.name != ev.metric.name for m in members.values())
                ):
                    members[name] = ev
                    break
            else:
                groups.append((ev.judge, samples[name], {name: ev}))
        self.runs = []
        out: dict[str, list[EvaluationResult]] = {name: [] for name in self.evaluators}
        for judge, group_samples, members in groups:
            todo = [i for i in range(n) if i not in failures]
            result = None
            if todo:
                config = RunConfig(concurrency=self.workers, out=self.out, progress=self.show_progress)
                result = await aevaluate(
                    [group_samples[i] for i in todo],
                    [ev.metric for ev in members.values()],
                    judge,
                    config=config,
                    meta={"source": "BatchEvalRunner", "evaluators": sorted(members)},
                )
                self.runs.append(result)
            position = {i: k for k, i in enumerate(todo)}
            for name, ev in members.items():
                for i in range(n):
                    sample = group_samples[i]
                    if i in failures:
                        score = Score.invalid("PipelineError", failures[i])
                    else:
                        got = result.score(position[i], ev.metric.name) if result is not None else None
                        why = ev._missing_inputs(sample) or "not scored"
                        score = got if got is not None else Score.invalid("MissingInput", why)
                    res = ev._result(sample, score, queries[i], contexts[i], responses[i])
                    out[name].append(ev._finish(res))
        return out

    # -- LlamaIndex's methods -------------------------------------------------------------------

    async def aevaluate_response_strs(
        self,
        queries: Sequence[str] | None = None,
        response_strs: Sequence[str] | None = None,
        contexts_list: Sequence[Sequence[str]] | None = None,
        **eval_kwargs_lists: Any,
    ) -> dict[str, list[EvaluationResult]]:
        """Score answers given as strings (and their contexts, per query)."""
        _, (q, r, c) = self._lists(queries, response_strs, contexts_list)
        return await self._score(q, r, c, {}, eval_kwargs_lists)

    async def aevaluate_responses(
        self,
        queries: Sequence[str] | None = None,
        responses: Sequence[Any] | None = None,
        **eval_kwargs_lists: Any,
    ) -> dict[str, list[EvaluationResult]]:
        """Score LlamaIndex ``Response`` objects (their text and source nodes), or anything a
        pipeline may return (docs/data.md)."""
        from ragmeter.pipeline.outputs import normalize_output

        _, (q, rs) = self._lists(queries, responses)
        answers: list[Any] = []
        contexts: list[Any] = []
        for resp in rs:
            if resp is None:
                answers.append(None)
                contexts.append(None)
                continue
            parsed = normalize_output(resp)
            answers.append(parsed.answer)
            contexts.append(list(parsed.contexts))
        return await self._score(q, answers, contexts, {}, eval_kwargs_lists)

    async def aevaluate_queries(
        self, query_engine: Any, queries: Sequence[str] | None = None, **eval_kwargs_lists: Any
    ) -> dict[str, list[EvaluationResult]]:
        """Ask ``query_engine`` every query (``workers`` at a time: ragmeter's pipeline runner, which
        takes a LlamaIndex query engine, a LangChain chain or a callable), then score the answers
        and the contexts it retrieved. A query the engine failed on gets an invalid result."""
        from ragmeter.dataset.validate import rows_of
        from ragmeter.pipeline.run import arun_pipeline

        if queries is None:
            raise ConfigError("aevaluate_queries needs queries")
        q = list(queries)
        ran = await arun_pipeline(query_engine, q, workers=self.workers, progress=self.show_progress)
        answered = {row - 1: s for row, s in zip(rows_of(ran), ran, strict=True)}
        failures = {p.row - 1: str(p) for p in getattr(ran, "problems", ()) if p.row is not None}
        answers = [answered[i].answer if i in answered else None for i in range(len(q))]
        contexts = [list(answered[i].contexts) if i in answered else None for i in range(len(q))]
        return await self._score(q, answers, contexts, failures, eval_kwargs_lists)

    def evaluate_response_strs(
        self,
        queries: Sequence[str] | None = None,
        response_strs: Sequence[str] | None = None,
        contexts_list: Sequence[Sequence[str]] | None = None,
        **eval_kwargs_lists: Any,
    ) -> dict[str, list[EvaluationResult]]:
        """Sync form of :meth:`aevaluate_response_strs`."""
        return run_sync(
            self.aevaluate_response_strs(queries, response_strs, contexts_list, **eval_kwargs_lists)
        )

    def evaluate_responses(
        self,
        queries: Sequence[str] | None = None,
        responses: Sequence[Any] | None = None,
        **eval_kwargs_lists: Any,
    ) -> dict[str, list[EvaluationResult]]:
        """Sync form of :meth:`aevaluate_responses`."""
        return run_sync(self.aevaluate_responses(queries, responses, **eval_kwargs_lists))

    def evaluate_queries(
        self, query_engine: Any, queries: Sequence[str] | None = None, **eval_kwargs_lists: Any
    ) -> dict[str, list[EvaluationResult]]:
        """Sync form of :meth:`aevaluate_queries`."""
        return run_sync(self.aevaluate_queries(query_engine, queries, **eval_kwargs_lists))


def _same_judge(a: Any, b: Any) -> bool:
    """One judge, or two local judges built alike (each evaluator made with no judge named builds
    its own; they share the packaged models, so one run serves both)."""
    if a is b:
        return True
    from ragmeter.local.judge import LocalJudge

    return isinstance(a, LocalJudge) and isinstance(b, LocalJudge) and a.describe() == b.describe()
