"""LlamaIndex's labelled RAG dataset and its generator, on ragmeter's test-set generation.

::

    from ragmeter.evaluators import RagDatasetGenerator

    generator = RagDatasetGenerator.from_documents(documents, llm=llm, num_questions_per_chunk=2)
    rag_dataset = generator.generate_dataset_from_nodes()      # a LabelledRagDataset
    questions = [e.query for e in rag_dataset.examples]
    rag_dataset.save_json("rag_dataset.json")                  # ragmeter evaluate reads this file

llama-index-core 0.14 no longer ships ``llama_index.core.llama_dataset``; these are its classes,
with its fields: ``LabelledRagDataset`` (``examples``, ``save_json``, ``from_json``,
``to_pandas``), ``LabelledRagDataExample`` (``query``, ``query_by``, ``reference_contexts``,
``reference_answer``, ``reference_answer_by``), ``RagExamplePrediction`` (``response``,
``contexts``) and ``CreatedBy``. Where llama-index-core still has them (0.12 and older), they are
LlamaIndex's own.

The generator is :func:`ragmeter.agenerate_testset`: ``num_questions_per_chunk`` questions for every
chunk (a LlamaIndex node as it is; a document chunked as ``ragmeter generate`` chunks it), each
reference answer checked against its chunk, near duplicates dropped. ``llm`` is a judge spec, a
Judge or a LlamaIndex LLM object; with none, the offline generator makes fill-in-the-blank
questions from each chunk's sentences (their answers are the blanked span), and says so once.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator, Sequence
from enum import Enum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ragmeter.errors import ConfigError
from ragmeter.run.sync import run_sync

__all__ = [
    "CreatedBy",
    "CreatedByType",
    "LabelledRagDataExample",
    "LabelledRagDataset",
    "RagDatasetGenerator",
    "RagExamplePrediction",
]

try:
    # llama-index-core 0.12's llama_dataset declares a Field option pydantic 2.12 warns about on
    # import; that is LlamaIndex's to fix, not the user's to see
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "The 'validate_default' attribute", UserWarning)
        from llama_index.core.llama_dataset import (
            CreatedBy,
            CreatedByType,
            LabelledRagDataExample,
            LabelledRagDataset,
            RagExamplePrediction,
        )

    LLAMA_DATASET = True
except ImportError:
    LLAMA_DATASET = False

    class CreatedByType(str, Enum):  # type: ignore[no-redef]
        """Who made a query or an answer."""

        HUMAN = "human"
        AI = "ai"

    class CreatedBy(BaseModel):  # type: ignore[no-redef]
        model_name: str | None = None
        type: CreatedByType

    class RagExamplePrediction(BaseModel):  # type: ignore[no-redef]
        """A RAG system's answer to one example: ``response`` and the ``contexts`` it retrieved."""

        response: str
        contexts: list[str] | None = None

    class LabelledRagDataExample(BaseModel):  # type: ignore[no-redef]
        """One question with its reference contexts and answer."""

        query: str
        query_by: CreatedBy | None = None
        reference_contexts: list[str] | None = None
        reference_answer: str
        reference_answer_by: CreatedBy | None = None

        @property
        def class_name(self) -> str:
            return "LabelledRagDataExample"

    class LabelledRagDataset(BaseModel):  # type: ignore[no-redef]
        """LlamaIndex's labelled RAG dataset: ``examples``; ``save_json`` / ``from_json`` /
        ``to_pandas``. ``ragmeter.load_dataset`` and ``ragmeter evaluate`` read it and its files."""

        examples: list[LabelledRagDataExample] = Field(default_factory=list)

        def __len__(self) -> int:
            return len(self.examples)

        def __getitem__(self, i: int) -> LabelledRagDataExample:
            return self.examples[i]

        def iter_examples(self) -> Iterator[LabelledRagDataExample]:
            return iter(self.examples)

        def save_json(self, path: str | Path) -> None:
            rows = [
                {**e.model_dump(mode="json"), "class_name": "LabelledRagDataExample"} for e in self.examples
            ]
            Path(path).write_text(
                json.dumps({"examples": rows}, ensure_ascii=False, indent=4), encoding="utf-8"
            )

        @classmethod
        def from_json(cls, path: str | Path) -> LabelledRagDataset:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
            examples = data.get("examples") if isinstance(data, dict) else None
            if not isinstance(examples, list):
                raise ConfigError(f"{path}: not a LabelledRagDataset file (no 'examples' list)")
            return cls(examples=[LabelledRagDataExample.model_validate(e) for e in examples])

        def to_pandas(self) -> Any:
            try:
                import pandas as pd
            except ImportError as exc:
                raise ConfigError("LabelledRagDataset.to_pandas() needs pandas: pip install pandas") from exc
            return pd.DataFrame(
                {
                    "query": [e.query for e in self.examples],
                    "reference_contexts": [e.reference_contexts for e in self.examples],
                    "reference_answer": [e.reference_answer for e in self.examples],
                    "reference_answer_by": [str(e.reference_answer_by) for e in self.examples],
                    "query_by": [str(e.query_by) for e in self.examples],
                }
            )


