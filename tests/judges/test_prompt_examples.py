"""A prompt's worked example is its own section (``example`` in the TOML file, ``{example}`` in the
``user`` template). Requests carry the prompt with and without it; the provider sends the one
without it in the structured-output modes in which the server enforces the reply's schema (the
shape needs no showing there, and a small model copies the example instead of answering, issue 9),
and the one with it where nothing enforces the shape (``json_object``, ``none``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.server import FakeOpenAIServer, load_fixture
from ragmeter.errors import ConfigError
from ragmeter.judges import JudgeConfig, LLMJudge, ModelClient, OpenAICompatibleProvider
from ragmeter.judges.prompts import load_prompt
from ragmeter.judges.replies import CopiedExample
from ragmeter.judges.schema_shapes import ENFORCED_MODES
from ragmeter.judges.types import ChatRequest, Message

FAST = JudgeConfig(backoff_base_s=0.01, backoff_max_s=0.05, timeout_s=5.0, max_retries=0)
CHUNKS_REPLY = json.dumps(
    {"verdicts": [{"index": 1, "reason": "", "useful": True}, {"index": 2, "reason": "", "useful": False}]}
)
#: the example reply of the built-in rate_chunks prompt, word for word
COPIED_CHUNKS_REPLY = json.dumps(
    {
        "verdicts": [
            {"index": 1, "reason": "Gives the author and the year the answer states.", "useful": True},
            {"index": 2, "reason": "Film adaptations are not part of the answer.", "useful": False},
        ]
    }
)


def _user(body: dict[str, object]) -> str:
    messages = body["messages"]
    assert isinstance(messages, list)
    return "\n".join(m["content"] for m in messages if m["role"] == "user")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_render_puts_the_example_at_its_placeholder_or_leaves_it_out(lang: str) -> None:
    p = load_prompt("check_contexts", lang)
    values = {"chunks": "C", "question": "Q", "target": "T", "claims": "X"}
    full = p.render(**values)
    short = p.render(with_example=False, **values)
    assert p.example.strip() and p.example in full and "{example}" not in full
    assert p.example not in short and "{example}" not in short
    assert len(full) - len(short) == len(p.example) + 1  # the example and the line break after it
    # the same instructions and the same real input, in the same order
    assert short == full.replace(p.example + "\n", "")
    assert short.startswith(p.user.partition("{example}")[0])
    assert "example" not in p.placeholders  # not a request value


def test_an_override_with_its_own_user_template_has_no_built_in_example(tmp_path: Path) -> None:
    d = tmp_path / "en"
    d.mkdir()
    (d / "generate_questions.toml").write_text(
        'user = """Questions for: {answer} ({n})"""\n', encoding="utf-8"
    )
    p = load_prompt("generate_questions", "en", tmp_path)
    assert p.example == "" and p.render(answer="a", n=2) == "Questions for: a (2)"
    # an override that sets only the example keeps the built-in template around it
    (d / "generate_questions.toml").write_text(
        'example = """Example\\nAnswer: x\\nOutput: {}"""\n', encoding="utf-8"
    )
    p = load_prompt("generate_questions", "en", tmp_path)
    assert p.example == "Example\nAnswer: x\nOutput: {}" and p.example in p.render(answer="a", n=2)


def test_an_example_without_its_placeholder_is_a_config_error(tmp_path: Path) -> None:
    d = tmp_path / "en"
    d.mkdir()
    bad = d / "generate_questions.toml"
    bad.write_text('user = """Questions for: {answer}"""\nexample = """Example"""\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"generate_questions\.toml.*lacks \{example\}"):
        load_prompt("generate_questions", "en", tmp_path)


async def _rate_chunks(server: FakeOpenAIServer, mode: str | None, times: int) -> None:
    """``times`` rate_chunks calls through ``server`` in structured ``mode`` (None: auto)."""
    server.responder = lambda body: CHUNKS_REPLY
    provider = OpenAICompatibleProvider("m", base_url=server.url, structured=mode)
    async with LLMJudge(ModelClient(provider, FAST)) as judge:
        for i in range(times):
            await judge.rate_chunks("q", [f"a{i}", f"b{i}"], "t")


@pytest.mark.parametrize(
    "mode", ["json_schema", "json_object_schema", "guided_json", "ollama_format", "json_object", "none"]
)
async def test_the_example_is_sent_only_where_nothing_enforces_the_shape(
    fake_openai_server: FakeOpenAIServer, mode: str
) -> None:
    await _rate_chunks(fake_openai_server, mode, 1)
    example = load_prompt("rate_chunks").example
    sent = _user(fake_openai_server.requests[0])
    assert (example not in sent) == (mode in ENFORCED_MODES)
    assert "Now the real input." in sent if mode not in ENFORCED_MODES else "Example" not in sent


async def test_auto_leaves_the_example_out_from_the_probe_on(fake_openai_server: FakeOpenAIServer) -> None:
    fake_openai_server.replay = load_fixture("llama_cpp_python_json_schema")  # 500 to json_schema
    await _rate_chunks(fake_openai_server, None, 2)
    assert fake_openai_server.structured_modes == ["json_schema", "json_object_schema", "json_object_schema"]
    assert all("Example" not in _user(b) for b in fake_openai_server.requests)


async def test_the_repair_round_goes_without_the_example_too_and_copies_are_still_caught(
    fake_openai_server: FakeOpenAIServer,
) -> None:
    # the model repeats the example even though it was not sent: still CopiedExample, after one repair
    fake_openai_server.responder = lambda body: COPIED_CHUNKS_REPLY
    provider = OpenAICompatibleProvider("m", base_url=fake_openai_server.url, structured="json_object_schema")
    async with LLMJudge(ModelClient(provider, FAST)) as judge:
        with pytest.raises(CopiedExample):
            await judge.rate_chunks("Who wrote the book?", ["Some passage.", "Another one."], "Someone did.")
    first, repair = fake_openai_server.requests
    assert [m["role"] for m in repair["messages"]] == ["system", "user", "assistant", "user"]
    assert repair["messages"][1] == first["messages"][1]  # the same short prompt, then the repair turn
    example = load_prompt("rate_chunks").example
    assert all(example not in _user(b) for b in (first, repair))
    assert "Example" not in repair["messages"][1]["content"]


def test_the_short_messages_are_part_of_the_cache_key() -> None:
    plain = ChatRequest(messages=(Message("user", "x"),), json_schema={"type": "object"})
    both = ChatRequest(
        messages=(Message("user", "Example ... x"),),
        json_schema={"type": "object"},
        enforced_messages=(Message("user", "x"),),
    )
    assert "enforced_messages" not in plain.cache_fields()  # keys of requests without them are unchanged
    assert both.cache_fields()["enforced_messages"] == [{"role": "user", "content": "x"}]
    assert both.messages_for("json_object_schema") == both.enforced_messages
    assert both.messages_for("json_object") == both.messages
    no_schema = ChatRequest(
        messages=(Message("user", "Example ... x"),), enforced_messages=(Message("user", "x"),)
    )
    assert no_schema.messages_for("json_schema") == no_schema.messages  # nothing is enforced without a schema
