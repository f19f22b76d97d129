"""Quality gates for CI: the checks behind ``evaluate --fail-under / --max-invalid /
--fail-on-invalid`` and ``compare --fail-on-regression``, and their JUnit XML.

Every gate is a :class:`GateCheck`: one metric, one rule, passed or not, with the value, the
bound and a message naming both. The CLI exits 1 when a check fails and writes the checks as
JUnit test cases (``--junit FILE``), so CI systems show each gate as a test.

Rules:

- ``fail_under`` (``--fail-under faithfulness=0.8``): fails when the metric is worse than its
  bound: its mean below the bound (above it for a metric where lower is better, such as
  ``noise_sensitivity``). With ``gate="lower"`` the bound applies to the 95% CI's end on the
  worse side instead of the mean, so the gate passes only when the data show the metric is at
  least that good. With ``gate="calibrated"`` it applies to that end of the *calibrated* 95% CI,
  the interval of the human mean from the run's random-drawn labels (PPI++,
  :mod:`ragmeter.run.calibrated`): the gate passes only when people's labels show the metric is at
  least that good; a metric without a calibrated estimate (too few random labels) fails, saying
  how many more it needs. A metric without a single valid score fails.
- ``max_invalid`` (``--max-invalid RATE``, and ``--fail-on-invalid`` which is
  ``--max-invalid 0``): fails a metric whose share of invalid scores, ``n_invalid / (n_scored
  + n_invalid)``, exceeds RATE. It applies to every metric of the run.
- ``scored`` (always, unless ``max_invalid`` is given): fails a metric of which not one score is
  valid. "Nothing measured" is never success: a judge that failed on every request, or inputs no
  metric could read, exit 1 with the invalid kinds counted, though no gate was asked for. A user
  who accepts that says so with ``--max-invalid 1``.
- ``regression`` (``compare --fail-on-regression --margin M``): fails a metric when B is worse
  than A and the 95% CI of ``B - A`` lies entirely beyond ``-M`` (see
  :mod:`ragmeter.report.comparison`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragmeter.errors import ConfigError
from ragmeter.metrics.base import meets_bound
from ragmeter.run.calibrated import MIN_LABELS

if TYPE_CHECKING:
    from ragmeter.report.comparison import Comparison, MetricComparison
    from ragmeter.run.result import Result

GATE_ON: tuple[str, ...] = ("mean", "lower", "calibrated")
# Characters XML 1.0 cannot carry (reasons and raw replies come from models and data).
_XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


@dataclass(frozen=True)
class GateCheck:
    """One gate on one metric. ``value`` is what was checked (None when there was nothing to
    check, e.g. no valid score); ``message`` says value, bound and, on failure, why."""

    name: str
    metric: str
    rule: str
    passed: bool
    value: float | None
    bound: float
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "metric": self.metric,
            "rule": self.rule,
            "passed": self.passed,
            "value": self.value,
            "bound": self.bound,
            "message": self.message,
        }


def _bound(text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ConfigError(f"{what}: {text!r} is not a number") from None
    if not math.isfinite(value):
        raise ConfigError(f"{what}: {text!r} is not a finite number")
    return value


def parse_bounds(text: str | Mapping[str, float] | None) -> dict[str, float]:
    """``"faithfulness=0.8,answer_relevance=0.7"`` (or a dict) -> ``{metric: bound}``."""
    if text is None:
        return {}
    if isinstance(text, Mapping):
        return {str(k): _bound(str(v), f"bound of {k}") for k, v in text.items()}
    out: dict[str, float] = {}
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise ConfigError(
                f"--fail-under: bad item {item!r}; expected METRIC=BOUND, e.g. faithfulness=0.8"
            )
        if name.strip() in out:
            raise ConfigError(f"--fail-under: metric {name.strip()!r} is given twice")
        out[name.strip()] = _bound(value.strip(), f"--fail-under {name.strip()}")
    if not out:
        raise ConfigError("--fail-under is empty; expected METRIC=BOUND[,METRIC=BOUND...]")
    return out


def check_rate(rate: float | None, what: str = "--max-invalid") -> float | None:
    if rate is None:
        return None
    if not (isinstance(rate, (int, float)) and 0.0 <= float(rate) <= 1.0):
        raise ConfigError(f"{what} must be a share between 0 and 1 (e.g. 0.05), got {rate!r}")
    return float(rate)


def check_gate_metrics(bounds: Mapping[str, float], metric_names: Sequence[str]) -> None:
    """ConfigError when a gated metric is not among the run's metrics (checked before a run)."""
    unknown = [m for m in bounds if m not in metric_names]
    if unknown:
        raise ConfigError(
            f"--fail-under names metric(s) the run does not score: {', '.join(unknown)}; "
            f"the run's metrics: {', '.join(metric_names)}"
        )


