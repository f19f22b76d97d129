"""An OpenAI-compatible HTTP server on 127.0.0.1 for tests and benchmarks.

``FakeOpenAIServer`` serves ``/v1/chat/completions`` and ``/v1/embeddings`` from a thread pool
(one thread per connection; 64+ concurrent slow requests are fine). Switches:

- ``responder(request_json) -> str``: the assistant content. The default answers ragmeter's steps
  (claims, verdicts, questions, and rate_sentences, rate_chunks, analyse_contexts,
  extract_claims_many, grade, compare) sensibly by reading the prompt, so whole runs work.
- ``latency_s``: sleep before each reply. A request with ``n`` gets ``n`` choices (the same content).
- ``fail_rate`` with a seeded RNG choosing among ``failure_kinds``: ``"429"`` (with Retry-After),
  ``"500"``, ``"malformed"`` (a broken JSON body), ``"timeout"`` (sleep ``hang_s``, longer than the
  client's timeout), ``"invalid_content"`` (assistant content that is not JSON). ``force(...)``
  queues failures for the next requests, in order (also ``"400"``).
- ``reject_structured``: structured-output modes answered with 400 (``reject_json_schema=True``
  rejects ``response_format`` json_schema), to exercise the auto fallback.
- ``prefix_cache``: report ``usage.prompt_tokens_details.cached_tokens`` as a server with prefix
  caching would (vLLM, OpenAI): the longest prefix the prompt (messages' roles and contents, in
  order) shares with an earlier request, in whole blocks of ``prefix_block`` tokens.
- ``replay``: a recorded server reply (``load_fixture(name)``, from ``tests/fixtures/servers``):
  chat requests that use one of the fixture's ``when`` modes (or all, for ``"any"``) get its
  status, content type and body, byte for byte, so the client meets the real servers' quirks.
- Counters: ``total_requests``, ``by_status``, ``by_kind``, ``peak_in_flight``, ``in_flight_s`` (the
  time integral of the number in flight: over the busy window it gives the mean number in flight),
  ``first_request_at`` / ``last_reply_at`` (``time.time()`` of the first request counted and of the
  last one to leave; None before), ``requests`` (bodies), ``timeline`` (``(arrived, left, kind,
  index in requests)`` of each request that left; at ``GET /v1/stats`` with the request's step
  from :func:`detect_step` instead of the index: bench/runner_overhead.py's analyses),
  and at ``GET /v1/stats`` also ``process_cpu_s`` (the CPU time of the server's whole process),
  ``authorizations`` (the Authorization header of each request),
  ``structured_modes`` (the mode each chat request used). A request whose client hangs up while it
  waits (latency or an injected timeout) stops counting as in flight at once and is counted as
  status 499, so ``peak_in_flight`` is the number of requests clients were really waiting on.
"""

from __future__ import annotations

import base64
import json
import random
import re
import select
import socket
import struct
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from ragmeter.judges.prompts import DATA_TAG_RE
from ragmeter.judges.providers.fake import hash_embedding

Responder = Callable[[dict[str, Any]], str]
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "servers"


def load_fixture(name: str) -> dict[str, Any]:
    """A recorded server reply: ``{server, source, when, status, body[, content_type]}``."""
    fixture: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    return fixture


def fixture_names() -> list[str]:
    return sorted(p.stem for p in FIXTURES.glob("*.json"))
FAILURE_KINDS = ("429", "500", "malformed", "timeout", "invalid_content")

_TOKEN_RE = re.compile(r"[^\W_]+", re.UNICODE)
_CJK_RE = re.compile(r"[\u3400-\u9fff]")


# ------------------------------------------------------------------------------ default responder


def _words(text: str) -> set[str]:
    out: set[str] = set()
    for w in _TOKEN_RE.findall(text.lower()):
        if _CJK_RE.search(w):
            out.update(ch for ch in w)
        elif len(w) > 2:
            out.add(w)
    return out


def _section(text: str, starts: Iterable[str], ends: Iterable[str]) -> str:
    """The text after the LAST start marker, up to the first end marker after it."""
    best = -1
    best_len = 0
    for s in starts:
        i = text.rfind(s)
        if i > best:
            best, best_len = i, len(s)
    if best < 0:
        return ""
    rest = text[best + best_len :]
    cut = len(rest)
    for e in ends:
        j = rest.find(e)
        if 0 <= j < cut:
            cut = j
    return rest[:cut].strip()


