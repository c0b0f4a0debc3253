"""The uiautomator2 server behind tcp:9008: its app_process lifecycle, NanoHTTPD's HTTP, and the
JSON-RPC methods, checked with raw requests and with uiautomator2's own client code
(uiautomator2.core._jsonrpc_call over a socket), so its error mapping sees our error objects."""

from __future__ import annotations

import asyncio
import base64
import gzip
import io
import json
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from .memio import MemoryIO, MemoryStream
from .phone import FakePhone
from .ui import MASKS

KEEP_NOTE = "com.google.android.keep:id/edit_note_text"


def sel(**fields: Any) -> dict[str, Any]:
    return {
        "mask": sum(MASKS[k] for k in fields),
        "childOrSibling": [],
        "childOrSiblingSelector": [],
        **fields,
    }


@pytest.fixture
async def phone() -> AsyncIterator[FakePhone]:
    phone = FakePhone()
    task, io_ = await phone.start_u2()
    yield phone
    io_.close()
    await task


def request(method: str, path: str, body: bytes = b"", **headers: str) -> bytes:
    lines = [
        f"{method} {path} HTTP/1.1",
        "Host: localhost:9008",
        *(f"{k.replace('_', '-')}: {v}" for k, v in headers.items()),
    ]
    if body:
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


# --- lifecycle -----------------------------------------------------------------------------------------


async def test_nothing_listens_until_app_process_runs() -> None:
    phone = FakePhone()
    with pytest.raises(ConnectionRefusedError):
        await phone.open_tcp(9008, MemoryStream())
    missing = await phone.sh("CLASSPATH=/data/local/tmp/u2.jar app_process / com.wetest.uia2.Main -p 9008")
    assert (
        missing.code == 1
        and 'ClassNotFoundException: Didn\'t find class "com.wetest.uia2.Main"' in missing.stderr
    )


async def test_app_process_lives_as_long_as_its_shell(phone: FakePhone) -> None:
    assert phone.state.u2.running and phone.state.u2.launches == 1
    assert "app_process" in (await phone.sh("ps -A")).stdout
    pid = (await phone.sh("pidof app_process")).stdout.strip()
    assert pid == str(phone.state.u2.pid)
    refused = await phone.sh("kill 1")
    assert refused.stderr == "/system/bin/sh: kill: 1: Operation not permitted\n"
    await phone.sh(f"kill {pid}")
    assert not phone.state.u2.running
    with pytest.raises(ConnectionRefusedError):
        await phone.open_tcp(9008, MemoryStream())


async def test_closing_the_shell_stops_the_server() -> None:
    phone = FakePhone()
    task, io_ = await phone.start_u2()
    assert b"[UiAutomator2Server] Starting Server" in io_.stdout
    io_.close()
    assert await asyncio.wait_for(task, 2) == 129
    assert not phone.state.u2.running


async def test_a_second_server_or_a_registered_one_fails_to_start(phone: FakePhone) -> None:
    second = await phone.sh("CLASSPATH=/data/local/tmp/u2.jar app_process / com.wetest.uia2.Main -p 9008")
    assert second.code == 1 and "already registered!" in second.stderr
    await phone.sh(f"kill {phone.state.u2.pid}")
    phone.state.faults.u2_already_registered = 1
    third = await phone.sh("CLASSPATH=/data/local/tmp/u2.jar app_process / com.wetest.uia2.Main -p 9008")
    assert "already registered!" in third.stderr and not phone.state.u2.running
    assert phone.state.faults.u2_already_registered == 0


async def test_uiautomator_dump_cannot_run_next_to_the_server(phone: FakePhone) -> None:
    result = await phone.sh("uiautomator dump /sdcard/d.xml")
    assert result.code == 1 and "already registered!" in result.stderr


# --- HTTP ----------------------------------------------------------------------------------------------


async def test_keep_alive_serves_several_requests_on_one_stream(phone: FakePhone) -> None:
    stream = MemoryStream()
    server = asyncio.ensure_future(phone.open_tcp(9008, stream))
    stream.send(request("GET", "/ping"))
    status, headers, body = await stream.recv_response()
    assert (status, body, headers["connection"], headers["content-type"]) == (
        200,
        b"pong",
        "keep-alive",
        "text/html",
    )
    payload = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "deviceInfo", "params": []}).encode()
    stream.send(request("POST", "/jsonrpc/0", payload, Content_Type="application/json"))
    status, _, body = await stream.recv_response()
    assert json.loads(body)["result"]["displayWidth"] == 720 and json.loads(body)["id"] == 7
    stream.send(request("GET", "/nope", Connection="close"))
    status, headers, body = await stream.recv_response()
    assert (status, body, headers["connection"]) == (404, b"Not Found!!!", "close")
    await asyncio.wait_for(server, 1)
    assert phone.state.log.http == ["GET /ping", "POST /jsonrpc/0", "GET /nope"]


