"""Runs for the report tests, made through the public API with an LLM judge that talks to the
loopback fake server (:class:`helpers.server.FakeOpenAIServer`).

The responder is the server's default one, with two changes: a verdict quotes as its evidence
the context sentence that shares most words with the claim (as a real judge is asked to), and a
prompt carrying ``BROKEN_MARK`` gets a reply that is not JSON (so the score is invalid with the
raw reply kept).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import ragmeter
from helpers.server import FakeOpenAIServer, default_responder, detect_step
from ragmeter import JudgeConfig, Result, make_judge

BROKEN_MARK = "@@broken-judge@@"
BROKEN_REPLY = "Sure! Here is my verdict: <b>maybe</b> {not json"

#: strings that would run script if any part of the page treated data as HTML; each one, if it ran,
#: sets window.__pwned or changes the document title
HOSTILE = [
    "<script>window.__pwned = 1; document.title = 'pwned';</script>",
    "</script><script>window.__pwned = 2; document.title = 'pwned';</script>",
    "<img src=x onerror=\"window.__pwned = 3; document.title = 'pwned'\">",
    '<a href="javascript:window.__pwned = 4">click me</a>',
    '<svg onload="window.__pwned = 5"></svg>',
    "\u2028\u2029 --> <!-- <script>window.__pwned = 6</script>",
]

METRICS = ["faithfulness", "answer_relevance", "context_relevance", "context_precision", "token_f1"]


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def _with_evidence(reply: str, prompt: str) -> str:
    data = json.loads(reply)
    contexts = prompt.rsplit("Contexts:", 1)[-1].split("Statements:", 1)[0]  # after the examples
    sentences = [s.strip() for s in re.split(r"(?<=[.!?。！？])\s*|\n", contexts) if s.strip()]
    sentences = [re.sub(r"^\[?\d+\]?[.:]?\s+", "", s) for s in sentences]
    for v in data.get("verdicts", []):
        words = _words(v.get("claim", ""))
        best = max(sentences, key=lambda s: len(words & _words(s)), default="")
        if best and words & _words(best):
            v["evidence"] = best
    return json.dumps(data, ensure_ascii=False)


def report_responder(req: dict[str, Any]) -> str:
    prompt = " ".join(str(m.get("content", "")) for m in req.get("messages") or [])
    if BROKEN_MARK in prompt:
        return BROKEN_REPLY
    reply = default_responder(req)
    if detect_step(req) == "verdicts":
        return _with_evidence(reply, prompt)
    return reply


def report_rows() -> list[dict[str, Any]]:
    """Six samples: plain English (one unsupported claim), Chinese, hostile text everywhere, an
    evasive answer (no claims), a judge reply that is not JSON, and one without a reference."""
    hostile = " ".join(HOSTILE)
    return [
        {
            "id": "paris",
            "question": "What is the capital of France?",
            "contexts": [
                "Paris is the capital and largest city of France. It lies on the Seine.",
                "   ",  # a blank context: metrics skip it, the report still shows it in place
                "Lyon is a city in France known for its food.",
            ],
            "answer": "Paris is the capital of France. I think Paris has nine moons.",
            "reference": "The capital of France is Paris.",
        },
        {
            "id": "长城",
            "question": "长城有多长？",
            "contexts": ["长城全长约两万一千公里。它是世界上最长的城墙。", "故宫位于北京。"],
            "answer": "长城全长约两万一千公里。",
            "reference": "长城全长约两万一千公里。",
        },
        {
            "id": "<b>hostile</b>" + HOSTILE[0],
            "question": "What does the page do with " + HOSTILE[1] + "?",
            "contexts": [
                "The payload is " + hostile + ". It must be shown as text.",
                HOSTILE[2] + " is an image tag. " + HOSTILE[3] + " is a link.",
            ],
            "answer": "The payload is " + hostile + ". It must be shown as text.",
            "reference": HOSTILE[4] + " " + HOSTILE[5],
            "metadata": {"note": HOSTILE[2]},
        },
        {
            "id": "evasive",
            "question": "Who won the 1950 chess olympiad?",
            "contexts": ["The 1950 Chess Olympiad was held in Dubrovnik."],
            "answer": "I don't know.",
            "reference": "Yugoslavia won the 1950 Chess Olympiad.",
        },
        {
            "id": "broken",
            "question": "Why is the sky blue? " + BROKEN_MARK,
            "contexts": ["Rayleigh scattering makes the sky look blue."],
            "answer": "The sky is blue because of Rayleigh scattering.",
            "reference": "Rayleigh scattering.",
        },
        {
            "id": "no-reference",
            "question": "Where is the Eiffel Tower?",
            "contexts": ["The Eiffel Tower is in Paris.", "   "],
            "answer": "The Eiffel Tower is in Paris.",
        },
    ]


def make_report_run(
    out: Path, rows: list[dict[str, Any]] | None = None, run_id: str = "report-test"
) -> Result:
    """Evaluate ``rows`` (default :func:`report_rows`) with the fake LLM judge into the store ``out``."""
    with FakeOpenAIServer(responder=report_responder) as server:
        judge = make_judge(
            "openai-compatible:fake-model",
            base_url=server.url,
            embeddings="openai-compatible:fake-embed",
            config=JudgeConfig(max_retries=0, timeout_s=30),
        )
        return ragmeter.evaluate(
            rows if rows is not None else report_rows(), METRICS, judge, out=out, run_id=run_id
        )
