"""Agreement picks, for each aspect, the first metric of its preference list that the judge can do."""

from __future__ import annotations

from ragmeter.run.agreement import ASPECT_METRICS, metric_for_aspect


class Judge:
    name = "j"

    def __init__(self, steps: set[str]) -> None:
        self.steps = steps

    def supports(self, step: str) -> bool:
        return step in self.steps


def test_correctness_prefers_graded_and_falls_back_without_grade() -> None:
    assert ASPECT_METRICS["correctness"][0] == "correctness"
    llm = Judge({"grade", "extract_claims", "verify_claims", "embed"})
    assert metric_for_aspect("correctness", None, llm).name == "correctness"
    no_grade = Judge({"extract_claims", "verify_claims", "embed"})
    assert metric_for_aspect("correctness", None, no_grade).name == "answer_correctness"
    # an explicit --metric wins
    assert metric_for_aspect("correctness", "factual_correctness", llm).name == "factual_correctness"
    # no judge given: the first metric that exists
    assert metric_for_aspect("faithfulness", None).name == "faithfulness"
