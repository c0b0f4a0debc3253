"""Deadlines: only timeout_ms passing makes TIMEOUT; a timeout inside a handler (a socket's, a
library's) is the device's trouble, DEVICE_UNAVAILABLE; waiting for the phone counts."""

from __future__ import annotations

import asyncio
import socket
import sys
import time
from collections.abc import Awaitable, Callable

import pytest

from phoneuse_runtime.device.base import Contact, ContactFilter, deadline, remaining_s
from phoneuse_runtime.device.sim.device import SimDevice
from phoneuse_runtime.kernel.params import Params
from phoneuse_runtime.kernel.registry import ActionContext, ActionResult, ActionSpec

from ..extras import Extra
from .frontend import WAIT_S, FrontEnd, FrontEndFactory, hold_the_phone, ok

Handler = Callable[[ActionContext, Params], Awaitable[ActionResult]]


def action(name: str, handler: Handler) -> Extra:
    """A component contributing one action that requires nothing (so it takes no turns)."""
    return Extra(ActionSpec(name, Params, handler, ActionResult, f"{name} (a test's)"))


async def raises_timeout_error(ctx: ActionContext, p: Params) -> ActionResult:
    raise TimeoutError("the library gave up")


async def blocking_socket_times_out(ctx: ActionContext, p: Params) -> ActionResult:
    ours, theirs = socket.socketpair()
    with ours, theirs:
        ours.settimeout(0.001)  # the peer never writes
        ours.recv(1)
    return ActionResult(via="test")


async def asyncio_read_times_out(ctx: ActionContext, p: Params) -> ActionResult:
    """A real TCP connection whose read is given no time at all."""
    server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    try:
        port = server.sockets[0].getsockname()[1]
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            await asyncio.wait_for(reader.read(1), 0)
        finally:
            writer.close()
    finally:
        # Not `async with server`: from 3.12 its exit waits for the accepted connection, which
        # this server never closes.
        server.close()
    return ActionResult(via="test")


async def asyncio_timeout_context(ctx: ActionContext, p: Params) -> ActionResult:
    if sys.version_info >= (3, 11):
        async with asyncio.timeout(0):
            await asyncio.Event().wait()
    else:  # what asyncio.timeout(0) raises
        raise asyncio.TimeoutError
    return ActionResult(via="test")


async def connection_refused(ctx: ActionContext, p: Params) -> ActionResult:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    await asyncio.open_connection("127.0.0.1", port)  # nothing listens there any more
    return ActionResult(via="test")


@pytest.mark.parametrize(
    ("handler", "exception"),
    [
        (raises_timeout_error, "TimeoutError"),
        (blocking_socket_times_out, "TimeoutError"),
        (asyncio_read_times_out, "TimeoutError"),
        (asyncio_timeout_context, "TimeoutError"),
        (connection_refused, "ConnectionRefusedError"),
    ],
    ids=["TimeoutError", "socket-timeout", "wait_for-0", "asyncio.timeout-0", "refused"],
)
async def test_a_handlers_own_timeout_is_device_unavailable_not_timeout(
    make_frontend: FrontEndFactory, handler: Handler, exception: str
) -> None:
    frontend = await make_frontend(components=[action("FLAKY", handler)])
    answer = await frontend.execute("FLAKY", timeout_ms=60_000)
    assert answer.error == f"DEVICE_UNAVAILABLE: FLAKY: the connection to the phone failed ({exception})"
    assert answer.duration_ms < 5_000


async def test_only_timeout_ms_makes_timeout(make_frontend: FrontEndFactory) -> None:
    cancelled = asyncio.Event()

    async def hangs(ctx: ActionContext, p: Params) -> ActionResult:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return ActionResult(via="test")

    frontend = await make_frontend(components=[action("HANGS", hangs)])
    answer = await frontend.execute("HANGS", timeout_ms=200)
    assert answer.error == "TIMEOUT: HANGS did not finish within 200 ms; its device work was cancelled"
    assert answer.result == {}
    assert 190 <= answer.duration_ms < 2_000
    assert cancelled.is_set()


async def test_the_deadline_is_timeout_even_when_the_handler_converts_its_cancellation(
    make_frontend: FrontEndFactory,
) -> None:
    async def converts(ctx: ActionContext, p: Params) -> ActionResult:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            raise TimeoutError("read timed out") from None
        return ActionResult(via="test")

    frontend = await make_frontend(components=[action("CONVERTS", converts)])
    answer = await frontend.execute("CONVERTS", timeout_ms=200)
    assert answer.error == "TIMEOUT: CONVERTS did not finish within 200 ms; its device work was cancelled"


