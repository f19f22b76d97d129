"""Run a coroutine to completion from sync code, inside or outside a running event loop.

Inside a running loop (Jupyter, an async web handler) the coroutine runs on a fresh loop in a
worker thread, so no ``nest_asyncio`` is needed and the caller's loop is never re-entered.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Coroutine, Sequence
from typing import Any, TypeVar

T = TypeVar("T")


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="ragmeter") as pool:
        return pool.submit(asyncio.run, coro).result()


async def gather_or_cancel(tasks: Sequence[asyncio.Future[Any]]) -> None:
    """Wait for every task; if one fails (or we are cancelled), cancel the rest and wait for them
    to finish before re-raising, so no task outlives the call."""
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
