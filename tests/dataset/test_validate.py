from __future__ import annotations

import math

import pytest

from ragmeter.dataset import Dataset, Sample, require, rows_of, validate_for
from ragmeter.dataset.validate import DatasetErrors, LoadedDataset, check_sample, is_missing, to_sample
from ragmeter.errors import ConfigError, DatasetError


def make(record: dict, **kw) -> Sample:
    return to_sample(record, row=kw.pop("row", 3), file=kw.pop("file", "f.jsonl"), **kw)


def err(record: dict, **kw) -> DatasetError:
    with pytest.raises(DatasetError) as e:
        make(record, **kw)
    return e.value


def test_full_record() -> None:
    s = make({"id": "s1", "question": "q", "contexts": ["a", "b"], "answer": "x", "reference": "r", "k": 1})
    assert s == Sample(
        question="q", contexts=("a", "b"), answer="x", reference="r", metadata={"k": 1}, id="s1"
    )


def test_missing_optional_fields_and_default_id() -> None:
    s = make({"question": "q"}, row=12)
    assert s.id == "12"
    assert s.contexts == () and s.answer is None and s.reference is None


@pytest.mark.parametrize("missing", [None, float("nan")])
def test_missing_values(missing: object) -> None:
    s = make({"question": "q", "answer": missing, "contexts": missing, "reference_contexts": missing})
    assert s.answer is None and s.contexts == () and s.reference_contexts is None


def test_is_missing_variants() -> None:
    import numpy as np
    import pandas as pd

    assert is_missing(None) and is_missing(math.nan) and is_missing(np.float32("nan"))
    assert is_missing(pd.NA) and is_missing(pd.NaT)
    assert not is_missing("") and not is_missing(0) and not is_missing([])


def test_number_in_text_field_is_type_error() -> None:
    e = err({"question": "q", "answer": 42})
    assert (e.file, e.row, e.field) == ("f.jsonl", 3, "answer")
    assert "expected text, got int" in e.message


def test_bool_in_text_field_is_type_error() -> None:
    assert err({"question": True}).field == "question"


def test_error_field_is_the_input_column_name() -> None:
    e = err({"user_input": ["not", "text"]})
    assert e.field == "user_input"
    assert "expected text, got list" in e.message


@pytest.mark.parametrize(("value", "expected"), [(7, "7"), (7.0, "7"), ("  a ", "a"), (2.5, "2.5")])
def test_ids_are_stringified(value: object, expected: str) -> None:
    assert make({"id": value, "question": "q"}).id == expected


def test_bad_id_types() -> None:
    assert err({"id": True}).field == "id"
    assert err({"id": {"a": 1}}).field == "id"


def test_contexts_single_string_is_one_context() -> None:
    assert make({"contexts": "just one"}).contexts == ("just one",)


def test_contexts_encoded_list_strings() -> None:
    assert make({"contexts": '["a", "b"]'}).contexts == ("a", "b")
    assert make({"contexts": "['a', \"b's\"]"}).contexts == ("a", "b's")
    # brackets that are not a list stay one context
    assert make({"contexts": "[citation needed] text"}).contexts == ("[citation needed] text",)


def test_contexts_tuple_and_numpy_array() -> None:
    import numpy as np

    assert make({"contexts": ("a", "b")}).contexts == ("a", "b")
    assert make({"contexts": np.array(["a", "b"], dtype=object)}).contexts == ("a", "b")


def test_contexts_with_non_string_item_is_error() -> None:
    e = err({"contexts": ["ok", 3]})
    assert e.field == "contexts" and "item 1 is int" in e.message


def test_contexts_wrong_container() -> None:
    e = err({"contexts": {"a": 1}})
    assert e.field == "contexts" and "expected a list of strings" in e.message


def test_id_lists_accept_numbers() -> None:
    s = make({"context_ids": [1, "d2", 3.0], "retrieved_context_ids": None})
    assert s.context_ids == ("1", "d2", "3")


def test_empty_text_only_an_error_when_required() -> None:
    s = make({"question": "q", "answer": "   "})
    assert s.answer == "   "
    e = err({"question": "q", "answer": "  "}, required_fields=["answer"])
    assert e.field == "answer" and "empty text" in e.message


def test_required_missing_field_names_all_missing() -> None:
    e = err({"question": "q"}, required_fields=["question", "answer", "contexts"])
    assert e.field == "answer"
    assert "answer is missing" in e.message and "contexts is missing" in e.message


