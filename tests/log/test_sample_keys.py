"""Stable sample keys: chosen by the loader, stored per sample, derived for schema-1 records."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import ragmeter
from ragmeter.dataset import load_dataset
from ragmeter.dataset.keys import normalize_key_text, sample_keys, text_key
from ragmeter.dataset.sample import Sample
from ragmeter.log import RunStore
from ragmeter.log.store import SCHEMA_VERSION
from ragmeter.run.result import Result


def test_id_column_gives_id_keys_and_no_id_gives_text_keys(tmp_path: Path) -> None:
    with_ids = tmp_path / "ids.jsonl"
    with_ids.write_text(
        '{"sample_id": 7, "question": "q?", "answer": "a"}\n{"id": "k", "question": "q2?", "answer": "a"}\n'
    )
    ds = load_dataset(with_ids)
    assert sample_keys(ds.samples, ds.generated_ids) == ["id:7", "id:k"]
    no_ids = tmp_path / "plain.csv"
    no_ids.write_text('question,reference,answer\n"What  is X?",X is y.,a\nWhat is X?,X is y.,b\nOther?,,c\n')
    ds = load_dataset(no_ids)
    assert [s.id for s in ds] == ["1", "2", "3"] and ds.generated_ids == {"1", "2", "3"}
    keys = sample_keys(ds.samples, ds.generated_ids)
    # whitespace is normalised, so rows 1 and 2 share a text key: the repeat gets "#2"
    assert keys[0] == text_key("What is X?", "X is y.") and keys[1] == keys[0] + "#2"
    assert keys[2] == text_key("Other?", None) and keys[2].startswith("qr:") and len(keys[2]) == 3 + 32


def test_text_key_normalisation() -> None:
    assert normalize_key_text(" e\u0301t\u00e9\n\t x ") == "\u00e9t\u00e9 x"  # NFC, spaces collapsed, trimmed
    assert text_key("Q", "R") != text_key("q", "R")  # case is kept
    assert text_key("Q", None) == text_key("Q", "") == text_key(" Q ", "  ")


def test_keys_are_stored_and_survive_reordering_and_filtering(tmp_path: Path) -> None:
    rows = [{"question": f"question {i}?", "reference": f"ref {i}", "answer": "x"} for i in range(4)]
    a = ragmeter.evaluate(rows, ["token_f1"], None, out=tmp_path)
    b = ragmeter.evaluate(list(reversed(rows[1:])), ["token_f1"], None, out=tmp_path)
    assert set(b.keys.values()) < set(a.keys.values())
    again = Result.from_store(tmp_path, a.run_id)
    assert again.keys == a.keys
    with RunStore(tmp_path) as store:
        stored = dict(store._query("SELECT idx, key FROM samples WHERE run_id = ?", (a.run_id,)))
    assert stored == a.keys


def test_schema_1_store_is_migrated_and_its_runs_keep_working(tmp_path: Path) -> None:
    ragmeter.evaluate(
        [{"id": "x", "question": "q?", "reference": "r", "answer": "r"}], ["token_f1"], None, out=tmp_path
    )
    # Turn the file into what ragmeter wrote before keys existed.
    conn = sqlite3.connect(tmp_path / "runs.sqlite")
    conn.execute("ALTER TABLE samples DROP COLUMN key")
    conn.execute("ALTER TABLE samples DROP COLUMN conversation_id")
    conn.execute("ALTER TABLE samples DROP COLUMN turn")
    conn.execute("UPDATE schema_version SET version = 1")
    conn.commit()
    conn.close()
    with RunStore(tmp_path) as store:
        run = store.list_runs()[0]
        assert store._query("SELECT MAX(version) FROM schema_version")[0][0] == SCHEMA_VERSION == 5
        # an old record holds no key: it is derived from question and reference
        assert store.load_keys(run.run_id) == {0: text_key("q?", "r")}
        store.add_samples(run.run_id, [(1, Sample(question="new?", id="n"))])
        assert store.load_keys(run.run_id)[1] == "id:n"
    assert Result.from_store(tmp_path, run.run_id).summary()["token_f1"].mean == 1.0


def test_add_samples_default_keys(tmp_path: Path) -> None:
    with RunStore(tmp_path) as store:
        store.create_run("r", {})
        store.add_samples("r", [(0, Sample(question="q", id="a")), (1, Sample(question="q"))])
        assert store.load_keys("r") == {0: "id:a", 1: text_key("q", None)}
    assert json.loads(json.dumps(sample_keys([Sample(question="q")] * 3)))[2].endswith("#3")


def test_schema_3_store_gets_the_conversation_columns(tmp_path: Path) -> None:
    ragmeter.evaluate([{"id": "x", "question": "q?", "reference": "r", "answer": "r"}], ["token_f1"], None, out=tmp_path)
    conn = sqlite3.connect(tmp_path / "runs.sqlite")
    conn.execute("ALTER TABLE samples DROP COLUMN conversation_id")
    conn.execute("ALTER TABLE samples DROP COLUMN turn")
    conn.execute("UPDATE schema_version SET version = 3")
    conn.commit()
    conn.close()
    with RunStore(tmp_path) as store:
        assert store._query("SELECT MAX(version) FROM schema_version")[0][0] == SCHEMA_VERSION
        run = store.list_runs()[0]
        assert store._query("SELECT conversation_id, turn FROM samples WHERE run_id = ?", (run.run_id,)) == [
            (None, None)
        ]
        turn = Sample(question="q2?", id="c:1", conversation_id="c", turn=1)
        store.add_samples(run.run_id, [(1, turn)])
        assert store._query("SELECT conversation_id, turn FROM samples WHERE idx = 1") == [("c", 1)]
        assert store.load_samples(run.run_id)[1] == (1, turn)
