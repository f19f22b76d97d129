"""What metrics ask of a judge: steps, not prompts.

A metric encodes its published algorithm; the *steps* are asked of a judge. An LLM judge
(:class:`ragmeter.judges.llm.LLMJudge`) answers them with prompts; the local judge
(:class:`ragmeter.local.judge.LocalJudge`) with embeddings and text analysis. One metric
implementation serves both, and a new backend never touches a metric.

Steps (names used in ``Metric.steps`` and ``Judge.supports``):

- ``extract_claims(text, question=, lang=)`` -> list of atomic, self-contained claims
- ``verify_claims(claims, contexts, lang=)`` -> one :class:`Verdict` per claim, in order
- ``generate_questions(answer, n=, lang=)`` -> :class:`GeneratedQuestions`
- ``embed(texts)`` -> (n, d) float32 array, rows L2-normalised
- ``rate_sentences(question, sentences, lang=)`` -> one float in [0, 1] per sentence: is the
  sentence needed to answer the question (context relevance; an LLM gives 0/1, the local judge a
  probability)
- ``rate_chunks(question, chunks, target, lang=)`` -> one :class:`Verdict` per chunk, in order: was
  the chunk useful to arrive at ``target`` (the reference, or the answer) — context precision /
  utilization; one call for all chunks
- ``assess_relevance(question, answer, lang=)`` -> :class:`RelevanceAssessment`: does the answer
  address the question's information needs, without gaps or padding, and is it evasive (the
  local judge's answer relevance; an LLM judge uses ``generate_questions`` + ``embed``)
- ``grade(rubric, inputs, lang=)`` -> :class:`Grade` on the rubric's scale (correctness 1-5,
  guideline adherence, relevancy YES/NO, G-Eval criteria, user rubrics)
- ``compare(question, answer_a, answer_b, reference=, criteria=, lang=)`` -> :class:`Preference`
  (pairwise; the metric asks both orders)
- ``standalone_question(question, history, lang=)`` -> the user's message of a conversation's turn
  made standalone with the history (``history``: the earlier ``(role, text)`` pairs, roles ``user``
  and ``assistant``); the runner asks it for a turn sample before the metrics that read the
  question (:mod:`ragmeter.run.turns`)

Conversation steps (the per-conversation metrics, :mod:`ragmeter.metrics.conversation`) take the
conversation's ``dialogue``: its user and assistant messages with text, as ``(role, text)`` pairs,
read as :func:`exchanges` (exchange ``k``: the user's message(s) and the assistant's reply):

- ``rate_turn_relevance(dialogue, lang=)`` -> one :class:`TurnVerdict` per answered exchange: does
  the reply address the user's message, given the conversation before it
- ``check_retention(dialogue, lang=)`` -> :class:`RetentionCheck`: the facts the user stated, and
  one verdict per answered exchange: does the reply keep them (no contradiction, no asking again)
- ``check_completeness(dialogue, lang=)`` -> one :class:`Verdict` per request the user made
  (``claim``: the request; ``supported``: met by the end of the conversation)
- ``check_role_adherence(role, dialogue, lang=)`` -> one :class:`TurnVerdict` per answered exchange:
  does the reply keep the role the system message gives

Agent steps (the trajectory metrics, :mod:`ragmeter.metrics.agent`) take the conversation's
``messages`` (:class:`~ragmeter.dataset.messages.ChatMessage`: the user's messages, the agent's
tool calls and their results, its replies), read as a trajectory
(:mod:`ragmeter.dataset.trajectory`; the calls numbered 1.. in order):

- ``check_goal(messages, outcome=, lang=)`` -> :class:`Verdict`: ``claim`` the user's goal,
  ``supported`` whether the trajectory achieved it (with ``outcome``, the expected end state: and
  whether the end state matches it), ``evidence`` the end state the judge read
- ``check_tool_selection(messages, tools, lang=)`` -> one :class:`TurnVerdict` per tool call (``turn``:
  the call's number): was it the right tool to call, given the request and the declared ``tools``
- ``check_topics(messages, topics, lang=)`` -> one :class:`TopicVerdict` per topic the user raised:
  is it among the allowed ``topics``, and did the agent answer it

A judge that cannot do a step raises :class:`~ragmeter.errors.UnsupportedStepError` from it, and
returns False from ``supports(step)`` so the runner can refuse the run before any call.

Optional: ``async warm_up(steps)`` loads what the run's steps need and the judge would otherwise
load on first use (a model); the runner starts it beside the first jobs, so the load overlaps
with them (an LLM judge waits until its first wave of requests is out), and cancels it if the
run ends first. When it returns, the runner takes the process to be waiting on the judge and
loads what the run's summary will need (:func:`ragmeter.run.executor.load_summary_tools`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ragmeter.errors import UnsupportedStepError

if TYPE_CHECKING:
    import numpy as np

    from ragmeter.dataset.messages import ChatMessage

STEPS: tuple[str, ...] = (
    "extract_claims",
    "verify_claims",
    "generate_questions",
    "embed",
    "rate_sentences",
    "rate_chunks",
    "assess_relevance",
    "grade",
    "compare",
    "standalone_question",
    "rate_turn_relevance",
    "check_retention",
    "check_completeness",
    "check_role_adherence",
    "check_goal",
    "check_tool_selection",
    "check_topics",
)


@dataclass(frozen=True)
class Verdict:
    """Whether one claim is supported by the contexts.

    ``supported`` is the decision; ``confidence`` in [0, 1] is the judge's probability that the
    claim is supported when it has one (the local judge always does; an LLM judge gives 1.0/0.0).
    ``evidence`` is the context sentence that supports (or contradicts) it, when the judge gives one.
    """

    claim: str
    supported: bool
    reason: str = ""
    evidence: str = ""
    confidence: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "claim": self.claim,
            "supported": self.supported,
            "reason": self.reason,
            "evidence": self.evidence,
            "confidence": self.confidence,
        }


@dataclass(frozen=True)
class GeneratedQuestions:
    """Questions generated from an answer (Ragas answer relevance), and whether the answer is
    noncommittal (evasive: "I don't know", "I cannot answer")."""

    questions: tuple[str, ...]
    noncommittal: bool = False


@dataclass(frozen=True)
class RelevanceAssessment:
    """How well an answer addresses its question. ``score`` in [0, 1]; ``noncommittal`` marks an
    evasive answer; ``details`` may list the question's information needs and which are met."""

    score: float
    noncommittal: bool = False
    reason: str = ""
    details: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Rubric:
    """What ``grade`` scores against.

    ``criteria``: what is judged, in words. ``scale``: (lowest, highest) score. ``levels``: optional
    description of each score level. ``steps``: optional evaluation steps (G-Eval). ``inputs``: the
    names of the inputs the rubric reads (e.g. ``("question", "answer", "reference")``).
    ``passing``: the score at or above which the sample passes, if any.
    """

    name: str
    criteria: str
    scale: tuple[float, float] = (1.0, 5.0)
    levels: Mapping[str, str] = field(default_factory=dict)
    steps: tuple[str, ...] = ()
    inputs: tuple[str, ...] = ("question", "answer")
    passing: float | None = None
    version: str = "1"


