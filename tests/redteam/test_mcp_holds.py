"""Holds answered by anyone but the owner, over MCP: the MCP client is the agent, so its answers
are not the owner's unless the owner's settings say this client's user is the owner
(`mcp_client_is_owner`); a `requestState` is one this server sealed for that principal, never a
hand-made one; a gRPC call that says `x-phoneuse-frontend: mcp` gets nothing of MCP's answering,
whether the face serves the phone itself or is a `phoneuse-runtime mcp` attached to a running
`serve` (whose answers go through the terminal's approval store). And the prompt such an owner
reads shows the recipient first, whole and stripped."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import grpc
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from phoneuse_runtime.app import App, build_app, default_components
from phoneuse_runtime.device.sim.device import SimDevice
from phoneuse_runtime.kernel.policies import AskFirst
from phoneuse_runtime.owner import approval_store as store
from phoneuse_runtime.owner.approvals import Hold, NoSuchApproval
from phoneuse_runtime.rpc import protocol_pb2 as pb
from phoneuse_runtime.rpc import protocol_pb2_grpc as pb_grpc
from phoneuse_runtime.rpc.frontends import FRONTEND_KEY

from ..mcp.helpers import MODES, TOKEN, attached_mcp, connect, settings_for, subprocess_env, url_of
from ..serving import EXE, ServeProcess, held_in_store, start_holding_serve
from ..waiting import wait_until

WAIT_S = 20.0
SMS = {"to": "+14155550101", "body": "see you at 7"}
REFUSED = "BAD_REQUEST: requestState is not one this server gave"
APPROVE: dict[str, types.InputResponse] = {
    "approve": types.ElicitResult(action="accept", content={"approve": True})
}


class Owned:
    """A running app whose SEND_MESSAGE is held for the owner, and its holds as they begin."""

    def __init__(self, app: App) -> None:
        self.app = app
        self.before: set[str] = set()  # the sim's own sent messages, there from the start
        self.began: asyncio.Queue[Hold] = asyncio.Queue()
        app.runtime.approvals.watch(self._watch)

    def _watch(self, hold: Hold, began: bool) -> None:
        if began:
            self.began.put_nowait(hold)

    @property
    def url(self) -> str:
        return url_of(self.app)

    async def next_hold(self) -> Hold:
        return await asyncio.wait_for(self.began.get(), WAIT_S)

    def pending(self) -> list[str]:
        return [hold.approval_id for hold in self.app.runtime.approvals.pending()]

    def owner_denies(self, hold: Hold) -> bool:
        """The owner's own answer (as the Iris app gives it); False if someone answered first."""
        with contextlib.suppress(NoSuchApproval):
            self.app.runtime.approvals.answer(hold.approval_id, approved=False, by="the owner")
            return True
        return False

    async def sent(self) -> list[str]:
        device = self.app.runtime.device
        assert isinstance(device, SimDevice)
        return [m.body for m in await device.sms_messages() if m.box != "inbox" and m.id not in self.before]


async def owned_app(tmp_path: Path, **overrides: Any) -> Owned:
    settings = settings_for(tmp_path / "data", **overrides)
    app = await build_app(
        settings,
        token=TOKEN,
        policies=[AskFirst(frozenset({"SEND_MESSAGE"}))],
        components=default_components(settings, token=TOKEN),
    )
    owned = Owned(app)
    device = app.runtime.device
    assert isinstance(device, SimDevice)
    owned.before = {m.id for m in await device.sms_messages()}
    return owned


@pytest.fixture
async def owned(tmp_path: Path) -> AsyncIterator[Owned]:
    """The owner's default settings: the MCP client's user is not the owner."""
    o = await owned_app(tmp_path)
    yield o
    await o.app.stop(grace_s=0)


@pytest.fixture
async def owner_runs_the_agent(tmp_path: Path) -> AsyncIterator[Owned]:
    """`mcp_client_is_owner = true`: the owner said this client's user is themselves."""
    o = await owned_app(tmp_path, mcp_client_is_owner=True)
    yield o
    await o.app.stop(grace_s=0)


@pytest.fixture(params=[False, True], ids=["default", "mcp_client_is_owner"])
async def either(tmp_path: Path, request: pytest.FixtureRequest) -> AsyncIterator[Owned]:
    """Both settings of `mcp_client_is_owner`."""
    o = await owned_app(tmp_path, mcp_client_is_owner=request.param)
    yield o
    await o.app.stop(grace_s=0)


def approving(asked: list[str]) -> Any:
    """An MCP client's elicitation handler that approves whatever it is asked (the agent's)."""

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"approve": True})

    return elicit


def hand_made(hold: Hold, **extra: str) -> str:
    """The requestState an agent writes from its own APPROVAL_REQUESTED event."""
    return json.dumps({"request_id": hold.call.request_id, "approval_id": hold.approval_id, **extra})


