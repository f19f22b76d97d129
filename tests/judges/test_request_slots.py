"""Request slots: priority order, hand-over, cancellation; and how ModelClient uses them."""

from __future__ import annotations

import asyncio

import pytest

from ragmeter.judges import JudgeConfig, ModelClient
from ragmeter.judges.limits import RequestSlots
from ragmeter.judges.providers.fake import FakeProvider
from ragmeter.judges.types import ChatRequest, ChatResponse, Message


async def _taker(
    slots: RequestSlots, name: str, priority: int, order: list[str], hold: asyncio.Event
) -> None:
    await slots.acquire(priority)
    order.append(name)
    await hold.wait()
    slots.release()


async def test_waiters_get_slots_by_priority_then_arrival() -> None:
    slots = RequestSlots(1)
    await slots.acquire()  # the only slot is taken: everyone below waits
    order: list[str] = []
    go = asyncio.Event()
    go.set()  # each waiter gives its slot back at once
    tasks = [
        asyncio.ensure_future(_taker(slots, name, prio, order, go))
        for name, prio in [("leaf-1", 1), ("lead-1", 0), ("leaf-2", 1), ("lead-2", 0)]
    ]
    await asyncio.sleep(0)  # all four queue
    slots.release()
    await asyncio.gather(*tasks)
    assert order == ["lead-1", "lead-2", "leaf-1", "leaf-2"]
    assert slots.free == 1


async def test_a_freed_slot_goes_to_the_waiter_not_to_a_newcomer() -> None:
    slots = RequestSlots(1)
    await slots.acquire()
    waiter = asyncio.ensure_future(slots.acquire(1))
    await asyncio.sleep(0)
    assert slots.release() is True  # handed over to the waiter
    newcomer = asyncio.ensure_future(slots.acquire(0))  # even a higher priority comes too late
    await asyncio.sleep(0)
    assert waiter.done() and not newcomer.done()
    assert slots.release() is True
    await newcomer
    assert slots.release() is False and slots.free == 1


async def test_a_cancelled_waiter_leaves_the_queue_and_a_cancelled_holder_passes_the_slot_on() -> None:
    slots = RequestSlots(1)
    await slots.acquire()
    gone = asyncio.ensure_future(slots.acquire(0))
    later = asyncio.ensure_future(slots.acquire(1))
    await asyncio.sleep(0)
    gone.cancel()
    with pytest.raises(asyncio.CancelledError):
        await gone
    slots.release()
    await later  # the cancelled waiter did not keep the slot
    # handed over, then cancelled before it ran: the slot is passed on, not lost
    third = asyncio.ensure_future(slots.acquire(1))
    await asyncio.sleep(0)
    slots.release()  # hands the slot to `third`
    third.cancel()
    with pytest.raises(asyncio.CancelledError):
        await third
    assert slots.free == 1


def test_a_limit_below_one_is_refused() -> None:
    with pytest.raises(ValueError):
        RequestSlots(0)


def _request(step: str, *, leads: bool) -> ChatRequest:
    return ChatRequest(messages=(Message("user", step),), step=step, prompt_version="1", leads=leads)


async def test_requests_that_others_wait_on_go_out_first() -> None:
    sent: list[str] = []
    release = asyncio.Event()

    async def reply(req: ChatRequest) -> str:
        sent.append(req.step)
        if req.step == "first":
            await release.wait()
        return "{}"

    class Slow(FakeProvider):
        async def generate(self, request: ChatRequest) -> ChatResponse:
            await reply(request)
            return await super().generate(request)

    client = ModelClient(Slow(lambda req: "{}"), JudgeConfig(concurrency=1))
    first = asyncio.ensure_future(client.generate(_request("first", leads=False)))
    await asyncio.sleep(0)
    queued = [
        asyncio.ensure_future(client.generate(_request(step, leads=leads)))
        for step, leads in [("questions", False), ("claims-a", True), ("verdicts", False), ("claims-b", True)]
    ]
    await asyncio.sleep(0)
    release.set()
    await asyncio.gather(first, *queued)
    assert sent == ["first", "claims-a", "claims-b", "questions", "verdicts"]


async def test_first_wave_out_returns_once_every_slot_is_taken() -> None:
    hold = asyncio.Event()

    class Held(FakeProvider):
        async def generate(self, request: ChatRequest) -> ChatResponse:
            await hold.wait()
            return await super().generate(request)

    client = ModelClient(Held(lambda req: "{}"), JudgeConfig(concurrency=2))
    wave = asyncio.ensure_future(client.first_wave_out())
    one = asyncio.ensure_future(client.generate(_request("a", leads=False)))
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert not wave.done()  # one slot of two taken, nothing answered yet
    two = asyncio.ensure_future(client.generate(_request("b", leads=False)))
    await asyncio.wait_for(wave, 5)  # both slots taken: the first wave is out, before any reply
    assert not one.done() and not two.done()
    hold.set()
    await asyncio.gather(one, two)
    await asyncio.wait_for(client.first_wave_out(), 5)  # and at once from then on
