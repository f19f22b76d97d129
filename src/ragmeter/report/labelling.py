"""The labelling page of ``ragmeter view``: people label a run's samples, one at a time, in the
order of the run's seeded draw (:mod:`ragmeter.log.labels`), and each label is stored the moment
it is given. Independent of HTTP: :mod:`ragmeter.report.server` routes to :class:`LabelDesk`.

What it serves, for a run and one of its metrics:

- :meth:`LabelDesk.page`: the page (``assets/label.js``), with the first sample to show;
- :meth:`LabelDesk.sample`: one sample as JSON (question, answer, reference, contexts, its place in
  the draw, its label) and the progress of the metric's labelling. **Blind**: the judge's score
  of a sample is sent only once the sample has a label for the metric, unless ``blind`` is off;
- :meth:`LabelDesk.post`: store a label (``action: "label"``) or undo this page's last one
  (``action: "undo"``).

**How a label is drawn** (decided here, not by the page): a label is ``random`` when the labeller
reached the sample along the draw (``mode: "draw"``: the page opened at the draw's next sample,
then moved by labelling, skipping, the arrows or ``n``), and ``picked`` when the page was opened
on that sample out of the draw's order (``mode: "pick"``: a link with ``at=IDX``, e.g. from the
report) -- except that a picked sample that is the draw's next sample, or that already has a
random label, is labelled ``random`` (it is the sample the draw would show; correcting a label
does not change how its sample was drawn). Moving along the draw past unlabelled samples is
skipping them: the store counts the labels behind a skipped sample as held back, so no walk can
bias the labelled prefix that estimates use.

**Undo** restores exactly what the store held before this page's last write (the label it
replaced, or none), and is refused when the label has changed since (another tab).

**Progress**: the labelled prefix's size, and how many more labels a 95% interval of ±0.10
needs (:mod:`ragmeter.stats.sample_size`): the labels-only bound until the calibrated estimate
has :data:`~ragmeter.run.calibrated.MIN_LABELS` labels on the prefix and that many on each side
of 0.5, then the projection of the calibrated (PPI++) interval itself, whose half-width now is
shown too; the held-back, skipped and picked labels are said as such.
"""

from __future__ import annotations

import dataclasses
import secrets
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ragmeter.dataset.messages import ChatMessage
from ragmeter.errors import ConfigError, RagmeterError, RunError
from ragmeter.log.labels import DrawProgress, Label, draw_progress
from ragmeter.log.store import RunInfo, RunStore
from ragmeter.metrics.descriptions import description_languages, load_descriptions
from ragmeter.report.page import render_page
from ragmeter.run.calibrated import MIN_LABELS, calibrated_estimate, judge_predictions
from ragmeter.stats.sample_size import labels_needed, ppi_labels_needed

#: the interval half-width the progress counts labels for
TARGET_HALF_WIDTH = 0.10
#: the values the page's keys give: 1 yes, h partly (graded), 0 no
LABEL_VALUES = (0.0, 0.5, 1.0)
#: undo steps kept per page, and pages remembered
UNDO_DEPTH = 500
UNDO_PAGES = 64
#: characters of a judge's reason sent to the page
REASON_CHARS = 4000
#: samples (the first of the draw) whose questions choose the page's language when none is asked
LANG_SAMPLES = 20


class LabelRequestError(ConfigError):
    """A request the labelling page cannot carry out (a bad field, an unknown sample); HTTP 400."""


class UndoConflict(RagmeterError):
    """The label to undo has changed since this page wrote it; HTTP 409."""


@dataclass(frozen=True)
class _Write:
    run_id: str
    metric: str
    idx: int
    before: Label | None
    after: Label
    mode: str


def _metric_specs(info: RunInfo) -> dict[str, Mapping[str, Any]]:
    return {str(m.get("name")): m for m in info.meta.get("metrics", []) if isinstance(m, Mapping)}


def _registered_name(name: str) -> str:
    """The built-in metric a run's metric name stands for (``ndcg@5`` -> ``ndcg_at_k``; an alias
    -> its target), or ``name`` itself."""
    from ragmeter.metrics.registry import get_metric

    try:
        return str(type(get_metric(name)).name)
    except (RagmeterError, TypeError, ValueError):
        return name


def metric_question(name: str, lang: str) -> dict[str, str | None]:
    """What the page asks about metric ``name`` in ``lang``: ``question``, ``term`` (the metric's
    name in that language, None when it has none) and ``description``."""
    texts = load_descriptions(lang)
    key = name if name in texts.metrics else _registered_name(name)
    entry = texts.describe(key)
    return {"question": texts.label_question(key), "term": entry.term, "description": entry.description}