def test_required_contexts_all_blank() -> None:
    e = err({"contexts": ["", "  "]}, required_fields=["contexts"])
    assert e.field == "contexts" and "empty" in e.message


def test_lone_surrogate_is_error() -> None:
    e = err({"question": "bad \ud800 text"})
    assert e.field == "question" and "lone surrogate U+D800" in e.message


def test_undecodable_byte_is_invalid_utf8() -> None:
    raw = b"caf\xe9".decode("utf-8", errors="surrogateescape")
    e = err({"contexts": ["fine", raw]})
    assert e.field == "contexts[1]" and "invalid UTF-8 (byte 0xE9" in e.message


def test_invalid_bytes_value_and_metadata_checked() -> None:
    assert err({"question": b"\xff\xfe"}).field == "question"
    assert make({"question": "长江".encode()}).question == "长江"
    assert err({"question": "q", "note": "x\udcff"}).field == "note"


def test_metadata_is_json_safe() -> None:
    import numpy as np
    import pandas as pd

    s = make(
        {
            "question": "q",
            "score": np.float64(0.5),
            "n": np.int64(3),
            "gone": float("nan"),
            "arr": np.array([1, 2]),
            "when": pd.Timestamp("2024-01-02"),
        }
    )
    assert s.metadata == {"score": 0.5, "n": 3, "gone": None, "arr": [1, 2], "when": "2024-01-02T00:00:00"}
    assert type(s.metadata["n"]) is int


def test_nested_metadata_column_is_merged() -> None:
    s = make({"question": "q", "metadata": {"a": 1}, "b": 2})
    assert s.metadata == {"a": 1, "b": 2}
    s2 = make({"question": "q", "metadata": '{"a": 1}'})
    assert s2.metadata == {"a": 1}


def test_round_trip_of_sample_to_dict() -> None:
    s = Sample(question="q", contexts=("c",), answer="a", context_ids=("1",), metadata={"k": "v"}, id="z")
    assert make(s.to_dict()) == s


def test_non_mapping_record() -> None:
    e = err(["not", "a", "dict"])  # type: ignore[arg-type]
    assert e.row == 3 and e.field is None


def test_check_sample_validates_built_samples() -> None:
    s = Sample(question="q", answer=5)  # type: ignore[arg-type]
    with pytest.raises(DatasetError) as e:
        check_sample(s, row=2, file="<samples>")
    assert (e.value.row, e.value.field) == (2, "answer")
    ok = check_sample(Sample(question="q"), row=4)
    assert ok.id == "4"


def test_validate_for_names_rows_and_metrics() -> None:
    samples = [Sample(question="q", contexts=("c",), answer="a"), Sample(question="q")]
    needs = {"answer": ["faithfulness"], "contexts": ["x"]}
    problems = validate_for([(5, samples[0]), (9, samples[1])], needs)
    assert len(problems) == 1
    p = problems[0]
    assert (p.row, p.field) == (9, "answer")
    assert "needed by faithfulness" in p.message


def test_validate_for_dataset_uses_rows_and_source() -> None:
    ds = LoadedDataset(samples=(Sample(question="q"), Sample(question="")), source="d.jsonl", rows=(2, 7))
    [p] = validate_for(ds, ["question"])
    assert (p.file, p.row, p.field) == ("d.jsonl", 7, "question")
    assert rows_of(Dataset(samples=(Sample(), Sample()))) == (1, 2)


def test_validate_for_unknown_field_is_config_error() -> None:
    with pytest.raises(ConfigError, match="answr"):
        validate_for([], ["answr"])


def test_require_drops_rows_and_strict_raises() -> None:
    ds = LoadedDataset(
        samples=(Sample(question="q", answer="a", id="1"), Sample(question="q", id="2")),
        source="d.jsonl",
        rows=(1, 4),
    )
    kept = require(ds, ["answer"])
    assert [s.id for s in kept] == ["1"]
    assert rows_of(kept) == (1,)
    assert kept.n_skipped == 1 and kept.problems[0].row == 4
    assert require(ds, ["question"]) is ds
    with pytest.raises(DatasetErrors) as e:
        require(ds, ["answer"], strict=True)
    assert len(e.value.problems) == 1 and "row 4" in str(e.value)


def test_empty_text_in_an_aliased_column_names_the_column() -> None:
    e = err({"user_input": "q", "response": ""}, required_fields=["answer"])
    assert e.field == "response" and "empty text" in e.message
    e2 = err({"user_input": "q"}, required_fields=["answer"])
    assert e2.field == "answer" and "missing required field" in e2.message
