"""Conversation rows: the OpenAI chat format, Ragas MultiTurnSample, DeepEval conversational test
cases -> a conversation sample and one sample per answered turn with contexts."""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from ragmeter.dataset import Sample, load_dataset
from ragmeter.dataset.conversations import HISTORY_LIMIT, conversation_samples, tool_result_contexts
from ragmeter.dataset.keys import conversation_text_key, sample_keys
from ragmeter.dataset.messages import ChatMessage, ToolCall

SEARCH = {
    "id": "t1",
    "type": "function",
    "function": {"name": "search", "arguments": '{"q": "Eiffel Tower"}'},
}
OPENAI = {
    "id": "c1",
    "messages": [
        {"role": "system", "content": "You are a travel guide."},
        {"role": "user", "content": "Tell me about the Eiffel Tower."},
        {"role": "assistant", "content": None, "tool_calls": [SEARCH]},
        {
            "role": "tool",
            "tool_call_id": "t1",
            "content": json.dumps(
                ["The Eiffel Tower is a lattice tower in Paris.", "It was completed in 1889."]
            ),
        },
        {"role": "assistant", "content": "A lattice tower in Paris, completed in 1889.", "latency_ms": 120},
        {"role": "user", "content": "How tall is it?"},
        {
            "role": "assistant",
            "content": "It is 330 metres tall.",
            "contexts": ["The tower is 330 metres tall."],
            "reference": "330 m",
        },
        {"role": "user", "content": "Thanks!"},
        {"role": "assistant", "content": "You're welcome."},
    ],
    "reference": "The user learns the tower's history and height.",
    "team": "travel",
}


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def test_openai_chat_becomes_a_conversation_and_its_retrieval_turns() -> None:
    ds = load_dataset([OPENAI])
    assert [(s.id, s.level, s.turn) for s in ds] == [
        ("c1", "conversation", None),
        ("c1:1", "sample", 1),
        ("c1:2", "sample", 2),
    ]  # turn 3 ("Thanks!") has no contexts: it is in the conversation only
    conv, t1, t2 = ds
    assert conv.conversation_id == "c1" and conv.reference == OPENAI["reference"]
    assert conv.metadata == {"team": "travel"}
    assert [m.role for m in conv.messages or ()] == [m["role"] for m in OPENAI["messages"]]
    assert conv.messages is not None and conv.messages[2].tool_calls == (
        ToolCall("search", '{"q": "Eiffel Tower"}', "t1"),
    )
    assert conv.system_prompt == "You are a travel guide."
    # the tool's results are the contexts of the answer that follows them
    assert t1.question == "Tell me about the Eiffel Tower."
    assert t1.contexts == ("The Eiffel Tower is a lattice tower in Paris.", "It was completed in 1889.")
    assert t1.answer == "A lattice tower in Paris, completed in 1889."
    assert t1.history == () and t1.metadata == {"latency_ms": 120}
    # an assistant message's own contexts; its reference is the turn's
    assert t2.question == "How tall is it?" and t2.contexts == ("The tower is 330 metres tall.",)
    assert t2.reference == "330 m"
    assert t2.history == (
        ChatMessage("user", "Tell me about the Eiffel Tower."),
        ChatMessage("assistant", "A lattice tower in Paris, completed in 1889."),
    )
    assert ds.generated_ids == frozenset()
    # samples survive the run store's JSON
    assert all(Sample.from_dict(json.loads(json.dumps(s.to_dict()))) == s for s in ds)


def test_plain_samples_keep_their_record() -> None:
    s = load_dataset([{"id": "a", "question": "q", "contexts": ["c"], "answer": "a"}])[0]
    assert set(s.to_dict()) == {
        "question",
        "contexts",
        "answer",
        "reference",
        "reference_contexts",
        "context_ids",
        "reference_context_ids",
        "metadata",
        "id",
    }  # the dataset hash of data without conversations is what it was
    assert s.level == "sample" and s.system_prompt == ""


def test_tool_results_are_split_into_documents() -> None:
    assert tool_result_contexts('["a", "b", " "]') == ["a", "b"]
    assert tool_result_contexts('[{"page_content": "x", "score": 1}, {"text": "y"}]') == ["x", "y"]
    assert tool_result_contexts('{"documents": [{"content": "d1"}, "d2"]}') == ["d1", "d2"]
    assert tool_result_contexts('{"temperature": 21}') == ['{"temperature": 21}']
    assert tool_result_contexts("Paris is in France.") == ["Paris is in France."]
    assert tool_result_contexts("[not json") == ["[not json"] and tool_result_contexts("  ") == []


