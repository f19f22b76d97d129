"""Ragas's metric names (and DeepEval's agent metrics'), accepted as aliases of ragmeter's metrics
(docs/migrating-from-ragas.md, docs/agents.md).

Each alias says which ragmeter metric it is and how the definitions differ; using one logs that
once (see :func:`ragmeter.metrics.registry.get_metric`). Names are those of Ragas 0.2-0.4: the metric
objects' ``name`` and the result columns of ``ragas.evaluate``; DeepEval's are its metrics' names in
snake case.
"""

from __future__ import annotations

from ragmeter.metrics.base import MetricAlias, register_alias

_ONE_CALL_PER_CONTEXT = "Ragas asks one LLM call per context; ragmeter rates all contexts in one call."

_NOISE = "same definition; ragmeter verifies all claims against each context in one call (k + 2 calls, Ragas 2k + 3)."
_FACTUAL = (
    "same definition (claim-level TP/FP/FN); ragmeter verifies per claim where Ragas labels per statement."
)

RAGAS_ALIASES: tuple[MetricAlias, ...] = (
    MetricAlias(
        "answer_relevancy",
        "answer_relevance",
        "Ragas",
        "the mean cosine is clipped to [0, 1] (Ragas reports it raw) and a noncommittal answer is 0.0 "
        "with no embedding call (Ragas multiplies by 0).",
    ),
    MetricAlias(
        "llm_context_precision_with_reference",
        "context_precision",
        "Ragas",
        f"same formula (average precision of the useful contexts); {_ONE_CALL_PER_CONTEXT}",
    ),
    MetricAlias(
        "llm_context_precision_without_reference",
        "context_utilization",
        "Ragas",
        f"same formula, usefulness judged against the answer; {_ONE_CALL_PER_CONTEXT}",
    ),
    MetricAlias(
        "nv_context_relevance",
        "context_relevance",
        "Ragas",
        "Ragas's nv_context_relevance is a 0/1/2 rating of all contexts asked twice; ragmeter's is the Ragas "
        "paper's definition, the share of context sentences needed to answer the question.",
    ),
    MetricAlias(
        "nv_response_groundedness",
        "faithfulness",
        "Ragas",
        "Ragas rates the whole response 0/1/2 twice; ragmeter's faithfulness is the share of the answer's "
        "claims supported by the contexts (two calls).",
    ),
    MetricAlias(
        "faithful_rate",
        "faithfulness",
        "Ragas",
        "Ragas's MultiModalFaithfulness asks one YES/NO of the whole response against text and image "
        "contexts; ragmeter's is the share of the answer's claims supported, images sent to an LLM judge "
        "as image parts (the local judge reads the text contexts only).",
    ),
    MetricAlias(
        "relevance_rate",
        "relevancy",
        "Ragas",
        "Ragas's MultiModalRelevance asks whether the response is in line with the query and the text and "
        "image contexts, YES/NO; ragmeter's relevancy asks the same of an LLM judge, images as image parts.",
    ),
    MetricAlias(
        "noise_sensitivity_relevant",
        "noise_sensitivity",
        "Ragas",
        _NOISE,
        {"mode": "relevant"},
    ),
    MetricAlias(
        "noise_sensitivity_irrelevant",
        "noise_sensitivity",
        "Ragas",
        _NOISE,
        {"mode": "irrelevant"},
    ),
    # the column names ragas.evaluate() gives metrics with a mode
    MetricAlias(
        "noise_sensitivity(mode=relevant)", "noise_sensitivity", "Ragas", _NOISE, {"mode": "relevant"}
    ),
    MetricAlias(
        "noise_sensitivity(mode=irrelevant)", "noise_sensitivity", "Ragas", _NOISE, {"mode": "irrelevant"}
    ),
    MetricAlias("factual_correctness(mode=f1)", "factual_correctness", "Ragas", _FACTUAL, {"mode": "f1"}),
    MetricAlias(
        "factual_correctness(mode=precision)", "factual_correctness", "Ragas", _FACTUAL, {"mode": "precision"}
    ),
    MetricAlias(
        "factual_correctness(mode=recall)", "factual_correctness", "Ragas", _FACTUAL, {"mode": "recall"}
    ),
    MetricAlias(
        "answer_similarity",
        "semantic_similarity",
        "Ragas",
        "the raw cosine of answer and reference embeddings, as Ragas; the embedding model is the judge's.",
    ),
    MetricAlias(
        "id_based_context_precision",
        "precision_at_k",
        "Ragas",
        "the share of retrieved ids that are reference ids, as Ragas (k = all retrieved).",
        {"match": "ids"},
    ),
    MetricAlias(
        "id_based_context_recall",
        "recall_at_k",
        "Ragas",
        "the share of reference ids among the retrieved ones, as Ragas (k = all retrieved).",
        {"match": "ids"},
    ),
    MetricAlias(
        "non_llm_context_precision_with_reference",
        "average_precision",
        "Ragas",
        "a retrieved context is relevant when it overlaps a reference context by token containment >= 0.5 "
        "(Ragas: Levenshtein similarity >= 0.5), and the average precision is divided by the number of "
        "reference contexts (Ragas: by the number of relevant retrieved ones).",
        {"match": "text"},
    ),
    MetricAlias(
        "non_llm_context_recall",
        "recall_at_k",
        "Ragas",
        "a reference context counts as retrieved when a retrieved context overlaps it by token containment "
        ">= 0.5 (Ragas: Levenshtein similarity > 0.5).",
        {"match": "text"},
    ),
    MetricAlias(
        "bleu_score",
        "bleu",
        "Ragas",
        "ragmeter's own tokenisation (characters for Chinese) and smoothing; Ragas calls sacrebleu.",
    ),
    MetricAlias(
        "rouge_score",
        "rouge_l",
        "Ragas",
        "ROUGE-L F-measure, Ragas's default (rouge_type='rougeL', mode='fmeasure'); ragmeter's tokenisation.",
    ),
    # agents (docs/agents.md); tool_call_accuracy, tool_call_f1 and topic_adherence are Ragas's names too
    MetricAlias(
        "agent_goal_accuracy",
        "agent_goal_success",
        "Ragas",
        "Ragas asks two calls (the end state, then a comparison with the reference) and uses the "
        "reference only in AgentGoalAccuracyWithReference; ragmeter asks one, with the reference when "
        "the sample has one.",
    ),
    MetricAlias(
        "agent_goal_accuracy_with_reference",
        "agent_goal_success",
        "Ragas",
        "one call with the reference outcome (Ragas: two).",
        {"use_reference": True},
    ),
    MetricAlias(
        "agent_goal_accuracy_without_reference",
        "agent_goal_success",
        "Ragas",
        "one call, the reference not read (Ragas: one call for the goal and its end state).",
        {"use_reference": False},
    ),
    # DeepEval's names
    MetricAlias(
        "tool_correctness",
        "tool_call_correctness",
        "DeepEval",
        "DeepEval checks that each expected tool was called, by name by default (input parameters and "
        "output on request); ragmeter's is LlamaIndex's: the share of expected calls matched by name and "
        "arguments (the expected arguments among the actual ones unless strict_kwargs).",
    ),
    MetricAlias(
        "task_completion",
        "agent_goal_success",
        "DeepEval",
        "DeepEval extracts the task and outcome from a trace and scores their alignment 0-1; ragmeter "
        "judges the goal, achieved or not, from the trajectory in one call.",
    ),
)

for _alias in RAGAS_ALIASES:
    register_alias(_alias)
