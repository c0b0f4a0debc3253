"""Stopping the background tasks that components and devices start."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any


async def cancel_and_wait(*tasks: asyncio.Task[Any] | None) -> None:
    """Cancels each task (None stands for one never started) and waits until all have ended.
    Their cancellation is not raised here; an error a task ended with before it was cancelled is."""
    started = [task for task in tasks if task is not None]
    for task in started:
        task.cancel()
    for task in started:
        with contextlib.suppress(asyncio.CancelledError):
            await task
