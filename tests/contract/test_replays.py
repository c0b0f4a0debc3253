"""Idempotency: a repeated request_id gets the stored answer without acting twice, per principal;
the same id with different content is CONFLICT."""

from __future__ import annotations

import asyncio

from phoneuse_runtime.kernel.params import Params
from phoneuse_runtime.kernel.registry import ActionContext, ActionResult, ActionSpec

from ..extras import Extra
from .frontend import SCREEN_WITH_TEXT, WAIT_S, FrontEnd, FrontEndFactory, ok, sim


async def contacts_named(frontend: FrontEnd, name: str) -> int:
    return (await frontend.query("CONTACTS", {"name": name})).total_count


async def test_same_request_id_replays_without_acting_twice(frontend: FrontEnd) -> None:
    params = {"name": "Zed Replay", "phone": "+1 555 0100"}
    first = await frontend.execute("ADD_CONTACT", params, request_id="add-1")
    second = await frontend.execute("ADD_CONTACT", params, request_id="add-1")
    assert first.success and second.success
    assert first == second  # result, duration and all
    page = await frontend.query("CONTACTS", {"name": "Zed Replay"})
    assert page.total_count == 1 and page.results[0]["name"] == "Zed Replay"


async def test_failures_are_replayed_too(frontend: FrontEnd) -> None:
    first = await frontend.execute("TAP", {"text": "No such button"}, request_id="t-1")
    second = await frontend.execute("TAP", {"text": "No such button"}, request_id="t-1")
    assert first.error == "ELEMENT_NOT_FOUND: no element matches text='No such button'"
    assert second == first


async def test_a_retry_with_another_timeout_is_the_same_request(frontend: FrontEnd) -> None:
    first = await frontend.execute("SET_CLIPBOARD", {"text": "t"}, request_id="to-1", timeout_ms=5000)
    again = await frontend.execute("SET_CLIPBOARD", {"text": "t"}, request_id="to-1", timeout_ms=100)
    assert again == first


async def test_concurrent_retries_run_the_action_once(frontend: FrontEnd) -> None:
    params = {"name": "Concurrent Carl", "phone": "+1 555 0111"}
    answers = await asyncio.gather(
        *(frontend.execute("ADD_CONTACT", params, request_id="c-1") for _ in range(8))
    )
    assert all(a == answers[0] for a in answers) and answers[0].success
    assert await contacts_named(frontend, "Concurrent Carl") == 1


async def test_same_request_id_with_different_content_is_conflict(frontend: FrontEnd) -> None:
    await ok(frontend, "SET_CLIPBOARD", {"text": "one"}, request_id="clip-1")
    conflict = await frontend.execute("SET_CLIPBOARD", {"text": "two"}, request_id="clip-1")
    expected = (
        "CONFLICT: request_id 'clip-1' was already used for a different request (SET_CLIPBOARD); "
        "use a new request_id"
    )
    assert conflict.error == expected
    assert conflict.request_id == "clip-1"
    assert conflict.result == {}
    assert await sim(frontend).get_clipboard() == "one"
    other_target = await frontend.execute(
        "SET_CLIPBOARD", {"text": "one"}, request_id="clip-1", app_target="x"
    )
    assert other_target.error == expected
    other_action = await frontend.execute("DUMP_UI", request_id="clip-1")
    assert other_action.error == expected
    # The stored answer is intact after the conflicts.
    again = await frontend.execute("SET_CLIPBOARD", {"text": "one"}, request_id="clip-1")
    assert again.success


async def test_request_ids_are_scoped_per_principal(frontend: FrontEnd) -> None:
    """Two principals' same request_id are two requests: both run, neither conflicts."""
    mine = await frontend.execute("ADD_CONTACT", {"name": "Scoped Sam"}, request_id="s-1")
    theirs = await frontend.execute(
        "ADD_CONTACT", {"name": "Scoped Sam"}, request_id="s-1", principal="other"
    )
    assert mine.success and theirs.success
    assert mine.result["contact_id"] != theirs.result["contact_id"]
    assert await contacts_named(frontend, "Scoped Sam") == 2
    different = await frontend.execute("SET_CLIPBOARD", {"text": "x"}, request_id="s-1", principal="other")
    assert different.error.startswith("CONFLICT: ")  # within "other", s-1 is taken
    fresh = await frontend.execute("SET_CLIPBOARD", {"text": "y"}, request_id="s-2", principal="other")
    assert fresh.success
    assert (await frontend.execute("SET_CLIPBOARD", {"text": "z"}, request_id="s-2")).success


