"""Batching the local models' calls across samples in flight (ragmeter.local.batching)."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from ragmeter import Sample
from ragmeter.local import LocalJudge, OnnxVerifier, USEEmbedder
from ragmeter.local.batching import CallBatcher
from ragmeter.metrics.registry import get_metric

# ------------------------------------------------------------------ the batcher


def _doubler(calls: list[list[int]]) -> CallBatcher[int, int]:
    def fn(items: list[int]) -> list[int]:
        calls.append(list(items))
        if any(x < 0 for x in items):
            raise ValueError(f"negative item in {items}")
        return [2 * x for x in items]

    return CallBatcher(fn, workers=1)


async def test_calls_in_flight_go_together_and_get_their_own_results() -> None:
    calls: list[list[int]] = []
    b = _doubler(calls)
    out = await asyncio.gather(*(b.submit([i, i + 100]) for i in range(5)))
    assert out == [[2 * i, 2 * (i + 100)] for i in range(5)]
    assert calls == [[0, 100, 1, 101, 2, 102, 3, 103, 4, 104]]  # one batch, in call order
    assert (b.batches, b.items) == (1, 10)
    assert await b.submit([]) == []


async def test_a_failing_call_gets_its_error_and_the_others_their_results() -> None:
    calls: list[list[int]] = []
    b = _doubler(calls)
    ok1, bad, ok2 = await asyncio.gather(b.submit([1]), b.submit([-1]), b.submit([2]), return_exceptions=True)
    assert ok1 == [2] and ok2 == [4]
    assert isinstance(bad, ValueError) and "negative" in str(bad)
    assert calls[0] == [1, -1, 2] and calls[1:] == [[1], [-1], [2]]  # the batch, then each call alone


async def test_a_wrong_number_of_results_is_an_error() -> None:
    b: CallBatcher[int, int] = CallBatcher(lambda items: items[:-1])
    with pytest.raises(RuntimeError, match="a batch of 2 items gave 1 results"):
        await b.submit([1, 2])


async def test_at_most_workers_batches_run_at_once_and_later_calls_wait_together() -> None:
    lock = threading.Lock()
    gate = threading.Event()
    running = peak = 0
    sizes: list[int] = []

    def held(items: list[int]) -> list[int]:
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
            sizes.append(len(items))
        gate.wait(timeout=30)
        with lock:
            running -= 1
        return items

    b: CallBatcher[int, int] = CallBatcher(held, workers=2)

    async def until_running(n: int) -> None:
        for _ in range(3000):
            if running == n:
                return
            await asyncio.sleep(0.01)
        raise AssertionError(f"{running} batches running, expected {n}")

    first = asyncio.ensure_future(b.submit([0]))
    await until_running(1)
    second = asyncio.ensure_future(b.submit([1]))  # a second worker takes it
    await until_running(2)
    rest = [asyncio.ensure_future(b.submit([i])) for i in range(2, 8)]  # both workers busy: they wait
    await asyncio.sleep(0.05)
    assert sizes == [1, 1] and peak == 2
    gate.set()
    out = await asyncio.gather(first, second, *rest)
    assert out == [[i] for i in range(8)]
    assert sizes == [1, 1, 6] and peak == 2  # the six waiting calls went in one batch


async def test_calls_made_together_are_divided_between_free_workers() -> None:
    # eight samples reaching the same step at once: with two workers free, their calls go in two
    # batches that run at the same time (one batch would leave a core idle), in order, a call's
    # items split between them where the halves meet; each call gets exactly its own results
    lock = threading.Lock()
    both = threading.Barrier(2, timeout=30)  # each batch waits until the other runs beside it
    batches: list[list[int]] = []

    def fn(items: list[int]) -> list[int]:
        with lock:
            batches.append(list(items))
        both.wait()
        return [3 * x for x in items]

    b: CallBatcher[int, int] = CallBatcher(fn, workers=2, share=2)
    calls = [[10 * i + k for k in range(i % 3 + 1)] for i in range(8)]  # 1, 2 or 3 items each
    out = await asyncio.gather(*(b.submit(c) for c in calls))
    assert out == [[3 * x for x in c] for c in calls]
    flat = [x for c in calls for x in c]
    assert len(batches) == 2 and sorted(batches) == sorted([flat[:8], flat[8:]])  # 15 items: 8 + 7
    assert (b.batches, b.items) == (2, len(flat))


async def test_calls_are_not_divided_below_the_share_or_without_a_free_worker() -> None:
    calls: list[list[int]] = []

    def fn(items: list[int]) -> list[int]:
        calls.append(list(items))
        return items

    b: CallBatcher[int, int] = CallBatcher(fn, workers=2, share=4)
    assert await asyncio.gather(*(b.submit([i, i]) for i in range(3))) == [[i, i] for i in range(3)]
    assert calls == [[0, 0, 1, 1, 2, 2]]  # 6 items: two batches would hold fewer than 4 each
    one: CallBatcher[int, int] = CallBatcher(fn, workers=1, share=1)
    calls.clear()
    assert await asyncio.gather(*(one.submit([i]) for i in range(4))) == [[i] for i in range(4)]
    assert calls == [[0, 1, 2, 3]]  # one worker: one batch
    with pytest.raises(ValueError, match="share"):
        CallBatcher(fn, share=0)


async def test_a_failing_call_divided_between_batches_gets_its_error() -> None:
    seen: list[list[int]] = []

    def fn(items: list[int]) -> list[int]:
        seen.append(list(items))
        if any(x < 0 for x in items):
            raise ValueError(f"negative item in {items}")
        return [2 * x for x in items]

    b: CallBatcher[int, int] = CallBatcher(fn, workers=2, share=1)
    ok, bad, ok2 = await asyncio.gather(
        b.submit([1, 2]), b.submit([3, -1]), b.submit([4, 5]), return_exceptions=True
    )
    assert ok == [2, 4] and ok2 == [8, 10]
    assert isinstance(bad, ValueError)
    assert b._pending == [] and b._running == {} and b._busy == {}


def test_the_models_batchers_divide_calls_between_their_workers() -> None:
    from ragmeter.local.embedders import EMBED_SHARE, EMBED_WORKERS

    assert USEEmbedder()._batcher().share == (EMBED_SHARE if EMBED_WORKERS > 1 else None)
    v = OnnxVerifier(cache_size=0)
    assert asyncio.run(v.entailment(["The sky is blue."], ["The sky is blue."]))[0] > 0.5
    assert v._batcher is not None and v._batcher.share == 1 and v._batcher.workers == 2


def test_works_across_event_loops() -> None:
    calls: list[list[int]] = []
    b = _doubler(calls)
    for _ in range(3):  # asyncio.run makes a new loop each time (a notebook, repeated evaluate())
        assert asyncio.run(b.submit([3])) == [6]
    with pytest.raises(ValueError, match="workers"):
        CallBatcher(lambda x: x, workers=0)


# ------------------------------------------------------------------ the local judge

# Scores with every sample in flight at once (their model calls batched together) must equal the
# scores of each sample alone. The embedder encodes each text on its own whatever its batch, and
# the verifier reads each pair on its own, so only float rounding of the matrix products differs:
# measured at ~1e-7 here; the tolerance is 1e-5.
TOL = 1e-5

SAMPLES = [
    Sample(
        question="Who designed the Eiffel Tower?",
        contexts=(
            "The Eiffel Tower is a wrought-iron lattice tower in Paris. It was designed by the "
            "engineering company of Gustave Eiffel. It was completed in 1889 and is 330 metres tall.",
        ),
        answer="Gustave Eiffel's company designed the tower. It was finished in 1889. It is made of concrete.",
    ),
    Sample(
        question="When was the company founded and how many people work there?",
        contexts=(
            "Acme Corp was founded in 1998 by Anna Lopez.",
            "The company employs 300 people and is based in Denver.",
        ),
        answer="Acme was founded in 2005. It employs about 300 people in Denver.",
    ),
    Sample(
        question="Can cars use the bridge?",
        contexts=("The bridge is not open to cars. Pedestrians and cyclists may cross it at any time.",),
        answer="Yes, cars can use the bridge. Cyclists can cross it too.",
    ),
    Sample(
        question="What does photosynthesis do?",
        contexts=("Photosynthesis converts light energy into chemical energy stored in glucose.",),
        answer="It turns light into chemical energy. The museum opens at nine.",
    ),
    Sample(
        question="埃菲尔铁塔是谁设计的？",
        contexts=("埃菲尔铁塔位于巴黎，由古斯塔夫·埃菲尔的公司设计，于1889年建成。",),
        answer="埃菲尔铁塔由埃菲尔的公司设计。它建于1889年。",
    ),
    Sample(
        question="长江有多长？",
        contexts=("长江全长约6300公里，是中国最长的河流。它流经十一个省份。",),
        answer="长江全长约5000公里。它是中国最长的河流。",
    ),
    Sample(
        question="这家银行的贷款利率高吗？",
        contexts=("这家银行的贷款利率很低，吸引了很多客户。",),
        answer="这家银行的贷款利率很高。",
    ),
]
METRICS = ("faithfulness", "answer_relevance", "context_relevance")


def _values(score: object) -> list[float]:
    """The score and, for faithfulness, each claim's support probability."""
    out = [score.value]  # type: ignore[attr-defined]
    for claim in score.details.get("claims", []):  # type: ignore[attr-defined]
        if isinstance(claim, dict) and claim.get("confidence") is not None:
            out.append(claim["confidence"])
    return out


