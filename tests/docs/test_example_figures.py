"""The figures the README and the docs quote from runs on the shipped example data are those runs'.

The README's labelling example (``ragmeter evaluate examples/rag_samples.jsonl --metrics
faithfulness``, then ``ragmeter labels import examples/rag_labels.jsonl``, then ``ragmeter runs
show``) quotes the judge's mean and the calibrated estimate, in English and in Chinese; docs/ci.md
and docs/zh/ci.md quote the same mean and its gate message; docs/compare.md quotes the comparison
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
