"""Hostile and broken input, property-tested (Hypothesis) against every reader.

Each reader gets files made from a valid one by: random bytes, truncation at any byte, a UTF-8 or
UTF-16 byte-order mark, a row re-encoded as Latin-1 / UTF-16, NaN / Infinity tokens, values nested
thousands deep, random bytes spliced in. Whatever comes in, a reader returns data or raises a
:class:`~ragmeter.errors.RagmeterError` (DatasetError naming the file, and the row where there is
one; ConfigError for a missing optional dependency) — never any other exception. Through the CLI,
the same files give exit code 0 or 2 and never a traceback. Example counts: the ``default``
profile in tests/conftest.py (``HYPOTHESIS_PROFILE=thorough`` for a long search).
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from ragmeter.cli.main import cli
from ragmeter.dataset import load_dataset
from ragmeter.dataset.judgements import load_judgements
from ragmeter.dataset.validate import DatasetErrors
from ragmeter.errors import ConfigError, DatasetError, RagmeterError
from ragmeter.retrieval.trec import read_qrels, read_queries, read_trec_run
from ragmeter.testset.documents import load_documents

RECORDS = [
    {"id": "a", "question": "What is 2+2?", "answer": "4.", "contexts": ["2+2 is 4."], "reference": "4"},
    {"id": "b", "question": "Capital of France?", "answer": "Paris.", "contexts": ["Paris is the capital."]},
    {"id": "c", "question": "季节", "answer": "四季。", "contexts": ["一年有四季。", "x"], "reference": "四"},
]


def _jsonl() -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in RECORDS).encode()


def _json() -> bytes:
    return json.dumps({"samples": RECORDS}, ensure_ascii=False, indent=1).encode()


def _csv() -> bytes:
    import csv

    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(["id", "question", "answer", "contexts", "reference"])
    for r in RECORDS:
        writer.writerow(
            [r["id"], r["question"], r["answer"], json.dumps(r["contexts"]), r.get("reference", "")]
        )
    return buf.getvalue().encode()


def _parquet() -> bytes:
    import pandas as pd

    buf = io.BytesIO()
    pd.DataFrame(RECORDS).to_parquet(buf)
    return buf.getvalue()


def _judgements() -> bytes:
    rows = [
        {"id": "p1", "aspect": "faithfulness", "kind": "pair", "question": "Q?", "contexts": ["C."],
         "a": {"answer": "C."}, "b": {"answer": "D."}, "preferred": "a"},
        {"id": "p2", "aspect": "correctness", "kind": "point", "question": "Q?", "answer": "A.",
         "reference": "A.", "label": 1, "label_kind": "binary"},
    ]  # fmt: skip
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


TREC_RUN = b"q1 Q0 d1 1 2.5 sys\nq1 Q0 d2 2 1.5 sys\nq2 Q0 d3 1 0.7 sys\n"
QRELS = b"query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td3\t2\n"
QUERIES = b'{"_id": "q1", "text": "first"}\n{"_id": "q2", "text": "second"}\n'
MARKDOWN = "# Title\n\nSome text about towers. 塔很高。\n".encode()
HTML = b"<html><head><title>T</title></head><body><h1>H</h1><p>Towers are tall.</p><script>x()</script></body></html>"


def _traces() -> bytes:
    from helpers.otlp import export, rag_trace

    lines = [
        export(*rag_trace(1, "Q?", ["C."], "A.", ids=["d1"])),
        export(*rag_trace(2, "塔多高？", ["塔很高。"], "很高。")),
    ]
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def _load(path: Path) -> object:
    return load_dataset(path)


#: name -> (file suffix, valid content, reader)
READERS: dict[str, tuple[str, Callable[[], bytes], Callable[[Path], object]]] = {
    "jsonl": (".jsonl", _jsonl, _load),
    "json": (".json", _json, _load),
    "csv": (".csv", _csv, _load),
    "tsv": (".tsv", lambda: _csv().replace(b",", b"\t"), _load),
    "parquet": (".parquet", _parquet, _load),
    "judgements": (".jsonl", _judgements, load_judgements),
    "judgements-as-dataset": (".jsonl", _judgements, _load),
    "traces": (".otlp.jsonl", _traces, _load),
    "trec-run": (".txt", lambda: TREC_RUN, read_trec_run),
    "qrels": (".tsv", lambda: QRELS, read_qrels),
    "queries": (".jsonl", lambda: QUERIES, read_queries),
    "document-md": (".md", lambda: MARKDOWN, load_documents),
    "document-html": (".html", lambda: HTML, load_documents),
    "document-pdf": (
        ".pdf",
        lambda: b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n",
        load_documents,
    ),
}


@st.composite
def hostile(draw: st.DrawFn, valid: bytes) -> bytes:
    """A file made from ``valid`` by one kind of damage."""
    kind = draw(st.sampled_from(["random", "truncate", "bom", "utf16", "recode", "nan", "nested", "splice"]))
    if kind == "random":
        return draw(st.binary(max_size=3000))
    if kind == "truncate":
        return valid[: draw(st.integers(0, max(0, len(valid) - 1)))]
    if kind == "bom":
        return b"\xef\xbb\xbf" + valid
    if kind == "utf16":
        return valid.decode("utf-8", errors="replace").encode(
            draw(st.sampled_from(["utf-16", "utf-16-le", "utf-32"]))
        )
    if kind == "recode":  # one line in another encoding: mixed encodings in one file
        lines = valid.decode("utf-8", errors="replace").splitlines(keepends=True) or [""]
        i = draw(st.integers(0, len(lines) - 1))
        enc = draw(st.sampled_from(["latin-1", "cp1252", "utf-16-le", "gb18030"]))
        lines[i] = lines[i].encode(enc, errors="replace").decode("latin-1")
        return "".join(lines).encode("latin-1", errors="replace")
    if kind == "nan":
        token = draw(st.sampled_from([b"NaN", b"Infinity", b"-Infinity", b"1e999", b"nan", b"inf"]))
        return (
            valid.replace(b'"4."', token, 1)
            .replace(b"2.5", token, 1)
            .replace(b'"label": 1', b'"label": ' + token)
        )
    if kind == "nested":
        depth = draw(st.integers(10, 50_000))
        return valid.replace(b'"4."', b"[" * depth + b"]" * depth, 1).replace(b"first", b"[" * depth, 1)
    pos = draw(st.integers(0, len(valid)))
    return valid[:pos] + draw(st.binary(min_size=1, max_size=64)) + valid[pos:]


def check_outcome(fn: Callable[[Path], object], path: Path) -> None:
    """Data, or a RagmeterError that names the file (and the row, for row problems)."""
    try:
        result = fn(path)
    except DatasetErrors as exc:
        assert exc.problems
        for p in exc.problems:
            assert p.file == str(path) and p.row is not None, p
    except DatasetError as exc:
        assert exc.file is not None and str(path) in exc.file, exc
    except ConfigError:
        pass
    else:
        for p in getattr(result, "problems", ()):
            assert p.file == str(path) and p.row is not None, p


@pytest.mark.parametrize("name", sorted(READERS))
@given(data=st.data())
def test_reader_survives_hostile_files(name: str, data: st.DataObject, tmp_path_factory: Any) -> None:
    suffix, valid, fn = READERS[name]
    content = data.draw(hostile(valid()), label="content")
    path = tmp_path_factory.mktemp("hostile") / f"input{suffix}"
    path.write_bytes(content)
    check_outcome(fn, path)


# the seed PDF is a stub with no page: only its damaged forms are of interest
@pytest.mark.parametrize("name", sorted(set(READERS) - {"document-pdf"}))
def test_valid_seed_files_read(name: str, tmp_path: Path) -> None:
    """The files the damage starts from are good ones (so the property tests break real input)."""
    suffix, valid, fn = READERS[name]
    path = tmp_path / f"input{suffix}"
    path.write_bytes(valid())
    result = fn(path)
    assert result and not getattr(result, "problems", ())


@given(content=hostile(_jsonl()), fmt=st.sampled_from([".jsonl", ".json", ".csv"]))
def test_cli_never_shows_a_traceback(content: bytes, fmt: str, tmp_path_factory: Any) -> None:
    path = tmp_path_factory.mktemp("cli") / f"data{fmt}"
    path.write_bytes(content)
    res = CliRunner().invoke(cli, ["evaluate", str(path), "--dry-run", "--json"])
    assert res.exit_code in (0, 2), (res.exit_code, res.stderr, res.exception)
    assert res.exception is None or isinstance(res.exception, SystemExit)
    assert "Traceback" not in res.stderr
    if res.exit_code == 2:
        assert "error:" in res.stderr


@pytest.mark.parametrize("fmt", [".jsonl", ".json", ".csv", ".parquet"])
def test_a_10_mb_field_loads_whole(fmt: str, tmp_path: Path) -> None:
    big = "word " * (2 * 1024 * 1024)  # 10 MiB of text in one context
    rows = [{"question": "Q?", "answer": "A.", "contexts": [big]}, RECORDS[0]]
    path = tmp_path / f"big{fmt}"
    if fmt == ".jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    elif fmt == ".json":
        path.write_text(json.dumps(rows))
    elif fmt == ".csv":
        import csv

        with path.open("w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["question", "answer", "contexts"])
            for r in rows:
                w.writerow([r["question"], r["answer"], json.dumps(r["contexts"])])
    else:
        import pandas as pd

        pd.DataFrame(rows).to_parquet(path)
    ds = load_dataset(path)
    assert len(ds) == 2 and len(ds.samples[0].contexts[0]) == len(big)


def test_deep_nesting_is_a_row_problem(tmp_path: Path) -> None:
    path = tmp_path / "deep.jsonl"
    deep = "[" * 100_000 + "]" * 100_000
    path.write_text(json.dumps(RECORDS[0]) + "\n" + '{"question": ' + deep + "}\n")
    ds = load_dataset(path)
    assert len(ds) == 1 and len(ds.problems) == 1
    assert ds.problems[0].row == 2 and "nested too deeply" in str(ds.problems[0])


def test_nan_and_infinity_are_missing_values_or_problems_never_numbers(tmp_path: Path) -> None:
    path = tmp_path / "nan.jsonl"
    path.write_text(json.dumps(RECORDS[0]) + '\n{"question": NaN, "answer": "x", "contexts": ["y"]}\n')
    ds = load_dataset(path, required_fields=["question"])  # NaN is a missing value, as in pandas
    assert len(ds) == 1 and ds.problems and ds.problems[0].row == 2 and ds.problems[0].field == "question"
    trec = tmp_path / "run.txt"
    trec.write_text("q1 Q0 d1 1 Infinity sys\n")
    with pytest.raises(DatasetError, match="not a finite number") as info:
        read_trec_run(trec)
    assert (info.value.row, info.value.field) == (1, "score")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 inf\n")
    with pytest.raises(DatasetError) as info2:
        read_qrels(qrels)
    assert (info2.value.row, info2.value.field) == (2, "grade")


def test_every_problem_is_a_ragmeter_error() -> None:
    assert issubclass(DatasetErrors, RagmeterError)


_STREAM_CHILD = r"""
import json, sys
from pathlib import Path
from ragmeter.dataset.readers import read_csv, read_jsonl
from ragmeter.dataset.seen import Seen, SpilledSeen
from ragmeter.dataset.sources import SampleStream


