"""A small scripted stub of the Judge protocol for metric tests.

Scripted replies for the LLM steps, a deterministic bag-of-words embedder (crc32 hashing, so the
vectors are the same in every process), and a record of every call so tests can assert how many
calls a metric makes and with what arguments.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

from ragmeter.judges.base import GeneratedQuestions, Verdict
from ragmeter.text import tokenize

DIM = 1024


def bow_embed(text: str, dim: int = DIM) -> np.ndarray:
    """Bag-of-words vector (crc32 of each token, mod dim), L2-normalised; all zeros for no tokens."""
    v = np.zeros(dim, dtype=np.float32)
    for tok in tokenize(text):
        v[zlib.crc32(tok.encode("utf-8")) % dim] += 1.0
    norm = float(np.linalg.norm(v))
    return v / norm if norm else v


class StubJudge:
    """Implements :class:`ragmeter.judges.base.Judge` with scripted answers.

    - ``claims``: the list ``extract_claims`` returns, or an exception to raise.
    - ``supported``: the set of claims ``verify_claims`` calls supported (or a callable
      ``(claim, contexts) -> bool``, or an exception to raise); ``n_verdicts`` overrides how many
      verdicts come back (to script a broken judge).
    - ``questions`` / ``noncommittal``: what ``generate_questions`` returns.
    - ``embed_fn``: replaces the bag-of-words embedder (to script bad embeddings).
    """

    name = "stub"

    def __init__(
        self,
        *,
        claims: Sequence[str] | Exception = (),
        supported: set[str] | Callable[[str, Sequence[str]], bool] | Exception = frozenset(),
        n_verdicts: int | None = None,
        questions: Sequence[str] | Exception = (),
        noncommittal: bool = False,
        embed_fn: Callable[[Sequence[str]], np.ndarray] | None = None,
    ) -> None:
        self.claims = claims
        self.supported = supported
        self.n_verdicts = n_verdicts
        self.questions = questions
        self.noncommittal = noncommittal
        self.embed_fn = embed_fn
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def supports(self, step: str) -> bool:
        return step in ("extract_claims", "verify_claims", "generate_questions", "embed")

    def describe(self) -> dict[str, Any]:
        return {"name": self.name}

    def steps_called(self) -> list[str]:
        return [step for step, _ in self.calls]

    async def extract_claims(self, text: str, *, question: str | None = None, lang: str = "en") -> list[str]:
        self.calls.append(("extract_claims", {"text": text, "question": question, "lang": lang}))
        if isinstance(self.claims, Exception):
            raise self.claims
        return list(self.claims)

    async def verify_claims(
        self, claims: Sequence[str], contexts: Sequence[str], *, lang: str = "en"
    ) -> list[Verdict]:
        self.calls.append(
            ("verify_claims", {"claims": list(claims), "contexts": list(contexts), "lang": lang})
        )
        if isinstance(self.supported, Exception):
            raise self.supported
        out = []
        for c in claims:
            ok = self.supported(c, contexts) if callable(self.supported) else c in self.supported
            out.append(
                Verdict(
                    claim=c,
                    supported=ok,
                    reason="stated in the context" if ok else "not in the context",
                    evidence=contexts[0] if ok else "",
                    confidence=1.0 if ok else 0.0,
                )
            )
        return out if self.n_verdicts is None else out[: self.n_verdicts]

    async def generate_questions(self, answer: str, *, n: int = 3, lang: str = "en") -> GeneratedQuestions:
        self.calls.append(("generate_questions", {"answer": answer, "n": n, "lang": lang}))
        if isinstance(self.questions, Exception):
            raise self.questions
        return GeneratedQuestions(questions=tuple(self.questions), noncommittal=self.noncommittal)

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(("embed", {"texts": list(texts)}))
        if self.embed_fn is not None:
            return self.embed_fn(texts)
        return np.stack([bow_embed(t) for t in texts]) if texts else np.zeros((0, DIM), dtype=np.float32)

    async def aclose(self) -> None:
        return None


@pytest.fixture
def make_judge() -> Callable[..., StubJudge]:
    return StubJudge


@pytest.fixture(name="bow_embed")
def bow_embed_fixture() -> Callable[[str], np.ndarray]:
    return bow_embed


@pytest.fixture
def judge() -> StubJudge:
    """A stub judge with nothing scripted (for judge-free metrics: any call is visible in .calls)."""
    return StubJudge()


# ---------------------------------------------------------------------------- scripted LLM judge


class StepScript:
    """Replies for an :class:`LLMJudge` over the scripted :class:`FakeProvider`, by step.

    ``StepScript({"grade": ['{"reason": "r", "score": 4}'], ...})``: each request takes the next
    reply queued for its step; a step with no reply left fails loudly (a test bug).
    """

    def __init__(self, replies: dict[str, list[Any]]) -> None:
        self.replies = {k: list(v) for k, v in replies.items()}
        self.requests: list[Any] = []

    def __call__(self, request: Any) -> Any:
        self.requests.append(request)
        queue = self.replies.get(request.step)
        if not queue:
            raise AssertionError(f"no scripted reply left for step {request.step!r}")
        item = queue.pop(0)
        return item if isinstance(item, (str, BaseException)) else json.dumps(item, ensure_ascii=False)

    def steps(self) -> list[str]:
        return [r.step for r in self.requests]


class FixedEmbedder:
    """``embed`` returns the vectors given for each text (texts not listed: a fixed unit vector)."""

    def __init__(self, vectors: dict[str, list[float]]) -> None:
        self.vectors = vectors

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return np.array([self.vectors.get(t, [1.0, 0.0]) for t in texts], dtype=np.float32)


@pytest.fixture
def llm_judge() -> Callable[..., tuple[Any, StepScript]]:
    """``llm_judge({"step": [replies]}, embedder=None, **judge_kwargs)`` -> (LLMJudge, script)."""
    from ragmeter.judges import FakeProvider, JudgeConfig, LLMJudge, ModelClient

    def make(replies: dict[str, list[Any]], embedder: Any = None, **kwargs: Any) -> tuple[Any, StepScript]:
        script = StepScript(replies)
        client = ModelClient(FakeProvider(script), JudgeConfig(backoff_base_s=0, backoff_max_s=0, **kwargs))
        return LLMJudge(client, embedder), script

    return make
