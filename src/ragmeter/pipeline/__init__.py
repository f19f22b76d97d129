"""Run a RAG pipeline or a retriever over questions and collect what to score. See docs/testsets.md."""

from __future__ import annotations

from ragmeter.pipeline.adapters import (
    as_pipeline,
    langchain_chain,
    langchain_retriever,
    llamaindex_query_engine,
    llamaindex_retriever,
)
from ragmeter.pipeline.loader import load_callable
from ragmeter.pipeline.outputs import PipelineOutput, PipelineOutputError, normalize_output
from ragmeter.pipeline.run import arun_pipeline, run_pipeline, run_retriever

__all__ = [
    "PipelineOutput",
    "PipelineOutputError",
    "arun_pipeline",
    "as_pipeline",
    "langchain_chain",
    "langchain_retriever",
    "llamaindex_query_engine",
    "llamaindex_retriever",
    "load_callable",
    "normalize_output",
    "run_pipeline",
    "run_retriever",
]
