"""What the OpenAI-compatible provider puts on the wire: URL, query, headers and body, for a plain
endpoint and for Azure OpenAI (deployment in the path, ``api-version`` query, ``api-key`` header)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from ragmeter.judges.providers.openai_compat import OpenAICompatibleProvider
from ragmeter.judges.types import ChatRequest, Message

REPLY = {
    "model": "served-model",
    "choices": [
        {"index": 0, "message": {"role": "assistant", "content": '{"a": 1}'}, "finish_reason": "stop"}
    ],
    "usage": {"prompt_tokens": 12, "completion_tokens": 3, "prompt_tokens_details": {"cached_tokens": 8}},
}


class Recorder:
    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                recorder.seen.append(
                    {
                        "path": self.path,
                        "headers": {k.lower(): v for k, v in self.headers.items()},
                        "body": json.loads(raw),
                    }
                )
                if self.path.startswith("/old/"):  # a moved endpoint: the client follows the redirect
                    self.send_response(307)
                    self.send_header("Location", self.path.replace("/old/", "/v1/", 1))
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                embedded = {
                    "data": [{"index": 1, "embedding": [0.0, 1.0]}, {"index": 0, "embedding": [1.0, 0.0]}]
                }
                data = json.dumps(
                    embedded if self.path.split("?")[0].endswith("/embeddings") else REPLY
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    r = Recorder()
    yield r
    r.close()


def _request(schema: dict[str, Any] | None = None) -> ChatRequest:
    return ChatRequest(messages=(Message("user", 'Say {"a": 1}'),), json_schema=schema, max_tokens=20, seed=7)


async def test_plain_endpoint_bearer_key_and_top_level_structured_fields(recorder: Recorder) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    provider = OpenAICompatibleProvider(
        "m",
        base_url=f"{recorder.url}/old/",
        api_key="sk-local-123456",
        default_headers={"X-Team": "eval"},
        structured="ollama_format",
        timeout_s=5,
    )
    response = await provider.generate(_request(schema))
    await provider.aclose()
    assert (
        response.text == '{"a": 1}' and response.finish_reason == "stop" and response.model == "served-model"
    )
    assert (response.usage.prompt_tokens, response.usage.completion_tokens, response.usage.cached_tokens) == (
        12,
        3,
        8,
    )
    moved, served = recorder.seen
    assert moved["path"] == "/old/chat/completions" and served["path"] == "/v1/chat/completions"
    headers = served["headers"]
    assert headers["authorization"] == "Bearer sk-local-123456" and "api-key" not in headers
    assert headers["x-team"] == "eval" and headers["content-type"] == "application/json"
    body = served["body"]
    assert body["format"] == schema and "extra_body" not in body and "response_format" not in body
    assert (body["model"], body["max_tokens"], body["seed"]) == ("m", 20, 7)
    assert body["messages"] == [{"role": "user", "content": 'Say {"a": 1}'}]


async def test_azure_deployment_route_api_version_and_api_key_header(recorder: Recorder) -> None:
    provider = OpenAICompatibleProvider(
        "my-deployment",
        base_url=recorder.url,
        api_key="azure-key-123456",
        name="azure",
        api_version="2024-06-01",
    )
    await provider.generate(_request())
    vectors, _ = await provider.embed(["one", "two"])
    await provider.aclose()
    chat, emb = recorder.seen
    assert chat["path"] == "/openai/deployments/my-deployment/chat/completions?api-version=2024-06-01"
    assert emb["path"] == "/openai/deployments/my-deployment/embeddings?api-version=2024-06-01"
    assert chat["headers"]["api-key"] == "azure-key-123456" and "authorization" not in chat["headers"]
    assert vectors.tolist() == [[1.0, 0.0], [0.0, 1.0]]  # in the order of the texts, by index
    assert emb["body"] == {"model": "my-deployment", "input": ["one", "two"], "encoding_format": "float"}
