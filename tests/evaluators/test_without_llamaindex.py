"""ragmeter.evaluators without llama-index-core: the same classes and methods work on their own.

Run in a subprocess where ``llama_index`` cannot be imported (``sys.modules["llama_index"] = None``
makes every ``import llama_index...`` fail, as on a machine without the package): the stand-in
classes take LlamaIndex's place, and the walkthrough's steps run offline on ragmeter's own inputs
(a folder of documents, a plain function as the RAG system, a callable retriever).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from helpers.server import FakeOpenAIServer

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = r"""
import json, sys, warnings
sys.modules["llama_index"] = None  # no llama-index-core: every import of it fails
from ragmeter.evaluators import (AnswerRelevancyEvaluator, BatchEvalRunner, EvaluationResult, FaithfulnessEvaluator,
    LabelledRagDataset, RagDatasetGenerator, RetrieverEvaluator, RetrievalEvalResult)
from ragmeter.evaluators import RelevancyEvaluator, framework, rag_dataset
from ragmeter import make_judge
llm = make_judge("openai-compatible:fake-model", base_url=URL) if URL else None
assert not framework.LLAMA_INDEX and not rag_dataset.LLAMA_DATASET
assert EvaluationResult.__mro__[1].__module__ == "ragmeter.evaluators.framework"

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    dataset = RagDatasetGenerator.from_documents(DOCS, llm=llm, num_questions_per_chunk=2).generate_dataset_from_nodes()
dataset.save_json(OUT)
assert len(LabelledRagDataset.from_json(OUT).examples) == len(dataset.examples)
questions = [e.query for e in dataset.examples][:4]
contexts = {e.query: e.reference_contexts for e in dataset.examples}

def rag(question):  # the system under test: its contexts and a copied first sentence
    ctx = contexts[question]
    return {"answer": ctx[0].split(". ")[0] + ".", "contexts": ctx}

relevancy = RelevancyEvaluator(llm=llm) if llm else AnswerRelevancyEvaluator()
runner = BatchEvalRunner({"faithfulness": FaithfulnessEvaluator(llm=llm), "relevancy": relevancy}, workers=4)
results = runner.evaluate_queries(rag, queries=questions)
retrieval = RetrieverEvaluator.from_metric_names(["hit_rate", "mrr"], retriever=lambda q: ["a", "b"])
r = retrieval.evaluate(query="q", expected_ids=["b"])
assert isinstance(r, RetrievalEvalResult)
print(json.dumps({"n": len(questions), "faithfulness": [x.score for x in results["faithfulness"]],
                  "relevancy": [x.score for x in results["relevancy"]], "mrr": r.metric_vals_dict["mrr"],
                  "why": [x.invalid_reason for name in results for x in results[name] if x.invalid_result]}))
"""


def _run(tmp_path: Path, url: str | None) -> dict[str, Any]:
    values = (
        f"DOCS = {str(ROOT / 'examples' / 'docs')!r}\nOUT = {str(tmp_path / 'ds.json')!r}\nURL = {url!r}\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", values + SCRIPT], capture_output=True, text=True, check=False, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["n"] >= 3 and out["mrr"] == 0.5
    assert all(s is not None and s >= 0.5 for s in out["faithfulness"])  # copied from the contexts
    return out


def test_the_evaluators_work_without_llama_index(tmp_path: Path) -> None:
    out = _run(tmp_path, None)  # offline, the local judge
    assert all(s is not None for s in out["relevancy"]), out["why"]


def test_the_evaluators_work_without_llama_index_against_a_server(
    tmp_path: Path, fake_openai_server: FakeOpenAIServer
) -> None:
    out = _run(tmp_path, fake_openai_server.url)
    # the relevancy rubric's YES/NO; the loopback server's toy grader sometimes answers a number it
    # read in the answer ("score 1368"), which is an invalid result that says so, never a silent one
    valid = [s for s in out["relevancy"] if s is not None]
    assert all(s in (0.0, 1.0) for s in valid) and len(valid) * 2 >= len(out["relevancy"])
    assert len(out["why"]) == len(out["relevancy"]) - len(valid)
    assert all("outside the scale" in why for why in out["why"])
    assert fake_openai_server.total_requests > 0