def threshold_checks(
    result: Result,
    bounds: Mapping[str, float] | None = None,
    *,
    gate: str = "mean",
    max_invalid: float | None = None,
) -> list[GateCheck]:
    """The ``fail_under`` checks of ``bounds`` and, with ``max_invalid``, the ``max_invalid``
    check of every metric of ``result`` (see the module docstring)."""
    if gate not in GATE_ON:
        raise ConfigError(f"unknown gate {gate!r}; one of {', '.join(GATE_ON)}")
    bounds = dict(bounds or {})
    check_gate_metrics(bounds, result.metric_names)
    max_invalid = check_rate(max_invalid)
    specs = {m.get("name"): m for m in result.meta.get("metrics", [])}
    checks: list[GateCheck] = []
    summary = result.summary()
    for name, bound in bounds.items():
        s = summary[name]
        higher = bool(specs.get(name, {}).get("higher_is_better", True))
        op = ">=" if higher else "<="
        label = "mean" if gate == "mean" else ("95% CI lower end" if higher else "95% CI upper end")
        value: float | None
        cal = s.calibrated
        if gate == "calibrated":
            label = "calibrated " + label
            value = None
            if cal is not None and cal.get("ci95") is not None:
                value = cal["ci95"][0] if higher else cal["ci95"][1]
        elif gate == "mean" or s.ci95 is None:
            value = s.mean
        else:
            value = s.ci95[0] if higher else s.ci95[1]
        if value is None and gate == "calibrated" and s.mean is not None:
            n = 0 if cal is None else int(cal.get("n_labels") or 0)
            need = MIN_LABELS - n
            passed, why = (
                False,
                (
                    f"no calibrated estimate: {n} random-drawn label(s) of {name}, {need} more needed "
                    "(ragmeter labels, docs/trust.md)"
                ),
            )
        elif value is None:
            passed, why = False, f"no valid score ({s.n_invalid} invalid, {s.n_skipped} skipped)"
        else:
            passed = meets_bound(value, bound, higher)
            why = f"{label} {value:.4f} {'is' if passed else 'is not'} {op} {bound:g}"
        ci = "" if s.ci95 is None else f", 95% CI [{s.ci95[0]:.4f}, {s.ci95[1]:.4f}]"
        if gate == "calibrated" and cal is not None and cal.get("ci95") is not None:
            ci = (
                f", calibrated {cal['mean']:.4f} [{cal['ci95'][0]:.4f}, {cal['ci95'][1]:.4f}] from "
                f"{cal['n_labels']} labels; judge {s.mean:.4f}"
                if s.mean is not None
                else ""
            )
        checks.append(
            GateCheck(
                name=f"{name} {label} {op} {bound:g}",
                metric=name,
                rule="fail_under",
                passed=passed,
                value=value,
                bound=bound,
                message=f"{name}: {why} (n_scored={s.n_scored}, n_invalid={s.n_invalid}{ci})",
            )
        )
    if max_invalid is None:
        for name, s in summary.items():
            if s.n_scored == 0 and s.n_invalid > 0:
                kinds = ", ".join(f"{k}: {v}" for k, v in sorted(s.invalid_kinds.items()))
                checks.append(
                    GateCheck(
                        name=f"{name} scored at least once",
                        metric=name,
                        rule="scored",
                        passed=False,
                        value=0.0,
                        bound=1.0,
                        message=f"{name}: nothing measured: all {s.n_invalid} scores invalid ({kinds}); "
                        "--max-invalid 1 accepts that",
                    )
                )
    if max_invalid is not None:
        for name, s in summary.items():
            total = s.n_scored + s.n_invalid
            share = s.n_invalid / total if total else 0.0
            passed = share <= max_invalid
            kinds = ", ".join(f"{k}: {v}" for k, v in sorted(s.invalid_kinds.items()))
            checks.append(
                GateCheck(
                    name=f"{name} invalid share <= {max_invalid:g}",
                    metric=name,
                    rule="max_invalid",
                    passed=passed,
                    value=share,
                    bound=max_invalid,
                    message=f"{name}: {s.n_invalid} of {total} scores invalid ({share:.1%}), "
                    f"{'within' if passed else 'above'} the allowed {max_invalid:.1%}"
                    + (f" ({kinds})" if kinds else ""),
                )
            )
    return checks


