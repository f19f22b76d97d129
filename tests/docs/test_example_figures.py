"""The figures the README and the docs quote from runs on the shipped example data are those runs'.

The README's labelling example (``ragmeter evaluate examples/rag_samples.jsonl --metrics
faithfulness``, then ``ragmeter labels import examples/rag_labels.jsonl``, then ``ragmeter runs
show``) quotes the judge's mean and the calibrated estimate, in English and in Chinese; docs/ci.md
and docs/zh/ci.md quote the same mean and its gate message (and zh ci.md two ``assert_rag``
figures); docs/zh/metrics.md shows a run of the four Chinese samples; docs/compare.md quotes the comparison
of that run with the same questions and every answer swapped for the next sample's
(``tests/cli/test_compare_and_gates.py`` builds that file the same way). The runs here are the
local judge's, offline, so a change of the judge that moves a figure fails here, naming the page
and both figures, until the page says the new one.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from helpers.examples import EXAMPLE, write_swapped_answers
from ragmeter import compare_runs, evaluate

ROOT = Path(__file__).resolve().parents[2]
LABELS = ROOT / "examples" / "rag_labels.jsonl"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("example")
    a = evaluate(str(EXAMPLE), ["faithfulness"], out=tmp, run_id="v1", progress=False)
    a.add_labels(LABELS)
    swapped = write_swapped_answers(tmp / "unfaithful.jsonl")
    b = evaluate(str(swapped), ["faithfulness"], out=tmp, run_id="v2", progress=False)
    s = a.summary()["faithfulness"]
    assert s.calibrated is not None
    return {"judge": s.mean, "summary": s, "calibrated": s.calibrated, "compare": compare_runs(a, b).metrics["faithfulness"]}


def _f(x: float) -> str:
    return f"{x:.3f}"


def test_the_readmes_quote_the_labelling_example(runs: dict[str, Any]) -> None:
    cal = runs["calibrated"]
    want = (_f(runs["judge"]), _f(cal["mean"]), _f(cal["ci95"][0]), _f(cal["ci95"][1]))
    for page, pattern in (
        ("README.md", r"faithfulness: judge (\d\.\d{3}), calibrated (\d\.\d{3}) \[(\d\.\d{3}), (\d\.\d{3})\]"),
        ("README.zh-CN.md", r"忠实度：裁判 (\d\.\d{3})，校准后 (\d\.\d{3}) \[(\d\.\d{3}), (\d\.\d{3})\]"),
    ):
        found = re.search(pattern, (ROOT / page).read_text(encoding="utf-8"))
        assert found is not None, f"{page}: the labelling example's figures are not quoted where expected"
        assert found.groups() == want, f"{page} says {found.groups()}, the run gives {want}"


def test_the_ci_page_quotes_the_example_mean(runs: dict[str, Any]) -> None:
    text = (ROOT / "docs" / "zh" / "ci.md").read_text(encoding="utf-8")
    found = re.search(r"本地裁判给出的忠实度均值是 (\d\.\d{3})", text)
    assert found is not None and found.group(1) == _f(runs["judge"]), (
        f"docs/zh/ci.md says {found and found.group(1)}, the run gives {_f(runs['judge'])}"
    )


def test_the_compare_page_quotes_the_example_comparison(runs: dict[str, Any]) -> None:
    m = runs["compare"]
    text = (ROOT / "docs" / "compare.md").read_text(encoding="utf-8")
    found = re.search(
        r'"mean_a": (\d\.\d{3}), "mean_b": (\d\.\d{3}), "diff": (-?\d\.\d{3}),\s*"ci95": \[(-?\d\.\d{3}), '
        r'(-?\d\.\d{3})\], "p_value": [\d.]+, "wins": (\d+), "ties": (\d+), "losses": (\d+)',
        text,
    )
    assert found is not None, "docs/compare.md: the example comparison's JSON is not where expected"
    assert m.ci95 is not None
    want = (
        _f(m.mean_a), _f(m.mean_b), f"{m.diff:.3f}", f"{m.ci95[0]:.3f}", f"{m.ci95[1]:.3f}",
        str(m.wins), str(m.ties), str(m.losses),
    )  # fmt: skip
    assert found.groups() == want, f"docs/compare.md says {found.groups()}, the runs give {want}"


@pytest.mark.parametrize("page", ["docs/ci.md", "docs/zh/ci.md"])
def test_the_ci_pages_quote_the_example_gate(runs: dict[str, Any], page: str) -> None:
    s = runs["summary"]
    want = (
        f"gate failed: faithfulness: mean {s.mean:.4f} is not >= 0.8 (n_scored=12, n_invalid=0, "
        f"95% CI [{s.ci95[0]:.4f}, {s.ci95[1]:.4f}])"
    )
    text = (ROOT / page).read_text(encoding="utf-8")
    quoted = re.findall(r"gate failed: faithfulness: mean .*", text)
    assert quoted and all(q == want for q in quoted), f"{page} quotes {quoted}, the run gives {want!r}"


def test_the_chinese_metrics_page_shows_the_example_run_as_it_is(tmp_path: Path) -> None:
    """docs/zh/metrics.md shows a recorded `runs show --samples` of the four Chinese samples of the
    example data: every "metric: value" line there is the run's value, to 3 decimals."""
    text = (ROOT / "docs" / "zh" / "metrics.md").read_text(encoding="utf-8")
    block = text[text.index("[8] zh-great-wall") : text.index("```", text.index("[8] zh-great-wall"))]
    metrics = [
        "faithfulness", "answer_relevance", "context_relevance", "context_precision", "context_recall",
        "answer_correctness", "token_f1", "rouge_l",
    ]  # fmt: skip
    result = evaluate(str(EXAMPLE), metrics, progress=False)
    by_id = {s.id: i for i, s in result.samples}
    quoted = 0
    current = None
    for line in block.splitlines():
        head = re.match(r"\[\d+\] (\S+):", line)
        if head:
            current = by_id[head.group(1)]
            continue
        m = re.match(r"\s+(\w+): (\d\.\d{3}) ", line)
        if m and current is not None:
            score = result.score(current, m.group(1))
            assert score is not None and score.value is not None
            got = f"{score.value:.3f}"
            assert got == m.group(2), f"{m.group(1)} of sample {current}: the page says {m.group(2)}, the run {got}"
            quoted += 1
    assert quoted >= 12


def test_the_chinese_ci_page_quotes_assert_rag_as_it_is() -> None:
    """docs/zh/ci.md shows assert_rag on a made-up Great Wall answer and on a copied one: the two
    faithfulness figures it quotes are the local judge's."""
    text = (ROOT / "docs" / "zh" / "ci.md").read_text(encoding="utf-8")
    contexts = ["长城的修建始于春秋战国时期，各诸侯国为了防御而修筑城墙。现存的砖石长城主要是明代修建的。"]
    question = "长城是什么时候开始修建的？"
    answers = ["长城始建于唐朝，是为了抵御蒙古人而修建的。", "长城的修建始于春秋战国时期，各诸侯国为了防御而修筑城墙。"]
    rows = [{"question": question, "contexts": contexts, "answer": a} for a in answers]
    made_up, copied = (s.value for s in evaluate(rows, ["faithfulness"]).scores("faithfulness"))
    assert made_up is not None and copied is not None
    assert f"faithfulness: {made_up:.3f} < 0.5" in text
    assert f"照抄上下文第一句的回答则得 {copied:.3f}" in text