@dataclass(frozen=True)
class Grade:
    """A score on a rubric's scale, with the judge's reasoning."""

    score: float
    reason: str = ""
    passing: bool | None = None
    details: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Preference:
    """Which of two answers is better: ``"a"``, ``"b"`` or ``"tie"``."""

    winner: str
    reason: str = ""

    def __post_init__(self) -> None:
        if self.winner not in ("a", "b", "tie"):
            raise ValueError(f"winner must be 'a', 'b' or 'tie', not {self.winner!r}")


@dataclass(frozen=True)
class Exchange:
    """One exchange of a conversation: the user's message (consecutive user messages joined by a
    line break) and the assistant's reply ("" when the conversation ends before it)."""

    user: str
    assistant: str


def exchanges(dialogue: Sequence[tuple[str, str]]) -> list[Exchange]:
    """The exchanges of a dialogue (``(role, text)`` pairs, roles ``user`` and ``assistant``), in
    order, numbered 1.. by the conversation steps. Assistant messages before the first user
    message answer nothing and are left out; consecutive assistant messages are one reply."""
    out: list[tuple[list[str], list[str]]] = []
    for role, text in dialogue:
        text = str(text).strip()
        if not text:
            continue
        if role == "user":
            if not out or out[-1][1]:
                out.append(([], []))
            out[-1][0].append(text)
        elif role == "assistant" and out:
            out[-1][1].append(text)
    return [Exchange("\n".join(u), "\n".join(a)) for u, a in out]


