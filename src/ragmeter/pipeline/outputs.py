"""Turn whatever a RAG pipeline returns into (answer, contexts, context_ids).

Accepted pipeline outputs:

- a ``dict`` with the answer under ``answer`` / ``response`` / ``result`` / ``output`` and the
  contexts under ``contexts`` / ``context`` / ``source_documents`` / ``source_nodes`` /
  ``documents`` (optional ``context_ids``);
- a 2-tuple ``(answer, contexts)``;
- a ``str`` (an answer without contexts);
- an object with ``.response`` and ``.source_nodes`` (a LlamaIndex ``Response``).

Each context may be a string, a LangChain ``Document`` (``page_content``, ``metadata["id"]`` or
``.id``), a LlamaIndex ``NodeWithScore`` / node (``get_content()`` or ``.text``, ``node_id``), or a
dict with ``text`` / ``content`` / ``page_content`` and ``id``. ``context_ids`` are kept when every
context has an id.

A retriever's output (``retriever=True``) is the list of contexts itself (or any of the above).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["PipelineOutput", "PipelineOutputError", "context_of", "normalize_output"]

_ANSWER_KEYS = ("answer", "response", "result", "output", "text")
_CONTEXT_KEYS = ("contexts", "context", "source_documents", "source_nodes", "documents", "docs")
_ID_META_KEYS = ("id", "doc_id", "document_id", "chunk_id", "source_id", "node_id")


class PipelineOutputError(TypeError):
    """The pipeline returned something ragmeter cannot read as an answer and contexts."""


@dataclass(frozen=True)
class PipelineOutput:
    answer: str | None
    contexts: tuple[str, ...]
    context_ids: tuple[str, ...] | None


def context_of(item: Any) -> tuple[str, str | None]:
    """(text, id or None) of one retrieved item."""
    if isinstance(item, str):
        return item, None
    if isinstance(item, Mapping):
        for key in ("text", "content", "page_content", "context"):
            if isinstance(item.get(key), str):
                ident: Any = next((item[k] for k in _ID_META_KEYS if item.get(k) is not None), None)
                meta = item.get("metadata")
                if ident is None and isinstance(meta, Mapping):
                    ident = next((meta[k] for k in _ID_META_KEYS if meta.get(k) is not None), None)
                return item[key], None if ident is None else str(ident)
        raise PipelineOutputError(
            f"a context dict needs 'text' (or 'content', 'page_content'): {item!r:.100}"
        )
    # LlamaIndex NodeWithScore -> its node
    node = getattr(item, "node", None)
    if node is not None and not isinstance(item, str):
        return context_of(node)
    # LangChain Document
    page = getattr(item, "page_content", None)
    if isinstance(page, str):
        meta = getattr(item, "metadata", None) or {}
        ident = getattr(item, "id", None)
        if ident is None and isinstance(meta, Mapping):
            ident = next((meta[k] for k in _ID_META_KEYS if meta.get(k) is not None), None)
        return page, None if ident is None else str(ident)
    # LlamaIndex node (TextNode): get_content() / .text, node_id / id_
    get_content = getattr(item, "get_content", None)
    content: Any = get_content() if callable(get_content) else getattr(item, "text", None)
    if isinstance(content, str):
        node_id: Any = getattr(item, "node_id", None) or getattr(item, "id_", None)
        return content, None if node_id is None else str(node_id)
    raise PipelineOutputError(f"cannot read a context from {type(item).__name__}: {item!r:.100}")


def _contexts(items: Any) -> tuple[tuple[str, ...], tuple[str, ...] | None]:
    if items is None:
        return (), None
    if isinstance(items, (str, bytes)) or not isinstance(items, Sequence):
        if isinstance(items, str):
            return (items,), None
        items = list(items) if hasattr(items, "__iter__") else [items]
    pairs = [context_of(x) for x in items]
    texts = tuple(t for t, _ in pairs)
    ids = [i for _, i in pairs]
    return texts, (tuple(str(i) for i in ids) if pairs and all(i is not None for i in ids) else None)


def _answer(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    inner = getattr(value, "content", None)  # a chat message (LangChain AIMessage)
    if isinstance(inner, str):
        return inner
    return str(value)


def normalize_output(out: Any, *, retriever: bool = False) -> PipelineOutput:
    """Read a pipeline's (or, with ``retriever=True``, a retriever's) return value."""
    if isinstance(out, PipelineOutput):
        return out
    if (
        retriever
        and isinstance(out, (list, tuple))
        and not (len(out) == 2 and isinstance(out[0], str) and isinstance(out[1], (list, tuple)))
    ):
        texts, ids = _contexts(out)
        return PipelineOutput(None, texts, ids)
    if isinstance(out, Mapping):
        answer = next((out[k] for k in _ANSWER_KEYS if k in out), None)
        ctx_key = next((k for k in _CONTEXT_KEYS if k in out), None)
        texts, ids = _contexts(out[ctx_key]) if ctx_key else ((), None)
        if out.get("context_ids") is not None:
            ids = tuple(str(i) for i in out["context_ids"])
            if len(ids) != len(texts):
                raise PipelineOutputError(f"{len(ids)} context_ids for {len(texts)} contexts")
        if answer is None and ctx_key is None:
            raise PipelineOutputError(
                f"the pipeline returned a dict without an answer or contexts key; keys: {sorted(map(str, out))}"
            )
        return PipelineOutput(_answer(answer), texts, ids)
    if isinstance(out, tuple) and len(out) == 2:
        texts, ids = _contexts(out[1])
        return PipelineOutput(_answer(out[0]), texts, ids)
    if isinstance(out, str):
        return PipelineOutput(out, (), None)
    if hasattr(out, "source_nodes") and hasattr(out, "response"):
        texts, ids = _contexts(out.source_nodes)
        return PipelineOutput(_answer(out.response), texts, ids)
    raise PipelineOutputError(
        f"cannot read the pipeline's output ({type(out).__name__}); return a dict "
        "{'answer': ..., 'contexts': [...]}, a tuple (answer, contexts), or a LlamaIndex Response"
    )
