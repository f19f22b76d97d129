"""Test-set generation with the scripted LLM judge (en + zh), filters, resume, offline mode."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from helpers.server import default_responder
from ragmeter import ConfigError, load_dataset
from ragmeter.judges.types import ChatRequest
from ragmeter.local.judge import LocalJudge
from ragmeter.pipeline import run_pipeline
from ragmeter.run.api import evaluate
from ragmeter.testset import estimate_generation, generate_testset
from ragmeter.testset.generate import agenerate_testset
from ragmeter.testset.writer import state_path

from .conftest import DOCS, make_judge, request_dict

TEXT_DOCS = [
    DOCS / "en" / "eiffel_tower.md",
    DOCS / "en" / "photosynthesis.txt",
    DOCS / "en" / "python_gil.html",
    DOCS / "zh",
]


async def test_llm_generation_en_zh_with_provenance_and_filters(tmp_path: Path) -> None:
    judge, provider = make_judge()
    out = tmp_path / "testset.jsonl"
    result = await agenerate_testset(
        TEXT_DOCS,
        n=14,
        judge=judge,
        out=out,
        kinds="single_hop,multi_hop,reasoning,user_style",
        chunk_size=300,
        overlap=60,
    )
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 14 == result.stats.n_rows
    kinds = {r["metadata"]["kind"] for r in rows}
    assert kinds == {"single_hop", "multi_hop", "reasoning", "user_style"}
    # every reference answer is supported: the scripted hallucination was dropped by verify_claims
    assert result.stats.dropped.get("unsupported", 0) >= 1
    assert not any("Martian" in r["reference"] or "火星" in r["reference"] for r in rows)
    for r in rows:
        meta = r["metadata"]
        assert meta["generator"] == "llm:fake:scripted" and meta["task"].startswith(meta["kind"])
        assert r["reference_context_ids"] and len(r["reference_contexts"]) == len(r["reference_context_ids"])
        if meta["kind"] == "multi_hop":
            assert len(r["reference_contexts"]) == 2 and len(set(r["reference_context_ids"])) == 2
        else:
            assert r["reference"] in r["reference_contexts"][0]  # the answer comes from its chunk
            assert meta["chunk_id"] == r["reference_context_ids"][0]
        if meta["kind"] == "user_style":
            assert meta["style"] in ("short", "misspelled", "conversational")
        # the language follows the document
        is_zh = any("\u4e00" <= ch <= "\u9fff" for ch in r["reference_contexts"][0][:20])
        if is_zh and meta["kind"] != "multi_hop":
            assert meta["lang"] == "zh" and any("\u4e00" <= ch <= "\u9fff" for ch in r["question"])
    # prompts: Chinese chunks got the Chinese prompt
    versions = {r.prompt_version for r in provider.requests}
    assert any(v.startswith("testset_questions/zh@") for v in versions)
    assert any(v.startswith("testset_questions/en@") for v in versions)
    assert any(v.startswith("testset_multi_hop/") for v in versions)
    # the output is a dataset `evaluate` reads unchanged
    ds = load_dataset(out)
    assert len(ds) == 14 and ds.n_skipped == 0
    assert ds[0].reference_context_ids and ds[0].metadata["generator"] == "llm:fake:scripted"


def test_generated_set_scores_a_pipeline_end_to_end(tmp_path: Path) -> None:
    judge, _ = make_judge()
    out = tmp_path / "t.jsonl"
    generate_testset(DOCS / "en", n=6, judge=judge, out=out, chunk_size=300)
    chunks = {}
    for line in out.read_text().splitlines():
        r = json.loads(line)
        chunks[r["reference_context_ids"][0]] = r["reference_contexts"][0]

    def perfect_retriever(question: str) -> dict[str, Any]:
        row = next(
            json.loads(x) for x in out.read_text().splitlines() if json.loads(x)["question"] == question
        )
        cid = row["reference_context_ids"][0]
        return {"answer": row["reference"], "contexts": [{"text": chunks[cid], "id": cid}]}

    answered = run_pipeline(perfect_retriever, out)
    result = evaluate(answered, ["hit_rate", "mrr", "token_f1"], judge=judge, progress=False)
    summary = result.summary()
    assert summary["hit_rate"].mean == 1.0 and summary["mrr"].mean == 1.0 and summary["token_f1"].mean == 1.0


async def test_near_duplicates_are_dropped(tmp_path: Path) -> None:
    judge, _ = make_judge(
        lambda req: (
            json.dumps({"items": [{"question": "What is the tower?", "answer": "A tower."}]})
            if req.step.startswith("testset")
            else default_responder(request_dict(req))
        )
    )
    result = await agenerate_testset(TEXT_DOCS[:1], n=5, judge=judge, chunk_size=300, verify=False)
    assert result.stats.n_rows == 1
    assert result.stats.dropped["near_duplicate"] >= 1


async def test_answerable_without_context_filter(tmp_path: Path) -> None:
    answers: dict[str, str] = {}

    def reply(req: ChatRequest) -> str:
        body = request_dict(req)
        text = default_responder(body)
        if req.step in ("testset_questions", "testset_multi_hop"):
            for item in json.loads(text)["items"]:
                answers[item["question"]] = item["answer"]
        if req.step == "testset_closed_book":
            q = req.messages[-1].content.rsplit("Question:", 1)[-1].split("\nOutput:")[0].strip()
            known = "Eiffel" in q
            return json.dumps({"answer": answers.get(q, "") if known else "", "known": known})
        return text

    judge, provider = make_judge(reply)
    docs = [DOCS / "en" / "eiffel_tower.md", DOCS / "en" / "photosynthesis.txt"]
    result = await agenerate_testset(
        docs,
        n=10,
        judge=judge,
        chunk_size=2000,
        num_questions_per_chunk=3,
        drop_answerable_without_context=True,
    )
    assert result.stats.dropped.get("answerable_without_context", 0) >= 1
    assert all("Eiffel" not in s.question for s in result.dataset)
    assert any(r.step == "testset_closed_book" for r in provider.requests)


async def test_resume_skips_done_tasks_and_keeps_rows(tmp_path: Path) -> None:
    out = tmp_path / "t.jsonl"
    judge, first = make_judge()
    await agenerate_testset(TEXT_DOCS, n=3, judge=judge, out=out, chunk_size=300)
    before = out.read_text()
    done = [json.loads(x)["task"] for x in state_path(out).read_text().splitlines()]
    assert len(before.splitlines()) == 3
    with pytest.raises(ConfigError, match="exists"):
        await agenerate_testset(TEXT_DOCS, n=6, judge=judge, out=out, chunk_size=300)
    judge2, second = make_judge()
    result = await agenerate_testset(TEXT_DOCS, n=6, judge=judge2, out=out, chunk_size=300, resume=True)
    assert out.read_text().startswith(before)
    assert result.stats.n_rows == 6 and result.stats.n_rows_resumed == 3
    assert result.stats.n_tasks_skipped == len(done)
    contexts_asked = [r.messages[-1].content for r in second.requests if r.step == "testset_questions"]
    first_contexts = [r.messages[-1].content for r in first.requests if r.step == "testset_questions"]
    assert not set(contexts_asked) & set(first_contexts)  # no task ran twice
    ids = [json.loads(x)["id"] for x in out.read_text().splitlines()]
    assert len(ids) == len(set(ids))


async def test_judge_failures_lose_the_task_only() -> None:
    calls = {"n": 0}

    def reply(req: ChatRequest) -> str:
        if req.step == "testset_questions":
            calls["n"] += 1
            if calls["n"] == 1:
                return "this is not json at all"
        return default_responder(request_dict(req))

    judge, _ = make_judge(reply)
    result = await agenerate_testset(TEXT_DOCS[:2], n=3, judge=judge, chunk_size=300)
    assert result.stats.n_rows == 3
    assert len(result.stats.failed_tasks) == 1 and "JudgeOutputError" in result.stats.failed_tasks[0]


async def test_lang_option_overrides_the_document_language() -> None:
    judge, provider = make_judge()
    await agenerate_testset([DOCS / "zh" / "changcheng.md"], n=1, judge=judge, lang="en")
    gen = [r for r in provider.requests if r.step == "testset_questions"]
    assert gen and gen[0].prompt_version.startswith("testset_questions/en@")
    assert "Write the questions and answers in English." in gen[0].messages[-1].content


def test_offline_cloze_en_and_zh(tmp_path: Path) -> None:
    out = tmp_path / "cloze.jsonl"
    result = generate_testset(TEXT_DOCS, n=10, offline=True, out=out)
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(rows) == 10 and result.generator == "offline-cloze"
    langs = {r["metadata"]["lang"] for r in rows}
    assert langs == {"en", "zh"}
    for r in rows:
        assert r["metadata"]["generator"] == "offline-cloze" and r["metadata"]["kind"] == "cloze"
        assert "_____" in r["question"]
        # the blanked span is the reference, and filling it in gives back the chunk's sentence
        assert r["metadata"]["sentence"] in r["reference_contexts"][0]
        filled = r["question"].split(": ", 1)[-1].split("：", 1)[-1].replace("_____", r["reference"])
        assert filled == r["metadata"]["sentence"]
    assert len(load_dataset(out)) == 10


def test_without_an_llm_judge_the_offline_mode_is_offered() -> None:
    with pytest.raises(ConfigError, match=r"needs an LLM judge.*offline"):
        generate_testset(DOCS, n=2)
    with pytest.raises(ConfigError, match=r"'local' cannot write text.*offline=True"):
        generate_testset(DOCS, n=2, judge=LocalJudge(embedder=object()))  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="unknown question kind"):
        judge, _ = make_judge()
        generate_testset(DOCS, n=2, judge=judge, kinds="trick")


def test_estimate_counts_before_any_call() -> None:
    judge, provider = make_judge()
    est = estimate_generation(TEXT_DOCS, n=8, judge=judge, kinds="single_hop,multi_hop", chunk_size=300)
    assert est.n_documents == 6 and est.n_chunks >= 6
    assert est.n_tasks_planned == 10 and est.calls == 20  # ceil(8 * 1.25) tasks, generate + verify each
    assert est.prompt_tokens > 0 and est.cost is None
    assert provider.requests == []
    assert "judge calls: ~20" in est.render()
