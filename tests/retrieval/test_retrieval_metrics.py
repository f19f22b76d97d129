"""Retrieval metrics on samples: ids, grades, text overlap, edge cases, TREC/BEIR readers."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragmeter import ConfigError, DatasetError, Sample
from ragmeter.metrics.registry import get_metric
from ragmeter.metrics.retrieval import metric_from_at_name
from ragmeter.retrieval import measures, read_qrels, read_queries, read_trec_run, text_overlap
from ragmeter.retrieval.api import NoJudge, evaluate_retrieval, retrieval_dataset

JUDGE = NoJudge()


async def score(name: str, sample: Sample, **kw: object):
    return await get_metric(name, **kw).score(sample, JUDGE)


async def test_ids_binary_relevance() -> None:
    s = Sample(question="q", context_ids=["a", "x", "b", "y"], reference_context_ids=["b", "a", "z"])
    assert (await score("hit_rate", s, k=1)).value == 1.0
    assert (await score("mrr", s)).value == 1.0
    assert (await score("precision_at_k", s, k=4)).value == pytest.approx(0.5)
    assert (await score("recall_at_k", s, k=4)).value == pytest.approx(2 / 3)
    assert (await score("average_precision", s)).value == pytest.approx((1 + 2 / 3) / 3)
    assert (await score("r_precision", s)).value == pytest.approx(2 / 3)


async def test_graded_relevance_from_aligned_list_and_mapping() -> None:
    aligned = Sample(
        question="q",
        context_ids=["b", "a"],
        reference_context_ids=["a", "b"],
        metadata={"reference_context_grades": [3, 1]},
    )
    mapping = aligned.replace(metadata={"reference_context_grades": {"a": 3, "b": 1}})
    import math

    dcg = 1 / math.log2(2) + 3 / math.log2(3)
    idcg = 3 / math.log2(2) + 1 / math.log2(3)
    for s in (aligned, mapping):
        assert (await score("ndcg_at_k", s)).value == pytest.approx(dcg / idcg)
    exp = (await score("ndcg_at_k", aligned, gain="exponential")).value
    assert exp == pytest.approx((1 / 1 + 7 / math.log2(3)) / (7 / 1 + 1 / math.log2(3)))


async def test_empty_retrieval_scores_zero_never_crashes() -> None:
    s = Sample(question="q", contexts=[], context_ids=[], reference_context_ids=["a"])
    for name in (
        "hit_rate",
        "mrr",
        "precision_at_k",
        "recall_at_k",
        "average_precision",
        "ndcg_at_k",
        "r_precision",
    ):
        sc = await score(name, s)
        assert sc.valid and sc.value == 0.0, name
    # no contexts and no ids at all is an empty retrieval too
    s2 = Sample(question="q", reference_context_ids=["a"])
    assert (await score("recall_at_k", s2)).value == 0.0


async def test_duplicates_count_at_first_occurrence_and_take_no_rank() -> None:
    s = Sample(question="q", context_ids=["x", "x", "a", "a", "b"], reference_context_ids=["a", "b"])
    assert (await score("mrr", s)).value == pytest.approx(1 / 2)
    assert (await score("precision_at_k", s, k=3)).value == pytest.approx(2 / 3)
    assert (await score("recall_at_k", s, k=3)).value == 1.0
    assert measures.dedupe(["x", "x", "a"]) == ["x", "a"]


async def test_k_larger_than_list() -> None:
    s = Sample(question="q", context_ids=["a"], reference_context_ids=["a"])
    assert (await score("precision_at_k", s, k=10)).value == pytest.approx(0.1)  # trec_eval's P_10
    assert (await score("ndcg_at_k", s, k=100)).value == 1.0


async def test_no_relevant_or_no_reference_is_invalid_with_a_reason() -> None:
    s = Sample(
        question="q",
        context_ids=["a"],
        reference_context_ids=["a"],
        metadata={"reference_context_grades": [0]},
    )
    sc = await score("ndcg_at_k", s)
    assert not sc.valid and sc.error.kind == "NoRelevant"
    sc = await score("recall_at_k", Sample(question="q", contexts=["text"]))
    assert not sc.valid and sc.error.kind == "NoJudgements"
    bad = Sample(
        question="q",
        context_ids=["a"],
        reference_context_ids=["a", "b"],
        metadata={"reference_context_grades": [1]},
    )
    sc = await score("mrr", bad)
    assert sc.error.kind == "NoJudgements" and "1 grade(s) for 2" in sc.error.message


async def test_text_match_survives_rechunking() -> None:
    ref = (
        "The Eiffel Tower was completed in 1889 for the World's Fair. "
        "It is 330 metres tall and was the tallest structure in the world until 1930."
    )
    other = "Bananas are rich in potassium and grow in tropical climates."
    half1, half2 = ref.split(". ", 1)
    whole = Sample(question="q", contexts=[other, ref], reference_contexts=[ref])
    pieces = Sample(question="q", contexts=[other, half1, half2], reference_contexts=[ref])
    bigger = Sample(
        question="q",
        contexts=[other, ref + " " + other + " More text about Paris."],
        reference_contexts=[ref],
    )
    for s in (whole, pieces, bigger):
        assert (await score("mrr", s)).value == pytest.approx(0.5)
        assert (await score("recall_at_k", s)).value == 1.0
        assert (await score("precision_at_k", s, k=2)).value == pytest.approx(0.5)
    sc = await score("mrr", pieces)
    assert sc.details["match"] == "text"


def test_text_overlap_english_and_chinese() -> None:
    assert text_overlap("the cat sat", "The cat sat on the mat.") == 1.0
    assert text_overlap("", "abc") == 0.0
    assert text_overlap("北京是中国的首都", "中国的首都是北京。") == 1.0
    assert text_overlap("北京是中国的首都", "上海是一个港口城市") < 0.5


async def test_text_threshold_is_a_parameter() -> None:
    s = Sample(question="q", contexts=["alpha beta gamma delta"], reference_contexts=["alpha beta omega psi"])
    assert (await score("hit_rate", s)).value == 1.0  # 2/4 = 0.5 >= 0.5
    assert (await score("hit_rate", s, overlap_threshold=0.75)).value == 0.0


def test_names_and_params() -> None:
    assert get_metric("ndcg_at_k").name == "ndcg_at_k"
    m = get_metric("ndcg_at_k", k=5)
    assert m.name == "ndcg@5" and m.params()["k"] == 5
    assert metric_from_at_name("recall@20").k == 20
    assert metric_from_at_name("ndcg@3", gain="exponential").gain == "exponential"
    assert metric_from_at_name("faithfulness") is None
    with pytest.raises(ConfigError):
        metric_from_at_name("ndcg@x")
    with pytest.raises(ConfigError):
        get_metric("r_precision", k=3)
    with pytest.raises(ConfigError):
        get_metric("ndcg_at_k", gain="cubic")
    with pytest.raises(ConfigError):
        get_metric("hit_rate", k=0)
    with pytest.raises(ConfigError):
        get_metric("hit_rate", match="fuzzy")


def test_trec_and_beir_readers(tmp_path: Path) -> None:
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d1 1 2.5 sys\nq1 Q0 d2 2 3.0 sys\nq2 Q0 d9 1 1 sys\n")
    assert read_trec_run(run) == {"q1": {"d1": 2.5, "d2": 3.0}, "q2": {"d9": 1.0}}
    trec = tmp_path / "qrels.txt"
    trec.write_text("q1 0 d2 2\nq1 0 d3 1\nq2 0 d8 1\nq3 0 d1 1\n")
    beir = tmp_path / "test.tsv"
    beir.write_text("query-id\tcorpus-id\tscore\nq1\td2\t2\nq1\td3\t1\nq2\td8\t1\nq3\td1\t1\n")
    assert (
        read_qrels(trec) == read_qrels(beir) == {"q1": {"d2": 2, "d3": 1}, "q2": {"d8": 1}, "q3": {"d1": 1}}
    )
    queries = tmp_path / "queries.jsonl"
    queries.write_text('{"_id": "q1", "text": "first"}\n{"_id": "q2", "text": "second"}\n')
    assert read_queries(queries) == {"q1": "first", "q2": "second"}
    ds = retrieval_dataset(run, trec, queries=queries)
    assert [s.id for s in ds] == ["q1", "q2", "q3"]
    assert ds[0].question == "first" and ds[0].context_ids == ("d2", "d1")
    assert ds[2].context_ids == ()  # judged but not retrieved: an empty retrieval
    result = evaluate_retrieval(run, trec, ["mrr", "recall_at_k"], queries=queries, bootstrap_resamples=50)
    assert [s.value for s in result.scores("mrr")] == [1.0, 0.0, 0.0]
    assert result.summary()["recall_at_k"].mean == pytest.approx((0.5 + 0 + 0) / 3)


def test_reader_errors_name_file_and_line(tmp_path: Path) -> None:
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d1 1 2.5 sys\nq1 Q0 d1 1\n")
    with pytest.raises(DatasetError, match=r"run.txt, row 2: a TREC run line has 6 columns"):
        read_trec_run(run)
    run.write_text("q1 Q0 d1 1 high sys\n")
    with pytest.raises(DatasetError, match="row 1, field 'score'"):
        read_trec_run(run)
    run.write_text("q1 Q0 d1 1 1 sys\nq1 Q0 d1 2 0.5 sys\n")
    with pytest.raises(DatasetError, match="appears twice"):
        read_trec_run(run)
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 yes\n")
    with pytest.raises(DatasetError, match="row 2, field 'grade'"):
        read_qrels(qrels)
    with pytest.raises(DatasetError, match="cannot read"):
        read_qrels(tmp_path / "missing.txt")


def test_run_queries_without_judgements_are_listed_not_scored() -> None:
    ds = retrieval_dataset({"q1": ["a"], "q2": ["b"]}, {"q1": {"a": 1}})
    assert [s.id for s in ds] == ["q1"]
    assert len(ds.problems) == 1 and "q2" in str(ds.problems[0])
