"""INSTALL_APP over MCP, held as the `owner_actions` are (issue 27) with nothing paired, and asked of
the MCP client's user by elicitation where the owner made that user an approver
(`mcp_client_is_owner`): the prompt names the APK, its package and the permissions it asks for."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from phoneuse_runtime.app import App, build_app, default_components
from phoneuse_runtime.device.sim.device import SimDevice
from tests.fakes.apk import build_apk

from .helpers import MODES, TOKEN, connect, settings_for, url_of
from .test_approvals import answer

P = "android.permission."
NOTES = "com.example.notes"
PERMS = (P + "CAMERA", P + "ACCESS_FINE_LOCATION")


@pytest.fixture
async def app(tmp_path: Path) -> AsyncIterator[App]:
    settings = settings_for(
        tmp_path / "data", mcp_client_is_owner=True, gateway=True, gateway_listen="127.0.0.1:0"
    )  # the production chain: the gateway's owner approval, nothing paired
    started = await build_app(settings, token=TOKEN, components=default_components(settings, token=TOKEN))
    files = settings.data_dir / "files"
    files.mkdir(parents=True, exist_ok=True)
    (files / "notes.apk").write_bytes(
        build_apk(NOTES, version_name="4.0", version_code=40, permissions=PERMS)
    )
    yield started
    await started.stop(grace_s=0)


async def installed(app: App) -> bool:
    device = app.runtime.device
    assert isinstance(device, SimDevice)
    return await device.package_state(NOTES) is not None


@pytest.mark.parametrize("mode", MODES)
async def test_the_client_s_user_approves_an_install_named_in_full(app: App, mode: str) -> None:
    elicit = answer("accept", True)
    async with connect(url_of(app), mode=mode, elicitation_callback=elicit) as client:
        result = await client.call_tool("install_app", {"apk": "notes.apk"})
    assert not result.is_error, result.content
    assert await installed(app)
    [message] = elicit.asked
    assert "INSTALL_APP" in message and "notes.apk" in message and NOTES in message and "4.0" in message
    assert all(p in message for p in PERMS), message


async def test_the_client_s_user_declines_and_nothing_is_installed(app: App) -> None:
    async with connect(url_of(app), mode="legacy", elicitation_callback=answer("decline")) as client:
        result = await client.call_tool("install_app", {"apk": "notes.apk"})
    assert result.is_error and result.content[0].text.startswith("DENIED: ")  # type: ignore[union-attr]
    assert not await installed(app)


async def test_the_tools_and_their_schemas(app: App) -> None:
    async with connect(url_of(app)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert {"install_app", "uninstall_app", "grant_permission", "revoke_permission"} <= set(tools)
    schema = tools["install_app"].input_schema
    assert schema["required"] == ["apk"] and "DATA_DIR/files" in schema["properties"]["apk"]["description"]
    assert set(tools["grant_permission"].input_schema["required"]) == {"package", "permission"}
    assert (
        tools["uninstall_app"].annotations is not None
        and tools["uninstall_app"].annotations.destructive_hint is True
    )
