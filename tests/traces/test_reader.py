"""Trace files -> samples: one per trace that retrieved, spans grouped by trace id across lines,
traces without retrieval counted and skipped, bad lines and spans named by file, line and field,
OpenInference and the GenAI conventions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.otlp import export, rag_trace, span, trace_id, write_lines
from ragmeter.dataset import load_dataset
from ragmeter.errors import DatasetError
from ragmeter.traces.reader import read_traces


def test_one_sample_per_trace_with_question_contexts_answer_and_trace_metadata(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "t.otlp.jsonl",
        [
            export(
                *rag_trace(
                    1,
                    "Where is the tower?",
                    ["It is in Paris.", "Paris is in France."],
                    "Paris.",
                    ids=["d1", "d2"],
                )
            ),
            export(*rag_trace(2, "How tall?", ["330 m."], "330 metres.", tokens=(100, 20))),
        ],
    )
    ds = load_dataset(path)
    assert [s.id for s in ds] == [trace_id(1), trace_id(2)]
    first, second = ds
    assert first.question == "Where is the tower?" and first.answer == "Paris."
    assert first.contexts == ("It is in Paris.", "Paris is in France.")
    assert first.context_ids == ("d1", "d2")
    assert second.context_ids is None  # no document ids
    trace = first.metadata["trace"]
    assert trace["trace_id"] == trace_id(1) and trace["root_span"] == "query"
    assert trace["latency_ms"] == 10.0
    assert (trace["prompt_tokens"], trace["completion_tokens"], trace["total_tokens"]) == (12, 5, 17)
    assert trace["llm_calls"] == 1 and trace["model"] == "gpt-test" and trace["service"] == "test-app"
    assert trace["context_scores"] == [1.0, 0.9]
    assert trace["question_source"] == "root input"
    assert trace["start"].startswith("2023-11-14T22:13:20")
    assert second.metadata["trace"]["total_tokens"] == 120
    assert list(ds.rows) == [1, 2]


def test_spans_of_one_trace_on_several_lines_and_interleaved_traces(tmp_path: Path) -> None:
    a = rag_trace(1, "qa", ["ca"], "aa")
    b = rag_trace(2, "qb", ["cb"], "ab")
    # exports as a batching exporter sends them: children first, traces interleaved
    path = write_lines(
        tmp_path / "t.otlp.jsonl",
        [export(a[0], b[0]), export(b[1], a[1]), "", export(b[2]), export(a[2], a[0])],  # a[0] sent twice
    )
    ds = load_dataset(path)
    assert [(s.question, s.contexts, s.answer) for s in ds] == [("qb", ("cb",), "ab"), ("qa", ("ca",), "aa")]
    assert list(ds.rows) == [4, 5]  # the line where each trace completes (the blank line counts)
    assert ds[1].metadata["trace"]["spans"] == 3  # the span sent twice is read once
    assert not ds.problems


def test_traces_without_retrieval_are_counted_and_skipped(tmp_path: Path) -> None:
    indexing = [
        span(9, 1, None, "index", {"openinference.span.kind": "CHAIN"}),
        span(9, 2, 1, "embed", {"openinference.span.kind": "EMBEDDING"}),
        span(9, 3, 1, "embed", {"gen_ai.operation.name": "embeddings"}),
    ]
    path = write_lines(tmp_path / "t.otlp.jsonl", [export(*indexing), export(*rag_trace(1, "q", ["c"], "a"))])
    ds = load_dataset(path)
    assert len(ds) == 1 and ds.n_skipped == 1
    (problem,) = ds.problems
    assert problem.row == 1 and trace_id(9) in problem.message
    assert "has no retrieval" in problem.message and "2 EMBEDDING, 1 CHAIN" in problem.message


def test_bad_lines_and_spans_are_named_and_the_rest_kept(tmp_path: Path) -> None:
    bad_span = span(3, 9, None, "bad", {"x": 1})
    bad_span["startTimeUnixNano"] = "soon"
    path = write_lines(
        tmp_path / "t.otlp.jsonl",
        [
            export(*rag_trace(1, "q1", ["c1"], "a1")),
            '{"resourceSpans": [',
            "[1, 2]",
            {"question": "not a trace"},
            export(bad_span),
            export(*rag_trace(2, "q2", ["c2"], "a2")),
        ],
    )
    ds = load_dataset(path)
    assert [s.question for s in ds] == ["q1", "q2"]
    problems = {(p.row, p.field): p.message for p in ds.problems}
    assert "broken JSON" in problems[(2, None)]
    assert "expected a JSON object" in problems[(3, None)]
    assert "not an OTLP" in problems[(4, "resourceSpans")]
    assert "soon" in problems[(5, "resourceSpans[0].scopeSpans[0].spans[0].startTimeUnixNano")]
    assert str(ds.problems[0]).startswith(f"{path}, row 2")


def test_detected_by_content_in_a_plain_jsonl_or_json_file(tmp_path: Path) -> None:
    lines = [export(*rag_trace(1, "q", ["c"], "a"))]
    for name in ("traces.jsonl", "collector-output.json"):
        ds = load_dataset(write_lines(tmp_path / name, lines))
        assert [s.question for s in ds] == ["q"], name


def test_root_input_in_json_and_the_fallbacks_for_the_question_and_answer(tmp_path: Path) -> None:
    t1 = rag_trace(1, "ignored", ["c"], "a")
    t1[2]["attributes"] = [
        {"key": "input.value", "value": {"stringValue": json.dumps({"question": "json q", "history": []})}},
        {"key": "input.mime_type", "value": {"stringValue": "application/json"}},
        {"key": "output.value", "value": {"stringValue": json.dumps({"answer": "json a", "context": ["c"]})}},
        {"key": "output.mime_type", "value": {"stringValue": "application/json"}},
    ]
    t2 = rag_trace(2, "from the llm", ["c"], "llm answer")
    t2[2]["attributes"] = []  # a root without input or output: the LLM span's messages
    t3 = rag_trace(3, "the retriever's query", ["c"], "a")
    t3[2]["attributes"] = []
    t3[1]["attributes"] = [{"key": "openinference.span.kind", "value": {"stringValue": "LLM"}}]
    ds = load_dataset(write_lines(tmp_path / "t.otlp.jsonl", [export(*t1), export(*t2), export(*t3)]))
    assert [(s.question, s.answer) for s in ds] == [
        ("json q", "json a"),
        ("from the llm", "llm answer"),
        ("the retriever's query", None),
    ]
    assert ds[1].metadata["trace"]["question_source"] == "user message of LLM span 'llm'"
    assert ds[2].metadata["trace"]["question_source"] == "query of retriever span 'retrieve'"


def test_nested_retrievers_and_llm_spans_count_once(tmp_path: Path) -> None:
    docs = {"openinference.span.kind": "RETRIEVER", "retrieval.documents.0.document.content": "outer doc"}
    inner = {"openinference.span.kind": "RETRIEVER", "retrieval.documents.0.document.content": "inner doc"}
    llm_outer = {
        "openinference.span.kind": "LLM",
        "llm.token_count.prompt": 50,
        "llm.token_count.completion": 5,
    }
    llm_inner = {
        "openinference.span.kind": "LLM",
        "llm.token_count.prompt": 50,
        "llm.token_count.completion": 5,
    }
    spans = [
        span(1, 1, None, "root", {"input.value": "q", "output.value": "a"}, end_ms=100),
        span(1, 2, 1, "fusion", docs, start_ms=1),
        span(1, 3, 2, "sub", inner, start_ms=2),
        span(
            1,
            4,
            1,
            "second retrieval",
            {**inner, "retrieval.documents.0.document.content": "later doc"},
            start_ms=20,
        ),
        span(1, 5, 1, "predict", llm_outer, start_ms=30),
        span(1, 6, 5, "complete", llm_inner, start_ms=31),
        span(
            1,
            7,
            1,
            "another call",
            {"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 7},
            start_ms=40,
        ),
    ]
    (s,) = load_dataset(write_lines(tmp_path / "t.otlp.jsonl", [export(*spans)]))
    assert s.contexts == ("outer doc", "later doc")
    t = s.metadata["trace"]
    assert (t["prompt_tokens"], t["completion_tokens"], t["total_tokens"], t["llm_calls"]) == (57, 5, 62, 2)
    assert t["retrievals"] == 2 and t["latency_ms"] == 100.0


def test_genai_conventions(tmp_path: Path) -> None:
    messages = [
        {"role": "user", "parts": [{"type": "text", "content": "What is OTLP?"}]},
    ]
    output = [
        {"role": "assistant", "parts": [{"type": "text", "content": "A protocol."}], "finish_reason": "stop"}
    ]
    docs = [
        {"id": "a", "score": 0.8, "content": "OTLP is the OpenTelemetry protocol."},
        {"id": "b", "score": 0.5, "content": "It has JSON."},
    ]
    spans = [
        span(1, 1, None, "invoke_agent rag", {"gen_ai.operation.name": "invoke_agent"}, end_ms=50),
        span(
            1,
            2,
            1,
            "retrieval kb",
            {
                "gen_ai.operation.name": "retrieval",
                "gen_ai.retrieval.query.text": "OTLP",
                "gen_ai.retrieval.documents": json.dumps(docs),
                "gen_ai.data_source.id": "kb",
            },
        ),
        span(
            1,
            3,
            1,
            "chat gpt",
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": "gpt-x",
                "gen_ai.response.model": "gpt-x-1",
                "gen_ai.usage.input_tokens": 30,
                "gen_ai.usage.output_tokens": 4,
                "gen_ai.input.messages": json.dumps(messages),
                "gen_ai.output.messages": json.dumps(output),
            },
            start_ms=10,
        ),
        # the same messages on the operation-details event instead of attributes, and older events
        span(2, 1, None, "root", {"gen_ai.operation.name": "invoke_agent"}),
        span(
            2, 2, 1, "retrieval", {"gen_ai.operation.name": "retrieval", "gen_ai.retrieval.documents": docs}
        ),
        span(
            2,
            3,
            1,
            "chat",
            {"gen_ai.operation.name": "chat"},
            events=[
                {
                    "name": "gen_ai.client.inference.operation.details",
                    "attributes": {
                        "gen_ai.input.messages": json.dumps(messages),
                        "gen_ai.output.messages": output,
                    },
                }
            ],
        ),
        span(3, 1, None, "root", {}),
        span(
            3, 2, 1, "retrieval", {"gen_ai.operation.name": "retrieval", "gen_ai.retrieval.documents": docs}
        ),
        span(
            3,
            3,
            1,
            "chat",
            {
                "gen_ai.system": "openai",
                "gen_ai.request.model": "m",
                "gen_ai.usage.prompt_tokens": 3,
                "gen_ai.usage.completion_tokens": 1,
            },
            events=[
                {
                    "name": "gen_ai.content.prompt",
                    "attributes": {
                        "gen_ai.prompt": json.dumps([{"role": "user", "content": "What is OTLP?"}])
                    },
                },
                {
                    "name": "gen_ai.content.completion",
                    "attributes": {
                        "gen_ai.completion": json.dumps([{"role": "assistant", "content": "A protocol."}])
                    },
                },
            ],
        ),
    ]
    ds = load_dataset(write_lines(tmp_path / "t.otlp.jsonl", [export(*spans)]))
    assert len(ds) == 3
    for s in ds:
        assert (s.question, s.answer) == ("What is OTLP?", "A protocol.")
        assert s.contexts == ("OTLP is the OpenTelemetry protocol.", "It has JSON.")
        assert s.context_ids == ("a", "b")
        assert s.metadata["trace"]["context_scores"] == [0.8, 0.5]
    assert ds[0].metadata["trace"]["model"] == "gpt-x-1"
    assert (ds[0].metadata["trace"]["prompt_tokens"], ds[0].metadata["trace"]["completion_tokens"]) == (30, 4)
    assert ds[2].metadata["trace"]["total_tokens"] == 4


def test_error_status_session_and_no_answer(tmp_path: Path) -> None:
    spans = rag_trace(1, "q", ["c"], "a")
    spans[1]["status"] = {"code": 2, "message": "rate limited"}
    spans[1]["attributes"] = [{"key": "openinference.span.kind", "value": {"stringValue": "LLM"}}]
    spans[2]["attributes"] = [
        {"key": "input.value", "value": {"stringValue": "q"}},
        {"key": "session.id", "value": {"stringValue": "s-1"}},
        {"key": "user.id", "value": {"stringValue": "u-1"}},
    ]
    (s,) = load_dataset(write_lines(tmp_path / "t.otlp.jsonl", [export(*spans)]))
    assert s.answer is None and s.question == "q"
    t = s.metadata["trace"]
    assert t["error"] == "llm: rate limited" and t["session_id"] == "s-1" and t["user_id"] == "u-1"
    assert "prompt_tokens" not in t


def test_a_trace_whose_root_never_arrived(tmp_path: Path) -> None:
    spans = rag_trace(1, "q", ["c"], "a")[:2]  # the root span is missing
    (s,) = load_dataset(write_lines(tmp_path / "t.otlp.jsonl", [export(*spans)]))
    assert s.question == "q" and s.contexts == ("c",) and s.answer == "a"
    assert s.metadata["trace"]["root_span"] == "retrieve"


def test_the_reader_streams(tmp_path: Path) -> None:
    """A sample comes as soon as its trace completes, before the rest of the file is read; the
    spans of a finished trace are not kept."""
    lines = [export(*rag_trace(i, f"q{i}", ["c"], "a")) for i in range(1, 6)]
    path = write_lines(tmp_path / "t.otlp.jsonl", lines)
    items = read_traces(path, str(path))
    row, first = next(items)
    assert row == 1 and first["question"] == "q1"
    frame = items.gi_frame
    assert frame is not None and len(frame.f_locals["open_traces"]) == 0
    assert [r for r, _ in items] == [2, 3, 4, 5]


def test_every_trace_skipped_is_an_error_for_the_file(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "t.otlp.jsonl",
        [export(span(1, 1, None, "embed", {"openinference.span.kind": "EMBEDDING"}))],
    )
    with pytest.raises(DatasetError, match="no usable row"):
        load_dataset(path)


def test_cli_evaluates_a_trace_file_and_shows_latency_and_tokens(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from ragmeter.cli.main import cli

    path = write_lines(
        tmp_path / "t.otlp.jsonl",
        [
            export(*rag_trace(i, f"question {i}?", [f"context {i}."], f"answer {i}.", tokens=(10 * i, i)))
            for i in (1, 2, 3)
        ]
        + [export(span(9, 1, None, "embed", {"openinference.span.kind": "EMBEDDING"}))],
    )
    result = CliRunner().invoke(
        cli,
        [
            "evaluate",
            str(path),
            "--metrics",
            "context_relevance",
            "--out",
            str(tmp_path / "runs"),
            "--no-progress",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "skipped rows 1" in result.output
    assert "traces: 3" in result.output
    assert "latency median 10 ms" in result.output
    assert "60 prompt + 6 completion" in result.output


def test_one_pretty_printed_export_request(tmp_path: Path) -> None:
    path = tmp_path / "export.json"
    path.write_text(
        json.dumps(export(*rag_trace(1, "q", ["c"], "a"), *rag_trace(2, "q2", ["c2"], "a2")), indent=2)
    )
    ds = load_dataset(path)
    assert [s.question for s in ds] == ["q", "q2"] and list(ds.rows) == [1, 1]


def test_a_trace_whose_llm_span_holds_a_chat_becomes_a_conversation(tmp_path: Path) -> None:
    doc = "The Eiffel Tower is 330 metres tall."
    spans = rag_trace(1, "How tall is it?", [doc], "330 metres.")
    chat = [
        ("system", "You are a travel guide."),
        ("system", "Answer from the context:\n" + doc),  # the stuffed context: not part of the chat
        ("user", "Tell me about the Eiffel Tower."),
        ("assistant", "It is a wrought-iron tower in Paris."),
        ("user", "How tall is it?"),
    ]
    llm = {"openinference.span.kind": "LLM", "llm.token_count.prompt": 40, "llm.token_count.completion": 3}
    for i, (role, content) in enumerate(chat):
        llm[f"llm.input_messages.{i}.message.role"] = role
        llm[f"llm.input_messages.{i}.message.content"] = content
    spans[1] = span(1, 3, 1, "llm", llm, start_ms=4, end_ms=9)
    ds = load_dataset(write_lines(tmp_path / "t.otlp.jsonl", [export(*spans)]))
    conversation, turn = ds
    assert conversation.id == conversation.conversation_id == trace_id(1) and conversation.turn is None
    assert [(m.role, m.content) for m in conversation.messages] == [
        ("system", "You are a travel guide."),
        ("user", "Tell me about the Eiffel Tower."),
        ("assistant", "It is a wrought-iron tower in Paris."),
        ("user", "How tall is it?"),
        ("assistant", "330 metres."),
    ]
    assert conversation.metadata == {"trace_id": trace_id(1)}
    assert (turn.id, turn.turn, turn.question, turn.answer, turn.contexts) == (
        f"{trace_id(1)}:2",
        2,
        "How tall is it?",
        "330 metres.",
        (doc,),
    )
    assert [(m.role, m.content) for m in turn.history] == [
        ("user", "Tell me about the Eiffel Tower."),
        ("assistant", "It is a wrought-iron tower in Paris."),
    ]
    assert turn.metadata["trace"]["latency_ms"] == 10.0 and turn.metadata["trace"]["prompt_tokens"] == 40


def test_without_the_traces_extra_the_error_names_the_pip_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    from ragmeter.errors import ConfigError

    path = write_lines(tmp_path / "t.otlp.jsonl", [export(*rag_trace(1, "q", ["c"], "a"))])
    monkeypatch.setitem(sys.modules, "opentelemetry.proto.collector.trace.v1", None)
    with pytest.raises(ConfigError, match=r"pip install 'ragmeter\[traces\]'"):
        load_dataset(path)
