"""The repository stands alone: a clone holds everything its scripts, benches, docs and tests read."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
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
    for name in ("begin_dev", "halueval_dev", "truthfulqa_dev", "halluqa_zh_dev", "wikieval_dev"):
        assert (data / "dev" / f"{name}.jsonl").stat().st_size > 10_000
    assert (data / "nli" / "pairs_en.jsonl.gz").stat().st_size > 1_000_000
    assert sorted(p.name for p in (data / "dev" / "licenses").iterdir()) == [
        "NOTICE_cmu.txt", "NOTICE_tc.txt", "NOTICE_wow.txt"
    ]
    readme = (data / "README.md").read_text(encoding="utf-8")
    for name in ("begin_dev.jsonl", "halueval_dev.jsonl", "truthfulqa_dev.jsonl", "halluqa_zh_dev.jsonl",
                 "wikieval_dev.jsonl", "licen"):
        assert name in readme
