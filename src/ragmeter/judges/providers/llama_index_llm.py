"""A LlamaIndex LLM object (``llama_index.core.llms.LLM``: ``OpenAI(...)``, ``Ollama(...)``,
``MockLLM()``...) as ragmeter's chat provider, so that code written for LlamaIndex's evaluators
(``FaithfulnessEvaluator(llm=llm)``) runs with ragmeter's prompts, parsing, repair, cache and
usage accounting.

Each request goes to ``llm.achat`` with the request's messages. The LLM's own settings
(temperature, max tokens, timeouts, retries) are the LLM object's: ragmeter does not change them,
and it does not send a JSON schema (LlamaIndex's ``achat`` has no portable way to); the replies are
read by ragmeter's tolerant parser and repaired once as for any server without structured output.
Token counts come from the reply's ``raw`` usage when the LLM reports it (OpenAI-style ``usage``),
else they are estimated (4 characters a token) and marked so in ``describe``.
"""

from __future__ import annotations

import sys
from typing import Any

from ragmeter.errors import JudgeError
from ragmeter.judges.tokens import estimate_message_tokens, estimate_tokens
from ragmeter.judges.types import ChatRequest, ChatResponse, Usage


def is_llama_index_llm(obj: Any) -> bool:
    """A LlamaIndex LLM (an instance of ``llama_index.core``'s ``BaseLLM``; a user's own
    ``CustomLLM`` subclass too). LlamaIndex is not imported here: an object of its classes means it
    already is."""
    if "llama_index.core" not in sys.modules:
        return False
    from llama_index.core.base.llms.base import BaseLLM

    return isinstance(obj, BaseLLM)


def _usage_of(raw: Any) -> tuple[int, int] | None:
    usage = raw.get("usage") if isinstance(raw, dict) else getattr(raw, "usage", None)
    if usage is None:
        return None
    get = usage.get if isinstance(usage, dict) else lambda k: getattr(usage, k, None)
    prompt, completion = get("prompt_tokens"), get("completion_tokens")
    if isinstance(prompt, int) and isinstance(completion, int):
        return prompt, completion
    return None


class LlamaIndexLLMProvider:
    """``generate`` through a LlamaIndex LLM's ``achat``."""

    name = "llama-index"

    def __init__(self, llm: Any) -> None:
        if not is_llama_index_llm(llm):
            raise TypeError(f"not a LlamaIndex LLM: {llm!r}")
        self.llm = llm
        meta = llm.metadata
        self.model = str(getattr(meta, "model_name", "") or type(llm).__name__)

    async def generate(self, request: ChatRequest) -> ChatResponse:
        from llama_index.core.llms import ChatMessage

        messages = [ChatMessage(role=m.role, content=m.content) for m in request.messages]
        try:
            reply = await self.llm.achat(messages)
        except Exception as exc:  # the LLM object has retried as it is configured to
            raise JudgeError(f"{type(self.llm).__name__}.achat failed: {type(exc).__name__}: {exc}") from exc
        text = reply.message.content or ""
        counted = _usage_of(getattr(reply, "raw", None))
        prompt, completion = counted or (estimate_message_tokens(request.messages), estimate_tokens(text))
        return ChatResponse(
            text=text,
            usage=Usage(requests=1, prompt_tokens=prompt, completion_tokens=completion),
            model=self.model,
            finish_reason="stop",
        )

    def describe(self) -> dict[str, Any]:
        return {"provider": self.name, "model": self.model, "class": type(self.llm).__name__}


def judge_from_llama_index_llm(llm: Any) -> Any:
    """An LLM judge over a LlamaIndex LLM, embedding with the offline embedder (as ``make_judge``
    does for any chat model)."""
    from ragmeter.judges.client import ModelClient
    from ragmeter.judges.config import JudgeConfig
    from ragmeter.judges.llm import LLMJudge
    from ragmeter.local.embedders import default_embedder

    provider = LlamaIndexLLMProvider(llm)
    # structured "none": the prompt carries the reply's shape and its worked example, the reply is
    # parsed tolerantly (LlamaIndex's achat takes no portable response format)
    client = ModelClient(provider, JudgeConfig(structured="none"))
    return LLMJudge(client, default_embedder(), name=f"llama-index:{provider.model}")
