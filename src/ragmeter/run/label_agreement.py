"""Agreement of a metric with a run's own labels (``ragmeter agreement RUN``), from its stored
scores; and the report shape that ``ragmeter agreement FILE`` (:mod:`ragmeter.run.agreement`)
shares. Both end in one function, :func:`~ragmeter.stats.agreement.agreement_summary`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ragmeter.run.view import RunView


@dataclass(frozen=True)
class AgreementReport:
    """Agreement of one metric with people's labels: of one judgement ``file`` (and aspect), or of
    a run's own labels (``run_id``; ``labels`` counts them by how they were drawn: ``random``,
    ``picked``). ``stats``: :func:`~ragmeter.stats.agreement.agreement_summary`'s keys."""

    file: str | None
    aspect: str
    metric: str
    judge: str
    kind: str  # "pair" | "binary" | "graded"
    stats: Mapping[str, Any]
    run_id: str | None = None
    labels: Mapping[str, int] | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "file": self.file,
            "aspect": self.aspect,
            "metric": self.metric,
            "judge": self.judge,
            "kind": self.kind,
        }
        if self.run_id is not None:
            out["run"] = self.run_id
            out["labels"] = dict(self.labels or {})
        return {**out, **dict(self.stats)}


def point_kind(label_kinds: Sequence[str]) -> str:
    """The kind of a group of point labels: graded when any is graded (a binary label is also a
    graded one), else binary."""
    return "graded" if "graded" in label_kinds else "binary"


def run_agreement(result: RunView, *, metric: str | None = None) -> list[AgreementReport]:
    """Agreement of each metric of ``result`` with the run's own labels (of ``metric`` only, when
    given): one report per metric that has labels, from the stored scores (nothing is re-run),
    with the labelled samples in the order of the run's draw: the order ``ragmeter labels export``
    writes, so ``agreement FILE`` on an exported file gives the same figures. Random and picked
    labels both count (``labels`` says how many of each); an invalid or missing score is counted
    in ``n_invalid``. Each disagreement also names the sample's ``idx`` and ``key``."""
    from ragmeter.log.labels import DEFAULT_SEED, draw_order
    from ragmeter.run.labels import export_id
    from ragmeter.stats.agreement import agreement_summary

    labels = result.labels
    seed = DEFAULT_SEED
    if result.store_dir is not None:
        from ragmeter.log.store import RunStore

        with RunStore(result.store_dir) as store:
            seed = store.label_draw(result.run_id).seed
    position = {idx: i for i, idx in enumerate(draw_order(result.keys, seed))}
    specs = {str(m.get("name")): m for m in result.meta.get("metrics", []) if isinstance(m, Mapping)}
    judge = str((result.meta.get("judge") or {}).get("name") or "")
    reports: list[AgreementReport] = []
    for name in result.metric_names:
        if metric is not None and name != metric:
            continue
        mine = sorted(
            (lab for lab in labels if lab.metric == name), key=lambda lab: (position[lab.idx], lab.idx)
        )
        if not mine:
            continue
        spec = specs.get(name, {})
        threshold = spec.get("threshold")
        scores = []
        for lab in mine:
            score = result.score(lab.idx, name)
            scores.append(score.value if score is not None and score.valid else None)
        ids = [export_id(result.keys[lab.idx]) for lab in mine]
        kind = point_kind([lab.label_kind for lab in mine])
        stats = agreement_summary(
            "point",
            kind,
            scores=scores,
            labels=[lab.value for lab in mine],
            threshold=0.5 if threshold is None else float(threshold),
            higher_is_better=bool(spec.get("higher_is_better", True)),
            ids=ids,
        )
        for d in stats["disagreements"]:
            lab = mine[d["position"]]
            d["idx"], d["key"], d["drawn"] = lab.idx, result.keys[lab.idx], lab.drawn
        counts = {"random": sum(1 for lab in mine if lab.drawn == "random"), "picked": 0}
        counts["picked"] = len(mine) - counts["random"]
        reports.append(
            AgreementReport(None, name, name, judge, kind, stats, run_id=result.run_id, labels=counts)
        )
    return reports


__all__ = ["AgreementReport", "point_kind", "run_agreement"]
