from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter.dataset import Dataset, DatasetErrors, Sample, load_dataset, rows_of
from ragmeter.errors import ConfigError, DatasetError

ROWS: list[dict[str, Any]] = [
    {"id": "a", "question": "What is the capital of France?", "contexts": ["Paris is the capital of France."],
     "answer": "Paris.", "reference": "Paris", "topic": "geo"},
    {"id": "b", "question": "长江有多长？", "contexts": ["长江全长约6300公里。", "长江在上海注入东海。"],
     "answer": "约6300公里。", "reference": "约6300公里", "topic": "地理"},
    {"id": "c", "question": "Who wrote Hamlet?", "contexts": ["Hamlet is a tragedy by William Shakespeare."],
     "answer": "Shakespeare.", "reference": "William Shakespeare", "topic": "lit"},
]  # fmt: skip


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def check_rows(ds: Dataset) -> None:
    assert [s.id for s in ds] == ["a", "b", "c"]
    assert ds[1].question == "长江有多长？"
    assert ds[1].contexts == ("长江全长约6300公里。", "长江在上海注入东海。")
    assert ds[0].metadata == {"topic": "geo"}
    assert ds.n_skipped == 0


# --------------------------------------------------------------------------- file types


@pytest.mark.parametrize("suffix", [".jsonl", ".ndjson", ".JSONL"])
def test_jsonl(tmp_path: Path, suffix: str) -> None:
    p = write_jsonl(tmp_path / f"d{suffix}", ROWS)
    ds = load_dataset(p)
    check_rows(ds)
    assert ds.source == str(p)
    assert rows_of(ds) == (1, 2, 3)


def test_jsonl_rows_are_line_numbers_and_blank_lines_skip(tmp_path: Path) -> None:
    p = tmp_path / "d.jsonl"
    lines = [json.dumps({"question": "q1"}), "", "   ", json.dumps({"question": "q2"})]
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    ds = load_dataset(str(p))
    assert rows_of(ds) == (1, 4)
    assert [s.id for s in ds] == ["1", "4"]


def test_jsonl_with_bom_and_crlf(tmp_path: Path) -> None:
    p = tmp_path / "d.jsonl"
    p.write_bytes(b"\xef\xbb\xbf" + b'{"question": "q1"}\r\n{"question": "q2"}\r\n')
    assert [s.question for s in load_dataset(p)] == ["q1", "q2"]


@pytest.mark.parametrize(
    "doc",
    [
        ROWS,
        {"samples": ROWS},
        {"data": ROWS},
        {"examples": ROWS},
        {k: [r[k] for r in ROWS] for k in ROWS[0]},  # columns
    ],
    ids=["list", "samples", "data", "examples", "columns"],
)
def test_json_shapes(tmp_path: Path, doc: Any) -> None:
    p = tmp_path / "d.json"
    p.write_text(json.dumps(doc, ensure_ascii=False, indent=2), encoding="utf-8")
    check_rows(load_dataset(p))


def test_json_single_record(tmp_path: Path) -> None:
    p = tmp_path / "d.json"
    p.write_text(json.dumps(ROWS[0]), encoding="utf-8")
    assert [s.id for s in load_dataset(p)] == ["a"]


def test_json_file_holding_json_lines(tmp_path: Path) -> None:
    p = write_jsonl(tmp_path / "d.json", ROWS)  # as Hugging Face to_json writes
    check_rows(load_dataset(p))


def test_json_non_object_record_is_a_row_problem(tmp_path: Path) -> None:
    p = tmp_path / "d.json"
    p.write_text(json.dumps([ROWS[0], "oops", ROWS[2]]), encoding="utf-8")
    ds = load_dataset(p)
    assert [s.id for s in ds] == ["a", "c"]
    assert ds.problems[0].row == 2


def test_broken_json_document(tmp_path: Path) -> None:
    p = tmp_path / "d.json"
    p.write_text('[{"question": "q"},\n {"question": ]', encoding="utf-8")
    with pytest.raises(DatasetError) as e:
        load_dataset(p)
    assert e.value.file == str(p) and "line 2" in e.value.message


