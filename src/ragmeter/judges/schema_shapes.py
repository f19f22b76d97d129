"""The prompt's JSON schema narrowed to what one request can validly answer (:func:`shaped_schema`)."""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

#: structured-output modes in which the server decodes under a grammar built from the schema
GRAMMAR_MODES = frozenset({"json_object_schema", "guided_json", "ollama_format"})
#: structured-output modes in which the server enforces the reply's schema (strict ``json_schema``
#: too): requests in them leave out the prompt's worked example (``ChatRequest.enforced_messages``)
ENFORCED_MODES = GRAMMAR_MODES | {"json_schema"}
#: longest free-text field (reason, evidence) and claim under grammar decoding, and most claims per
#: text: a small model otherwise rambles until max_tokens cuts the JSON off
_MAX_TEXT = 160
_MAX_CLAIM = 200
_MAX_CLAIMS = 15


def _cap_strings(schema: Any) -> Any:
    if isinstance(schema, dict):
        out = {k: _cap_strings(v) for k, v in schema.items()}
        if out.get("type") == "string" and "enum" not in out:
            out.setdefault("maxLength", _MAX_TEXT)
        return out
    if isinstance(schema, list):
        return [_cap_strings(x) for x in schema]
    return schema


#: narrowed schemas kept (a run meets few distinct shapes: one per claim count, passage count...)
_SHAPED_CACHE_SIZE = 1024
_shaped: OrderedDict[tuple[int, tuple[tuple[str, Any], ...], bool], tuple[Mapping[str, Any], dict[str, Any]]]
_shaped = OrderedDict()
_shaped_lock = threading.Lock()


def shaped_schema(schema: Mapping[str, Any], shape: Mapping[str, Any], *, grammar: bool) -> dict[str, Any]:
    """:func:`narrow_schema`, kept for the next request of the same schema and shape (every request
    builds two of them). The result is shared: read it, do not change it."""
    try:
        key = (id(schema), tuple(sorted(shape.items())), grammar)
        hash(key)
    except TypeError:  # an unhashable shape value: nothing to key on
        return narrow_schema(schema, shape, grammar=grammar)
    with _shaped_lock:
        hit = _shaped.get(key)
        if hit is not None and hit[0] is schema:  # the entry keeps its schema alive: ids stay unique
            _shaped.move_to_end(key)
            return hit[1]
    out = narrow_schema(schema, shape, grammar=grammar)
    with _shaped_lock:
        _shaped[key] = (schema, out)
        while len(_shaped) > _SHAPED_CACHE_SIZE:
            _shaped.popitem(last=False)
    return out


def narrow_schema(schema: Mapping[str, Any], shape: Mapping[str, Any], *, grammar: bool) -> dict[str, Any]:
    """The prompt's schema narrowed to what this request can validly answer.

    Everywhere: sentence numbers and item indices become ``enum`` of the valid numbers, a score on an
    integer scale (span <= 10) an ``enum`` of its values. Under grammar decoding (``grammar``) also:
    arrays get exactly the expected items (``prefixItems`` with each ``index`` fixed by ``const``),
    free text is capped at 160 characters (a claim at 200), the copied ``claim`` field of a verdict
    is dropped, a claim list of a non-empty text has 1 to 15 claims (a small model otherwise answers ``[]``,
    which would make the score invalid; an evasive answer then yields a claim that is not supported),
    and generated questions number 1 to the ``n`` asked.
    Keywords OpenAI's strict mode does not take are used only under grammar decoding.
    """
    s: dict[str, Any] = json.loads(json.dumps(schema))
    props: dict[str, Any] = s.get("properties", {})
    for key in ("verdicts", "texts", "passages"):
        if key not in shape or key not in props:
            continue
        n = int(shape[key])
        arr = props[key]
        item = arr["items"]
        if grammar:
            if key == "verdicts":
                item["properties"].pop("claim", None)
                item["required"] = [r for r in item.get("required", []) if r != "claim"]
            if key == "texts":
                item["properties"]["claims"].update(minItems=1, maxItems=_MAX_CLAIMS)
                item["properties"]["claims"]["items"].update(minLength=2, maxLength=_MAX_CLAIM)
            fixed = []
            for i in range(1, n + 1):
                one = json.loads(json.dumps(item))
                one["properties"]["index"] = {"const": i}
                fixed.append(one)
            props[key] = {"type": "array", "prefixItems": fixed, "items": False, "minItems": n, "maxItems": n}
        elif 1 <= n <= 500:
            item["properties"]["index"] = {"type": "integer", "enum": list(range(1, n + 1))}
    if grammar and "claims" in shape and "claims" in props:
        props["claims"].update(minItems=1, maxItems=_MAX_CLAIMS)
        props["claims"]["items"].update(minLength=2, maxLength=_MAX_CLAIM)
    if grammar and "questions" in shape and "questions" in props:
        props["questions"].update(minItems=1, maxItems=max(int(shape["questions"]), 1))
        props["questions"]["items"].update(minLength=2)
    if "evidence" in shape and "verdicts" in props:
        n_sent = int(shape["evidence"])
        arr = props["verdicts"]
        items = arr.get("prefixItems") or [arr.get("items")]
        for item in items:
            if isinstance(item, dict) and "evidence" in item.get("properties", {}) and n_sent <= 500:
                item["properties"]["evidence"] = {"type": "integer", "enum": list(range(0, n_sent + 1))}
    if "needed" in shape and "needed" in props:
        n = int(shape["needed"])
        if 1 <= n <= 500:
            props["needed"]["items"] = {"type": "integer", "enum": list(range(1, n + 1))}
        if grammar:
            props["needed"]["maxItems"] = max(n, 0)
    if "score" in shape and "score" in props:
        low, high = shape["score"]
        if float(low).is_integer() and float(high).is_integer() and 0 < high - low <= 10:
            props["score"] = {"type": "integer", "enum": list(range(int(low), int(high) + 1))}
    return _cap_strings(s) if grammar else s