async def test_status_line_has_nanohttpd_trailing_space(phone: FakePhone) -> None:
    stream = MemoryStream()
    server = asyncio.ensure_future(phone.open_tcp(9008, stream))
    stream.send(request("GET", "/ping", Connection="close"))
    raw = await stream.recv()
    assert raw.startswith(b"HTTP/1.1 200 OK \r\nContent-Type: text/html\r\nDate: ")
    await server


async def test_gzip_when_accepted_and_errors_for_empty_posts(phone: FakePhone) -> None:
    stream = MemoryStream()
    server = asyncio.ensure_future(phone.open_tcp(9008, stream))
    payload = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": []}).encode()
    stream.send(request("POST", "/jsonrpc/0", payload, Accept_Encoding="gzip, deflate"))
    status, headers, body = await stream.recv_response()
    assert headers["content-encoding"] == "gzip" and json.loads(gzip.decompress(body))["result"] == "pong"
    stream.send(request("POST", "/jsonrpc/0", Connection="close"))
    status, _, body = await stream.recv_response()
    assert (status, body) == (500, b"Invalid http post data!")
    await server


async def test_an_idle_keep_alive_connection_is_dropped(phone: FakePhone) -> None:
    phone.state.u2.keepalive_idle_s = 0.05
    stream = MemoryStream()
    await asyncio.wait_for(phone.open_tcp(9008, stream), 1)


async def test_screenshot_route_is_chunked_png(phone: FakePhone) -> None:
    stream = MemoryStream()
    server = asyncio.ensure_future(phone.open_tcp(9008, stream))
    stream.send(request("GET", "/screenshot/0", Connection="close"))
    _, headers, body = await stream.recv_response()
    assert headers["transfer-encoding"] == "chunked" and Image.open(io.BytesIO(body)).size == (720, 1280)
    await server


async def test_a_secure_window_is_black_on_every_screenshot_path(phone: FakePhone) -> None:
    # SurfaceFlinger leaves a FLAG_SECURE layer out of a capture: black where the app is, the
    # system UI's bars still drawn (the tree is dumped as ever: tests/device/adb/test_e2e_screens.py).
    phone.state.secure_packages.add(phone.state.foreground().package)
    stream = MemoryStream()
    server = asyncio.ensure_future(phone.open_tcp(9008, stream))
    stream.send(request("GET", "/screenshot/0", Connection="close"))
    _, _, route = await stream.recv_response()
    await server
    pictures = [route, (await phone.sh("screencap -p")).raw]
    for picture in pictures:
        image = Image.open(io.BytesIO(picture)).convert("L")
        assert image.getpixel((360, 640)) == 0 and image.getpixel((5, 5)) != 0


# --- JSON-RPC with uiautomator2's client -----------------------------------------------------------------


class SocketDevice:
    """What uiautomator2.core needs from an adbutils device: create_connection to a device port.
    Each connection is a socketpair whose far end the phone serves on the event loop."""

    def __init__(self, phone: FakePhone, loop: asyncio.AbstractEventLoop) -> None:
        self.phone, self.loop = phone, loop

    def create_connection(self, network: Any, port: int) -> socket.socket:
        import adbutils

        if not self.phone.state.u2.running:
            raise adbutils.AdbError("closed")
        near, far = socket.socketpair()
        asyncio.run_coroutine_threadsafe(self._serve(far, port), self.loop)
        return near

    async def _serve(self, sock: socket.socket, port: int) -> None:
        reader, writer = await asyncio.open_connection(sock=sock)

        class Stream:
            async def read(self) -> bytes:
                return await reader.read(65536)

            async def write(self, data: bytes) -> None:
                writer.write(data)
                await writer.drain()

            @property
            def closed(self) -> bool:
                return writer.is_closing()

        try:
            await self.phone.open_tcp(port, Stream())
        finally:
            writer.close()


async def rpc(phone: FakePhone, method: str, *params: Any) -> Any:
    from uiautomator2.core import _jsonrpc_call

    dev = SocketDevice(phone, asyncio.get_running_loop())
    return await asyncio.to_thread(_jsonrpc_call, dev, 9008, method, list(params), 10, False)


async def test_the_u2_client_pings_and_reads_the_hierarchy(phone: FakePhone) -> None:
    import xml.etree.ElementTree as ET

    from uiautomator2.core import _http_request

    dev = SocketDevice(phone, asyncio.get_running_loop())
    pong = await asyncio.to_thread(_http_request, dev, 9008, "GET", "/ping")
    assert pong.content == b"pong"
    xml = await rpc(phone, "dumpWindowHierarchy", False, 50)
    root = ET.fromstring(xml.encode())
    assert root.tag == "hierarchy" and root.findall(".//node[@content-desc='WhatsApp']")
    assert xml.startswith(
        "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>\r\n<hierarchy rotation=\"0\">\r\n  <node "
    )
    shallow = await rpc(phone, "dumpWindowHierarchy", True, 1)
    assert len(shallow) < len(xml)


