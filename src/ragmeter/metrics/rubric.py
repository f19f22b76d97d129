"""User-defined rubric / criteria metrics in a few lines (G-Eval style).

::

    from ragmeter.metrics import rubric

    conciseness = rubric(
        "conciseness",
        criteria="Does the answer address the question without padding or repetition?",
        steps=["List what the question asks.", "Mark sentences of the answer that add nothing.",
               "Score 5 when nothing is superfluous, 1 when most of the answer is."],
        scale=(1, 5),
        inputs=("question", "answer"),
        threshold=4,
    )
    result = ragmeter.evaluate("data.jsonl", [conciseness], judge="openai:gpt-4o-mini")

The returned metric is registered under its name (``--metrics conciseness`` works in the same
process). The value is the judge's score on the scale (not normalised); ``details`` holds the
score normalised to [0, 1] and the judge's reasoning. Judge calls: 1 -- ``grade``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from ragmeter.dataset.sample import SAMPLE_FIELDS
from ragmeter.errors import ConfigError
from ragmeter.judges.base import Rubric
from ragmeter.metrics import base as _base
from ragmeter.metrics._common import check_lang, clean_texts
from ragmeter.metrics._shared import sample_lang
from ragmeter.metrics.base import Metric, Score, register_metric
from ragmeter.metrics.graded import render_contexts

if TYPE_CHECKING:
    from ragmeter.dataset.sample import Sample
    from ragmeter.judges.base import Judge


class RubricMetric(Metric):
    """A metric that grades sample fields against a :class:`Rubric` (built by :func:`rubric`)."""

    rubric: ClassVar[Rubric]
    steps = ("grade",)

    def __init__(self, lang: str = "auto", **_spec: Any) -> None:
        # ``_spec``: the rubric as params() records it, accepted so get_metric(name, **params) works
        self.lang = check_lang(lang)

    def params(self) -> dict[str, Any]:
        r = self.rubric
        return {
            "criteria": r.criteria,
            "steps": list(r.steps),
            "scale": list(r.scale),
            "levels": dict(r.levels),
            "inputs": list(r.inputs),
            "lang": self.lang,
        }

    async def score(self, sample: Sample, judge: Judge) -> Score:
        inputs: dict[str, str] = {}
        for f in self.rubric.inputs:
            if f == "contexts":
                ctx = clean_texts(sample.contexts)
                if not ctx:
                    return Score.invalid("EmptyInput", "contexts is empty: nothing to score")
                inputs[f] = render_contexts(ctx)
                continue
            value = getattr(sample, f, None)
            if isinstance(value, tuple):
                value = "\n".join(str(v) for v in value)
            if value is None or not str(value).strip():
                return Score.invalid("EmptyInput", f"{f} is empty: nothing to score")
            inputs[f] = str(value).strip()
        lang = sample_lang(self.lang, sample)
        g = await judge.grade(self.rubric, inputs, lang=lang)  # type: ignore[attr-defined]
        low, high = self.rubric.scale
        norm = (g.score - low) / (high - low)
        details: dict[str, Any] = {"score": g.score, "normalized": norm, "feedback": g.reason, "lang": lang}
        if self.threshold is not None:
            details["passing"] = g.score >= self.threshold
        return Score(value=g.score, reason=g.reason or f"score {g.score:g}", details=details)


def rubric(
    name: str,
    *,
    criteria: str,
    steps: Sequence[str] = (),
    scale: tuple[float, float] = (1, 5),
    levels: Mapping[str | int, str] | None = None,
    inputs: Sequence[str] = ("question", "answer"),
    threshold: float | None = None,
    higher_is_better: bool = True,
    lang: str = "auto",
) -> RubricMetric:
    """Define, register and return a G-Eval style metric (see the module docstring)."""
    if not name or not name.replace("_", "").replace("-", "").isalnum():
        raise ConfigError(f"rubric: name must be letters, digits, '_' or '-', not {name!r}")
    if not criteria or not criteria.strip():
        raise ConfigError(f"rubric {name!r}: criteria must be a non-empty text")
    lo, hi = float(scale[0]), float(scale[1])
    if not lo < hi:
        raise ConfigError(f"rubric {name!r}: scale must be (low, high) with low < high, not {scale!r}")
    unknown = [f for f in inputs if f not in SAMPLE_FIELDS]
    if unknown or not inputs:
        raise ConfigError(
            f"rubric {name!r}: inputs must be sample fields ({', '.join(SAMPLE_FIELDS)}), not {unknown}"
        )
    if threshold is not None and not lo <= float(threshold) <= hi:
        raise ConfigError(f"rubric {name!r}: threshold {threshold} is outside the scale {lo:g}..{hi:g}")
    existing = _base._REGISTRY.get(name)
    if existing is not None and not (isinstance(existing, type) and issubclass(existing, RubricMetric)):
        raise ConfigError(f"rubric: the name {name!r} is taken by a built-in metric")
    spec = Rubric(
        name=name,
        criteria=criteria.strip(),
        scale=(lo, hi),
        levels={str(k): str(v) for k, v in (levels or {}).items()},
        steps=tuple(s.strip() for s in steps if s.strip()),
        inputs=tuple(inputs),
        passing=None if threshold is None else float(threshold),
    )
    cls = type(
        f"Rubric_{name}",
        (RubricMetric,),
        {
            "name": name,
            "rubric": spec,
            "requires": tuple(f for f in inputs),
            "threshold": None if threshold is None else float(threshold),
            "higher_is_better": higher_is_better,
            "__doc__": f"User rubric {name!r}: {spec.criteria}",
        },
    )
    _base._REGISTRY.pop(name, None)  # a rubric redefined (e.g. in a notebook) replaces the old one
    register_metric(name)(cls)
    return cls(lang=lang)