@pytest.mark.parametrize("mode", MODES)
async def test_the_agent_is_not_asked_to_approve_its_own_call(owned: Owned, mode: str) -> None:
    """An agent whose MCP client declares elicitation answers `approve: true` to its own held SMS."""
    asked: list[str] = []
    async with connect(owned.url, mode=mode, elicitation_callback=approving(asked)) as client:
        call = asyncio.create_task(client.call_tool("send_message", {**SMS, "timeout_ms": 60_000}))
        hold = await owned.next_hold()
        answered_by_owner = owned.owner_denies(hold)
        result = await asyncio.wait_for(call, WAIT_S)
    assert asked == []  # the agent's client was never asked
    assert answered_by_owner, "the hold was answered before the owner could"
    assert result.is_error
    assert result.content[0].text == "DENIED: SEND_MESSAGE was declined by the owner"  # type: ignore[union-attr]
    assert await owned.sent() == []  # nothing of the owner's was sent


async def _held_by_one_client_answered_by_another(owned: Owned, state: Any) -> None:
    async with connect(owned.url) as waiting, connect(owned.url) as forging:
        call = asyncio.create_task(waiting.call_tool("send_message", {**SMS, "timeout_ms": 60_000}))
        hold = await owned.next_hold()
        with pytest.raises(MCPError) as caught:
            await forging.call_tool("send_message", SMS, request_state=state(hold), input_responses=APPROVE)
        assert caught.value.error.message == REFUSED
        assert owned.pending() == [hold.approval_id]  # still the owner's to answer
        assert owned.owner_denies(hold)
        result = await asyncio.wait_for(call, WAIT_S)
    assert result.is_error
    assert await owned.sent() == []


async def test_a_hand_made_request_state_does_not_answer_a_hold(owned: Owned) -> None:
    """An agent writes `{"request_id": R, "approval_id": A}` from its own event to approve its SMS."""
    await _held_by_one_client_answered_by_another(owned, hand_made)


@pytest.mark.parametrize(
    "state",
    [
        hand_made,
        lambda hold: hand_made(hold, seal="0" * 64),
        lambda hold: hand_made(hold, seal="not hex"),
    ],
    ids=["unsealed", "forged-seal", "bad-seal"],
)
async def test_a_request_state_the_server_did_not_seal_is_refused_even_for_an_owner_client(
    owner_runs_the_agent: Owned, state: Any
) -> None:
    """An agent (with `mcp_client_is_owner` on) forges the state of a hold it was never asked about."""
    await _held_by_one_client_answered_by_another(owner_runs_the_agent, state)


async def test_a_grpc_call_that_claims_to_be_mcp_is_not_answered_over_mcp(either: Owned) -> None:
    """An agent sends SEND_MESSAGE over gRPC with `x-phoneuse-frontend: mcp`, then approves it over MCP."""
    owned = either
    metadata = (("authorization", f"Bearer {TOKEN}"), (FRONTEND_KEY, "mcp"))
    async with grpc.aio.insecure_channel(f"127.0.0.1:{owned.app.port}") as channel:
        stub = pb_grpc.AndroidRuntimeStub(channel)
        request_pb = pb.ActionRequest(
            action_type="SEND_MESSAGE", params=SMS, request_id="held-over-grpc", timeout_ms=60_000
        )
        call = asyncio.ensure_future(stub.Execute(request_pb, metadata=metadata))
        hold = await owned.next_hold()
        assert str(hold.call.caller) == "mcp:agent"  # it is named as it asked
        async with connect(owned.url, elicitation_callback=approving([])) as client:
            with pytest.raises(MCPError) as caught:
                await client.call_tool(
                    "send_message",
                    {**SMS, "request_id": "held-over-grpc"},
                    request_state=hand_made(hold),
                    input_responses=APPROVE,
                )
        assert caught.value.error.message == REFUSED
        assert owned.pending() == [hold.approval_id]
        assert owned.owner_denies(hold)
        response = await asyncio.wait_for(call, WAIT_S)
    assert not response.success and response.error.startswith("DENIED")
    assert await owned.sent() == []


@pytest.mark.parametrize("mode", MODES)
async def test_an_owner_client_still_answers_its_own_calls(owner_runs_the_agent: Owned, mode: str) -> None:
    """The owner's setting on: the client's user (the owner) approves by elicitation, sealed state."""
    asked: list[str] = []
    async with connect(owner_runs_the_agent.url, mode=mode, elicitation_callback=approving(asked)) as client:
        result = await client.call_tool("send_message", SMS)
    assert not result.is_error, result.content
    assert len(asked) == 1
    assert await owner_runs_the_agent.sent() == [SMS["body"]]


HIDDEN_TO = "+14155550177"
PADDED = {"body": "\u202e" + "pad " * 525 + "\u200bend", "to": HIDDEN_TO}  # 2,100+ characters first


