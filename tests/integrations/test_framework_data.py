"""Reading data as Ragas and LlamaIndex hold it: their objects (where the package is installed) and
the files they save (committed, written by the packages themselves; see data/make_files.py)."""

from __future__ import annotations

import importlib.util
import warnings
from pathlib import Path
from typing import Any

import pytest

import ragmeter

DATA = Path(__file__).resolve().parent / "data"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "rag_samples.jsonl"
FIELDS = ("question", "contexts", "answer", "reference", "context_ids", "reference_context_ids")


def _same_as_examples(ds: ragmeter.Dataset, fields: tuple[str, ...] = FIELDS) -> None:
    expected = ragmeter.load_dataset(EXAMPLES)
    assert len(ds) == len(expected) == 12 and not ds.problems
    for got, want in zip(ds, expected, strict=True):
        for f in fields:
            assert getattr(got, f) == getattr(want, f), (want.id, f)


@pytest.mark.parametrize("name", ["ragas-0.4.jsonl", "ragas-0.4.csv"])
def test_files_saved_by_ragas(name: str) -> None:
    # Ragas's CSV holds list columns as Python reprs ("['a', 'b']"); both files read the same
    _same_as_examples(ragmeter.load_dataset(DATA / name))


def test_labelled_rag_dataset_file_saved_by_llamaindex() -> None:
    ds = ragmeter.load_dataset(DATA / "llamaindex-0.12-labelled.json")
    # a LabelledRagDataset holds the query, the reference answer and the reference contexts
    expected = ragmeter.load_dataset(EXAMPLES)
    assert len(ds) == 12 and not ds.problems
    for got, want in zip(ds, expected, strict=True):
        assert got.question == want.question and got.reference == want.reference
        assert got.reference_contexts == want.contexts and got.answer is None
        assert got.metadata["reference_answer_by"]["model_name"] == "ragmeter-examples"


# -- Ragas objects --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def ragas_ds() -> Any:
    pytest.importorskip("ragas")
    from integrations.data.make_files import ragas_dataset

    return ragas_dataset()


def test_ragas_evaluation_dataset_and_samples(ragas_ds: Any, tmp_path: Path) -> None:
    _same_as_examples(ragmeter.load_dataset(ragas_ds))
    _same_as_examples(ragmeter.load_dataset(list(ragas_ds.samples)))  # SingleTurnSample objects
    _same_as_examples(ragmeter.load_dataset(ragas_ds.to_pandas()))
    ragas_ds.to_jsonl(str(tmp_path / "saved.jsonl"))
    ragas_ds.to_csv(str(tmp_path / "saved.csv"))
    _same_as_examples(ragmeter.load_dataset(tmp_path / "saved.jsonl"))
    _same_as_examples(ragmeter.load_dataset(tmp_path / "saved.csv"))


def test_ragas_dataset_scores_end_to_end(ragas_ds: Any) -> None:
    result = ragmeter.evaluate(ragas_ds, ["answer_relevancy", "token_f1"], progress=False)
    assert result.summary()["answer_relevance"].n_scored == 12


# -- LlamaIndex objects ---------------------------------------------------------------------------
def test_labelled_rag_dataset_object(tmp_path: Path) -> None:
    if importlib.util.find_spec("llama_index") is None:
        pytest.skip("llama-index-core is not installed")
    with warnings.catch_warnings():
        # llama-index-core 0.12 under pydantic 2.12 warns about its own Field() use on import
        warnings.simplefilter("ignore", category=Warning)
        try:
            from integrations.data.make_files import llamaindex_labelled_dataset

            labelled = llamaindex_labelled_dataset()
        except ImportError:
            pytest.skip("this llama-index-core has no llama_index.core.llama_dataset (removed in 0.14)")
    ds = ragmeter.load_dataset(labelled)
    assert len(ds) == 12 and ds[0].reference_contexts and ds[0].reference
    labelled.save_json(str(tmp_path / "saved.json"))
    assert ragmeter.load_dataset(tmp_path / "saved.json")[5] == ds[5]


def test_evaluation_results_and_batch_runner_output() -> None:
    pytest.importorskip("llama_index.core")
    from llama_index.core.evaluation import EvaluationResult

    def result(i: int, score: float, invalid: bool = False) -> Any:
        return EvaluationResult(
            query=f"q{i}",
            contexts=[f"c{i}"],
            response=f"a{i}",
            score=None if invalid else score,
            passing=None if invalid else score >= 0.5,
            feedback="fine",
            invalid_result=invalid,
            invalid_reason="parse error" if invalid else None,
        )

    listed = ragmeter.load_dataset([result(1, 1.0), result(2, 0.0)])
    assert [s.question for s in listed] == ["q1", "q2"] and listed[1].contexts == ("c2",)
    assert listed[1].answer == "a2" and listed[1].metadata["score"] == 0.0

    batch = {
        "faithfulness": [result(1, 1.0), result(2, 0.0)],
        "relevancy": [result(1, 1.0), result(2, 0, True)],
    }
    ds = ragmeter.load_dataset(batch)
    assert ds.source == "<evaluation results>" and len(ds) == 2
    second = ds[1]
    assert (second.question, second.contexts, second.answer) == ("q2", ("c2",), "a2")
    assert second.metadata["faithfulness.score"] == 0.0 and second.metadata["faithfulness.passing"] is False
    assert second.metadata["relevancy.invalid_result"] is True
    assert second.metadata["relevancy.invalid_reason"] == "parse error"
    with pytest.raises(ragmeter.ConfigError, match="different lengths"):
        ragmeter.load_dataset({"a": [result(1, 1.0)], "b": [result(1, 1.0), result(2, 1.0)]})