def test_llamaindex_json_export(tmp_path: Path) -> None:
    export = {
        "examples": [
            {"query": "Q1?", "query_by": {"model_name": "gpt-4", "type": "ai"},
             "reference_contexts": ["ctx"], "reference_answer": "A1", "reference_answer_by": None},
        ]
    }  # fmt: skip
    p = tmp_path / "rag_dataset.json"
    p.write_text(json.dumps(export), encoding="utf-8")
    s = load_dataset(p)[0]
    assert (s.question, s.reference, s.reference_contexts) == ("Q1?", "A1", ("ctx",))
    assert s.metadata["query_by"]["model_name"] == "gpt-4"


def test_csv(tmp_path: Path) -> None:
    import csv

    p = tmp_path / "d.csv"
    with p.open("w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "question", "contexts", "answer", "reference", "topic"])
        for r in ROWS:
            w.writerow([r["id"], r["question"], json.dumps(r["contexts"], ensure_ascii=False), r["answer"],
                        r["reference"], r["topic"]])  # fmt: skip
    ds = load_dataset(p)
    check_rows(ds)
    assert rows_of(ds) == (1, 2, 3)


def test_csv_ragas_export_with_python_list_cells_and_empty_cells(tmp_path: Path) -> None:
    p = tmp_path / "ragas.csv"
    p.write_text(
        "user_input,retrieved_contexts,response,reference\n"
        "\"Q1\",\"['c1', 'c2']\",A1,R1\n"
        "Q2,plain single context,,R2\n"
        '"Q3","multi\nline context",A3,\n',
        encoding="utf-8",
    )
    ds = load_dataset(p)
    assert ds[0].contexts == ("c1", "c2")
    assert ds[1].contexts == ("plain single context",) and ds[1].answer is None
    assert ds[2].contexts == ("multi\nline context",) and ds[2].reference is None
    assert [s.id for s in ds] == ["1", "2", "3"]  # record numbers, not line numbers


def test_csv_numbers_stay_text(tmp_path: Path) -> None:
    p = tmp_path / "d.csv"
    p.write_text("id,question,answer\n1,q,42\n", encoding="utf-8")
    s = load_dataset(p)[0]
    assert (s.id, s.answer) == ("1", "42")


def test_csv_too_many_cells_is_a_row_problem(tmp_path: Path) -> None:
    p = tmp_path / "d.csv"
    p.write_text("question,answer\nq1,a1\nq2,a,b\nq3,a3\n", encoding="utf-8")
    ds = load_dataset(p)
    assert [s.question for s in ds] == ["q1", "q3"]
    assert ds.problems[0].row == 2 and "too many" in ds.problems[0].message


def test_csv_duplicate_header(tmp_path: Path) -> None:
    p = tmp_path / "d.csv"
    p.write_text("question,question\nq,q\n", encoding="utf-8")
    with pytest.raises(DatasetError) as e:
        load_dataset(p)
    assert e.value.field == "question"


def test_csv_long_cell(tmp_path: Path) -> None:
    p = tmp_path / "d.csv"
    long = "x" * 300_000
    p.write_text(f"question,contexts\nq,{long}\n", encoding="utf-8")
    assert load_dataset(p)[0].contexts == (long,)


def test_tsv(tmp_path: Path) -> None:
    p = tmp_path / "d.tsv"
    p.write_text("question\tanswer\nq, with comma\ta\n", encoding="utf-8")
    assert load_dataset(p)[0].question == "q, with comma"


def test_parquet(tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    p = tmp_path / "d.parquet"
    pd.DataFrame(ROWS).to_parquet(p)
    ds = load_dataset(p)
    check_rows(ds)
    assert isinstance(ds[0].contexts, tuple)


def test_parquet_without_pyarrow_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    p = tmp_path / "d.parquet"
    p.write_bytes(b"PAR1")
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(ConfigError, match=r"pip install 'ragmeter\[parquet\]'"):
        load_dataset(p)


def test_corrupt_parquet(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    p = tmp_path / "d.parquet"
    p.write_bytes(b"not parquet at all")
    with pytest.raises(DatasetError) as e:
        load_dataset(p)
    assert e.value.file == str(p)


# --------------------------------------------------------------------------- in-memory sources


def test_dataframe() -> None:
    pd = pytest.importorskip("pandas")
    ds = load_dataset(pd.DataFrame(ROWS))
    check_rows(ds)
    assert ds.source == "<dataframe>"


def test_dataframe_with_nan() -> None:
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(
        {
            "question": ["q1", None, "q3"],
            "answer": ["a1", "a2", float("nan")],
            "contexts": [["c"], ["c"], None],
            "score": [0.5, float("nan"), 1.0],
        }
    )
    ds = load_dataset(df)
    assert ds[1].question == "" and ds[2].answer is None and ds[2].contexts == ()
    assert ds[1].metadata == {"score": None}
    strict_needed = load_dataset(df, required_fields=["question", "answer"])
    assert [s.id for s in strict_needed] == ["1"]
    assert [(p.row, p.field) for p in strict_needed.problems] == [(2, "question"), (3, "answer")]


def test_dataframe_rows_are_positions_not_index_labels() -> None:
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"question": ["q1", "q2"], "answer": [1, "x"]}, index=[10, 20])
    ds = load_dataset(df)
    assert ds.problems[0].row == 1 and ds.problems[0].field == "answer"
    assert [s.id for s in ds] == ["2"]


def test_dataframe_int_id_column_and_duplicate_columns() -> None:
    pd = pytest.importorskip("pandas")
    ds = load_dataset(pd.DataFrame({"id": [101, 102], "question": ["a", "b"]}))
    assert [s.id for s in ds] == ["101", "102"]
    dup = pd.DataFrame([["a", "b"]], columns=["question", "question"])
    with pytest.raises(DatasetError) as e:
        load_dataset(dup)
    assert e.value.field == "question"


def test_list_of_dicts_and_dict_of_columns() -> None:
    check_rows(load_dataset(ROWS))
    check_rows(load_dataset({k: [r[k] for r in ROWS] for k in ROWS[0]}))
    assert load_dataset(ROWS).source == "<records>"


def test_list_of_samples_and_dataset() -> None:
    samples = [Sample(question="q1", id="x"), Sample(question="q2")]
    ds = load_dataset(samples)
    assert [s.id for s in ds] == ["x", "2"]
    assert ds.source == "<samples>"
    same = Dataset(samples=tuple(ds), source="mine")
    assert load_dataset(same) is same
    assert len(load_dataset(same, limit=1)) == 1
    with pytest.raises(ConfigError):
        load_dataset(same, mapping={"question": "q"})


def test_dataset_input_with_required_fields() -> None:
    ds = Dataset(samples=(Sample(question="q", answer="a"), Sample(question="q")), source="mine")
    out = load_dataset(ds, required_fields=["answer"])
    assert len(out) == 1 and out.problems[0].row == 2 and out.problems[0].file == "mine"


class FakeModel:
    """Stands in for a pydantic model (Ragas SingleTurnSample, LlamaIndex LabelledRagDataExample)."""

    def __init__(self, **data: Any) -> None:
        self._data = data

    def model_dump(self) -> dict[str, Any]:
        return dict(self._data)


class LegacyModel:
    def __init__(self, **data: Any) -> None:
        self._data = data

    def dict(self) -> dict[str, Any]:
        return dict(self._data)


@dataclass
class FakeEvaluationDataset:  # Ragas EvaluationDataset shape
    samples: list[Any] = field(default_factory=list)


@dataclass
class FakeLabelledRagDataset:  # LlamaIndex LabelledRagDataset shape
    examples: list[Any] = field(default_factory=list)


class ToPandasOnly:
    def to_pandas(self) -> Any:
        import pandas as pd

        return pd.DataFrame([{"user_input": "q", "response": "a", "retrieved_contexts": ["c1", "c2"]}])


def test_ragas_evaluation_dataset_duck_typed() -> None:
    ds = load_dataset(
        FakeEvaluationDataset(
            [
                FakeModel(
                    user_input="q1", retrieved_contexts=["c"], response="a", reference=None, rubrics=None
                ),
                LegacyModel(user_input="q2", retrieved_contexts=["c"], response="a2"),
            ]
        )
    )
    assert [s.question for s in ds] == ["q1", "q2"]
    assert ds.source == "<FakeEvaluationDataset>"
    assert ds[0].reference is None and ds[0].metadata == {"rubrics": None}


def test_llamaindex_labelled_dataset_duck_typed() -> None:
    ds = load_dataset(
        FakeLabelledRagDataset(
            [FakeModel(query="q", reference_contexts=["c"], reference_answer="r", query_by=None)]
        )
    )
    assert (ds[0].question, ds[0].reference, ds[0].reference_contexts) == ("q", "r", ("c",))


def test_to_pandas_object() -> None:
    pytest.importorskip("pandas")
    s = load_dataset(ToPandasOnly())[0]
    assert (s.question, s.answer, s.contexts) == ("q", "a", ("c1", "c2"))


def test_list_of_models() -> None:
    assert load_dataset([FakeModel(question="q")])[0].question == "q"


def test_unsupported_object_is_config_error() -> None:
    with pytest.raises(ConfigError, match="cannot load a dataset from int"):
        load_dataset(42)


# --------------------------------------------------------------------------- errors


def test_unknown_extension(tmp_path: Path) -> None:
    p = tmp_path / "d.txt"
    p.write_text("hello", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"'\.txt'.*\.jsonl"):
        load_dataset(p)


def test_missing_file(tmp_path: Path) -> None:
    p = tmp_path / "nope.jsonl"
    with pytest.raises(DatasetError) as e:
        load_dataset(p)
    assert e.value.file == str(p) and "not found" in e.value.message


def test_directory(tmp_path: Path) -> None:
    d = tmp_path / "dir.jsonl"
    d.mkdir()
    with pytest.raises(DatasetError, match="directory"):
        load_dataset(d)


def test_one_bad_row_among_good_ones(tmp_path: Path) -> None:
    p = tmp_path / "d.jsonl"
    lines = [json.dumps(ROWS[0]), '{"question": "broken", ', json.dumps(ROWS[2])]
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    ds = load_dataset(p)
    assert [s.id for s in ds] == ["a", "c"]
    assert ds.n_skipped == 1
    prob = ds.problems[0]
    assert (prob.file, prob.row, prob.field) == (str(p), 2, None)
    assert "broken JSON" in prob.message


def test_invalid_utf8_line_is_reported_and_others_load(tmp_path: Path) -> None:
    p = tmp_path / "d.jsonl"
    good = json.dumps(ROWS[1], ensure_ascii=False).encode("utf-8")
    bad = b'{"question": "caf\xe9 au lait", "answer": "x"}'
    p.write_bytes(good + b"\n" + bad + b"\n" + good.replace(b'"b"', b'"b2"') + b"\n")
    ds = load_dataset(p)
    assert [s.id for s in ds] == ["b", "b2"]
    [prob] = ds.problems
    assert (prob.row, prob.field) == (2, "question")
    assert "invalid UTF-8" in prob.message and "0xE9" in prob.message


def test_invalid_utf8_in_csv_names_record_and_field(tmp_path: Path) -> None:
    p = tmp_path / "d.csv"
    p.write_bytes(b"question,answer\nq1,a1\nq2,bad \xff answer\n")
    ds = load_dataset(p)
    assert len(ds) == 1
    assert (ds.problems[0].row, ds.problems[0].field) == (2, "answer")


def test_json_escape_lone_surrogate(tmp_path: Path) -> None:
    p = tmp_path / "d.jsonl"
    p.write_text('{"question": "ok"}\n{"question": "bad \\ud800"}\n', encoding="utf-8")
    ds = load_dataset(p)
    assert ds.problems[0].row == 2 and "surrogate" in ds.problems[0].message


def test_non_object_line(tmp_path: Path) -> None:
    p = write_jsonl(tmp_path / "d.jsonl", [ROWS[0], [1, 2]])
    ds = load_dataset(p)
    assert ds.problems[0].row == 2 and "got list" in ds.problems[0].message


def test_wrong_type_names_file_row_field(tmp_path: Path) -> None:
    rows = [dict(ROWS[0]), {**ROWS[2], "contexts": [1, 2]}]
    p = write_jsonl(tmp_path / "d.jsonl", rows)
    ds = load_dataset(p)
    prob = ds.problems[0]
    assert (prob.file, prob.row, prob.field) == (str(p), 2, "contexts")
    assert str(prob).startswith(f"{p}, row 2, field 'contexts': ")


def test_required_fields_on_load(tmp_path: Path) -> None:
    p = write_jsonl(tmp_path / "d.jsonl", [ROWS[0], {"id": "x", "question": "q", "answer": ""}])
    ds = load_dataset(p, required_fields=["question", "answer"])
    assert [s.id for s in ds] == ["a"]
    assert (ds.problems[0].row, ds.problems[0].field) == (2, "answer")
    assert "empty text" in ds.problems[0].message
    with pytest.raises(ConfigError):
        load_dataset(p, required_fields=["nope"])


def test_strict_lists_all_problems(tmp_path: Path) -> None:
    p = tmp_path / "d.jsonl"
    p.write_text(
        "\n".join([json.dumps(ROWS[0]), "{bad", json.dumps({"question": 5}), json.dumps(ROWS[2])]) + "\n",
        encoding="utf-8",
    )
    with pytest.raises(DatasetErrors) as e:
        load_dataset(p, strict=True)
    err = e.value
    assert isinstance(err, DatasetError)
    assert [p.row for p in err.problems] == [2, 3]
    assert "2 bad rows" in str(err) and "row 2" in str(err) and "row 3, field 'question'" in str(err)


def test_strict_message_caps_listing(tmp_path: Path) -> None:
    p = tmp_path / "d.jsonl"
    p.write_text(json.dumps(ROWS[0]) + "\n" + "{bad\n" * 25, encoding="utf-8")
    with pytest.raises(DatasetErrors) as e:
        load_dataset(p, strict=True)
    assert len(e.value.problems) == 25 and "... and 5 more" in str(e.value)


def test_all_rows_bad_raises_even_when_not_strict(tmp_path: Path) -> None:
    p = tmp_path / "d.jsonl"
    p.write_text("{bad\n{worse\n", encoding="utf-8")
    with pytest.raises(DatasetErrors, match="no usable row: all 2 rows are bad"):
        load_dataset(p)


@pytest.mark.parametrize("content", ["", "\n\n", "[]"])
def test_empty_sources(tmp_path: Path, content: str) -> None:
    p = tmp_path / ("d.json" if content == "[]" else "d.jsonl")
    p.write_text(content, encoding="utf-8")
    with pytest.raises(DatasetError, match="no records"):
        load_dataset(p)
    with pytest.raises(DatasetError, match="no records"):
        load_dataset([])


def test_duplicate_ids_later_row_is_problem(tmp_path: Path) -> None:
    p = write_jsonl(tmp_path / "d.jsonl", [ROWS[0], {**ROWS[2], "id": "a"}])
    ds = load_dataset(p)
    assert len(ds) == 1 and ds.problems[0].row == 2 and ds.problems[0].field == "id"
    assert "duplicate id 'a' (first at row 1)" in ds.problems[0].message


def test_limit(tmp_path: Path) -> None:
    p = write_jsonl(tmp_path / "d.jsonl", ROWS)
    assert [s.id for s in load_dataset(p, limit=2)] == ["a", "b"]
    for bad in (0, -1, True):
        with pytest.raises(ConfigError):
            load_dataset(p, limit=bad)


def test_example_file_loads() -> None:
    from ragmeter.examples import example_path

    ds = load_dataset(example_path(), required_fields=["question", "contexts", "answer", "reference"])
    assert len(ds) == 12 and ds.n_skipped == 0
    assert sum(1 for s in ds if s.metadata["lang"] == "zh") == 4
    assert all(s.context_ids and len(s.context_ids) == len(s.contexts) for s in ds)
    assert all(s.reference_context_ids for s in ds)
    repo_copy = Path(__file__).resolve().parents[2] / "examples" / "rag_samples.jsonl"
    assert repo_copy.read_bytes() == example_path().read_bytes()


def test_parquet_is_read_by_record_batches_across_row_groups(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    import ragmeter.dataset.readers as readers

    rows = [
        {"id": f"r{i}", "question": f"q{i}?", "contexts": [f"c{i}", "shared"], "answer": "a", "n": None if i % 3 else i}
        for i in range(50)
    ]
    p = tmp_path / "d.parquet"
    pq.write_table(pa.Table.from_pylist(rows), p, row_group_size=7)  # 8 row groups
    assert pq.ParquetFile(p).num_row_groups == 8
    monkeypatch.setattr(readers, "PARQUET_BATCH_ROWS", 4)
    batches: list[int] = []
    real = pq.ParquetFile.iter_batches

    def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
        for batch in real(self, *args, **kwargs):
            batches.append(batch.num_rows)
            yield batch

    monkeypatch.setattr(pq.ParquetFile, "iter_batches", counted)
    ds = load_dataset(p)
    assert [s.id for s in ds] == [r["id"] for r in rows] and list(ds.rows) == list(range(1, 51))  # type: ignore[attr-defined]
    assert ds[3].contexts == ("c3", "shared")
    assert ds[3].metadata == {"n": 3} and ds[4].metadata == {"n": None}  # an int column with nulls stays int
    assert max(batches) <= 4 and sum(batches) == 50


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(
        st.text(max_size=4),
        st.one_of(st.text(), st.lists(st.text(max_size=6), max_size=3), st.none(), st.floats(allow_nan=False), st.integers()),
        max_size=4,
    )
)
def test_canonical_json_is_the_ensure_ascii_false_text(record: dict[str, Any]) -> None:
    """The dataset hash's fast path (the ASCII encoder where it escapes nothing) writes the same
    text as the definition: json.dumps(sort_keys=True, ensure_ascii=False, default=str)."""
    from ragmeter.dataset.sample import canonical_json

    assert canonical_json(record) == json.dumps(record, sort_keys=True, ensure_ascii=False, default=str)


def test_a_stream_remembering_in_a_temporary_file_reads_as_one_remembering_in_dicts(tmp_path: Path) -> None:
    from ragmeter.dataset.seen import SpilledSeen
    from ragmeter.dataset.sources import SampleStream

    p = tmp_path / "d.jsonl"
    rows = [{"id": f"s{i % 40}", "question": f"q{i % 7}?", "answer": "a"} for i in range(60)]  # 20 ids repeat
    rows += [{"question": f"q{i % 3}?", "reference": "r"} for i in range(9)]  # no id: keys by text, repeated
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    spilled, in_dicts = SampleStream(p, seen=SpilledSeen()), SampleStream(p)
    a, b = list(spilled), list(in_dicts)
    assert a == b and len(a) == 49 and sum(1 for i in a if "#" in i.key) == 6
    assert [str(x) for x in spilled.problems] == [str(x) for x in in_dicts.problems]
    assert len(spilled.problems) == 20 and "first at row 1" in str(spilled.problems[0])
    assert spilled.content_hash() == in_dicts.content_hash()