def _sentences(text: str) -> list[str]:
    parts = re.split(r"(?<=[.!?。！？])\s*", text.strip())
    return [p.strip() for p in parts if p.strip()]


def detect_step(req: dict[str, Any]) -> str:
    """``claims``, ``verdicts``, ``questions`` or ``""`` from the schema, else from the prompt."""
    rf = req.get("response_format") or {}
    schema: Any = None
    if isinstance(rf, dict):
        js = rf.get("json_schema")
        if isinstance(js, dict):
            name = str(js.get("name", ""))
            if name in _NEW_STEPS:
                return _NEW_STEPS[name]
            for step, key in (("extract_claims", "claims"), ("verify_claims", "verdicts")):
                if name == step:
                    return key
            if name == "generate_questions":
                return "questions"
            schema = js.get("schema")
        schema = schema or rf.get("schema")
    schema = schema or req.get("guided_json") or req.get("format")
    if isinstance(schema, dict):
        props = schema.get("properties") or {}
        new_step = _step_from_props(props)
        if new_step:
            return new_step
        for key in ("verdicts", "questions", "claims"):
            if key in props:
                return key
    text = _main_prompt(req)
    if "Statements:" in text or "陈述：" in text:
        return "verdicts"
    if "Number of questions:" in text or "问题数量：" in text:
        return "questions"
    if "Answer:" in text or "回答：" in text:
        return "claims"
    return ""


#: issue 3 steps: schema name -> responder key
_NEW_STEPS = {
    "rate_sentences": "needed",
    "rate_chunks": "chunk_verdicts",
    "analyse_contexts": "analysis",
    "extract_claims_many": "claims_many",
    "check_contexts": "check",
    "grade": "grade",
    "compare": "compare",
    "check_goal": "goal",
    "check_tool_selection": "tool_choice",
    "check_topics": "topics",
}


def _step_from_props(props: dict[str, Any]) -> str:
    if "achieved" in props:
        return "goal"
    if "topics" in props:
        return "topics"
    if "right_tool" in (((props.get("verdicts") or {}).get("items") or {}).get("properties") or {}):
        return "tool_choice"
    if "passages" in props:
        return "check"
    if "needed" in props:
        return "analysis" if "verdicts" in props else "needed"
    if "texts" in props:
        return "claims_many"
    if "winner" in props:
        return "compare"
    if "score" in props:
        return "grade"
    items = (props.get("verdicts") or {}).get("items") or {}
    if "useful" in (items.get("properties") or {}):
        return "chunk_verdicts"
    return ""


def _overlap(words: set[str], other: set[str]) -> float:
    return len(words & other) / len(words) if words else 0.0


def _line_value(text: str, markers: Iterable[str]) -> str:
    """The rest of the LAST line starting with one of ``markers``."""
    found = ""
    for line in text.splitlines():
        for m in markers:
            if line.startswith(m):
                found = line[len(m) :].strip()
    return found


def _numbered(block: str, pattern: str) -> list[tuple[int, str]]:
    out = []
    for line in block.splitlines():
        m = re.match(pattern, line)
        if m:
            out.append((int(m.group(1)), m.group(2).strip()))
    return out


_NUM_RE = re.compile(r"\d+(?:\.\d+)?")


