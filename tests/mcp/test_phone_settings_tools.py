"""The phone's settings as MCP tools (issue 27), through the official SDK's client: each is listed
with its params' types and ranges, changes the phone (not read-only), and answers what it read back."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from phoneuse_runtime.app import App
from phoneuse_runtime.device.sim.device import SimDevice

from .helpers import connect, start_app, url_of


@pytest.fixture
async def app(tmp_path: Path) -> AsyncIterator[App]:
    started = await start_app(tmp_path / "data")
    yield started
    await started.stop(grace_s=0)


async def test_the_settings_are_tools_that_change_the_phone(app: App) -> None:
    async with connect(url_of(app)) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        names = ["set_wifi", "set_bluetooth", "set_airplane_mode", "set_auto_rotate"]
        for name in [*names, "set_volume", "set_brightness", "set_do_not_disturb"]:
            annotations = tools[name].annotations
            assert annotations and annotations.read_only_hint is False, name
            assert tools[name].output_schema is not None, name
        for name in names:
            assert tools[name].input_schema["properties"]["enabled"]["type"] == "boolean"
            assert "enabled" in tools[name].input_schema["required"]
        volume = tools["set_volume"].input_schema["properties"]
        assert volume["stream"]["enum"] == ["music", "ring", "alarm", "notification"]
        assert volume["percent"]["anyOf"][0]["maximum"] == 100
        assert tools["set_brightness"].input_schema["properties"]["level"]["anyOf"][0]["maximum"] == 255
        dnd = tools["set_do_not_disturb"].input_schema["properties"]["mode"]
        assert dnd["enum"] == ["off", "priority", "alarms", "total"]
        assert "allow_cutting_link" in (tools["set_wifi"].description or "")
        answer = await client.call_tool("set_volume", {"stream": "alarm", "percent": 50})
        assert not answer.is_error and answer.structured_content is not None
        assert (answer.structured_content["level"], answer.structured_content["verified"]) == (4, True)
        answer = await client.call_tool("set_do_not_disturb", {"mode": "alarms"})
        assert answer.structured_content is not None and answer.structured_content["mode"] == "alarms"
    device = app.runtime.device
    assert isinstance(device, SimDevice)
    assert (await device.volume("alarm")).level == 4 and await device.dnd() == "alarms"
