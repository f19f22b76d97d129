"""Ask an LLM judge for questions and reference answers, and filter them.

The generation prompts (``testset_questions``, ``testset_multi_hop``, ``testset_closed_book``) are
sent through the judge's :class:`~ragmeter.judges.client.ModelClient`, so retries, limits, the
cache and token accounting are the judge's. The filters use the judge's steps:

- *supported*: ``verify_claims([answer], chunk texts)``; an answer its chunk(s) do not support is
  dropped (``unsupported``);
- *answerable without the chunk* (opt-in): the question is asked closed-book; when the model gives
  an answer and ``verify_claims([reference], [closed-book answer])`` says it states the reference,
  the question is dropped (``answerable_without_context``);
- *near duplicates*: in :mod:`ragmeter.testset.generate` (embeddings).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ragmeter.errors import ConfigError, EndpointError, JudgeOutputError
from ragmeter.judges.parsing import parse_json
from ragmeter.judges.prompts import Prompt
from ragmeter.judges.types import ChatRequest, Message
from ragmeter.testset.plan import Task
from ragmeter.testset.prompts import load_testset_prompt

__all__ = ["LANGUAGE_NAMES", "Candidate", "SynthOptions", "chat_client", "kind_instructions", "run_task"]

LANGUAGE_NAMES: Mapping[str, Mapping[str, str]] = {
    "en": {
        "en": "English",
        "zh": "Chinese (Simplified)",
        "fr": "French",
        "de": "German",
        "es": "Spanish",
        "ja": "Japanese",
        "ko": "Korean",
        "it": "Italian",
        "pt": "Portuguese",
        "ru": "Russian",
    },
    "zh": {"en": "英文", "zh": "简体中文", "fr": "法文", "de": "德文", "es": "西班牙文", "ja": "日文"},
}

_KIND_INSTRUCTIONS: Mapping[str, Mapping[str, str]] = {
    "en": {
        "single_hop": "single-hop factual: each question asks for one fact stated in the context.",
        "reasoning": "reasoning or comparison: each question needs two or more facts of the context to be "
        "combined or compared, or a conclusion drawn from them; the answer must still follow from the "
        "context alone.",
        "user_style/short": "user-style, short: write it the way people type into a search box: a few "
        "keywords, no question mark.",
        "user_style/misspelled": "user-style, with typos: a natural question with one or two small "
        "spelling mistakes, as people type in a hurry.",
        "user_style/conversational": "user-style, conversational: a casual, chatty sentence, as if asking a "
        "colleague (e.g. 'hey, do you know ...').",
    },
    "zh": {
        "single_hop": "单跳事实题：每个问题询问上下文中陈述的一个事实。",
        "reasoning": "推理或比较题：每个问题都需要结合或比较上下文中的两个以上事实，或由它们得出结论；答案仍须仅凭上下文得出。",
        "user_style/short": "用户风格（简短）：像在搜索框里输入那样，只写几个关键词，不加问号。",
        "user_style/misspelled": "用户风格（有错别字）：自然的问题，带一两个常见的错别字，像匆忙打字时那样。",
        "user_style/conversational": "用户风格（口语化）：随意聊天的语气，像问同事那样（例如“哎，你知道……吗”）。",
    },
}


def kind_instructions(kind: str, style: str | None, prompt_lang: str) -> str:
    key = f"{kind}/{style}" if kind == "user_style" else kind
    table = _KIND_INSTRUCTIONS.get(prompt_lang, _KIND_INSTRUCTIONS["en"])
    return table[key]


@dataclass(frozen=True)
class SynthOptions:
    num_questions: int = 1
    lang: str | None = None  # None: each chunk's own language
    verify: bool = True
    drop_answerable_without_context: bool = False
    prompts_dir: Any = None
    #: the user's own instructions for the questions, after the kind's (LlamaIndex's question_gen_query)
    instructions: str | None = None


@dataclass
class Candidate:
    question: str
    answer: str
    lang: str


@dataclass
class TaskOutcome:
    candidates: list[Candidate] = field(default_factory=list)
    dropped: dict[str, int] = field(default_factory=dict)
    error: str | None = None

    def drop(self, reason: str, n: int = 1) -> None:
        if n:
            self.dropped[reason] = self.dropped.get(reason, 0) + n


def chat_client(judge: Any) -> Any:
    """The judge's chat client, or a ConfigError that offers the offline mode."""
    client = getattr(judge, "client", None)
    if client is None or not callable(getattr(client, "generate", None)):
        name = getattr(judge, "name", type(judge).__name__)
        raise ConfigError(
            f"generating questions needs an LLM judge; {name!r} cannot write text. Name one "
            "(--judge openai:gpt-4o-mini, or --judge openai-compatible:MODEL --base-url URL), or use the "
            "offline mode (--offline; Python: offline=True): fill-in-the-blank questions built from "
            "sentences with a date, number or name as the answer, marked generator='offline-cloze'"
        )
    return client


