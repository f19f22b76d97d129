"""A chat provider that answers without a model, for ``--dry-run``: :class:`RehearsalProvider`.

The dry run runs the real metrics with the real :class:`~ragmeter.judges.llm.LLMJudge` (the same
prompt files, data fences, combined steps and memo) over this provider, so the requests it counts
are the requests the run would send, and their prompt tokens are those of the rendered prompts.
The replies are made up from the request's schema, shaped like a real judge's: claims are the
sentences of the text they are asked of (the number of claims decides the size of the later
verification prompts), one verdict per numbered item, free-text fields of typical length. Tokens
are estimated (about 4 characters a token, one per CJK character); nothing leaves the machine.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ragmeter.judges.prompts import DATA_BLOCK_RE
from ragmeter.judges.tokens import estimate_tokens_cjk
from ragmeter.judges.types import ChatRequest, ChatResponse, Usage
from ragmeter.text import split_sentences

_ITEM_RE = re.compile(r"^\[(\d+)\]\s+(.*)$", re.MULTILINE)
#: the top of a rubric's scale in the grade prompt (en, zh)
_SCALE_RE = re.compile(r"from -?[\d.]+ to (-?[\d.]+)|-?[\d.]+ 到 (-?[\d.]+) 之间")
#: a free-text field (a reason) of typical length
_TEXT = "The contexts state this in the sentence that decides it."


def _blocks(request: ChatRequest) -> list[str]:
    user = next((m.content for m in request.messages if m.role == "user"), "")
    return DATA_BLOCK_RE.findall(user)


def _instance(schema: Any, key: str = "") -> Any:
    """A value valid against ``schema`` (the subset ragmeter's prompt schemas use)."""
    if not isinstance(schema, dict):
        return None
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        values = list(schema["enum"])
        return values[-1] if key == "score" else values[0] if values else None
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) else kind
    if kind == "object":
        return {k: _instance(v, k) for k, v in (schema.get("properties") or {}).items()}
    if kind == "array":
        if "prefixItems" in schema:
            return [_instance(s) for s in schema["prefixItems"]]
        item = schema.get("items") or {}
        index = (item.get("properties") or {}).get("index") if isinstance(item, dict) else None
        if isinstance(index, dict) and "enum" in index:
            return [{**_instance(item), "index": i} for i in index["enum"]]
        return []
    if kind == "boolean":
        return True
    if kind in ("integer", "number"):
        return 0
    if kind == "string":
        return "tie" if key == "winner" else "" if key == "evidence" else _TEXT
    return None


def rehearsed_reply(request: ChatRequest) -> dict[str, Any]:
    """The made-up reply to ``request`` (see the module docstring)."""
    blocks = _blocks(request)
    if request.step == "extract_claims":
        return {"claims": split_sentences(blocks[-1]) if blocks else []}
    if request.step == "extract_claims_many":
        texts = _ITEM_RE.findall(blocks[-1]) if blocks else []
        return {"texts": [{"index": int(i), "claims": split_sentences(t)} for i, t in texts]}
    if request.step == "generate_questions":
        return {"questions": ["What does the answer respond to?"] * 3, "noncommittal": 0}
    reply = _instance(request.json_schema or {})
    if not isinstance(reply, dict):
        return {}
    if request.step == "grade" and "score" in reply:
        user = next((m.content for m in request.messages if m.role == "user"), "")
        score_schema = ((request.json_schema or {}).get("properties") or {}).get("score") or {}
        scale = _SCALE_RE.findall(DATA_BLOCK_RE.sub("", user))  # outside the data
        if scale and "enum" not in score_schema:
            reply["score"] = float(next(x for x in scale[-1] if x))  # the top of a non-integer scale
    return reply


class RehearsalProvider:
    """Answers every chat request with :func:`rehearsed_reply`; counts estimated tokens."""

    name = "rehearsal"

    def __init__(self, model: str = "dry-run", structured: str = "none") -> None:
        self.model = model
        #: the structured-output mode the real run would send in (it decides whether the prompts
        #: carry their worked example, :meth:`ChatRequest.messages_for`)
        self.structured = structured

    async def generate(self, request: ChatRequest) -> ChatResponse:
        text = json.dumps(rehearsed_reply(request), ensure_ascii=False)
        usage = Usage(
            requests=1,
            prompt_tokens=sum(
                estimate_tokens_cjk(m.content) + 4 for m in request.messages_for(self.structured)
            ),
            completion_tokens=estimate_tokens_cjk(text),
        )
        return ChatResponse(text=text, usage=usage, model=self.model, finish_reason="stop")

    def describe(self) -> dict[str, Any]:
        return {"provider": self.name, "model": self.model, "structured": self.structured}
