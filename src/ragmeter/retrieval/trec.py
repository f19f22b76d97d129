"""Read TREC run files, TREC / BEIR relevance judgements (qrels) and query files.

- Run file (TREC, whitespace-separated): ``qid Q0 docid rank score tag``. As in trec_eval, the
  ranking is by ``score`` descending, ties broken by ``docid`` descending; the ``rank`` column is
  ignored. A docid repeated for one query is an error (trec_eval refuses it too).
- Qrels, TREC: ``qid iter docid grade`` (4 columns, whitespace-separated).
- Qrels, BEIR: ``query-id<TAB>corpus-id<TAB>score`` with a header line (3 columns).
  The format is told by the number of columns; a header line is skipped when its grade is not a number.
- Queries: BEIR ``queries.jsonl`` (``{"_id": ..., "text": ...}`` per line) or a TSV of ``qid<TAB>text``.

Every malformed line raises :class:`~ragmeter.errors.DatasetError` naming the file and line.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from pathlib import Path

from ragmeter.errors import DatasetError

__all__ = ["Qrels", "Run", "rank_run", "read_qrels", "read_queries", "read_trec_run"]

#: qid -> {docid: score}
Run = dict[str, dict[str, float]]
#: qid -> {docid: grade}
Qrels = dict[str, dict[str, int]]


def _lines(path: str | Path) -> Iterator[tuple[int, str]]:
    """Non-blank, non-comment lines with their 1-based numbers; a BOM is dropped, a byte that is not
    UTF-8 is a DatasetError naming the line (streamed: any file size)."""
    p = Path(path)
    if p.is_dir():
        raise DatasetError("is a directory, not a file", file=str(p))
    try:
        fh = p.open("rb")
    except OSError as e:
        raise DatasetError(f"cannot read: {e.strerror or e}", file=str(p)) from e
    with fh:
        for n, raw in enumerate(fh, start=1):
            try:
                line = raw.decode("utf-8-sig" if n == 1 else "utf-8")
            except UnicodeDecodeError as e:
                raise DatasetError(f"not UTF-8 text ({e.reason} at byte {e.start})", file=str(p), row=n) from None
            if line.strip() and not line.lstrip().startswith("#"):
                yield n, line.rstrip("\r\n")


def read_trec_run(path: str | Path) -> Run:
    """``{qid: {docid: score}}`` from a TREC run file (see the module docstring)."""
    run: Run = {}
    for n, line in _lines(path):
        parts = line.split()
        if len(parts) != 6:
            raise DatasetError(
                f"a TREC run line has 6 columns (qid Q0 docid rank score tag), found {len(parts)}",
                file=str(path),
                row=n,
            )
        qid, _, docid, _, score_text, _ = parts
        try:
            score = float(score_text)
        except ValueError:
            raise DatasetError(
                f"score {score_text!r} is not a number", file=str(path), row=n, field="score"
            ) from None
        if not math.isfinite(score):
            raise DatasetError(f"score {score_text!r} is not a finite number", file=str(path), row=n, field="score")
        docs = run.setdefault(qid, {})
        if docid in docs:
            raise DatasetError(f"docid {docid!r} appears twice for query {qid!r}", file=str(path), row=n)
        docs[docid] = score
    return run


def rank_run(scores: Mapping[str, float]) -> list[str]:
    """Docids ranked as trec_eval ranks them: score descending, then docid descending."""
    return [d for d, _ in sorted(scores.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)]


def read_qrels(path: str | Path) -> Qrels:
    """``{qid: {docid: grade}}`` from TREC (4-column) or BEIR (3-column TSV) qrels."""
    qrels: Qrels = {}
    first = True
    for n, line in _lines(path):
        parts = line.split("\t") if "\t" in line else line.split()
        parts = [p.strip() for p in parts]
        if len(parts) == 4:
            qid, _, docid, grade_text = parts
        elif len(parts) == 3:
            qid, docid, grade_text = parts
        else:
            raise DatasetError(
                "a qrels line has 4 columns (TREC: qid iter docid grade) or 3 (BEIR: query-id corpus-id "
                f"score), found {len(parts)}",
                file=str(path),
                row=n,
            )
        try:
            grade = int(float(grade_text))
        except (ValueError, OverflowError):  # not a number; NaN; infinite
            if first:  # a header line such as "query-id corpus-id score"
                first = False
                continue
            raise DatasetError(
                f"grade {grade_text!r} is not a number", file=str(path), row=n, field="grade"
            ) from None
        first = False
        qrels.setdefault(qid, {})[docid] = grade
    return qrels


def read_queries(path: str | Path) -> dict[str, str]:
    """``{qid: text}`` from BEIR ``queries.jsonl`` or a ``qid<TAB>text`` file."""
    out: dict[str, str] = {}
    jsonl = str(path).endswith((".jsonl", ".json"))
    for n, line in _lines(path):
        if jsonl:
            try:
                obj = json.loads(line)
            except ValueError as e:
                raise DatasetError(f"invalid JSON: {e}", file=str(path), row=n) from None
            except RecursionError:
                raise DatasetError("invalid JSON: nested too deeply", file=str(path), row=n) from None
            qid = obj.get("_id", obj.get("id")) if isinstance(obj, dict) else None
            text = obj.get("text") if isinstance(obj, dict) else None
            if qid is None or not isinstance(text, str):
                raise DatasetError('a query line needs "_id" and "text"', file=str(path), row=n)
            out[str(qid)] = text
        else:
            qid, sep, text = line.partition("\t")
            if not sep:
                raise DatasetError("a query line is qid<TAB>text", file=str(path), row=n)
            out[qid.strip()] = text.strip()
    return out