@pytest.mark.parametrize("mode", MODES)
async def test_the_approval_prompt_shows_the_recipient_first_whole_and_stripped(
    owner_runs_the_agent: Owned, mode: str
) -> None:
    """An agent pads `body` past 2,000 characters, first, with bidi and zero-width ones, to hide `to`."""
    asked: list[str] = []
    owned = owner_runs_the_agent

    async def deny(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"approve": False})

    async with connect(owned.url, mode=mode, elicitation_callback=deny) as client:
        result = await client.call_tool("send_message", PADDED)
    assert result.is_error
    [message] = asked
    first = message.splitlines()[0]
    assert first.startswith(f"agent asks to run SEND_MESSAGE to={HIDDEN_TO} ")  # the target first
    assert "pad " * 525 + "end" in message  # never cut
    assert not any(ch in message for ch in "\u202e\u200b")  # stripped
    assert await owned.sent() == []


@pytest.mark.parametrize("mode", MODES)
async def test_the_stdio_agent_is_not_asked_to_approve_its_own_call(tmp_path: Path, mode: str) -> None:
    """An agent spawns `phoneuse-runtime mcp` (stdio), declares elicitation and approves its own SMS."""
    env = {**subprocess_env(tmp_path / "data"), "PHONEUSE_GRPC_LISTEN": "127.0.0.1:0"}
    env["PHONEUSE_APPROVALS"] = "always"  # held with nothing paired: only the terminal answers
    spawned = StdioServerParameters(command=EXE[0], args=[*EXE[1:], "mcp", "--device", "sim"], env=env)
    asked: list[str] = []
    async with Client(spawned, mode=mode, elicitation_callback=approving(asked)) as client:
        result = await client.call_tool("send_message", {**SMS, "timeout_ms": 1500})
    assert asked == []
    assert result.is_error
    assert result.content[0].text.startswith("TIMEOUT: ")  # type: ignore[union-attr]  # nobody but the owner


# --- a `phoneuse-runtime mcp` attached to a running `serve` (issue 28 item 6) -------------------


@pytest.fixture(scope="module")
def held_serve(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    """A `serve` holding SEND_MESSAGE with nothing paired, for the terminal to answer."""
    s = start_holding_serve(tmp_path_factory.mktemp("attached-holds") / "data")
    yield s
    s.proc.terminate()
    s.proc.wait(timeout=30)


@pytest.mark.parametrize("mode", MODES)
async def test_the_attached_agent_is_not_asked_to_approve_its_own_call(
    held_serve: ServeProcess, mode: str
) -> None:
    """An agent's client spawns `mcp`, which attaches to the owner's `serve`; it declares
    elicitation and would approve its own SMS: without `mcp_client_is_owner` it is never asked."""
    asked: list[str] = []
    spawned = attached_mcp(held_serve.data_dir, owner=False)
    async with Client(spawned, mode=mode, elicitation_callback=approving(asked)) as client:
        result = await client.call_tool("send_message", {**SMS, "timeout_ms": 1500})
    assert asked == []
    assert result.is_error
    assert result.content[0].text.startswith("TIMEOUT: ")  # type: ignore[union-attr]  # nobody but the owner


@pytest.mark.parametrize("owner", [False, True], ids=["default", "mcp_client_is_owner"])
async def test_a_grpc_hold_is_not_answered_through_the_attached_face(
    held_serve: ServeProcess, owner: bool
) -> None:
    """An agent holding the data dir's token sends SEND_MESSAGE over gRPC saying it is `mcp`, then
    names that hold in a hand-made requestState to the attached face: refused, still pending."""
    metadata = (("authorization", f"Bearer {held_serve.token}"), (FRONTEND_KEY, "mcp"))
    request_id = f"grpc-held-{owner}"
    async with grpc.aio.insecure_channel(held_serve.address) as channel:
        stub = pb_grpc.AndroidRuntimeStub(channel)
        request_pb = pb.ActionRequest(
            action_type="SEND_MESSAGE", params=SMS, request_id=request_id, timeout_ms=60_000
        )
        call = asyncio.ensure_future(stub.Execute(request_pb, metadata=metadata))
        await wait_until(lambda: bool(held_in_store(held_serve.data_dir)), within_s=WAIT_S, what="a hold")
        [hold] = held_in_store(held_serve.data_dir)
        assert hold.caller == "mcp:agent"
        forged = json.dumps({"request_id": request_id, "approval_id": hold.approval_id, "seal": "0" * 64})
        spawned = attached_mcp(held_serve.data_dir, owner=owner)
        async with Client(spawned, elicitation_callback=approving([])) as client:
            with pytest.raises(MCPError) as caught:
                await client.call_tool(
                    "send_message",
                    {**SMS, "request_id": request_id},
                    request_state=forged,
                    input_responses=APPROVE,
                )
        assert caught.value.error.message == REFUSED
        assert [h.approval_id for h in held_in_store(held_serve.data_dir)] == [hold.approval_id]
        conn = store.connect(store.store_path(held_serve.data_dir))
        try:  # the owner denies it from the terminal
            assert store.record_answer(conn, hold, approved=False, by="the owner")
        finally:
            conn.close()
        response = await asyncio.wait_for(call, WAIT_S)
    assert not response.success and response.error.startswith("DENIED")
