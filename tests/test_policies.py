"""The policy chain and holds: a policy can hold a call for a person's answer within its deadline."""

from __future__ import annotations

import asyncio
import json

from phoneuse_runtime.policies import AskFirst
from phoneuse_runtime.rpc import protocol_pb2 as pb

from .actions.conftest import sim
from .conftest import AUTH, Client, ServerFactory


async def _approvals(client: Client) -> asyncio.Queue[dict[str, object]]:
    """APPROVAL_REQUESTED payloads, as a person's app would receive them over Subscribe."""
    stream = client.stub.Subscribe(pb.SubscribeRequest(event_types=["APPROVAL_REQUESTED"]), metadata=AUTH)
    await stream.initial_metadata()
    queue: asyncio.Queue[dict[str, object]] = asyncio.Queue()

    async def pump() -> None:
        async for event in stream:
            await queue.put(json.loads(event.payload_json))

    asyncio.get_running_loop().create_task(pump())
    return queue


async def test_a_held_call_runs_when_approved_and_is_denied_when_declined(make_client: ServerFactory) -> None:
    client = await make_client(policies=[AskFirst(frozenset({"SET_CLIPBOARD"}))])
    requests = await _approvals(client)
    approvals = client.app.runtime.approvals
    approved = asyncio.create_task(client.execute("SET_CLIPBOARD", {"text": "ok"}, request_id="a-1"))
    held = await requests.get()
    assert held["name"] == "SET_CLIPBOARD" and held["params"] == {"text": "ok"}
    assert await sim(client).get_clipboard() == ""  # nothing ran while held
    approvals.answer(str(held["approval_id"]), approved=True, by="owner")
    assert (await approved).success
    assert await sim(client).get_clipboard() == "ok"

    declined = asyncio.create_task(client.execute("SET_CLIPBOARD", {"text": "no"}, request_id="a-2"))
    held = await requests.get()
    approvals.answer(str(held["approval_id"]), approved=False, by="owner")
    response = await declined
    assert response.error == "DENIED: SET_CLIPBOARD was declined by owner"
    assert await sim(client).get_clipboard() == "ok"


async def test_a_hold_past_the_deadline_is_a_timeout(make_client: ServerFactory) -> None:
    client = await make_client(policies=[AskFirst(frozenset({"SET_CLIPBOARD"}))])
    requests = await _approvals(client)
    response = await client.execute("SET_CLIPBOARD", {"text": "late"}, request_id="a-3", timeout_ms=200)
    held = await requests.get()
    assert response.error == (
        f"TIMEOUT: no answer came to approval {held['approval_id']} for SET_CLIPBOARD within 200 ms; "
        "nothing was done"
    )
    assert await sim(client).get_clipboard() == ""
