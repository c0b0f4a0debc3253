"""Execute: dispatch, validation, deadlines, idempotency, policies and error codes."""

from __future__ import annotations

import asyncio
import json
import time

import grpc
import pytest

from phoneuse_runtime.callers import Caller
from phoneuse_runtime.capabilities import EVERYTHING
from phoneuse_runtime.device.sim import SimDevice
from phoneuse_runtime.params import Params
from phoneuse_runtime.registry import ActionContext, ActionResult, ActionSpec
from phoneuse_runtime.rpc import protocol_pb2 as pb
from phoneuse_runtime.runtime import ActionCall

from .conftest import AUTH, Client, ServerFactory
from .extras import Extra

CALLER = Caller("test", "agent")


@pytest.mark.parametrize(
    ("field", "request_kwargs", "message"),
    [
        ("action_type", {"action_type": "", "request_id": "r", "timeout_ms": 1000}, "action_type is empty"),
        ("request_id", {"action_type": "TAP", "request_id": "", "timeout_ms": 1000}, "request_id is empty"),
        (
            "timeout_zero",
            {"action_type": "TAP", "request_id": "r", "timeout_ms": 0},
            "timeout_ms must be > 0",
        ),
        (
            "timeout_negative",
            {"action_type": "TAP", "request_id": "r", "timeout_ms": -5},
            "timeout_ms must be > 0",
        ),
    ],
)
async def test_malformed_requests_are_invalid_argument(
    client: Client, field: str, request_kwargs: dict[str, object], message: str
) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await client.stub.Execute(pb.ActionRequest(**request_kwargs), metadata=AUTH)  # type: ignore[arg-type]
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert message in (info.value.details() or "")


async def test_unknown_action_suggests_close_names(client: Client) -> None:
    response = await client.execute("SEND_MESAGE", {}, request_id="u1")
    assert not response.success
    assert response.error == (
        "UNKNOWN_ACTION: no action 'SEND_MESAGE'; did you mean SEND_MESSAGE? "
        "(`phoneuse-runtime actions` lists them)"
    )
    assert response.request_id == "u1"
    assert json.loads(response.result_json) == {}
    nothing_close = await client.execute("FROBNICATE", {})
    assert nothing_close.error == (
        "UNKNOWN_ACTION: no action 'FROBNICATE' (`phoneuse-runtime actions` lists them)"
    )


async def test_unknown_params_name_the_allowed_keys(client: Client) -> None:
    response = await client.execute("SET_CLIPBOARD", {"text": "a", "colour": "red"})
    assert response.error.startswith("INVALID_PARAMS: ")
    assert "colour" in response.error
    assert "allowed: text" in response.error


@pytest.mark.parametrize(
    ("action", "params", "fragment"),
    [
        ("SET_ALARM", {"hour": "seven"}, "hour"),
        ("SET_ALARM", {"hour": "25"}, "hour"),
        ("SET_ALARM", {"hour": "7", "days": "mon,funday"}, "funday"),
        ("TAP", {"x": "10"}, "give both x and y"),
        ("TAP", {}, "either x and y, or a selector"),
        ("TAP", {"x": "1", "y": "2", "text": "OK"}, "either x and y, or a selector"),
        ("CREATE_EVENT", {"title": "t", "start": "tomorrow"}, "ISO-8601"),
        (
            "CREATE_EVENT",
            {"title": "t", "start": "2026-12-01T10:00:00", "end": "2026-12-01T09:00:00"},
            "end is before start",
        ),
        ("START_INTENT", {"action": "a", "extras": "{not json"}, "not valid JSON"),
        ("START_INTENT", {"action": "a", "extras": '{"k": {"nested": 1}}'}, "extras.k"),
        ("SEND_MESSAGE", {"to": "+14155550101"}, "body"),
        ("SWIPE", {"direction": "sideways"}, "direction"),
        ("SCREENSHOT", {"quality": "0"}, "quality"),
        ("PRESS_KEY", {"key": "NOT_A_KEY"}, "unknown key"),
    ],
)
async def test_bad_params_are_invalid_params(
    client: Client, action: str, params: dict[str, str], fragment: str
) -> None:
    response = await client.execute(action, params)
    assert response.error.startswith("INVALID_PARAMS: "), response.error
    assert fragment in response.error


async def test_params_are_coerced_from_strings(client: Client) -> None:
    result = await client.ok("SET_ALARM", {"hour": "7", "minute": "05", "days": "fri,MON", "label": "Gym"})
    assert (result["hour"], result["minute"], result["days"]) == (7, 5, ["MON", "FRI"])
    assert result["verified"] is True
    event = await client.ok("CREATE_EVENT", {"title": "Lunch", "start": "1796112000000"})
    assert event["start_ms"] == 1796112000000
    assert event["end_ms"] == 1796112000000 + 3600_000


