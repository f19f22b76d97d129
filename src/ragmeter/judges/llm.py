"""LLMJudge: answers the judge steps with prompts sent through a :class:`ModelClient`.

Each step renders its prompt file (:mod:`ragmeter.judges.prompts`), asks for JSON against the
prompt's schema, and parses the reply tolerantly (:mod:`ragmeter.judges.parsing`). When the reply
cannot be used, ONE repair round sends it back with the error and asks for valid JSON only; if that
fails too, :class:`JudgeOutputError` is raised with the last raw reply.

Untrusted text (question, answer, contexts, reference, claims) enters every prompt as
:class:`~ragmeter.judges.prompts.Untrusted` values, fenced by the one mechanism in
:mod:`ragmeter.judges.prompts`; every system message ends with :func:`~ragmeter.judges.prompts.data_rule`.

A reply cut off at the token limit (``finish_reason == "length"``) is never parsed: the request is
sent once more with twice the ``max_tokens``, and a second cut-off raises
:class:`~ragmeter.errors.ReplyTruncated`. Replies that are valid JSON with wrong content raise the
:class:`~ragmeter.errors.JudgeOutputError` subclass that names the problem (index out of range,
duplicate index, count mismatch, evidence not in the contexts, score out of scale); they get the
repair round like unparseable replies, and the final error keeps its class.

Every step goes through a :class:`~ragmeter.judges.memo.StepMemo`: identical requests made by
several metrics on the same sample cost one call. Besides the protocol steps the judge has two
*combined* steps (:mod:`ragmeter.judges.llm_steps`) that metrics use through
:mod:`ragmeter.metrics._shared` when ``judge.combine_steps`` is true: ``extract_claims_many``
(claims of the answer and of the reference in one call) and ``check_contexts`` (the contexts sent
once: verdicts on all claims, per-chunk usefulness and per-sentence need). Each returns what the
separate steps would (``analyse_contexts`` remains for prompt overrides and direct use). The
conversation steps (the standalone question of a turn, the per-conversation metrics' steps) are in
:mod:`ragmeter.judges.conversation_steps`.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import json
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

from ragmeter.errors import ConfigError, JudgeOutputError, ReplyTruncated, UnsupportedStepError
from ragmeter.judges.agent_steps import AgentSteps
from ragmeter.judges.base import GeneratedQuestions, Verdict
from ragmeter.judges.client import ModelClient
from ragmeter.judges.conversation_steps import ConversationSteps
from ragmeter.judges.llm_steps import MoreSteps
from ragmeter.judges.memo import DEFAULT_MAX_ENTRIES, StepMemo, current_repetition
from ragmeter.judges.parsing import parse_json
from ragmeter.judges.prompts import (
    Prompt,
    Untrusted,
    available_languages,
    data_rule,
    load_prompt,
    normalize_lang,
)
from ragmeter.judges.replies import VERDICT_OPTIONAL, check_evidence, check_not_copied, match_verdicts
from ragmeter.judges.schema_shapes import shaped_schema
from ragmeter.judges.types import ChatRequest, ChatResponse, Message
from ragmeter.run.images import current_images
from ragmeter.statements import short_answer_claim

if TYPE_CHECKING:
    import numpy as np

T = TypeVar("T")

#: keys the parser does not insist on even though the wire schema lists them (strict mode needs all)
_OPTIONAL_KEYS: Mapping[str, frozenset[str]] = {
    "extract_claims": frozenset(),
    "verify_claims": VERDICT_OPTIONAL,
    "extract_claims_many": frozenset(),
    "generate_questions": frozenset({"noncommittal"}),
    "rate_chunks": frozenset({"reason"}),
    "analyse_contexts": frozenset({"reason"}),
    # the parts a request does not ask for (no claims, no target, no question) may be left out
    "check_contexts": frozenset({"index", "reason", "evidence", "verdicts", "passages", "needed"}),
    "grade": frozenset({"reason"}),
    "compare": frozenset({"reason"}),
    "standalone_question": frozenset(),
    "rate_turn_relevance": frozenset({"index", "reason"}),
    "check_retention": frozenset({"index", "reason"}),
    "check_completeness": frozenset({"reason"}),
    "check_role_adherence": frozenset({"index", "reason"}),
    "check_goal": frozenset({"goal", "end_state", "reason"}),
    "check_tool_selection": frozenset({"index", "reason"}),
    "check_topics": frozenset({"reason"}),
}
_NO_QUESTION = {"en": "(not given)", "zh": "（未提供）"}
_NO_CONTEXT_REASON = "no contexts were given, so nothing can be supported"


@runtime_checkable
class Embedder(Protocol):
    """Anything with ``embed(texts)`` returning an (n, d) array (sync or async)."""

    def embed(self, texts: Sequence[str]) -> Any: ...


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


#: Steps this judge answers with a prompt (``embed`` needs an embedder).
_PROMPTED_STEPS = frozenset(
    {
        "extract_claims",
        "verify_claims",
        "generate_questions",
        "rate_sentences",
        "rate_chunks",
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
    }
)
#: Steps whose replies later requests wait on (claims, then their verdicts): sent first (ChatRequest.leads)
_LEADING_STEPS = frozenset({"extract_claims", "extract_claims_many"})
#: prompt files whose versions the run record lists
_RECORDED_PROMPTS = (
    *sorted(_PROMPTED_STEPS),
    "analyse_contexts",
    "check_contexts",
    "extract_claims_many",
    "repair",
)
#: how untrusted text is fenced (see :mod:`ragmeter.judges.prompts`); in the run record
DATA_FENCE = "data-tag/1"


def _shown_images(values: Mapping[str, Any]) -> tuple[str, ...]:
    """The sample's images (:mod:`ragmeter.run.images`) when this prompt's values show their
    placeholders (the contexts), else none: a step that does not read the contexts gets no picture."""
    images = current_images.get()
    if images and any("[image " in str(v) for v in values.values()):
        return images
    return ()


class LLMJudge(MoreSteps, ConversationSteps, AgentSteps):
    """A :class:`~ragmeter.judges.base.Judge` backed by an LLM (chat) and, optionally, an embedder.

    ``embedder``: a :class:`ModelClient` over an embedding provider, any object with
    ``embed(texts)`` (such as the local :class:`ragmeter.local.embedders.USEEmbedder`), or None
    (then ``supports("embed")`` is False).

    ``memo_size``: finished step results kept for reuse (0 turns the memo off).
    ``combine``: offer the combined steps (``combine_steps``); False makes every metric ask its
    own steps (more calls, fewer tokens when a single metric runs on data with references).
    ``assess_relevance`` is not supported: answer relevance uses ``generate_questions`` + ``embed``.
    Image contexts go to the model as image parts (:mod:`ragmeter.run.images`): ``reads_images``.
    """

    reads_images = True

    def __init__(
        self,
        client: ModelClient,
        embedder: ModelClient | Embedder | None = None,
        prompts_dir: str | Path | None = None,
        *,
        name: str | None = None,
        memo_size: int = DEFAULT_MAX_ENTRIES,
        combine: bool = True,
    ) -> None:
        self.client = client
        self.embedder = embedder
        self.prompts_dir = Path(prompts_dir) if prompts_dir is not None else None
        if self.prompts_dir is not None and not self.prompts_dir.is_dir():
            raise ConfigError(f"prompt override directory {self.prompts_dir} does not exist")
        self.name = name or client.name
        self._prompts: dict[tuple[str, str], Prompt] = {}
        self._langs: dict[str, str] = {}  # the language asked -> the prompts' language (see _lang)
        self._owned: list[Any] = []  # resources closed by aclose (set by make_judge)
        self.memo = StepMemo(memo_size, model=client.model)
        self.combine_steps = bool(combine)

    # -- protocol basics ------------------------------------------------------------------------

    def supports(self, step: str) -> bool:
        if step == "embed":
            return self.embedder is not None
        return step in _PROMPTED_STEPS

    def describe(self) -> dict[str, Any]:
        versions: dict[str, str] = {}
        for lang in available_languages():
            for step in _RECORDED_PROMPTS:
                try:
                    versions[f"{step}/{lang}"] = self._prompt(step, lang).version
                except ConfigError:
                    continue
        d: dict[str, Any] = {
            "name": self.name,
            "kind": "llm",
            **self.client.describe(),
            "prompts": versions,
            "data_fence": DATA_FENCE,
            "combine_steps": self.combine_steps,
            "memo_size": self.memo.max_entries,
        }
        if self.prompts_dir is not None:
            d["prompts_dir"] = str(self.prompts_dir)
        emb = self.embedder
        if emb is None:
            d["embedder"] = None
        elif isinstance(emb, ModelClient):
            d["embedder"] = {"name": emb.name, **emb.describe()}
        else:
            describe = getattr(emb, "describe", None)
            d["embedder"] = describe() if callable(describe) else {"name": type(emb).__name__}
        return d

    def set_run_concurrency(self, n: int) -> None:
        """Requests in flight per endpoint for this run (the judge's config, when it sets
        ``concurrency``, wins); the runner calls this with ``RunConfig.concurrency``."""
        self.client.set_run_concurrency(n)
        if isinstance(self.embedder, ModelClient):
            self.embedder.set_run_concurrency(n)

    async def warm_up(self, steps: Collection[str]) -> None:
        """Return once the run's first wave of requests is out (:meth:`ModelClient.first_wave_out`)
        and what ``steps`` need, and would otherwise load on first use, is loaded: an in-process
        embedder's model (the local one: NumPy, its weights and tokenizer, about 0.3-0.7 s, mostly
        outside the interpreter lock), in a worker thread. Then the load overlaps with waiting on
        the endpoint instead of delaying those requests, the first sample that embeds finds the
        model ready, and the runner knows the process is only waiting (it loads what the run's
        summary needs then). With no LLM step there is no wave to wait for. A failure is left to
        the first real call, which reports it on its own score."""
        if any(step != "embed" for step in steps):
            await self.client.first_wave_out()
        emb = self.embedder
        if "embed" not in steps or emb is None or isinstance(emb, ModelClient):
            return  # a remote embedder loads nothing here (and a probe would cost a request)
        with contextlib.suppress(Exception):
            load = getattr(emb, "load", None)
            if callable(load):  # the local embedders: imports and loads in their own threads
                await load()
                return
            result = emb.embed(["warm-up"])
            if inspect.isawaitable(result):
                await result

    @property
    def in_flight(self) -> int:
        """Requests waiting on the endpoint(s) now (the progress bar shows it)."""
        n = self.client.in_flight
        if isinstance(self.embedder, ModelClient) and self.embedder is not self.client:
            n += self.embedder.in_flight
        return n

    async def aclose(self) -> None:
        await self.client.aclose()
        if isinstance(self.embedder, ModelClient) and self.embedder is not self.client:
            await self.embedder.aclose()
        for res in self._owned:
            close = getattr(res, "close", None)
            if callable(close):
                close()
        self._owned.clear()

    async def __aenter__(self) -> LLMJudge:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def _prompt(self, step: str, lang: str) -> Prompt:
        key = (step, lang)
        p = self._prompts.get(key)
        if p is None:
            p = load_prompt(step, lang, self.prompts_dir)
            self._prompts[key] = p
        return p

    def _lang(self, lang: str) -> str:
        """Languages without built-in prompts use English prompts (which ask for the text's language).

        Every step asks this, so the answer is kept per judge (it lists the prompt folders)."""
        found = self._langs.get(lang)
        if found is None:
            found = normalize_lang(lang)
            if found not in available_languages() and not (
                self.prompts_dir is not None and (self.prompts_dir / found).is_dir()
            ):
                found = "en"
            self._langs[lang] = found
        return found

    # -- the ask / parse / repair cycle ---------------------------------------------------------------

    def _prompt_version(self, step: str, lang: str) -> str:
        return f"{step}/{lang}@{self._prompt(step, lang).version}"

    async def _memo_ask(
        self,
        step: str,
        lang: str,
        inputs: Any,
        values: Mapping[str, Any],
        convert: Callable[[Any], T],
        shape: Mapping[str, Any] | None = None,
    ) -> T:
        """:meth:`_ask` through the memo, keyed by step, prompt version, ``inputs`` (and the
        sample's images, which the inputs name only by placeholder) and repetition."""
        images = _shown_images(values)
        if images:
            inputs = {"inputs": inputs, "images": hashlib.sha256("\n".join(images).encode()).hexdigest()}
        return await self.memo.get_or_run(
            step,
            self._prompt_version(step, lang),
            inputs,
            lambda: self._ask(step, lang, values, convert, shape),
        )

    async def _ask(
        self,
        step: str,
        lang: str,
        values: Mapping[str, Any],
        convert: Callable[[Any], T],
        shape: Mapping[str, Any] | None = None,
    ) -> T:
        prompt = self._prompt(step, lang)
        schema = prompt.schema  # replies are parsed against the prompt's schema ...
        wire = schema  # ... and the server gets it narrowed to this request's shape, in two forms:
        grammar_wire = None  # the tighter one for servers that decode under a grammar (the provider
        if schema is not None:  # picks it by the mode it uses, which `auto` settles on mid-run)
            wire = shaped_schema(schema, shape or {}, grammar=False)
            grammar_wire = shaped_schema(schema, shape or {}, grammar=True)
        optional = _OPTIONAL_KEYS.get(step, frozenset())
        cfg = self.client.config
        system = f"{prompt.system}\n\n{data_rule(lang)}"
        # the sample's image contexts, where the prompt shows them as "[image k: name]"
        images = _shown_images(values)
        messages = (Message("system", system), Message("user", prompt.render(**values), images))
        # where the server enforces the schema, without the worked example (a small model copies it)
        enforced = (
            Message("system", system),
            Message("user", prompt.render(with_example=False, **values), images),
        )
        version = f"{step}/{lang}@{prompt.version}"
        temperature = cfg.temperature
        rep = current_repetition.get()
        if rep is not None:
            # repeated judging: each repeat is its own request (and cache entry), sampled at T > 0
            version = f"{version}#rep{rep.index}"
            temperature = cfg.temperature if cfg.temperature > 0 else rep.temperature
        request = ChatRequest(
            messages=messages,
            temperature=temperature,
            max_tokens=cfg.max_tokens,
            json_schema=wire,
            schema_name=step,
            grammar_schema=grammar_wire,
            seed=cfg.seed,
            step=step,
            prompt_version=version,
            enforced_messages=enforced if enforced != messages else None,
            leads=step in _LEADING_STEPS,
        )
        # the prompt's own wording (its example) and the request's data, for check_not_copied
        wording = prompt.wording
        data = "\n".join(str(v) for v in values.values())

        def use(text: str) -> T:
            obj = parse_json(text, schema, optional=optional)
            check_not_copied(obj, wording, data)
            return convert(obj)

        request, response = await self._generate_whole(request)
        try:
            return use(response.text)
        except JudgeOutputError as e:
            first_error = f"{type(e).__name__}: {e}" if type(e) is not JudgeOutputError else str(e)
        repair = self._prompt("repair", lang)
        repair_text = repair.render(
            error=first_error, schema=json.dumps(wire, ensure_ascii=False) if wire else "{}"
        )
        request2 = replace(
            request,
            messages=(*request.messages, Message("assistant", response.text), Message("user", repair_text)),
            enforced_messages=(
                None
                if request.enforced_messages is None
                else (
                    *request.enforced_messages,
                    Message("assistant", response.text),
                    Message("user", repair_text),
                )
            ),
            prompt_version=f"{request.prompt_version}+repair@{repair.version}",
        )
        _, response2 = await self._generate_whole(request2)
        try:
            return use(response2.text)
        except JudgeOutputError as e:
            raise type(e)(
                f"{step}: the judge's reply could not be used after one repair round: {e} "
                f"(first reply: {first_error})",
                raw=response2.text,
            ) from e

    async def _generate_whole(self, request: ChatRequest) -> tuple[ChatRequest, ChatResponse]:
        """The reply to ``request``, never one cut off at the token limit: a reply with
        ``finish_reason == "length"`` is asked again once with twice the budget (4096 when none was
        set); cut off again, :class:`ReplyTruncated`. Returns the request that was answered, too."""
        response = await self.client.generate(request)
        if response.finish_reason != "length":
            return request, response
        budget = request.max_tokens
        bigger = 2 * budget if budget else 4096
        retry = replace(request, max_tokens=bigger)
        response = await self.client.generate(retry)
        if response.finish_reason == "length":
            raise ReplyTruncated(
                f"{request.step}: the reply was cut off at the token limit "
                f"(max_tokens={budget if budget else 'server default'}, and again at {bigger}); "
                "raise JudgeConfig.max_tokens",
                raw=response.text,
            )
        return retry, response

    # -- steps ----------------------------------------------------------------------------------------

    async def extract_claims(self, text: str, *, question: str | None = None, lang: str = "en") -> list[str]:
        if not text or not text.strip():
            return []
        lang = self._lang(lang)
        built = short_answer_claim(text, question, lang)
        if built is not None:  # "Paris": its claim is made with the question, no call needed
            return [built]
        no_q = _NO_QUESTION.get(lang, _NO_QUESTION["en"])
        q = (question or "").strip()
        values = {"answer": Untrusted(text.strip()), "question": Untrusted(q) if q else no_q}

        def convert(obj: Any) -> list[str]:
            claims = [_one_line(c) for c in obj["claims"]]
            return [c for c in claims if c]

        inputs = {"answer": text.strip(), "question": q or no_q}
        return await self._memo_ask("extract_claims", lang, inputs, values, convert, {"claims": 1})

    async def verify_claims(
        self, claims: Sequence[str], contexts: Sequence[str], *, lang: str = "en"
    ) -> list[Verdict]:
        claim_list = [str(c) for c in claims]
        if not claim_list:
            return []
        ctx = [c for c in (str(x).strip() for x in contexts) if c]
        if not ctx:
            return [Verdict(c, False, _NO_CONTEXT_REASON, "", 0.0) for c in claim_list]
        lang = self._lang(lang)
        values = {
            "contexts": Untrusted("\n".join(f"[{i}] {_one_line(c)}" for i, c in enumerate(ctx, 1))),
            "claims": Untrusted("\n".join(f"{i}. {_one_line(c)}" for i, c in enumerate(claim_list, 1))),
        }

        def convert(obj: Any) -> list[Verdict]:
            verdicts = match_verdicts(claim_list, obj["verdicts"])
            check_evidence(verdicts, ctx)
            return verdicts

        return await self._memo_ask(
            "verify_claims",
            lang,
            {"claims": claim_list, "contexts": ctx},
            values,
            convert,
            {"verdicts": len(claim_list)},
        )

    async def generate_questions(self, answer: str, *, n: int = 3, lang: str = "en") -> GeneratedQuestions:
        if n < 1:
            raise ConfigError(f"generate_questions needs n >= 1, got {n}")
        lang = self._lang(lang)

        def convert(obj: Any) -> GeneratedQuestions:
            questions = tuple(q for q in (_one_line(x) for x in obj["questions"]) if q)[:n]
            noncommittal = bool(obj.get("noncommittal", 0))
            if not questions and not noncommittal:
                raise JudgeOutputError("the reply has no questions", raw=json.dumps(obj, ensure_ascii=False))
            return GeneratedQuestions(questions=questions, noncommittal=noncommittal)

        text = (answer or "").strip()
        values = {"answer": Untrusted(text), "n": n}
        return await self._memo_ask(
            "generate_questions", lang, {"answer": text, "n": n}, values, convert, {"questions": n}
        )

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        if self.embedder is None:
            raise UnsupportedStepError(
                self.name, "embed", "no embedder configured: pass embeddings='local' or an embedding model"
            )
        items = list(texts)
        if not items:
            return np.zeros((0, 0), dtype=np.float32)
        result = self.embedder.embed(items)
        if inspect.isawaitable(result):
            result = await result
        arr = np.asarray(result, dtype=np.float32)
        if arr.ndim != 2 or arr.shape[0] != len(items):
            raise JudgeOutputError(f"embedder returned shape {arr.shape} for {len(items)} texts")
        if not np.all(np.isfinite(arr)):
            raise JudgeOutputError("embedder returned NaN or infinite values")
        norms = np.linalg.norm(arr, axis=1, keepdims=True)
        return np.divide(arr, norms, out=np.zeros_like(arr), where=norms > 0).astype(np.float32)