def _documents(items: Any) -> tuple[list[Any], bool]:
    """ragmeter Documents from LlamaIndex documents or nodes (``text`` with an id), ragmeter
    Documents, texts, or a folder / file path; and whether they were nodes (kept whole)."""
    from ragmeter.testset.documents import Document
    from ragmeter.testset.generate import as_documents
    from ragmeter.text import detect_lang

    if isinstance(items, (str, Path)):
        return as_documents(items), False
    items = list(items)
    if items and all(hasattr(i, "text") and (hasattr(i, "node_id") or hasattr(i, "doc_id")) for i in items):
        nodes = type(items[0]).__name__ not in ("Document",)
        docs = []
        for k, item in enumerate(items):
            doc_id = str(getattr(item, "node_id", None) or getattr(item, "doc_id", None) or f"doc{k + 1}")
            meta = dict(getattr(item, "metadata", None) or {})
            title = str(meta.get("title") or meta.get("file_name") or doc_id)
            docs.append(
                Document(doc_id, str(item.text), title, lang=detect_lang(str(item.text)), metadata=meta)
            )
        return docs, nodes
    return as_documents(items), False


class RagDatasetGenerator:
    """LlamaIndex's ``RagDatasetGenerator`` on ragmeter's test-set generation.

    ``nodes``: LlamaIndex nodes (each one chunk, kept whole), LlamaIndex or ragmeter documents
    (chunked), texts, or a folder / file path. ``llm``: a judge spec, a Judge or a LlamaIndex LLM
    (None: the offline generator). ``num_questions_per_chunk``: questions asked of each chunk.
    ``workers``: chunks in flight. ``lang``: the questions' language (None: each chunk's).
    ``question_gen_query`` (LlamaIndex's instruction for the questions, ``{num_questions_per_chunk}``
    filled in) goes into the generation prompt after ragmeter's own instructions (an LLM only).
    LlamaIndex's ``text_question_template`` and ``text_qa_template`` are refused: ragmeter's
    generation prompts are data files (override them with a prompts directory, docs/testsets.md),
    and a LlamaIndex template cannot be read into them faithfully.
    """

    def __init__(
        self,
        nodes: Any,
        llm: Any = None,
        num_questions_per_chunk: int = 3,
        text_question_template: Any = None,
        text_qa_template: Any = None,
        question_gen_query: Any = None,
        show_progress: bool = False,
        workers: int = 4,
        *,
        lang: str | None = None,
        seed: int = 0,
    ) -> None:
        given = [
            name
            for name, value in (
                ("text_question_template", text_question_template),
                ("text_qa_template", text_qa_template),
            )
            if value is not None
        ]
        if given:
            raise ConfigError(
                f"RagDatasetGenerator: {', '.join(given)} not supported: ragmeter's generation prompts are "
                "data files; copy and edit them in a prompts directory and pass llm=make_judge(..., "
                "prompts_dir=DIR) (docs/testsets.md); question_gen_query, plain instructions, is taken"
            )
        if question_gen_query is not None and llm is None:
            raise ConfigError(
                "RagDatasetGenerator: question_gen_query needs an llm (the offline generator makes cloze questions)"
            )
        if not isinstance(num_questions_per_chunk, int) or num_questions_per_chunk < 1:
            raise ConfigError(
                f"num_questions_per_chunk must be a positive integer, got {num_questions_per_chunk!r}"
            )
        self.documents, self._whole = _documents(nodes)
        if not self.documents:
            raise ConfigError("RagDatasetGenerator: no documents or nodes given")
        self.num_questions_per_chunk = num_questions_per_chunk
        self.show_progress = show_progress
        self.workers = workers
        self.lang = lang
        self.seed = seed
        #: LlamaIndex's question_gen_query (its {num_questions_per_chunk} filled in): instructions the
        #: generation prompt carries after its own
        self.instructions = (
            str(question_gen_query).replace("{num_questions_per_chunk}", str(num_questions_per_chunk))
            if question_gen_query is not None
            else None
        )
        self.judge = None
        if llm is not None:
            from ragmeter.run.runner import resolve_judge

            self.judge = resolve_judge(llm)
        #: the generation's counts of the last call (:class:`ragmeter.testset.generate.GenerationStats`)
        self.stats: Any = None

    @classmethod
    def from_documents(
        cls,
        documents: Any,
        llm: Any = None,
        transformations: Sequence[Any] | None = None,
        num_questions_per_chunk: int = 3,
        text_question_template: Any = None,
        text_qa_template: Any = None,
        question_gen_query: Any = None,
        required_keywords: Sequence[str] | None = None,
        exclude_keywords: Sequence[str] | None = None,
        show_progress: bool = False,
        workers: int = 4,
        **kwargs: Any,
    ) -> RagDatasetGenerator:
        """From documents: LlamaIndex's ``transformations`` (a node parser...) make the nodes when
        given, else ragmeter chunks the documents; ``required_keywords`` / ``exclude_keywords``
        keep the chunks with any of the first and none of the second, as LlamaIndex does."""
        items: Any = documents
        if transformations:
            from llama_index.core.ingestion import run_transformations

            items = run_transformations(list(documents), transformations, show_progress=show_progress)
        gen = cls(
            items,
            llm=llm,
            num_questions_per_chunk=num_questions_per_chunk,
            text_question_template=text_question_template,
            text_qa_template=text_qa_template,
            question_gen_query=question_gen_query,
            show_progress=show_progress,
            workers=workers,
            **kwargs,
        )
        gen.documents = [
            d
            for d in gen.documents
            if (not required_keywords or any(k in d.text for k in required_keywords))
            and not any(k in d.text for k in exclude_keywords or ())
        ]
        if not gen.documents:
            raise ConfigError(
                "RagDatasetGenerator: no document left after required_keywords / exclude_keywords"
            )
        return gen

    async def _generate(self, with_answers: bool) -> LabelledRagDataset:
        from ragmeter.testset.chunking import DEFAULT_CHUNK_SIZE, DEFAULT_OVERLAP
        from ragmeter.testset.generate import agenerate_testset, chunks_for

        if self._whole:  # a node is one chunk, as LlamaIndex asks each node
            size, overlap = max(len(d.text) for d in self.documents) + 1, 0
        else:
            size, overlap = DEFAULT_CHUNK_SIZE, DEFAULT_OVERLAP
        n_chunks = len(chunks_for(self.documents, chunk_size=size, overlap=overlap))
        offline = self.judge is None
        if offline:
            warnings.warn(
                "RagDatasetGenerator: no llm given, so questions are made offline: fill-in-the-blank "
                "questions from each chunk's sentences, answered by the blanked span; name an llm for "
                "questions written by a model",
                UserWarning,
                stacklevel=3,
            )
        result = await agenerate_testset(
            self.documents,
            n=self.num_questions_per_chunk * max(1, n_chunks),
            judge=self.judge,
            offline=offline,
            num_questions_per_chunk=self.num_questions_per_chunk,
            lang=self.lang,
            chunk_size=size,
            overlap=overlap,
            concurrency=self.workers,
            seed=self.seed,
            progress=self.show_progress,
            instructions=self.instructions,
        )
        self.stats = result.stats
        by = CreatedBy(type=CreatedByType.AI, model_name=result.generator)
        examples = [
            LabelledRagDataExample(
                query=s.question,
                query_by=by,
                reference_contexts=list(s.reference_contexts or ()),
                reference_answer=(s.reference or "") if with_answers else "",
                reference_answer_by=by if with_answers else None,
            )
            for s in result.dataset
        ]
        return LabelledRagDataset(examples=examples)

    async def agenerate_questions_from_nodes(self) -> LabelledRagDataset:
        """The questions only (``reference_answer`` empty), as LlamaIndex's method returns them."""
        return await self._generate(with_answers=False)

    async def agenerate_dataset_from_nodes(self) -> LabelledRagDataset:
        """Questions with their reference answers and contexts."""
        return await self._generate(with_answers=True)

    def generate_questions_from_nodes(self) -> LabelledRagDataset:
        """Sync form of :meth:`agenerate_questions_from_nodes`."""
        return run_sync(self.agenerate_questions_from_nodes())

    def generate_dataset_from_nodes(self) -> LabelledRagDataset:
        """Sync form of :meth:`agenerate_dataset_from_nodes`."""
        return run_sync(self.agenerate_dataset_from_nodes())