async def test_request_id_is_echoed_and_duration_measured(client: Client) -> None:
    response = await client.execute("WAIT_FOR", {"text": "never there"}, request_id="slow-1", timeout_ms=300)
    assert response.request_id == "slow-1"
    assert response.error == "TIMEOUT: WAIT_FOR did not finish within 300 ms; its device work was cancelled"
    assert 250 <= response.duration_ms < 3000


async def test_timeout_cancels_the_device_work(client: Client) -> None:
    await client.ok("OPEN_APP", {"name": "Settings"})  # a scrollable list
    before = (await client.ok("DUMP_UI"))["ui_fingerprint"]
    started = time.monotonic()
    response = await client.execute("SWIPE", {"direction": "up", "duration_ms": "10000"}, timeout_ms=200)
    elapsed = time.monotonic() - started
    assert response.error == "TIMEOUT: SWIPE did not finish within 200 ms; its device work was cancelled"
    assert elapsed < 5
    assert (await client.ok("DUMP_UI"))["ui_fingerprint"] == before  # the cut swipe scrolled nothing
    assert (await client.execute("PRESS_KEY", {"key": "BACK"}, timeout_ms=2000)).success  # the phone is free


async def test_same_request_id_replays_without_acting_twice(client: Client) -> None:
    params = {"name": "Zed Replay", "phone": "+1 555 0100"}
    first = await client.execute("ADD_CONTACT", params, request_id="add-1")
    second = await client.execute("ADD_CONTACT", params, request_id="add-1")
    assert first.success and second.success
    assert first.result_json == second.result_json
    assert first.duration_ms == second.duration_ms
    results, total, _ = await client.query(pb.CONTACTS, {"name": "Zed Replay"})
    assert total == 1 and results[0]["name"] == "Zed Replay"


async def test_failures_are_replayed_too(client: Client) -> None:
    first = await client.execute("TAP", {"text": "No such button"}, request_id="t-1")
    second = await client.execute("TAP", {"text": "No such button"}, request_id="t-1")
    assert first.error.startswith("ELEMENT_NOT_FOUND: ")
    assert second.error == first.error


async def test_concurrent_retries_run_the_action_once(client: Client) -> None:
    params = {"name": "Concurrent Carl", "phone": "+1 555 0111"}
    responses = await asyncio.gather(
        *(client.execute("ADD_CONTACT", params, request_id="c-1") for _ in range(8))
    )
    assert {r.result_json for r in responses} == {responses[0].result_json}
    _, total, _ = await client.query(pb.CONTACTS, {"name": "Concurrent Carl"})
    assert total == 1


async def test_same_request_id_with_different_content_is_conflict(client: Client) -> None:
    await client.ok("SET_CLIPBOARD", {"text": "one"}, request_id="clip-1")
    conflict = await client.execute("SET_CLIPBOARD", {"text": "two"}, request_id="clip-1")
    assert conflict.error.startswith("CONFLICT: ")
    assert conflict.request_id == "clip-1"
    assert await client.app.runtime.device.get_clipboard() == "one"
    other_target = await client.execute("SET_CLIPBOARD", {"text": "one"}, request_id="clip-1", app_target="x")
    assert other_target.error.startswith("CONFLICT: ")
    # The stored response is intact after the conflicts.
    again = await client.execute("SET_CLIPBOARD", {"text": "one"}, request_id="clip-1")
    assert again.success


async def test_client_deadline_does_not_cut_the_action_short(client: Client) -> None:
    """An agent whose own RPC deadline passes retries with the same id and gets the real outcome."""
    request = pb.ActionRequest(
        action_type="WAIT_FOR",
        params={"text": "Incoming!", "poll_ms": "20"},
        request_id="w-1",
        timeout_ms=5000,
    )
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await client.stub.Execute(request, metadata=AUTH, timeout=0.2)
    assert info.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    await client.ok("SIM_SET_SCREEN", {"xml": SCREEN_WITH_TEXT})
    response = await client.stub.Execute(request, metadata=AUTH, timeout=10)
    assert response.success, response.error
    assert json.loads(response.result_json)["element"]["text"] == "Incoming!"


SCREEN_WITH_TEXT = (
    "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"
    '<node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="com.example" '
    'content-desc="" checkable="false" checked="false" clickable="false" enabled="true" focusable="false" '
    'focused="false" scrollable="false" long-clickable="false" password="false" selected="false" '
    'bounds="[0,0][1080,2400]"><node index="0" text="Incoming!" resource-id="com.example:id/banner" '
    'class="android.widget.TextView" package="com.example" content-desc="" checkable="false" checked="false" '
    'clickable="false" enabled="true" focusable="false" focused="false" scrollable="false" '
    'long-clickable="false" password="false" selected="false" bounds="[0,100][1080,200]" />'
    "</node></hierarchy>"
)


