"""File and object readers: each yields ``(row, record)`` or ``(row, DatasetError)``.

Rows are 1-based: the physical line number for JSONL (blank lines count, and are skipped), the
record number for JSON, CSV (the first line after the header is record 1), Parquet and DataFrames
(the position, not the index label).

Text is decoded as UTF-8 with ``errors="surrogateescape"``: an undecodable byte survives as a lone
surrogate, so validation reports it against the exact row and field while every other row loads.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ragmeter.errors import ConfigError, DatasetError

Item = tuple[int, Any]  # (row, record) or (row, DatasetError)

#: Containers a JSON file may wrap its records in.
JSON_RECORD_KEYS: tuple[str, ...] = ("samples", "data", "examples", "records", "rows")

PARQUET_HINT = "pip install 'ragmeter[parquet]'"


def _json_error(exc: json.JSONDecodeError) -> str:
    return f"broken JSON: {exc.msg} (column {exc.colno})"


def read_jsonl(path: Path, source: str) -> Iterator[Item]:
    """One JSON object a line. A broken line is a problem for that line only."""
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise DatasetError(f"cannot read file: {exc.strerror or exc}", file=source) from exc
    with handle:
        for lineno, raw in enumerate(handle, 1):
            text = raw.decode("utf-8", errors="surrogateescape")
            if lineno == 1:
                text = text.lstrip("\ufeff")
            if not text.strip():
                continue
            try:
                record = json.loads(text)
            except json.JSONDecodeError as exc:
                yield lineno, DatasetError(_json_error(exc), file=source, row=lineno)
                continue
            except RecursionError:
                yield lineno, DatasetError("broken JSON: nested too deeply", file=source, row=lineno)
                continue
            if not isinstance(record, dict):
                kind = type(record).__name__
                yield (
                    lineno,
                    DatasetError(f"expected a JSON object on this line, got {kind}", file=source, row=lineno),
                )
                continue
            yield lineno, record


def _columnar(data: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """``{"question": [...], "answer": [...]}`` (a dict of equal-length columns) -> records."""
    if not data or not all(isinstance(v, list) for v in data.values()):
        return None
    lengths = {len(v) for v in data.values()}
    if len(lengths) != 1:
        return None
    n = lengths.pop()
    return [{k: v[i] for k, v in data.items()} for i in range(n)]


def records_from_json_value(value: Any, source: str) -> list[Any]:
    """The records in a parsed JSON document (a list; a dict wrapping one; columns; one record)."""
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        for key in JSON_RECORD_KEYS:
            inner = value.get(key)
            if isinstance(inner, list):
                return inner
            if isinstance(inner, dict):
                columns = _columnar(inner)
                if columns is not None:
                    return columns
        columns = _columnar(value)
        if columns is not None:
            return columns
        return [value]
    raise DatasetError(
        f"expected a JSON list of records or an object holding one (under "
        f"{', '.join(repr(k) for k in JSON_RECORD_KEYS)}), got {type(value).__name__}",
        file=source,
    )


def read_json(path: Path, source: str) -> Iterator[Item]:
    """A JSON document: a list of records, ``{"samples"|"data"|"examples": [...]}``, columns, or
    (as Hugging Face ``to_json`` writes) JSON lines in a ``.json`` file.

    One document is parsed whole (the standard library has no streaming parser), so reading it
    holds its parsed records, several times the file's size; each record is released once it is
    read. JSON lines (``.jsonl``, and JSON lines under a ``.json`` name) are read a line at a time."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DatasetError(f"cannot read file: {exc.strerror or exc}", file=source) from exc
    text = data.decode("utf-8", errors="surrogateescape").lstrip("\ufeff")
    if not text.strip():
        return
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data" and text.lstrip().startswith("{"):
            yield from read_jsonl(path, source)  # JSON lines under a .json name
            return
        raise DatasetError(
            f"broken JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})", file=source
        ) from exc
    except RecursionError as exc:
        raise DatasetError("broken JSON: nested too deeply", file=source) from exc
    del data, text  # the parsed records are what is kept while they are read
    if isinstance(value, dict) and isinstance(value.get("resourceSpans"), list):
        yield 1, value  # one OTLP export request: the loader reads the file as traces
        return
    records = records_from_json_value(value, source)
    del value
    for i, record in enumerate(records, 1):
        records[i - 1] = None  # each record is released once it is read
        if isinstance(record, dict):
            yield i, record
        else:
            yield (
                i,
                DatasetError(
                    f"expected a JSON object as record, got {type(record).__name__}", file=source, row=i
                ),
            )


def read_csv(path: Path, source: str, *, delimiter: str = ",") -> Iterator[Item]:
    """A CSV (or TSV) file with a header line. Every cell is text; an empty cell is a missing value.
    Read as a stream: memory does not grow with the number of rows."""
    try:
        handle = path.open("r", encoding="utf-8-sig", errors="surrogateescape", newline="")
    except OSError as exc:
        raise DatasetError(f"cannot read file: {exc.strerror or exc}", file=source) from exc
    old_limit = csv.field_size_limit()
    csv.field_size_limit(2**31 - 1)  # long contexts exceed the default 128 KiB cell limit
    try:
        reader = csv.reader(handle, delimiter=delimiter)
        try:
            header = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise DatasetError(f"broken CSV header: {exc}", file=source) from exc
        header = [h.strip() for h in header]
        seen: set[str] = set()
        for name in header:
            if name in seen:
                raise DatasetError("duplicate column name in the header", file=source, field=name)
            seen.add(name)
        record_no = 0
        while True:
            try:
                cells = next(reader)
            except StopIteration:
                break
            except csv.Error as exc:
                record_no += 1
                yield record_no, DatasetError(f"broken CSV: {exc}", file=source, row=record_no)
                continue
            if not cells or all(not c.strip() for c in cells):
                continue
            record_no += 1
            if len(cells) > len(header):
                extra = len(cells) - len(header)
                yield (
                    record_no,
                    DatasetError(
                        f"{len(cells)} cells but the header has {len(header)} columns ({extra} too many; "
                        "quote cells that contain the delimiter)",
                        file=source,
                        row=record_no,
                    ),
                )
                continue
            record: dict[str, Any] = {}
            for i, name in enumerate(header):
                cell = cells[i] if i < len(cells) else ""
                if name == "" and not cell:
                    continue
                record[name] = cell if cell.strip() else None
            yield record_no, record
    finally:
        csv.field_size_limit(old_limit)
        handle.close()


def is_dataframe(obj: Any) -> bool:
    """A pandas DataFrame, detected without importing pandas."""
    cls = type(obj)
    return any(c.__name__ == "DataFrame" and c.__module__.split(".")[0] == "pandas" for c in cls.__mro__)


def records_from_dataframe(df: Any, source: str) -> Iterator[Item]:
    columns = [str(c) for c in df.columns]
    seen: set[str] = set()
    for name in columns:
        if name in seen:
            raise DatasetError("duplicate column name", file=source, field=name)
        seen.add(name)
    values = df.to_numpy(dtype=object) if len(df.columns) else None
    if values is None:
        for i in range(1, len(df) + 1):
            yield i, {}
        return
    for i, row in enumerate(values, 1):
        yield i, dict(zip(columns, row, strict=True))


#: rows a Parquet file is read in at a time (one Arrow record batch)
PARQUET_BATCH_ROWS = 1024
#: the read buffer of a Parquet column chunk: pages are read through it as they are decoded, so a
#: large row group is not read into memory whole (pyarrow's pre-buffering would read it whole)
PARQUET_BUFFER_BYTES = 1 << 20


def read_parquet(path: Path, source: str) -> Iterator[Item]:
    """A Parquet file, read with pyarrow a record batch at a time (``PARQUET_BATCH_ROWS`` rows, each
    row group in turn, its column chunks through a ``PARQUET_BUFFER_BYTES`` buffer), so memory
    holds a batch, not a row group or the file. Values are Arrow's Python values (lists, ``None``
    for a null, ``datetime``), rows the record number."""
    try:
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise ConfigError(f"reading Parquet needs pyarrow: {PARQUET_HINT}") from exc
    try:
        pf = pq.ParquetFile(path, buffer_size=PARQUET_BUFFER_BYTES, pre_buffer=False)
    except OSError as exc:
        raise DatasetError(f"cannot read file: {exc.strerror or exc}", file=source) from exc
    except Exception as exc:  # pyarrow raises its own error types for corrupt files
        raise DatasetError(f"cannot read Parquet: {exc}", file=source) from exc
    with pf:
        columns = [str(c) for c in pf.schema_arrow.names]
        seen: set[str] = set()
        for name in columns:
            if name in seen:
                raise DatasetError("duplicate column name", file=source, field=name)
            seen.add(name)
        row = 0
        batches = pf.iter_batches(batch_size=PARQUET_BATCH_ROWS)
        while True:
            try:
                batch = next(batches)
            except StopIteration:
                break
            except Exception as exc:  # a corrupt row group, found when it is read
                raise DatasetError(f"cannot read Parquet after record {row}: {exc}", file=source) from exc
            for record in batch.to_pylist():
                row += 1
                yield row, record


#: Readers by file extension.
READERS: dict[str, Any] = {
    ".jsonl": read_jsonl,
    ".ndjson": read_jsonl,
    ".json": read_json,
    ".csv": read_csv,
    ".tsv": lambda path, source: read_csv(path, source, delimiter="\t"),
    ".parquet": read_parquet,
    ".pq": read_parquet,
}


def reader_for(path: Path, source: str) -> Any:
    suffix = path.suffix.lower()
    reader = READERS.get(suffix)
    if reader is None:
        known = ", ".join(sorted(READERS))
        what = f"extension {suffix!r}" if suffix else "no extension"
        raise ConfigError(f"cannot read {source}: {what}; ragmeter reads {known}")
    return reader


__all__ = [
    "JSON_RECORD_KEYS",
    "PARQUET_BATCH_ROWS",
    "PARQUET_BUFFER_BYTES",
    "PARQUET_HINT",
    "READERS",
    "is_dataframe",
    "read_csv",
    "read_json",
    "read_jsonl",
    "read_parquet",
    "reader_for",
    "records_from_dataframe",
    "records_from_json_value",
]