def _respond_agent(step: str, text: str) -> str:
    """Toy answers for the agent steps, read from the trajectory's lines ("User:", "Call [k]:",
    "Result [k]:", "Assistant:"; en and zh labels): a goal is achieved when the last reply's
    numbers are all in the results and no result is an error; a call is the right tool when a word
    of the tool's name is in the user's messages; a user message is a topic, allowed when it shares
    a word with the allowed topics, answered unless the next reply declines."""
    block = _section(text, ("Trajectory:", "轨迹："), ("\nOutput:", "\n输出："))
    lines = [line.strip() for line in block.splitlines() if line.strip()]
    user = [re.split(r"[:：]", line, maxsplit=1)[1] for line in lines if line.startswith(("User", "用户"))]
    results = [line for line in lines if line.startswith(("Result", "结果"))]
    replies = [line for line in lines if line.startswith(("Assistant", "助手"))]
    if step == "goal":
        last = replies[-1] if replies else ""
        have = {n for r in results for n in _NUM_RE.findall(r)} | {n for u in user for n in _NUM_RE.findall(u)}
        made_up = [n for n in _NUM_RE.findall(last) if n not in have]
        failed = any(re.search(r"error|错误", r, re.I) for r in results)
        achieved = bool(last) and not made_up and not failed
        return json.dumps(
            {"goal": " ".join(user)[:80], "end_state": last[:80], "reason": "toy rule", "achieved": achieved},
            ensure_ascii=False,
        )
    if step == "tool_choice":
        asked = " ".join(user).lower()
        verdicts = []
        for line in lines:
            m = re.match(r"(?:Call|调用) \[(\d+)\][:：]\s*([\w.-]+)\(", line)
            if m:
                right = any(w in asked for w in m.group(2).lower().split("_") if len(w) > 2)
                verdicts.append({"index": int(m.group(1)), "reason": "toy rule", "right_tool": right})
        return json.dumps({"verdicts": verdicts})
    allowed = _words(_section(text, ("Allowed topics:", "允许的话题："), ("\nTrajectory:", "\n轨迹：")))
    topics = []
    for i, line in enumerate(lines):
        if line.startswith(("User", "用户")):
            said = re.split(r"[:：]", line, maxsplit=1)[1].strip()
            nxt = next((r for r in lines[i + 1 :] if r.startswith(("Assistant", "助手"))), "")
            declined = bool(re.search(r"can't|cannot|only help|无法|只能", nxt, re.I))
            on = _overlap(_words(said), allowed) > 0
            topics.append({"topic": said[:60], "reason": "toy rule", "allowed": on, "answered": not declined})
    return json.dumps({"topics": topics}, ensure_ascii=False)


def _respond_new(step: str, text: str) -> str:
    """Answers for rate_sentences, rate_chunks, analyse_contexts, extract_claims_many, grade, compare,
    and the agent steps."""
    if step in ("goal", "tool_choice", "topics"):
        return _respond_agent(step, text)
    question = _line_value(text, ("Question:", "问题："))
    q_words = _words(question)
    if step == "needed":
        block = _section(text, ("Sentences:", "句子："), ("\nOutput:", "\n输出："))
        needed = [
            i for i, s in _numbered(block, r"\s*\[(\d+)\]\s+(.*)") if _overlap(q_words, _words(s)) >= 0.25
        ]
        return json.dumps({"needed": needed})
    if step in ("chunk_verdicts", "analysis"):
        target = _words(_line_value(text, ("Target answer:", "目标答案：")))
        block = _section(text, ("Passages:", "段落：\n"), ("\nOutput:", "\n输出："))
        verdicts, needed = [], []
        if step == "chunk_verdicts":
            chunks = _numbered(block, r"\s*\[(\d+)\]\s+(.*)")
        else:
            chunks, current = [], 0
            for line in block.splitlines():
                m = re.match(r"\s*(?:Passage|段落)\s*(\d+)", line)
                if m:
                    current = int(m.group(1))
                    chunks.append((current, ""))
                    continue
                m = re.match(r"\s*\((\d+)\)\s+(.*)", line)
                if m and chunks:
                    chunks[-1] = (current, (chunks[-1][1] + " " + m.group(2)).strip())
                    if _overlap(q_words, _words(m.group(2))) >= 0.25:
                        needed.append(int(m.group(1)))
        for i, chunk in chunks:
            useful = _overlap(target, _words(chunk)) >= 0.3
            verdicts.append({"index": i, "reason": "shares words with the target", "useful": useful})
        if step == "chunk_verdicts":
            return json.dumps({"verdicts": verdicts})
        return json.dumps({"verdicts": verdicts, "needed": needed})
    if step == "check":
        return _respond_check(text, q_words)
    if step == "claims_many":
        block = _section(text, ("Question:", "问题："), ("\nOutput:", "\n输出："))
        texts = [{"index": i, "claims": _sentences(t)} for i, t in _numbered(block, r"\s*\[(\d+)\]\s+(.*)")]
        evasive = re.compile(r"don't know|not sure|cannot answer|不知道|不确定|无法回答", re.I)
        for t in texts:
            if any(evasive.search(c) for c in t["claims"]):
                t["claims"] = []
        return json.dumps({"texts": texts}, ensure_ascii=False)
    if step == "grade":
        nums = re.findall(r"from (-?[\d.]+) to (-?[\d.]+)|(-?[\d.]+) 到 (-?[\d.]+) 之间", text)
        low, high = 1.0, 5.0
        if nums:
            a, b, c, d = nums[-1]
            low, high = float(a or c), float(b or d)
        inputs = text.rsplit("Inputs:", 1)[-1] if "Inputs:" in text else text.rsplit("输入：", 1)[-1]
        answer = _words(_line_value(inputs, ("Answer:", "回答：")))
        ref = _words(_line_value(inputs, ("Reference:", "参考答案：")))
        share = _overlap(ref, answer) if ref else (1.0 if answer else 0.0)
        score = round(low + (high - low) * share)
        return json.dumps(
            {"reason": f"{share:.0%} of the reference's words are in the answer", "score": score}
        )
    if step == "compare":
        a = _words(_line_value(text, ("Answer A:", "回答 A：")))
        b = _words(_line_value(text, ("Answer B:", "回答 B：")))
        sa, sb = _overlap(q_words, a), _overlap(q_words, b)
        winner = "A" if sa > sb else "B" if sb > sa else "tie"
        return json.dumps({"reason": "more of the question's words", "winner": winner})
    return "OK"




