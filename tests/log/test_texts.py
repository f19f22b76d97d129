"""The run store keeps each distinct context text once (ragmeter.log.texts)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import ragmeter
from ragmeter.dataset.sample import Sample
from ragmeter.log.schema import SCHEMA_VERSION
from ragmeter.log.store import RunStore
from ragmeter.log.texts import digest


def _rows(n: int) -> list[dict[str, object]]:
    passages = [f"Passage {k}: the bridge was built of stone and iron in {1800 + k}." for k in range(4)]
    return [
        {
            "id": f"q{i}",
            "question": f"When was bridge {i % 4} built?",
            "contexts": [passages[i % 4], passages[(i + 1) % 4]],
            "reference_contexts": [passages[i % 4]],
            "answer": f"In {1800 + i % 4}.",
            "reference": f"It was built in {1800 + i % 4}.",
        }
        for i in range(n)
    ]


def _count(store: RunStore, table: str) -> int:
    return int(store._query(f"SELECT COUNT(*) FROM {table}")[0][0])


def test_each_distinct_context_is_stored_once_across_samples_and_runs(tmp_path: Path) -> None:
    rows = _rows(40)
    first = ragmeter.evaluate(rows, ["token_f1"], None, out=tmp_path, progress=False)
    with RunStore(tmp_path) as store:
        assert _count(store, "texts") == 4  # 40 samples, 120 context texts, 4 distinct
        sample_json = store._query("SELECT sample, refs FROM samples WHERE run_id = ? AND idx = 5", (first.run_id,))
        text, refs = sample_json[0]
        assert "Passage" not in text and set(json.loads(refs)) == {"contexts", "reference_contexts"}
        assert [s.to_dict() for _, s in store.load_samples(first.run_id)] == [
            Sample.from_dict({**r, "metadata": {}}).to_dict() for r in rows
        ]
    second = ragmeter.evaluate(rows, ["token_f1"], None, out=tmp_path, progress=False)
    with RunStore(tmp_path) as store:
        assert _count(store, "texts") == 4  # the same data run again: no new text
        assert store.load_samples(second.run_id) == store.load_samples(first.run_id)
    again = ragmeter.Result.from_store(tmp_path, second.run_id)
    assert again.samples[7][1].contexts == tuple(rows[7]["contexts"])  # type: ignore[arg-type]


def test_deleting_a_run_removes_only_the_texts_no_other_run_refers_to(tmp_path: Path) -> None:
    shared = ragmeter.evaluate(_rows(8), ["token_f1"], None, out=tmp_path, progress=False)
    own = [{**r, "contexts": [f"only in run two {i}"]} for i, r in enumerate(_rows(3))]
    other = ragmeter.evaluate(own, ["token_f1"], None, out=tmp_path, progress=False)
    with RunStore(tmp_path) as store:
        assert _count(store, "texts") == 4 + 3
        store.delete_run(other.run_id)
        assert _count(store, "texts") == 4  # its own three went; the passages run one refers to stay
        assert store.load_samples(shared.run_id)[0][1].contexts[0].startswith("Passage 0")
        store.delete_run(shared.run_id)
        assert _count(store, "texts") == 0


def test_a_version_4_store_is_migrated_and_its_whole_sample_json_still_reads(tmp_path: Path) -> None:
    rows = _rows(6)
    run = ragmeter.evaluate(rows, ["token_f1"], None, out=tmp_path, progress=False)
    with RunStore(tmp_path) as store:
        whole = store.load_samples(run.run_id)
    # Turn the file into what version 4 wrote: each sample's JSON whole, no refs, no texts table.
    conn = sqlite3.connect(tmp_path / "runs.sqlite")
    for idx, sample in whole:
        conn.execute(
            "UPDATE samples SET sample = ? WHERE run_id = ? AND idx = ?",
            (json.dumps(sample.to_dict()), run.run_id, idx),
        )
    conn.execute("ALTER TABLE samples DROP COLUMN refs")
    conn.execute("DROP TABLE texts")
    conn.execute("UPDATE schema_version SET version = 4")
    conn.commit()
    conn.close()
    with RunStore(tmp_path) as store:
        assert store._query("SELECT MAX(version) FROM schema_version")[0][0] == SCHEMA_VERSION == 5
        assert store.load_samples(run.run_id) == whole
        assert _count(store, "texts") == 0
        store.add_samples(run.run_id, [(6, Sample(question="new?", contexts=("Passage new.",), id="n"))])
        assert store.load_samples(run.run_id)[6][1].contexts == ("Passage new.",)
        assert store._query("SELECT digest FROM texts") == [(digest("Passage new."),)]
        store.delete_run(run.run_id)
        assert _count(store, "texts") == 0


def test_store_bytes_per_row_fall_with_repeated_contexts(tmp_path: Path) -> None:
    """Contexts of 600 characters drawn from 4 passages: the samples and their texts take less than
    a third of the rows' JSON."""
    rows = [{**r, "contexts": [c * 10 for c in r["contexts"]]} for r in _rows(200)]  # type: ignore[attr-defined]
    ragmeter.evaluate(rows, ["token_f1"], None, out=tmp_path, progress=False)
    with RunStore(tmp_path) as store:
        stored = store._query("SELECT SUM(LENGTH(sample) + COALESCE(LENGTH(refs), 0)) FROM samples")[0][0]
        texts = store._query("SELECT SUM(LENGTH(text)) FROM texts")[0][0]
    whole = sum(len(json.dumps(r)) for r in rows)
    assert stored + texts < whole / 3
