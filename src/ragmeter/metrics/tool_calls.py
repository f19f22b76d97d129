"""Judge-free trajectory metrics: an agent's tool calls against the expected ones and the declared
tools (docs/agents.md). No judge call: identical with every judge.

Each scores a conversation sample (``level = "conversation"``): its calls are those of its
assistant messages, in order (:func:`ragmeter.dataset.trajectory.tool_calls`); arguments are
compared as JSON values (key order does not count; a call whose arguments are not a JSON object
matches only a call with the same text).

- ``tool_call_correctness`` (LlamaIndex's ``ToolCallCorrectnessEvaluator``): the fraction of the
  expected calls matched by an actual call. ``ordered``: call ``i`` must match expected call ``i``;
  else greedy matching in the expected calls' order, each actual call used once. ``strict_kwargs``:
  the arguments must be equal; else the expected arguments must be among the actual ones. No
  expected call: 1.0, whatever was called (LlamaIndex's definition; ``tool_call_f1`` counts extras).
- ``tool_call_f1`` (Ragas's ``ToolCallF1``): F1 of the set of distinct (name, arguments) called
  against the set expected (a repeated call counts once).
- ``tool_call_accuracy`` (Ragas's ``ToolCallAccuracy``): 0 unless the sequence of tool names
  matches the expected one (``strict_order``; else as sorted lists); then the mean, over the
  expected calls paired by position, of the share of their arguments given with the same value,
  times the share of expected calls that have a partner.
- ``tool_args_valid``: the share of calls whose tool is declared and whose arguments are a JSON
  object valid against the tool's JSON schema (:mod:`jsonschema`).
- ``redundant_calls`` (lower is better): the share of calls that repeat an earlier call with the
  same arguments.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from ragmeter.dataset.messages import ToolCall
from ragmeter.dataset.trajectory import tool_calls, tool_steps
from ragmeter.metrics.base import Metric, Score, register_metric

if TYPE_CHECKING:
    from ragmeter.dataset.sample import Sample
    from ragmeter.judges.base import Judge

#: a call whose arguments are not a JSON object: its text, under a key no JSON object of a
#: model's can hold, so that it matches only the same text
_RAW = "\x00raw"


def call_args(call: ToolCall) -> dict[str, Any]:
    """The arguments as a dict (see :data:`_RAW` for text that is not a JSON object)."""
    args = call.args
    return args if args is not None else {_RAW: call.arguments}


def _key(value: Any) -> Any:
    """A hashable, order-free form of a JSON value (equal values, equal keys; ``1 == 1.0`` as in
    Python)."""
    if isinstance(value, Mapping):
        return frozenset((k, _key(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return tuple(_key(v) for v in value)
    return value


def _shown(calls: Sequence[ToolCall], limit: int = 6) -> str:
    out = ", ".join(c.show(80) for c in calls[:limit])
    return out + (f" and {len(calls) - limit} more" if len(calls) > limit else "")


def _kwargs_match(expected: Mapping[str, Any], actual: Mapping[str, Any], strict: bool) -> bool:
    if strict:
        return dict(expected) == dict(actual)
    return all(k in actual and actual[k] == v for k, v in expected.items())


def compare_calls(
    expected: Sequence[ToolCall], actual: Sequence[ToolCall], *, ordered: bool, strict_kwargs: bool
) -> tuple[list[int], list[int], list[int]]:
    """LlamaIndex's comparison: (indices of matched expected calls, of unmatched expected calls, of
    actual calls no expected call used), 0-based."""
    matched: list[int] = []
    missing: list[int] = []

    def same(e: ToolCall, a: ToolCall) -> bool:
        return e.name == a.name and _kwargs_match(call_args(e), call_args(a), strict_kwargs)

    if ordered:
        for i, e in enumerate(expected):
            (matched if i < len(actual) and same(e, actual[i]) else missing).append(i)
        return matched, missing, list(range(len(expected), len(actual)))
    remaining = list(range(len(actual)))
    for i, e in enumerate(expected):
        j = next((j for j in remaining if same(e, actual[j])), None)
        if j is None:
            missing.append(i)
        else:
            matched.append(i)
            remaining.remove(j)
    return matched, missing, remaining


class _TrajectoryMetric(Metric):
    level = "conversation"
    requires: ClassVar[tuple[str, ...]] = ("messages", "reference_tool_calls")

    @staticmethod
    def _calls(sample: Sample) -> tuple[list[ToolCall], list[ToolCall]]:
        return list(sample.reference_tool_calls or ()), tool_calls(sample.messages)


@register_metric("tool_call_correctness")
class ToolCallCorrectness(_TrajectoryMetric):
    """The share of expected tool calls the agent made (LlamaIndex's ``ToolCallCorrectnessEvaluator``).

    Inputs: ``messages``, ``reference_tool_calls`` (an empty list: no call expected). Judge calls: 0.

        tool_call_correctness = matched expected calls / expected calls   (1.0 when none expected)

    ``ordered``: actual call i must match expected call i. ``strict_kwargs``: arguments equal, not
    a superset of the expected ones.
    """

    name = "tool_call_correctness"
    threshold = 1.0

    def __init__(self, ordered: bool = False, strict_kwargs: bool = False) -> None:
        self.ordered = bool(ordered)
        self.strict_kwargs = bool(strict_kwargs)

    def params(self) -> dict[str, Any]:
        return {"ordered": self.ordered, "strict_kwargs": self.strict_kwargs}

    async def score(self, sample: Sample, judge: Judge) -> Score:
        expected, actual = self._calls(sample)
        matched, missing, extra = compare_calls(
            expected, actual, ordered=self.ordered, strict_kwargs=self.strict_kwargs
        )
        parts = [f"matched {len(matched)} of {len(expected)} expected call(s)"]
        if not expected:
            parts = ["no call expected"]
        if missing:
            parts.append(f"missing: {_shown([expected[i] for i in missing])}")
        if extra:
            parts.append(f"unexpected: {_shown([actual[j] for j in extra])}")
        return Score(
            value=len(matched) / len(expected) if expected else 1.0,
            reason="; ".join(parts),
            details={
                "matched": len(matched),
                "expected": len(expected),
                "actual": len(actual),
                "missing": [expected[i].to_dict() for i in missing],
                "unexpected_steps": [j + 1 for j in extra],
            },
        )


@register_metric("tool_call_f1")
class ToolCallF1(_TrajectoryMetric):
    """F1 of the distinct calls made against the calls expected (Ragas's ``ToolCallF1``).

    Inputs: ``messages``, ``reference_tool_calls``. Judge calls: 0. A call is its name and its
    arguments (a repeated call counts once):

        precision = |made & expected| / |made|, recall = |made & expected| / |expected|
        tool_call_f1 = 2 P R / (P + R)          (0 when nothing matches)

    Nothing made and nothing expected: 1.0 (Ragas gives 0.0 there; docs/agents.md).
    """

    name = "tool_call_f1"

    async def score(self, sample: Sample, judge: Judge) -> Score:
        expected, actual = self._calls(sample)
        if not expected and not actual:
            return Score(1.0, "no call expected and none made", {"tp": 0, "fp": 0, "fn": 0})
        want = {(c.name, _key(call_args(c))): c for c in expected}
        made = {(c.name, _key(call_args(c))): c for c in actual}
        tp = len(made.keys() & want.keys())
        fp = len(made.keys() - want.keys())
        fn = len(want.keys() - made.keys())
        p = tp / (tp + fp) if tp + fp else 0.0
        r = tp / (tp + fn) if tp + fn else 0.0
        f1 = 2 * p * r / (p + r) if p + r else 0.0
        reason = (
            f"{tp} of {len(made)} distinct call(s) made were expected, {tp} of {len(want)} expected were made"
        )
        if fn:
            reason += f"; missing: {_shown([c for k, c in want.items() if k not in made])}"
        if fp:
            reason += f"; unexpected: {_shown([c for k, c in made.items() if k not in want])}"
        return Score(f1, reason, {"precision": p, "recall": r, "tp": tp, "fp": fp, "fn": fn})


def _ragas_sort_key(call: ToolCall) -> tuple[str, ...]:
    args = call_args(call)
    key = [call.name]
    for name in sorted(args):
        key += [name, str(args[name])]
    return tuple(key)


def _arg_share(made: Mapping[str, Any], want: Mapping[str, Any]) -> float:
    """The share of the expected arguments given with the same value (compared as ``str``)."""
    if not want and not made:
        return 1.0
    if not want:
        return 0.0
    return sum(1 for k, v in want.items() if k in made and str(made[k]) == str(v)) / len(want)


@register_metric("tool_call_accuracy")
class ToolCallAccuracy(_TrajectoryMetric):
    """Tool names in the expected sequence, and their arguments (Ragas's ``ToolCallAccuracy``).

    Inputs: ``messages``, ``reference_tool_calls``. Judge calls: 0.

        aligned = the names called == the names expected (in order with ``strict_order``, else
                  as sorted lists)
        tool_call_accuracy = aligned * (sum over position-paired calls of the same name of the
                  share of expected arguments given with the same value) / expected calls
                  * min(made, expected) / expected

    Nothing made and nothing expected: 1.0; nothing made, or nothing expected: 0.0.
    """

    name = "tool_call_accuracy"

    def __init__(self, strict_order: bool = True) -> None:
        self.strict_order = bool(strict_order)

    def params(self) -> dict[str, Any]:
        return {"strict_order": self.strict_order}

    async def score(self, sample: Sample, judge: Judge) -> Score:
        expected, actual = self._calls(sample)
        if not expected and not actual:
            return Score(1.0, "no call expected and none made", {"aligned": True})
        if not actual:
            return Score(0.0, f"no call made; {len(expected)} expected", {"aligned": False})
        if not expected:
            return Score(0.0, f"no call expected; {len(actual)} made", {"aligned": False})
        if not self.strict_order:
            expected = sorted(expected, key=_ragas_sort_key)
            actual = sorted(actual, key=_ragas_sort_key)
        names_made = [c.name for c in actual]
        names_want = [c.name for c in expected]
        aligned = names_made == names_want if self.strict_order else sorted(names_made) == sorted(names_want)
        total = sum(
            _arg_share(call_args(a), call_args(e))
            for e, a in zip(expected, actual, strict=False)
            if e.name == a.name
        )
        coverage = min(len(actual), len(expected)) / len(expected)
        value = (total / len(expected)) * coverage if aligned else 0.0
        order = "in order" if self.strict_order else "in any order"
        if aligned:
            reason = (
                f"the tools called match the {len(expected)} expected {order}; argument accuracy {value:.2f}"
            )
        else:
            reason = f"the tools called ({', '.join(names_made)}) are not the expected ({', '.join(names_want)}) {order}"
        return Score(value, reason, {"aligned": aligned, "coverage": coverage})


def _schema_problem(call: ToolCall, tool: Mapping[str, Any] | None) -> str | None:
    if tool is None:
        return f"{call.name!r} is not a declared tool"
    args = call.args
    if args is None:
        return f"{call.name}: the arguments are not a JSON object: {call.arguments[:80]!r}"
    schema = tool.get("parameters") or {}
    if not schema:
        return None
    import jsonschema

    validator_class = jsonschema.validators.validator_for(schema)
    errors = sorted(validator_class(schema).iter_errors(args), key=lambda e: list(e.absolute_path))
    if not errors:
        return None
    e = errors[0]
    where = "/".join(str(p) for p in e.absolute_path)
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{call.name}: {where + ': ' if where else ''}{e.message}{more}"


@register_metric("tool_args_valid")
class ToolArgsValid(Metric):
    """The share of calls that name a declared tool with arguments valid against its schema.

    Inputs: ``messages``, ``tools``. Judge calls: 0. A call is invalid when its tool is not
    declared, its arguments are not a JSON object, or they break the tool's JSON schema (a missing
    required argument, a wrong type, an unknown argument where the schema forbids them...).
    Invalid (``NoToolCalls``) when the agent made no call.
    """

    name = "tool_args_valid"
    level = "conversation"
    requires: ClassVar[tuple[str, ...]] = ("messages", "tools")
    threshold = 1.0

    async def score(self, sample: Sample, judge: Judge) -> Score:
        steps = tool_steps(sample.messages)
        if not steps:
            return Score.invalid("NoToolCalls", "the agent made no tool call: nothing to check")
        declared = {str(t.get("name")): t for t in sample.tools or ()}
        problems = [(s.index, _schema_problem(s.call, declared.get(s.call.name))) for s in steps]
        bad = [(i, p) for i, p in problems if p is not None]
        reason = f"{len(steps) - len(bad)} of {len(steps)} call(s) valid"
        if bad:
            reason += "; " + "; ".join(f"call {i}: {p}" for i, p in bad[:4])
            if len(bad) > 4:
                reason += f"; and {len(bad) - 4} more"
        return Score(
            (len(steps) - len(bad)) / len(steps),
            reason,
            {"calls": len(steps), "invalid": [{"step": i, "problem": p} for i, p in bad]},
        )


@register_metric("redundant_calls")
class RedundantCalls(Metric):
    """The share of calls that repeat an earlier call with the same arguments (lower is better).

    Inputs: ``messages``. Judge calls: 0. 0.0 when the agent made no call.
    """

    name = "redundant_calls"
    level = "conversation"
    requires: ClassVar[tuple[str, ...]] = ("messages",)
    higher_is_better = False
    threshold = 0.0

    async def score(self, sample: Sample, judge: Judge) -> Score:
        steps = tool_steps(sample.messages)
        if not steps:
            return Score(0.0, "no tool call", {"calls": 0, "repeats": []})
        first: dict[tuple[str, Any], int] = {}
        repeats = []
        for s in steps:
            key = (s.call.name, _key(call_args(s.call)))
            if key in first:
                repeats.append({"step": s.index, "repeats": first[key]})
            else:
                first[key] = s.index
        reason = f"{len(repeats)} of {len(steps)} call(s) repeat an earlier one"
        if repeats:
            shown = ", ".join(f"call {r['step']} repeats call {r['repeats']}" for r in repeats[:4])
            reason += f": {shown}" + (f" and {len(repeats) - 4} more" if len(repeats) > 4 else "")
        return Score(len(repeats) / len(steps), reason, {"calls": len(steps), "repeats": repeats})


__all__ = [
    "RedundantCalls",
    "ToolArgsValid",
    "ToolCallAccuracy",
    "ToolCallCorrectness",
    "ToolCallF1",
    "call_args",
    "compare_calls",
]