def _main_prompt(req: dict[str, Any]) -> str:
    """The first user message, without ragmeter's data tags (the responder reads the data)."""
    for m in req.get("messages") or []:
        if m.get("role") == "user":
            content = m.get("content", "")
            if isinstance(content, list):  # content parts: the text ones (images follow the text)
                content = "".join(p.get("text", "") for p in content if p.get("type") == "text")
            return DATA_TAG_RE.sub("", str(content))
    return ""


def _respond_check(text: str, q_words: set[str]) -> str:
    """check_contexts: the verify_claims, rate_chunks and rate_sentences answers in one reply."""
    none = ("(none)", "（无）")
    question = _line_value(text, ("Question:", "问题："))
    target_line = _line_value(text, ("Target answer:", "目标答案："))
    target = _words(target_line) if target_line not in none else set()
    block = _section(text, ("Passages:\n", "段落：\n"), ("\nQuestion:", "\n问题："))
    chunks: list[list[tuple[int, str]]] = []
    for line in block.splitlines():
        if re.match(r"\s*(?:Passage|段落)\s*\d+", line):
            chunks.append([])
            continue
        m = re.match(r"\s*\((\d+)\)\s+(.*)", line)
        if m and chunks:
            chunks[-1].append((int(m.group(1)), m.group(2)))
    sentences = [x for c in chunks for x in c]
    ctx_words = set().union(*(_words(t) for _, t in sentences)) if sentences else set()
    claims_block = _section(text, ("Claims:\n", "陈述：\n"), ("\nOutput:", "\n输出："))
    verdicts = []
    for i, claim in _numbered(claims_block, r"\s*(\d+)\.\s+(.*)"):
        words = _words(claim)
        overlap = _overlap(words, ctx_words)
        best = max(sentences, key=lambda st: _overlap(words, _words(st[1])), default=(0, ""))
        supported = overlap >= 0.6
        verdicts.append(
            {
                "index": i,
                "reason": f"{overlap:.0%} of the statement's words appear in the contexts",
                "evidence": best[0] if supported else 0,
                "supported": supported,
            }
        )
    passages = []
    if target:
        for i, c in enumerate(chunks, 1):
            chunk_words = _words(" ".join(t for _, t in c))
            passages.append({"index": i, "useful": _overlap(target, chunk_words) >= 0.3})
    needed = []
    if question not in none:
        needed = [k for k, t in sentences if _overlap(q_words, _words(t)) >= 0.25]
    return json.dumps({"verdicts": verdicts, "passages": passages, "needed": needed}, ensure_ascii=False)


