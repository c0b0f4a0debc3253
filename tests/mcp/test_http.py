"""The MCP front end over Streamable HTTP, through the official SDK's client against the production
component (app.build_app, port 0): the tools, their schemas and results, the failures, and the
door (token, Origin, body size), with nothing run for what is refused."""

from __future__ import annotations

import base64
import json
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp.shared.exceptions import MCPError

from phoneuse_runtime.app import App
from phoneuse_runtime.device.sim.device import SimDevice
from phoneuse_runtime.kernel.callers import Caller
from phoneuse_runtime.mcp.http import McpHttpServer

from .helpers import INITIALIZE, MODES, TOKEN, connect, raw_post, start_app, url_of

INVALID_PARAMS = -32602
CLIPBOARD_MAX = 100_000  # SET_CLIPBOARD's own limit on its text


@pytest.fixture
async def app(tmp_path: Path) -> AsyncIterator[App]:
    started = await start_app(tmp_path / "data")
    yield started
    await started.stop(grace_s=0)


def sim(app: App) -> SimDevice:
    device = app.runtime.device
    assert isinstance(device, SimDevice)
    return device


@pytest.mark.parametrize("mode", MODES)
async def test_every_action_and_query_is_a_tool_with_json_types(app: App, mode: str) -> None:
    async with connect(url_of(app), mode=mode) as client:
        assert client.protocol_version == ("2026-07-28" if mode == "auto" else "2025-11-25")
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    registry = app.runtime.registry
    expected = {a.lower() for a in registry.actions} | {f"query_{q.lower()}" for q in registry.queries}
    assert set(tools) == expected
    assert {"tap", "send_message", "dump_ui", "query_contacts", "query_memory", "query_app_state"} <= set(
        tools
    )
    alarm = tools["set_alarm"]
    assert alarm.description and alarm.description.startswith(registry.actions["SET_ALARM"].summary)
    props = alarm.input_schema["properties"]
    assert props["hour"]["type"] == "integer" and props["hour"]["maximum"] == 23
    assert props["request_id"]["type"] == "string" and props["timeout_ms"]["type"] == "integer"
    assert "hour" in alarm.input_schema["required"]
    assert tools["type_text"].input_schema["properties"]["clear"]["type"] == "boolean"
    assert tools["swipe"].input_schema["properties"]["direction"]["anyOf"][0]["enum"] == [
        "up",
        "down",
        "left",
        "right",
    ]
    assert tools["set_clipboard"].input_schema["properties"]["text"]["maxLength"] == CLIPBOARD_MAX
    for tool in tools.values():  # every string says how long it may be: its own limit, or the runtime's
        for prop in tool.input_schema["properties"].values():
            if prop.get("type") == "string":
                assert prop["maxLength"] > 0, (tool.name, prop)
    # Which tools only read, and which change the phone or send something.
    assert tools["dump_ui"].annotations and tools["dump_ui"].annotations.read_only_hint is True
    assert tools["query_contacts"].annotations and tools["query_contacts"].annotations.read_only_hint is True
    assert tools["send_message"].annotations and tools["send_message"].annotations.read_only_hint is False
    assert tools["send_message"].annotations.destructive_hint is True
    assert tools["dump_ui"].output_schema is not None
    dump_result = tools["dump_ui"].output_schema["anyOf"][0]
    assert "opaque" in dump_result["properties"]["screen"]["description"]
    shot = tools["screenshot"]
    assert {"max_side", "max_bytes", "quality"} <= set(shot.input_schema["properties"])
    assert shot.output_schema is not None
    result = shot.output_schema["anyOf"][0]
    assert {"scale", "secure", "hint", "width", "height"} <= set(result["properties"])


