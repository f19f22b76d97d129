"""Turn whatever a RAG pipeline returns into (answer, contexts, context_ids).

Accepted pipeline outputs:

- a ``dict`` with the answer under ``answer`` / ``response`` / ``result`` / ``output`` and the
  contexts under ``contexts`` / ``context`` / ``source_documents`` / ``source_nodes`` /
  ``documents`` (optional ``context_ids``);
- a 2-tuple ``(answer, contexts)``;
- a ``str`` (an answer without contexts);
- an object with ``.response`` and ``.source_nodes`` (a LlamaIndex ``Response``);
- a LlamaIndex agent's ``AgentOutput`` (``.response``, ``.tool_calls``): the answer is its response,
  the contexts its tool results, and ``messages`` the run as a conversation (the question, each
  call and its result, the response), which the runner scores as an agent (docs/agents.md).

Each context may be a string, a LangChain ``Document`` (``page_content``, ``metadata["id"]`` or
``.id``), a LlamaIndex ``NodeWithScore`` / node (``get_content()`` or ``.text``, ``node_id``), or a
dict with ``text`` / ``content`` / ``page_content`` and ``id``. ``context_ids`` are kept when every
context has an id, and ``context_scores`` (the retriever's similarity scores) when every context
has a score: ``NodeWithScore.score``, a ``(Document, score)`` pair (LangChain's
``similarity_search_with_score``), a dict's ``score``, or a ``score`` / ``relevance_score`` /
``similarity_score`` in a ``Document``'s metadata.

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
_SCORE_KEYS = ("score", "relevance_score", "similarity_score")


class PipelineOutputError(TypeError):
    """The pipeline returned something ragmeter cannot read as an answer and contexts."""


@dataclass(frozen=True)
class PipelineOutput:
    answer: str | None
    contexts: tuple[str, ...]
    context_ids: tuple[str, ...] | None
    context_scores: tuple[float, ...] | None = None
    #: an agent's run as a conversation (its tool calls and results), or None
    agent: Any = None


def _score_in(mapping: Any) -> float | None:
    if not isinstance(mapping, Mapping):
        return None
    value = next((mapping[k] for k in _SCORE_KEYS if mapping.get(k) is not None), None)
    return _as_score(value)


def _as_score(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def context_of(item: Any) -> tuple[str, str | None, float | None]:
    """(text, id or None, retrieval score or None) of one retrieved item."""
    ident: Any
    if isinstance(item, str):
        return item, None, None
    if isinstance(item, tuple) and len(item) == 2 and _as_score(item[1]) is not None:
        # (Document, score), as LangChain's similarity_search_with_score returns them
        text, inner_id, _ = context_of(item[0])
        return text, inner_id, _as_score(item[1])
    if isinstance(item, Mapping):
        for key in ("text", "content", "page_content", "context"):
            if isinstance(item.get(key), str):
                ident = next((item[k] for k in _ID_META_KEYS if item.get(k) is not None), None)
                meta = item.get("metadata")
                if ident is None and isinstance(meta, Mapping):
                    ident = next((meta[k] for k in _ID_META_KEYS if meta.get(k) is not None), None)
                score = _score_in(item)
                return (
                    item[key],
                    None if ident is None else str(ident),
                    _score_in(meta) if score is None else score,
                )
        raise PipelineOutputError(
            f"a context dict needs 'text' (or 'content', 'page_content'): {item!r:.100}"
        )
    # LlamaIndex ImageNode: the image itself (its path, URL or base64 data), an image context
    # (ragmeter.run.images)
    if type(item).__name__ == "ImageNode":
        ident = getattr(item, "node_id", None)
        for ref in (getattr(item, "image_path", None), getattr(item, "image_url", None)):
            if isinstance(ref, str) and ref:
                return ref, None if ident is None else str(ident), None
        data = getattr(item, "image", None)
        if isinstance(data, str) and data:
            mime = getattr(item, "image_mimetype", None) or "image/png"
            return f"data:{mime};base64,{data}", None if ident is None else str(ident), None
    # LlamaIndex NodeWithScore -> its node
    node = getattr(item, "node", None)
    if node is not None and not isinstance(item, str):
        text, node_id, _ = context_of(node)
        return text, node_id, _as_score(getattr(item, "score", None))
    # LangChain Document
    page = getattr(item, "page_content", None)
    if isinstance(page, str):
        meta = getattr(item, "metadata", None) or {}
        ident = getattr(item, "id", None)
        if ident is None and isinstance(meta, Mapping):
            ident = next((meta[k] for k in _ID_META_KEYS if meta.get(k) is not None), None)
        return page, None if ident is None else str(ident), _score_in(meta)
    # LlamaIndex node (TextNode): get_content() / .text, node_id / id_
    get_content = getattr(item, "get_content", None)
    content: Any = get_content() if callable(get_content) else getattr(item, "text", None)
    if isinstance(content, str):
        ident = getattr(item, "node_id", None) or getattr(item, "id_", None)
        return content, None if ident is None else str(ident), None
    raise PipelineOutputError(f"cannot read a context from {type(item).__name__}: {item!r:.100}")


_Contexts = tuple[tuple[str, ...], "tuple[str, ...] | None", "tuple[float, ...] | None"]


def _contexts(items: Any) -> _Contexts:
    """(texts, ids when every item has one, scores when every item has one)."""
    if items is None:
        return (), None, None
    if isinstance(items, (str, bytes)) or not isinstance(items, Sequence):
        if isinstance(items, str):
            return (items,), None, None
        items = list(items) if hasattr(items, "__iter__") else [items]
    triples = [context_of(x) for x in items]
    texts = tuple(t for t, _, _ in triples)
    ids = [i for _, i, _ in triples]
    scores = [s for _, _, s in triples]
    return (
        texts,
        tuple(str(i) for i in ids) if triples and all(i is not None for i in ids) else None,
        tuple(float(s) for s in scores if s is not None) if triples and None not in scores else None,
    )


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
        return PipelineOutput(None, *_contexts(out))
    if isinstance(out, Mapping):
        answer = next((out[k] for k in _ANSWER_KEYS if k in out), None)
        ctx_key = next((k for k in _CONTEXT_KEYS if k in out), None)
        texts, ids, scores = _contexts(out[ctx_key]) if ctx_key else ((), None, None)
        if out.get("context_ids") is not None:
            ids = tuple(str(i) for i in out["context_ids"])
            if len(ids) != len(texts):
                raise PipelineOutputError(f"{len(ids)} context_ids for {len(texts)} contexts")
        if answer is None and ctx_key is None:
            raise PipelineOutputError(
                f"the pipeline returned a dict without an answer or contexts key; keys: {sorted(map(str, out))}"
            )
        return PipelineOutput(_answer(answer), texts, ids, scores)
    if isinstance(out, tuple) and len(out) == 2:
        return PipelineOutput(_answer(out[0]), *_contexts(out[1]))
    if isinstance(out, str):
        return PipelineOutput(out, (), None)
    from ragmeter.dataset.trajectory import is_agent_output, tool_result_text

    if is_agent_output(out):
        results = tuple(tool_result_text(getattr(c, "tool_output", None) or "") for c in out.tool_calls or ())
        return PipelineOutput(_answer(out.response), tuple(r for r in results if r.strip()), None, agent=out)
    if hasattr(out, "source_nodes") and hasattr(out, "response"):
        return PipelineOutput(_answer(out.response), *_contexts(out.source_nodes))
    raise PipelineOutputError(
        f"cannot read the pipeline's output ({type(out).__name__}); return a dict "
        "{'answer': ..., 'contexts': [...]}, a tuple (answer, contexts), or a LlamaIndex Response"
    )
