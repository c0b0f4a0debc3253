"""The phone's one worker thread: order, deadlines, and calls dropped before they start."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from phoneuse_runtime.device.adb.worker import Budget, Worker
from phoneuse_runtime.device.base import reset_deadline, set_deadline
from phoneuse_runtime.kernel.errors import Timeout
from tests.waiting import wait_until


@pytest.fixture
def worker() -> Iterator[Worker]:
    w = Worker("test-worker")
    w.start()
    yield w
    w.stop()


async def test_calls_run_one_at_a_time_in_order(worker: Worker) -> None:
    seen: list[int] = []
    running = threading.Semaphore(1)

    def job(i: int) -> int:
        assert running.acquire(blocking=False), "two calls ran at once"
        seen.append(i)
        running.release()
        return i * 2

    def make(i: int) -> Callable[[Budget], int]:
        return lambda _b: job(i)

    results = await asyncio.gather(*(worker.call(f"job {i}", make(i), default_s=5) for i in range(20)))
    assert results == [i * 2 for i in range(20)]
    assert seen == list(range(20))


async def test_a_call_abandoned_before_it_started_never_runs(worker: Worker) -> None:
    started, release = threading.Event(), threading.Event()
    ran: list[str] = []

    def slow(_b: Budget) -> None:
        started.set()
        release.wait(5)
        ran.append("slow")

    first = asyncio.ensure_future(worker.call("slow", slow, default_s=5))
    second = asyncio.ensure_future(worker.call("second", lambda _b: ran.append("second"), default_s=5))
    # Both queued (the tasks ran in order while this one waited), the first holding the worker.
    assert await asyncio.to_thread(started.wait, 5), "the first call never started"
    second.cancel()
    release.set()
    await first
    with pytest.raises(asyncio.CancelledError):
        await second
    await worker.call("barrier", lambda _b: None, default_s=5)  # everything queued before has run
    assert ran == ["slow"]


async def test_the_budget_is_the_calls_deadline(worker: Worker) -> None:
    token = set_deadline(time.monotonic() + 0.5)
    try:
        left = await worker.call("measure", lambda b: b.left(), default_s=60)
    finally:
        reset_deadline(token)
    assert 0.3 < left <= 0.5
    outside = await worker.call("measure", lambda b: b.left(), default_s=60)
    assert 59 < outside <= 60


async def test_a_call_whose_deadline_passed_in_the_queue_is_a_timeout(worker: Worker) -> None:
    release = threading.Event()
    blocker = asyncio.ensure_future(worker.call("blocker", lambda _b: release.wait(5), default_s=5))
    until = time.monotonic() + 0.05
    token = set_deadline(until)
    try:
        late = asyncio.ensure_future(worker.call("late", lambda _b: "ran", default_s=5))
    finally:
        reset_deadline(token)
    await wait_until(lambda: time.monotonic() > until, what="the queued call's deadline")
    release.set()
    await blocker
    with pytest.raises(Timeout, match="deadline passed"):
        await late


def test_budget_waits() -> None:
    budget = Budget(time.monotonic() + 10)
    assert 9 < budget.wait_s() <= 10
    assert budget.wait_s(cap=1.0) == 1.0
    with pytest.raises(TimeoutError):
        Budget(time.monotonic() - 1).wait_s()