def test_openai_variants_content_parts_developer_role_and_legacy_function_call() -> None:
    row = {
        "messages": [
            {"role": "developer", "content": "Be brief."},
            {
                "role": "user",
                "content": [{"type": "text", "text": "Who wrote"}, {"type": "text", "text": "Hamlet?"}],
            },
            {"role": "assistant", "content": None, "function_call": {"name": "lookup", "arguments": "{}"}},
            {"role": "function", "name": "lookup", "content": "Hamlet is a tragedy by William Shakespeare."},
            {"role": "assistant", "content": "Shakespeare."},
        ]
    }
    conv, turn = load_dataset([row])
    assert conv.messages is not None and conv.messages[0].role == "system" and conv.messages[3].role == "tool"
    assert turn.question == "Who wrote\nHamlet?" and turn.turn == 1 and turn.answer == "Shakespeare."
    assert conv.messages[2].tool_calls == (ToolCall("lookup", "{}"),)
    assert turn.contexts == ("Hamlet is a tragedy by William Shakespeare.",)


def test_consecutive_user_messages_are_one_turn_and_the_last_answer_counts() -> None:
    msgs = [
        ChatMessage("user", "Hi."),
        ChatMessage("user", "What is RAG?"),
        ChatMessage("assistant", "Let me look.", tool_calls=(ToolCall("search"),)),
        ChatMessage("tool", "RAG is retrieval-augmented generation."),
        ChatMessage("assistant", "Retrieval-augmented generation."),
    ]
    _conv, turn = conversation_samples("x", msgs)
    assert turn.question == "Hi.\nWhat is RAG?" and turn.answer == "Retrieval-augmented generation."
    assert turn.id == "x:1" and turn.contexts == ("RAG is retrieval-augmented generation.",)


def test_history_is_the_recent_dialogue_only() -> None:
    msgs: list[ChatMessage] = []
    for i in range(30):
        msgs += [
            ChatMessage("user", f"question {i}"),
            ChatMessage("assistant", f"answer {i}", contexts=("c",)),
        ]
    last = conversation_samples("long", msgs)[-1]
    assert last.turn == 30 and last.history is not None and len(last.history) == HISTORY_LIMIT
    assert last.history[-1] == ChatMessage("assistant", "answer 28")


RAGAS = {
    "user_input": [
        {"content": "What is the capital of France?", "type": "human"},
        {
            "content": "",
            "type": "ai",
            "tool_calls": [{"name": "retrieve", "args": {"q": "capital of France"}}],
        },
        {"content": "Paris is the capital of France.", "type": "tool"},
        {"content": "Paris.", "type": "ai"},
        {"content": "And its population?", "type": "human"},
        {"content": "About two million people live in Paris.", "type": "ai", "metadata": None},
    ],
    "reference": "Paris; about 2.1 million",
    "reference_topics": ["geography"],
}


def test_ragas_multi_turn_rows_as_to_jsonl_and_to_csv_write_them(tmp_path: Path) -> None:
    ds = load_dataset(write_jsonl(tmp_path / "ragas.jsonl", [RAGAS]))
    conv, turn = ds
    assert conv.reference == "Paris; about 2.1 million" and conv.metadata == {}
    assert conv.reference_topics == ("geography",)  # an agent's allowed topics (docs/agents.md)
    assert conv.messages is not None and conv.messages[1].tool_calls == (
        ToolCall("retrieve", '{"q": "capital of France"}'),
    )
    assert turn.contexts == ("Paris is the capital of France.",) and turn.answer == "Paris."
    assert conv.id == "1" and ds.generated_ids == {"1", "1:1"}
    # EvaluationDataset.to_csv writes the message list as its Python repr
    path = tmp_path / "ragas.csv"
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=["user_input", "reference"])
        writer.writeheader()
        writer.writerow({"user_input": str(RAGAS["user_input"]), "reference": RAGAS["reference"]})
    from_csv = load_dataset(path)
    assert [s.contexts for s in from_csv] == [s.contexts for s in ds]
    assert from_csv[0].messages == conv.messages


