"""Labels in the run: the store's label table and draw, the label reader, matching to a run, the
CLI's import/export round trip and Result.labels / add_labels."""

from __future__ import annotations

import json
import re
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import ragmeter
from ragmeter.cli.main import cli
from ragmeter.dataset import load_judgements
from ragmeter.dataset.labels import load_labels
from ragmeter.errors import ConfigError, DatasetError, RunError
from ragmeter.log import RunStore
from ragmeter.log.labels import DEFAULT_SEED, Label, draw_order, draw_progress
from ragmeter.log.schema import SCHEMA_VERSION
from ragmeter.run.result import Result


def _rows(n: int = 8, ids: bool = True) -> list[dict[str, Any]]:
    rows = []
    for i in range(n):
        row = {
            "question": f"question {i}?",
            "reference": f"ref {i}",
            "answer": f"ref {i}" if i % 2 else "other",
        }
        if ids:
            row["id"] = f"s{i}"
        rows.append(row)
    return rows


def _run(tmp_path: Path, n: int = 8, ids: bool = True, metrics: tuple[str, ...] = ("token_f1",)) -> Result:
    return ragmeter.evaluate(_rows(n, ids), list(metrics), None, out=tmp_path)


def _write(path: Path, records: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def _cli(args: list[str]) -> tuple[int, str, str]:
    res = CliRunner().invoke(cli, args, catch_exceptions=False)
    return res.exit_code, res.stdout, res.stderr


# ----------------------------------------------------------------------------------- the store


def test_put_list_replace_delete(tmp_path: Path) -> None:
    r = _run(tmp_path)
    with RunStore(tmp_path) as store:
        lab = store.put_label(r.run_id, 3, "token_f1", 1, labeller="ann")
        assert (lab.value, lab.label_kind, lab.drawn, lab.labeller) == (1.0, "binary", "picked", "ann")
        assert lab.created_at.endswith("+00:00")
        assert store.put_label(r.run_id, 3, "token_f1", 0.5).label_kind == "graded"  # replaces
        assert [x.value for x in store.list_labels(r.run_id)] == [0.5]
        assert store.put_labels(r.run_id, [Label(3, "token_f1", 0.0), Label(4, "token_f1", 1.0)]) == 1
        assert [(x.idx, x.value) for x in store.list_labels("latest", "token_f1")] == [(3, 0.0), (4, 1.0)]
        assert store.list_labels(r.run_id, "other") == []
        removed = store.delete_label(r.run_id, 3, "token_f1")
        assert removed is not None and removed.value == 0.0
        assert store.delete_label(r.run_id, 3, "token_f1") is None
        assert store.get_label(r.run_id, 3, "token_f1") is None
        assert [x.idx for x in store.list_labels(r.run_id)] == [4]


@pytest.mark.parametrize(
    ("kwargs", "error", "text"),
    [
        ({"value": 1.5}, ConfigError, "in [0, 1]"),
        ({"value": float("nan")}, ConfigError, "number in [0, 1]"),
        ({"value": 0.5, "label_kind": "binary"}, ConfigError, "binary label is 0 or 1"),
        ({"value": 1, "drawn": "sometimes"}, ConfigError, "drawn must be"),
        ({"value": 1, "label_kind": "ordinal"}, ConfigError, "label_kind"),
        ({"value": 1, "metric": "faithfulness"}, RunError, "no metric 'faithfulness'"),
        ({"value": 1, "idx": 99}, RunError, "no sample 99"),
    ],
)
def test_put_label_refuses_what_does_not_fit(
    tmp_path: Path, kwargs: dict[str, Any], error: type, text: str
) -> None:
    r = _run(tmp_path)
    args = {"idx": 0, "metric": "token_f1", **kwargs}
    with RunStore(tmp_path) as store, pytest.raises(error, match=re.escape(text)):
        store.put_label(r.run_id, args.pop("idx"), args.pop("metric"), args.pop("value"), **args)
    with RunStore(tmp_path) as store:
        assert store.list_labels(r.run_id) == []


def test_the_draw_is_seeded_stable_and_shared_by_runs_over_the_same_questions(tmp_path: Path) -> None:
    a = _run(tmp_path / "a")
    b = ragmeter.evaluate(list(reversed(_rows())), ["token_f1"], None, out=tmp_path / "b")
    with RunStore(tmp_path / "a") as sa, RunStore(tmp_path / "b") as sb:
        da, db = sa.label_draw(a.run_id), sb.label_draw(b.run_id)
        assert da.seed == db.seed == DEFAULT_SEED and not da.stored
        # the same questions in another order, another run: drawn in the same order of keys
        assert [a.keys[i] for i in da.order] == [b.keys[i] for i in db.order]
        assert sorted(da.order) == list(range(8))
        assert list(da.order) == draw_order(a.keys, 0) != draw_order(a.keys, 1)
        sa.set_draw_seed(a.run_id, 7)
        assert sa.label_draw(a.run_id).seed == 7 and sa.label_draw(a.run_id).stored
        sa.put_label(a.run_id, 0, "token_f1", 1, drawn="random")
        with pytest.raises(RunError, match="random label"):
            sa.set_draw_seed(a.run_id, 8)
        sa.set_draw_seed(a.run_id, 7)  # the same seed is fine
        # the first random label stores the seed of a run that never chose one
        sb.put_label(b.run_id, 0, "token_f1", 1, drawn="random")
        assert sb.label_draw(b.run_id).stored and sb.label_draw(b.run_id).seed == DEFAULT_SEED


def test_draw_order_is_uniform() -> None:
    keys = {i: f"id:s{i}" for i in range(5)}
    first = Counter(draw_order(keys, seed)[0] for seed in range(3000))
    # each of 5 samples comes first in 600 of 3000 draws, give or take (binomial sd ~ 22)
    assert set(first) == set(range(5)) and all(500 < c < 700 for c in first.values()), first


def test_draw_progress_holds_back_labels_behind_a_skip() -> None:
    order = [5, 2, 7, 0, 3]
    labels = [Label(5, "m", 1.0, drawn="random"), Label(7, "m", 0.0, drawn="random"), Label(0, "m", 1.0)]
    p = draw_progress("m", 0, order, labels)
    assert p.prefix == (5,) and p.next_idx == 2 and p.skipped == (2,)
    assert (p.n_random, p.n_held_back, p.n_picked) == (2, 1, 1)
    assert p.next_after(2) == 0  # a picked label is no label of the draw
    assert p.next_after(3) is None and p.next_after(None) == 2
    # labelling the skipped sample releases the one behind it
    p = draw_progress("m", 0, order, [*labels, Label(2, "m", 1.0, drawn="random")])
    assert p.prefix == (5, 2, 7) and p.next_idx == 0 and p.skipped == () and p.n_held_back == 0
    # samples the metric did not score are no part of its draw
    p = draw_progress("m", 0, order, labels, eligible=[5, 7, 0])
    assert p.order == (5, 7, 0) and p.prefix == (5, 7) and p.next_idx == 0


def test_store_draw_progress_runs_over_the_scored_samples(tmp_path: Path) -> None:
    rows = _rows(4)
    del rows[1]["reference"]  # token_f1 cannot score it
    r = ragmeter.evaluate(rows, ["token_f1"], None, out=tmp_path)
    with RunStore(tmp_path) as store:
        p = store.draw_progress(r.run_id, "token_f1")
        assert sorted(p.order) == [0, 2, 3] and p.prefix == () and p.next_idx == p.order[0]
        for idx in p.order:
            store.put_label(r.run_id, idx, "token_f1", 1, drawn="random")
        p = store.draw_progress(r.run_id, "token_f1")
        assert len(p.prefix) == 3 and p.next_idx is None
        assert p.to_dict()["n_prefix"] == 3


def test_deleting_a_run_deletes_its_labels(tmp_path: Path) -> None:
    r = _run(tmp_path)
    with RunStore(tmp_path) as store:
        store.put_label(r.run_id, 0, "token_f1", 1, drawn="random")
        store.delete_run(r.run_id)
        assert store._query("SELECT COUNT(*) FROM labels")[0][0] == 0
        assert store._query("SELECT COUNT(*) FROM label_draws")[0][0] == 0


def test_schema_2_store_gains_the_label_tables(tmp_path: Path) -> None:
    r = _run(tmp_path)
    conn = sqlite3.connect(tmp_path / "runs.sqlite")
    conn.execute("DROP TABLE labels")
    conn.execute("DROP TABLE label_draws")
    conn.execute("UPDATE schema_version SET version = 2")
    conn.commit()
    conn.close()
    with RunStore(tmp_path) as store:
        assert store._query("SELECT MAX(version) FROM schema_version")[0][0] == SCHEMA_VERSION == 5
        assert store.list_labels(r.run_id) == []
        store.put_label(r.run_id, 0, "token_f1", 1)
    assert [lab.idx for lab in Result.from_store(tmp_path, r.run_id).labels] == [0]


# ----------------------------------------------------------------------------------- the reader


def test_label_records(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "l.jsonl",
        [
            {"id": "s1", "metric": "token_f1", "label": 1},
            {"id": 2, "aspect": "correctness", "label": 0.25, "labeller": "bo", "drawn": "random"},
            {"id": "s3", "metric": "token_f1", "label": True, "label_kind": "binary", "kind": "point"},
            {"id": "s4", "metric": "token_f1", "label": 0.0, "created_at": "2026-01-02T03:04:05+00:00"},
            {"metric": "token_f1", "label": 1},
            {"id": "s5", "metric": "token_f1", "label": 2},
            {"id": "s6", "label": 1},
            {"id": "s7", "metric": "token_f1", "label": 1, "kind": "pair"},
            {"id": "s8", "metric": "token_f1", "label": 1, "drawn": "maybe"},
            {"id": "s9", "metric": "token_f1", "label": 1, "created_at": "yesterday"},
            {"id": "s1", "metric": "token_f1", "label": 0},
            {"id": "s10", "metric": "token_f1", "label": 0.5, "label_kind": "binary"},
        ],
    )
    recs = load_labels(path)
    assert [(r.id, r.target, r.label, r.label_kind) for r in recs] == [
        ("s1", "token_f1", 1.0, "binary"),
        ("2", "correctness", 0.25, "graded"),
        ("s3", "token_f1", 1.0, "binary"),
        ("s4", "token_f1", 0.0, "binary"),
    ]
    assert recs[1].labeller == "bo" and recs[1].drawn == "random" and recs[0].drawn is None
    assert recs[3].created_at == "2026-01-02T03:04:05+00:00" and recs[0].fields == {}
    problems = [(p.row, p.field) for p in recs.problems]
    assert problems == [
        (5, "id"), (6, "label"), (7, "metric"), (8, "kind"), (9, "drawn"), (10, "created_at"), (11, "id"), (12, "label"),
    ]  # fmt: skip
    assert "duplicate label of id 's1'" in str(recs.problems[6])
    with pytest.raises(DatasetError, match="no usable label"):
        load_labels(_write(tmp_path / "bad.jsonl", [{"label": 1}]))


def test_a_judgement_record_may_name_its_metric() -> None:
    (j,) = load_judgements(
        [
            {
                "id": "x",
                "kind": "point",
                "metric": "token_f1",
                "question": "q",
                "answer": "a",
                "label": 1,
                "label_kind": "binary",
            }
        ]
    )
    assert j.metric == "token_f1" and j.aspect == "token_f1" and j.sample is not None
    assert j.sample.metadata["metric"] == "token_f1"
    with pytest.raises(DatasetError, match="unknown aspect"):
        load_judgements([{"id": "x", "kind": "point", "aspect": "vibes", "metric": "token_f1", "label": 1,
                          "label_kind": "binary"}], strict=True)  # fmt: skip


# ----------------------------------------------------------------------------------- matching and the CLI


def test_import_names_and_skips_what_does_not_fit_and_keeps_the_rest(tmp_path: Path) -> None:
    r = _run(tmp_path / "runs", metrics=("token_f1", "answer_correctness"))
    path = _write(
        tmp_path / "l.jsonl",
        [
            {"id": "s0", "metric": "token_f1", "label": 1},
            {"id": "nope", "metric": "token_f1", "label": 1},
            {"id": "s1", "metric": "faithfulness", "label": 1},
            {"id": "s2", "metric": "token_f1", "label": 3},
            {
                "id": "s3",
                "aspect": "correctness",
                "label": 0,
            },  # -> answer_correctness, the run's metric for it
            {"id": "s4", "metric": "token_f1", "label": 1, "answer": "a different answer"},
            {"id": "s5", "metric": "token_f1", "label": 1, "answer": " ref   5 ", "question": "question 5?"},
            {"id": "s6", "aspect": "faithfulness", "label": 1},
        ],
    )
    code, out, err = _cli(
        ["labels", "import", str(path), "--run", r.run_id, "--out", str(tmp_path / "runs"), "--json"]
    )
    assert code == 0, err
    d = json.loads(out)
    assert (d["n_imported"], d["n_replaced"], d["n_skipped"]) == (3, 0, 5)
    assert [(p["row"], p["field"]) for p in d["skipped"]] == [
        (2, "id"),
        (3, "metric"),
        (4, "label"),
        (6, "answer"),
        (8, "aspect"),
    ]
    assert "unknown metric 'faithfulness'" in d["skipped"][1]["message"]
    assert "differs from the run's sample" in d["skipped"][3]["message"]
    got = {(lab.idx, lab.metric): lab.value for lab in Result.from_store(tmp_path / "runs", r.run_id).labels}
    assert got == {(0, "token_f1"): 1.0, (3, "answer_correctness"): 0.0, (5, "token_f1"): 1.0}
    # the text output names each skipped row
    code, out, err = _cli(["labels", "import", str(path), "--run", "latest", "--out", str(tmp_path / "runs")])
    assert code == 0 and "3 label(s) imported (3 replaced); 5 row(s) skipped" in out
    assert "row 2, field 'id': no sample of the run has id 'nope'" in err


def test_export_import_round_trip_with_and_without_ids(tmp_path: Path) -> None:
    for ids in (True, False):
        out = tmp_path / f"runs-{ids}"
        r = _run(out, ids=ids)
        with RunStore(out) as store:
            store.put_label(r.run_id, 1, "token_f1", 1, drawn="random", labeller="ann")
            store.put_label(r.run_id, 2, "token_f1", 0.25, labeller="李")
            store.put_label(r.run_id, 4, "token_f1", 0)
            before = store.list_labels(r.run_id)
        first = tmp_path / f"first-{ids}.jsonl"
        code, _, err = _cli(["labels", "export", r.run_id, "--out", str(out), "--output", str(first)])
        assert code == 0, err
        records = [json.loads(line) for line in first.read_text(encoding="utf-8").splitlines()]
        assert {rec["id"] for rec in records} == {
            (f"s{i}" if ids else r.keys[i]) for i in (1, 2, 4)
        }  # the data's id, else the stored key
        assert all(rec["question"] and rec["kind"] == "point" for rec in records)
        # the exported file is a judgement file too
        assert {j.metric for j in load_judgements(first)} == {"token_f1"}
        with RunStore(out) as store:
            for lab in before:
                store.delete_label(r.run_id, lab.idx, lab.metric)
        code, _, err = _cli(["labels", "import", str(first), "--run", r.run_id, "--out", str(out)])
        assert code == 0, err
        with RunStore(out) as store:
            assert store.list_labels(r.run_id) == before  # everything, created_at and labeller included
        second = tmp_path / f"second-{ids}.jsonl"
        _cli(["labels", "export", "latest", "--out", str(out), "-O", str(second)])
        assert second.read_text(encoding="utf-8") == first.read_text(encoding="utf-8")


def test_export_next_samples_of_the_draw_to_label_elsewhere(tmp_path: Path) -> None:
    out = tmp_path / "runs"
    r = _run(out)
    with RunStore(out) as store:
        order = store.label_draw(r.run_id).order
        store.put_label(r.run_id, order[0], "token_f1", 1, drawn="random")
    todo = tmp_path / "todo.jsonl"
    code, stdout, err = _cli(
        [
            "labels",
            "export",
            r.run_id,
            "--out",
            str(out),
            "-O",
            str(todo),
            "--metric",
            "token_f1",
            "--next",
            "3",
        ]
    )
    assert code == 0 and "3 sample(s) to label" in stdout, err
    records = [json.loads(line) for line in todo.read_text(encoding="utf-8").splitlines()]
    assert [rec["id"] for rec in records] == [f"s{i}" for i in order[1:4]]
    assert all(rec["label"] is None and rec["drawn"] == "random" for rec in records)
    records[0]["label"], records[2]["label"] = 1, 0  # labelled two; left the middle one out
    _write(todo, records)
    code, stdout, err = _cli(["labels", "import", str(todo), "--run", r.run_id, "--out", str(out)])
    assert code == 0 and "2 label(s) imported; 1 row(s) skipped" in stdout
    assert "missing label" in err
    assert "2 random label(s) on the draw's labelled prefix" in stdout
    assert "1 held back behind 1 unlabelled sample(s) of the draw" in stdout
    code, _, err = _cli(["labels", "export", r.run_id, "--out", str(out), "-O", str(todo), "--next", "3"])
    assert code == 2 and "--next needs --metric" in err


def test_cli_errors(tmp_path: Path) -> None:
    r = _run(tmp_path / "runs")
    path = _write(tmp_path / "l.jsonl", [{"id": "zz", "metric": "token_f1", "label": 1}])
    code, _, err = _cli(["labels", "import", str(path), "--run", r.run_id, "--out", str(tmp_path / "runs")])
    assert (
        code == 0 and "no sample of the run has id 'zz'" in err
    )  # read, nothing matched: said, nothing stored
    code, _, err = _cli(
        [
            "labels",
            "import",
            str(tmp_path / "missing.jsonl"),
            "--run",
            "latest",
            "--out",
            str(tmp_path / "runs"),
        ]
    )
    assert code == 2 and "file not found" in err
    code, _, err = _cli(["labels", "import", str(path), "--run", "nope", "--out", str(tmp_path / "runs")])
    assert code == 2 and "no run 'nope'" in err
    code, _, err = _cli(["labels", "export", "latest", "--out", str(tmp_path / "empty"), "-O", str(path)])
    assert code == 2 and "no run store" in err
    code, _, err = _cli(
        ["labels", "export", "latest", "--out", str(tmp_path / "runs"), "-O", str(path), "--metric", "x"]
    )
    assert code == 2 and "no metric 'x'" in err


# ----------------------------------------------------------------------------------- Result


def test_result_labels_and_add_labels(tmp_path: Path) -> None:
    r = _run(tmp_path)
    done = r.add_labels(
        [{"id": "s1", "metric": "token_f1", "label": 1}, {"id": "s9", "metric": "token_f1", "label": 1}],
        drawn="random",
        labeller="me",
    )
    assert len(done.labels) == 1 and done.n_replaced == 0 and [p.row for p in done.problems] == [2]
    assert [(lab.idx, lab.drawn, lab.labeller) for lab in r.labels] == [(1, "random", "me")]
    assert [lab.idx for lab in Result.from_store(tmp_path, r.run_id).labels] == [1]
    # a run without a store keeps what it was given
    mem = ragmeter.evaluate(_rows(), ["token_f1"], None)
    assert mem.store_dir is None and mem.labels == []
    mem.add_labels([{"id": "s2", "metric": "token_f1", "label": 0.5}])
    assert mem.add_labels([{"id": "s2", "metric": "token_f1", "label": 0}]).n_replaced == 1
    assert [(lab.idx, lab.value, lab.label_kind) for lab in mem.labels] == [(2, 0.0, "binary")]