async def test_deny_list_is_denied(make_client: ServerFactory) -> None:
    client = await make_client(deny_actions=frozenset({"SET_CLIPBOARD"}))
    response = await client.execute("SET_CLIPBOARD", {"text": "secret"})
    assert response.error.startswith("DENIED: ")
    assert await client.app.runtime.device.get_clipboard() == ""


async def test_allow_list_denies_everything_else(make_client: ServerFactory) -> None:
    client = await make_client(allow_actions=frozenset({"DUMP_UI"}))
    assert (await client.execute("DUMP_UI")).success
    assert (await client.fail("SET_CLIPBOARD", {"text": "x"})) == "DENIED"


async def test_params_are_validated_before_policies(make_client: ServerFactory) -> None:
    client = await make_client(deny_actions=frozenset({"SET_CLIPBOARD"}))
    assert await client.fail("SET_CLIPBOARD", {"bogus": "1"}) == "INVALID_PARAMS"


async def test_shell_is_refused_by_default(client: Client) -> None:
    assert await client.fail("SHELL", {"command": "echo hi"}) == "PERMISSION_DENIED"


async def test_shell_runs_with_allow_shell(make_client: ServerFactory) -> None:
    client = await make_client(allow_shell=True)
    result = await client.ok("SHELL", {"command": "echo 'hi there'"})
    assert result["exit_code"] == 0
    assert result["stdout"].strip() == "hi there"
    missing = await client.ok("SHELL", {"command": "frobnicate"})
    assert missing["exit_code"] == 127


async def test_every_result_names_its_path(client: Client) -> None:
    for action, params in [
        ("DUMP_UI", {}),
        ("SET_CLIPBOARD", {"text": "v"}),
        ("PRESS_KEY", {"key": "HOME"}),
        ("REMEMBER", {"name": "n"}),
    ]:
        result = await client.ok(action, params)
        assert result["via"] in ("sim", "memory"), (action, result)


async def test_an_action_the_device_cannot_do_is_unsupported_with_a_hint(make_client: ServerFactory) -> None:
    device = SimDevice()
    device.capabilities = EVERYTHING - {"sim", "ui"}  # a phone reached without its own adb, say
    client = await make_client(device=device)
    response = await client.execute("SIM_RECEIVE_SMS", {"from": "+14155550101", "body": "hi"})
    assert response.error == (
        "UNSUPPORTED: SIM_RECEIVE_SMS: this device (sim) lacks the 'sim' capability: use --device sim"
    )
    tap = await client.execute("TAP", {"x": "1", "y": "2"})
    assert tap.error.startswith("UNSUPPORTED: TAP: this device (sim) lacks the 'ui' capability: ")
    assert "wireless debugging" in tap.error
    # Checked before the params: even a bad call learns first that it cannot run here.
    assert (await client.execute("TAP", {"bogus": "1"})).error == tap.error
    assert (await client.execute("SET_CLIPBOARD", {"text": "still fine"})).success


async def test_oversized_request_is_refused_and_the_server_carries_on(client: Client) -> None:
    huge = pb.ActionRequest(
        action_type="SET_CLIPBOARD",
        params={"text": "x" * (5 * 1024 * 1024)},
        request_id="big",
        timeout_ms=1000,
    )
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await client.stub.Execute(huge, metadata=AUTH)
    assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert await client.app.runtime.device.get_clipboard() == ""
    assert (await client.execute("SET_CLIPBOARD", {"text": "small"}, request_id="big")).success


async def test_a_crashing_handler_is_internal_and_reported(make_client: ServerFactory) -> None:
    async def crash(ctx: ActionContext, p: Params) -> ActionResult:
        raise KeyError("bug")

    client = await make_client(
        components=[Extra(ActionSpec("CRASH", Params, crash, ActionResult, "always crashes"))]
    )
    stream = client.stub.Subscribe(pb.SubscribeRequest(event_types=["ERROR"]), metadata=AUTH)
    await stream.initial_metadata()
    response = await client.execute("CRASH")
    assert response.error == "INTERNAL: CRASH failed unexpectedly; see the server log"
    event = await asyncio.wait_for(stream.read(), 10)
    assert json.loads(event.payload_json) == {
        "code": "INTERNAL",
        "message": "CRASH failed unexpectedly; see the server log",
    }
    stream.cancel()


async def test_shutdown_answers_an_action_it_cuts_short(client: Client) -> None:
    runtime = client.app.runtime
    call = asyncio.create_task(
        runtime.execute(CALLER, ActionCall("WAIT_FOR", {"text": "never"}, "cut-1", timeout_ms=60_000))
    )
    while not runtime._tasks:  # yield until the action is running
        await asyncio.sleep(0)
    await runtime.close(grace_s=0)
    outcome = await asyncio.wait_for(call, 10)
    assert outcome.error == "DEVICE_UNAVAILABLE: the server shut down before the action finished"
    replay = await runtime.execute(
        CALLER, ActionCall("WAIT_FOR", {"text": "never"}, "cut-1", timeout_ms=60_000)
    )
    assert replay == outcome
