"""Adapters from RAG frameworks' objects to ``question -> output`` callables.

Duck-typed: nothing here imports LlamaIndex or LangChain, so they stay optional; any object with
the same methods works. The tests run them on real objects of both (tests/integrations/) and on
small in-process fakes.

- :func:`llamaindex_query_engine`: ``.aquery(q)`` (preferred) or ``.query(q)`` returning a
  Response with ``.response`` and ``.source_nodes`` (``NodeWithScore``: ``.node.get_content()``,
  ``.node.node_id``).
- :func:`llamaindex_retriever`: ``.aretrieve(q)`` / ``.retrieve(q)`` returning ``NodeWithScore`` items.
- :func:`langchain_retriever`: ``.ainvoke(q)`` / ``.invoke(q)`` returning ``Document`` items
  (``page_content``, ``metadata``; the id from ``Document.id`` or ``metadata["id"]``).
- :func:`langchain_chain`: ``.ainvoke(input)`` / ``.invoke(input)``; the input is
  ``{input_key: question}`` (``"input"`` by default, as ``create_retrieval_chain`` expects;
  ``"query"`` for ``RetrievalQA``) or the bare question with ``input_key=None``; the output is read
  by :func:`~ragmeter.pipeline.outputs.normalize_output` (``answer``/``result`` and
  ``context``/``source_documents``).
- :func:`as_pipeline` picks one of these by the object's methods, or returns a plain callable as is.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from ragmeter.errors import ConfigError

__all__ = [
    "as_pipeline",
    "langchain_chain",
    "langchain_retriever",
    "llamaindex_query_engine",
    "llamaindex_retriever",
]

Pipeline = Callable[[str], Any]


def _prefer_async(obj: Any, async_name: str, sync_name: str) -> Pipeline:
    amethod = getattr(obj, async_name, None)
    method = getattr(obj, sync_name, None)
    if callable(amethod) and inspect.iscoroutinefunction(amethod):

        async def acall(question: str) -> Any:
            return await amethod(question)

        return acall
    if callable(method):

        def call(question: str) -> Any:
            return method(question)

        return call
    raise ConfigError(f"{type(obj).__name__} has neither .{async_name}() nor .{sync_name}()")


def llamaindex_query_engine(engine: Any) -> Pipeline:
    """A LlamaIndex query engine as a pipeline (answer + source nodes)."""
    return _prefer_async(engine, "aquery", "query")


def llamaindex_retriever(retriever: Any) -> Pipeline:
    """A LlamaIndex retriever as a retrieval function (ranked nodes)."""
    return _prefer_async(retriever, "aretrieve", "retrieve")


def langchain_retriever(retriever: Any) -> Pipeline:
    """A LangChain retriever (``BaseRetriever``) as a retrieval function (ranked Documents)."""
    return _prefer_async(retriever, "ainvoke", "invoke")


def langchain_chain(chain: Any, *, input_key: str | None = "input") -> Pipeline:
    """A LangChain chain / runnable as a pipeline."""
    inner = _prefer_async(chain, "ainvoke", "invoke")

    def wrap(question: str) -> Any:
        return question if input_key is None else {input_key: question}

    if inspect.iscoroutinefunction(inner):

        async def acall(question: str) -> Any:
            return await inner(wrap(question))  # type: ignore[arg-type]

        return acall

    def call(question: str) -> Any:
        return inner(wrap(question))  # type: ignore[arg-type]

    return call


def _looks_like_langchain_retriever(obj: Any) -> bool:
    names = [c.__name__ for c in type(obj).__mro__]
    return any("Retriever" in n for n in names) or callable(getattr(obj, "get_relevant_documents", None))


def as_pipeline(obj: Any, *, retriever: bool = False) -> Pipeline:
    """A ``question -> output`` callable for ``obj``.

    Order: an object with ``query``/``aquery`` is a LlamaIndex query engine; with
    ``retrieve``/``aretrieve`` a LlamaIndex retriever; with ``invoke``/``ainvoke`` a LangChain
    retriever (when ``retriever=True`` or its class name says Retriever) or chain; any other
    callable is used as it is.
    """
    if any(callable(getattr(obj, m, None)) for m in ("aquery", "query")) and not inspect.isfunction(obj):
        return llamaindex_query_engine(obj)
    if any(callable(getattr(obj, m, None)) for m in ("aretrieve", "retrieve")) and not inspect.isfunction(
        obj
    ):
        return llamaindex_retriever(obj)
    if any(callable(getattr(obj, m, None)) for m in ("ainvoke", "invoke")) and not inspect.isfunction(obj):
        if retriever or _looks_like_langchain_retriever(obj):
            return langchain_retriever(obj)
        return langchain_chain(obj)
    if callable(obj):
        return obj  # type: ignore[no-any-return]
    raise ConfigError(
        f"not a pipeline: {type(obj).__name__}; give a function question -> (answer, contexts), a LlamaIndex "
        "query engine or retriever, or a LangChain chain or retriever"
    )
