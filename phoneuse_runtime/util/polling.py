"""Bounded polling: look again until something is there or the time is up."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


async def poll(
    check: Callable[[], Awaitable[T | None]], *, interval_ms: int, within_ms: int | None
) -> T | None:
    """Calls `check` until it returns a value, every `interval_ms`; gives up after `within_ms`
    (None: until cancelled by the call's deadline)."""
    loop = asyncio.get_running_loop()
    give_up = None if within_ms is None else loop.time() + within_ms / 1000
    while True:
        found = await check()
        if found is not None:
            return found
        pause = interval_ms / 1000
        if give_up is not None:
            if loop.time() >= give_up:
                return None
            pause = min(pause, give_up - loop.time())  # the last look starts by `within_ms`, not after
        await asyncio.sleep(pause)
