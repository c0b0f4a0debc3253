"""STALE_SCREEN and SYSTEM_DIALOG through the MCP face (Streamable HTTP, the SDK's client) on the
sim: the tools' schemas carry `check_screen`, and a tap aimed at a screen a dialog came over
since is a tool error the agent can act on."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from phoneuse_runtime.app import App, build_app, default_components

from .helpers import TOKEN, connect, settings_for, url_of

MESSAGES = "com.google.android.apps.messaging"


@pytest.fixture
async def app(tmp_path: Path) -> AsyncIterator[App]:
    settings = settings_for(tmp_path / "data")
    started = await build_app(settings, token=TOKEN, components=default_components(settings, token=TOKEN))
    yield started
    await started.stop(grace_s=0)


async def test_a_stale_tap_is_a_tool_error_and_the_schema_opts_out(app: App) -> None:
    async with connect(url_of(app)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        for name in ("tap", "long_press", "swipe"):
            prop = tools[name].input_schema["properties"]["check_screen"]
            assert prop["type"] == "boolean" and prop["default"] is True, name
        assert tools["sim_show_dialog"].input_schema["properties"]["kind"]["enum"] == [
            "anr",
            "crash",
            "permission",
        ]
        await client.call_tool("open_app", {"package": MESSAGES})
        await client.call_tool("dump_ui", {})
        await client.call_tool("sim_show_dialog", {"kind": "anr", "package": MESSAGES})
        result = await client.call_tool("tap", {"x": 540, "y": 1200, "settle_ms": 0})
        assert result.is_error
        [text] = [c.text for c in result.content if c.type == "text"]
        assert text.startswith('STALE_SCREEN: a system dialog ("Application Not Responding: '), text
        result = await client.call_tool("tap", {"x": 540, "y": 1200, "settle_ms": 0, "check_screen": False})
        assert not result.is_error