async def ask(client: Any, prompt: Prompt, values: Mapping[str, Any]) -> Any:
    cfg = client.config
    request = ChatRequest(
        messages=(Message("system", prompt.system), Message("user", prompt.render(**values))),
        temperature=cfg.temperature,
        max_tokens=cfg.max_tokens,
        json_schema=prompt.schema,
        schema_name=prompt.step,
        seed=cfg.seed,
        step=prompt.step,
        prompt_version=f"{prompt.step}/{prompt.lang}@{prompt.version}",
    )
    response = await client.generate(request)
    return parse_json(response.text, prompt.schema)


def _language(target: str, prompt_lang: str) -> str:
    names = LANGUAGE_NAMES.get(prompt_lang, LANGUAGE_NAMES["en"])
    return names.get(target, target)


def _items(reply: Any) -> list[tuple[str, str]]:
    items = reply.get("items") if isinstance(reply, Mapping) else None
    if not isinstance(items, list):
        raise JudgeOutputError("expected {'items': [...]}", raw=str(reply))
    out = []
    for it in items:
        if isinstance(it, Mapping):
            q, a = str(it.get("question") or "").strip(), str(it.get("answer") or "").strip()
            out.append((q, a))
    return out


async def run_task(judge: Any, task: Task, opts: SynthOptions) -> TaskOutcome:
    """Generate and filter the candidates of one task (never raises for a judge failure)."""
    outcome = TaskOutcome()
    client = chat_client(judge)
    lang = opts.lang or task.chunks[0].lang
    try:
        if task.kind == "multi_hop":
            a, b = task.chunks
            prompt = load_testset_prompt("testset_multi_hop", lang, opts.prompts_dir)
            values: dict[str, Any] = {
                "context_a": a.text,
                "context_b": b.text,
                "title_a": a.title,
                "title_b": b.title,
                "n": opts.num_questions,
                "language": _language(lang, prompt.lang),
            }
        else:
            prompt = load_testset_prompt("testset_questions", lang, opts.prompts_dir)
            values = {
                "context": task.chunks[0].text,
                "title": task.chunks[0].title,
                "n": opts.num_questions,
                "kind_instructions": "\n".join(
                    filter(None, (kind_instructions(task.kind, task.style, prompt.lang), opts.instructions))
                ),
                "language": _language(lang, prompt.lang),
            }
        pairs = _items(await ask(client, prompt, values))
    except (ConfigError, EndpointError):  # the endpoint cannot serve any task: stop
        raise
    except Exception as e:  # a judge failure loses this task only; it is recorded
        outcome.error = f"{type(e).__name__}: {e}"
        return outcome
    seen: set[str] = set()
    for q, ans in pairs[: max(opts.num_questions, 1) * 2]:
        if not q or not ans:
            outcome.drop("empty")
            continue
        if q.casefold() in seen:
            outcome.drop("duplicate")
            continue
        seen.add(q.casefold())
        outcome.candidates.append(Candidate(q, ans, lang))
    if len(outcome.candidates) > opts.num_questions and not opts.verify:
        outcome.drop("surplus", len(outcome.candidates) - opts.num_questions)
        outcome.candidates = outcome.candidates[: opts.num_questions]
    contexts = [c.text for c in task.chunks]
    if opts.verify and outcome.candidates:
        try:
            verdicts = await judge.verify_claims([c.answer for c in outcome.candidates], contexts, lang=lang)
        except EndpointError:
            raise
        except Exception as e:
            outcome.error = f"verify_claims failed: {type(e).__name__}: {e}"
            outcome.drop("unverified", len(outcome.candidates))
            outcome.candidates = []
            return outcome
        kept = [c for c, v in zip(outcome.candidates, verdicts, strict=True) if v.supported]
        outcome.drop("unsupported", len(outcome.candidates) - len(kept))
        if len(kept) > opts.num_questions:
            outcome.drop("surplus", len(kept) - opts.num_questions)
        outcome.candidates = kept[: opts.num_questions]
    if opts.drop_answerable_without_context and outcome.candidates:
        kept = []
        for c in outcome.candidates:
            if await _answerable_closed_book(judge, client, c, opts):
                outcome.drop("answerable_without_context")
            else:
                kept.append(c)
        outcome.candidates = kept
    return outcome


async def _answerable_closed_book(judge: Any, client: Any, c: Candidate, opts: SynthOptions) -> bool:
    try:
        prompt = load_testset_prompt("testset_closed_book", c.lang, opts.prompts_dir)
        reply = await ask(client, prompt, {"question": c.question})
        answer = str(reply.get("answer") or "").strip() if isinstance(reply, Mapping) else ""
        if not (isinstance(reply, Mapping) and reply.get("known")) or not answer:
            return False
        verdicts = await judge.verify_claims([c.answer], [answer], lang=c.lang)
        return bool(verdicts and verdicts[0].supported)
    except (ConfigError, EndpointError):  # the endpoint cannot serve any task: stop
        raise
    except Exception:
        return False  # cannot tell: keep the question
