"""The offline judge: answers metric steps with embeddings and text analysis, no remote call.

Steps (``supports()`` lists exactly these):

- ``extract_claims``  rule-based sentence and clause splitting, English and Chinese; greetings,
  sign-offs and first-person refusals are dropped (:mod:`ragmeter.local.claims`)
- ``verify_claims``   each claim aligned to its best context sentences; similarity, term coverage,
  number / name / negation / antonym consistency and, for English claims, the entailment
  verifier's probability over the best-aligned windows -> a calibrated probability
  (:mod:`ragmeter.local.support`, :mod:`ragmeter.local.verifier`); ``supported = confidence >= 0.5``
- ``rate_sentences``  probability that each context sentence is needed for the question
- ``rate_chunks``     per chunk: probability that it supports at least one claim of the target
- ``assess_relevance`` the question's information needs met by the answer, minus padding and
  evasion (:mod:`ragmeter.local.relevance`)
- ``embed``           the local sentence embedder (USE multilingual v3 by default)
- ``standalone_question`` a conversation turn's message made standalone by a rule that carries the
  earlier turns' entities into a follow-up (:mod:`ragmeter.local.standalone`)
- ``rate_turn_relevance``, ``check_completeness``, ``check_retention`` a conversation's replies by the
  rules of :mod:`ragmeter.local.conversation` (``check_role_adherence`` is not done locally)
- ``check_goal`` an agent's final answer: addresses the request, supported by the tool results, matches
  the expected outcome (:mod:`ragmeter.local.agent`; ``check_tool_selection`` and ``check_topics`` are
  not done locally)

All embedding work of one step call is one ``embed`` call (batched, cached per text), and context
sentences are split the same way by every step, so faithfulness and context relevance on the same
sample encode each context sentence once. Every reason ends with "(local judge)" and every
``details`` mapping has ``"judge": "local"``.

The verifier is the packaged int8 ONNX cross-encoder by default; ``verifier=`` takes another
(:class:`~ragmeter.local.cross_encoder.CrossEncoderSupport`: a user's NLI model folder) or None (the
text and embedding features alone, through the plain combiner).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from ragmeter.errors import ConfigError, JudgeError, UnsupportedStepError
from ragmeter.judges.base import GeneratedQuestions, RelevanceAssessment, Verdict
from ragmeter.local import agent as _agent
from ragmeter.local import conversation as _conversation
from ragmeter.local.calibration import Combiner, load_combiner
from ragmeter.local.calibration_file import Calibration, check_features, load_calibration
from ragmeter.local.claims import extract_claims as _extract_claims
from ragmeter.local.embedders import Embedder, default_embedder
from ragmeter.local.features import analyze, positive_comparative
from ragmeter.local.relevance import (
    SENTENCE_RELEVANCE,
    informativeness,
    need_met,
    question_needs,
    sentence_relevance_features,
)
from ragmeter.local.standalone import standalone_question as _standalone_question
from ragmeter.local.support import (
    ENTAIL,
    VERIFY_BAND,
    ContextIndex,
    SupportFeatures,
    claim_support,
    explain,
    index_contexts,
    support_probability,
)
from ragmeter.local.verifier import Verifier, default_verifier
from ragmeter.statements import is_evasive, is_filler, is_refusal, split_hedge
from ragmeter.text import split_sentences

SUPPORTED_STEPS: frozenset[str] = frozenset(
    {
        "extract_claims",
        "verify_claims",
        "rate_sentences",
        "rate_chunks",
        "assess_relevance",
        "embed",
        "standalone_question",
        "rate_turn_relevance",
        "check_completeness",
        "check_retention",
        "check_goal",
    }
)
_HINT = "the local judge does not do this step; name an LLM judge with --judge"
MARK = "(local judge)"


class LocalJudge:
    """A :class:`~ragmeter.judges.base.Judge` that runs fully offline.

    ``embedder``: any :class:`~ragmeter.local.embedders.Embedder` (default: the shared USE model).
    ``verifier``: the entailment verifier of English claims: ``"packaged"`` (default, the shipped
    int8 ONNX cross-encoder), any :class:`~ragmeter.local.verifier.Verifier` (e.g.
    :class:`~ragmeter.local.cross_encoder.CrossEncoderSupport`, a user's NLI model folder), or None.
    ``verify_band``: the verifier reads the English claims whose feature-only probability (the
    packaged plain combiner's) lies in this band (default (0, 1): every English claim; a narrower
    band is faster).
    ``support``: a :class:`Combiner` replacing the packaged one (for instance one fitted with
    :func:`~ragmeter.local.calibration.fit_combiner` on rows of :meth:`claim_features`); it reads
    the verifier when it lists the ``entail`` feature, else it scores every claim without it.
    ``calibration``: a calibration file (or a loaded
    :class:`~ragmeter.local.calibration_file.Calibration`) that ``ragmeter calibrate`` fitted on a
    run's labels: its two combiners replace the packaged ones (not with ``support``). The file is
    checked, and refused when its features were made otherwise than this judge makes them.

    Which claims the verifier reads (``verify_band``) is decided by the packaged plain combiner
    whatever combiners score them, so a calibration fitted on features made that way finds them
    made the same way.
    """

    name = "local"

    def __init__(
        self,
        embedder: Embedder | None = None,
        *,
        verifier: Verifier | Literal["packaged"] | None = "packaged",
        verify_band: tuple[float, float] = VERIFY_BAND,
        support: Combiner | None = None,
        calibration: str | Path | Calibration | None = None,
    ) -> None:
        if not 0.0 <= verify_band[0] <= verify_band[1] <= 1.0:
            raise ConfigError(
                f"verify_band must be (low, high) with 0 <= low <= high <= 1, got {verify_band}"
            )
        self.verify_band = (float(verify_band[0]), float(verify_band[1]))
        self.embedder: Embedder = embedder if embedder is not None else default_embedder()
        self.calibration: Calibration | None = None
        if calibration is not None:
            if support is not None:
                raise ConfigError("give LocalJudge a calibration or a support combiner, not both")
            self.calibration = (
                calibration if isinstance(calibration, Calibration) else load_calibration(calibration)
            )
            support = self.calibration.support
        self.support: Combiner = support if support is not None else load_combiner("support")
        self.support_plain: Combiner = (
            self.calibration.support_plain
            if self.calibration is not None
            else support
            if support is not None and ENTAIL not in support.features
            else load_combiner("support_plain")
        )
        #: decides which claims the verifier reads (see the class docstring)
        self.verify_gate: Combiner = load_combiner("support_plain")
        self.verifier: Verifier | None = None
        if ENTAIL in self.support.features:  # a combiner without the feature has no use for it
            self.verifier = default_verifier() if verifier == "packaged" else verifier
        if self.calibration is not None:
            check_features(self.calibration, self.embedder, self.verifier)

    def supports(self, step: str) -> bool:
        return step in SUPPORTED_STEPS

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "embedder": self.embedder.describe()}
        rec = self.support.record
        out["support_combiner"] = {"name": self.support.name, "version": rec.get("version", "hand-set")}
        if self.calibration is not None:
            out["support_combiner"]["version"] = "calibrated"
            out["support_combiner"]["calibration"] = self.calibration.provenance()
        out["verifier"] = self.verifier.describe() if self.verifier is not None else None
        return out

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        return await self.embedder.embed(texts)

    async def _embed(self, texts: list[str]) -> np.ndarray:
        emb = np.asarray(await self.embedder.embed(texts), dtype=np.float32)
        if emb.shape[0] != len(texts):
            raise JudgeError(f"local embedder returned {emb.shape[0]} vectors for {len(texts)} texts")
        return emb

    # ------------------------------------------------------------------ claims

    async def extract_claims(self, text: str, *, question: str | None = None, lang: str = "en") -> list[str]:
        """Sentences and clauses of ``text`` that state something ([] when none does)."""
        return _extract_claims(text, question=question)

    async def verify_claims(
        self, claims: Sequence[str], contexts: Sequence[str], *, lang: str = "en"
    ) -> list[Verdict]:
        """One verdict per claim; ``confidence`` is the support probability."""
        claims = list(claims)
        if not claims:
            return []
        ctx = self._index(contexts)
        probs = await self._support(claims, ctx)
        out: list[Verdict] = []
        for claim, (p, best, values) in zip(claims, probs, strict=True):
            out.append(
                Verdict(
                    claim=claim,
                    supported=p >= 0.5,
                    reason=explain(values, p),
                    evidence=ctx.sentences[best] if best >= 0 else "",
                    confidence=p,
                )
            )
        return out

    def _index(self, contexts: Sequence[str]) -> ContextIndex:
        ctx = index_contexts([c for c in contexts if isinstance(c, str) and c.strip()])
        if not ctx.sentences:
            raise JudgeError("local judge: the contexts contain no text to verify claims against")
        return ctx

    async def _features(self, claims: Sequence[str], ctx: ContextIndex) -> list[SupportFeatures]:
        # a hedged claim is verified without its hedge ("I think it opened in 1925" reads as "It
        # opened in 1925"); the metrics take it off before they ask, this serves direct callers
        # and a negated comparative is read the positive way ("No hot desert is bigger than the
        # Sahara." as "The Sahara is bigger than any other hot desert.")
        bare = [positive_comparative(split_hedge(c).text or c) for c in claims]
        emb = await self._embed([*bare, *ctx.sentences])
        sims = emb[: len(bare)] @ emb[len(bare) :].T
        return await claim_support(
            bare, ctx, sims, self.verifier, self.verify_gate, self.verify_band, embed=self._embed
        )

    async def claim_features(self, claims: Sequence[str], contexts: Sequence[str]) -> list[dict[str, float]]:
        """The named features the support combiner reads for each claim against ``contexts``
        (``entail`` included for the claims the verifier reads): the rows a combiner is fitted on
        (:func:`ragmeter.local.calibration.fit_combiner`, ``scripts/train_local_combiner.py``,
        :mod:`ragmeter.local.refit`)."""
        claims = list(claims)
        if not claims:
            return []
        return [dict(f.values) for f in await self._features(claims, self._index(contexts))]

    async def _support(
        self, claims: list[str], ctx: ContextIndex
    ) -> list[tuple[float, int, dict[str, float]]]:
        feats = await self._features(claims, ctx)
        return [(support_probability(f, self.support, self.support_plain), f.best, f.values) for f in feats]

    # ------------------------------------------------------------------ relevance

    async def rate_sentences(
        self, question: str, sentences: Sequence[str], *, lang: str = "en"
    ) -> list[float]:
        """Probability that each sentence is needed to answer ``question``."""
        sents = list(sentences)
        if not sents:
            return []
        needs = question_needs(question)
        emb = await self._embed([question, *sents])
        sims = emb[1:] @ emb[0]
        max_sim = float(np.max(sims)) if len(sims) else 0.0
        out: list[float] = []
        for s, sim in zip(sents, sims.tolist(), strict=True):
            if not s.strip():
                out.append(0.0)
                continue
            feats = sentence_relevance_features(question, s, float(sim), max_sim, needs)
            out.append(min(max(SENTENCE_RELEVANCE.probability(feats), 0.0), 1.0))
        return out

    async def rate_chunks(
        self, question: str, chunks: Sequence[str], target: str, *, lang: str = "en"
    ) -> list[Verdict]:
        """Per chunk: was it useful to arrive at ``target``? ``confidence`` = the highest support
        probability the chunk alone gives to a claim of the target."""
        chunks = list(chunks)
        if not chunks:
            return []
        claims = _extract_claims(target) or [target.strip()]
        if not claims[0]:
            raise JudgeError("local judge: rate_chunks needs a non-empty target (reference or answer)")
        out: list[Verdict] = []
        for chunk in chunks:
            if not chunk.strip():
                out.append(
                    Verdict(claim=chunk, supported=False, reason=f"empty chunk {MARK}", confidence=0.0)
                )
                continue
            ctx = index_contexts([chunk])
            probs = await self._support(claims, ctx)
            k = int(np.argmax([p for p, _, _ in probs]))
            p, best, values = probs[k]
            out.append(
                Verdict(
                    claim=chunk,
                    supported=p >= 0.5,
                    reason=f'best supports "{claims[k][:80]}": ' + explain(values, p),
                    evidence=ctx.sentences[best] if best >= 0 else "",
                    confidence=p,
                )
            )
        return out

    async def assess_relevance(self, question: str, answer: str, *, lang: str = "en") -> RelevanceAssessment:
        """Does ``answer`` meet the information needs of ``question``, without padding or evasion?

        score = needs_met * (0.75 + 0.25 * informativeness) * (1 - 0.5 * padding) * (1 - evasion);
        an answer whose every sentence is a refusal or evasion is noncommittal and scores 0.
        """
        if not question.strip() or not answer.strip():
            raise JudgeError("local judge: assess_relevance needs a non-empty question and answer")
        sents = [s for s in split_sentences(answer) if not is_filler(s)] or [answer.strip()]
        evasive = [is_evasive(s) or is_refusal(s) for s in sents]
        needs = question_needs(question)
        need_texts = [n.text for n in needs]
        emb = await self._embed([question, *need_texts, *sents])
        q_vec = emb[0]
        n_vecs = emb[1 : 1 + len(needs)]
        s_vecs = emb[1 + len(needs) :]
        sims_q = s_vecs @ q_vec
        sims_n = n_vecs @ s_vecs.T  # (needs, sentences)
        substantive = [i for i, e in enumerate(evasive) if not e]
        sub_sents = [sents[i] for i in substantive]
        met: list[float] = []
        used: frozenset[str] = frozenset()
        for k, need in enumerate(needs):
            m, values = need_met(need, sub_sents, [float(sims_n[k, i]) for i in substantive], question, used)
            met.append(m)
            used = used | values
        needs_met = float(np.mean(met)) if met else 0.0
        qf = analyze(question)
        q_terms = qf.terms
        pad = []
        for i in substantive:
            sf = analyze(sents[i])
            related = float(sims_q[i]) >= 0.35 or any(t in sf.terms for t in q_terms)
            pad.append(0.0 if related else 1.0)
        padding = float(np.mean(pad)) if pad else 0.0
        a_terms = (
            frozenset().union(*(analyze(sents[i]).terms for i in substantive)) if substantive else frozenset()
        )
        info = informativeness(a_terms, q_terms)
        evasion = sum(evasive) / len(sents)
        noncommittal = not substantive
        score = (
            0.0 if noncommittal else needs_met * (0.75 + 0.25 * info) * (1 - 0.5 * padding) * (1 - evasion)
        )
        score = min(max(score, 0.0), 1.0)
        details = {
            "judge": "local",
            "needs": [
                {"need": n.text, "type": n.answer_type, "met": round(m, 4)}
                for n, m in zip(needs, met, strict=True)
            ],
            "needs_met": needs_met,
            "informativeness": info,
            "padding": padding,
            "evasive_share": evasion,
        }
        if noncommittal:
            reason = f"the answer evades the question {MARK}"
        else:
            unmet = [n.text for n, m in zip(needs, met, strict=True) if m < 0.5]
            reason = f"{len(needs) - len(unmet)} of {len(needs)} information needs met"
            if unmet:
                reason += "; unmet: " + "; ".join(f'"{u[:60]}"' for u in unmet[:3])
            if padding > 0:
                reason += f"; {padding:.0%} of the answer is off-topic"
            if evasion > 0:
                reason += f"; {evasion:.0%} of the answer is evasive"
            reason += f" {MARK}"
        return RelevanceAssessment(score=score, noncommittal=noncommittal, reason=reason, details=details)

    # ------------------------------------------------------------------ conversations

    async def standalone_question(
        self, question: str, history: Sequence[tuple[str, str]], *, lang: str = "en"
    ) -> str:
        """``question`` with the entities of the earlier turns carried into it (a rule, no model)."""
        return _standalone_question(question, history, lang=lang)

    async def rate_turn_relevance(self, dialogue: Sequence[tuple[str, str]], *, lang: str = "en") -> list[Any]:
        """Each reply's relevance to its exchange's message made standalone (assess_relevance)."""
        return await _conversation.rate_turn_relevance(self, dialogue)

    async def check_completeness(self, dialogue: Sequence[tuple[str, str]], *, lang: str = "en") -> list[Verdict]:
        """The user's requests, each met to the degree of its best later reply."""
        return await _conversation.check_completeness(self, dialogue)

    async def check_retention(self, dialogue: Sequence[tuple[str, str]], *, lang: str = "en") -> Any:
        """The user's first-person facts; replies that restate one otherwise or ask for it again."""
        return await _conversation.check_retention(self, dialogue)

    async def check_role_adherence(self, role: str, dialogue: Sequence[tuple[str, str]], *, lang: str = "en") -> Any:
        raise UnsupportedStepError(self.name, "check_role_adherence", _HINT)

    # ------------------------------------------------------------------ agents

    async def check_goal(self, messages: Sequence[Any], *, outcome: str | None = None, lang: str = "en") -> Verdict:
        """The weakest of: the final answer addresses the request, is supported by the tool
        results, and (with ``outcome``) holds the expected outcome."""
        return await _agent.check_goal(self, messages, outcome, lang)

    async def check_tool_selection(self, messages: Sequence[Any], tools: Sequence[Any], *, lang: str = "en") -> Any:
        raise UnsupportedStepError(self.name, "check_tool_selection", _HINT)

    async def check_topics(self, messages: Sequence[Any], topics: Sequence[str], *, lang: str = "en") -> Any:
        raise UnsupportedStepError(self.name, "check_topics", _HINT)

    # ------------------------------------------------------------------ not done locally

    async def generate_questions(self, answer: str, *, n: int = 3, lang: str = "en") -> GeneratedQuestions:
        raise UnsupportedStepError(self.name, "generate_questions", _HINT)

    async def grade(self, rubric: Any, inputs: Any, *, lang: str = "en") -> Any:
        raise UnsupportedStepError(self.name, "grade", _HINT)

    async def compare(self, question: str, answer_a: str, answer_b: str, **kwargs: Any) -> Any:
        raise UnsupportedStepError(self.name, "compare", _HINT)

    async def aclose(self) -> None:
        return None

    def __repr__(self) -> str:
        return f"LocalJudge(embedder={self.embedder!r})"