@pytest.mark.parametrize("mode", MODES)
async def test_results_are_structured_with_a_text_form(app: App, mode: str) -> None:
    async with connect(url_of(app), mode=mode) as client:
        alarm = await client.call_tool("set_alarm", {"hour": 7, "minute": 5, "days": ["fri", "MON"]})
        assert not alarm.is_error
        assert alarm.structured_content is not None
        assert (alarm.structured_content["hour"], alarm.structured_content["days"]) == (7, ["MON", "FRI"])
        assert json.loads(alarm.content[0].text) == alarm.structured_content  # type: ignore[union-attr]
        assert alarm.meta and alarm.meta["phoneuse/request_id"]
        screen = await client.call_tool("dump_ui", {})
        text = screen.content[0].text  # type: ignore[union-attr]
        assert screen.structured_content is not None
        assert text.startswith(screen.structured_content["screen"])  # the compact form is the text
        shot = await client.call_tool("screenshot", {"max_side": 320, "format": "png"})
        image = shot.content[0]
        assert image.type == "image" and image.mime_type == "image/png"
        assert base64.b64decode(image.data).startswith(b"\x89PNG")
        assert shot.structured_content is not None and "image_base64" not in shot.structured_content
        assert max(shot.structured_content["width"], shot.structured_content["height"]) <= 320
        # By default the image content is the scaled one a model takes, and says how to map back.
        shot = await client.call_tool("screenshot", {})
        image = shot.content[0]
        assert image.type == "image" and image.mime_type == "image/jpeg"
        assert shot.structured_content is not None
        assert (shot.structured_content["width"], shot.structured_content["height"]) == (706, 1568)
        assert len(base64.b64decode(image.data)) == shot.structured_content["size_bytes"] <= 1_000_000
        assert shot.structured_content["scale"] == round(706 / 1080, 6)
        assert shot.structured_content["secure"] is False
        contacts = await client.call_tool("query_contacts", {"name": "alice", "limit": 5})
        assert contacts.structured_content is not None
        assert contacts.structured_content["results"][0]["name"] == "Alice Johnson"
        # Non-ASCII text types as it is (mobile-mcp's types none).
        typed = await client.call_tool("set_clipboard", {"text": "héllo 👋 مرحبا"})
        assert not typed.is_error
    assert await sim(app).get_clipboard() == "héllo 👋 مرحبا"


@pytest.mark.parametrize("mode", MODES)
async def test_a_failure_is_a_tool_error_with_its_code(app: App, mode: str) -> None:
    async with connect(url_of(app), mode=mode) as client:
        missing = await client.call_tool("tap", {"text": "Nothing like this"})
        assert missing.is_error
        assert missing.content[0].text.startswith("ELEMENT_NOT_FOUND: ")  # type: ignore[union-attr]
        shell = await client.call_tool("shell", {"command": "echo hi"})
        assert shell.is_error
        assert shell.content[0].text.startswith("PERMISSION_DENIED: SHELL is disabled")  # type: ignore[union-attr]


@pytest.mark.parametrize("mode", MODES)
async def test_a_retry_with_the_same_request_id_gets_the_first_answer(app: App, mode: str) -> None:
    async with connect(url_of(app), mode=mode) as client:
        first = await client.call_tool("set_alarm", {"hour": 6, "minute": 30, "request_id": "wake-1"})
        again = await client.call_tool("set_alarm", {"hour": 6, "minute": 30, "request_id": "wake-1"})
        assert first.structured_content == again.structured_content
        assert first.meta and first.meta["phoneuse/request_id"] == "wake-1"
        other = await client.call_tool("set_alarm", {"hour": 9, "minute": 0, "request_id": "wake-1"})
        assert other.is_error and other.content[0].text.startswith("CONFLICT: ")  # type: ignore[union-attr]
    assert len([a for a in (await sim(app).alarms()) if (a.hour, a.minute) == (6, 30)]) == 1


async def _refused(client: Any, name: str, arguments: dict[str, Any]) -> str:
    with pytest.raises(MCPError) as caught:
        await client.call_tool(name, arguments)
    assert caught.value.error.code == INVALID_PARAMS
    return caught.value.error.message


@pytest.mark.parametrize("mode", MODES)
async def test_bad_arguments_are_invalid_params_and_nothing_runs(app: App, mode: str) -> None:
    before = await sim(app).get_clipboard()
    alarms = len(await sim(app).alarms())
    async with connect(url_of(app), mode=mode) as client:
        unknown = await _refused(client, "set_alarum", {"hour": 7})
        assert unknown == (
            "UNKNOWN_ACTION: no tool 'set_alarum'; did you mean set_alarm, set_volume, set_clipboard? "
            "(tools/list lists them)"
        )
        wrong = await _refused(client, "set_alarm", {"hour": "7"})
        assert wrong.startswith("INVALID_PARAMS: hour: expected integer, got a JSON string")
        flag = await _refused(client, "type_text", {"text": "x", "clear": "yes"})
        assert flag.startswith("INVALID_PARAMS: clear: expected boolean")
        listed = await _refused(client, "set_alarm", {"hour": 7, "days": 5})
        assert listed.startswith("INVALID_PARAMS: days: expected array")
        beyond = await _refused(client, "set_alarm", {"hour": 25})
        assert beyond.startswith("INVALID_PARAMS: hour: Input should be less than or equal to 23")
        extra = await _refused(client, "set_clipboard", {"text": "a", "colour": "red"})
        assert extra.startswith("INVALID_PARAMS: unknown param(s) colour; allowed: ")
        huge = await _refused(client, "set_clipboard", {"text": "x" * (CLIPBOARD_MAX + 1)})
        assert (
            huge
            == f"INVALID_PARAMS: text has {CLIPBOARD_MAX + 1} characters; at most {CLIPBOARD_MAX} are allowed"
        )
        empty_id = await _refused(client, "set_clipboard", {"text": "a", "request_id": ""})
        assert empty_id == "BAD_REQUEST: request_id is empty"
        no_time = await _refused(client, "set_clipboard", {"text": "a", "timeout_ms": 0})
        assert no_time == "BAD_REQUEST: timeout_ms must be > 0, got 0"
    assert await sim(app).get_clipboard() == before
    assert len(await sim(app).alarms()) == alarms