def default_responder(req: dict[str, Any]) -> str:
    """Answers the three ragmeter steps by reading the (first) user prompt."""
    from helpers.testset_replies import testset_reply  # the test-set generation prompts

    if (reply := testset_reply(req)) is not None:
        return reply
    step = detect_step(req)
    text = _main_prompt(req)
    if step in _NEW_STEPS.values():
        return _respond_new(step, text)
    if step == "claims":
        answer = _section(text, ("Answer:", "回答："), ("\nOutput:", "\n输出："))
        return json.dumps({"claims": _sentences(answer)}, ensure_ascii=False)
    if step == "verdicts":
        contexts = _section(text, ("Contexts:", "上下文："), ("\nStatements:", "\n陈述："))
        claims_block = _section(text, ("Statements:", "陈述："), ("\nOutput:", "\n输出："))
        ctx_words = _words(contexts)
        verdicts = []
        for line in claims_block.splitlines():
            m = re.match(r"\s*(\d+)\.\s+(.*)", line)
            if not m:
                continue
            claim = m.group(2).strip()
            words = _words(claim)
            overlap = len(words & ctx_words) / len(words) if words else 0.0
            supported = overlap >= 0.6
            verdicts.append(
                {
                    "index": int(m.group(1)),
                    "claim": claim,
                    "evidence": "",
                    "reason": f"{overlap:.0%} of the statement's words appear in the contexts",
                    "supported": supported,
                }
            )
        return json.dumps({"verdicts": verdicts}, ensure_ascii=False)
    if step == "questions":
        answer = _section(text, ("Answer:", "回答："), ("\nNumber of questions:", "\n问题数量："))
        nums = re.findall(r"(?:Number of questions:|问题数量：)\s*(\d+)", text)
        n = int(nums[-1]) if nums else 3
        evasive = bool(re.search(r"don't know|not sure|cannot answer|不知道|不确定|无法回答", answer, re.I))
        first = (_sentences(answer) or [answer])[0].rstrip(".!?。！？")
        questions = [
            f"What can you tell me about this: {first}?" if i == 0 else f"{first}? ({i + 1})"
            for i in range(n)
        ]
        return json.dumps({"questions": questions, "noncommittal": int(evasive)}, ensure_ascii=False)
    return "OK"


def structured_mode_of(req: dict[str, Any]) -> str:
    rf = req.get("response_format")
    if isinstance(rf, dict):
        if rf.get("type") == "json_schema":
            return "json_schema"
        if rf.get("type") == "json_object":
            return "json_object_schema" if "schema" in rf else "json_object"
    if "guided_json" in req:
        return "guided_json"
    if "format" in req:
        return "ollama_format"
    return "none"


# ------------------------------------------------------------------------------ the server