@dataclass(frozen=True)
class TurnVerdict:
    """A judgement of the assistant's reply in exchange ``turn`` (1-based, :func:`exchanges`):
    ``ok`` is the decision (relevant, retained, in role), ``confidence`` in [0, 1] the judge's
    probability of ``ok`` when it has one (the local judge), ``reason`` why."""

    turn: int
    ok: bool
    reason: str = ""
    confidence: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"turn": self.turn, "ok": self.ok, "reason": self.reason, "confidence": self.confidence}


@dataclass(frozen=True)
class UserFact:
    """A fact the user stated about themselves or their situation, in exchange ``turn``."""

    turn: int
    fact: str


@dataclass(frozen=True)
class RetentionCheck:
    """What ``check_retention`` returns: the user's facts, and one verdict per answered exchange
    (``ok``: the reply neither contradicts nor asks again for a fact stated before it)."""

    facts: tuple[UserFact, ...]
    verdicts: tuple[TurnVerdict, ...]


@dataclass(frozen=True)
class TopicVerdict:
    """A topic the user raised in a conversation: whether it falls under the allowed topics
    (``allowed``) and whether the agent answered it rather than refusing (``answered``)."""

    topic: str
    allowed: bool
    answered: bool
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"topic": self.topic, "allowed": self.allowed, "answered": self.answered, "reason": self.reason}


@runtime_checkable
class Judge(Protocol):
    """Anything that answers metric steps. See the module docstring for the steps."""

    name: str  # "local", "openai:gpt-4o-mini", "openai-compatible:qwen2.5-7b", "fake"

    def supports(self, step: str) -> bool: ...

    def describe(self) -> dict[str, Any]:
        """The judge and its config for the run record (no secrets)."""
        ...

    async def extract_claims(
        self, text: str, *, question: str | None = None, lang: str = "en"
    ) -> list[str]: ...

    async def verify_claims(
        self, claims: Sequence[str], contexts: Sequence[str], *, lang: str = "en"
    ) -> list[Verdict]: ...

    async def generate_questions(
        self, answer: str, *, n: int = 3, lang: str = "en"
    ) -> GeneratedQuestions: ...

    async def embed(self, texts: Sequence[str]) -> np.ndarray: ...

    async def rate_sentences(
        self, question: str, sentences: Sequence[str], *, lang: str = "en"
    ) -> list[float]: ...

    async def rate_chunks(
        self, question: str, chunks: Sequence[str], target: str, *, lang: str = "en"
    ) -> list[Verdict]: ...

    async def assess_relevance(
        self, question: str, answer: str, *, lang: str = "en"
    ) -> RelevanceAssessment: ...

    async def grade(self, rubric: Rubric, inputs: Mapping[str, str], *, lang: str = "en") -> Grade: ...

    async def compare(
        self,
        question: str,
        answer_a: str,
        answer_b: str,
        *,
        reference: str | None = None,
        criteria: str | None = None,
        lang: str = "en",
    ) -> Preference: ...

    async def standalone_question(
        self, question: str, history: Sequence[tuple[str, str]], *, lang: str = "en"
    ) -> str: ...

    async def rate_turn_relevance(
        self, dialogue: Sequence[tuple[str, str]], *, lang: str = "en"
    ) -> list[TurnVerdict]: ...

    async def check_retention(self, dialogue: Sequence[tuple[str, str]], *, lang: str = "en") -> RetentionCheck: ...

    async def check_completeness(self, dialogue: Sequence[tuple[str, str]], *, lang: str = "en") -> list[Verdict]: ...

    async def check_role_adherence(
        self, role: str, dialogue: Sequence[tuple[str, str]], *, lang: str = "en"
    ) -> list[TurnVerdict]: ...

    async def check_goal(
        self, messages: Sequence[ChatMessage], *, outcome: str | None = None, lang: str = "en"
    ) -> Verdict: ...

    async def check_tool_selection(
        self, messages: Sequence[ChatMessage], tools: Sequence[Mapping[str, Any]], *, lang: str = "en"
    ) -> list[TurnVerdict]: ...

    async def check_topics(
        self, messages: Sequence[ChatMessage], topics: Sequence[str], *, lang: str = "en"
    ) -> list[TopicVerdict]: ...

    async def aclose(self) -> None: ...


