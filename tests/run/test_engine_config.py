"""Choosing an engine, without Ray running: validation, the missing-extra message, sharding."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragmeter import ConfigError, Sample
from ragmeter.cli.main import cli
from ragmeter.metrics.registry import get_metric
from ragmeter.run.config import RunConfig
from ragmeter.run.executor import Job
from ragmeter.run.ray_engine import import_ray, judge_source, shards, total_concurrency


def test_engine_options_are_validated() -> None:
    assert RunConfig(engine="ray", ray_workers=3).engine == "ray"
    with pytest.raises(ConfigError, match="engine must be one of local, ray"):
        RunConfig(engine="spark")
    with pytest.raises(ConfigError, match="engine='ray' only"):
        RunConfig(ray_address="auto")
    with pytest.raises(ConfigError, match="ray_workers"):
        RunConfig(engine="ray", ray_workers=0)


def test_without_ray_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    with pytest.raises(ConfigError, match=r'pip install "ragmeter\[ray\]"'):
        import_ray()


def test_cli_ray_address_needs_the_ray_engine(tmp_path: Path) -> None:
    data = tmp_path / "d.jsonl"
    data.write_text('{"question": "q", "answer": "a", "reference": "a"}\n', encoding="utf-8")
    res = CliRunner().invoke(cli, ["evaluate", str(data), "-m", "token_f1", "--ray-address", "auto"])
    assert res.exit_code == 2 and "--ray-address needs --engine ray" in res.stderr


def test_workers_build_the_judge_from_a_spec_or_a_recipe() -> None:
    assert judge_source(None, None) == {"spec": None}
    assert judge_source("openai:gpt-4o-mini", None) == {"spec": "openai:gpt-4o-mini"}
    recipe = {"spec": "openai-compatible:m", "base_url": "http://127.0.0.1:1/v1"}
    assert judge_source(recipe, None) == recipe
    assert judge_source(object(), {"judge_recipe": recipe}) == recipe
    with pytest.raises(ConfigError, match="cannot be sent to the workers"):
        judge_source(object(), {})


def test_the_endpoint_total_is_the_smaller_of_the_judge_and_the_run_limit() -> None:
    assert total_concurrency({"config": {"concurrency": 4}}, RunConfig(concurrency=16)) == 4
    assert total_concurrency({"config": {}}, RunConfig(concurrency=16)) == 16


def test_shards_hold_whole_samples() -> None:
    metrics = [get_metric("token_f1"), get_metric("bleu")]
    jobs = [Job(i, m, Sample(question="q", answer="a", reference="a")) for i in range(50) for m in metrics]
    out = list(shards(jobs, n_workers=2))
    assert [j for shard in out for j in shard] == jobs  # every job once, in order
    for shard in out:
        idxs = {j.idx for j in shard}
        assert len(shard) == 2 * len(idxs)  # both metrics of each of its samples
    assert len(out) >= 2 * 4  # several shards per worker