def high_water_kib():
    # this process's own peak RSS (VmHWM): ru_maxrss would carry over the parent's (pytest's) peak
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise SystemExit("no VmHWM")


kind, path = sys.argv[1], Path(sys.argv[2])
base = high_water_kib()
if kind == "reader":
    reader = read_jsonl if path.suffix == ".jsonl" else read_csv
    n = sum(1 for _ in reader(path, str(path)))
else:  # the run's intake: every row validated, keyed and hashed
    stream = SampleStream(path, seen=SpilledSeen() if kind == "spilled" else Seen())
    n = sum(1 for _ in stream)
print(json.dumps({"rows": n, "growth_kib": high_water_kib() - base}))
"""


def _stream_growth(path: Path, kind: str = "reader") -> dict[str, int]:
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", _STREAM_CHILD, kind, str(path)], capture_output=True, text=True, check=True
    )
    result: dict[str, int] = json.loads(out.stdout)
    return result


def _big_files(directory: Path, rows: int) -> list[Path]:
    jsonl, csv_path = directory / "big.jsonl", directory / "big.csv"
    with jsonl.open("w") as fj, csv_path.open("w") as fc:
        fc.write("question,answer,contexts\n")
        for i in range(rows):
            fj.write(
                f'{{"question": "Q{i}?", "answer": "Answer {i}.", "contexts": ["Context number {i}."]}}\n'
            )
            fc.write(f"Q{i}?,Answer {i}.,Context number {i}.\n")
    return [jsonl, csv_path]


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads VmHWM from /proc (Linux)")
@pytest.mark.parametrize("rows", [100_000, pytest.param(1_000_000, marks=pytest.mark.slow)])
def test_readers_stream_with_bounded_memory(rows: int, tmp_path: Path) -> None:
    """Peak RSS while a reader yields every row stays far below the file's size (bench/reader_memory.py
    measures the same at 1 million rows)."""
    for path in _big_files(tmp_path, rows):
        result = _stream_growth(path)
        assert result["rows"] == rows
        size_kib = path.stat().st_size // 1024
        assert result["growth_kib"] < min(16 * 1024, size_kib // 4), (path.name, result, size_kib)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads VmHWM from /proc (Linux)")
def test_a_run_reads_its_rows_in_flat_memory(tmp_path: Path) -> None:
    """The samples a run reads are validated, keyed, hashed and checked for repeated ids with what
    the stream remembers in a temporary file (SpilledSeen): memory does not grow with the rows, as
    it does when the ids and keys are kept in dicts."""
    jsonl = _big_files(tmp_path, 30_000)[0]
    spilled = _stream_growth(jsonl, "spilled")
    in_dicts = _stream_growth(jsonl, "dicts")  # about 250 bytes a row
    assert spilled["rows"] == in_dicts["rows"] == 30_000
    assert spilled["growth_kib"] < 4 * 1024 < in_dicts["growth_kib"], (spilled, in_dicts)
