"""What a generation will cost, before any call (``ragmeter generate --dry-run``).

Counts the documents, chunks and tasks, and estimates the calls and tokens: one generation call
per task, one ``verify_claims`` call per task (with ``verify``), two calls per question with the
closed-book filter, and the tasks needed for ``n`` rows with a 25% margin for filtered rows.
Prompt tokens are the rendered prompts' length / 4; completion tokens ~60 per question written and
~80 per verification. The cost uses the judge's prices when it has them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ragmeter.judges.tokens import estimate_tokens
from ragmeter.testset.chunking import DEFAULT_CHUNK_SIZE, DEFAULT_OVERLAP
from ragmeter.testset.plan import pair_chunks, parse_kinds, plan_tasks
from ragmeter.testset.prompts import load_testset_prompt

__all__ = ["GenerationEstimate", "estimate_generation"]

MARGIN = 1.25
COMPLETION_PER_QUESTION = 60
COMPLETION_PER_VERIFY = 80


@dataclass(frozen=True)
class GenerationEstimate:
    n_documents: int
    n_chunks: int
    n_tasks_available: int
    n_tasks_planned: int
    max_rows: int
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost: float | None
    offline: bool

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def render(self) -> str:
        lines = [
            f"documents: {self.n_documents}   chunks: {self.n_chunks}",
            f"tasks: {self.n_tasks_planned} planned of {self.n_tasks_available} available "
            f"(at most {self.max_rows} rows)",
        ]
        if self.offline:
            lines.append("offline cloze questions: no model calls, no cost")
        else:
            lines.append(
                f"judge calls: ~{self.calls}   tokens: ~{self.prompt_tokens} prompt + ~{self.completion_tokens} "
                "completion (estimates: characters / 4)"
            )
            lines.append(
                "cost: "
                + (
                    "n/a (give --price-prompt / --price-completion)"
                    if self.cost is None
                    else f"~{self.cost:.4f}"
                )
            )
        return "\n".join(lines)


def estimate_generation(
    docs: Any,
    *,
    n: int = 50,
    judge: Any = None,
    offline: bool = False,
    kinds: str | Sequence[str] | None = None,
    num_questions_per_chunk: int = 1,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    overlap: int = DEFAULT_OVERLAP,
    verify: bool = True,
    drop_answerable_without_context: bool = False,
    seed: int = 0,
    price_config: Any = None,
    **_: Any,
) -> GenerationEstimate:
    """Estimate a :func:`~ragmeter.testset.generate.generate_testset` call without making it.

    ``price_config``: a :class:`~ragmeter.judges.config.JudgeConfig` with prices (default: the
    judge's), for the cost."""
    from ragmeter.testset.chunking import chunk_documents
    from ragmeter.testset.generate import as_documents

    documents = as_documents(docs)
    chunks = chunk_documents(documents, chunk_size=chunk_size, overlap=overlap)
    kind_list = ("single_hop",) if offline else parse_kinds(kinds)
    pairs = pair_chunks(chunks, None) if "multi_hop" in kind_list else {}
    tasks = plan_tasks(chunks, kind_list, pairs=pairs, seed=seed)
    needed = min(len(tasks), math.ceil(n / num_questions_per_chunk * MARGIN))
    planned = tasks[:needed]
    if offline:
        from ragmeter.testset.offline import cloze_questions

        available = sum(len(cloze_questions(c, 1000)) for c in chunks)
        return GenerationEstimate(
            len(documents), len(chunks), len(chunks), len(chunks), available, 0, 0, 0, 0.0, True
        )
    calls = prompt = completion = 0
    for t in planned:
        step = "testset_multi_hop" if t.kind == "multi_hop" else "testset_questions"
        p = load_testset_prompt(step, t.chunks[0].lang)
        text = p.system + p.user + "".join(c.text for c in t.chunks)
        calls += 1
        prompt += estimate_tokens(text)
        completion += COMPLETION_PER_QUESTION * num_questions_per_chunk
        if verify:
            calls += 1
            prompt += 400 + estimate_tokens("".join(c.text for c in t.chunks))
            completion += COMPLETION_PER_VERIFY * num_questions_per_chunk
        if drop_answerable_without_context:
            calls += 2 * num_questions_per_chunk
            prompt += 300 * num_questions_per_chunk
            completion += 80 * num_questions_per_chunk
    cfg = (
        price_config if price_config is not None else getattr(getattr(judge, "client", None), "config", None)
    )
    cost = cfg.cost(prompt, completion) if cfg is not None else None
    return GenerationEstimate(
        len(documents),
        len(chunks),
        len(tasks),
        len(planned),
        len(tasks) * num_questions_per_chunk,
        calls,
        prompt,
        completion,
        cost,
        False,
    )
