"""Waiting on a condition instead of sleeping: a visible poll of the condition, bounded by a
deadline, that says what it waited for when the deadline passes."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

POLL_S = 0.02  # how often the condition is looked at: a poll, not a wait for an outcome


async def wait_until(
    check: Callable[[], bool], *, within_s: float = 10.0, what: str = "the condition"
) -> None:
    """Returns as soon as `check()` is true; fails saying `what` did not come true in `within_s`."""
    give_up = time.monotonic() + within_s
    while not check():
        assert time.monotonic() < give_up, f"{what} did not come true within {within_s} s"
        await asyncio.sleep(POLL_S)
