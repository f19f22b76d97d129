"""The repository stands alone: a clone holds everything its scripts, benches, docs and tests read."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: every judgement file in data/dev (the test below fails on one that is not listed here)
DEV_FILES = (
    "begin_dev",
    "halueval_dev",
    "truthfulqa_dev",
    "halluqa_zh_dev",
    "textbook_dev",
    "textbook_heldout",
    "textbook_final",
    "textbook_fresh",
    "textbook_blind",
    "textbook_check",
    "agent_trajectories_dev",
    "agent_trajectories_heldout",
    "short_reference_dev",
    "wikieval_dev",
    "news_summaries_constructed",
    "news_summary_pairs_constructed",
)
OUTSIDE = re.compile(r"\.\./shared|(^|[^_a-z])shared/(data|DESIGN)")


def _tracked_files() -> list[Path]:
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, timeout=30
        ).stdout
    except (OSError, subprocess.SubprocessError):
        pytest.skip("not a git checkout")
    return [ROOT / name for name in out.decode().split("\0") if name]


def test_nothing_tracked_names_a_folder_outside_the_repository() -> None:
    offenders = []
    for path in _tracked_files():
        if path == Path(__file__).resolve() or not path.is_file() or path.stat().st_size > 5_000_000:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if OUTSIDE.search(line):
                offenders.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()[:120]}")
    assert not offenders, "\n".join(offenders)


def test_the_dev_data_and_its_licences_are_in_the_repository() -> None:
    data = ROOT / "data"
    for name in DEV_FILES:
        assert (data / "dev" / f"{name}.jsonl").stat().st_size > 10_000
    assert (data / "nli" / "pairs_en.jsonl.gz").stat().st_size > 1_000_000
    assert sorted(p.name for p in (data / "dev" / "licenses").iterdir()) == [
        "NOTICE_cmu.txt", "NOTICE_tc.txt", "NOTICE_wow.txt"
    ]
    readme = (data / "README.md").read_text(encoding="utf-8")
    for name in (*(f"{n}.jsonl" for n in DEV_FILES), "licen"):
        assert name in readme
    assert sorted(p.stem for p in (data / "dev").glob("*.jsonl")) == sorted(DEV_FILES)


@pytest.mark.parametrize("name", DEV_FILES)
def test_every_dev_file_reads_as_judgements_without_a_problem(name: str) -> None:
    from ragmeter.dataset import load_judgements

    judgements = load_judgements(ROOT / "data" / "dev" / f"{name}.jsonl")
    assert len(judgements) > 0 and not judgements.problems


def test_the_constructed_news_summaries_keep_their_construction() -> None:
    """Label 1 is `consistent`, label 0 one named error type; each pair undoes the error of one label-0 row."""
    import json

    dev = ROOT / "data" / "dev"
    points = [json.loads(x) for x in (dev / "news_summaries_constructed.jsonl").read_text("utf-8").splitlines()]
    pairs = [json.loads(x) for x in (dev / "news_summary_pairs_constructed.jsonl").read_text("utf-8").splitlines()]
    types = {"number", "negation", "attribution", "circumstance", "predicate", "extrinsic", "entity"}
    for r in points:
        kind = r["note"].split(":")[0]
        assert (kind == "consistent") if r["label"] == 1 else (kind in types), r["id"]
        assert r["lang"] in ("en", "zh") and r["kind"] == "point" and r["label_kind"] == "binary"
    assert 0.4 <= sum(r["label"] for r in points) / len(points) <= 0.6
    wrong = {r["id"]: r for r in points if r["label"] == 0}
    assert sorted(p["of"] for p in pairs) == sorted(wrong)
    for p in pairs:
        orig = wrong[p["of"]]
        fixed, kept = (p["a"], p["b"]) if p["preferred"] == "a" else (p["b"], p["a"])
        assert kept["answer"] == orig["answer"] != fixed["answer"]
        assert p["contexts"] == orig["contexts"] and p["note"] == orig["note"]