async def test_a_caller_that_goes_away_does_not_cut_the_action_short(frontend: FrontEnd) -> None:
    """An agent whose call is cut off (its own deadline, a dropped connection) retries with the
    same id and gets the real outcome."""
    started = await frontend.subscribe(("TASK_STARTED",))
    params = {"text": "Incoming!", "poll_ms": "20"}
    call = asyncio.create_task(frontend.execute("WAIT_FOR", params, request_id="w-1", timeout_ms=5000))
    assert (await started.next()).payload["request_id"] == "w-1"
    call.cancel()
    await asyncio.gather(call, return_exceptions=True)
    await ok(frontend, "SIM_SET_SCREEN", {"xml": SCREEN_WITH_TEXT})
    answer = await frontend.execute("WAIT_FOR", params, request_id="w-1", timeout_ms=5000)
    assert answer.success, answer.error
    assert answer.result["element"]["text"] == "Incoming!"


class Crash(BaseException):
    """Neither an Exception nor a cancellation: what a badly behaved library might raise."""


async def test_a_base_exception_gets_one_stored_internal_answer(make_frontend: FrontEndFactory) -> None:
    runs: list[str] = []

    async def crash(ctx: ActionContext, p: Params) -> ActionResult:
        runs.append(ctx.request_id)
        raise Crash

    frontend = await make_frontend(
        components=[Extra(ActionSpec("CRASH", Params, crash, ActionResult, "raises a BaseException"))]
    )
    errors = await frontend.subscribe(("ERROR",))
    first = await asyncio.wait_for(frontend.execute("CRASH", request_id="b-1"), WAIT_S)
    assert first.error == "INTERNAL: CRASH failed unexpectedly; see the server log"
    retry = await asyncio.wait_for(frontend.execute("CRASH", request_id="b-1"), WAIT_S)
    assert retry == first
    assert runs == ["b-1"]
    event = await errors.next()
    assert event.payload == {"code": "INTERNAL", "message": "CRASH failed unexpectedly; see the server log"}
    assert (await ok(frontend, "SET_CLIPBOARD", {"text": "still serving"}))["verified"] is True


async def test_a_crashing_handler_is_internal_and_reported(make_frontend: FrontEndFactory) -> None:
    async def crash(ctx: ActionContext, p: Params) -> ActionResult:
        raise KeyError("bug")

    frontend = await make_frontend(
        components=[Extra(ActionSpec("CRASH", Params, crash, ActionResult, "always crashes"))]
    )
    errors = await frontend.subscribe(("ERROR",))
    answer = await frontend.execute("CRASH")
    assert answer.error == "INTERNAL: CRASH failed unexpectedly; see the server log"
    event = await errors.next()
    assert event.payload == {"code": "INTERNAL", "message": "CRASH failed unexpectedly; see the server log"}
    assert event.source == "phoneuse.runtime"


async def test_a_handlers_own_cancelled_error_is_not_reported_as_a_shutdown(
    make_frontend: FrontEndFactory,
) -> None:
    async def cancelled_inside(ctx: ActionContext, p: Params) -> ActionResult:
        inner = asyncio.get_running_loop().create_future()
        inner.cancel()
        await inner
        return ActionResult(via="test")

    frontend = await make_frontend(
        components=[
            Extra(ActionSpec("INNER", Params, cancelled_inside, ActionResult, "awaits a cancelled future"))
        ]
    )
    answer = await asyncio.wait_for(frontend.execute("INNER"), WAIT_S)
    assert not answer.success
    assert answer.message != "the server shut down before the action finished"
