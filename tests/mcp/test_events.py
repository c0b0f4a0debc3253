"""The phone's events through MCP: the resource phoneuse://events (recent events, a cursor), and its
updates announced through the SDK's subscription mechanism in both revisions (subscriptions/listen
on 2026-07-28, resources/subscribe and notifications/resources/updated on 2025-11-25)."""

from __future__ import annotations

import asyncio
import json
import warnings
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from phoneuse_runtime.app import App
from phoneuse_runtime.mcp import EVENTS_URI

from .helpers import connect, start_app, url_of

WAIT_S = 10.0
DEVICE_EVENTS = ("MESSAGE_RECEIVED", "NOTIFICATION_POSTED", "APP_STATE_CHANGED", "CALL_STATE_CHANGED")


@pytest.fixture
async def app(tmp_path: Path) -> AsyncIterator[App]:
    started = await start_app(tmp_path / "data")
    yield started
    await started.stop(grace_s=0)


async def read(client: Client, uri: str) -> dict[str, Any]:
    result = await client.read_resource(uri)
    content = result.contents[0]
    assert isinstance(content, types.TextResourceContents) and content.mime_type == "application/json"
    body: dict[str, Any] = json.loads(content.text)
    return body


async def until(
    client: Client, cursor: int, wanted: set[str], updates: asyncio.Queue[str]
) -> list[dict[str, Any]]:
    """The events after `cursor`, read after each update, until every type in `wanted` came."""
    seen: list[dict[str, Any]] = []
    while not wanted <= {e["event_type"] for e in seen}:
        assert await asyncio.wait_for(updates.get(), WAIT_S) == EVENTS_URI
        body = await read(client, f"{EVENTS_URI}?after={cursor}")
        assert [e["seq"] for e in body["events"]] == sorted(e["seq"] for e in body["events"])
        assert all(e["seq"] > cursor for e in body["events"])
        seen += body["events"]
        cursor = body["cursor"]
    return seen


async def make_events(client: Client) -> None:
    for name, arguments in [
        ("sim_receive_sms", {"from": "+14155550101", "body": "héllo"}),
        ("sim_post_notification", {"package": "com.example", "title": "T", "text": "x"}),
        ("open_app", {"package": "com.android.chrome"}),
        ("sim_incoming_call", {"from": "+14155550101"}),
    ]:
        result = await client.call_tool(name, arguments)
        assert not result.is_error, result.content


async def test_device_events_reach_a_listening_client(app: App) -> None:
    """2026-07-28: subscriptions/listen for the resource; each update says to read it again."""
    updates: asyncio.Queue[str] = asyncio.Queue()
    async with connect(url_of(app)) as client:
        assert client.protocol_version == "2026-07-28"
        async with client.listen(resource_subscriptions=[EVENTS_URI]) as sub:

            async def pump() -> None:
                async for event in sub:
                    updates.put_nowait(getattr(event, "uri", ""))

            task = asyncio.get_running_loop().create_task(pump())
            cursor = (await read(client, EVENTS_URI))["cursor"]
            await make_events(client)
            seen = await until(client, cursor, set(DEVICE_EVENTS), updates)
            task.cancel()
    sms = next(e for e in seen if e["event_type"] == "MESSAGE_RECEIVED")
    assert sms["payload"]["body"] == "héllo" and sms["source"]
    # Other callers' events are seen too, as by any subscriber: here the task events name the MCP caller.
    completed = [e for e in seen if e["event_type"] == "TASK_COMPLETED"]
    assert completed and completed[0]["payload"]["caller"] == {"frontend": "mcp", "principal": "agent"}


async def test_device_events_reach_a_subscribed_2025_client(app: App) -> None:
    """2025-11-25: resources/subscribe, then notifications/resources/updated."""
    updates: asyncio.Queue[str] = asyncio.Queue()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updates.put_nowait(message.params.uri)

    async with connect(url_of(app), mode="legacy", message_handler=on_message) as client:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # resources/subscribe is deprecated as of 2026-07-28
            await client.subscribe_resource(EVENTS_URI)
        cursor = (await read(client, f"{EVENTS_URI}?types={','.join(DEVICE_EVENTS)}"))["cursor"]
        await make_events(client)
        seen = await until(client, cursor, set(DEVICE_EVENTS), updates)
        # A filtered read keeps only the types it names.
        only = await read(client, f"{EVENTS_URI}?after={cursor}&types=CALL_STATE_CHANGED")
        assert {e["event_type"] for e in only["events"]} == {"CALL_STATE_CHANGED"}
    assert {e["event_type"] for e in seen} >= set(DEVICE_EVENTS)


async def test_a_disconnect_is_an_event_too(app: App) -> None:
    updates: asyncio.Queue[str] = asyncio.Queue()
    async with connect(url_of(app)) as client, client.listen(resource_subscriptions=[EVENTS_URI]) as sub:

        async def pump() -> None:
            async for event in sub:
                updates.put_nowait(getattr(event, "uri", ""))

        task = asyncio.get_running_loop().create_task(pump())
        cursor = (await read(client, EVENTS_URI))["cursor"]
        assert not (await client.call_tool("sim_disconnect", {"ms": 50, "reason": "cable"})).is_error
        seen = await until(client, cursor, {"DEVICE_DISCONNECTED"}, updates)
        task.cancel()
    assert next(e for e in seen if e["event_type"] == "DEVICE_DISCONNECTED")["payload"]


async def test_bad_event_reads_are_invalid_params(app: App) -> None:
    async with connect(url_of(app)) as client:
        for uri, message in [
            (f"{EVENTS_URI}?types=NOPE", "BAD_REQUEST: no event type 'NOPE'"),
            (f"{EVENTS_URI}?after=-1", "BAD_REQUEST: after must be a non-negative integer"),
            ("phoneuse://nothing", "no resource 'phoneuse://nothing'"),
        ]:
            with pytest.raises(MCPError) as caught:
                await client.read_resource(uri)
            assert caught.value.error.code == types.INVALID_PARAMS
            assert caught.value.error.message.startswith(message), caught.value.error.message
        listed = await client.list_resources()
        assert [r.uri for r in listed.resources] == [EVENTS_URI, "phoneuse://screen", "phoneuse://spec"]


async def test_the_screen_and_the_spec_are_resources_too(app: App) -> None:
    async with connect(url_of(app)) as client:
        screen = (await client.read_resource("phoneuse://screen")).contents[0]
        dumped = await client.call_tool("dump_ui", {})
        assert isinstance(screen, types.TextResourceContents) and screen.mime_type == "text/plain"
        assert dumped.structured_content is not None and screen.text == dumped.structured_content["screen"]
        spec = (await client.read_resource("phoneuse://spec")).contents[0]
        assert isinstance(spec, types.TextResourceContents) and spec.mime_type == "text/markdown"
        assert "## The MCP front end" in spec.text and "### SEND_MESSAGE" in spec.text
