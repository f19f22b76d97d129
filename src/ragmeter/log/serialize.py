"""JSON encoding for the run store: plain JSON that never holds NaN.

Scores' ``details`` and run metadata come from metric and user code, so they may hold numpy
scalars and arrays, tuples, sets, dataclasses or non-finite floats. :func:`to_jsonable` turns them
into plain JSON values; a non-finite float becomes the string ``"nan"``, ``"inf"`` or ``"-inf"``
so that the stored record is strict JSON and a reader never meets a NaN it did not expect.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from typing import Any

from ragmeter.judges.types import CallRecord


def to_jsonable(value: Any) -> Any:
    """Return a strict-JSON-compatible copy of ``value`` (see the module docstring)."""
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(float(value))  # "nan", "inf", "-inf"
    if type(value).__module__.partition(".")[0] == "numpy" and hasattr(value, "tolist"):
        # a NumPy scalar or array, known by its type's module: no NumPy import for it (nor a look at
        # a module another thread may still be importing)
        return to_jsonable(value.tolist())
    if isinstance(value, Mapping):
        return {_key(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((to_jsonable(v) for v in value), key=repr)
    if hasattr(value, "to_dict") and callable(value.to_dict):
        return to_jsonable(value.to_dict())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_jsonable(dataclasses.asdict(value))
    return str(value)


def _key(key: Any) -> str:
    """A mapping key as JSON writes it: a string as it is; ``True``/``False``/``None`` as
    ``"true"``/``"false"``/``"null"``; a number as its JSON text; anything else as ``str()``."""
    if isinstance(key, str):
        return key
    if key is None or isinstance(key, bool):
        return json.dumps(key)
    if isinstance(key, (int, float)) and math.isfinite(key):
        return json.dumps(key)
    return str(key)


def dumps(value: Any) -> str:
    """Strict JSON text of ``value`` (UTF-8 kept as is, never NaN). Plain JSON values (what nearly
    every score's details are) go straight to the C encoder; anything it refuses (a NaN, a NumPy
    value, a set, a dataclass...) goes through :func:`to_jsonable` first: the same text either way.
    The ASCII-escaping encoder is twice as fast; where it writes no ``\\u`` escape, its text is
    the UTF-8 one (the text held no character the two write differently)."""
    try:
        fast = json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return json.dumps(to_jsonable(value), ensure_ascii=False, allow_nan=False)
    if "\\u" not in fast:
        return fast
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def loads(text: str | None, default: Any = None) -> Any:
    """Parse JSON text stored by :func:`dumps`; ``None`` (SQL NULL) gives ``default``."""
    if text is None:
        return default
    if text == "{}":  # what a judge-free score stores for its usage, and many details: no parse
        return {}
    if text == "[]":  # a judge-free score's calls
        return []
    return json.loads(text)


def call_to_dict(call: CallRecord | Mapping[str, Any]) -> dict[str, Any]:
    """One model call as the run record keeps it."""
    if isinstance(call, Mapping):
        return dict(to_jsonable(call))
    return {
        "step": call.step,
        "model": call.model,
        "reply": call.reply,
        "usage": call.usage.to_dict(),
        "cached": call.cached,
        "latency_s": to_jsonable(call.latency_s),
        "prompt_version": call.prompt_version,
        "attempts": call.attempts,
        "error": call.error,
    }
