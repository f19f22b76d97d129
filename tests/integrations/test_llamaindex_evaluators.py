"""ragmeter's evaluators as drop-in LlamaIndex evaluators: with llama-index-core installed they are
``llama_index.core.evaluation.BaseEvaluator`` subclasses, LlamaIndex's own ``BatchEvalRunner`` runs
them, and they return its ``EvaluationResult`` (invalid state in ``invalid_result`` /
``invalid_reason`` / ``feedback`` and ``details["error"]``). Without it the same classes stand alone."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from typing import Any

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core.evaluation import BaseEvaluator as LIBaseEvaluator
from llama_index.core.evaluation import BatchEvalRunner
from llama_index.core.evaluation import EvaluationResult as LIEvaluationResult

from integrations.frameworks import llamaindex_index, llamaindex_query_engine
from ragmeter.evaluators import (
    CorrectnessEvaluator,
    FaithfulnessEvaluator,
    RelevancyEvaluator,
    SemanticSimilarityEvaluator,
)
from ragmeter.judges import FakeProvider, JudgeConfig, LLMJudge, ModelClient

QUERIES = ["Where is the Eiffel Tower?", "What does the GIL do?"]
RESPONSES = [
    "The Eiffel Tower is on the Champ de Mars in Paris.",
    "The GIL lets only one thread execute Python bytecode at a time.",
]
CONTEXTS = [
    ["The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, France."],
    [
        "The global interpreter lock (GIL) is a mutex in CPython that allows only one thread to execute "
        "Python bytecode at a time."
    ],
]


def scripted_judge(*replies: Any) -> LLMJudge:
    provider = FakeProvider([r if isinstance(r, str) else json.dumps(r) for r in replies])
    return LLMJudge(ModelClient(provider, JudgeConfig(backoff_base_s=0, backoff_max_s=0)))


def test_evaluators_are_llamaindex_evaluators() -> None:
    ev = FaithfulnessEvaluator()
    assert isinstance(ev, LIBaseEvaluator)
    assert ev.get_prompts() == {}
    r = ev.evaluate(query=QUERIES[0], response=RESPONSES[0], contexts=CONTEXTS[0])
    assert isinstance(r, LIEvaluationResult) and not r.invalid_result and r.score is not None


async def test_batch_eval_runner_with_the_local_judge() -> None:
    runner = BatchEvalRunner(
        {"faithfulness": FaithfulnessEvaluator(threshold=0.5), "similarity": SemanticSimilarityEvaluator()},
        workers=2,
    )
    results = await runner.aevaluate_response_strs(
        queries=QUERIES, response_strs=RESPONSES, contexts_list=CONTEXTS, reference=RESPONSES[::-1]
    )
    assert set(results) == {"faithfulness", "similarity"}
    for name, rows in results.items():
        assert len(rows) == 2 and all(isinstance(r, LIEvaluationResult) for r in rows), name
    faith = results["faithfulness"]
    assert all(not r.invalid_result and r.score is not None and r.score >= 0.5 and r.passing for r in faith)
    assert [r.query for r in faith] == QUERIES
    # similarity to the other question's answer: low, and below the 0.8 threshold
    assert all(r.score is not None and r.passing is False for r in results["similarity"])


def test_batch_eval_runner_carries_invalid_results() -> None:
    judge = scripted_judge("not json", "still not json", {"reason": "right", "score": 5})
    runner = BatchEvalRunner({"relevancy": RelevancyEvaluator(judge)}, workers=1)
    (bad,) = runner.evaluate_response_strs(
        queries=QUERIES[:1], response_strs=RESPONSES[:1], contexts_list=CONTEXTS[:1]
    )["relevancy"]
    assert bad.invalid_result and bad.invalid_reason.startswith("JudgeOutputError")
    assert bad.feedback.startswith("invalid: JudgeOutputError") and bad.score is None and bad.passing is None
    assert bad.details["error"]["kind"] == "JudgeOutputError" and bad.details["error"]["raw"]

    correctness = CorrectnessEvaluator(scripted_judge({"reason": "matches", "score": 5}))
    runner = BatchEvalRunner({"correctness": correctness}, workers=1)
    (good,) = runner.evaluate_response_strs(
        queries=QUERIES[:1], response_strs=RESPONSES[:1], reference=["On the Champ de Mars in Paris."]
    )["correctness"]
    assert good.score == 5.0 and good.passing and good.feedback == "matches"


def test_batch_eval_runner_on_query_engine_responses() -> None:
    engine = llamaindex_query_engine(llamaindex_index(), k=2)
    runner = BatchEvalRunner({"faithfulness": FaithfulnessEvaluator(threshold=0.0)}, workers=2)
    results = runner.evaluate_queries(engine, queries=QUERIES)
    rows = results["faithfulness"]
    # the MockLLM echoes its prompt, which holds the source nodes: contexts came from the Response
    assert len(rows) == 2 and all(r.contexts and len(r.contexts) == 2 for r in rows)
    assert all(not r.invalid_result for r in rows)


def test_without_llama_index_the_same_classes_stand_alone() -> None:
    code = textwrap.dedent(
        """
        import sys
        sys.modules["llama_index"] = None  # import llama_index now raises ImportError
        from ragmeter.evaluators import EvaluationResult, FaithfulnessEvaluator
        from ragmeter.evaluators.framework import LLAMA_INDEX
        r = FaithfulnessEvaluator().evaluate(query="q", response="Paris is in France.",
                                             contexts=["Paris is in France."])
        print(LLAMA_INDEX, isinstance(r, EvaluationResult), type(r).__mro__[1].__module__, r.score)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    flag, is_result, base_module, score = out.stdout.split()
    assert flag == "False" and is_result == "True" and base_module == "ragmeter.evaluators.framework"
    assert float(score) > 0.5
