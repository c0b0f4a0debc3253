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
from phoneuse_runtime.kernel.limits import MAX_TIMEOUT_MS
from phoneuse_runtime.kernel.policies import AskFirst
from phoneuse_runtime.rpc import protocol_pb2 as pb
from phoneuse_runtime.rpc import protocol_pb2_grpc as pb_grpc

from ..mcp.helpers import TOKEN, connect, settings_for, url_of

AUTH = (("authorization", f"Bearer {TOKEN}"),)
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
