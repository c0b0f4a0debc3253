"""One thread per phone that does every blocking adbutils/uiautomator2 call, one at a time, in
the order they were asked for.

Why one thread and not `asyncio.to_thread`: a call whose action timed out is still blocked in
a socket read on its thread; with a thread per call, the next action's calls would start
driving the phone while it still is. Here the next call starts only when the previous one has
returned, and each call's socket waits are bounded by its own deadline (`Budget`), so a
timed-out call ends at about the time its action did. A call whose action gave up before the
call started is dropped unstarted.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from phoneuse_runtime.device.base import deadline
from phoneuse_runtime.kernel.errors import Timeout

log = logging.getLogger(__name__)

T = TypeVar("T")

# The shortest socket wait a call is given: below this, a read would time out before a healthy
# phone on a LAN could answer at all, which is a timeout that says nothing.
MIN_WAIT_S = 0.05


class Budget:
    """The time one blocking call has left, counted down to its deadline (time.monotonic())."""

    __slots__ = ("until",)

    def __init__(self, until: float) -> None:
        self.until = until

    def left(self) -> float:
        return max(0.0, self.until - time.monotonic())

    def wait_s(self, cap: float | None = None) -> float:
        """The timeout for the next socket wait: what is left (at most `cap`), never below
        MIN_WAIT_S; TimeoutError when nothing is left."""
        left = self.until - time.monotonic()
        if left <= 0:
            raise TimeoutError("the call's deadline passed")
        wait = max(left, MIN_WAIT_S)
        return min(wait, cap) if cap is not None else wait


@dataclass
class _Job(Generic[T]):
    what: str
    fn: Callable[[Budget], T]
    budget: Budget
    future: asyncio.Future[T]
    loop: asyncio.AbstractEventLoop
    abandoned: bool = field(default=False)


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


class Worker:
    """The phone's one worker thread. `call` runs a function there and awaits its result."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._jobs: queue.SimpleQueue[_Job[Any] | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is None:
            # A daemon: a call blocked on a dead socket must not keep the process alive at exit.
            self._thread = threading.Thread(target=self._loop, name=self.name, daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """Lets the thread finish the call it is in (bounded by that call's budget) and end."""
        if self._thread is not None:
            self._jobs.put(None)
            self._thread = None

    async def call(self, what: str, fn: Callable[[Budget], T], *, default_s: float) -> T:
        """Runs `fn(budget)` on the worker thread after the calls before it. The budget ends at
        the current call's deadline (base.deadline()), or `default_s` from now outside a call."""
        if self._thread is None:
            raise RuntimeError(f"worker {self.name} is not running")
        loop = asyncio.get_running_loop()
        until = deadline()
        if until is None:
            until = time.monotonic() + default_s
        job: _Job[T] = _Job(what, fn, Budget(until), loop.create_future(), loop)
        self._jobs.put(job)
        try:
            return await job.future
        except asyncio.CancelledError:
            job.abandoned = True  # not yet started: it never will be
            raise

    def _loop(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            # Task.cancel() cancels the future its task awaits at once, before the task itself
            # runs again to mark the job: either sign means nobody waits for this call any more.
            if job.abandoned or job.future.cancelled():
                log.debug("dropped %s: its caller gave up before it started", job.what)
                continue
            result: Any = None
            error: BaseException | None = None
            if job.budget.left() <= 0:
                error = Timeout(f"{job.what}: the deadline passed while earlier calls held the phone")
            else:
                try:
                    result = job.fn(job.budget)
                except BaseException as exc:  # handed to the awaiting task, which translates it
                    error = exc
            if job.abandoned:
                continue
            try:
                job.loop.call_soon_threadsafe(_settle, job.future, result, error)
            except RuntimeError:  # the loop closed while the call ran (shutdown)
                return
