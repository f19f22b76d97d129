"""``ragmeter runs export RUN --to mlflow`` against local tracking stores (a file store and, where
MLflow's database extras are installed, SQLite), read back with MLflow's own client."""

from __future__ import annotations

import csv
import importlib.util
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

pytest.importorskip("mlflow")

from mlflow.tracking import MlflowClient

import ragmeter
from ragmeter.cli.main import cli
from ragmeter.log.mlflow_export import export_to_mlflow, flatten_params
from ragmeter.run.result import Result

EXAMPLES = "examples/rag_samples.jsonl"


@pytest.fixture(scope="module")
def run_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("runs")
    result = ragmeter.evaluate(
        EXAMPLES, ["faithfulness", "semantic_similarity", "token_f1"], out=out, progress=False
    )
    return out, result.run_id


@pytest.fixture
def file_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    # MLflow 3 keeps the file store in maintenance mode and asks for this opt-in
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    return (tmp_path / "mlruns").as_uri()


def _check_exported(uri: str, mlflow_run_id: str, result: Result) -> None:
    client = MlflowClient(tracking_uri=uri)
    run = client.get_run(mlflow_run_id)
    assert run.info.status == "FINISHED" and run.info.run_name == result.run_id
    assert run.data.tags["ragmeter.run_id"] == result.run_id and run.data.tags["ragmeter.judge"] == "local"
    params = run.data.params
    assert params["metrics"] == "faithfulness,semantic_similarity,token_f1"
    assert params["judge.name"] == "local" and params["metric.faithfulness.lang"] == "auto"
    assert params["metric.semantic_similarity.threshold"] == "0.8"
    assert params["dataset_hash"] == result.meta["dataset_hash"]
    metrics = run.data.metrics
    for name, s in result.summary().items():
        assert metrics[f"{name}/mean"] == pytest.approx(s.mean)
        assert s.ci95 is not None
        assert metrics[f"{name}/ci95_low"] == pytest.approx(s.ci95[0])
        assert metrics[f"{name}/ci95_high"] == pytest.approx(s.ci95[1])
        assert metrics[f"{name}/n_scored"] == s.n_scored == 12
        assert metrics[f"{name}/n_invalid"] == 0
    assert metrics["semantic_similarity/pass_rate"] == pytest.approx(
        result.summary()["semantic_similarity"].pass_rate
    )
    assert metrics["n_samples"] == 12
    artifacts = {a.path for a in client.list_artifacts(mlflow_run_id)}
    assert artifacts == {"samples.csv", "summary.json", "run_meta.json", "report.html"}
    local = Path(client.download_artifacts(mlflow_run_id, "samples.csv"))
    with local.open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 12 and {"sample_id", "faithfulness", "faithfulness_reason"} <= set(rows[0])
    summary = json.loads(Path(client.download_artifacts(mlflow_run_id, "summary.json")).read_text())
    assert summary["run_id"] == result.run_id
    html = Path(client.download_artifacts(mlflow_run_id, "report.html")).read_text(encoding="utf-8")
    assert html.lstrip().lower().startswith("<!doctype html") and result.run_id in html


def test_cli_export_to_a_file_store(run_store: tuple[Path, str], file_store: str) -> None:
    out, run_id = run_store
    runner = CliRunner()
    args = [
        "runs",
        "export",
        run_id,
        "--out",
        str(out),
        "--to",
        "mlflow",
        "--tracking-uri",
        file_store,
        "--experiment",
        "rag-eval",
    ]
    res = runner.invoke(cli, args, catch_exceptions=False)
    assert res.exit_code == 0, res.stderr
    mlflow_run_id = res.stdout.strip().rsplit(" ", 1)[-1]
    assert f"run {run_id} -> MLflow experiment 'rag-eval'" in res.stdout
    _check_exported(file_store, mlflow_run_id, Result.from_store(out, run_id))
    # a second export of the same run is refused, naming the MLflow run it is in
    again = runner.invoke(cli, args, catch_exceptions=False)
    assert again.exit_code == 2 and mlflow_run_id in again.stderr and "already in MLflow" in again.stderr


@pytest.mark.skipif(importlib.util.find_spec("alembic") is None, reason="MLflow's SQLite store needs alembic")
def test_python_export_to_sqlite(
    run_store: tuple[Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, run_id = run_store
    # a SQLite store keeps its artifacts under ./mlruns of the working directory: the test's own
    monkeypatch.chdir(tmp_path)
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    result = Result.from_store(out, run_id)
    _check_exported(uri, export_to_mlflow(result, tracking_uri=uri), result)


def test_export_options_are_checked(run_store: tuple[Path, str]) -> None:
    out, run_id = run_store
    runner = CliRunner()
    for args, message in [
        ([], "give --format"),
        (["--format", "csv", "--to", "mlflow"], "give --format"),
        (["--format", "csv", "--experiment", "x"], "go with --to mlflow"),
        (["--to", "mlflow", "-O", "x.csv"], "--output writes a file"),
    ]:
        res = runner.invoke(cli, ["runs", "export", run_id, "--out", str(out), *args], catch_exceptions=False)
        assert res.exit_code == 2 and message in res.stderr, (args, res.stderr)


def test_params_are_flat_text_within_mlflow_limits() -> None:
    params = flatten_params(
        {
            "source": "x" * 900,
            "judge": {"name": "openai:m", "config": {"rpm": None, "stop": ["a", "b"]}},
            "metrics": [{"name": "faithfulness", "version": "1", "params": {"lang": "zh"}}],
            "status": "finished",
        }
    )
    assert params["judge.config.rpm"] == "null" and params["judge.config.stop"] == '["a", "b"]'
    assert params["metric.faithfulness.lang"] == "zh" and params["metric.faithfulness.version"] == "1"
    assert len(params["source"]) == 500 and params["source"].endswith("...")
    assert "status" not in params
