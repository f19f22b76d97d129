"""Write examples/rag_samples.jsonl as Ragas and LlamaIndex save their data sets.

- ``ragas-<major.minor>.jsonl`` / ``.csv``: ``EvaluationDataset.to_jsonl`` / ``to_csv`` (Ragas installed);
- ``llamaindex-<major.minor>-labelled.json``: ``LabelledRagDataset.save_json`` (llama-index-core with
  ``llama_index.core.llama_dataset``, i.e. up to 0.12; 0.14 no longer has it).

The committed files were written by ragas 0.4.3 and llama-index-core 0.12.52::

    python tests/integrations/data/make_files.py

The tests read the files without either package (tests/integrations/test_framework_data.py); where
a package is installed they also build its objects and read those.
"""

from __future__ import annotations

import json
import warnings
from importlib.metadata import version
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE.parents[2] / "examples" / "rag_samples.jsonl"


def rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in EXAMPLES.read_text(encoding="utf-8").splitlines() if line.strip()]


def ragas_dataset() -> Any:
    from ragas import EvaluationDataset, SingleTurnSample

    samples = [
        SingleTurnSample(
            user_input=row["question"],
            retrieved_contexts=row["contexts"],
            response=row["answer"],
            reference=row["reference"],
            retrieved_context_ids=row["context_ids"],
            reference_context_ids=row["reference_context_ids"],
        )
        for row in rows()
    ]
    return EvaluationDataset(samples=samples)


def llamaindex_labelled_dataset() -> Any:
    from llama_index.core.llama_dataset import (
        CreatedBy,
        CreatedByType,
        LabelledRagDataExample,
        LabelledRagDataset,
    )

    examples = [
        LabelledRagDataExample(
            query=row["question"],
            query_by=CreatedBy(type=CreatedByType.HUMAN),
            reference_contexts=row["contexts"],
            reference_answer=row["reference"],
            reference_answer_by=CreatedBy(type=CreatedByType.AI, model_name="ragmeter-examples"),
        )
        for row in rows()
    ]
    return LabelledRagDataset(examples=examples)


def _minor(package: str) -> str:
    return ".".join(version(package).split(".")[:2])


if __name__ == "__main__":
    try:
        ds = ragas_dataset()
    except ImportError as e:
        print("ragas:", e)
    else:
        ds.to_jsonl(str(HERE / f"ragas-{_minor('ragas')}.jsonl"))
        ds.to_csv(str(HERE / f"ragas-{_minor('ragas')}.csv"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # old llama-index-core warns under new pydantic
        try:
            labelled = llamaindex_labelled_dataset()
        except ImportError as e:
            print("llama-index-core:", e)
        else:
            labelled.save_json(str(HERE / f"llamaindex-{_minor('llama-index-core')}-labelled.json"))
    print("files:", sorted(p.name for p in HERE.iterdir() if p.suffix != ".py"))
