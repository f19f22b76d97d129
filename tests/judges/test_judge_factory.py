from __future__ import annotations

import asyncio
import gc
from pathlib import Path

import pytest

from helpers.server import FakeOpenAIServer
from ragmeter.errors import ConfigError, JudgeError, JudgeOutputError
from ragmeter.judges import JudgeConfig, LLMJudge, ModelClient, make_judge
from ragmeter.judges.factory import PROVIDERS, ProviderEntry, parse_spec

FAST = JudgeConfig(backoff_base_s=0.01, backoff_max_s=0.05, timeout_s=5.0)


def test_parse_spec() -> None:
    assert parse_spec("openai:gpt-4o-mini") == ("openai", "gpt-4o-mini")
    assert parse_spec("ollama:qwen2.5:7b") == ("ollama", "qwen2.5:7b")
    with pytest.raises(ConfigError, match="PROVIDER:MODEL"):
        parse_spec("gpt-4o-mini")
    with pytest.raises(ConfigError, match="unknown judge provider 'fake'"):
        parse_spec("fake:x")


def test_openai_needs_a_key_and_sends_nothing_at_construction(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        make_judge("openai:gpt-4o-mini", embeddings="none")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    judge = make_judge("openai:gpt-4o-mini", embeddings="none")
    assert isinstance(judge, LLMJudge)
    assert judge.name == "openai:gpt-4o-mini"
    assert judge.client.provider._client is None  # lazy: no client, no connection yet
    d = judge.describe()
    assert d["provider"]["base_url"] == "https://api.openai.com/v1" and "sk-test" not in repr(d)


def test_openai_compatible_and_vllm_need_a_base_url() -> None:
    for spec in ("openai-compatible:m", "vllm:m"):
        with pytest.raises(ConfigError, match="base URL"):
            make_judge(spec)
    with pytest.raises(ConfigError, match="Azure OpenAI endpoint"):
        make_judge("azure:my-deployment")


def test_provider_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    ollama = make_judge("ollama:llama3.1:8b", embeddings="none")
    assert isinstance(ollama, LLMJudge)
    assert ollama.client.provider.base_url == "http://127.0.0.1:11434/v1"
    assert ollama.client.config.structured == "auto"  # Ollama's /v1 takes response_format, not `format`
    vllm = make_judge("vllm:qwen", base_url="http://127.0.0.1:8000/v1", embeddings="none")
    assert isinstance(vllm, LLMJudge) and vllm.client.config.structured == "auto"  # guided_json left vLLM in 0.12
    # an explicit mode wins over the provider's preference
    explicit = make_judge(
        "vllm:qwen", base_url="http://x/v1", embeddings="none", config=JudgeConfig(structured="none")
    )
    assert isinstance(explicit, LLMJudge) and explicit.client.config.structured == "none"
    monkeypatch.setenv("AZ_KEY", "k")
    az = make_judge(
        "azure:dep", base_url="https://r.openai.azure.com", api_key_env="AZ_KEY", embeddings="none"
    )
    assert isinstance(az, LLMJudge)
    assert az.describe()["provider"]["api_version"] and az.name == "azure:dep"


def test_local_judge_and_local_embeddings() -> None:
    pytest.importorskip("ragmeter.local.judge")
    judge = make_judge(None)
    assert judge.name == "local" or "local" in judge.name
    assert make_judge("local").name == judge.name
    with pytest.raises(ConfigError, match="remote judge"):
        make_judge("local", base_url="http://127.0.0.1:1/v1")
    llm = make_judge("openai-compatible:m", base_url="http://127.0.0.1:1/v1")  # embeddings default: local
    assert llm.supports("embed")
    none = make_judge("openai-compatible:m", base_url="http://127.0.0.1:1/v1", embeddings="none")
    assert not none.supports("embed")


def test_provider_table_lazy_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(
        PROVIDERS,
        "lazy",
        ProviderEntry("ragmeter.judges.factory:_openai_compatible", structured="json_object"),
    )
    judge = make_judge("lazy:m", base_url="http://127.0.0.1:1/v1", embeddings="none")
    assert isinstance(judge, LLMJudge) and judge.client.config.structured == "json_object"
    monkeypatch.setitem(PROVIDERS, "broken", ProviderEntry("ragmeter.nope:make"))
    with pytest.raises(ConfigError, match="cannot load judge provider"):
        make_judge("broken:m")


async def test_whole_steps_over_http_then_from_cache(
    fake_openai_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    cache_path = tmp_path / "llm.sqlite"

    async def run_once() -> tuple[list, list, object, object]:
        judge = make_judge(
            "openai-compatible:fake-model",
            base_url=fake_openai_server.url,
            embeddings="openai-compatible:fake-embed",
            config=FAST,
            cache_path=cache_path,
        )
        assert isinstance(judge, LLMJudge)
        async with judge:
            claims = await judge.extract_claims(
                "Paris is the capital of France. Paris has nine moons.", question="Paris?"
            )
            verdicts = await judge.verify_claims(claims, ["Paris is the capital and largest city of France."])
            questions = await judge.generate_questions("Paris is the capital of France.", n=2)
            vectors = await judge.embed(["Paris", "France"])
            usage = judge.client.usage
        return claims, verdicts, (questions, vectors.shape), usage

    claims, verdicts, extra, usage1 = await run_once()
    assert claims == ["Paris is the capital of France.", "Paris has nine moons."]
    assert [v.supported for v in verdicts] == [True, False]
    assert extra[1] == (2, 32)
    n_first = fake_openai_server.total_requests
    assert n_first == 4 and usage1.requests == 3  # 3 chat + 1 embedding request
    again = await run_once()
    assert fake_openai_server.total_requests == n_first  # the re-run costs nothing
    assert again[0] == claims and [v.supported for v in again[1]] == [True, False]
    assert again[3].requests == 0 and again[3].cached_requests == 3


async def test_fault_injection_every_call_ends_scored_or_with_a_cause(
    fake_openai_server: FakeOpenAIServer,
) -> None:
    srv = fake_openai_server
    srv.fail_rate = 0.3
    srv.hang_s = 2.0
    srv.latency_s = 0.01
    cfg = JudgeConfig(concurrency=8, timeout_s=0.3, max_retries=3, backoff_base_s=0.01, backoff_max_s=0.05)
    judge = make_judge("openai-compatible:m", base_url=srv.url, embeddings="none", config=cfg)
    assert isinstance(judge, LLMJudge)
    outcomes: list[str] = []

    async def one(i: int) -> None:
        try:
            claims = await judge.extract_claims(f"Sample {i} is fine. It has {i} parts.")
            assert len(claims) == 2
            outcomes.append("ok")
        except JudgeOutputError as e:
            assert e.raw is not None
            outcomes.append("invalid")
        except JudgeError as e:
            assert str(e)
            outcomes.append("failed")

    async with judge:
        await asyncio.gather(*(one(i) for i in range(60)))
    assert len(outcomes) == 60 and outcomes.count("ok") >= 40
    assert srv.peak_in_flight <= 8
    assert isinstance(judge.client, ModelClient) and judge.client.retries > 0


def test_one_judge_across_event_loops_leaks_nothing(fake_openai_server: FakeOpenAIServer) -> None:
    # sync evaluate() runs each call in its own loop; the judge must work in each and close its
    # connections when each loop ends (an unclosed transport would fail this test: warnings are errors)
    judge = make_judge("openai-compatible:m", base_url=fake_openai_server.url, embeddings="none", config=FAST)
    for _ in range(2):
        assert asyncio.run(judge.extract_claims("A is B.")) == ["A is B."]
    gc.collect()
    assert fake_openai_server.total_requests == 2


async def test_chinese_steps_over_http(fake_openai_server: FakeOpenAIServer) -> None:
    judge = make_judge("openai-compatible:m", base_url=fake_openai_server.url, embeddings="none", config=FAST)
    async with judge:
        claims = await judge.extract_claims(
            "巴黎是法国的首都。巴黎有九个月亮。", question="巴黎？", lang="zh"
        )
        assert claims == ["巴黎是法国的首都。", "巴黎有九个月亮。"]
        verdicts = await judge.verify_claims(claims, ["巴黎是法国的首都和最大城市。"], lang="zh")
        assert [v.supported for v in verdicts] == [True, False]
        q = await judge.generate_questions("我不知道。", n=2, lang="zh")
        assert q.noncommittal is True and len(q.questions) == 2