async def test_scores_with_samples_in_flight_equal_scores_one_at_a_time() -> None:
    metrics = [get_metric(m) for m in METRICS]
    # one sample at a time, each with an empty cache: nothing else in flight, nothing to share
    alone = []
    alone_verifier = OnnxVerifier(cache_size=0)
    for s in SAMPLES:
        judge = LocalJudge(USEEmbedder(), verifier=alone_verifier)
        alone.append([_values(await m.score(s, judge)) for m in metrics])
    # every sample and metric at once through one judge: the model calls go in shared batches
    verifier = OnnxVerifier(cache_size=0)
    embedder = USEEmbedder()
    judge = LocalJudge(embedder, verifier=verifier)
    before = embedder._batcher().batches
    together = await asyncio.gather(*(asyncio.gather(*(m.score(s, judge) for m in metrics)) for s in SAMPLES))
    # fewer encoder batches than samples: texts of several samples were encoded together
    assert 0 < embedder._batcher().batches - before < len(SAMPLES)
    assert verifier._batcher is not None and verifier._batcher.batches >= 1  # claims in the band were read
    for s, a, t in zip(SAMPLES, alone, together, strict=True):
        for name, va, st in zip(METRICS, a, t, strict=True):
            vt = _values(st)
            assert len(va) == len(vt), (s.question, name)
            assert vt == pytest.approx(va, abs=TOL), (s.question, name)