class _Model:
    """A pydantic-like object: what duck typing sees of a Ragas or DeepEval model."""

    def __init__(self, **data: Any) -> None:
        self.__dict__.update(data)
        self._data = data

    def model_dump(self) -> dict[str, Any]:
        return {k: v.model_dump() if isinstance(v, _Model) else _dump_list(v) for k, v in self._data.items()}


def _dump_list(value: Any) -> Any:
    if isinstance(value, list):
        return [v.model_dump() if isinstance(v, _Model) else v for v in value]
    return value


def test_ragas_objects_are_read_by_duck_typing() -> None:
    messages = [_Model(**m) for m in RAGAS["user_input"]]
    sample = _Model(user_input=messages, reference=RAGAS["reference"])
    dataset = _Model(samples=[sample])  # an EvaluationDataset
    assert [s.contexts for s in load_dataset(dataset)] == [(), ("Paris is the capital of France.",)]
    assert len(load_dataset(sample)) == 2  # one MultiTurnSample alone
    # AIMessage.to_dict() packs text and tool calls into the content
    packed = {
        "content": json.dumps({"text": "", "tool_calls": [{"name": "retrieve", "args": {}}]}),
        "type": "ai",
    }
    rows = [{"user_input": [RAGAS["user_input"][0], packed, *RAGAS["user_input"][2:4]]}]
    conv, _ = load_dataset(rows)
    assert conv.messages is not None and conv.messages[1].tool_calls == (ToolCall("retrieve", "{}"),)


DEEPEVAL = {
    "name": "lib-7",
    "chatbot_role": "You are a patient librarian.",
    "scenario": "A reader looks for a play.",
    "expected_outcome": "The reader learns who wrote Hamlet.",
    "turns": [
        {"role": "user", "content": "Who wrote Hamlet?"},
        {
            "role": "assistant",
            "content": "William Shakespeare.",
            "retrieval_context": [
                "Hamlet is a tragedy by William Shakespeare.",
                {"context": "c2", "source": "s"},
            ],
        },
        {"role": "user", "content": "When?"},
        {
            "role": "assistant",
            "content": "Around 1600.",
            "toolsCalled": [
                {"name": "catalog", "inputParameters": {"q": "Hamlet"}, "output": "Written c. 1600."}
            ],
        },
    ],
}


def test_deepeval_conversational_test_case() -> None:
    ds = load_dataset([DEEPEVAL])
    conv, t1, t2 = ds
    assert conv.id == "lib-7" and conv.reference == "The reader learns who wrote Hamlet."
    assert conv.system_prompt == "You are a patient librarian."
    assert conv.metadata == {"scenario": "A reader looks for a play."}
    assert t1.contexts == ("Hamlet is a tragedy by William Shakespeare.", "c2")
    # a called tool's output is a tool message: the contexts of the answer
    assert t2.contexts == ("Written c. 1600.",) and t2.history is not None and len(t2.history) == 2
    assert conv.messages is not None and [m.role for m in conv.messages] == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "tool",
        "assistant",
    ]


@dataclass
class _OldTurn:
    input: str
    actual_output: str
    retrieval_context: list[str] = field(default_factory=list)
    expected_output: str | None = None


@dataclass
class _OldCase:
    turns: list[_OldTurn]


def test_deepeval_older_turns_of_test_cases() -> None:
    case = _OldCase(
        [_OldTurn("Who wrote Hamlet?", "Shakespeare.", ["Hamlet is by Shakespeare."], "Shakespeare")]
    )
    _conv, turn = load_dataset([case])
    assert turn.question == "Who wrote Hamlet?" and turn.reference == "Shakespeare"
    assert turn.contexts == ("Hamlet is by Shakespeare.",)


