from __future__ import annotations

import pytest

from ragmeter.dataset import load_dataset, parse_mapping
from ragmeter.dataset.columns import ColumnResolver, check_mapping, normalize_column
from ragmeter.errors import ConfigError

RAGAS = {
    "user_input": "What is RAG?",
    "retrieved_contexts": ["RAG retrieves passages.", "Then it generates."],
    "response": "Retrieval-augmented generation.",
    "reference": "Retrieval-augmented generation.",
    "reference_contexts": ["RAG retrieves passages."],
    "retrieved_context_ids": ["d1", "d2"],
    "reference_context_ids": ["d1"],
}

LLAMAINDEX = {
    "query": "What is RAG?",
    "contexts": ["RAG retrieves passages."],
    "response": "Retrieval-augmented generation.",
    "reference_answer": "Retrieval-augmented generation.",
    "reference_contexts": ["RAG retrieves passages."],
    "query_by": {"model_name": "gpt-4", "type": "ai"},
}


def test_ragas_names_map_to_every_field() -> None:
    s = load_dataset([RAGAS])[0]
    assert s.question == "What is RAG?"
    assert s.contexts == ("RAG retrieves passages.", "Then it generates.")
    assert s.answer == "Retrieval-augmented generation."
    assert s.reference == "Retrieval-augmented generation."
    assert s.reference_contexts == ("RAG retrieves passages.",)
    assert s.context_ids == ("d1", "d2")
    assert s.reference_context_ids == ("d1",)
    assert dict(s.metadata) == {}


def test_llamaindex_names_map_and_extras_go_to_metadata() -> None:
    s = load_dataset([LLAMAINDEX])[0]
    assert s.question == "What is RAG?"
    assert s.contexts == ("RAG retrieves passages.",)
    assert s.answer == "Retrieval-augmented generation."
    assert s.reference == "Retrieval-augmented generation."
    assert s.reference_contexts == ("RAG retrieves passages.",)
    assert s.metadata["query_by"] == {"model_name": "gpt-4", "type": "ai"}


def test_our_names_and_id_aliases() -> None:
    rows = [
        {"sample_id": 7, "question": "q", "contexts": ["c"], "answer": "a", "ground_truth": "r"},
        {"id": "x", "question": "q2", "contexts": ["c"], "answer": "a", "reference": "r2"},
    ]
    ds = load_dataset(rows)
    assert [s.id for s in ds] == ["7", "x"]
    assert [s.reference for s in ds] == ["r", "r2"]


def test_ground_truths_list_takes_first_and_keeps_all_in_metadata() -> None:
    one, many = load_dataset(
        [
            {"question": "q", "ground_truths": ["only"]},
            {"question": "q", "ground_truths": ["first", "second"]},
        ]
    )
    assert one.reference == "only" and "ground_truths" not in one.metadata
    assert many.reference == "first"
    assert many.metadata["ground_truths"] == ["first", "second"]


def test_our_name_wins_over_alias_and_loser_goes_to_metadata() -> None:
    s = load_dataset([{"question": "ours", "user_input": "ragas", "query": "llama", "answer": "a"}])[0]
    assert s.question == "ours"
    assert s.metadata == {"user_input": "ragas", "query": "llama"}


def test_ragas_wins_over_llamaindex_name() -> None:
    s = load_dataset([{"user_input": "ragas", "query": "llama"}])[0]
    assert s.question == "ragas"
    assert s.metadata == {"query": "llama"}


def test_case_and_spacing_insensitive_fallback() -> None:
    s = load_dataset([{"Question": "q", "Ground Truth": "r", "Answer": "a", "extra col": 1}])[0]
    assert (s.question, s.reference, s.answer) == ("q", "r", "a")
    assert s.metadata == {"extra col": 1}
    assert normalize_column(" Ground-Truth ") == "ground_truth"


def test_exact_name_beats_case_variant() -> None:
    s = load_dataset([{"Question": "upper", "question": "exact"}])[0]
    assert s.question == "exact"
    assert s.metadata == {"Question": "upper"}


def test_user_mapping_overrides_aliases() -> None:
    rows = [{"question": "not this", "my_q": "this one", "response": "a", "gold": "r"}]
    s = load_dataset(rows, mapping={"question": "my_q", "reference": "gold"})[0]
    assert s.question == "this one"
    assert s.reference == "r"
    assert s.answer == "a"
    assert s.metadata == {"question": "not this"}


def test_mapping_can_claim_a_column_another_field_would_take() -> None:
    # map reference to the column called "answer"; answer then falls back to "response"
    rows = [{"question": "q", "answer": "gold", "response": "model"}]
    s = load_dataset(rows, mapping={"reference": "answer"})[0]
    assert s.reference == "gold"
    assert s.answer == "model"


def test_mapping_to_missing_column_is_config_error_listing_columns(tmp_path) -> None:
    p = tmp_path / "d.jsonl"
    p.write_text('{"q": "x", "a": "y"}\n', encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_dataset(p, mapping={"question": "nope"})
    msg = str(err.value)
    assert "'nope'" in msg and "'q'" in msg and "'a'" in msg and str(p) in msg


def test_check_mapping_passes_when_present() -> None:
    check_mapping({"question": "q"}, ["q", "a"])


def test_parse_mapping_cli_items() -> None:
    assert parse_mapping(["question=my q", " answer = out "]) == {"question": "my q", "answer": "out"}
    assert parse_mapping(None) == {}
    assert parse_mapping({"id": "uid"}) == {"id": "uid"}


@pytest.mark.parametrize(
    ("items", "needle"),
    [
        (["question"], "FIELD=COLUMN"),
        (["=col"], "FIELD=COLUMN"),
        (["question="], "FIELD=COLUMN"),
        (["questoin=x"], "unknown field 'questoin'"),
        (["user_input=x"], "did you mean 'question'"),
        (["question=a", "question=b"], "mapped twice"),
    ],
)
def test_parse_mapping_errors(items: list[str], needle: str) -> None:
    with pytest.raises(ConfigError, match=needle):
        parse_mapping(items)


def test_resolver_caches_plans_per_key_set() -> None:
    r = ColumnResolver()
    p1 = r.plan(["question", "answer"])
    assert r.plan(["question", "answer"]) is p1
    assert r.plan(["query"]) == {"question": "query"}
