"""The shipped example data, and the cases the local judge is held to, as the tests read them."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "rag_samples.jsonl"


def write_swapped_answers(path: Path) -> Path:
    """The example data with every answer swapped for the next sample's (an unfaithful run of the
    same questions): the comparison docs/compare.md quotes."""
    rows = [json.loads(line) for line in EXAMPLE.read_text(encoding="utf-8").splitlines()]
    path.write_text(
        "".join(
            json.dumps(dict(r, answer=rows[(i + 1) % len(rows)]["answer"])) + "\n" for i, r in enumerate(rows)
        ),
        encoding="utf-8",
    )
    return path


def right(case: Mapping[str, Any], p: float) -> bool:
    """A plain case reads right: supported >= 0.7, contradicted <= 0.3."""
    return p >= 0.7 if case["expected"] == "supported" else p <= 0.3


def support_probabilities(cases: Sequence[Mapping[str, Any]]) -> list[float]:
    """The local judge's support probability of each case's claim against its context."""
    from ragmeter.local import LocalJudge

    judge = LocalJudge()

    async def run() -> list[float]:
        out = []
        for case in cases:
            (v,) = await judge.verify_claims([case["claim"]], [case["context"]])
            assert v.confidence is not None
            out.append(v.confidence)
        return out

    return asyncio.run(run())
