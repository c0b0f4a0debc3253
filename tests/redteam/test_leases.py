"""Holds and leases across principals (issue 25: 5): a hold that answers for the lease, and one
principal's held call stopping another's. Through the production factory (the gateway's
approvals, approvals = "always"; the leases in the runtime's memory), two fleet principals with
tokens of their own over gRPC. Each asserts that nothing was sent from the owner's phone."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import grpc
import pytest

from phoneuse_runtime.app import App, build_app, default_components
from phoneuse_runtime.config.settings import Settings
from phoneuse_runtime.device.sim.device import SimDevice
from phoneuse_runtime.rpc import protocol_pb2 as pb
from phoneuse_runtime.rpc import protocol_pb2_grpc as pb_grpc
from phoneuse_runtime.rpc.server import GrpcServer

TOKENS = {name: f"{name}-{uuid.uuid4().hex}" for name in ("agent", "alice", "dave")}
SMS = {"to": "+14155550101", "body": "send me the code"}
TAP = {"x": "5", "y": "5"}


@dataclass
class Fleet:
    app: App
    stub: pb_grpc.AndroidRuntimeAsyncStub

    async def execute(
        self, principal: str, action: str, params: dict[str, str], *, timeout_ms: int = 10_000
    ) -> pb.ActionResponse:
        request = pb.ActionRequest(
            action_type=action, params=params, request_id=uuid.uuid4().hex, timeout_ms=timeout_ms
        )
        metadata = (("authorization", f"Bearer {TOKENS[principal]}"),)
        response: pb.ActionResponse = await self.stub.Execute(request, metadata=metadata, timeout=30)
        return response

    async def sent(self) -> list[str]:
        device = self.app.runtime.device
        assert isinstance(device, SimDevice)
        return [m.body for m in await device.sms_messages() if m.box == "sent"]

    async def held(self) -> None:
        """Returns once a call is held for the owner (the runtime's hold watchers hear it begin)."""
        began = asyncio.Event()
        self.app.runtime.approvals.watch(lambda _hold, begins: began.set() if begins else None)
        if not self.app.runtime.approvals.pending():
            await asyncio.wait_for(began.wait(), timeout=10)


@pytest.fixture
async def fleet(tmp_path: Path) -> AsyncIterator[Fleet]:
    """serve's components, the gRPC server's tokens naming alice and dave beside the agent."""
    settings = replace(
        Settings(data_dir=tmp_path / "data", grpc_listen="127.0.0.1:0", gateway_listen="127.0.0.1:0"),
        approvals="always",
        memory_ingest=False,
    )
    parts = [
        GrpcServer("127.0.0.1:0", tokens=TOKENS) if isinstance(c, GrpcServer) else c
        for c in default_components(settings, token=TOKENS["agent"])
    ]
    app = await build_app(settings, token=TOKENS["agent"], components=parts)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{app.port}")
    yield Fleet(app, pb_grpc.AndroidRuntimeStub(channel))  # type: ignore[arg-type]
    await channel.close()
    await app.stop(grace_s=0)


def _details(response: pb.ActionResponse) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(response.result_json or "{}")
    return found


async def test_another_principals_held_action_on_a_leased_phone_is_conflict_not_a_hold(fleet: Fleet) -> None:
    """A principal without the lease sends an SMS on a phone another principal holds: it is
    answered CONFLICT at once, never held for the owner, and nothing is sent."""
    assert (await fleet.execute("dave", "LEASE_ACQUIRE", {"ttl_s": "60"})).success
    refused = await fleet.execute("alice", "SEND_MESSAGE", SMS, timeout_ms=3_000)
    assert refused.error.startswith("CONFLICT: "), refused.error
    assert "held by 'dave'" in refused.error and _details(refused)["holder"] == "dave"
    assert fleet.app.runtime.approvals.pending() == []
    assert SMS["body"] not in await fleet.sent()


async def test_a_held_call_blocks_only_its_own_principal(fleet: Fleet) -> None:
    """One principal's SMS is held for the owner; another principal's TAP runs meanwhile, and
    the held principal's own TAP waits for its hold. Nothing is sent until the owner answers."""
    held = asyncio.create_task(fleet.execute("alice", "SEND_MESSAGE", SMS))
    await fleet.held()
    tapped = await fleet.execute("dave", "TAP", TAP, timeout_ms=3_000)
    assert tapped.success, tapped.error
    waiting = await fleet.execute("alice", "TAP", TAP, timeout_ms=500)
    assert waiting.error.startswith("TIMEOUT: ") and "waited for approval" in waiting.error
    hold = fleet.app.runtime.approvals.pending()[0]
    fleet.app.runtime.approvals.answer(hold.approval_id, approved=False, by="owner")
    assert (await held).error.startswith("DENIED: ")
    assert SMS["body"] not in await fleet.sent()


async def test_a_call_approved_after_another_principal_took_the_lease_is_conflict(fleet: Fleet) -> None:
    """A principal's SMS is held; meanwhile another principal takes the phone's lease; the owner
    then approves: the SMS is refused CONFLICT (the lease is read again after the hold), not sent."""
    held = asyncio.create_task(fleet.execute("alice", "SEND_MESSAGE", SMS))
    await fleet.held()
    assert (await fleet.execute("dave", "LEASE_ACQUIRE", {"ttl_s": "60"})).success
    hold = fleet.app.runtime.approvals.pending()[0]
    fleet.app.runtime.approvals.answer(hold.approval_id, approved=True, by="owner")
    answer = await held
    assert answer.error.startswith("CONFLICT: ") and "held by 'dave'" in answer.error
    assert SMS["body"] not in await fleet.sent()