def test_dataframe_and_parquet_with_nested_messages(tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    df = pd.DataFrame([{"id": "c1", "messages": OPENAI["messages"]}])
    path = tmp_path / "chats.parquet"
    df.to_parquet(path)
    # Parquet gives nested arrays and fills absent keys with None
    for data in (df, path):
        ds = load_dataset(data)
        assert [s.id for s in ds] == ["c1", "c1:1", "c1:2"]
        assert ds[2].contexts == ("The tower is 330 metres tall.",) and ds[2].reference == "330 m"


@pytest.mark.parametrize(
    ("row", "field", "message"),
    [
        ({"messages": [{"role": "user", "content": "hi"}, {"role": "robot", "content": "x"}]},
         "messages[1].role", "unknown role"),
        ({"messages": [{"role": "user", "content": 3}]}, "messages[0].content", "expected text"),
        ({"messages": ["hello"]}, "messages[0]", "expected a message object"),
        ({"messages": [{"role": "assistant", "content": "hi"}]}, "messages", "no user message"),
        ({"messages": []}, "messages", "no messages"),
        ({"messages": [{"role": "user", "content": "q"}, {"role": "tool", "content": "r"}]}, "messages[1]", "before any"),
        (
            {"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": None, "tool_calls": [SEARCH]},
                          {"role": "tool", "tool_call_id": "t9", "content": "r"}]},
            "messages[2].tool_call_id",
            "answers no earlier tool call",
        ),
        ({"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a", "tool_calls": [{"id": 1}]}]},
         "messages[1].tool_calls[0]", "without a name"),
        ({"user_input": [{"content": "q", "type": "martian"}]}, "user_input[0].type", "unknown role"),
        ({"turns": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a", "retrieval_context": [1]}]},
         "turns[1].retrieval_context", "list of strings"),
        ({"messages": [{"role": "user", "content": "bad \udcff byte"}]}, "messages[0].content", "invalid UTF-8"),
    ],
)  # fmt: skip
def test_bad_conversations_are_named_by_file_row_and_message(
    tmp_path: Path, row: dict[str, Any], field: str, message: str
) -> None:
    path = tmp_path / "chats.jsonl"
    good = {"id": "ok", "messages": OPENAI["messages"]}
    lines = [json.dumps(good), json.dumps(row, ensure_ascii=False)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogateescape")
    ds = load_dataset(path)
    assert [s.id for s in ds] == ["ok", "ok:1", "ok:2"]  # the good conversation is kept whole
    (problem,) = ds.problems
    assert (problem.file, problem.row, problem.field) == (str(path), 2, field)
    assert message in problem.message


def test_a_duplicate_conversation_id_drops_the_later_conversation() -> None:
    ds = load_dataset([OPENAI, {**OPENAI, "team": "other"}])
    assert len(ds) == 3 and "duplicate id 'c1'" in ds.problems[0].message


def test_limit_counts_a_conversation_as_one_row() -> None:
    ds = load_dataset([OPENAI, {**OPENAI, "id": "c2"}, {"question": "q"}], limit=2)
    assert [s.conversation_id for s in ds] == ["c1"] * 3 + ["c2"] * 3


def test_keys_are_conversation_and_turn() -> None:
    ds = load_dataset([OPENAI])
    assert sample_keys(ds.samples, ds.generated_ids) == ["id:c1", "id:c1/turn:1", "id:c1/turn:2"]
    # without an id, the conversation is keyed by its user messages: reordering keeps the keys
    a = {"messages": OPENAI["messages"]}
    b = {
        "messages": [
            {"role": "user", "content": "Other?"},
            {"role": "assistant", "content": "x", "contexts": ["c"]},
        ]
    }
    one, two = load_dataset([a, b]), load_dataset([b, a])
    keys_one = sample_keys(one.samples, one.generated_ids)
    keys_two = sample_keys(two.samples, two.generated_ids)
    assert keys_one[3:] + keys_one[:3] == keys_two and len(set(keys_one)) == 5
    base = conversation_text_key(["Tell me about the Eiffel Tower.", "How tall is it?", "Thanks!"])
    assert sample_keys(one.samples, one.generated_ids)[:3] == [base, base + "/turn:1", base + "/turn:2"]


def test_samples_built_in_code_keep_their_conversation_fields() -> None:
    built = conversation_samples(
        "z", [ChatMessage("user", "q?"), ChatMessage("assistant", "a.", contexts=("c",))]
    )
    ds = load_dataset(built)
    assert list(ds) == built
    bad = Sample(question="q", conversation_id="z", turn=1, history=(ChatMessage("user", "\udcff"),))
    assert load_dataset([built[0], bad]).problems[0].field == "history[0].content"


def test_map_names_the_id_column_of_conversations() -> None:
    row = {
        "chat_id": "x9",
        "messages": [
            {"role": "user", "content": "q?"},
            {"role": "assistant", "content": "a", "contexts": ["c"]},
        ],
    }
    ds = load_dataset([row], mapping={"id": "chat_id"})
    assert [s.id for s in ds] == ["x9", "x9:1"] and ds.generated_ids == frozenset() and ds[0].metadata == {}
