"""MCP sessions sized for a phone: an agent with a valid token cannot open sessions until the
phone's memory (and every event's fan-out, one send per subscribed session) runs out; past
`mcp_max_sessions` a new one is refused with 503 while the open ones go on, and one idle for
`mcp_session_idle_s` is closed. The settings are checked at load."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from phoneuse_runtime.app import App
from phoneuse_runtime.config.settings import ConfigError, Settings, load_settings
from phoneuse_runtime.mcp.http import McpHttpServer

from ..mcp.helpers import INITIALIZE, TOKEN, raw_post, start_app, url_of

WAIT_S = 20.0
AUTH = {"authorization": f"Bearer {TOKEN}"}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}


async def open_session(url: str) -> tuple[int, str | None]:
    answer = await raw_post(url, INITIALIZE, AUTH)
    return answer.status_code, answer.headers.get("mcp-session-id")


async def tools_in(url: str, session: str) -> int:
    headers = {**AUTH, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}
    answer = await raw_post(url, LIST, headers)
    return answer.status_code


@pytest.fixture
async def small(tmp_path: Path) -> AsyncIterator[App]:
    app = await start_app(tmp_path / "data", mcp_max_sessions=3)
    yield app
    await app.stop(grace_s=0)


async def test_past_max_sessions_a_new_session_is_refused_and_the_open_ones_go_on(small: App) -> None:
    """An agent with a valid token opens MCP sessions without end, to exhaust the phone's memory."""
    url = url_of(small)
    owners_status, owners = await open_session(url)  # the owner's client, there first
    assert owners_status == 200 and owners is not None
    flood = [await open_session(url) for _ in range(5)]
    assert [status for status, _ in flood] == [200, 200, 503, 503, 503]
    assert await tools_in(url, owners) == 200  # the owner's session still serves


async def test_an_idle_session_is_closed(tmp_path: Path) -> None:
    """An agent opens sessions and leaves them idle, each holding the phone's memory forever."""
    app = await start_app(tmp_path / "data", mcp_session_idle_s=0.2)
    try:
        url = url_of(app)
        status, session = await open_session(url)
        assert status == 200 and session is not None
        part = app.components["mcp"]
        assert isinstance(part, McpHttpServer)
        open_now: dict[str, Any] = part._face.server._session_manager._server_instances
        for _ in range(int(WAIT_S / 0.05)):  # bounded poll: the SDK closes it once idle
            if session not in open_now:
                break
            await asyncio.sleep(0.05)
        assert session not in open_now
        assert await tools_in(url, session) == 404  # its client starts a new one
        assert (await open_session(url))[0] == 200
    finally:
        await app.stop(grace_s=0)


def test_the_defaults_are_sized_for_a_phone() -> None:
    settings = Settings()
    assert settings.mcp_max_sessions == 16
    assert settings.mcp_session_idle_s == 300.0
    assert settings.mcp_client_is_owner is False


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ({"mcp_max_sessions": 0}, r"mcp_max_sessions \(flag\): must be greater than 0, got 0"),
        ({"mcp_max_sessions": 10_000}, r"mcp_max_sessions \(flag\): must be at most 256, got 10000"),
        ({"mcp_session_idle_s": 0}, r"mcp_session_idle_s \(flag\): must be greater than 0, got 0"),
        ({"mcp_session_idle_s": 1e9}, r"mcp_session_idle_s \(flag\): must be at most 86400, got 1e\+09"),
    ],
)
def test_bad_session_settings_are_refused_at_load(
    tmp_path: Path, flags: dict[str, object], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        load_settings({"data_dir": tmp_path, **flags})


def test_the_owner_setting_reads_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PHONEUSE_MCP_CLIENT_IS_OWNER", "true")
    assert load_settings({"data_dir": tmp_path}).mcp.client_is_owner is True
    monkeypatch.setenv("PHONEUSE_MCP_CLIENT_IS_OWNER", "maybe")
    with pytest.raises(ConfigError, match=r"mcp_client_is_owner \(environment\): bad value"):
        load_settings({"data_dir": tmp_path})
