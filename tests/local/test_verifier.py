"""The packaged entailment verifier (int8 ONNX) and its use by the local judge."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

import ragmeter
from ragmeter.errors import ConfigError
from ragmeter.local import LocalJudge, OnnxVerifier, Verifier, default_verifier
from ragmeter.local.support import ENTAIL, VERIFY_BAND

# Probabilities of the trained checkpoint in torch (fp32), printed by scripts/export_verifier.py.
# The packaged model is int8 (per-channel weights, activations quantised per tensor at run time):
# on 1,000 held-out NLI pairs its probabilities differ from torch's by 0.019 on average (at most
# 0.42) and 98.6% of its decisions at 0.5 are torch's (training_record.json, "export"). The
# runtime reads each pair on its own (ragmeter.local.verifier); so read, the largest difference on
# these pairs is 0.071 (the negation pair); the tolerance is 0.1.
REFERENCE: list[tuple[str, str, float]] = [
    (
        "The Eiffel Tower was designed by the engineering company of Gustave Eiffel.",
        "Gustave Eiffel's company designed the tower.",
        0.9753,
    ),
    (
        "The Eiffel Tower was designed by the engineering company of Gustave Eiffel.",
        "The tower was designed by Thomas Edison.",
        0.0049,
    ),
    ("The Eiffel Tower is a wrought-iron lattice tower in Paris.", "The tower is made of concrete.", 0.0407),
    ("The company was founded in 1998 and employs 300 people.", "The company was founded in 1998.", 0.9822),
    ("The company was founded in 1998 and employs 300 people.", "The company was founded in 2005.", 0.0048),
    ("The bridge is not open to cars.", "Cars can use the bridge.", 0.2423),
    ("Photosynthesis converts light energy into chemical energy.", "The museum opens at nine.", 0.0046),
    ("She won the race in March.", "She did not win the race.", 0.0197),
]
TOL = 0.1

_LONG = (
    "The old harbour town grew around a fishing port that was first recorded in 1312. Its stone "
    "lighthouse, built in 1868 by a local engineer named Elsa Marten, still guides boats past the reef. "
    "In the nineteenth century the town became known for its shipyards, which launched more than two "
    "hundred wooden schooners before the last yard closed in 1931. Today about 4,800 people live there, "
    "and the summer ferry to the islands carries close to ninety thousand passengers a year. The town "
    "hall, rebuilt after a fire in 1902, houses a small museum about the shipwrights and their tools."
)
# The packaged model's probabilities before its graph lost the attention mask (scripts/verifier_graph.py),
# read by the runtime on x86-64 (AVX-512 VNNI): the rewrite gives the same logits bit for bit, so here they
# are equal; the tolerance, 1e-4, leaves room for another CPU's float kernels only (on a CPU without
# VNNI the int8 products are exact through session.x64quantprecision: see the test below). The two long pairs
# are cut at 128 tokens (the second claim's evidence is past the cut).
_PINNED_REFERENCE = [
    0.9685303182933197, 0.005690699442472874, 0.032855398512082176, 0.9791114203570391,
    0.004622746626071295, 0.31324172904446057, 0.004609524046189806, 0.028526590982663604,
]  # fmt: skip
PINNED: list[tuple[str, str, float]] = [
    *((p, h, want) for (p, h, _), want in zip(REFERENCE, _PINNED_REFERENCE, strict=True)),
    (_LONG, "The lighthouse was built in 1868.", 0.8710176575242631),
    (_LONG, "The town hall houses a museum about shipwrights.", 0.7686554205033812),
    (
        "The summer ferry carries close to ninety thousand passengers a year.",
        "The ferry carries about 90,000 passengers a year.",
        0.9560981354691565,
    ),
]


@pytest.fixture(scope="module")
def verifier() -> OnnxVerifier:
    return default_verifier()


def test_loads_from_the_installed_package_without_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_network(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the verifier tried to open a network connection")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    v = OnnxVerifier()
    package = Path(ragmeter.__file__).resolve().parent
    assert v.path.resolve().is_relative_to(package)
    assert (v.path / "model.onnx").stat().st_size <= 25 * 1024 * 1024
    assert v.entailment_sync(["The cat sat on the mat."], ["A cat sat on a mat."])[0] > 0.5
    record = json.loads((v.path / "training_record.json").read_text("utf-8"))
    assert record["script"] == "scripts/train_verifier.py" and record["data"]["sha256"]


def test_matches_the_training_framework(verifier: OnnxVerifier) -> None:
    assert len(REFERENCE) >= 6
    got = verifier.entailment_sync([p for p, _, _ in REFERENCE], [h for _, h, _ in REFERENCE])
    for (p, h, want), have in zip(REFERENCE, got, strict=True):
        assert abs(have - want) <= TOL, (p, h, want, have)


def test_the_graph_without_the_mask_reads_as_before(verifier: OnnxVerifier) -> None:
    got = verifier.entailment_sync([p for p, _, _ in PINNED], [h for _, h, _ in PINNED])
    assert got == pytest.approx([want for _, _, want in PINNED], abs=1e-4)


def test_reads_the_same_on_cpus_without_vnni(verifier: OnnxVerifier) -> None:
    """Without VNNI, onnxruntime's uint8 x int8 kernels saturate 16-bit sums (up to 0.097 on the
    pinned pairs on an AVX2-only AMD EPYC); the option makes them read the weights as uint8, exactly."""
    _, session = verifier._load()
    assert session.get_session_options().get_session_config_entry("session.x64quantprecision") == "1"


def test_a_model_without_a_mask_reads_one_pair_at_a_time(verifier: OnnxVerifier) -> None:
    _, session = verifier._load()
    assert {i.name for i in session.get_inputs()} == {"input_ids", "token_type_ids"}
    with pytest.raises(ConfigError, match=r"no attention_mask input.*batch_size must be 1"):
        OnnxVerifier(batch_size=2).entailment_sync(["a"], ["b"])


def test_entailment_contradiction_unrelated_order(verifier: OnnxVerifier) -> None:
    premise = "The company was founded in 1998 by Anna Lopez and is based in Denver."
    ent, con, unrel = verifier.entailment_sync(
        [premise] * 3,
        ["The company is based in Denver.", "The company is based in Chicago.", "The river is long."],
    )
    # a binary entailment model: the entailed claim on top, the other two both low
    assert ent > 0.5 > max(con, unrel)


async def test_calls_in_flight_are_batched_and_cached(verifier: OnnxVerifier) -> None:
    pairs = [("The river is 300 km long.", f"The river is {n} km long.") for n in (100, 200, 300, 400)]
    calls: list[int] = []
    run = verifier._run

    def counting(batch: list[tuple[str, str]]) -> list[float]:
        calls.append(len(batch))
        return run(batch)

    v = OnnxVerifier(cache_size=0)
    v._run = counting  # type: ignore[method-assign]
    results = await asyncio.gather(*(v.entailment([p], [h]) for p, h in pairs))
    assert sum(calls) == len(pairs) and len(calls) < len(pairs)
    sync = verifier.entailment_sync([p for p, _ in pairs], [h for _, h in pairs])
    assert [r[0] for r in results] == pytest.approx(sync, abs=1e-6)
    assert max(sync) == sync[2]  # 300 km


def test_bad_input_and_bad_folder(tmp_path: Path, verifier: OnnxVerifier) -> None:
    with pytest.raises(ValueError, match="2 premises for 1 hypotheses"):
        verifier.entailment_sync(["a", "b"], ["c"])
    with pytest.raises(ConfigError, match=r"has no model\.onnx"):
        OnnxVerifier(tmp_path)
    (tmp_path / "model.onnx").write_bytes(b"not a model")
    (tmp_path / "tokenizer.json").write_text("{}", "utf-8")
    with pytest.raises(ConfigError, match="cannot load the verifier"):
        OnnxVerifier(tmp_path).entailment_sync(["a"], ["b"])


class _Recording:
    """A verifier that answers ``prob`` (by default 0.9 for every pair) and records the pairs
    of each call."""

    name = "recording"

    def __init__(self, prob: Any = 0.9) -> None:
        self.prob = prob
        self.calls: list[list[tuple[str, str]]] = []

    @property
    def seen(self) -> list[tuple[str, str]]:
        return [pair for call in self.calls for pair in call]

    def entailment_sync(self, premises: Sequence[str], hypotheses: Sequence[str]) -> list[float]:
        pairs = list(zip(premises, hypotheses, strict=True))
        self.calls.append(pairs)
        return [self.prob(p, h) if callable(self.prob) else self.prob for p, h in pairs]

    async def entailment(self, premises: Sequence[str], hypotheses: Sequence[str]) -> list[float]:
        return self.entailment_sync(premises, hypotheses)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name}


CTX = [
    "The tower is in Paris. It was completed in 1889. It is 330 metres tall. Bananas are yellow.",
    "埃菲尔铁塔位于巴黎。",
]


async def test_every_english_claim_is_read_through_its_best_sentence_first() -> None:
    rec = _Recording(0.95)  # confident: the first premise settles the claim
    assert isinstance(rec, Verifier)
    judge = LocalJudge(verifier=rec)
    assert judge.verify_band == VERIFY_BAND == (0.0, 1.0)  # every English claim, by default
    assert ENTAIL in judge.support.features and ENTAIL not in judge.support_plain.features
    en, zh = await judge.verify_claims(["The tower was completed in 1889.", "铁塔位于巴黎。"], CTX)
    assert {h for _, h in rec.seen} == {"The tower was completed in 1889."}  # the Chinese claim is not read
    # one call, one premise: the sentence that states it, with the one before it ("It" refers back)
    assert rec.calls == [[("The tower is in Paris. It was completed in 1889.", "The tower was completed in 1889.")]]
    assert "entailment 0.95" in en.reason and "entailment" not in zh.reason
    assert judge.describe()["verifier"] == {"name": "recording"}


async def test_an_unsettled_claim_is_read_again_against_windows_and_its_second_sentence() -> None:
    # SummaC-style: the two-sentence windows around the best sentence, and the second-best one
    def prob(premise: str, claim: str) -> float:
        return 0.97 if "330 metres tall. Bananas" in premise else 0.2

    rec = _Recording(prob)
    judge = LocalJudge(verifier=rec)
    (v,) = await judge.verify_claims(["The tower is 330 metres tall."], CTX)
    assert len(rec.calls) == 2 and len(rec.calls[0]) == 1  # the first premise, then the others in one call
    # first: the best sentence with the one before it ("It" refers back), which is also the
    # window before it; then the window after it and the second-best sentence, each once
    assert rec.calls[0][0][0] == "It was completed in 1889. It is 330 metres tall."
    assert [p for p, _ in rec.calls[1]] == ["It is 330 metres tall. Bananas are yellow.", "The tower is in Paris."]
    assert "entailment 0.97" in v.reason  # the highest over the premises read


async def test_a_narrower_band_leaves_the_decided_claims_to_the_features() -> None:
    rec = _Recording()
    judge = LocalJudge(verifier=rec, verify_band=(0.3, 0.7))
    ctx = ["The tower is in Paris. It was completed in 1889."]
    claims = ["The tower is in Paris.", "Bananas are grown by Chiquita in Ecuador."]
    # without a verifier every claim gets the plain combiner's probability: both are decisive
    plain = [v.confidence for v in await LocalJudge(verifier=None).verify_claims(claims, ctx)]
    assert all(p is not None and not 0.3 <= p <= 0.7 for p in plain), plain
    verdicts = await judge.verify_claims(claims, ctx)
    assert rec.seen == [] and all("entailment" not in v.reason for v in verdicts)
    with pytest.raises(ConfigError, match="verify_band"):
        LocalJudge(verify_band=(0.8, 0.2))


async def test_without_a_verifier_the_plain_combiner_scores() -> None:
    judge = LocalJudge(verifier=None)
    assert judge.verifier is None and judge.describe()["verifier"] is None
    (v,) = await judge.verify_claims(["The tower is in Paris."], ["The tower is in Paris."])
    assert v.confidence is not None and v.confidence > 0.5 and "entailment" not in v.reason
