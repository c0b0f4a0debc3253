"""FakePhone: the phone behind the fake adbd (contract.PhoneSide).

It runs shell commands through a small mksh (`shell.py`) over an Android-like userland
(`userland.py`, `system.py`, `activity.py`, `dumpsys.py`, `providers.py`), serves the sync
service from an in-memory file system, and answers tcp:9008 with the uiautomator2 server while
that server's app_process runs. Everything it knows and everything it received is in `state`.

    phone = FakePhone()
    result = await phone.sh("am start -a android.intent.action.SENDTO -d smsto:+15551234 --es sms_body hi")
    assert phone.state.log.intents[-1].extras["sms_body"] == "hi"
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

from .contract import ByteStream, FileStat, ProcessIO
from .fs import ELF, FileSystem
from .memio import MemoryIO, MemoryStream
from .seed import default_state
from .shell import Handler, Shell, Streams
from .state import PhoneState
from .u2server import serve
from .ui import MASKS, UiNode
from .ui import find as find_nodes
from .userland import load_all

ENV = {
    "PATH": "/product/bin:/apex/com.android.runtime/bin:/apex/com.android.art/bin:/system_ext/bin:/system/bin:"  # noqa: E501
    "/system/xbin:/odm/bin:/vendor/bin:/vendor/xbin",
    "HOME": "/",
    "HOSTNAME": "emu64xa",
    "USER": "shell",
    "LOGNAME": "shell",
    "SHELL": "/bin/sh",
    "TMPDIR": "/data/local/tmp",
    "ANDROID_DATA": "/data",
    "ANDROID_ROOT": "/system",
    "ANDROID_STORAGE": "/storage",
    "EXTERNAL_STORAGE": "/sdcard",
    "ASEC_MOUNTPOINT": "/mnt/asec",
}
BIN_DIRS = ("/system/bin/", "/bin/", "/system/xbin/", "/vendor/bin/")


@dataclass
class ShellResult:
    code: int
    stdout: str
    stderr: str
    raw: bytes = b""  # stdout as bytes (screencap)

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


class FakePhone:
    """contract.PhoneSide over a PhoneState (a default emulator-like phone when none is given)."""

    def __init__(self, state: PhoneState | None = None) -> None:
        self.state = state or default_state()
        self.commands: dict[str, Handler] = load_all()
        for name in self.commands:
            self.fs.nodes.setdefault(
                f"/system/bin/{name}", self.fs.nodes.get(f"/system/bin/{name}") or _binary()
            )

    @property
    def fs(self) -> FileSystem:
        return self.state.files

    # --- contract.PhoneSide --------------------------------------------------------------

    def banner(self) -> str:
        props = self.state.props
        keys = ("ro.product.name", "ro.product.model", "ro.product.device")
        return (
            "device::"
            + "".join(f"{k}={props.get(k, '')};" for k in keys)
            + "features="
            + ",".join(self.state.features)
        )

    async def run_shell(self, command: str, io: ProcessIO) -> int:
        self.state.log.shell.append(command)
        streams = Streams(None, io.write_stdout, io.write_stderr)
        if command == "":
            return await self._interactive(io, streams)
        return await Shell(self, io, ENV, pid=self.state.next_id("pid")).run(command, streams)

    async def _interactive(self, io: ProcessIO, streams: Streams) -> int:
        shell = Shell(self, io, ENV, pid=self.state.next_id("pid"))
        pending = b""
        status = 0
        while not io.closed:
            await io.write_stdout(f"emu64xa:{shell.cwd} $ ".encode())
            while b"\n" not in pending:
                chunk = await io.read_stdin()
                if not chunk:
                    return status
                pending += chunk
            line, _, pending = pending.partition(b"\n")
            text = line.decode("utf-8", "replace").strip()
            if text == "exit":
                return status
            self.state.log.shell.append(text)
            status = await shell.run(text, streams)
        return status

    def stat(self, path: str) -> FileStat | None:
        node = self.fs.stat(path)
        if node is None:
            return None
        return FileStat(node.mode, 4096 if node.is_dir else len(node.data), node.mtime)

    def lstat(self, path: str) -> FileStat | None:
        """The path itself, a symlink not followed (adbd's STAT and LST2 use lstat)."""
        node = self.fs.lstat(path)
        if node is None:
            return None
        return FileStat(node.mode, 4096 if node.is_dir else len(node.data), node.mtime)

    def read_file(self, path: str) -> bytes:
        return self.fs.read(path)

    def write_file(self, path: str, data: bytes, mode: int, mtime: int) -> None:
        self.fs.write(path, data, mode, mtime)

    def list_dir(self, path: str) -> list[tuple[str, FileStat]]:
        return [
            (name, FileStat(node.mode, 4096 if node.is_dir else len(node.data), node.mtime))
            for name, node in self.fs.list(path)
        ]

    async def open_tcp(self, port: int, stream: ByteStream) -> None:
        u2 = self.state.u2
        if not u2.running or port != u2.port:
            raise ConnectionRefusedError(111, f"Connection refused: tcp:{port}")
        await serve(self.state, stream)

    # --- what the shell needs (shell.Host) -------------------------------------------------

    def find(self, name: str) -> Handler | None:
        if "/" in name:
            directory = name.rsplit("/", 1)[0] + "/"
            if directory not in BIN_DIRS:
                return None
            name = name.rsplit("/", 1)[1]
        return self.commands.get(name)

    def ran(self, argv: list[str]) -> None:
        self.state.log.commands.append(list(argv))

    # --- helpers for tests -------------------------------------------------------------------

    def nodes(self, **selector: Any) -> list[UiNode]:
        """Nodes on screen matching a u2-style selector, e.g. find(resourceId="...", text="Send")."""
        from .apps import windows as current

        sel: dict[str, Any] = {"mask": sum(MASKS[k] for k in selector), **selector}
        return find_nodes(current(self.state), sel)

    async def tap_node(self, **selector: Any) -> UiNode:
        """`input tap` at the center of the first node matching `selector` (AssertionError if none)."""
        found = self.nodes(**selector)
        assert found, f"nothing on screen matches {selector}"
        x, y = found[0].center
        await self.sh(f"input tap {x} {y}")
        return found[0]

    async def sh(self, command: str, *, stdin: bytes = b"") -> ShellResult:
        """Runs `command` as `adb shell` would; stdout and stderr kept apart (shell_v2)."""
        io = MemoryIO(stdin)
        code = await self.run_shell(command, io)
        out, err = bytes(io.stdout), bytes(io.stderr)
        return ShellResult(code, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), out)

    async def start_u2(self, *, jar: bytes = b"PK\x03\x04u2") -> tuple[asyncio.Task[int], MemoryIO]:
        """Launches the u2 server as uiautomator2 does (pushing a stand-in jar if none is there).
        Close the returned io to end it, like closing the adb shell stream."""
        if not self.fs.exists("/data/local/tmp/u2.jar"):
            self.fs.write("/data/local/tmp/u2.jar", jar, 0o100644)
        io = MemoryIO(eof=False)
        command = "CLASSPATH=/data/local/tmp/u2.jar app_process / com.wetest.uia2.Main -p 9008"
        task = asyncio.ensure_future(self.run_shell(command, io))
        while not self.state.u2.running and not task.done():
            await asyncio.sleep(0)
        return task, io

    async def jsonrpc(self, method: str, *params: Any) -> dict[str, Any]:
        """One JSON-RPC call over a fresh tcp:9008 stream, as uiautomator2's client makes it."""
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": list(params)}).encode()
        stream = MemoryStream()
        stream.send(
            b"POST /jsonrpc/0 HTTP/1.1\r\nHost: localhost:9008\r\nAccept-Encoding: \r\nUser-Agent: uiautomator2\r\n"  # noqa: E501
            b"Content-Type: application/json\r\nContent-Length: "
            + str(len(body)).encode()
            + b"\r\n\r\n"
            + body
        )
        server = asyncio.ensure_future(self.open_tcp(9008, stream))
        try:
            _, _, reply = await stream.recv_response()
        finally:
            stream.close()
            await server
        result: dict[str, Any] = json.loads(reply)
        return result


def _binary() -> Any:
    from .fs import Node

    return Node(0o100755, ELF)
