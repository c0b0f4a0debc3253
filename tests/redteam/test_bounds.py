"""Bounds no caller can pass (issue 25, items 3 and 4): a deadline past a day on every front end,
and memory that one token holder cannot exhaust (the replay cache, a stalled subscriber's queue,
the simulator's screens, errors that quote what the caller sent)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest
from mcp.shared.exceptions import MCPError

from phoneuse_runtime.app import App, build_app, default_components
from phoneuse_runtime.device.sim.device import SimDevice
from phoneuse_runtime.kernel.limits import MAX_PARAM_CHARS, MAX_TIMEOUT_MS
from phoneuse_runtime.kernel.policies import AskFirst
from phoneuse_runtime.rpc import protocol_pb2 as pb
from phoneuse_runtime.rpc import protocol_pb2_grpc as pb_grpc

from ..conftest import TOKEN as SERVE_TOKEN
from ..mcp.helpers import TOKEN, connect, settings_for, url_of
from ..serving import serve

AUTH = (("authorization", f"Bearer {TOKEN}"),)
SERVE_AUTH = (("authorization", f"Bearer {SERVE_TOKEN}"),)
SMS = {"to": "+14155550101", "body": "wire the money"}
GUARD_S = 30.0  # a refusal comes at once; before the fix the call sat in its hold


@pytest.fixture
async def app(tmp_path: Path) -> AsyncIterator[App]:
    """The production app with its MCP front end, SEND_MESSAGE held for the owner."""
    settings = settings_for(tmp_path / "data")
    started = await build_app(
        settings,
        token=TOKEN,
        policies=[AskFirst(frozenset({"SEND_MESSAGE"}))],
        components=default_components(settings, token=TOKEN),
    )
    yield started
    await started.stop(grace_s=0)


async def untouched(app: App) -> None:
    """No SMS went out, and no hold waits for the owner (nor is mirrored to the terminal)."""
    device = app.runtime.device
    assert isinstance(device, SimDevice)
    assert [m.body for m in await device.sms_messages() if m.body == SMS["body"]] == []
    assert app.runtime.approvals.pending() == []


async def test_a_deadline_of_2_63_ms_over_grpc_is_refused_and_nothing_is_held(app: App) -> None:
    """An agent with a valid token sends SEND_MESSAGE with timeout_ms = 2^63-1 over gRPC."""
    async with grpc.aio.insecure_channel(f"127.0.0.1:{app.port}") as channel:
        stub = pb_grpc.AndroidRuntimeStub(channel)
        for timeout_ms in (2**63 - 1, MAX_TIMEOUT_MS + 1):
            request = pb.ActionRequest(
                action_type="SEND_MESSAGE", params=SMS, request_id=uuid.uuid4().hex, timeout_ms=timeout_ms
            )
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await stub.Execute(request, metadata=AUTH, timeout=GUARD_S)
            assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert refused.value.details() == (
                f"BAD_REQUEST: timeout_ms must be at most {MAX_TIMEOUT_MS} (a day), got {timeout_ms}"
            )
    await untouched(app)


@pytest.mark.parametrize("tool", ["send_message", "query_memory"])
async def test_a_deadline_of_1e300_ms_over_mcp_is_refused_and_nothing_is_held(app: App, tool: str) -> None:
    """An agent with a valid token calls an MCP tool with timeout_ms = 1e300 (an integer to JSON Schema)."""
    arguments: dict[str, object] = dict(SMS) if tool == "send_message" else {"q": "bank"}
    async with connect(url_of(app)) as client:
        with pytest.raises(MCPError) as refused:
            await asyncio.wait_for(client.call_tool(tool, {**arguments, "timeout_ms": 1e300}), GUARD_S)
    assert refused.value.error.message.startswith(
        f"BAD_REQUEST: timeout_ms must be at most {MAX_TIMEOUT_MS} (a day), got 1e+300"
    )
    await untouched(app)


EMOJI_TEXT = "\U0001f600" * MAX_PARAM_CHARS  # 256 Ki emoji: 1 MiB of UTF-8, the largest value allowed
# Calls of each kind. The 1,500 took serve to 4.3 GB; before the fix these 200 took it from
# 63 to 1,352 MiB, after it to about 105 MiB, the same as 500 do: every retained thing is bounded.
FLOOD = 200
SCREEN_XML = (
    '<?xml version="1.0" encoding="UTF-8"?><hierarchy rotation="0">'
    + '<node index="0" text="{}" resource-id="" class="android.widget.TextView" package="com.example.big" '
    'content-desc="" checkable="false" checked="false" clickable="false" enabled="true" focusable="false" '
    'focused="false" scrollable="false" long-clickable="false" password="false" selected="false" '
    'bounds="[0,0][1080,100]" />' + "</hierarchy>"
)


async def _stalled_subscriber(
    stub: pb_grpc.AndroidRuntimeStub,
) -> grpc.aio.UnaryStreamCall[pb.SubscribeRequest, pb.Event]:
    """A Subscribe to every event whose client never reads a message."""
    stream = stub.Subscribe(pb.SubscribeRequest(subscriber_id="never-reads"), metadata=SERVE_AUTH)
    await stream.initial_metadata()  # the subscription exists: every later event is queued for it
    return stream


@pytest.mark.timeout(600)  # a hang guard: 1,500 calls of 1 MiB each take minutes on a loaded machine
async def test_one_token_holder_cannot_exhaust_the_phone_s_memory(tmp_path: Path) -> None:
    """An agent with a valid token sends failed TAPs of 256 Ki emoji, huge SIM_SET_SCREENs and
    leaves a Subscribe stream unread: the server stays under twice its idle RSS."""
    data = tmp_path / "data"
    with serve(data) as served:
        async with grpc.aio.insecure_channel(
            f"127.0.0.1:{served.port}", options=[("grpc.max_send_message_length", 4 * 1024 * 1024)]
        ) as channel:
            stub = pb_grpc.AndroidRuntimeStub(channel)

            async def execute(action_type: str, params: dict[str, str]) -> pb.ActionResponse:
                request = pb.ActionRequest(
                    action_type=action_type, params=params, request_id=uuid.uuid4().hex, timeout_ms=60_000
                )
                response: pb.ActionResponse = await stub.Execute(request, metadata=SERVE_AUTH, timeout=120)
                return response

            async def contacts() -> list[str]:
                page = await stub.Query(
                    pb.QueryRequest(query_type=pb.CONTACTS), metadata=SERVE_AUTH, timeout=60
                )
                return list(page.results_json)

            owner_contacts = await contacts()
            for i in range(20):  # warm: every path the flood takes has run once
                await execute("TAP", {"text": f"warm {i}"})
                await execute("SIM_SET_SCREEN", {"xml": SCREEN_XML.format(f"warm {i}")})
                await execute("BACK", {})
            idle_kib = served.rss_kib()

            stalled = await _stalled_subscriber(stub)
            longest_error = 0
            for i in range(FLOOD):
                tapped = await execute("TAP", {"text": EMOJI_TEXT[:-8] + f"{i:08d}"})
                assert not tapped.success and tapped.error.startswith("ELEMENT_NOT_FOUND: ")
                longest_error = max(longest_error, len(tapped.error))
                shown = await execute(
                    "SIM_SET_SCREEN", {"xml": SCREEN_XML.format(f"{i:08d}" + "x" * 900_000)}
                )
                assert shown.success, shown.error
            peak_kib = served.rss_kib()
            stalled.cancel()
            assert await contacts() == owner_contacts  # the owner's phone answers, and is as it was
    print(f"serve RSS: {idle_kib // 1024} MiB idle, {peak_kib // 1024} MiB after the flood")
    assert peak_kib < 2 * idle_kib, f"RSS went from {idle_kib // 1024} MiB idle to {peak_kib // 1024} MiB"
    assert longest_error < 1000  # a short prefix of what was sent, never all of it