async def test_a_request_without_the_token_or_with_a_wrong_one_is_401_and_nothing_runs(app: App) -> None:
    url = url_of(app)
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "set_clipboard", "arguments": {"text": "stolen"}},
    }
    for headers in ({}, {"authorization": "Bearer wrong"}, {"authorization": f"Basic {TOKEN}"}):
        for body in (INITIALIZE, call):
            answer = await raw_post(url, body, headers)
            assert answer.status_code == 401, (headers, answer.text)
            assert answer.headers["www-authenticate"].startswith("Bearer")
    with pytest.raises(Exception):  # noqa: B017 - the SDK raises what the transport met
        async with connect(url, token="wrong") as client:
            await client.list_tools()
    assert await sim(app).get_clipboard() != "stolen"
    good = await raw_post(url, INITIALIZE, {"authorization": f"Bearer {TOKEN}"})
    assert good.status_code == 200, good.text


async def test_a_foreign_origin_is_403_and_no_origin_is_served(tmp_path: Path) -> None:
    app = await start_app(tmp_path / "data", mcp_allowed_origins=frozenset({"https://iris.example"}))
    try:
        url = url_of(app)
        auth = {"authorization": f"Bearer {TOKEN}"}
        foreign = await raw_post(url, INITIALIZE, {**auth, "origin": "https://evil.example"})
        assert foreign.status_code == 403
        assert "Origin" in foreign.json()["error"]["message"]
        listed = await raw_post(url, INITIALIZE, {**auth, "origin": "https://iris.example"})
        assert listed.status_code == 200
        native = await raw_post(url, INITIALIZE, auth)
        assert native.status_code == 200
        # Even with a foreign Origin, the SDK's client with the token gets nowhere.
        with pytest.raises(Exception):  # noqa: B017
            async with connect(url, headers={"Origin": "http://localhost:1"}) as client:
                await client.list_tools()
    finally:
        await app.stop(grace_s=0)


async def test_a_body_past_the_limit_is_refused_before_it_is_read(tmp_path: Path) -> None:
    app = await start_app(tmp_path / "data", grpc_max_receive_bytes=64 * 1024)
    try:
        call = {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "set_clipboard", "arguments": {"text": "y" * (128 * 1024)}},
        }
        answer = await raw_post(url_of(app), call, {"authorization": f"Bearer {TOKEN}"})
        assert answer.status_code == 413
        assert await sim(app).get_clipboard() != "y" * (128 * 1024)
    finally:
        await app.stop(grace_s=0)


async def test_the_mcp_caller_is_the_front_end_and_principal(app: App) -> None:
    events = app.runtime.subscribe(
        Caller("grpc", "agent"),
        "watch",
        ["TASK_STARTED"],
    )
    async with connect(url_of(app)) as client:
        await client.call_tool("set_clipboard", {"text": "who"})
    async for event in events:
        payload = json.loads(event.payload_json)
        assert payload["caller"] == {"frontend": "mcp", "principal": "agent"}
        break
    app.runtime.unsubscribe(events)


@pytest.mark.parametrize("mode", MODES)
async def test_the_connections_send_small_writes_at_once(app: App, mode: str) -> None:
    """uvicorn writes an answer's head and body apart; with Nagle on, the body waited for the
    client's delayed ACK (~40 ms a call on loopback, bench/bench_mcp.py): every connection the
    server accepts has TCP_NODELAY, as asyncio sets it on the sockets it knows to be TCP."""
    part = app.components["mcp"]
    assert isinstance(part, McpHttpServer)
    async with connect(url_of(app), mode=mode) as client:
        assert not (await client.call_tool("set_clipboard", {"text": "x"})).is_error
        sockets = part.connection_sockets()
        assert sockets, "the client's connection is open"
        for sock in sockets:
            assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0, sock
