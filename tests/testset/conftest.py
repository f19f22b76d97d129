"""A scripted LLM judge (FakeProvider + hashing embeddings) answering the test-set prompts."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from helpers.server import default_responder
from ragmeter.judges.client import ModelClient
from ragmeter.judges.llm import LLMJudge
from ragmeter.judges.providers.fake import FakeEmbeddingProvider, FakeProvider
from ragmeter.judges.types import ChatRequest

DOCS = Path(__file__).resolve().parents[2] / "examples" / "docs"


def request_dict(req: ChatRequest) -> dict[str, Any]:
    """The JSON body the HTTP provider would send, for the loopback server's responder."""
    return {
        "messages": [{"role": m.role, "content": m.content} for m in req.messages],
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": req.schema_name, "schema": req.json_schema},
        },
    }


def make_judge(reply: Callable[[ChatRequest], str] | None = None) -> tuple[LLMJudge, FakeProvider]:
    provider = FakeProvider(reply or (lambda req: default_responder(request_dict(req))))
    judge = LLMJudge(ModelClient(provider), ModelClient(FakeEmbeddingProvider(dim=64)))
    return judge, provider


@pytest.fixture
def scripted_judge() -> tuple[LLMJudge, FakeProvider]:
    return make_judge()
