"""`ragmeter metrics --lang en|zh`: descriptions from the per-language data files."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from click.testing import CliRunner

from ragmeter import Metric, Score
from ragmeter.cli.main import cli
from ragmeter.errors import ConfigError
from ragmeter.metrics import base as metrics_base
from ragmeter.metrics.descriptions import _parse, description_languages, load_descriptions


def _rows(*args: str) -> dict[str, dict]:
    res = CliRunner().invoke(cli, ["metrics", "--json", *args], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return {row["name"]: row for row in map(json.loads, res.stdout.splitlines())}


def test_languages_are_english_and_chinese() -> None:
    assert description_languages() == ["en", "zh"]


def test_default_is_english_with_no_terms() -> None:
    rows = _rows()
    assert rows["faithfulness"]["description"] == load_descriptions("en").metrics["faithfulness"].description
    assert rows["faithfulness"]["description"].startswith("Share of the answer's claims")
    assert all("term" not in row for row in rows.values())
    assert _rows("--lang", "en") == rows


def test_chinese_descriptions_and_terms_come_from_the_data_file() -> None:
    rows = _rows("--lang", "zh")
    zh = load_descriptions("zh")
    assert rows["faithfulness"]["term"] == "忠实度"
    assert rows["context_recall"]["term"] == "上下文召回率"
    # every built-in metric (metrics registered by other tests in this process carry no term)
    for name, entry in zh.metrics.items():
        assert rows[name]["term"] == entry.term
        assert rows[name]["description"] == entry.description
    # everything but the texts is the same as in English
    en = _rows()
    strip = ("description", "term")
    assert {n: {k: v for k, v in r.items() if k not in strip} for n, r in rows.items()} == {
        n: {k: v for k, v in r.items() if k not in strip} for n, r in en.items()
    }


def test_chinese_table_has_chinese_labels() -> None:
    res = CliRunner().invoke(cli, ["metrics", "--lang", "zh"], catch_exceptions=False)
    assert res.exit_code == 0
    for text in ("指标", "中文名", "所需字段", "忠实度", "无（不需要裁判）"):
        assert text in res.stdout


def test_unknown_language_is_a_usage_error() -> None:
    res = CliRunner().invoke(cli, ["metrics", "--lang", "fr"])
    assert res.exit_code == 2
    assert "'fr' is not one of 'en', 'zh'" in res.output


@pytest.fixture
def user_metric() -> Iterator[str]:
    class Shouting(Metric):
        """Share of upper-case letters in the answer.

        More text that is not shown."""

        name = "shouting_test_metric"
        requires = ("answer",)

        async def score(self, sample, judge):  # type: ignore[no-untyped-def]
            return Score(value=0.0)

    metrics_base.register_metric("shouting_test_metric")(Shouting)
    try:
        yield "shouting_test_metric"
    finally:
        metrics_base._REGISTRY.pop("shouting_test_metric", None)


def test_a_user_metric_is_described_by_its_docstring_in_any_language(user_metric: str) -> None:
    for lang in ("en", "zh"):
        row = _rows("--lang", lang)[user_metric]
        assert row["description"] == "Share of upper-case letters in the answer."
        assert "term" not in row


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"labels": {}, "metrics": {}}, "[labels] must give"),
        (
            {
                "labels": dict.fromkeys(
                    ("metric", "term", "requires", "steps", "description", "no_judge"), "x"
                )
            },
            "no [metrics",
        ),
        ({"colour": 1}, "unknown key(s) colour"),
    ],
)
def test_a_malformed_file_names_the_problem(data: dict, message: str) -> None:
    with pytest.raises(
        ConfigError, match=message.replace("[", r"\[").replace("(", r"\(").replace(")", r"\)")
    ):
        _parse("xx", data, "xx.toml")


def test_a_bad_metric_entry_names_the_metric() -> None:
    labels = dict.fromkeys(("metric", "term", "requires", "steps", "description", "no_judge"), "x")
    with pytest.raises(ConfigError, match=r"xx.toml: \[metrics.faithfulness\]: 'description' must be one"):
        _parse("xx", {"labels": labels, "metrics": {"faithfulness": {"description": "a\nb"}}}, "xx.toml")
    with pytest.raises(ConfigError, match=r"unknown key\(s\) colour"):
        _parse(
            "xx",
            {"labels": labels, "metrics": {"faithfulness": {"description": "a", "colour": 1}}},
            "xx.toml",
        )


def test_unknown_language_in_python_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="no metric descriptions for language 'fr'; available: en, zh"):
        load_descriptions("fr")