async def test_selectors_clicks_and_text(phone: FakePhone) -> None:
    assert await rpc(phone, "waitForExists", sel(text="Keep Notes"), 100) is True
    info = await rpc(phone, "objInfo", sel(descriptionContains="Keep", className="android.widget.TextView"))
    assert (
        info["text"] == "Keep Notes"
        and info["clickable"] is True
        and set(info["bounds"]) == {"bottom", "left", "right", "top"}
    )
    assert (
        await rpc(
            phone,
            "count",
            sel(className="android.widget.TextView", packageName="com.google.android.apps.nexuslauncher"),
        )
        == 10
    )
    assert await rpc(phone, "click", sel(textMatches="Keep.*")) is True
    assert phone.state.foreground().package == "com.google.android.keep"
    assert await rpc(phone, "getText", sel(resourceId=KEEP_NOTE)) == "Note"  # the hint, as on a phone
    assert await rpc(phone, "setText", sel(resourceId=KEEP_NOTE), "héllo 👋") is True
    assert phone.state.focused_text() == "héllo 👋"
    assert await rpc(phone, "getText", sel(focused=True)) == "héllo 👋"
    await rpc(phone, "clearTextField", sel(resourceId=KEEP_NOTE))
    assert phone.state.focused_text() == ""
    counts = phone.state.log.rpc_counts()
    assert counts["click"] == 1 and counts["setText"] == 1


async def test_missing_elements_and_errors_map_to_u2_exceptions(phone: FakePhone) -> None:
    from uiautomator2.exceptions import RPCUnknownError, UiObjectNotFoundError

    with pytest.raises(UiObjectNotFoundError):
        await rpc(phone, "objInfo", sel(text="No such thing"))
    assert await rpc(phone, "waitForExists", sel(text="No such thing"), 150) is False
    assert await rpc(phone, "waitUntilGone", sel(text="No such thing"), 0) is True
    with pytest.raises(RPCUnknownError, match="method not found"):
        await rpc(phone, "noSuchMethod")
    with pytest.raises(RPCUnknownError, match="method parameters invalid"):
        await rpc(phone, "click", 1, 2, 3, 4)


async def test_ui_automation_not_connected_until_restarted(phone: FakePhone) -> None:
    from uiautomator2.exceptions import UiAutomationNotConnectedError

    phone.state.faults.u2_not_connected = True
    with pytest.raises(UiAutomationNotConnectedError):
        await rpc(phone, "dumpWindowHierarchy", False, 50)
    await phone.sh(f"kill {phone.state.u2.pid}")
    task, io_ = await phone.start_u2()
    assert phone.state.u2.launches == 2
    assert "<hierarchy" in await rpc(phone, "dumpWindowHierarchy", False, 50)
    io_.close()
    await task


async def test_the_server_can_die_mid_call(phone: FakePhone) -> None:
    phone.state.faults.u2_die_after_calls = 1
    with pytest.raises(ConnectionError):
        await rpc(phone, "deviceInfo")
    assert not phone.state.u2.running


async def test_touch_keys_swipes_clipboard_and_screenshot(phone: FakePhone) -> None:
    await rpc(phone, "injectInputEvent", 0, 10, 10, 0)
    await rpc(phone, "injectInputEvent", 1, 10, 12, 0)
    assert phone.state.log.taps[-1].source == "u2.touch"
    assert await rpc(phone, "pressKey", "recent") is True and phone.state.log.keys[-1].code == 187
    await rpc(phone, "swipe", 360, 10, 360, 900, 20)
    assert phone.state.shade_open
    await rpc(phone, "pressKey", "back")
    await rpc(phone, "setClipboard", None, "clip")
    assert await rpc(phone, "getClipboard") == "clip"
    jpeg = base64.b64decode(await rpc(phone, "takeScreenshot", 1, 80))
    assert Image.open(io.BytesIO(jpeg)).format == "JPEG"
    await rpc(phone, "sleep")
    assert await rpc(phone, "isScreenOn") is False
    assert '<hierarchy rotation="0" />' in await rpc(phone, "dumpWindowHierarchy", False, 50)


# --- uiautomator2's input method ---------------------------------------------------------------------------


