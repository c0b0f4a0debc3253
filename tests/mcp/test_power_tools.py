"""Issue 27's power and recording actions as MCP tools, through the official SDK's client against
the production component: their schemas carry the limits, and a call runs the action."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from phoneuse_runtime.app import App

from .helpers import connect, start_app, url_of


@pytest.fixture
async def app(tmp_path: Path) -> AsyncIterator[App]:
    started = await start_app(tmp_path / "data")
    yield started
    await started.stop(grace_s=0)


async def test_the_power_and_recording_tools(app: App) -> None:
    async with connect(url_of(app)) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert {"wake", "sleep", "unlock", "screen_record_start", "screen_record_stop"} <= set(tools)
        start = tools["screen_record_start"].input_schema["properties"]
        assert (start["max_s"]["minimum"], start["max_s"]["maximum"]) == (1, 180)
        assert "pattern" in start["size"]
        slept = await client.call_tool("sleep", {})
        assert not slept.is_error and slept.structured_content is not None
        assert slept.structured_content["awake"] is False
        unlocked = await client.call_tool("unlock", {})
        assert unlocked.structured_content is not None and unlocked.structured_content["verified"] is True
