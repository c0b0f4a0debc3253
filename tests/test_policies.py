"""The policy chain: a policy can hold a call within its deadline, or deny it."""

from __future__ import annotations

import asyncio

from phoneuse_runtime.errors import Denied
from phoneuse_runtime.policies import PolicyCall

from .conftest import Client


class HoldForApproval:
    """What the chat app's approval will be: hold the call until a person answers."""

    name = "approval"

    def __init__(self) -> None:
        self.waiting: asyncio.Queue[PolicyCall] = asyncio.Queue()
        self.answers: dict[str, asyncio.Future[bool]] = {}

    async def check(self, call: PolicyCall) -> None:
        answer = asyncio.get_running_loop().create_future()
        self.answers[call.request_id] = answer
        await self.waiting.put(call)
        if not await answer:
            raise Denied(f"{call.action_type} was declined on the phone")


async def test_a_held_call_runs_when_approved_and_is_denied_when_declined(client: Client) -> None:
    policy = HoldForApproval()
    client.app.runtime.policies.append(policy)
    approved = asyncio.create_task(client.execute("SET_CLIPBOARD", {"text": "ok"}, request_id="a-1"))
    held = await policy.waiting.get()
    assert held.action_type == "SET_CLIPBOARD"
    assert held.params.model_dump() == {"text": "ok"}  # typed params, validated before the policy
    assert await client.app.runtime.device.get_clipboard() == ""  # nothing ran while held
    policy.answers["a-1"].set_result(True)
    assert (await approved).success
    assert await client.app.runtime.device.get_clipboard() == "ok"

    declined = asyncio.create_task(client.execute("SET_CLIPBOARD", {"text": "no"}, request_id="a-2"))
    await policy.waiting.get()
    policy.answers["a-2"].set_result(False)
    response = await declined
    assert response.error == "DENIED: SET_CLIPBOARD was declined on the phone"
    assert await client.app.runtime.device.get_clipboard() == "ok"


async def test_a_hold_past_the_deadline_is_a_timeout(client: Client) -> None:
    policy = HoldForApproval()
    client.app.runtime.policies.append(policy)
    response = await client.execute("SET_CLIPBOARD", {"text": "late"}, request_id="a-3", timeout_ms=200)
    assert response.error.startswith("TIMEOUT: ")
    assert policy.answers["a-3"].cancelled()
    assert await client.app.runtime.device.get_clipboard() == ""
