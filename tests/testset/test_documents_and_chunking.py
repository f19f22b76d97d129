"""Document loading (.txt/.md/.html/.pdf) and sentence-aware chunking."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import pytest

from ragmeter import ConfigError, DatasetError
from ragmeter.testset import chunk_documents, chunk_text, html_to_text, load_documents
from ragmeter.testset.chunking import join_sentences

from .conftest import DOCS


def test_example_folder_loads_en_and_zh_with_ids_and_titles() -> None:
    pytest.importorskip("pypdf")
    docs = {d.id: d for d in load_documents(DOCS)}
    assert set(docs) == {
        "en/eiffel_tower",
        "en/great_wall_of_china",
        "en/photosynthesis",
        "en/python_gil",
        "zh/beijing",
        "zh/changcheng",
        "zh/guanghe_zuoyong",
    }
    assert docs["en/eiffel_tower"].title == "The Eiffel Tower"  # markdown heading
    assert docs["en/photosynthesis"].title == "Photosynthesis"  # first short line of a .txt
    assert docs["en/python_gil"].title == "The Global Interpreter Lock"  # <title>
    assert docs["en/great_wall_of_china"].title == "The Great Wall of China"  # PDF metadata
    assert "21,196 kilometres" in docs["en/great_wall_of_china"].text
    assert docs["zh/changcheng"].lang == "zh" and docs["en/python_gil"].lang == "en"
    assert docs["zh/beijing"].title == "北京"


def test_html_to_text_keeps_what_a_reader_sees() -> None:
    title, text = html_to_text(
        "<html><head><title>T &amp; U</title><script>var x = 1;</script></head><body><nav>menu</nav>"
        "<h1>Head</h1><p>First <b>bold</b> para.</p><ul><li>one</li><li>two</li></ul><footer>foot</footer></body></html>"
    )
    assert title == "T & U"
    assert "var x" not in text and "menu" not in text and "foot" not in text
    assert "First bold para." in text and "- one" in text and "- two" in text


def test_pdf_without_pypdf_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pypdf", None)
    with pytest.raises(ConfigError, match=r"pip install 'ragmeter\[docs\]'"):
        load_documents(DOCS / "en" / "great_wall_of_china.pdf")


def test_bad_inputs_are_clear(tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"caf\xe9 latin-1")
    with pytest.raises(DatasetError, match=r"bad\.txt.*not UTF-8"):
        load_documents(bad)
    other = tmp_path / "x.docx"
    other.write_text("x")
    with pytest.raises(ConfigError, match="unsupported document type"):
        load_documents(other)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DatasetError, match="no document with text"):
        load_documents(empty)
    with pytest.raises(DatasetError, match="no such file"):
        load_documents(tmp_path / "missing")


def test_same_stem_different_extension_get_distinct_ids(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("Alpha text here.")
    (tmp_path / "a.md").write_text("# A\n\nAlpha markdown.")
    ids = [d.id for d in load_documents(tmp_path)]
    assert len(set(ids)) == 2


def test_chunks_respect_size_and_overlap_by_whole_sentences() -> None:
    sentences = [f"Sentence number {i} says something about topic {i}." for i in range(30)]
    chunks = chunk_text(" ".join(sentences), chunk_size=200, overlap=60)
    assert len(chunks) > 3
    assert all(len(c) <= 200 for c in chunks)
    for a, b in itertools.pairwise(chunks):
        last = a.split(". ")[-1]
        assert b.startswith(last.rstrip(".")), (a, b)  # the previous chunk's last sentence carries over
    joined = " ".join(chunks)
    assert all(s in joined for s in sentences)  # nothing lost


def test_chinese_chunks_split_at_sentence_ends_without_spaces() -> None:
    text = "北京是中国的首都。上海是最大的城市。广州在南方。深圳是科技中心。杭州有西湖。"
    chunks = chunk_text(text, chunk_size=20, overlap=8)
    assert chunks[0] == "北京是中国的首都。上海是最大的城市。"
    assert all(c.endswith("。") and " " not in c for c in chunks)
    assert "杭州有西湖。" in chunks[-1]


def test_long_sentence_is_cut_and_bad_sizes_refused() -> None:
    chunks = chunk_text("word " * 100, chunk_size=50, overlap=0)
    assert all(len(c) <= 50 for c in chunks) and len(chunks) >= 9
    with pytest.raises(ConfigError):
        chunk_text("x", chunk_size=5)
    with pytest.raises(ConfigError):
        chunk_text("x", chunk_size=100, overlap=100)


def test_headings_stay_on_their_own_line() -> None:
    assert join_sentences(["Height", "The tower is tall."]) == "Height\nThe tower is tall."
    assert join_sentences(["长城", "长城很长。", "它在北方。"]) == "长城\n长城很长。它在北方。"


def test_chunk_ids_and_provenance() -> None:
    chunks = chunk_documents(load_documents(DOCS / "zh"), chunk_size=80, overlap=20)
    assert chunks[0].id == f"{chunks[0].doc_id}#0" and chunks[0].lang == "zh"
    assert {c.doc_id for c in chunks} == {
        "beijing",
        "changcheng",
        "guanghe_zuoyong",
    }  # relative to the folder given
