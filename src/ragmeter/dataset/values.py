"""Converting raw values: missing-value detection, text, ids, lists, and JSON-safe metadata.

Each ``convert_*`` function returns the clean value (``None`` for missing) or raises a
:class:`~ragmeter.errors.DatasetError` naming file, row and field (the input column).
"""

from __future__ import annotations

import ast
import datetime as _dt
import json
import math
from collections.abc import Mapping
from typing import Any

from ragmeter.errors import DatasetError


def is_missing(value: Any) -> bool:
    """None, NaN (float or NumPy), ``pandas.NA`` and ``pandas.NaT``."""
    if value is None:
        return True
    if isinstance(value, float):
        return math.isnan(value)
    name = type(value).__name__
    if name in ("NAType", "NaTType"):
        return True
    if type(value).__module__ == "numpy" and name.startswith("float"):
        try:
            return bool(math.isnan(float(value)))
        except (TypeError, ValueError):
            return False
    return False


def text_problem(text: str) -> str | None:
    """Why ``text`` is not valid Unicode text (invalid UTF-8 bytes, a lone surrogate), or None."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        code = ord(text[exc.start])
        if 0xDC80 <= code <= 0xDCFF:  # an undecodable byte, kept by errors="surrogateescape"
            return f"invalid UTF-8 (byte 0x{code - 0xDC00:02X} at character {exc.start})"
        return f"invalid text: lone surrogate U+{code:04X} at character {exc.start}"
    return None


def type_name(value: Any) -> str:
    return type(value).__name__


def short_repr(value: Any) -> str:
    s = repr(value)
    return s if len(s) <= 60 else s[:57] + "..."


def as_text(value: Any) -> Any:
    """NumPy strings / bytes -> str (bytes must be UTF-8); anything else unchanged."""
    if isinstance(value, bytes):
        # undecodable bytes survive as surrogates, which text_problem() then reports
        return value.decode("utf-8", errors="surrogateescape")
    if isinstance(value, str) and type(value) is not str:
        return str(value)
    return value


def to_list(value: Any) -> Any:
    """Tuples, NumPy arrays and pyarrow/pandas list-likes -> list; anything else unchanged."""
    if isinstance(value, list):
        return value
    if isinstance(value, tuple):
        return list(value)
    if not isinstance(value, (str, bytes, Mapping)) and hasattr(value, "tolist"):
        out = value.tolist()
        return out if isinstance(out, list) else value
    return value


def parse_encoded_list(text: str) -> list[Any] | None:
    s = text.strip()
    if not (s.startswith("[") and s.endswith("]")):
        return None
    for parse in (json.loads, ast.literal_eval):
        try:
            parsed = parse(s)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        if isinstance(parsed, list):
            return parsed
    return None


def convert_id(value: Any, *, file: str | None, row: int, column: str) -> str | None:
    value = as_text(value)
    if is_missing(value):
        return None
    if isinstance(value, bool):
        raise DatasetError(
            f"expected an id (text or number), got bool {value!r}", file=file, row=row, field=column
        )
    if type(value).__module__ == "numpy" and hasattr(value, "item"):
        value = value.item()
    if isinstance(value, str):
        problem = text_problem(value)
        if problem:
            raise DatasetError(problem, file=file, row=row, field=column)
        return value.strip() or None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isinf(value):
            raise DatasetError(f"expected an id, got {value!r}", file=file, row=row, field=column)
        return str(int(value)) if value.is_integer() else repr(value)
    raise DatasetError(
        f"expected an id (text or number), got {type_name(value)} {short_repr(value)}",
        file=file,
        row=row,
        field=column,
    )


def convert_text(value: Any, *, file: str | None, row: int, column: str) -> str | None:
    value = as_text(value)
    if is_missing(value):
        return None
    if not isinstance(value, str):
        raise DatasetError(
            f"expected text, got {type_name(value)} {short_repr(value)}", file=file, row=row, field=column
        )
    problem = text_problem(value)
    if problem:
        raise DatasetError(problem, file=file, row=row, field=column)
    return value


def convert_list(value: Any, *, file: str | None, row: int, column: str, ids: bool) -> tuple[str, ...] | None:
    value = as_text(value)
    if is_missing(value):
        return None
    if isinstance(value, str):
        parsed = parse_encoded_list(value)
        items: Any = parsed if parsed is not None else [value]
    else:
        items = to_list(value)
    if not isinstance(items, list):
        what = "ids" if ids else "strings"
        raise DatasetError(
            f"expected a list of {what}, got {type_name(value)} {short_repr(value)}",
            file=file,
            row=row,
            field=column,
        )
    out: list[str] = []
    for i, item in enumerate(items):
        where = f"{column}[{i}]"
        if ids:
            text = convert_id(item, file=file, row=row, column=where)
            if text is None:
                raise DatasetError("expected an id, got a missing value", file=file, row=row, field=where)
        else:
            item = as_text(item)
            if not isinstance(item, str):
                raise DatasetError(
                    f"expected a list of strings, item {i} is {type_name(item)} {short_repr(item)}",
                    file=file,
                    row=row,
                    field=column,
                )
            problem = text_problem(item)
            if problem:
                raise DatasetError(problem, file=file, row=row, field=where)
            text = item
        out.append(text)
    return tuple(out)


def jsonable(value: Any, *, file: str | None, row: int, column: str) -> Any:
    """Metadata values made JSON-safe: NumPy -> Python, NaN/inf -> None, datetimes -> ISO text.

    Text with invalid UTF-8 is an error (the run record could not store it)."""
    value = as_text(value)
    if is_missing(value):
        return None
    if isinstance(value, str):
        problem = text_problem(value)
        if problem:
            raise DatasetError(problem, file=file, row=row, field=column)
        return value
    if isinstance(value, bool) or isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if type(value).__module__ == "numpy":
        if hasattr(value, "tolist"):
            return jsonable(value.tolist(), file=file, row=row, column=column)
        if hasattr(value, "item"):
            return jsonable(value.item(), file=file, row=row, column=column)
    if isinstance(value, (_dt.date, _dt.time)):
        return value.isoformat()
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for k, v in value.items():
            key = str(k)
            problem = text_problem(key)
            if problem:
                raise DatasetError(f"key: {problem}", file=file, row=row, field=column)
            out[key] = jsonable(v, file=file, row=row, column=f"{column}.{key}")
        return out
    listed = to_list(value)
    if isinstance(listed, list):
        return [jsonable(v, file=file, row=row, column=column) for v in listed]
    if isinstance(value, (set, frozenset)):
        return [jsonable(v, file=file, row=row, column=column) for v in sorted(value, key=repr)]
    if hasattr(value, "model_dump"):
        return jsonable(value.model_dump(), file=file, row=row, column=column)
    return str(value)


__all__ = [
    "convert_id",
    "convert_list",
    "convert_text",
    "is_missing",
    "jsonable",
    "text_problem",
]