class FakeOpenAIServer:
    def __init__(
        self,
        *,
        responder: Responder | None = None,
        latency_s: float = 0.0,
        fail_rate: float = 0.0,
        failure_kinds: Iterable[str] = FAILURE_KINDS,
        seed: int = 0,
        retry_after: str | None = "0.05",
        hang_s: float = 5.0,
        reject_json_schema: bool = False,
        reject_structured: Iterable[str] = (),
        include_usage: bool = True,
        model: str = "fake-model",
        prefix_cache: bool = False,
        prefix_block: int = 16,
        replay: dict[str, Any] | None = None,
    ) -> None:
        self.responder: Responder = responder or default_responder
        self.latency_s = latency_s
        self.fail_rate = fail_rate
        self.failure_kinds = tuple(failure_kinds)
        unknown = set(self.failure_kinds) - set(FAILURE_KINDS)
        if unknown:
            raise ValueError(f"unknown failure kinds {sorted(unknown)}")
        self.retry_after = retry_after
        self.hang_s = hang_s
        self.reject_structured = set(reject_structured) | ({"json_schema"} if reject_json_schema else set())
        self.include_usage = include_usage
        self.model = model
        self.prefix_cache = prefix_cache
        self.prefix_block = max(1, int(prefix_block))
        self._prompts_seen: list[str] = []
        self.replay = replay
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._forced: list[str] = []
        self._stop = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.reset_counters()

    # -- control ----------------------------------------------------------------------------------

    def reset_counters(self) -> None:
        with getattr(self, "_lock", threading.Lock()):
            self.total_requests = 0
            self.in_flight = 0
            self.peak_in_flight = 0
            self.in_flight_s = 0.0
            self._counted_at = time.monotonic()
            self.first_request_at: float | None = None
            self.last_reply_at: float | None = None
            self._entered_at: dict[int, tuple[float, int]] = {}
            # (arrived, left, kind, index in ``requests``) of each request that left
            self.timeline: list[tuple[float, float, str, int]] = []
            self._pending: dict[int, socket.socket | None] = {}
            self._next_token = 0
            self.by_status: Counter[int] = Counter()
            self.by_kind: Counter[str] = Counter()
            self.requests: list[dict[str, Any]] = []
            self.structured_modes: list[str] = []
            self.authorizations: list[str] = []  # the Authorization header of each POST

    def force(self, *kinds: str) -> None:
        """Fail the next requests with these kinds, in order (``"429"``, ``"500"``, ``"400"``,
        ``"malformed"``, ``"timeout"``, ``"invalid_content"``)."""
        for k in kinds:
            if k not in (*FAILURE_KINDS, "400"):
                raise ValueError(f"unknown failure kind {k!r}")
        with self._lock:
            self._forced.extend(kinds)

    @property
    def url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("server not started")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def start(self) -> FakeOpenAIServer:
        if self._httpd is not None:
            return self
        handler = _make_handler(self)
        httpd = _QuietServer(("127.0.0.1", 0), handler, bind_and_activate=False)
        httpd.daemon_threads = True
        httpd.block_on_close = False
        httpd.request_queue_size = 512
        httpd.allow_reuse_address = True
        httpd.server_bind()
        httpd.server_activate()
        self._httpd = httpd
        self._stop.clear()
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        httpd, self._httpd = self._httpd, None
        if httpd is not None:
            httpd.shutdown()
            httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- request handling (called from handler threads) ----------------------------------------------

    def _choose_failure(self) -> str | None:
        with self._lock:
            if self._forced:
                return self._forced.pop(0)
            if self.fail_rate > 0 and self.failure_kinds and self._rng.random() < self.fail_rate:
                return self._rng.choice(self.failure_kinds)
        return None

    def _enter(self, body: dict[str, Any], sock: socket.socket | None = None) -> int:
        """Count a request in flight; returns its token for :meth:`_leave`.

        Before counting, requests whose client already hung up are reaped, so a client that
        times out, closes its connection and only then sends its next request is never seen with
        one request too many in flight because a handler thread has not yet noticed the EOF."""
        with self._lock:
            self._count_time()
            for token, pending in list(self._pending.items()):
                if _client_gone(pending):
                    del self._pending[token]
                    self.in_flight -= 1
            if self.first_request_at is None:
                self.first_request_at = time.time()
            self._next_token += 1
            token = self._next_token
            self._pending[token] = sock
            self._entered_at[token] = (time.time(), len(self.requests))
            self.total_requests += 1
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
            self.requests.append(body)
            return token

    def _leave(self, token: int, status: int, kind: str) -> None:
        with self._lock:
            self._count_time()
            if self._pending.pop(token, _REAPED) is not _REAPED:
                self.in_flight -= 1
            self.last_reply_at = time.time()
            entered_at, i = self._entered_at.pop(token, (self.last_reply_at, -1))
            self.timeline.append((entered_at, self.last_reply_at, kind, i))
            self.by_status[status] += 1
            self.by_kind[kind] += 1

    def _count_time(self) -> None:
        """Add the time since the last change times the number in flight (under the lock)."""
        now = time.monotonic()
        self.in_flight_s += self.in_flight * (now - self._counted_at)
        self._counted_at = now

    def _sleep(self, seconds: float, gone: Callable[[float], bool] | None = None) -> bool:
        """Sleep ``seconds`` (woken by stop()); True when the client hung up meanwhile."""
        if seconds <= 0:
            return False
        if gone is not None:
            return gone(seconds)
        self._stop.wait(seconds)
        return False

    def handle(
        self, path: str, body: dict[str, Any], gone: Callable[[float], bool] | None = None
    ) -> tuple[tuple[int, dict[str, str], bytes], str]:
        """((status, headers, body bytes), kind) for one request. ``gone(seconds)`` waits and says
        whether the client disconnected (then the request stops counting as in flight at once)."""
        if self._sleep(self.latency_s, gone):
            return (499, {}, b""), "abandoned"
        is_chat = path.endswith("/chat/completions")
        if is_chat:
            mode = structured_mode_of(body)
            with self._lock:
                self.structured_modes.append(mode)
            if mode in self.reject_structured:
                return _error(400, f"response_format {mode!r} is not supported by this server"), "rejected"
            replay = self.replay
            if replay is not None and (replay["when"] == "any" or mode in replay["when"]):
                return _replayed(replay), "replayed"
        failure = self._choose_failure()
        if failure == "invalid_content" and not is_chat:
            failure = None
        if failure == "429":
            headers = {"Retry-After": self.retry_after} if self.retry_after is not None else {}
            status, h, data = _error(429, "Rate limit reached, slow down")
            return (status, {**h, **headers}, data), "429"
        if failure == "500":
            return _error(500, "internal server error (injected)"), "500"
        if failure == "400":
            return _error(400, "bad request (injected): invalid parameter"), "400"
        if failure == "malformed":
            return (200, {"Content-Type": "application/json"}, b'{"id": "x", "choices": [{"mess'), "malformed"
        if failure == "timeout" and self._sleep(self.hang_s, gone):
            return (499, {}, b""), "timeout"
        if is_chat:
            content = (
                "Sure! Here is what I think: it is mostly fine." if failure == "invalid_content" else None
            )
            if content is None:
                content = self.responder(body)
            return (
                200,
                {"Content-Type": "application/json"},
                self._chat_body(body, content),
            ), failure or "ok"
        if path.endswith("/embeddings"):
            return (200, {"Content-Type": "application/json"}, self._embedding_body(body)), failure or "ok"
        return _error(404, f"no route {path}"), "404"

    def _chat_body(self, req: dict[str, Any], content: str) -> bytes:
        prompt_chars = sum(len(str(m.get("content", ""))) for m in req.get("messages") or [])
        n_choices = max(1, int(req.get("n") or 1))  # the same content n times
        out: dict[str, Any] = {
            "id": f"chatcmpl-{self.total_requests}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": req.get("model") or self.model,
            "choices": [
                {"index": i, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
                for i in range(n_choices)
            ],
        }
        if self.include_usage:
            p, c = max(1, prompt_chars // 4), max(1, len(content) // 4) * n_choices
            out["usage"] = {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}
            if self.prefix_cache:
                cached = self._cached_prefix_tokens(req)
                out["usage"]["prompt_tokens_details"] = {"cached_tokens": min(cached, p)}
        return json.dumps(out, ensure_ascii=False).encode("utf-8")

    def _cached_prefix_tokens(self, req: dict[str, Any]) -> int:
        """Tokens (4 characters each) of the longest prefix shared with an earlier prompt, in whole blocks."""
        prompt = "".join(f"<{m.get('role')}>{m.get('content', '')}" for m in req.get("messages") or [])
        with self._lock:
            best = 0
            for seen in self._prompts_seen:
                lo, hi = 0, min(len(seen), len(prompt))  # the longest common prefix, by bisection
                while lo < hi:
                    mid = (lo + hi + 1) // 2
                    if seen[:mid] == prompt[:mid]:
                        lo = mid
                    else:
                        hi = mid - 1
                best = max(best, lo)
            self._prompts_seen.append(prompt)
        tokens = best // 4
        return tokens - tokens % self.prefix_block

    def _embedding_body(self, req: dict[str, Any]) -> bytes:
        raw = req.get("input")
        texts = [raw] if isinstance(raw, str) else list(raw or [])
        dim = int(req.get("dimensions") or 32)
        data = []
        for i, t in enumerate(texts):
            vec = [float(x) for x in hash_embedding(str(t), dim)]
            emb: Any = vec
            if req.get("encoding_format") == "base64":
                emb = base64.b64encode(struct.pack(f"<{dim}f", *vec)).decode("ascii")
            data.append({"object": "embedding", "index": i, "embedding": emb})
        tokens = sum(max(1, len(str(t)) // 4) for t in texts)
        out: dict[str, Any] = {"object": "list", "data": data, "model": req.get("model") or self.model}
        if self.include_usage:
            out["usage"] = {"prompt_tokens": tokens, "total_tokens": tokens}
        return json.dumps(out).encode("utf-8")


_REAPED = object()


class _QuietServer(ThreadingHTTPServer):
    """A client that hangs up (a killed process, a cancelled request) is normal here: no traceback
    on stderr for it (tests read stderr)."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        if isinstance(sys.exc_info()[1], OSError):
            return
        super().handle_error(request, client_address)


def _client_gone(sock: socket.socket | None) -> bool:
    """True when the peer closed ``sock`` (EOF pending); never blocks."""
    if sock is None:
        return False
    try:
        readable, _, _ = select.select([sock], [], [], 0)
        return bool(readable) and not sock.recv(1, socket.MSG_PEEK)
    except (OSError, ValueError):
        return True


def _replayed(fixture: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
    body = fixture["body"]
    data = body.encode("utf-8") if isinstance(body, str) else json.dumps(body).encode("utf-8")
    return int(fixture["status"]), {"Content-Type": fixture.get("content_type", "application/json")}, data


def _error(status: int, message: str) -> tuple[int, dict[str, str], bytes]:
    kind = (
        "rate_limit_error" if status == 429 else "invalid_request_error" if status < 500 else "server_error"
    )
    body = json.dumps({"error": {"message": message, "type": kind, "param": None, "code": None}})
    return status, {"Content-Type": "application/json"}, body.encode("utf-8")


def _make_handler(server: FakeOpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        # Headers and body go out in separate writes; without TCP_NODELAY, Nagle's algorithm and
        # the peer's delayed ACK add ~40 ms to every reply on a kept-alive connection.
        disable_nagle_algorithm = True
        protocol_version = "HTTP/1.1"
        timeout = 30

        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw.decode("utf-8")) if raw else {}
            except ValueError:
                body = {"_unparseable": raw.decode("utf-8", "replace")}
            # the SDK sends extra_body keys at the top level; nothing to unwrap
            with server._lock:
                server.authorizations.append(self.headers.get("Authorization") or "")
            token = server._enter(body, self.connection)
            status, headers, data, kind = 500, {}, b"", "error"
            try:
                (status, headers, data), kind = server.handle(self.path, body, self._wait_or_gone)
            except Exception as e:  # a responder bug: tell the client, loudly
                status, headers, data = _error(500, f"responder failed: {type(e).__name__}: {e}")
                kind = "responder_error"
            finally:
                server._leave(token, status, kind)
            if status == 499:
                self.close_connection = True
                return
            try:
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except OSError:
                pass  # the client gave up (timeout)

        def _wait_or_gone(self, seconds: float) -> bool:
            """Wait up to ``seconds``; True as soon as the client closes the connection."""
            deadline = time.monotonic() + seconds
            sock = self.connection
            while not server._stop.is_set():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                try:
                    readable, _, _ = select.select([sock], [], [], min(remaining, 0.05))
                    if readable and not sock.recv(1, socket.MSG_PEEK):
                        return True  # EOF: the client gave up
                except OSError:
                    return True
                if readable:  # data, not EOF (unexpected while a reply is pending): just wait
                    server._stop.wait(max(0.0, deadline - time.monotonic()))
                    return False
            return False

        def do_GET(self) -> None:
            if self.path.rstrip("/").endswith("/stats"):
                with server._lock:
                    data = json.dumps(
                        {
                            "total_requests": server.total_requests,
                            "peak_in_flight": server.peak_in_flight,
                            "in_flight_s": server.in_flight_s,
                            "first_request_at": server.first_request_at,
                            "last_reply_at": server.last_reply_at,
                            "process_cpu_s": time.process_time(),
                            "by_kind": dict(server.by_kind),
                            "timeline": [
                                (a, b, kind, detect_step(server.requests[i]) if i >= 0 else "?")
                                for a, b, kind, i in server.timeline
                            ],
                            "by_status": {str(k): v for k, v in server.by_status.items()},
                        }
                    ).encode()
                status = 200
            elif self.path.rstrip("/").endswith("/models"):
                data = json.dumps(
                    {"object": "list", "data": [{"id": server.model, "object": "model"}]}
                ).encode()
                status = 200
            else:
                status, _, data = _error(404, f"no route {self.path}")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


def main() -> None:
    """Serve standalone (for benchmarks in another process): prints the base URL, then serves
    until stdin closes. GET /v1/stats returns the counters."""
    import argparse
    import sys
    from pathlib import Path

    # Run as a script, the responder's own imports (helpers.*) need tests/ on the path.
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("--latency", type=float, default=0.0)
    ap.add_argument("--fail-rate", type=float, default=0.0)
    args = ap.parse_args()
    with FakeOpenAIServer(latency_s=0.0, fail_rate=0.0) as server:
        # One reply made before serving: the responder's first takes 5-10 ms more than the rest
        # (first calls of its JSON and regex machinery), which would make a bench's first wave late
        # by the server's own start-up, not the client's.
        server.handle("/v1/chat/completions", {"model": "m", "messages": [{"role": "user", "content": "Warm-up."}]})
        server.latency_s, server.fail_rate = args.latency, args.fail_rate
        server.reset_counters()
        print(server.url, flush=True)
        sys.stdin.read()


if __name__ == "__main__":
    main()
