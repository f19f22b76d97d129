"""Ragas's metric names as aliases: the same metric, a notice naming it and the difference, once."""

from __future__ import annotations

import json
import logging

import pytest
from click.testing import CliRunner

import ragmeter
from ragmeter.cli.main import cli
from ragmeter.errors import ConfigError
from ragmeter.metrics import MetricAlias, get_metric, list_aliases, list_metrics
from ragmeter.metrics.base import register_alias
from ragmeter.metrics.registry import resolve_alias

EXAMPLES = "examples/rag_samples.jsonl"


def _notices(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "ragmeter.metrics"]


def test_every_alias_targets_a_registered_metric_with_valid_arguments() -> None:
    aliases = list_aliases()
    registry = list_metrics()
    assert {
        "answer_relevancy",
        "llm_context_precision_with_reference",
        "noise_sensitivity(mode=irrelevant)",
    } <= set(aliases)
    for name, alias in aliases.items():
        assert alias.target in registry and name not in registry, name
        metric = get_metric(name)  # builds with the alias's arguments
        assert metric.name == alias.target
        for key, value in alias.kwargs.items():
            assert metric.params()[key] == value, (name, key)


def test_alias_notice_names_the_metric_and_the_difference(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="ragmeter.metrics"):
        metric = get_metric("noise_sensitivity(mode=irrelevant)")
    assert metric.params()["mode"] == "irrelevant"
    (notice,) = _notices(caplog)
    assert (
        "'noise_sensitivity(mode=irrelevant)' (Ragas's name) is ragmeter's noise_sensitivity(mode='irrelevant')"
        in notice
    )
    assert "Difference:" in notice and "2k + 3" in notice
    assert resolve_alias("faithfulness") == ("faithfulness", {}, None)


def test_evaluate_with_ragas_names_reports_ragmeter_names_and_notices_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="ragmeter.metrics"):
        result = ragmeter.evaluate(
            EXAMPLES, ["answer_relevancy", "rouge_score", "id_based_context_recall"], progress=False
        )
    assert result.metric_names == ["answer_relevance", "rouge_l", "recall_at_k"]
    notices = _notices(caplog)
    assert len(notices) == 3 and sum("'answer_relevancy'" in n for n in notices) == 1
    direct = ragmeter.evaluate(EXAMPLES, ["answer_relevance", "rouge_l"], progress=False)
    for name in ("answer_relevance", "rouge_l"):
        assert result.summary()[name].mean == direct.summary()[name].mean


def test_cli_accepts_aliases_and_lists_them(tmp_path: object, caplog: pytest.LogCaptureFixture) -> None:
    runner = CliRunner()
    with caplog.at_level(logging.WARNING, logger="ragmeter.metrics"):
        res = runner.invoke(
            cli,
            [
                "evaluate",
                EXAMPLES,
                "-m",
                "answer_relevancy,bleu_score",
                "--json",
                "--no-progress",
                "--out",
                str(tmp_path),
            ],
            catch_exceptions=False,
        )
    assert res.exit_code == 0, res.stderr
    assert set(json.loads(res.stdout)["metrics"]) == {"answer_relevance", "bleu"}
    assert len(_notices(caplog)) == 2

    listed = runner.invoke(cli, ["metrics", "--aliases", "--json"], catch_exceptions=False)
    rows = [json.loads(line) for line in listed.stdout.splitlines()]
    by_alias = {r["alias"]: r for r in rows}
    assert by_alias["llm_context_precision_with_reference"]["metric"] == "context_precision"
    assert by_alias["id_based_context_precision"]["args"] == {"match": "ids"}
    assert all(r["source"] in ("Ragas", "DeepEval") and r["difference"] for r in rows)
    assert by_alias["tool_correctness"]["source"] == "DeepEval"


def test_alias_cannot_shadow_a_metric_and_unknown_names_point_to_the_list() -> None:
    with pytest.raises(ConfigError, match="already registered"):
        register_alias(MetricAlias("faithfulness", "answer_relevance", "Other"))
    with pytest.raises(ConfigError, match="ragmeter metrics --aliases"):
        get_metric("context_entity_recall")