def test_a_pairs_probability_does_not_depend_on_its_batch_mates() -> None:
    v = OnnxVerifier(cache_size=0)
    pair = ("The company was founded in 1998 and employs 300 people.", "The company was founded in 1998.")
    others = [
        ("She won the race in March.", "She did not win the race."),
        (
            "The Eiffel Tower is a wrought-iron lattice tower in Paris, completed in 1889 for the World's Fair.",
            "The tower is made of concrete.",
        ),
    ]
    alone = v.entailment_sync([pair[0]], [pair[1]])[0]
    mixed = v.entailment_sync([p for p, _ in [*others, pair]], [h for _, h in [*others, pair]])
    assert mixed[-1] == alone  # exactly: read on its own, unpadded, whatever else is in the call


def test_a_loop_closed_mid_batch_leaves_nothing_behind() -> None:
    gate = threading.Event()

    def held(items: list[int]) -> list[int]:
        gate.wait(timeout=30)
        return items

    pool = ThreadPoolExecutor(1)  # not the loop's own executor, which asyncio.run would wait for
    b: CallBatcher[int, int] = CallBatcher(held, workers=1, executor=pool)
    calls: list[asyncio.Future[list[int]]] = []

    async def abandon() -> None:
        calls.append(asyncio.ensure_future(b.submit([1])))
        for _ in range(3000):  # until the drain has taken it: it runs, held at the gate
            if b._running and not b._pending:
                break
            await asyncio.sleep(0.01)
        calls.append(asyncio.ensure_future(b.submit([2])))  # waits for the next batch
        await asyncio.sleep(0)
        # returning closes the loop: asyncio.run cancels the drain and both calls

    asyncio.run(abandon())
    gate.set()
    assert all(c.cancelled() for c in calls)
    assert b._pending == [] and b._running == {}
    assert asyncio.run(b.submit([3])) == [3]  # a new loop is served as before
    pool.shutdown(wait=True)
