"""Strict JSON for the run store: NumPy values, non-finite floats, containers."""

from __future__ import annotations

import dataclasses
import json
import sys
import types

import numpy as np
import pytest

from ragmeter.log.serialize import dumps, to_jsonable


def test_numpy_values_and_non_finite_floats_become_plain_json() -> None:
    value = {
        "f32": np.float32(0.5),
        "i64": np.int64(4),
        "flag": np.bool_(True),
        "rows": np.array([[1.5, np.nan], [np.inf, -np.inf]]),
        "inf64": np.float64("inf"),  # a float subclass: still "inf", not NumPy's repr
        "nan": float("nan"),
        "tuple": (1, 2),
        "set": {"b", "a"},
    }
    assert json.loads(dumps(value)) == {
        "f32": 0.5,
        "i64": 4,
        "flag": True,
        "rows": [[1.5, "nan"], ["inf", "-inf"]],
        "inf64": "inf",
        "nan": "nan",
        "tuple": [1, 2],
        "set": ["a", "b"],
    }


def test_dataclasses_and_objects_with_to_dict() -> None:
    @dataclasses.dataclass
    class Point:
        x: float
        y: float

    class Shape:
        def to_dict(self) -> dict[str, object]:
            return {"corners": [Point(0.0, 1.0)]}

    assert to_jsonable(Shape()) == {"corners": [{"x": 0.0, "y": 1.0}]}


def test_serialising_while_numpy_is_half_imported(monkeypatch: pytest.MonkeyPatch) -> None:
    # The store serialises on the event loop while the embedder's warm-up may be importing NumPy in
    # a thread; until that import ends, sys.modules holds a module without its attributes yet
    # (this failed a run once: "partially initialized module 'numpy' has no attribute 'generic'").
    monkeypatch.setitem(sys.modules, "numpy", types.ModuleType("numpy"))
    assert json.loads(dumps({"a": [1.0, 2, "x", None, {"b": (3, 4)}]})) == {
        "a": [1.0, 2, "x", None, {"b": [3, 4]}]
    }


def test_the_fast_path_and_to_jsonable_write_the_same_text() -> None:
    values = [
        {"a": 1, "b": [1.5, "x", None, True], "c": {"d": (1, 2)}},
        {7: "int key", 2.5: "float key", True: "bool key", None: "none key"},
        {"nested": {False: [], 3: {}}},
        "plain",
        [1, [2, [3]]],
        {"zh": "北京是首都", "é": "café", "del": "a\x7fb", "ctl": "a\x01b", "slash": "back\\u0041", "emoji": "😀"},
    ]
    for value in values:
        assert dumps(value) == json.dumps(to_jsonable(value), ensure_ascii=False, allow_nan=False), value
    assert json.loads(dumps({True: 1, None: 2, 3: 4})) == {"true": 1, "null": 2, "3": 4}