def regression_checks(comparison: Comparison, margin: float = 0.0, max_new_invalid: int = 0) -> list[GateCheck]:
    """Two checks per metric both runs scored: ``regression`` (the paired CI of B - A beyond
    ``-margin``) and ``new_invalid`` (at most ``max_new_invalid`` samples valid in A and without a
    valid score in B). A metric fails the gate when either fails, as its verdict says."""
    from ragmeter.report.comparison import WORSE, check_margin, check_max_new_invalid

    margin = check_margin(margin)
    allowed = check_max_new_invalid(max_new_invalid)
    checks: list[GateCheck] = []
    for name, m in comparison.metrics.items():
        regressed = m.ci_verdict(margin) == WORSE
        if m.ci95 is None or m.diff is None:
            message = f"{name}: no pair with valid scores in both runs; the interval says nothing"
            value = None
        else:
            worse_end = m.ci95[1] if m.higher_is_better else m.ci95[0]
            direction = "below" if m.higher_is_better else "above"
            bound_text = f"-{margin:g}" if m.higher_is_better else f"+{margin:g}"
            message = (
                f"{name}: B - A = {m.diff:+.4f}, 95% CI [{m.ci95[0]:+.4f}, {m.ci95[1]:+.4f}], "
                f"p = {m.p_value:.4g}, {m.losses} worse / {m.ties} tied / {m.wins} better of {m.n_pairs} pairs; "
                + (
                    f"regression: the CI's {'upper' if m.higher_is_better else 'lower'} end "
                    f"{worse_end:+.4f} is {direction} {bound_text}"
                    if regressed
                    else f"no regression beyond a margin of {margin:g}"
                )
            )
            value = m.diff
        checks.append(
            GateCheck(
                name=f"{name} no regression (margin {margin:g})",
                metric=name,
                rule="regression",
                passed=not regressed,
                value=value,
                bound=margin,
                message=message,
            )
        )
        checks.append(_new_invalid_check(name, m, allowed))
    return checks


def _new_invalid_check(name: str, m: MetricComparison, allowed: int) -> GateCheck:
    passed = m.n_new_invalid <= allowed
    if m.n_new_invalid:
        kinds = ", ".join(f"{k}: {n}" for k, n in m.new_invalid_kinds.items())
        keys = ", ".join(c.key for c in m.new_invalid) + (" ..." if m.n_new_invalid > len(m.new_invalid) else "")
        message = (
            f"{name}: {m.n_new_invalid} sample(s) scored validly in A have no valid score in B ({kinds}): "
            f"{keys}; {'above' if not passed else 'within'} the allowed {allowed}"
        )
    else:
        message = f"{name}: no sample scored validly in A lost its valid score in B"
    if m.n_new_valid:
        message += f"; {m.n_new_valid} sample(s) newly valid in B"
    return GateCheck(
        name=f"{name} no newly invalid scores (at most {allowed})",
        metric=name,
        rule="new_invalid",
        passed=passed,
        value=float(m.n_new_invalid),
        bound=float(allowed),
        message=message,
    )


def _xml_text(text: str) -> str:
    return _XML_ILLEGAL.sub("\ufffd", text)


def junit_xml(checks: Sequence[GateCheck], suite: str, properties: Mapping[str, Any] | None = None) -> str:
    """JUnit XML: one ``<testsuite>`` named ``suite`` with a ``<testcase>`` per check; a failed
    check carries a ``<failure>`` whose message is the check's message."""
    import xml.etree.ElementTree as ET  # JUnit output only: not imported on every run's way

    failures = sum(1 for c in checks if not c.passed)
    root = ET.Element(
        "testsuites",
        {"name": "ragmeter", "tests": str(len(checks)), "failures": str(failures), "errors": "0"},
    )
    ts = ET.SubElement(
        root,
        "testsuite",
        {
            "name": _xml_text(suite),
            "tests": str(len(checks)),
            "failures": str(failures),
            "errors": "0",
            "skipped": "0",
            "time": "0",
            "timestamp": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S"),
        },
    )
    if properties:
        props = ET.SubElement(ts, "properties")
        for key, value in properties.items():
            ET.SubElement(props, "property", {"name": _xml_text(str(key)), "value": _xml_text(str(value))})
    for c in checks:
        case = ET.SubElement(
            ts,
            "testcase",
            {"classname": _xml_text(f"ragmeter.{c.rule}"), "name": _xml_text(c.name), "time": "0"},
        )
        if c.passed:
            ET.SubElement(case, "system-out").text = _xml_text(c.message)
        else:
            failure = ET.SubElement(
                case, "failure", {"message": _xml_text(c.message), "type": f"ragmeter.{c.rule}"}
            )
            failure.text = _xml_text(c.message)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write_junit(
    path: str | Path, checks: Sequence[GateCheck], suite: str, properties: Mapping[str, Any] | None = None
) -> Path:
    """Write :func:`junit_xml` to ``path`` (UTF-8; parent directories are created)."""
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(junit_xml(checks, suite, properties), encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot write the JUnit file {target}: {exc}") from exc
    return target


__all__ = [
    "GATE_ON",
    "GateCheck",
    "check_gate_metrics",
    "check_rate",
    "junit_xml",
    "meets_bound",
    "parse_bounds",
    "regression_checks",
    "threshold_checks",
    "write_junit",
]
