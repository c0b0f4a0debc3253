"""Files over MCP with the SDK's client: push_file and pull_file as tools with their schemas, and
what PULL_FILE saved in DATA_DIR/files read back as resources, phoneuse://files/<name>."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from pathlib import Path

import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

from phoneuse_runtime.app import App
from phoneuse_runtime.device.sim.device import SimDevice
from phoneuse_runtime.device.sim.files import SHARED

from .helpers import connect, start_app, url_of

PHOTO = f"{SHARED}/DCIM/Camera/IMG_20240601_101500.jpg"


@pytest.fixture
async def app(tmp_path: Path) -> AsyncIterator[App]:
    started = await start_app(tmp_path / "data")
    yield started
    await started.stop(grace_s=0)


def phone(app: App) -> SimDevice:
    device = app.runtime.device
    assert isinstance(device, SimDevice)
    return device


async def test_the_tools_say_their_params(app: App) -> None:
    async with connect(url_of(app)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        push, pull = tools["push_file"].input_schema, tools["pull_file"].input_schema
        assert push["required"] == ["path"] and {"name", "data_base64", "offset", "size", "sha256"} <= set(
            push["properties"]
        )
        assert pull["properties"]["max_bytes"]["maximum"] == 2 * 1024 * 1024
        assert "shared storage" in pull["properties"]["path"]["description"]


async def test_a_pulled_file_is_read_as_a_resource(app: App) -> None:
    async with connect(url_of(app)) as client:
        for name, path in (("photo.jpg", PHOTO), ("notes.txt", "/sdcard/Download/notes.txt")):
            pulled = await client.call_tool("pull_file", {"path": path, "name": name})
            assert not pulled.is_error, pulled.content
        listed = {r.uri: r for r in (await client.list_resources()).resources}
        assert {"phoneuse://files/photo.jpg", "phoneuse://files/notes.txt"} <= set(listed)
        assert listed["phoneuse://files/photo.jpg"].mime_type == "image/jpeg"
        photo = (await client.read_resource("phoneuse://files/photo.jpg")).contents[0]
        assert isinstance(photo, types.BlobResourceContents)
        assert base64.b64decode(photo.blob) == phone(app).files.files[PHOTO]
        notes = (await client.read_resource("phoneuse://files/notes.txt")).contents[0]
        assert isinstance(notes, types.TextResourceContents) and notes.text.startswith("Buy milk")
        templates = (await client.list_resource_templates()).resource_templates
        assert "phoneuse://files/{name}" in [t.uri_template for t in templates]


@pytest.mark.parametrize(
    ("uri", "message"),
    [
        ("phoneuse://files/..%2Fserver.json", "PERMISSION_DENIED: path rule files-dir-only"),
        ("phoneuse://files/%2Fetc%2Fpasswd", "PERMISSION_DENIED: path rule files-dir-only"),
        ("phoneuse://files/.partial-x", "PERMISSION_DENIED: path rule files-dir-only"),
        ("phoneuse://files/nothing.bin", "DATA_DIR/files has no file"),
    ],
)
async def test_a_name_that_is_no_files_is_refused(app: App, uri: str, message: str) -> None:
    async with connect(url_of(app)) as client:
        with pytest.raises(MCPError) as caught:
            await client.read_resource(uri)
        assert caught.value.error.code == types.INVALID_PARAMS
        assert caught.value.error.message.startswith(message), caught.value.error.message
