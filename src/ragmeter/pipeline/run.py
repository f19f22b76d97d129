"""Run the user's RAG pipeline (or retriever) over questions and collect a Dataset to score.

``run_pipeline(fn, questions, workers=8)``: ``fn(question)`` returns the answer and the contexts
(see :mod:`ragmeter.pipeline.outputs` for the shapes); it may be sync (run in a bounded thread
pool of ``workers`` threads) or async (at most ``workers`` calls in flight). Labels in the input
(``reference``, ``reference_contexts``, ``reference_context_ids``, metadata) are kept; the
pipeline's answer, contexts and context ids are filled in, the call's wall time is recorded in
``metadata["latency_s"]`` and the retriever's scores of the contexts (when it gives them, e.g. a
LlamaIndex ``NodeWithScore.score``) in ``metadata["context_scores"]``. A question whose call
raises (or returns something unreadable) is not in the returned samples: it is listed in
``Dataset.problems`` with its row and the exception, and the batch goes on. An agent's output (a
LlamaIndex ``AgentOutput``) gives a conversation sample -- the question, the tool calls and their
results, the response, which the agent metrics score -- and its turn sample (docs/agents.md).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import inspect
import time
from collections.abc import Callable, Sequence
from typing import Any

from ragmeter.dataset.sample import Dataset, Sample
from ragmeter.dataset.validate import LoadedDataset, rows_of
from ragmeter.errors import ConfigError, DatasetError
from ragmeter.judges.types import Usage
from ragmeter.pipeline.adapters import as_pipeline
from ragmeter.pipeline.outputs import normalize_output
from ragmeter.run.progress import Progress
from ragmeter.run.sync import gather_or_cancel, run_sync

__all__ = ["arun_pipeline", "as_questions", "run_pipeline", "run_retriever"]

LATENCY_KEY = "latency_s"
SCORES_KEY = "context_scores"
ERROR_KEY = "pipeline_error"


def as_questions(questions: Any, *, mapping: Any = None, limit: int | None = None) -> Dataset:
    """Questions as a Dataset: a list of strings, Samples or dicts, a Dataset, a file path or a DataFrame."""
    if (
        isinstance(questions, str)
        and "\n" not in questions
        and not questions.endswith((".jsonl", ".json", ".csv", ".parquet"))
    ):
        raise ConfigError("questions must be a list of questions, a Dataset or a data file, not one string")
    if isinstance(questions, Sequence) and not isinstance(questions, (str, Dataset)):
        items = list(questions)
        if all(isinstance(q, str) for q in items):
            samples = tuple(Sample(question=q, id=str(i + 1)) for i, q in enumerate(items))
            ds: Dataset = Dataset(samples, source="<questions>")
            return Dataset(ds.samples[:limit], source=ds.source) if limit else ds
    from ragmeter.dataset.sources import load_dataset

    return load_dataset(questions, mapping=mapping, limit=limit)


async def arun_pipeline(
    fn: Any,
    questions: Any,
    *,
    workers: int = 8,
    retriever: bool = False,
    progress: bool | None = False,
) -> Dataset:
    """Async :func:`run_pipeline`."""
    if not isinstance(workers, int) or workers < 1:
        raise ConfigError(f"workers must be a positive integer, got {workers!r}")
    call = as_pipeline(fn, retriever=retriever)
    data = as_questions(questions)
    rows = rows_of(data)
    is_async = inspect.iscoroutinefunction(call) or inspect.iscoroutinefunction(
        getattr(call, "__call__", None)  # noqa: B004 - an async __call__ method
    )
    sem = asyncio.Semaphore(workers)
    pool = None if is_async else concurrent.futures.ThreadPoolExecutor(workers, thread_name_prefix="pipeline")
    loop = asyncio.get_running_loop()
    bar = Progress(len(data), enabled=progress, description="retrieving" if retriever else "pipeline")
    results: list[Sample | list[Sample] | DatasetError | None] = [None] * len(data)

    async def one(i: int, sample: Sample) -> None:
        async with sem:
            start = time.perf_counter()
            try:
                if pool is not None:
                    out = await loop.run_in_executor(pool, functools.partial(call, sample.question))
                else:
                    out = call(sample.question)
                if inspect.isawaitable(out):
                    out = await out
                latency = time.perf_counter() - start
                parsed = normalize_output(out, retriever=retriever)
            except (asyncio.CancelledError, KeyboardInterrupt):
                raise
            except Exception as e:
                results[i] = DatasetError(
                    f"the pipeline failed on this question: {type(e).__name__}: {e}",
                    file=data.source,
                    row=rows[i],
                    field="question",
                )
                bar.advance(invalid=True, usage=Usage())
                return
            meta = {**dict(sample.metadata), LATENCY_KEY: round(latency, 6)}
            if parsed.context_scores is not None:
                meta[SCORES_KEY] = list(parsed.context_scores)
            changes: dict[str, Any] = {
                "contexts": parsed.contexts,
                "context_ids": parsed.context_ids,
                "metadata": meta,
            }
            if not retriever:
                changes["answer"] = parsed.answer
            if parsed.agent is not None and not retriever:  # an agent: its run as a conversation
                results[i] = agent_samples(sample, parsed.agent, meta)
            else:
                results[i] = sample.replace(**changes)
            bar.advance(invalid=False, usage=Usage())

    tasks = [asyncio.ensure_future(one(i, s)) for i, s in enumerate(data)]
    try:
        await gather_or_cancel(tasks)
    finally:
        bar.close()
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
    samples: list[Sample] = []
    kept_rows: list[int] = []
    for i, r in enumerate(results):
        for one_sample in [r] if isinstance(r, Sample) else r if isinstance(r, list) else []:
            samples.append(one_sample)
            kept_rows.append(rows[i])
    problems = [*data.problems, *(r for r in results if isinstance(r, DatasetError))]
    return LoadedDataset(
        tuple(samples),
        source=data.source,
        problems=tuple(problems),
        rows=tuple(kept_rows),
        generated_ids=getattr(data, "generated_ids", frozenset()),
    )


def agent_samples(sample: Sample, output: Any, metadata: dict[str, Any]) -> list[Sample]:
    """An agent's run (a LlamaIndex ``AgentOutput``) as the samples of a conversation: the
    conversation sample (with the question's reference as the expected outcome, and its expected
    tool calls, tools and topics when the question has them) and its turn sample (the answer, with
    the tool results as contexts)."""
    from ragmeter.dataset.conversations import conversation_samples
    from ragmeter.dataset.trajectory import (
        REFERENCE_TOOL_CALL_KEYS,
        TOOLS_KEYS,
        TOPICS_KEYS,
        agent_fields,
        agent_messages,
    )

    cid = str(sample.id)
    # a questions file's row keeps them among its other columns
    agent = agent_fields(metadata)
    metadata = {
        k: v for k, v in metadata.items() if k not in (*REFERENCE_TOOL_CALL_KEYS, *TOOLS_KEYS, *TOPICS_KEYS)
    }
    agent.update(
        {
            k: getattr(sample, k)
            for k in ("reference_tool_calls", "tools", "reference_topics")
            if getattr(sample, k) is not None
        }
    )
    out = conversation_samples(
        cid,
        agent_messages(sample.question, output),
        reference=sample.reference,
        metadata=metadata,
        agent=agent,
    )
    return [out[0], *(t.replace(metadata={**metadata, **dict(t.metadata)}) for t in out[1:])]


def run_pipeline(
    fn: Callable[[str], Any] | Any,
    questions: Any,
    *,
    workers: int = 8,
    progress: bool | None = False,
) -> Dataset:
    """Run ``fn`` on every question; return a Dataset of answers and contexts ready to score.

    ``fn``: a function ``question -> output`` (sync or async), a LlamaIndex query engine, or a
    LangChain chain (see :func:`ragmeter.pipeline.as_pipeline`). ``questions``: strings, Samples,
    dicts, a Dataset or a data file (labels in it are kept). Works inside a running event loop.
    """
    return run_sync(arun_pipeline(fn, questions, workers=workers, progress=progress))


def run_retriever(
    fn: Callable[[str], Any] | Any,
    questions: Any,
    *,
    workers: int = 8,
    progress: bool | None = False,
) -> Dataset:
    """Like :func:`run_pipeline` for a retriever: ``fn(question)`` returns the ranked contexts
    (strings, Documents, nodes, dicts with ids); ``answer`` is left as it was."""
    return run_sync(arun_pipeline(fn, questions, workers=workers, retriever=True, progress=progress))


def pipeline_data(
    data: Any,
    *,
    pipeline: str | None,
    retriever: str | None,
    metric_names: list[str] | None,
    mapping: Any = None,
    limit: int | None = None,
    workers: int = 8,
    progress: bool | None = None,
) -> tuple[Dataset, list[str] | None, dict[str, Any]]:
    """For ``evaluate --pipeline / --retriever``: run it over ``data``'s questions.

    Returns the dataset to score, the metric names (for ``--retriever`` without ``--metrics``:
    the retrieval metrics the labels allow) and what to record in the run's metadata.
    """
    from ragmeter.pipeline.loader import load_callable

    if pipeline and retriever:
        raise ConfigError("give --pipeline or --retriever, not both")
    spec = pipeline or retriever
    assert spec is not None
    fn = load_callable(spec)
    questions = as_questions(data, mapping=mapping, limit=limit)
    ds = run_sync(arun_pipeline(fn, questions, workers=workers, retriever=bool(retriever), progress=progress))
    if retriever and metric_names is None:
        from ragmeter.retrieval.api import DEFAULT_RETRIEVAL_METRICS

        labelled = any(s.reference_context_ids or s.reference_contexts for s in ds)
        if not labelled:
            raise ConfigError(
                "--retriever scores against labels: the data need reference_context_ids or reference_contexts"
            )
        metric_names = list(DEFAULT_RETRIEVAL_METRICS)
    latencies = [float(s.metadata.get(LATENCY_KEY, 0.0)) for s in ds]
    meta: dict[str, Any] = {
        "pipeline": {
            "kind": "retriever" if retriever else "pipeline",
            "spec": spec,
            "n_questions": len(questions),
            "n_failed": len(ds.problems) - len(questions.problems),
            "latency_s_mean": round(sum(latencies) / len(latencies), 6) if latencies else None,
            "latency_s_max": round(max(latencies), 6) if latencies else None,
        }
    }
    return ds, metric_names, meta
