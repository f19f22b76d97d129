"""Tolerant JSON parsing of model replies, and a tiny validator for the schemas ragmeter uses.

:func:`parse_json` accepts what models actually send: code fences, prose around the JSON, a
``<think>`` block before it, trailing commas, single-quoted strings (where unambiguous), Python
``True``/``False``/``None``. With a schema, the first JSON value in the reply that validates wins
(so a ``[1]`` citation in the prose before the object is skipped). Failure raises
:class:`~ragmeter.errors.JudgeOutputError` carrying the raw reply.

:func:`validate` checks ``type``, ``properties``, ``required``, ``items``, ``enum`` and
``minItems``/``maxItems``, and coerces the harmless variants models produce (``"yes"`` -> ``True``,
``"3"`` -> ``3``, a bare array where the schema wants an object with one array property).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterator, Mapping
from typing import Any

from ragmeter.errors import JudgeOutputError

_FENCE_RE = re.compile(r"```[ \t]*[A-Za-z0-9_+-]*[ \t]*\n?(.*?)```", re.DOTALL)
_THINK_RE = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)

_TRUE_WORDS = frozenset({"yes", "true", "y", "supported", "1", "是", "对", "支持", "正确"})
_FALSE_WORDS = frozenset(
    {"no", "false", "n", "unsupported", "not supported", "0", "否", "不", "不支持", "错误", "不是"}
)


_MAX_STARTS = 500  # bracket positions tried per reply (bounds the work on long garbage)


class SchemaError(ValueError):
    """A JSON value does not match the expected schema; the message names the path."""


# --------------------------------------------------------------------------------------------
# extraction and repair


def _strip_wrappers(text: str) -> str:
    text = _THINK_RE.sub("", text)
    # an unterminated <think> (reply cut off, or tag opened and never closed): keep what follows it
    low = text.lower()
    if "</think>" in low:
        text = text[low.rindex("</think>") + len("</think>") :]
    return text.strip().lstrip("\ufeff")


def _balanced_end(text: str, start: int) -> int | None:
    """Index just past the bracket that closes the one at ``start``, respecting quoted strings."""
    stack: list[str] = []
    quote: str | None = None
    i = start
    n = len(text)
    while i < n:
        ch = text[i]
        if quote is not None:
            if ch == "\\":
                i += 2
                continue
            if ch == quote:
                quote = None
            elif ch == "\n" and quote == "'":
                # a lone apostrophe in prose, not a string: stop treating it as one
                quote = None
        elif ch == '"' or (ch == "'" and _single_quote_opens(text, i)):
            quote = ch
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]":
            if not stack or stack[-1] != ch:
                return None
            stack.pop()
            if not stack:
                return i + 1
        i += 1
    return None


def _single_quote_opens(text: str, i: int) -> bool:
    """A ``'`` opens a string only right after ``{ [ , :`` (ignoring whitespace)."""
    j = i - 1
    while j >= 0 and text[j] in " \t\r\n":
        j -= 1
    return j >= 0 and text[j] in "{[,:"


def _repair(candidate: str) -> str:
    """Rewrite near-JSON as JSON: single-quoted strings, Python literals, trailing commas."""
    out: list[str] = []
    i = 0
    n = len(candidate)
    while i < n:
        ch = candidate[i]
        if ch == '"':
            j = i + 1
            while j < n and candidate[j] != '"':
                j += 2 if candidate[j] == "\\" else 1
            out.append(candidate[i : j + 1])
            i = j + 1
        elif ch == "'" and _single_quote_opens(candidate, i):
            j = i + 1
            buf: list[str] = []
            while j < n and candidate[j] != "'":
                c = candidate[j]
                if c == "\\" and j + 1 < n:
                    nxt = candidate[j + 1]
                    buf.append("'" if nxt == "'" else c + nxt)
                    j += 2
                    continue
                buf.append('\\"' if c == '"' else c)
                j += 1
            out.append('"' + "".join(buf) + '"')
            i = j + 1
        elif ch == ",":
            j = i + 1
            while j < n and candidate[j] in " \t\r\n":
                j += 1
            if j < n and candidate[j] in "}]":
                i += 1  # trailing comma
            else:
                out.append(ch)
                i += 1
        elif ch.isalpha() or ch == "_":
            j = i
            while j < n and (candidate[j].isalnum() or candidate[j] == "_"):
                j += 1
            word = candidate[i:j]
            out.append({"True": "true", "False": "false", "None": "null"}.get(word, word))
            i = j
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _loads(candidate: str) -> Any:
    # strict=False: raw newlines and tabs inside strings, which small models under grammar
    # decoding emit (llama.cpp's JSON grammar lets them through)
    try:
        return json.loads(candidate, strict=False)
    except ValueError:
        pass
    return json.loads(_repair(candidate), strict=False)


def _candidates(text: str) -> Iterator[Any]:
    """Every JSON value found in ``text``, in order: fenced blocks first, then the whole text, then
    each balanced ``{...}``/``[...]`` span."""
    seen: set[str] = set()

    def attempt(s: str) -> Iterator[Any]:
        s = s.strip()
        if not s or s in seen:
            return
        seen.add(s)
        try:
            yield _loads(s)
        except ValueError:
            return

    for m in _FENCE_RE.finditer(text):
        yield from attempt(m.group(1))
    yield from attempt(text)
    skip_until = 0
    starts = 0
    for i, ch in enumerate(text):
        if i < skip_until or ch not in "{[":
            continue
        starts += 1
        if starts > _MAX_STARTS:
            break
        end = _balanced_end(text, i)
        if end is not None:
            for value in attempt(text[i:end]):
                skip_until = end  # do not look inside a value that parsed
                yield value
    # a reply cut off inside a fence: ``` with no closing fence
    if text.count("```") % 2 == 1:
        tail = text[text.rindex("```") + 3 :]
        tail = tail.split("\n", 1)[1] if "\n" in tail else tail
        yield from attempt(tail)


