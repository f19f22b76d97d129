from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ragmeter.dataset import (
    DatasetErrors,
    is_judgement_file,
    load_dataset,
    load_judgements,
    rows_of,
)
from ragmeter.dataset.judgements import judgement_from_record
from ragmeter.errors import ConfigError, DatasetError

DATA = Path(__file__).parent / "data" / "judgements_sample.jsonl"

PAIR: dict[str, Any] = {
    "id": "p1", "aspect": "faithfulness", "kind": "pair", "question": "Q?", "contexts": ["ctx"],
    "a": {"answer": "good"}, "b": {"answer": "bad"}, "preferred": "a",
}  # fmt: skip
POINT: dict[str, Any] = {
    "id": "t1", "aspect": "faithfulness", "kind": "point", "question": "Q?", "contexts": ["ctx"],
    "answer": "x", "label": 1, "label_kind": "binary", "note": "n",
}  # fmt: skip


def write(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def test_shipped_sample_file() -> None:
    js = load_judgements(DATA)
    assert [j.id for j in js] == [
        "wikieval-dev-ff-0", "wikieval-dev-cr-3", "begin-wow-0", "begin-wow-1",
        "halueval-dev-0", "halluqa-0", "halluqa-1",
    ]  # fmt: skip
    assert js.problems == () and js.source == str(DATA)
    ff, cr, p0, p1, he, zh0, _ = js
    # pair over answers: shared question/contexts, differing answers
    assert ff.kind == "pair" and ff.preferred == "b" and ff.sample is None
    assert ff.sample_a.question == ff.sample_b.question and ff.sample_a.contexts == ff.sample_b.contexts
    assert ff.sample_a.answer != ff.sample_b.answer
    assert (ff.sample_a.id, ff.sample_b.id) == ("wikieval-dev-ff-0/a", "wikieval-dev-ff-0/b")
    assert ff.sample_b.metadata["variant"] == "b" and ff.sample_b.metadata["judgement_id"] == ff.id
    # pair over contexts
    assert cr.aspect == "context_relevance" and cr.sample_a.contexts != cr.sample_b.contexts
    assert cr.sample_a.answer == cr.sample_b.answer
    # points
    assert (p0.label, p0.label_kind, p1.label) == (1.0, "binary", 0.0)
    assert p0.sample is p0.sample_a and p0.sample_b is None and p0.samples == (p0.sample,)
    assert p0.sample.id == "begin-wow-0" and p0.sample.metadata["note"] == "Fully attributable"
    assert p0.row == 3
    # Chinese correctness pair with a reference
    assert zh0.aspect == "correctness"
    assert zh0.sample_a.reference == "我是一个人工智能模型，我没有教育经历及毕业院校。"
    assert he.samples == (he.sample_a, he.sample_b)


def test_is_judgement_file(tmp_path: Path) -> None:
    assert is_judgement_file(DATA)
    plain = write(tmp_path / "d.jsonl", [{"question": "q", "kind": "not a judgement"}])
    assert not is_judgement_file(plain)
    assert not is_judgement_file(tmp_path / "missing.jsonl")
    first_line_broken = tmp_path / "j.jsonl"
    first_line_broken.write_text("{oops\n" + json.dumps(PAIR) + "\n", encoding="utf-8")
    assert is_judgement_file(first_line_broken)
    assert not is_judgement_file(tmp_path / "x.csv")


def test_pair_override_can_change_any_field() -> None:
    rec = {**PAIR, "a": {"contexts": ["other"], "reference": "r-a"}, "b": {}}
    j = judgement_from_record(rec, row=1)
    assert j.sample_a.contexts == ("other",) and j.sample_a.reference == "r-a"
    assert j.sample_b is not None and j.sample_b.contexts == ("ctx",) and j.sample_b.reference is None


@pytest.mark.parametrize(
    ("change", "field", "needle"),
    [
        ({"aspect": "vibes"}, "aspect", "unknown aspect 'vibes'"),
        ({"aspect": None}, "aspect", "missing aspect"),
        ({"kind": "triple"}, "kind", "unknown kind 'triple'"),
        ({"preferred": "c"}, "preferred", "preferred must be 'a' or 'b'"),
        ({"preferred": None}, "preferred", "missing preferred"),
        ({"a": "text"}, "a", "expected an object"),
        ({"b": None}, "b", "missing 'b'"),
        ({"a": {"answer": 3}}, "a.answer", "expected text"),
        ({"a": {"id": "x"}}, "a.id", "cannot differ"),
        ({"question": 1}, "question", "expected text"),
    ],
)
def test_pair_errors(change: dict[str, Any], field: str, needle: str) -> None:
    rec = {**PAIR, **change}
    with pytest.raises(DatasetError) as e:
        judgement_from_record(rec, row=4, file="j.jsonl")
    assert (e.value.file, e.value.row, e.value.field) == ("j.jsonl", 4, field)
    assert needle in e.value.message


@pytest.mark.parametrize(
    ("change", "field", "needle"),
    [
        ({"label": 0.5}, "label", "binary label is 0 or 1"),
        ({"label": 2, "label_kind": "graded"}, "label", "graded label lies in [0, 1]"),
        ({"label": -0.1, "label_kind": "graded"}, "label", "graded label"),
        ({"label": float("nan"), "label_kind": "graded"}, "label", "finite"),
        ({"label": "yes"}, "label", "expected a number"),
        ({"label": None}, "label", "missing label"),
        ({"label_kind": "ordinal"}, "label_kind", "unknown label_kind 'ordinal'"),
        ({"label_kind": None}, "label_kind", "missing label_kind"),
        ({"preferred": "a"}, "preferred", "belongs to a pair"),
    ],
)
def test_point_errors(change: dict[str, Any], field: str, needle: str) -> None:
    rec = {**POINT, **change}
    with pytest.raises(DatasetError) as e:
        judgement_from_record(rec, row=2, file="j.jsonl")
    assert (e.value.row, e.value.field) == (2, field)
    assert needle in e.value.message


def test_graded_and_bool_labels() -> None:
    assert judgement_from_record({**POINT, "label": 0.25, "label_kind": "graded"}, row=1).label == 0.25
    assert judgement_from_record({**POINT, "label": True}, row=1).label == 1.0


def test_bad_rows_skipped_and_strict(tmp_path: Path) -> None:
    p = write(tmp_path / "j.jsonl", [PAIR, {**POINT, "aspect": "nope"}, POINT, {**PAIR}])
    js = load_judgements(p)
    assert [j.id for j in js] == ["p1", "t1"]
    assert js.n_skipped == 2
    assert [(e.row, e.field) for e in js.problems] == [(2, "aspect"), (4, "id")]
    with pytest.raises(DatasetErrors) as e:
        load_judgements(p, strict=True)
    assert len(e.value.problems) == 2


def test_judgement_file_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        load_judgements(tmp_path / "j.csv")
    with pytest.raises(DatasetError, match="not found"):
        load_judgements(tmp_path / "missing.jsonl")
    empty = tmp_path / "e.jsonl"
    empty.write_text("", encoding="utf-8")
    with pytest.raises(DatasetError, match="no judgement records"):
        load_judgements(empty)
    broken = tmp_path / "b.jsonl"
    broken.write_text("{nope\n", encoding="utf-8")
    with pytest.raises(DatasetErrors, match="no usable judgement"):
        load_judgements(broken)


def test_invalid_utf8_in_judgement_line(tmp_path: Path) -> None:
    p = tmp_path / "j.jsonl"
    good = json.dumps(PAIR).encode()
    bad = json.dumps({**PAIR, "id": "p2", "b": {"answer": "XX"}}).encode().replace(b"XX", b"\xff")
    p.write_bytes(good + b"\n" + bad + b"\n")
    js = load_judgements(p)
    assert len(js) == 1 and (js.problems[0].row, js.problems[0].field) == (2, "b.answer")


def test_records_and_limit() -> None:
    js = load_judgements([PAIR, POINT], limit=1)
    assert [j.id for j in js] == ["p1"] and js.source == "<records>"


def test_load_dataset_expands_judgement_file() -> None:
    ds = load_dataset(DATA)
    ids = [s.id for s in ds]
    assert ids[:5] == [
        "wikieval-dev-ff-0/a", "wikieval-dev-ff-0/b",
        "wikieval-dev-cr-3/a", "wikieval-dev-cr-3/b",
        "begin-wow-0",
    ]  # fmt: skip
    assert len(ds) == 2 * 5 + 2
    assert rows_of(ds)[:5] == (1, 1, 2, 2, 3)
    point = ds[4]
    assert point.metadata["label"] == 1.0 and point.metadata["kind"] == "point"
    assert ds[1].metadata["preferred"] == "b" and ds[1].metadata["variant"] == "b"
    assert len(load_dataset(DATA, limit=3)) == 3
    # required fields apply per sample: correctness pairs have no contexts
    needs_ctx = load_dataset(DATA, required_fields=["contexts"])
    assert all(s.contexts for s in needs_ctx) and needs_ctx.n_skipped == 4


def test_load_dataset_judgement_file_rejects_mapping() -> None:
    with pytest.raises(ConfigError, match="judgement file"):
        load_dataset(DATA, mapping={"question": "q"})
