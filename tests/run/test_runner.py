"""The runner: jobs, invalid scores with causes, skipped rows, strict mode, resume, sync entry."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ragmeter
from ragmeter import ConfigError, DatasetError, JudgeOutputError, Metric, Sample, Score
from ragmeter.judges.base import GeneratedQuestions, Verdict
from ragmeter.log.store import RunStore
from ragmeter.run.executor import JOBS_PER_SLOT


class StepJudge:
    """A judge with scripted steps; counts calls per step."""

    name = "stub"

    def __init__(self, *, fail_on: set[str] | None = None, block_on: set[str] | None = None) -> None:
        self.calls: list[tuple[str, str]] = []
        self.fail_on = fail_on or set()
        self.block_on = block_on or set()

    def supports(self, step: str) -> bool:
        return True

    def describe(self) -> dict[str, Any]:
        return {"name": self.name}

    async def extract_claims(self, text: str, *, question: str | None = None, lang: str = "en") -> list[str]:
        self.calls.append(("extract_claims", text))
        if text in self.block_on:
            await asyncio.sleep(3600)
        if text in self.fail_on:
            raise JudgeOutputError("reply is not JSON", raw="this is not json")
        return [s.strip() for s in text.split(".") if s.strip()]

    async def verify_claims(
        self, claims: Sequence[str], contexts: Sequence[str], *, lang: str = "en"
    ) -> list[Verdict]:
        self.calls.append(("verify_claims", "|".join(claims)))
        ctx = " ".join(contexts).lower()
        return [Verdict(c, c.lower() in ctx) for c in claims]

    async def generate_questions(self, answer: str, *, n: int = 3, lang: str = "en") -> GeneratedQuestions:
        return GeneratedQuestions(("q",) * n)

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.ones((len(texts), 4), dtype=np.float32)
        return out / np.linalg.norm(out, axis=1, keepdims=True)

    async def aclose(self) -> None:
        return None


def _samples(n: int) -> list[dict[str, Any]]:
    return [
        {
            "id": f"s{i}",
            "question": f"question {i}?",
            "contexts": [f"fact {i} is true. other {i} too."],
            "answer": f"fact {i} is true. invented {i}.",
            "reference": f"fact {i} is true.",
        }
        for i in range(n)
    ]


async def test_faithfulness_scores_and_usage_fields() -> None:
    judge = StepJudge()
    result = await ragmeter.aevaluate(_samples(4), ["faithfulness"], judge)
    s = result.summary()["faithfulness"]
    assert s.n_scored == 4 and s.n_invalid == 0
    assert s.mean == pytest.approx(0.5)  # one of two claims supported in each sample
    d = result.to_dict()
    assert d["n_samples"] == 4 and d["n_skipped"] == 0
    assert set(d["metrics"]["faithfulness"]) >= {"mean", "ci95", "n_scored", "n_invalid"}
    assert set(d["usage"]) >= {"requests", "prompt_tokens", "completion_tokens"}


async def test_judge_failure_becomes_invalid_score_with_cause_and_raw_reply() -> None:
    rows = _samples(3)
    judge = StepJudge(fail_on={rows[1]["answer"]})
    result = await ragmeter.aevaluate(rows, ["faithfulness"], judge)
    scores = result.scores("faithfulness")
    assert scores[0] is not None and scores[0].valid
    bad = scores[1]
    assert bad is not None and not bad.valid and bad.value is None
    assert bad.error is not None and bad.error.kind == "JudgeOutputError"
    assert bad.error.raw == "this is not json"
    s = result.summary()["faithfulness"]
    assert (s.n_scored, s.n_invalid) == (2, 1)
    assert s.invalid_kinds == {"JudgeOutputError": 1}
    assert s.mean == pytest.approx(0.5)  # the mean is over valid scores only, never a silent 0


async def test_metric_bug_is_invalid_not_a_crash() -> None:
    class Broken(Metric):
        name = "broken"
        requires = ("answer",)

        async def score(self, sample: Sample, judge: Any) -> Score:
            raise ZeroDivisionError("oops")

    result = await ragmeter.aevaluate(_samples(2), [Broken()], StepJudge())
    sc = result.scores("broken")[0]
    assert sc is not None and sc.error is not None
    assert sc.error.kind == "MetricError" and "ZeroDivisionError" in sc.error.message


async def test_missing_field_skips_only_the_metric_that_needs_it() -> None:
    rows = _samples(3)
    del rows[2]["reference"]
    result = await ragmeter.aevaluate(rows, ["faithfulness", "token_f1"], StepJudge())
    summary = result.summary()
    assert summary["faithfulness"].n_scored == 3
    assert summary["token_f1"].n_scored == 2 and summary["token_f1"].n_skipped == 1
    assert any(p.field == "reference" and p.row == 3 for p in result.problems)
    assert result.n_skipped == 0  # the row was still scored by faithfulness


async def test_strict_stops_before_any_judge_call() -> None:
    rows = _samples(3)
    rows[1]["answer"] = "   "
    judge = StepJudge()
    with pytest.raises(DatasetError) as exc:
        await ragmeter.aevaluate(rows, ["faithfulness"], judge, strict=True)
    assert "answer" in str(exc.value)
    assert judge.calls == []


async def test_unknown_metric_is_config_error() -> None:
    with pytest.raises(ConfigError, match="unknown metric"):
        await ragmeter.aevaluate(_samples(1), ["faithfulnes"], StepJudge())


async def test_local_judge_refuses_llm_metrics_before_any_call() -> None:
    # correctness grades on a rubric, a step only an LLM judge can do
    with pytest.raises(ragmeter.UnsupportedStepError, match="correctness"):
        await ragmeter.aevaluate(_samples(1), ["correctness"], None)


async def test_custom_metric_in_ten_lines() -> None:
    class AnswerLength(Metric):
        name = "answer_length"
        requires = ("answer",)

        async def score(self, sample: Sample, judge: Any) -> Score:
            n = len((sample.answer or "").split())
            return Score(value=min(n / 100, 1.0), reason=f"{n} words")

    result = await ragmeter.aevaluate(_samples(2), [AnswerLength()], StepJudge())
    assert result.summary()["answer_length"].mean == pytest.approx(0.06)  # 6 words


async def test_run_is_recorded_and_resume_finishes_only_the_rest(tmp_path: Path) -> None:
    rows = _samples(6)
    blocked = {rows[4]["answer"], rows[5]["answer"]}
    judge = StepJudge(block_on=blocked)
    task = asyncio.ensure_future(
        ragmeter.aevaluate(rows, ["faithfulness"], judge, out=tmp_path, run_id="r1", concurrency=2)
    )
    # Wait until the four unblocked samples are recorded, then interrupt.
    for _ in range(200):
        await asyncio.sleep(0.01)
        with RunStore(tmp_path) as store:
            if len(store.completed_jobs("r1")) >= 4:
                break
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    with RunStore(tmp_path) as store:
        assert store.get_run("r1").status == "interrupted"
        assert len(store.completed_jobs("r1")) == 4

    judge2 = StepJudge()
    result = await ragmeter.aevaluate(rows, ["faithfulness"], judge2, out=tmp_path, resume="r1")
    assert {text for step, text in judge2.calls if step == "extract_claims"} == blocked
    assert result.summary()["faithfulness"].n_scored == 6
    assert result.status == "finished"


async def test_resume_refuses_changed_data(tmp_path: Path) -> None:
    rows = _samples(2)
    await ragmeter.aevaluate(rows, ["faithfulness"], StepJudge(), out=tmp_path, run_id="r1")
    rows[0]["answer"] = "something else."
    with pytest.raises(ragmeter.RunError, match="differs"):
        await ragmeter.aevaluate(rows, ["faithfulness"], StepJudge(), out=tmp_path, resume="r1")


async def test_result_from_store_matches_the_run(tmp_path: Path) -> None:
    result = await ragmeter.aevaluate(_samples(5), ["faithfulness", "token_f1"], StepJudge(), out=tmp_path)
    again = ragmeter.Result.from_store(tmp_path, result.run_id)
    assert again.to_dict()["metrics"] == result.to_dict()["metrics"]
    meta = again.meta
    assert meta["dataset_hash"] and meta["versions"]["ragmeter"] == ragmeter.__version__
    assert [m["name"] for m in meta["metrics"]] == ["faithfulness", "token_f1"]


async def test_exports(tmp_path: Path) -> None:
    result = await ragmeter.aevaluate(_samples(3), ["faithfulness"], StepJudge())
    df = result.to_pandas()
    assert list(df["faithfulness"]) == pytest.approx([0.5, 0.5, 0.5])
    lines = result.to_jsonl(tmp_path / "r.jsonl").read_text().splitlines()
    assert json.loads(lines[0])["scores"]["faithfulness"]["value"] == 0.5
    assert "faithfulness_reason" in (result.to_csv(tmp_path / "r.csv").read_text().splitlines()[0])
    assert len(result.export(tmp_path / "r.parquet").read_bytes()) > 0


def test_sync_evaluate_outside_a_loop() -> None:
    result = ragmeter.evaluate(_samples(2), ["faithfulness"], StepJudge())
    assert result.summary()["faithfulness"].n_scored == 2


async def test_sync_evaluate_inside_a_running_loop() -> None:
    # As in Jupyter: a loop is running and the user calls the sync API.
    result = ragmeter.evaluate(_samples(2), ["faithfulness"], StepJudge())
    assert result.summary()["faithfulness"].n_scored == 2


async def test_concurrency_bound_is_respected() -> None:
    in_flight = peak = 0

    class Slow(Metric):
        name = "slow"

        async def score(self, sample: Sample, judge: Any) -> Score:
            nonlocal in_flight, peak
            in_flight += 1
            peak = max(peak, in_flight)
            await asyncio.sleep(0.005)
            in_flight -= 1
            return Score(1.0)

    await ragmeter.aevaluate(_samples(40), [Slow()], StepJudge(), concurrency=5)
    # concurrency bounds requests per endpoint; jobs run JOBS_PER_SLOT times as many at once
    assert peak == 5 * JOBS_PER_SLOT
