"""Execute over gRPC: what only this wire has (its own deadlines, frame limits), and shutdown.

The runtime's contracts for Execute (validation, deadlines, idempotency, policies, approvals)
are in tests/contract/, run through every front end."""

from __future__ import annotations

import asyncio
import json

import grpc
import pytest

from phoneuse_runtime.kernel.callers import Caller
from phoneuse_runtime.kernel.runtime import ActionCall
from phoneuse_runtime.rpc import protocol_pb2 as pb

from .conftest import AUTH, Client
from .contract.frontend import SCREEN_WITH_TEXT

CALLER = Caller("test", "agent")


@pytest.mark.parametrize(
    ("request_kwargs", "details"),
    [
        ({"action_type": "", "request_id": "r", "timeout_ms": 1000}, "BAD_REQUEST: action_type is empty"),
        ({"action_type": "TAP", "request_id": "", "timeout_ms": 1000}, "BAD_REQUEST: request_id is empty"),
        ({"action_type": "TAP", "request_id": "r"}, "BAD_REQUEST: timeout_ms must be > 0, got 0"),
    ],
    ids=["no-action-type", "no-request-id", "no-timeout"],
)
async def test_a_malformed_request_is_invalid_argument(
    client: Client, request_kwargs: dict[str, object], details: str
) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await client.stub.Execute(pb.ActionRequest(**request_kwargs), metadata=AUTH)  # type: ignore[arg-type]
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert info.value.details() == details


async def test_the_clients_rpc_deadline_does_not_cut_the_action_short(client: Client) -> None:
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


async def test_while_the_runtime_drains_what_runs_finishes_and_nothing_new_starts(client: Client) -> None:
    """The app's stop drains the runtime before it stops the front ends: a call that arrives then
    is refused at once (typed, and kept for its retries), the one in flight gets its answer."""
    runtime = client.app.runtime
    running = asyncio.create_task(
        runtime.execute(
            CALLER, ActionCall("WAIT_FOR", {"text": "Hello", "timeout_ms": "200"}, "in-1", timeout_ms=5_000)
        )
    )
    while not runtime._tasks:  # yield until the action is running
        await asyncio.sleep(0)
    draining = asyncio.create_task(runtime.drain(grace_s=5))
    await asyncio.sleep(0)
    late = await runtime.execute(CALLER, ActionCall("GET_CLIPBOARD", {}, "late-1", timeout_ms=5_000))
    assert not late.success and late.error.startswith("DEVICE_UNAVAILABLE: the server is stopping"), late
    assert await runtime.execute(CALLER, ActionCall("GET_CLIPBOARD", {}, "late-1", timeout_ms=5_000)) == late
    await draining
    finished = await running
    assert finished.error != late.error, finished  # it ran to its own end, not refused


async def test_shutdown_answers_an_action_it_cuts_short(client: Client) -> None:
    runtime = client.app.runtime
    completed = runtime.subscribe(CALLER, "watcher", ["TASK_COMPLETED"])
    call = asyncio.create_task(
        runtime.execute(CALLER, ActionCall("WAIT_FOR", {"text": "never"}, "cut-1", timeout_ms=60_000))
    )
    while not runtime._tasks:  # yield until the action is running
        await asyncio.sleep(0)
    await runtime.close(grace_s=0)
    outcome = await asyncio.wait_for(call, 10)
    assert outcome.error == "DEVICE_UNAVAILABLE: the server shut down before the action finished"
    # It is announced too, before the streams end.
    [event] = [json.loads(e.payload_json) async for e in completed]
    assert (event["request_id"], event["success"], event["error"]) == ("cut-1", False, outcome.error)
    replay = await runtime.execute(
        CALLER, ActionCall("WAIT_FOR", {"text": "never"}, "cut-1", timeout_ms=60_000)
    )
    assert replay == outcome
