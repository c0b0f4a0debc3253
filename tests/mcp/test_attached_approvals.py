"""Approvals through a `phoneuse-runtime mcp` attached to a running `serve` (issue 28 item 6): with
the owner's `mcp_client_is_owner`, the attached face asks its client's user about its own held
calls, as the face that serves the phone itself does, and the answer goes through the approval
store the terminal's `approvals` writes (the server takes it from there). Without the setting it
asks nobody, and the terminal still answers. A real `serve` subprocess, the official SDK's stdio
client spawning the real `mcp`; the attacks on it are in tests/redteam/test_mcp_holds.py."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client

from ..serving import EXE, ServeProcess, held_in_store, start_holding_serve
from ..waiting import wait_until
from .helpers import MODES, attached_mcp, subprocess_env

SMS = {"to": "+14155550101", "body": "attached: see you at 7"}
WAIT_S = 30.0


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    """A `serve` that holds SEND_MESSAGE for the owner with nothing paired (`approvals = "always"`,
    the owner's config.toml, which the attached `mcp` reads too)."""
    s = start_holding_serve(tmp_path_factory.mktemp("attached-approvals") / "data")
    yield s
    s.proc.terminate()
    s.proc.wait(timeout=30)


@asynccontextmanager
async def attached(data_dir: Path, *, owner: bool, elicit: Any, mode: str = "auto") -> AsyncIterator[Client]:
    async with Client(attached_mcp(data_dir, owner=owner), mode=mode, elicitation_callback=elicit) as client:
        yield client


def user(action: str, approve: bool | None = None) -> Any:
    """The client's user, answering every question with `action` (and `approve`)."""
    asked: list[str] = []

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action=action, content=None if approve is None else {"approve": approve})

    elicit.asked = asked  # type: ignore[attr-defined]
    return elicit


def pending(data_dir: Path) -> list[str]:
    """The approval ids the owner's terminal shows held."""
    return [p.approval_id for p in held_in_store(data_dir)]


async def terminal(data_dir: Path, verb: str, approval_id: str) -> None:
    """The owner answers from the terminal: `phoneuse-runtime approvals approve|deny ID`."""
    done = await asyncio.to_thread(
        subprocess.run,
        [*EXE, "approvals", verb, approval_id],
        capture_output=True,
        text=True,
        env=subprocess_env(data_dir),
        timeout=60,
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("mode", MODES)
async def test_the_attached_face_asks_its_user_and_the_answer_runs_the_call(
    served: ServeProcess, mode: str
) -> None:
    """2025: a question during the call; 2026-07-28: input_required, then the retry joins the call."""
    elicit = user("accept", True)
    body = f"{SMS['body']} ({mode})"
    async with attached(served.data_dir, owner=True, elicit=elicit, mode=mode) as client:
        result = await client.call_tool("send_message", {**SMS, "body": body, "timeout_ms": 60_000})
    assert not result.is_error, result.content
    assert result.structured_content is not None and result.structured_content["message_id"]
    [message] = elicit.asked
    assert message.startswith(f"agent asks to run SEND_MESSAGE to={SMS['to']} ")
    assert body in message
    assert pending(served.data_dir) == []  # the store's row went with the hold


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("action", "approve"), [("accept", False), ("decline", None)])
async def test_the_attached_face_s_user_denies(
    served: ServeProcess, mode: str, action: str, approve: bool | None
) -> None:
    async with attached(served.data_dir, owner=True, elicit=user(action, approve), mode=mode) as client:
        result = await client.call_tool("send_message", {**SMS, "timeout_ms": 60_000})
    assert result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    assert text == "DENIED: SEND_MESSAGE was declined by terminal (the MCP client's user)"


async def test_the_owner_answers_first_in_the_terminal_and_the_prompt_is_withdrawn(
    served: ServeProcess,
) -> None:
    """The user never answers; the owner approves with `approvals approve`: the call runs."""
    asked: list[str] = []
    withdrawn = asyncio.Event()

    async def never(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        try:
            await asyncio.Event().wait()
        finally:
            withdrawn.set()
        raise AssertionError("unreachable")

    async with attached(served.data_dir, owner=True, elicit=never, mode="legacy") as client:
        call = asyncio.create_task(client.call_tool("send_message", {**SMS, "timeout_ms": 60_000}))
        await wait_until(lambda: bool(asked), within_s=WAIT_S, what="the user was asked")
        [held] = pending(served.data_dir)
        await terminal(served.data_dir, "approve", held)
        result = await asyncio.wait_for(call, WAIT_S)
        await asyncio.wait_for(withdrawn.wait(), WAIT_S)  # the client's question was cancelled
    assert not result.is_error, result.content
    assert len(asked) == 1


@pytest.mark.parametrize("mode", MODES)
async def test_without_the_owner_s_setting_nobody_is_asked_and_the_terminal_answers(
    served: ServeProcess, mode: str
) -> None:
    elicit = user("accept", True)  # a client that would approve anything: the agent's
    async with attached(served.data_dir, owner=False, elicit=elicit, mode=mode) as client:
        call = asyncio.create_task(client.call_tool("send_message", {**SMS, "timeout_ms": 60_000}))
        await wait_until(lambda: bool(pending(served.data_dir)), within_s=WAIT_S, what="the call was held")
        [held] = pending(served.data_dir)
        await terminal(served.data_dir, "deny", held)
        result = await asyncio.wait_for(call, WAIT_S)
    assert elicit.asked == []
    assert result.is_error and result.content[0].text.startswith("DENIED: ")  # type: ignore[union-attr]
