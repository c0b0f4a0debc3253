"""The uiautomator2 server: the `app_process` "process" that uiautomator2 launches, and the
NanoHTTPD server it runs on tcp:9008 (as long as that process lives).

HTTP follows NanoHTTPD 2.3: one or many requests per connection (HTTP/1.1 keep-alive unless the
client asks to close), Content-Length request bodies, a status line with a trailing space,
Content-Type/Date/Connection/Content-Length headers, gzip with chunked encoding for text and
JSON when the client accepts gzip, and an idle connection closed after `u2.keepalive_idle_s`.
Routes: /ping, /stop, /screenshot/0, /jsonrpc/0 (see u2rpc.py), anything else 404.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import gzip
import json
from urllib.parse import urlsplit

from .contract import ByteStream
from .render import render
from .shell import Proc
from .state import PhoneState
from .u2rpc import call
from .userland import command, state_of, wait_closed

JAR_CLASS = "com.wetest.uia2.Main"
ALREADY = (
    "java.lang.IllegalStateException: UiAutomationService "
    "android.accessibilityservice.IAccessibilityServiceClient$Stub$Proxy@5deffd5already registered!\n"
    "\tat android.app.UiAutomation.connect(UiAutomation.java:298)\n"
    "\tat com.wetest.uia2.Main.main(Main.java:41)\n"
)
STATUS = {200: "200 OK", 404: "404 Not Found", 500: "500 Internal Server Error"}


def stop_server(state: PhoneState) -> None:
    """The server process dies (killed, crashed, or its adb shell went away): its port refuses
    from now on, and a connection open to it closes without an answer."""
    state.u2.running = False
    state.u2.touch_down = None


# The scenarios of a real phone's server dying (low memory, an app update, another client).
kill_server = stop_server


def take_ui_automation(state: PhoneState, process: str = "io.appium.uiautomator2.server") -> None:
    """Another automation client takes the phone (Appium's driver kills uiautomator processes and
    starts its own instrumentation): ours dies, `ps -A` lists the other's process, and every
    launch of ours fails "... already registered!" until `release_ui_automation`."""
    kill_server(state)
    state.processes[process] = state.next_id("pid")
    state.faults.u2_held_by = process


def release_ui_automation(state: PhoneState) -> None:
    """The other client ends: its process goes, and our server can register again."""
    if state.faults.u2_held_by is not None:
        state.processes.pop(state.faults.u2_held_by, None)
    state.faults.u2_held_by = None


@command("app_process", "app_process64")
async def app_process(p: Proc) -> int:
    state = state_of(p)
    args = p.argv[1:]
    cls = next((a for a in args if "." in a and not a.startswith("-")), None)
    classpath = p.env.get("CLASSPATH", "")
    if cls != JAR_CLASS or not any(state.files.exists(part) for part in classpath.split(":") if part):
        await p.error(
            f'java.lang.ClassNotFoundException: Didn\'t find class "{cls}" on path: '
            f'DexPathList[[zip file "{classpath}"],nativeLibraryDirectories=[/system/lib64, /system_ext/lib64]]\n'  # noqa: E501
        )
        return 1
    port = int(args[args.index("-p") + 1]) if "-p" in args[:-1] else 9008
    await p.print("[server] INFO: [UiAutomator2Server] Starting Server\n")
    if state.faults.u2_held_by or state.faults.u2_already_registered > 0 or state.u2.running:
        state.faults.u2_already_registered = max(0, state.faults.u2_already_registered - 1)
        await p.error(ALREADY)
        return 1
    pid = state.next_id("pid")
    state.u2.running, state.u2.pid, state.u2.port = True, pid, port
    state.u2.launches += 1
    state.faults.u2_not_connected = False  # a fresh UiAutomation connection
    while state.u2.running and state.u2.pid == pid:
        if await wait_closed(p, 0.05):
            if state.u2.pid == pid:
                stop_server(state)
            return 129  # SIGHUP: the adb shell went away
    return 143  # killed


# --- HTTP ---------------------------------------------------------------------------------------------


def response(
    status: int, mime: str, body: bytes, *, keep_alive: bool, gzip_ok: bool, chunked: bool = False
) -> bytes:
    """A response as NanoHTTPD.Response.send writes it."""
    headers = [
        f"HTTP/1.1 {STATUS[status]} ",
        f"Content-Type: {mime}",
        f"Date: {email.utils.formatdate(usegmt=True)}",
    ]
    headers.append(f"Connection: {'keep-alive' if keep_alive else 'close'}")
    if gzip_ok and ("text/" in mime or "/json" in mime):
        headers.append("Content-Encoding: gzip")
        body, chunked = gzip.compress(body), True
    if chunked:
        headers.append("Transfer-Encoding: chunked")
        payload = b"".join(
            f"{len(part):x}\r\n".encode() + part + b"\r\n"
            for part in (body[i : i + 16384] for i in range(0, len(body), 16384))
        )
        body = payload + b"0\r\n\r\n"
    else:
        headers.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(headers) + "\r\n\r\n").encode() + body


async def _read(stream: ByteStream, state: PhoneState) -> bytes:
    try:
        return await asyncio.wait_for(stream.read(), timeout=state.u2.keepalive_idle_s)
    except asyncio.TimeoutError:
        return b""  # NanoHTTPD's socket read timeout: the connection is dropped


async def serve(state: PhoneState, stream: ByteStream) -> None:
    """Serves requests on one tcp:9008 stream until either side closes it or the server dies."""
    state.u2.connections += 1
    pid = state.u2.pid
    buf = b""
    while True:
        while b"\r\n\r\n" not in buf:
            chunk = await _read(stream, state)
            if not chunk or state.u2.pid != pid or not state.u2.running:
                return
            buf += chunk
        head, _, buf = buf.partition(b"\r\n\r\n")
        lines = head.decode("iso-8859-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3:
            await stream.write(
                response(
                    400 if 400 in STATUS else 500,
                    "text/plain",
                    b"BAD REQUEST: Syntax error",
                    keep_alive=False,
                    gzip_ok=False,
                )
            )
            return
        method, target, version = parts
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0") or 0)
        while len(buf) < length:
            chunk = await _read(stream, state)
            if not chunk:
                return
            buf += chunk
        body, buf = buf[:length], buf[length:]
        state.log.http.append(f"{method} {target}")
        keep = version == "HTTP/1.1" and "close" not in headers.get("connection", "").lower()
        gzip_ok = "gzip" in headers.get("accept-encoding", "")
        reply = await handle(state, method, target, body, keep=keep, gzip_ok=gzip_ok)
        if reply is None or state.u2.pid != pid or not state.u2.running:
            return  # the process died while handling the request: the socket just closes
        if state.faults.u2_http_500 is not None and target.startswith("/jsonrpc"):
            said, state.faults.u2_http_500 = state.faults.u2_http_500, None
            reply = response(500, "text/plain", said.encode(), keep_alive=keep, gzip_ok=gzip_ok)
        if state.faults.u2_die_mid_answer and target.startswith("/jsonrpc"):
            # Killed while writing the answer: the call ran; half its answer, then the close.
            state.faults.u2_die_mid_answer = False
            with contextlib.suppress(ConnectionError, OSError):
                await stream.write(reply[: len(reply) // 2])
            kill_server(state)
            return
        try:
            await stream.write(reply)
        except (ConnectionError, OSError):
            return  # the client gave up (e.g. timed out) while we were answering
        if not keep:
            return


async def handle(
    state: PhoneState, method: str, target: str, body: bytes, *, keep: bool, gzip_ok: bool
) -> bytes | None:
    path = urlsplit(target).path
    if path == "/ping":
        return response(200, "text/html", b"pong", keep_alive=keep, gzip_ok=gzip_ok)
    if path == "/stop":
        reply = response(200, "text/html", b"Server stopped!!!", keep_alive=False, gzip_ok=gzip_ok)
        stop_server(state)
        return reply
    if path == "/screenshot/0":
        return response(200, "image/png", render(state, "PNG"), keep_alive=keep, gzip_ok=False, chunked=True)
    if path != "/jsonrpc/0":
        return response(404, "text/plain", b"Not Found!!!", keep_alive=keep, gzip_ok=gzip_ok)
    if not body:
        return response(500, "text/plain", b"Invalid http post data!", keep_alive=keep, gzip_ok=gzip_ok)
    try:
        request = json.loads(body)
    except ValueError:
        reply_obj: object = {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32700, "message": "JSON parse error"},
        }
    else:
        if isinstance(request, list):
            reply_obj = [await call(state, r) if isinstance(r, dict) else {} for r in request]
        elif isinstance(request, dict):
            reply_obj = await call(state, request)
        else:
            reply_obj = {
                "jsonrpc": "2.0",
                "id": None,
                "error": {"code": -32600, "message": "invalid request"},
            }
        countdown = state.faults.u2_die_after_calls
        if countdown is not None:
            state.faults.u2_die_after_calls = countdown - 1
            if countdown <= 1:
                state.faults.u2_die_after_calls = None
                stop_server(state)
                return None
    data = json.dumps(reply_obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return response(200, "application/json", data, keep_alive=keep, gzip_ok=gzip_ok)