async def test_installing_and_typing_with_adb_keyboard(phone: FakePhone) -> None:
    import uiautomator2

    apk = (Path(uiautomator2.__file__).parent / "assets" / "app-uiautomator.apk").read_bytes()
    phone.write_file("/data/local/tmp/unknown.apk", apk, 0o100644, 0)
    assert (await phone.sh("pm install -r -t /data/local/tmp/unknown.apk")).stdout == "Success\n"
    ime = "com.github.uiautomator/.AdbKeyboard"
    assert (
        ime in (await phone.sh("ime list -s -a")).stdout and ime not in (await phone.sh("ime list -s")).stdout
    )
    await phone.sh("monkey -p com.google.android.keep -c android.intent.category.LAUNCHER 1")
    text = base64.b64encode("héllo 👋".encode()).decode()
    before = await phone.sh(f"am broadcast -a ADB_KEYBOARD_INPUT_TEXT --es text {text}")
    assert before.stdout.endswith("Broadcast completed: result=0\n")
    assert (await phone.sh(f"ime enable {ime}")).stdout == f"Input method {ime}: now enabled for user #0\n"
    assert (await phone.sh(f"ime set {ime}")).stdout == f"Input method {ime} selected for user #0\n"
    assert (await phone.sh("settings get secure default_input_method")).stdout == ime + "\n"
    after = await phone.sh(f"am broadcast -a ADB_KEYBOARD_INPUT_TEXT --es text {text}")
    assert after.stdout == (
        "Broadcasting: Intent { act=ADB_KEYBOARD_INPUT_TEXT flg=0x400000 (has extras) }\n"
        "Broadcast completed: result=-1\n"
    )
    assert phone.state.focused_text() == "héllo 👋"
    assert phone.state.log.texts[-1].method == f"ime:{ime}"


async def test_protected_broadcasts_are_refused(phone: FakePhone) -> None:
    result = await phone.sh("am broadcast -a android.intent.action.AIRPLANE_MODE --ez state true")
    assert result.code == 255 and "Exception occurred while executing 'broadcast':" in result.stderr
    assert "java.lang.SecurityException: Permission Denial: not allowed to send broadcast" in result.stderr


async def test_memory_io_reads_stdin_for_cat() -> None:
    phone = FakePhone()
    io_ = MemoryIO(b"piped\n")
    assert await phone.run_shell("cat", io_) == 0 and bytes(io_.stdout) == b"piped\n"


# --- dying as real servers do ----------------------------------------------------------------------


def _rpc_request(method: str, *params: Any) -> bytes:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": list(params)}).encode()
    head = f"POST /jsonrpc/0 HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
    head += "\r\n"
    return head.encode() + body


async def test_killed_mid_answer_the_call_ran_and_half_its_answer_came(phone: FakePhone) -> None:
    from .u2server import kill_server

    phone.state.faults.u2_die_mid_answer = True
    stream = MemoryStream()
    stream.send(_rpc_request("click", 100, 200))
    await asyncio.wait_for(phone.open_tcp(9008, stream), 5)  # the server ends the stream
    half = await stream.recv()
    assert half.startswith(b"HTTP/1.1 200 OK ") and not half.rstrip().endswith(b"}")
    assert (phone.state.log.taps[-1].x, phone.state.log.taps[-1].y) == (100, 200)
    assert not phone.state.u2.running and not phone.state.faults.u2_die_mid_answer
    with pytest.raises(ConnectionRefusedError):
        await phone.open_tcp(9008, MemoryStream())
    kill_server(phone.state)  # killing a dead server changes nothing


async def test_another_client_holding_uiautomation_shows_in_ps_and_blocks_launches(phone: FakePhone) -> None:
    from .u2server import release_ui_automation, take_ui_automation

    take_ui_automation(phone.state)
    assert not phone.state.u2.running
    assert "io.appium.uiautomator2.server" in (await phone.sh("ps -A")).stdout
    launch = "CLASSPATH=/data/local/tmp/u2.jar app_process / com.wetest.uia2.Main -p 9008"
    held = await phone.sh(launch)
    assert held.code == 1 and "UiAutomationService" in held.stderr and "already registered!" in held.stderr
    release_ui_automation(phone.state)
    assert "io.appium" not in (await phone.sh("ps -A")).stdout
    task, io_ = await phone.start_u2()
    assert phone.state.u2.running
    io_.close()
    await asyncio.wait_for(task, 2)


async def test_an_http_500_answers_once_after_the_call_ran(phone: FakePhone) -> None:
    phone.state.faults.u2_http_500 = "SERVER INTERNAL ERROR: IOException: Broken pipe"
    stream = MemoryStream()
    stream.send(_rpc_request("click", 10, 20))
    server = asyncio.ensure_future(phone.open_tcp(9008, stream))
    status, _, body = await stream.recv_response()
    stream.close()
    await server
    assert (status, body) == (500, b"SERVER INTERNAL ERROR: IOException: Broken pipe")
    assert phone.state.log.taps[-1].x == 10 and phone.state.faults.u2_http_500 is None
    assert (await phone.jsonrpc("deviceInfo"))["result"]["displayRotation"] == 0