class StepsNotImplemented:
    """Mixin: every step raises UnsupportedStepError and ``supports`` is False, until a judge
    overrides it. Judges inherit it so a step added to the protocol never breaks them."""

    name: str = "judge"

    def supports(self, step: str) -> bool:
        return False

    def _unsupported(self, step: str) -> UnsupportedStepError:
        return UnsupportedStepError(self.name, step)

    async def extract_claims(self, text: str, *, question: str | None = None, lang: str = "en") -> list[str]:
        raise self._unsupported("extract_claims")

    async def verify_claims(
        self, claims: Sequence[str], contexts: Sequence[str], *, lang: str = "en"
    ) -> list[Verdict]:
        raise self._unsupported("verify_claims")

    async def generate_questions(self, answer: str, *, n: int = 3, lang: str = "en") -> GeneratedQuestions:
        raise self._unsupported("generate_questions")

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        raise self._unsupported("embed")

    async def rate_sentences(
        self, question: str, sentences: Sequence[str], *, lang: str = "en"
    ) -> list[float]:
        raise self._unsupported("rate_sentences")

    async def rate_chunks(
        self, question: str, chunks: Sequence[str], target: str, *, lang: str = "en"
    ) -> list[Verdict]:
        raise self._unsupported("rate_chunks")

    async def assess_relevance(self, question: str, answer: str, *, lang: str = "en") -> RelevanceAssessment:
        raise self._unsupported("assess_relevance")

    async def grade(self, rubric: Rubric, inputs: Mapping[str, str], *, lang: str = "en") -> Grade:
        raise self._unsupported("grade")

    async def compare(
        self,
        question: str,
        answer_a: str,
        answer_b: str,
        *,
        reference: str | None = None,
        criteria: str | None = None,
        lang: str = "en",
    ) -> Preference:
        raise self._unsupported("compare")

    async def standalone_question(
        self, question: str, history: Sequence[tuple[str, str]], *, lang: str = "en"
    ) -> str:
        raise self._unsupported("standalone_question")

    async def rate_turn_relevance(
        self, dialogue: Sequence[tuple[str, str]], *, lang: str = "en"
    ) -> list[TurnVerdict]:
        raise self._unsupported("rate_turn_relevance")

    async def check_retention(self, dialogue: Sequence[tuple[str, str]], *, lang: str = "en") -> RetentionCheck:
        raise self._unsupported("check_retention")

    async def check_completeness(self, dialogue: Sequence[tuple[str, str]], *, lang: str = "en") -> list[Verdict]:
        raise self._unsupported("check_completeness")

    async def check_role_adherence(
        self, role: str, dialogue: Sequence[tuple[str, str]], *, lang: str = "en"
    ) -> list[TurnVerdict]:
        raise self._unsupported("check_role_adherence")

    async def check_goal(
        self, messages: Sequence[ChatMessage], *, outcome: str | None = None, lang: str = "en"
    ) -> Verdict:
        raise self._unsupported("check_goal")

    async def check_tool_selection(
        self, messages: Sequence[ChatMessage], tools: Sequence[Mapping[str, Any]], *, lang: str = "en"
    ) -> list[TurnVerdict]:
        raise self._unsupported("check_tool_selection")

    async def check_topics(
        self, messages: Sequence[ChatMessage], topics: Sequence[str], *, lang: str = "en"
    ) -> list[TopicVerdict]:
        raise self._unsupported("check_topics")

    async def aclose(self) -> None:
        return None