def parse_json(text: str, schema: Mapping[str, Any] | None = None, *, optional: Collection[str] = ()) -> Any:
    """The first JSON value in ``text`` (that validates against ``schema``, when given).

    Returns the value, coerced by :func:`validate` when a schema is given. Raises
    :class:`JudgeOutputError` (``raw=text``) when there is none.
    """
    if text is None or not str(text).strip():
        raise JudgeOutputError("empty reply: expected JSON", raw=text)
    cleaned = _strip_wrappers(str(text))
    wanted = _type_names(schema) if schema is not None else []
    others: list[Any] = []
    first_error: str | None = None
    found_any = False
    for value in _candidates(cleaned):
        found_any = True
        if schema is None:
            return value
        if wanted and _json_type(value) not in wanted:
            others.append(value)  # tried last: a bare array may still be wrapped into the object
            continue
        try:
            return validate(value, schema, optional=optional)
        except SchemaError as e:
            first_error = first_error or str(e)
    for value in others:
        try:
            return validate(value, schema or {}, optional=optional)
        except SchemaError as e:
            first_error = first_error or str(e)
    if not found_any:
        raise JudgeOutputError(f"no JSON found in reply: {_preview(text)}", raw=text)
    raise JudgeOutputError(f"reply JSON does not match the expected schema: {first_error}", raw=text)


def _preview(text: str, n: int = 120) -> str:
    t = " ".join(str(text).split())
    return repr(t if len(t) <= n else t[:n] + "...")


# --------------------------------------------------------------------------------------------
# validation with coercion


def _type_names(schema: Mapping[str, Any]) -> list[str]:
    t = schema.get("type")
    if t is None:
        return []
    return [t] if isinstance(t, str) else list(t)


def _coerce(value: Any, type_name: str) -> tuple[bool, Any]:
    """(ok, coerced) for one JSON schema type."""
    if type_name == "null":
        return value is None, None
    if type_name == "boolean":
        if isinstance(value, bool):
            return True, value
        if isinstance(value, int) and value in (0, 1):
            return True, bool(value)
        if isinstance(value, str):
            w = value.strip().strip(".!").lower()
            if w in _TRUE_WORDS:
                return True, True
            if w in _FALSE_WORDS:
                return True, False
        return False, value
    if type_name == "integer":
        if isinstance(value, bool):
            return True, int(value)
        if isinstance(value, int):
            return True, value
        if isinstance(value, float) and value.is_integer():
            return True, int(value)
        if isinstance(value, str) and re.fullmatch(r"\s*-?\d+\s*", value):
            return True, int(value)
        return False, value
    if type_name == "number":
        if isinstance(value, bool):
            return False, value
        if isinstance(value, (int, float)):
            return True, value
        if isinstance(value, str):
            try:
                return True, float(value)
            except ValueError:
                return False, value
        return False, value
    if type_name == "string":
        if isinstance(value, str):
            return True, value
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return True, str(value)
        return False, value
    if type_name == "array":
        return isinstance(value, list), value
    if type_name == "object":
        return isinstance(value, dict), value
    return True, value


def validate(
    value: Any, schema: Mapping[str, Any], *, optional: Collection[str] = (), path: str = "$"
) -> Any:
    """Check ``value`` against ``schema`` and return it coerced. Raises :class:`SchemaError`.

    ``optional``: property names that need not be present even when the schema requires them (the
    wire schema must list every property as required for OpenAI strict mode; the parser is kinder).
    Unknown properties are kept, not rejected.
    """
    types = _type_names(schema)
    if types:
        # an object with exactly one array property also accepts the bare array
        if "object" in types and isinstance(value, list):
            arrays = [k for k, s in (schema.get("properties") or {}).items() if "array" in _type_names(s)]
            if len(arrays) == 1:
                value = {arrays[0]: value}
        for t in types:
            ok, coerced = _coerce(value, t)
            if ok:
                value = coerced
                break
        else:
            raise SchemaError(f"{path}: expected {' or '.join(types)}, got {_json_type(value)}")
    if "enum" in schema and value not in list(schema["enum"]):
        raise SchemaError(f"{path}: {value!r} is not one of {list(schema['enum'])!r}")
    if isinstance(value, dict):
        props: Mapping[str, Any] = schema.get("properties") or {}
        for key in schema.get("required") or ():
            if key not in value and key not in optional:
                raise SchemaError(f"{path}: missing required key {key!r}")
        out = dict(value)
        for key, sub in props.items():
            if key in out:
                if out[key] is None and key in optional:
                    continue
                out[key] = validate(out[key], sub, optional=optional, path=f"{path}.{key}")
        return out
    if isinstance(value, list):
        lo = schema.get("minItems")
        hi = schema.get("maxItems")
        if lo is not None and len(value) < lo:
            raise SchemaError(f"{path}: expected at least {lo} item(s), got {len(value)}")
        if hi is not None and len(value) > hi:
            raise SchemaError(f"{path}: expected at most {hi} item(s), got {len(value)}")
        items = schema.get("items")
        if isinstance(items, Mapping):
            return [validate(v, items, optional=optional, path=f"{path}[{i}]") for i, v in enumerate(value)]
    return value


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__