async def test_request_id_is_echoed_and_duration_measured(frontend: FrontEnd) -> None:
    answer = await frontend.execute("WAIT_FOR", {"text": "never there"}, request_id="slow-1", timeout_ms=300)
    assert answer.request_id == "slow-1"
    assert answer.error == "TIMEOUT: WAIT_FOR did not finish within 300 ms; its device work was cancelled"
    assert 290 <= answer.duration_ms < 3000


async def test_timeout_cancels_the_device_work(make_frontend: FrontEndFactory) -> None:
    frontend = await make_frontend(owner_apps=frozenset())  # Settings is the owner's by default
    await ok(frontend, "OPEN_APP", {"name": "Settings"})  # a scrollable list
    before = (await ok(frontend, "DUMP_UI"))["ui_fingerprint"]
    started = time.monotonic()
    answer = await frontend.execute("SWIPE", {"direction": "up", "duration_ms": "10000"}, timeout_ms=200)
    elapsed = time.monotonic() - started
    assert answer.error == "TIMEOUT: SWIPE did not finish within 200 ms; its device work was cancelled"
    assert elapsed < 5
    assert (await ok(frontend, "DUMP_UI"))["ui_fingerprint"] == before  # the cut swipe scrolled nothing
    assert (
        await frontend.execute("PRESS_KEY", {"key": "BACK"}, timeout_ms=2000)
    ).success  # the phone is free


async def test_waiting_for_the_phone_counts_against_the_deadline(frontend: FrontEnd) -> None:
    press = await hold_the_phone(frontend, "press", 2000)
    queued = await frontend.execute("PRESS_KEY", {"key": "HOME"}, timeout_ms=150)
    assert queued.error == (
        "TIMEOUT: PRESS_KEY did not get its turn on the phone within 150 ms (other actions held it); "
        "nothing was done"
    )
    assert 140 <= queued.duration_ms < 1500
    assert not press.done()
    press.cancel()  # the caller goes away; the app's stop cuts the press short
    await asyncio.gather(press, return_exceptions=True)


async def test_phone_actions_take_turns_in_order_and_looking_does_not_wait(frontend: FrontEnd) -> None:
    completed = await frontend.subscribe(("TASK_COMPLETED",))
    press = await hold_the_phone(frontend, "first", 600)
    key = asyncio.create_task(frontend.execute("PRESS_KEY", {"key": "HOME"}, request_id="second"))
    look = await frontend.execute("DUMP_UI", request_id="look")  # does not queue behind the press
    assert look.success
    assert not press.done()
    first, second = await asyncio.wait_for(asyncio.gather(press, key), WAIT_S)
    assert first.success and second.success
    order = [(await completed.next()).payload["request_id"] for _ in range(3)]
    assert order == ["look", "first", "second"]


class DeadlineSpy(SimDevice):
    """A phone whose clipboard and contacts primitives record the call's deadline as they see
    it, on the event loop and in a worker thread they start (as a blocking library would run)."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: dict[str, tuple[float | None, float]] = {}

    def _record(self, where: str) -> None:
        self.seen[where] = (deadline(), remaining_s(-1.0))

    async def set_clipboard(self, text: str) -> str:
        self._record("primitive")
        await asyncio.to_thread(self._record, "thread")
        return await super().set_clipboard(text)

    async def contacts(self, where: ContactFilter = ContactFilter()) -> list[Contact]:
        self._record("query")
        await asyncio.to_thread(self._record, "query thread")
        return await super().contacts(where)


async def test_primitives_and_their_threads_see_the_calls_deadline(make_frontend: FrontEndFactory) -> None:
    spy = DeadlineSpy()
    frontend = await make_frontend(device=spy)
    sent = time.monotonic()
    await ok(frontend, "SET_CLIPBOARD", {"text": "when?"}, timeout_ms=4_000)
    answered = time.monotonic()
    for where in ("primitive", "thread"):
        when, left = spy.seen[where]
        assert when is not None
        assert sent + 4.0 <= when <= answered + 4.0  # timeout_ms from when the call arrived
        assert 0 < left <= 4.0
    await frontend.query("CONTACTS", {"name": "alice"}, timeout_ms=3_000)
    for where in ("query", "query thread"):
        when, left = spy.seen[where]
        assert when is not None and 0 < left <= 3.0
    # Outside a call, there is no deadline, and nothing leaked into the caller's context.
    assert (deadline(), remaining_s(-1.0)) == (None, -1.0)
    spy.seen.clear()
    await spy.set_clipboard("direct")
    assert spy.seen["primitive"] == spy.seen["thread"] == (None, -1.0)
