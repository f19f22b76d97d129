"""Every retrieval figure checked against pytrec_eval (trec_eval) on generated runs."""

from __future__ import annotations

import random

import pytest

from ragmeter.metrics.registry import get_metric
from ragmeter.retrieval import measures
from ragmeter.retrieval.api import evaluate_retrieval
from ragmeter.retrieval.trec import rank_run

pytrec_eval = pytest.importorskip("pytrec_eval")


def make_collection(seed: int, n_queries: int = 40, n_docs: int = 30) -> tuple[dict, dict]:
    """Random graded qrels (0..3) and runs with distinct scores; some queries retrieve nothing relevant."""
    rng = random.Random(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(n_queries):
        qid = f"q{q}"
        judged = rng.sample(range(n_docs), rng.randint(1, 8))
        grades = {f"d{d}": rng.choice([0, 1, 1, 2, 3]) for d in judged}
        if not any(g >= 1 for g in grades.values()):
            grades[f"d{judged[0]}"] = 1
        qrels[qid] = grades
        n_ret = rng.randint(1, 15)
        docs = rng.sample(range(n_docs), n_ret)
        scores = rng.sample(range(1000), n_ret)
        run[qid] = {f"d{d}": float(s) / 10 for d, s in zip(docs, scores, strict=True)}
    return qrels, run


CUTS = (1, 3, 5, 10, 20)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_measures_match_trec_eval(seed: int) -> None:
    qrels, run = make_collection(seed)
    names = {"recip_rank", "map", "Rprec"} | {
        f"{m}.{','.join(map(str, CUTS))}" for m in ("P", "recall", "map_cut", "ndcg_cut", "success")
    }
    ref = pytrec_eval.RelevanceEvaluator(qrels, names).evaluate(run)
    for qid, scores in run.items():
        ranking = rank_run(scores)
        want = ref[qid]
        q = qrels[qid]
        assert measures.reciprocal_rank(ranking, q) == pytest.approx(want["recip_rank"], abs=1e-9)
        assert measures.average_precision(ranking, q) == pytest.approx(want["map"], abs=1e-9)
        assert measures.r_precision(ranking, q) == pytest.approx(want["Rprec"], abs=1e-9)
        for k in CUTS:
            assert measures.precision(ranking, q, k) == pytest.approx(want[f"P_{k}"], abs=1e-9)
            assert measures.recall(ranking, q, k) == pytest.approx(want[f"recall_{k}"], abs=1e-9)
            assert measures.average_precision(ranking, q, k) == pytest.approx(want[f"map_cut_{k}"], abs=1e-9)
            assert measures.ndcg(ranking, q, k) == pytest.approx(want[f"ndcg_cut_{k}"], abs=1e-9)
            assert measures.hit_rate(ranking, q, k) == pytest.approx(want[f"success_{k}"], abs=1e-9)


@pytest.mark.parametrize("k", CUTS)
def test_mrr_at_k_is_trec_recip_rank_of_the_truncated_run(k: int) -> None:
    qrels, run = make_collection(7)
    truncated = {q: dict(list(sorted(s.items(), key=lambda kv: -kv[1]))[:k]) for q, s in run.items()}
    ref = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(truncated)
    for qid, scores in run.items():
        got = measures.reciprocal_rank(rank_run(scores), qrels[qid], k)
        assert got == pytest.approx(ref[qid]["recip_rank"], abs=1e-9)


def test_exponential_gain_equals_trec_ndcg_on_transformed_grades() -> None:
    qrels, run = make_collection(3)
    exp_qrels = {q: {d: 2**g - 1 for d, g in docs.items()} for q, docs in qrels.items()}
    ref = pytrec_eval.RelevanceEvaluator(exp_qrels, {"ndcg_cut.5,10", "ndcg"}).evaluate(run)
    for qid, scores in run.items():
        ranking = rank_run(scores)
        for k in (5, 10):
            got = measures.ndcg(ranking, qrels[qid], k, gain="exponential")
            assert got == pytest.approx(ref[qid][f"ndcg_cut_{k}"], abs=1e-9)
        assert measures.ndcg(ranking, qrels[qid], None, gain="exponential") == pytest.approx(
            ref[qid]["ndcg"], abs=1e-9
        )


def test_ties_are_broken_like_trec_eval() -> None:
    qrels = {"q": {"a": 1, "c": 2}}
    run = {"q": {"a": 1.0, "b": 1.0, "c": 1.0, "d": 2.0}}
    ref = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank", "ndcg_cut.3", "P.2"}).evaluate(run)["q"]
    ranking = rank_run(run["q"])
    assert ranking == ["d", "c", "b", "a"]
    assert measures.reciprocal_rank(ranking, qrels["q"]) == pytest.approx(ref["recip_rank"])
    assert measures.ndcg(ranking, qrels["q"], 3) == pytest.approx(ref["ndcg_cut_3"])
    assert measures.precision(ranking, qrels["q"], 2) == pytest.approx(ref["P_2"])


def test_evaluate_retrieval_per_query_and_means_match_trec_eval() -> None:
    qrels, run = make_collection(11, n_queries=25)
    metrics = [
        get_metric("ndcg_at_k", k=5),
        get_metric("ndcg_at_k"),
        get_metric("precision_at_k", k=3),
        get_metric("recall_at_k", k=10),
        get_metric("average_precision"),
        get_metric("mrr"),
        get_metric("hit_rate", k=5),
        get_metric("r_precision"),
    ]
    result = evaluate_retrieval(run, qrels, metrics, bootstrap_resamples=200)
    ref = pytrec_eval.RelevanceEvaluator(
        qrels, {"ndcg_cut.5,10", "P.3", "recall.10", "map", "recip_rank", "success.5", "Rprec"}
    ).evaluate(run)
    pairs = {
        "ndcg@5": "ndcg_cut_5",
        "ndcg_at_k": "ndcg_cut_10",
        "precision@3": "P_3",
        "recall_at_k": "recall_10",
        "average_precision": "map",
        "mrr": "recip_rank",
        "hit_rate@5": "success_5",
        "r_precision": "Rprec",
    }
    assert set(result.metric_names) == set(pairs)
    summary = result.summary()
    for ours, theirs in pairs.items():
        by_id = {s.id: result.score(i, ours) for i, s in result.samples}
        for qid, want in ref.items():
            assert by_id[qid].value == pytest.approx(want[theirs], abs=1e-9), (ours, qid)
        mean = sum(v[theirs] for v in ref.values()) / len(ref)
        assert summary[ours].mean == pytest.approx(mean, abs=1e-9)
        lo, hi = summary[ours].ci95
        assert lo <= summary[ours].mean <= hi