def _user_text(messages: Sequence[ChatMessage] | None) -> str:
    return " ".join(m.content for m in messages or () if m.role == "user" and m.content)


def _page_lang(lang: str | None, questions: Sequence[str]) -> str:
    if lang:
        if lang not in description_languages():
            raise LabelRequestError(f"lang must be one of {', '.join(description_languages())}, got {lang!r}")
        return lang
    from ragmeter.text import detect_lang

    return detect_lang(" ".join(q for q in questions[:20] if q))


def _int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise LabelRequestError(f"{what} must be a sample index (a whole number), got {value!r}")
    try:
        return int(value)
    except ValueError:
        raise LabelRequestError(f"{what} must be a sample index (a whole number), got {value!r}") from None


def _messages(messages: Sequence[ChatMessage] | None) -> list[dict[str, Any]] | None:
    """A conversation's (or a turn's earlier) messages as the page shows them: role, text, the
    contexts an assistant message was given, the tool a tool message comes from."""
    if messages is None:
        return None
    return [
        {"role": m.role, "content": m.content, "contexts": list(m.contexts), "name": m.name} for m in messages
    ]


class LabelDesk:
    """The labelling page's data and writes over one run store. ``token``: the secret every write
    must carry (checked by the server); None makes the page read-only."""

    def __init__(self, store_dir: str | Path, token: str | None) -> None:
        self.store_dir = Path(store_dir)
        self.token = token
        self._undo: OrderedDict[str, list[_Write]] = OrderedDict()
        self._lock = threading.Lock()

    # ---------------------------------------------------------------- reading

    def _run(self, store: RunStore, run: str, metric: str | None) -> tuple[RunInfo, str, Mapping[str, Any]]:
        info = store.get_run(run)
        specs = _metric_specs(info)
        if not specs:
            raise RunError(f"run {info.run_id} has no metrics to label")
        name = metric or next(iter(specs))
        if name not in specs:
            raise RunError(f"run {info.run_id} has no metric {name!r}; its metrics: {', '.join(specs)}")
        return info, name, specs[name]

    def _progress(self, store: RunStore, run_id: str, metric: str) -> tuple[DrawProgress, dict[str, Any]]:
        """Where the labelling of ``metric`` stands (:class:`DrawProgress`), and the page's
        progress: that, the calibrated interval's half-width now (from :data:`MIN_LABELS` labels
        on the prefix) and how many more labels ±:data:`TARGET_HALF_WIDTH` needs."""
        draw = store.label_draw(run_id)
        scores = store.score_values(run_id, metric)
        mine = store.list_labels(run_id, metric)
        progress = draw_progress(metric, draw.seed, draw.order, mine, eligible=scores)
        values = {lab.idx: lab.value for lab in mine if lab.drawn == "random"}
        y = [values[i] for i in progress.prefix]
        calibrated = None
        if len(y) >= MIN_LABELS:
            est = calibrated_estimate(metric, scores, mine, store.load_keys(run_id), draw.seed)
            if est is not None and est["ci95"] is not None:
                low, high = est["ci95"]
                few = min(sum(1 for v in y if v >= 0.5), sum(1 for v in y if v < 0.5))
                calibrated = {
                    "half_width": (high - low) / 2,
                    "few_of_a_kind": few if est["warning"] else None,
                }
        pred = judge_predictions(scores)
        prefix = set(progress.prefix)
        rest = [pred[i] for i in progress.order if i not in prefix]
        if calibrated is not None and calibrated["few_of_a_kind"] is None and rest:
            needed = ppi_labels_needed(y, [pred[i] for i in progress.prefix], rest, TARGET_HALF_WIDTH)
        else:  # the labels-only bound, and never fewer than the calibrated estimate needs
            needed = labels_needed(y, TARGET_HALF_WIDTH, n_population=len(progress.order))
            short = min(MIN_LABELS, len(progress.order)) - len(y)
            if short > needed.more and needed.reachable:
                needed = dataclasses.replace(needed, n_needed=len(y) + short, more=short)
        first_skipped = progress.skipped[0] if progress.skipped else None
        data = {
            **progress.to_dict(),
            "needed": needed.to_dict(),
            "calibrated": calibrated,
            "last_in_draw": progress.order[-1] if progress.order else None,
            "first_skipped": first_skipped,
            "first_skipped_position": None
            if first_skipped is None
            else progress.order.index(first_skipped) + 1,
        }
        return progress, data

    def _sample(
        self, store: RunStore, run_id: str, metric: str, idx: int, progress: DrawProgress, blind: bool
    ) -> dict[str, Any]:
        sample = store.load_sample(run_id, idx)
        if sample is None:
            raise LabelRequestError(f"run {run_id} has no sample {idx}")
        label = store.get_label(run_id, idx, metric)
        order = progress.order
        in_draw = idx in order
        pos = order.index(idx) if in_draw else None
        hidden = blind and label is None
        return {
            "idx": idx,
            "id": sample.id,
            "question": sample.question,
            "answer": sample.answer,
            "reference": sample.reference,
            "contexts": list(sample.contexts),
            "history": _messages(sample.history),
            "messages": _messages(sample.messages),
            "in_draw": in_draw,
            "position": None if pos is None else pos + 1,
            "prev": None if pos is None or pos == 0 else order[pos - 1],
            "next": None if pos is None or pos + 1 >= len(order) else order[pos + 1],
            "next_unlabelled": progress.next_after(idx) if in_draw else progress.next_idx,
            "label": None if label is None else label.to_dict(),
            "score_hidden": hidden,
            "score": None if hidden else self._score(store, run_id, idx, metric),
        }

    @staticmethod
    def _score(store: RunStore, run_id: str, idx: int, metric: str) -> dict[str, Any] | None:
        row = store.load_score(run_id, idx, metric)
        if row is None:
            return None
        s = row.score
        reason = s.reason or ""
        return {
            "value": s.value,
            "reason": reason[:REASON_CHARS] + ("\u2026" if len(reason) > REASON_CHARS else ""),
            "error": None if s.error is None else {"kind": s.error.kind, "message": s.error.message},
        }

    def sample(
        self, run: str, metric: str | None, idx: int | str | None, blind: bool = True
    ) -> dict[str, Any]:
        """The progress of ``metric``'s labelling and the sample ``idx`` (default: the draw's next
        sample; ``sample`` is None when every sample of the draw is labelled)."""
        with RunStore(self.store_dir) as store:
            info, name, _ = self._run(store, run, metric)
            return self._payload(store, info.run_id, name, idx, blind)

    def _payload(
        self, store: RunStore, run_id: str, metric: str, idx: int | str | None, blind: bool
    ) -> dict[str, Any]:
        progress, pdata = self._progress(store, run_id, metric)
        at = progress.next_idx if idx is None or idx == "" else _int(idx, "idx")
        return {
            "metric": metric,
            "progress": pdata,
            "sample": None if at is None else self._sample(store, run_id, metric, at, progress, blind),
        }

    def page(
        self,
        run: str,
        metric: str | None,
        *,
        lang: str | None = None,
        blind: bool = True,
        at: str | None = None,
        writable: bool = True,
    ) -> str:
        """The labelling page of ``run``'s ``metric`` (default: its first), in ``lang`` (default:
        the language of the run's questions), opened on sample ``at`` (default: the draw's next)."""
        with RunStore(self.store_dir) as store:
            info, name, spec = self._run(store, run, metric)
            start = self._payload(store, info.run_id, name, at, blind)
            if lang is None:  # the language of the first questions of the draw
                texts_seen = []
                for idx in store.label_draw(info.run_id).order[:LANG_SAMPLES]:
                    sample = store.load_sample(info.run_id, idx)
                    if sample is not None:
                        texts_seen.append(sample.question or _user_text(sample.messages))
                lang = _page_lang(None, texts_seen)
            else:
                lang = _page_lang(lang, [])
        texts = load_descriptions(lang)
        ask = metric_question(name, lang)
        specs = _metric_specs(info)
        page_id = secrets.token_urlsafe(12)
        data = {
            "kind": "label",
            "lang": lang,
            "other_lang": next((x for x in description_languages() if x != lang), lang),
            "texts": dict(texts.label_page),
            "run": {
                "run_id": info.run_id,
                "status": info.status,
                "source": info.meta.get("source"),
                "report": "/run/" + quote(info.run_id, safe=""),
            },
            "metric": {
                "name": name,
                **ask,
                "threshold": spec.get("threshold"),
                "higher_is_better": bool(spec.get("higher_is_better", True)),
                "requires": list(spec.get("requires") or []),
            },
            "metrics": [{"name": n, "term": metric_question(n, lang)["term"]} for n in specs],
            "blind": bool(blind),
            "mode": "pick" if at not in (None, "") else "draw",
            "token": self.token if writable else None,
            "page": page_id,
            "target_half_width": TARGET_HALF_WIDTH,
            "start": start,
        }
        title = texts.label_page.get("title", "{metric}").replace("{metric}", ask["term"] or name)
        return render_page(
            f"{title} · {info.run_id}",
            data,
            scripts=("label.js",),
            styles=("label.css",),
            connect=True,
            lang=lang,
        )

    # ---------------------------------------------------------------- writing

    def post(self, run: str, body: Mapping[str, Any]) -> dict[str, Any]:
        """Carry out one write of the page: ``{"action": "label", "metric", "idx", "value",
        "mode": "draw"|"pick", "labeller", "page"}`` or ``{"action": "undo", "metric", "page"}``."""
        action = body.get("action")
        page = body.get("page")
        if not isinstance(page, str) or not page:
            raise LabelRequestError("a write names its page (the 'page' field of the page's data)")
        metric = body.get("metric")
        if not isinstance(metric, str) or not metric:
            raise LabelRequestError("a write names its metric")
        if action == "label":
            return self._label(run, metric, body, page)
        if action == "undo":
            return self._undo_last(run, metric, page)
        raise LabelRequestError(f"action must be 'label' or 'undo', got {action!r}")

    def _label(self, run: str, metric: str, body: Mapping[str, Any], page: str) -> dict[str, Any]:
        value = body.get("value")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or float(value) not in LABEL_VALUES:
            raise LabelRequestError(f"value must be 1, 0.5 or 0, got {value!r}")
        mode = body.get("mode", "draw")
        if mode not in ("draw", "pick"):
            raise LabelRequestError(f"mode must be 'draw' or 'pick', got {mode!r}")
        labeller = body.get("labeller")
        if labeller is not None and not isinstance(labeller, str):
            raise LabelRequestError(f"labeller must be text, got {labeller!r}")
        labeller = (labeller or "").strip()[:200] or None
        idx = _int(body.get("idx"), "idx")
        with RunStore(self.store_dir) as store:
            info, name, _ = self._run(store, run, metric)
            rid = info.run_id
            progress = store.draw_progress(rid, name)
            if idx not in progress.order:
                if store.load_sample(rid, idx) is None:
                    raise LabelRequestError(f"run {rid} has no sample {idx}")
                raise LabelRequestError(f"sample {idx} has no score for {name}: it is not labelled for it")
            before = store.get_label(rid, idx, name)
            random = mode == "draw" or idx == progress.next_idx or idx in progress.random_idx
            with self._lock:  # one write and its undo entry at a time
                after = store.put_label(
                    rid, idx, name, float(value), drawn="random" if random else "picked", labeller=labeller
                )
                self._remember(page, _Write(rid, name, idx, before, after, mode))
            progress, pdata = self._progress(store, rid, name)
            return {
                "label": after.to_dict(),
                "replaced": None if before is None else before.to_dict(),
                "score": self._score(store, rid, idx, name),
                "next_unlabelled": progress.next_after(idx),
                "progress": pdata,
            }

    def _remember(self, page: str, write: _Write) -> None:
        stack = self._undo.setdefault(page, [])
        self._undo.move_to_end(page)
        stack.append(write)
        del stack[:-UNDO_DEPTH]
        while len(self._undo) > UNDO_PAGES:
            self._undo.popitem(last=False)

    def _undo_last(self, run: str, metric: str, page: str) -> dict[str, Any]:
        with RunStore(self.store_dir) as store:
            info, name, _ = self._run(store, run, metric)
            rid = info.run_id
            with self._lock:
                stack = [w for w in self._undo.get(page, []) if (w.run_id, w.metric) == (rid, name)]
                if not stack:
                    _, pdata = self._progress(store, rid, name)
                    return {"undone": None, "progress": pdata}
                last = stack[-1]
                current = store.get_label(rid, last.idx, name)
                if current != last.after:
                    raise UndoConflict(
                        f"the label of sample {last.idx} changed since this page wrote it (another tab?); "
                        "nothing was undone"
                    )
                if last.before is None:
                    store.delete_label(rid, last.idx, name)
                else:
                    store.put_labels(rid, [last.before])
                self._undo[page].remove(last)
            _, pdata = self._progress(store, rid, name)
            return {
                "undone": {
                    "idx": last.idx,
                    "mode": last.mode,
                    "label": None if last.before is None else last.before.to_dict(),
                },
                "progress": pdata,
            }


__all__ = ["LabelDesk", "LabelRequestError", "UndoConflict", "metric_question"]
