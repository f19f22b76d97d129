"""RAG quality assertions for test suites: :func:`assert_rag`.

::

    from ragmeter.testing import assert_rag

    def test_refund_answer():
        assert_rag(
            {"question": q, "contexts": retrieved, "answer": answer},   # or a Sample
            {"faithfulness": 0.8, "answer_relevance": 0.7},
        )

``sample`` is a :class:`~ragmeter.dataset.sample.Sample` or a dict with ragmeter, Ragas
(``user_input``, ``retrieved_contexts``, ``response``) or LlamaIndex (``query``, ``response``,
``reference_answer``) field names, read by the same column mapping as data files. Each metric
is scored as ``ragmeter.evaluate`` scores it. The assertion fails when a metric is worse than its
bound (below it; above it for a lower-is-better metric) or its score is invalid; the message
lists each failing metric with its score, bound and reason, and for faithfulness every
unsupported claim with the judge's reason. A missing field a metric needs, an unknown metric or
a metric the judge cannot compute raise their ragmeter error instead (a broken test, not a
failed one).

The judge: ``judge=`` (a Judge or a spec), else the session's (``pytest --ragmeter-judge SPEC``),
else the offline local judge. Within a pytest session every ``assert_rag`` call shares one
judge per spec, so an LLM judge keeps one client, one memo, and with ``--ragmeter-out DIR`` one
reply cache (``DIR/llm-cache.sqlite``); its calls run on one event loop owned by the session
(in a background thread), so ``assert_rag`` also works inside async tests. Outside pytest a
process-wide session does the same.

At the end of a pytest session the plugin (:mod:`pytest_ragmeter`) prints a table of the scores,
and with ``--ragmeter-out DIR`` records the session as one run: one sample per ``assert_rag``
call (its id: the sample's own, else the test's node id), keyed like any run's samples (the
id, else question + reference), so ``ragmeter runs show``, ``report`` and ``compare`` read it.
With ``--ragmeter-baseline RUN`` the recorded session is compared with that run of the store as
``ragmeter compare RUN SESSION --fail-on-regression`` compares them (the same verdict: a sample
the baseline scored validly and the session did not is a regression); the summary shows it and
a regression fails the session.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import sys
import threading
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ragmeter.dataset.keys import number_repeats, sample_keys
from ragmeter.dataset.sample import Dataset, Sample
from ragmeter.errors import ConfigError
from ragmeter.log.store import ScoreRow
from ragmeter.metrics._common import short
from ragmeter.report.gates import meets_bound
from ragmeter.run.result import Result

if TYPE_CHECKING:
    from ragmeter.report.comparison import Comparison

T = TypeVar("T")
_NODE_ENV = "PYTEST_CURRENT_TEST"


@dataclass(frozen=True)
class _Record:
    """One assert_rag call: the test, the sample as scored, its key, scores and bounds."""

    nodeid: str
    sample: Sample
    key: str
    rows: Mapping[str, ScoreRow]
    bounds: Mapping[str, float]
    failed: tuple[str, ...]
    meta: Mapping[str, Any]


class RagTestSession:
    """Judges, an event loop and the records of one test session (see the module docstring)."""

    def __init__(
        self,
        judge: str | None = None,
        base_url: str | None = None,
        out: str | Path | None = None,
        *,
        baseline: str | None = None,
        margin: float = 0.0,
        max_new_invalid: int = 0,
    ):
        self.judge_spec = judge
        self.base_url = base_url
        self.out = None if out is None else Path(out)
        self.baseline = baseline
        self.margin = margin
        self.max_new_invalid = max_new_invalid
        self.records: list[_Record] = []
        self.run_id: str | None = None
        self.finish_error: str | None = None
        self.comparison: Comparison | None = None
        self._judges: dict[str | None, Any] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    # -- the loop and the judges -------------------------------------------------------------
    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the session's loop and wait for it."""
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name="ragmeter-testing", daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def judge(self, spec: Any = None) -> Any:
        """The judge for ``spec`` (a Judge is used as given; a spec or None is built once)."""
        if spec is not None and not isinstance(spec, str):
            return spec
        key = spec if spec is not None else self.judge_spec
        if key not in self._judges:
            from ragmeter.judges.factory import is_local_spec, make_judge

            cache = None if self.out is None or is_local_spec(key) else self.out / "llm-cache.sqlite"
            base_url = self.base_url if key == self.judge_spec else None
            self._judges[key] = make_judge(key, base_url=base_url, cache_path=cache)
        return self._judges[key]

    def close(self) -> None:
        """Close the judges this session built and stop its loop (idempotent)."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        for judge in self._judges.values():
            try:
                self.run(judge.aclose())
            except Exception:  # closing must not hide the session's own result
                pass
        self._judges.clear()
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        loop.close()
        self._loop = self._thread = None

    # -- assertions --------------------------------------------------------------------------
    def check(self, sample: Any, bounds: Mapping[str, float], judge: Any = None) -> Result:
        __tracebackhide__ = True
        from ragmeter.dataset.sources import load_dataset
        from ragmeter.run.config import RunConfig
        from ragmeter.run.runner import aevaluate

        bounds = _check_bounds(bounds)
        dataset = load_dataset([sample], strict=True)
        the_judge = self.judge(judge)
        config = RunConfig(concurrency=max(1, len(bounds)), strict=True, progress=False)
        result = self.run(aevaluate(dataset, list(bounds), the_judge, config=config))
        specs = {m["name"]: m for m in result.meta.get("metrics", [])}
        by_metric = {r.metric: r for r in result.rows}
        rows = {name: by_metric[name] for name in bounds if name in by_metric}
        failures = []
        for name, bound in bounds.items():
            failure = _failure(
                name, rows.get(name), bound, bool(specs.get(name, {}).get("higher_is_better", True))
            )
            if failure:
                failures.append((name, failure))
        scored = dataset.samples[0]
        nodeid = os.environ.get(_NODE_ENV, "").rsplit(" (", 1)[0]
        key = sample_keys([scored], getattr(dataset, "generated_ids", ()))[0]
        if scored.id is None or scored.id in getattr(dataset, "generated_ids", ()):
            scored = scored.replace(id=nodeid or None)
        self.records.append(
            _Record(nodeid, scored, key, rows, dict(bounds), tuple(n for n, _ in failures), result.meta)
        )
        if failures:
            what = nodeid or short(str(scored.question), 60)
            lines = [f"ragmeter: {len(failures)} of {len(bounds)} metric(s) below their bound for {what}:"]
            lines += [f"  {text}" for _, text in failures]
            raise AssertionError("\n".join(lines))
        return result

    # -- the end of a session ----------------------------------------------------------------
    def finish(self) -> None:
        """Record the session as a run when ``out`` is set, and compare it with the baseline when
        one is named (errors are kept for :meth:`report`)."""
        if self.out is None or not self.records or self.run_id is not None:
            return
        try:
            self.run_id = record_session(self.out, self.records)
            if self.baseline is not None:
                from ragmeter.report.comparison import compare_runs

                self.comparison = compare_runs(self.baseline, self.run_id, store=self.out)
        except Exception as exc:  # a failed record must not turn the test run into an internal error
            self.finish_error = f"{type(exc).__name__}: {exc}"

    @property
    def failed_against_baseline(self) -> bool:
        """A baseline was named and the session regressed against it, or could not be compared."""
        if self.baseline is None or not self.records:
            return False
        if self.comparison is None:
            return True
        return bool(self.comparison.regressions(self.margin, self.max_new_invalid))

    def report(self, write_sep: Callable[..., Any], write_line: Callable[[str], Any]) -> None:
        """The summary table printed at the end of a pytest session."""
        if not self.records:
            return
        tests = {r.nodeid for r in self.records}
        write_sep("=", f"ragmeter: {len(self.records)} sample(s) asserted in {len(tests)} test(s)")
        write_line(f"{'metric':<24} {'n':>5} {'mean':>7} {'min':>7} {'invalid':>8} {'failed':>7}")
        for name in _metric_order(self.records):
            values, invalid, failed = [], 0, 0
            for r in self.records:
                row = r.rows.get(name)
                if row is None:
                    continue
                if row.score.valid and row.score.value is not None:
                    values.append(row.score.value)
                else:
                    invalid += 1
                failed += name in r.failed
            n = len(values) + invalid
            mean = f"{sum(values) / len(values):.3f}" if values else "—"
            low = f"{min(values):.3f}" if values else "—"
            write_line(f"{name:<24} {n:>5} {mean:>7} {low:>7} {invalid:>8} {failed:>7}")
        for r in self.records:
            if r.failed:
                write_line(f"FAILED {r.nodeid or r.key}: {', '.join(r.failed)}")
        if self.run_id is not None:
            write_line(f"ragmeter: session recorded as run {self.run_id} in {self.out} "
                       f"(ragmeter runs show {self.run_id} --out {self.out})")  # fmt: skip
        if self.finish_error is not None:
            what = "compare the session with its baseline" if self.run_id else "record the session"
            write_line(f"ragmeter: could not {what} in {self.out}: {self.finish_error}")
        if self.comparison is not None:
            self._report_baseline(self.comparison, write_line)

    def _report_baseline(self, c: Comparison, write_line: Callable[[str], Any]) -> None:
        """The session (B) against its baseline (A), one line per metric, as ``ragmeter compare``."""
        write_line(
            f"ragmeter: this session against baseline {c.run_a}: {c.n_matched} matched sample(s), "
            f"{c.n_only_a} only in the baseline, {c.n_only_b} only in this session"
            + ("" if c.comparable else "; NOT COMPARABLE: " + " | ".join(c.issues))
        )
        write_line(f"{'metric':<24} {'B - A':>8} {'95% CI':>18} {'newly invalid/valid':>20}  verdict")
        for name, m in c.metrics.items():
            diff = f"{m.diff:+.3f}" if m.diff is not None else "—"
            ci = f"[{m.ci95[0]:+.3f}, {m.ci95[1]:+.3f}]" if m.ci95 is not None else "—"
            new = f"{m.n_new_invalid}/{m.n_new_valid}"
            write_line(f"{name:<24} {diff:>8} {ci:>18} {new:>20}  {m.verdict(self.margin, self.max_new_invalid)}")
        regressed = c.regressions(self.margin, self.max_new_invalid)
        if regressed:
            write_line(
                f"ragmeter: REGRESSION against baseline {c.run_a} (margin {self.margin:g}, at most "
                f"{self.max_new_invalid} newly invalid): {', '.join(regressed)}; "
                f"ragmeter compare {c.run_a} {c.run_b} --out {self.out} shows the samples"
            )


def _check_bounds(bounds: Any) -> dict[str, float]:
    if not isinstance(bounds, Mapping) or not bounds:
        raise ConfigError('assert_rag needs a dict of metric bounds, e.g. {"faithfulness": 0.8}')
    out: dict[str, float] = {}
    for name, bound in bounds.items():
        if isinstance(bound, bool) or not isinstance(bound, (int, float)):
            raise ConfigError(f"assert_rag: the bound of {name!r} must be a number, got {bound!r}")
        out[str(name)] = float(bound)
    return out


def _failure(name: str, row: ScoreRow | None, bound: float, higher: bool) -> str | None:
    """Why ``row`` fails its bound, or None when it passes."""
    if row is None:
        return f"{name}: not scored (bound {bound:g})"
    score = row.score
    if not score.valid or score.value is None:
        err = score.error
        cause = f"{err.kind}: {err.message}" if err else score.reason
        return f"{name}: invalid score, bound {bound:g}: {short(str(cause), 200)}"
    value = score.value
    if meets_bound(value, bound, higher):
        return None
    op = "<" if higher else ">"
    text = f"{name}: {value:.3f} {op} {bound:g}: {short(str(score.reason), 200)}"
    claims = score.details.get("claims") if isinstance(score.details, Mapping) else None
    if name == "faithfulness" and isinstance(claims, list):
        unsupported = [c for c in claims if isinstance(c, Mapping) and not c.get("supported")]
        for c in unsupported:
            reason = f" ({short(str(c.get('reason')), 240)})" if c.get("reason") else ""
            text += f"\n      unsupported claim: {short(str(c.get('claim')), 200)}{reason}"
    return text


def _metric_order(records: list[_Record]) -> list[str]:
    return list(dict.fromkeys(name for r in records for name in r.rows))


def record_session(out: str | Path, records: list[_Record]) -> str:
    """Write the session's assertions as one run in the store ``out``; return its run id."""
    from ragmeter.log.store import RunStore, new_run_id
    from ragmeter.metrics.registry import resolve_metrics
    from ragmeter.run.config import RunConfig

    names = _metric_order(records)
    first = records[0].meta
    specs = {m["name"]: m for r in records for m in r.meta.get("metrics", [])}
    meta = {
        **{k: v for k, v in first.items() if k not in ("metrics", "n_samples", "dataset_hash")},
        "source": "pytest session",
        "dataset_hash": Dataset(tuple(r.sample for r in records)).content_hash(),
        "n_samples": len(records),
        "n_skipped_rows": 0,
        "metrics": [specs.get(n) or resolve_metrics([n])[0].spec() for n in names],
        "config": RunConfig(out=Path(out)).to_dict(),
        "pytest": {"tests": sorted({r.nodeid for r in records if r.nodeid})},
    }
    judges = {str(r.meta.get("judge", {}).get("name")) for r in records}
    if len(judges) > 1:
        meta["judges_used"] = sorted(judges)
    run_id = new_run_id()
    with RunStore(out) as store:
        store.create_run(run_id, meta)
        store.add_samples(
            run_id, [(i, r.sample) for i, r in enumerate(records)], number_repeats([r.key for r in records])
        )
        for i, r in enumerate(records):
            for name, row in r.rows.items():
                store.record_score(run_id, i, name, row.score, row.calls, row.duration_s)
        store.set_status(run_id, "finished", {"finished_jobs": sum(len(r.rows) for r in records)})
    return run_id


_DEFAULT: RagTestSession | None = None


def current_session() -> RagTestSession:
    """The running pytest session's (created on first use), else a process-wide one."""
    global _DEFAULT
    plugin = sys.modules.get("pytest_ragmeter")
    settings = plugin.current() if plugin is not None else None
    if settings is not None:
        if settings.session is None:
            settings.session = RagTestSession(
                settings.judge,
                settings.base_url,
                settings.out,
                baseline=settings.baseline,
                margin=settings.margin,
                max_new_invalid=settings.max_new_invalid,
            )
        return settings.session  # type: ignore[no-any-return]
    if _DEFAULT is None:
        _DEFAULT = RagTestSession()
        atexit.register(_DEFAULT.close)
    return _DEFAULT


def assert_rag(sample: Any, bounds: Mapping[str, float], judge: Any = None) -> Result:
    """Score ``sample`` with each metric of ``bounds`` and raise ``AssertionError`` naming every
    metric worse than its bound (see the module docstring). Returns the one-sample
    :class:`~ragmeter.run.result.Result` when every bound holds."""
    __tracebackhide__ = True
    return current_session().check(sample, bounds, judge)


__all__ = ["RagTestSession", "assert_rag", "current_session", "record_session"]
