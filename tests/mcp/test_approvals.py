"""An MCP call held for an approval waits as a gRPC one does and is answered as one is (the
`phoneuse-runtime approvals` command, the Iris app); where the owner says the MCP client's user is
the owner (`mcp_client_is_owner`), a client that can elicit also asks its user, the first answer
wins, and the user's answer is bound to the exact call. (tests/redteam/test_mcp_holds.py: the
attacks on that.)"""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

from phoneuse_runtime.app import App, build_app, default_components
from phoneuse_runtime.device.sim.device import SimDevice
from phoneuse_runtime.kernel.policies import AskFirst

from ..serving import EXE
from .helpers import MODES, TOKEN, connect, settings_for, subprocess_env, url_of

WAIT_S = 10.0
SMS = {"to": "+14155550101", "body": "see you at 7"}


@pytest.fixture
async def app(tmp_path: Path) -> AsyncIterator[App]:
    settings = settings_for(tmp_path / "data", mcp_client_is_owner=True)
    started = await build_app(
        settings,
        token=TOKEN,
        policies=[AskFirst(frozenset({"SEND_MESSAGE"}))],
        components=default_components(settings, token=TOKEN),
    )
    yield started
    await started.stop(grace_s=0)


async def sent(app: App) -> list[str]:
    device = app.runtime.device
    assert isinstance(device, SimDevice)
    return [m.body for m in await device.sms_messages() if m.body == SMS["body"]]


async def pending_id(app: App) -> str:
    for _ in range(int(WAIT_S / 0.02)):  # bounded poll: the hold begins once the call reaches the policy
        holds = app.runtime.approvals.pending()
        if holds:
            return holds[0].approval_id
        await asyncio.sleep(0.02)
    raise AssertionError("no call was held")


def answer(kind: str, approve: bool | None = None) -> Any:
    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        if kind == "hang":  # the user never answers here
            await asyncio.sleep(3600)
        content = None if approve is None else {"approve": approve}
        return types.ElicitResult(action=kind, content=content)

    asked: list[str] = []
    elicit.asked = asked  # type: ignore[attr-defined]
    return elicit


@pytest.mark.parametrize("mode", MODES)
async def test_the_client_s_user_approves_by_elicitation(app: App, mode: str) -> None:
    """2025: a request to the client during the call; 2026-07-28: input_required, then the retry."""
    elicit = answer("accept", True)
    async with connect(url_of(app), mode=mode, elicitation_callback=elicit) as client:
        result = await client.call_tool("send_message", SMS)
    assert not result.is_error, result.content
    assert await sent(app) == [SMS["body"]]
    [message] = elicit.asked
    assert "SEND_MESSAGE" in message and SMS["body"] in message


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("kind", "approve"), [("accept", False), ("decline", None)])
async def test_the_client_s_user_denies_by_elicitation(
    app: App, kind: str, approve: bool | None, mode: str
) -> None:
    async with connect(url_of(app), mode=mode, elicitation_callback=answer(kind, approve)) as client:
        result = await client.call_tool("send_message", SMS)
    assert result.is_error
    assert result.content[0].text == "DENIED: SEND_MESSAGE was declined by the MCP client's user"  # type: ignore[union-attr]
    assert await sent(app) == []


async def test_the_owner_answers_first_and_the_client_s_prompt_is_withdrawn(app: App) -> None:
    elicit = answer("hang")
    async with connect(url_of(app), mode="legacy", elicitation_callback=elicit) as client:
        call = asyncio.create_task(client.call_tool("send_message", SMS))
        approval_id = await pending_id(app)
        app.runtime.approvals.answer(approval_id, approved=True, by="owner")
        result = await asyncio.wait_for(call, WAIT_S)
    assert not result.is_error, result.content
    assert len(elicit.asked) == 1
    assert await sent(app) == [SMS["body"]]


async def test_a_held_call_of_a_client_without_elicitation_is_answered_by_the_approvals_command(
    app: App, tmp_path: Path
) -> None:
    async with connect(url_of(app)) as client:  # 2026-07-28: no question during the call
        call = asyncio.create_task(client.call_tool("send_message", {**SMS, "timeout_ms": 20_000}))
        approval_id = await pending_id(app)
        assert await sent(app) == []  # it waits
        done = await asyncio.to_thread(
            subprocess.run,
            [*EXE, "approvals", "approve", approval_id, "--data-dir", str(tmp_path / "data")],
            capture_output=True,
            text=True,
            env=subprocess_env(tmp_path / "data"),
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        result = await asyncio.wait_for(call, WAIT_S)
    assert not result.is_error, result.content
    assert await sent(app) == [SMS["body"]]


async def test_a_2026_user_who_cancels_leaves_the_call_to_the_owner(app: App) -> None:
    async with connect(url_of(app), elicitation_callback=answer("cancel")) as client:
        call = asyncio.create_task(client.call_tool("send_message", SMS))
        approval_id = await pending_id(app)  # the user cancelled; the retry joins the held call
        app.runtime.approvals.answer(approval_id, approved=True, by="owner")
        result = await asyncio.wait_for(call, WAIT_S)
    assert not result.is_error, result.content
    assert await sent(app) == [SMS["body"]]


async def test_a_request_state_this_server_did_not_give_is_refused(app: App) -> None:
    async with connect(url_of(app), elicitation_callback=answer("accept", True)) as client:
        with pytest.raises(MCPError) as caught:
            await client.call_tool(
                "send_message",
                SMS,
                request_state="not ours",
                input_responses={"approve": types.ElicitResult(action="accept", content={"approve": True})},
            )
    assert caught.value.error.message == "BAD_REQUEST: requestState is not one this server gave"
    assert await sent(app) == []
