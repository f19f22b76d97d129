"""generate_testset: documents -> chunks -> questions with reference answers -> filtered JSONL.

One async core (:func:`agenerate_testset`) and a sync entry point (:func:`generate_testset`).
With an LLM judge, questions are written per task (see :mod:`ragmeter.testset.plan`) and filtered
(:mod:`ragmeter.testset.synth`; near duplicates here, by embeddings when the judge embeds, else by
token overlap). With ``offline=True``, cloze questions are built without any model
(:mod:`ragmeter.testset.offline`). Rows are written as they are made; ``resume=True`` continues a
file, skipping tasks already done.

Each row: ``id``, ``question``, ``reference`` (the reference answer), ``reference_contexts`` (the
chunk texts), ``reference_context_ids`` (the chunk ids) and ``metadata`` with ``kind``,
``document`` (doc ids), ``title``, ``chunk_id``, ``lang``, ``generator`` (``"llm:<judge>"`` or
``"offline-cloze"``), ``task`` and, for user-style questions, ``style``.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ragmeter.dataset.sample import Dataset, Sample
from ragmeter.errors import ConfigError
from ragmeter.judges.types import Usage
from ragmeter.retrieval.relevance import text_overlap
from ragmeter.run.progress import Progress
from ragmeter.run.sync import run_sync
from ragmeter.testset.chunking import DEFAULT_CHUNK_SIZE, DEFAULT_OVERLAP, Chunk, chunk_documents
from ragmeter.testset.documents import Document, load_documents
from ragmeter.testset.offline import GENERATOR_NAME, cloze_questions
from ragmeter.testset.plan import Task, pair_chunks, parse_kinds, plan_tasks
from ragmeter.testset.synth import Candidate, SynthOptions, chat_client, run_task
from ragmeter.testset.writer import TestsetWriter

__all__ = ["DEDUP_THRESHOLD", "GenerationStats", "TestsetResult", "agenerate_testset", "generate_testset"]

#: questions at least this similar (cosine of embeddings; token overlap without them) to a kept one
#: are near duplicates and are dropped
DEDUP_THRESHOLD = 0.95
LEXICAL_DEDUP_THRESHOLD = 0.9


@dataclass
class GenerationStats:
    n_documents: int = 0
    n_chunks: int = 0
    n_tasks_run: int = 0
    n_tasks_skipped: int = 0  # done by an earlier run (resume)
    n_rows: int = 0
    n_rows_resumed: int = 0
    dropped: dict[str, int] = field(default_factory=dict)
    failed_tasks: list[str] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)

    def drop(self, reason: str, n: int = 1) -> None:
        if n:
            self.dropped[reason] = self.dropped.get(reason, 0) + n

    def to_dict(self) -> dict[str, Any]:
        return {
            "n_documents": self.n_documents,
            "n_chunks": self.n_chunks,
            "n_tasks_run": self.n_tasks_run,
            "n_tasks_skipped": self.n_tasks_skipped,
            "n_rows": self.n_rows,
            "n_rows_resumed": self.n_rows_resumed,
            "dropped": dict(self.dropped),
            "failed_tasks": list(self.failed_tasks),
            "usage": self.usage.to_dict(),
        }


@dataclass
class TestsetResult:
    """What :func:`generate_testset` made: the samples, where they were written, and counts."""

    __test__ = False

    dataset: Dataset
    path: Path | None
    stats: GenerationStats
    generator: str


def as_documents(docs: Any) -> list[Document]:
    if isinstance(docs, (str, Path)):
        return load_documents(docs)
    items = list(docs)
    if items and all(isinstance(d, Document) for d in items):
        return items
    if items and all(isinstance(d, str) for d in items) and not any(Path(d).exists() for d in items):
        from ragmeter.text import detect_lang

        return [Document(f"doc{i + 1}", t, f"doc{i + 1}", lang=detect_lang(t)) for i, t in enumerate(items)]
    return load_documents(items)


def _row(
    task: Task, j: int, question: str, answer: str, lang: str, generator: str, extra: dict[str, Any]
) -> dict[str, Any]:
    chunks = task.chunks
    docs = list(dict.fromkeys(c.doc_id for c in chunks))
    meta: dict[str, Any] = {
        "kind": task.kind,
        "document": docs[0] if len(docs) == 1 else docs,
        "title": chunks[0].title if len(chunks) == 1 else [c.title for c in chunks],
        "chunk_id": chunks[0].id if len(chunks) == 1 else [c.id for c in chunks],
        "lang": lang,
        "generator": generator,
        "task": task.id,
    }
    if task.style:
        meta["style"] = task.style
    meta.update(extra)
    return {
        "id": f"{task.id}/{j}",
        "question": question,
        "reference": answer,
        "reference_contexts": [c.text for c in chunks],
        "reference_context_ids": [c.id for c in chunks],
        "metadata": meta,
    }


class _Deduper:
    """Near-duplicate questions: embeddings when the judge embeds, else token overlap."""

    def __init__(self, judge: Any, threshold: float) -> None:
        self.judge = judge
        self.use_embed = judge is not None and _supports(judge, "embed")
        self.threshold = threshold
        self.texts: list[str] = []
        self.vectors: np.ndarray | None = None

    async def seed(self, questions: Sequence[str]) -> None:
        if questions:
            await self.filter(list(questions))

    async def filter(self, questions: list[str]) -> list[bool]:
        """Keep-flags for ``questions`` (each compared with the kept ones and the earlier new ones)."""
        keep: list[bool] = []
        vecs = None
        if self.use_embed and questions:
            arr = np.asarray(await self.judge.embed(questions), dtype=np.float64)
            norms = np.linalg.norm(arr, axis=1, keepdims=True)
            vecs = np.divide(arr, norms, out=np.zeros_like(arr), where=norms > 0)
        for i, q in enumerate(questions):
            if vecs is not None:
                v = vecs[i]
                dup = (
                    self.vectors is not None
                    and len(self.vectors) > 0
                    and float(np.max(self.vectors @ v)) >= self.threshold
                )
                if not dup:
                    self.vectors = v[None, :] if self.vectors is None else np.vstack([self.vectors, v])
            else:
                dup = any(text_overlap(q, t) >= LEXICAL_DEDUP_THRESHOLD for t in self.texts)
            if not dup:
                self.texts.append(q)
            keep.append(not dup)
        return keep


def _supports(judge: Any, step: str) -> bool:
    try:
        return bool(judge.supports(step))
    except Exception:
        return False


async def agenerate_testset(
    docs: Any,
    *,
    n: int = 50,
    judge: Any = None,
    offline: bool = False,
    out: str | Path | None = None,
    resume: bool = False,
    overwrite: bool = False,
    kinds: str | Sequence[str] | None = None,
    num_questions_per_chunk: int = 1,
    lang: str | None = None,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    overlap: int = DEFAULT_OVERLAP,
    verify: bool = True,
    drop_answerable_without_context: bool = False,
    dedup_threshold: float = DEDUP_THRESHOLD,
    concurrency: int = 4,
    seed: int = 0,
    progress: bool | None = False,
    instructions: str | None = None,
) -> TestsetResult:
    """Async :func:`generate_testset`."""
    if not isinstance(n, int) or n < 1:
        raise ConfigError(f"n must be a positive integer, got {n!r}")
    if not isinstance(num_questions_per_chunk, int) or num_questions_per_chunk < 1:
        raise ConfigError(
            f"num_questions_per_chunk must be a positive integer, got {num_questions_per_chunk!r}"
        )
    if concurrency < 1:
        raise ConfigError(f"concurrency must be a positive integer, got {concurrency!r}")
    if lang is not None and lang in ("auto", ""):
        lang = None
    if offline:
        if instructions:
            raise ConfigError(
                "instructions for the questions need an LLM judge: the offline mode makes cloze questions"
            )
        if kinds is not None and parse_kinds(kinds) != ("single_hop",):
            raise ConfigError(
                "the offline mode makes cloze questions only; drop --kinds or name an LLM judge"
            )
        generator = GENERATOR_NAME
    else:
        if judge is None:
            chat_client(object())  # raises the ConfigError that offers the offline mode
        chat_client(judge)
        generator = f"llm:{judge.name}"
    kind_list = parse_kinds(kinds) if not offline else ("cloze",)

    documents = as_documents(docs)
    chunks = chunk_documents(documents, chunk_size=chunk_size, overlap=overlap)
    stats = GenerationStats(n_documents=len(documents), n_chunks=len(chunks))
    writer = TestsetWriter(out, resume=resume, overwrite=overwrite)
    try:
        stats.n_rows_resumed = len(writer.rows)
        if offline:
            # no cost per question: ask each chunk for enough questions to reach n
            num_questions_per_chunk = max(num_questions_per_chunk, -(-n // max(1, len(chunks))))
            tasks = [Task(f"cloze:{c.id}", "cloze", (c,)) for c in chunks]
            random.Random(seed).shuffle(tasks)
        else:
            pairs: dict[int, int] = {}
            if "multi_hop" in kind_list:
                emb = None
                if _supports(judge, "embed"):
                    emb = np.asarray(await judge.embed([c.text for c in chunks]), dtype=np.float64)
                    emb = emb / np.maximum(np.linalg.norm(emb, axis=1, keepdims=True), 1e-12)
                pairs = pair_chunks(chunks, emb)
            tasks = plan_tasks(chunks, kind_list, pairs=pairs, seed=seed)
        todo = [t for t in tasks if t.id not in writer.done_tasks]
        stats.n_tasks_skipped = len(tasks) - len(todo)
        deduper = _Deduper(None if offline else judge, dedup_threshold)
        await deduper.seed([str(r.get("question", "")) for r in writer.rows])
        opts = SynthOptions(
            num_questions=num_questions_per_chunk,
            lang=lang,
            verify=verify,
            drop_answerable_without_context=drop_answerable_without_context,
            prompts_dir=getattr(judge, "prompts_dir", None),
            instructions=instructions,
        )
        await _run_tasks(todo, n, judge, opts, writer, deduper, stats, generator, concurrency, seed, progress)
        stats.n_rows = len(writer.rows)
        client = getattr(judge, "client", None)
        if client is not None:
            stats.usage = client.usage
    finally:
        writer.close()
    samples = tuple(_sample(r) for r in writer.rows)
    source = str(out) if out is not None else "<generated>"
    return TestsetResult(Dataset(samples, source=source), Path(out) if out else None, stats, generator)


def _sample(row: dict[str, Any]) -> Sample:
    return Sample.from_dict(row)


async def _run_tasks(
    todo: list[Task],
    n: int,
    judge: Any,
    opts: SynthOptions,
    writer: TestsetWriter,
    deduper: _Deduper,
    stats: GenerationStats,
    generator: str,
    concurrency: int,
    seed: int,
    progress: bool | None,
) -> None:
    bar = Progress(max(0, n - len(writer.rows)), enabled=progress, description="generating")
    lock = asyncio.Lock()
    queue: asyncio.Queue[Task] = asyncio.Queue()
    for t in todo:
        queue.put_nowait(t)

    async def candidates_of(
        task: Task,
    ) -> tuple[list[Candidate], dict[str, int], str | None, list[dict[str, Any]]]:
        if task.kind == "cloze":
            found = cloze_questions(
                task.chunks[0], opts.num_questions, rng=random.Random(f"{seed}:{task.id}")
            )
            extras = [{"span_kind": c.span_kind, "sentence": c.sentence} for c in found]
            lang = opts.lang or task.chunks[0].lang
            return [Candidate(c.question, c.answer, lang) for c in found], {}, None, extras
        outcome = await run_task(judge, task, opts)
        return outcome.candidates, outcome.dropped, outcome.error, [{} for _ in outcome.candidates]

    async def worker() -> None:
        while len(writer.rows) < n:
            try:
                task = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            cands, dropped, error, extras = await candidates_of(task)
            kept = 0
            async with lock:
                room = n - len(writer.rows)
                if room > 0 and cands:
                    flags = await deduper.filter([c.question for c in cands])
                    for j, (c, keep, extra) in enumerate(zip(cands, flags, extras, strict=True)):
                        if not keep:
                            dropped["near_duplicate"] = dropped.get("near_duplicate", 0) + 1
                            continue
                        if kept >= room:
                            break
                        writer.write_row(_row(task, j, c.question, c.answer, c.lang, generator, extra))
                        kept += 1
                        bar.advance(invalid=False, usage=Usage())
                writer.finish_task(task.id, kept, dropped, error)
                stats.n_tasks_run += 1
                for reason, k in dropped.items():
                    stats.drop(reason, k)
                if error:
                    stats.failed_tasks.append(f"{task.id}: {error}")

    workers = [asyncio.ensure_future(worker()) for _ in range(max(1, min(concurrency, len(todo))))]
    try:
        await asyncio.gather(*workers)
    except BaseException:
        for w in workers:
            w.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        raise
    finally:
        bar.close()


def generate_testset(docs: Any, **kwargs: Any) -> TestsetResult:
    """Generate a labelled test set from documents.

    ``docs``: a folder or file path, a list of paths, :class:`Document` objects or texts.
    ``n``: rows wanted. ``judge``: an LLM judge (a Judge or a spec such as ``"openai:gpt-4o-mini"``);
    ``offline=True`` instead makes cloze questions without any model. ``out``: the JSONL file
    written as rows are made (``resume=True`` continues it; ``overwrite=True`` replaces it).
    ``kinds``: ``single_hop`` (default), ``multi_hop``, ``reasoning``, ``user_style`` (list or
    comma-separated). ``num_questions_per_chunk``, ``lang`` (None: each chunk's language),
    ``chunk_size`` / ``overlap`` (characters), ``verify`` (drop answers the chunk does not support),
    ``drop_answerable_without_context``, ``dedup_threshold``, ``concurrency``, ``seed``, ``progress``;
    ``instructions``: your own instructions for the questions (single-hop and styled ones), after the
    kind's (an LLM judge only).
    Returns a :class:`TestsetResult` (``.dataset``, ``.path``, ``.stats``).
    """
    judge = kwargs.get("judge")
    owns = isinstance(judge, str)
    if owns:
        from ragmeter.judges.factory import make_judge

        kwargs["judge"] = make_judge(judge)

    async def main() -> TestsetResult:
        try:
            return await agenerate_testset(docs, **kwargs)
        finally:
            if owns:
                await kwargs["judge"].aclose()

    return run_sync(main())


def chunks_for(
    docs: Any, *, chunk_size: int = DEFAULT_CHUNK_SIZE, overlap: int = DEFAULT_OVERLAP
) -> list[Chunk]:
    """The chunks generation would use (for estimates and inspection)."""
    return chunk_documents(as_documents(docs), chunk_size=chunk_size, overlap=overlap)


def iter_rows(result: TestsetResult) -> Iterable[dict[str, Any]]:
    for s in result.dataset:
        yield s.to_dict()
