"""A fake adbd: the device end of the adb transport, on a real TCP port, serving any `PhoneSide`.

The real adb server accepts it after `adb connect 127.0.0.1:PORT`, so adbutils, uiautomator2 and the
adb CLI run their production code paths against it. It speaks the transport (CNXN, OPEN, OKAY, WRTE,
CLSE with one unacknowledged WRTE per direction and stream) and the services those clients open:
`shell:` (v1), `shell,v2,...:` (shell protocol), `exec:`, `sync:` and `tcp:PORT`. Everything else is
refused with CLSE, as adbd refuses what it does not know.

Faults for tests: `drop()` (the phone vanishes: connections cut, port refuses), `hang()` (the phone
freezes: connections stay open, nothing is read or answered) and `resume()` (back on the same port;
after a hang the same connections carry on).

Everything here runs on one asyncio loop. Callers that block on adbutils must not share that loop;
`tests.fakes.adb_server.BackgroundAdbd` runs the daemon on its own thread for them.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import posixpath
import socket
import stat
import struct
import zlib
from collections import Counter, deque
from collections.abc import Awaitable, Callable, Sequence

from tests.fakes.contract import FileStat, PhoneSide

log = logging.getLogger(__name__)

A_CNXN = 0x4E584E43
A_OPEN = 0x4E45504F
A_OKAY = 0x59414B4F
A_WRTE = 0x45545257
A_CLSE = 0x45534C43

# 0x01000001 is the version since Android 9 (checksums no longer verified); adbd answers with the
# lower of its own and the host's.
A_VERSION = 0x01000001
MAX_PAYLOAD = 1024 * 1024

# What a phone's adbd advertises and this daemon implements. Not advertised on purpose:
# abb/abb_exec (`adb install` would need the binder bridge), sendrecv_v2 (compressed sync) and
# delayed_ack (a different flow control), none of which adbutils uses.
DEFAULT_FEATURES: tuple[str, ...] = (
    "shell_v2",
    "cmd",
    "stat_v2",
    "ls_v2",
    "fixed_push_mkdir",
    "fixed_push_symlink_timestamp",
    "apex",
)

_HEADER = struct.Struct("<6I")
_MAX_SERVICE = 64 * 1024  # longest OPEN payload accepted; adb commands are far shorter
_TEARDOWN_TIMEOUT = 5.0  # seconds a cancelled service gets to end when its connection goes


def encode_message(command: int, arg0: int, arg1: int, data: bytes = b"") -> bytes:
    """One transport message: the 24-byte header (with a correct checksum) and the payload."""
    checksum = sum(data) & 0xFFFFFFFF
    return _HEADER.pack(command, arg0, arg1, len(data), checksum, command ^ 0xFFFFFFFF) + data


def service_kind(service: str) -> str:
    """The name a service is counted under: "shell", "shell,v2", "exec", "sync", "tcp:9008"..."""
    name, _, rest = service.partition(":")
    if name == "tcp":
        return f"tcp:{rest}"
    if name.startswith("shell,"):
        return "shell,v2" if "v2" in name.split(",") else "shell"
    return name


class Stream:
    """One adb stream as the device sees it; also the `ByteStream` handed to `PhoneSide.open_tcp`.

    The OKAY that accepts the OPEN is sent lazily, on the first read or write or when the handler
    returns, so a handler can still refuse (ConnectionRefusedError) before touching the stream.
    Inbound data is acknowledged when it is read, which is what throttles a fast host.
    """

    def __init__(self, conn: _Connection, local_id: int, remote_id: int, service: str) -> None:
        self._conn = conn
        self.local_id = local_id
        self.remote_id = remote_id
        self.service = service
        self.accepted = False
        self._closed = False
        self._inbox: deque[bytes] = deque()
        self._has_data = asyncio.Event()
        self._may_send = asyncio.Event()
        self._may_send.set()
        self.ended = asyncio.Event()  # set once the stream is closed, by either side

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def max_payload(self) -> int:
        """The largest WRTE the host accepts on this connection."""
        return self._conn.max_payload

    async def accept(self) -> None:
        if self.accepted or self._closed:
            return
        self.accepted = True
        await self._conn.send(A_OKAY, self.local_id, self.remote_id)

    async def read(self) -> bytes:
        await self.accept()
        while not self._inbox:
            if self._closed:
                return b""
            self._has_data.clear()
            await self._has_data.wait()
        chunk = self._inbox.popleft()
        if not self._closed:
            await self._conn.send(A_OKAY, self.local_id, self.remote_id)
        return chunk

    async def write(self, data: bytes) -> None:
        """Sends `data` in WRTEs of at most the negotiated payload, each after the host's OKAY for
        the previous one. ConnectionResetError once the stream is closed, as a socket would."""
        await self.accept()
        step = self.max_payload
        for offset in range(0, len(data), step):
            while not self._may_send.is_set() and not self._closed:
                await self._may_send.wait()
            if self._closed:
                raise ConnectionResetError(f"adb stream {self.service!r} closed")
            self._may_send.clear()
            await self._conn.send(A_WRTE, self.local_id, self.remote_id, data[offset : offset + step])

    async def close(self) -> None:
        """Closes from the device side: CLSE, or CLSE(0, remote) for a stream never accepted."""
        if self._closed:
            return
        self._mark_closed()
        await self._conn.send(A_CLSE, self.local_id if self.accepted else 0, self.remote_id)

    # Called by the connection for what the host sent.
    def on_write(self, data: bytes) -> None:
        if not self._closed:
            self._inbox.append(data)
            self._has_data.set()

    def on_okay(self) -> None:
        self._may_send.set()

    def on_host_close(self) -> None:
        self._mark_closed()

    def _mark_closed(self) -> None:
        self._closed = True
        self._conn.forget(self)
        # Wake every waiter so it sees the close.
        self._has_data.set()
        self._may_send.set()
        self.ended.set()


class _Buffered:
    """Exact-size reads over a stream whose WRTE boundaries carry no meaning (sync, shell v2)."""

    def __init__(self, stream: Stream) -> None:
        self._stream = stream
        self._buffer = bytearray()

    async def exactly(self, size: int) -> bytes | None:
        """`size` bytes, or None if the stream ended first."""
        while len(self._buffer) < size:
            chunk = await self._stream.read()
            if not chunk:
                return None
            self._buffer += chunk
        data = bytes(self._buffer[:size])
        del self._buffer[:size]
        return data


# --- shell ---------------------------------------------------------------------------------------

SHELL_STDIN, SHELL_STDOUT, SHELL_STDERR, SHELL_EXIT, SHELL_CLOSE_STDIN, SHELL_WINDOW_SIZE = range(6)
_SHELL_PACKET = struct.Struct("<BI")


class ShellIO:
    """The `ProcessIO` of one shell, exec or shell_v2 stream.

    v1 and exec carry raw bytes with stderr merged; shell_v2 frames each chunk as (id, length, data).
    With a PTY (an interactive shell, or the `pty` argument) stderr shares stdout and "\\n" becomes
    "\\r\\n", as the terminal's line discipline does on a phone. Output after the host went away is
    dropped: the process is being ended (see `_serve_shell`).
    """

    def __init__(self, stream: Stream, *, v2: bool, pty: bool) -> None:
        self._stream = stream
        self._v2 = v2
        self._pty = pty
        self._stdin: deque[bytes] = deque()
        self._stdin_ready = asyncio.Event()
        self._stdin_closed = False
        self.window_size: str | None = None
        # adbd gives the process one fd for both when they travel merged; a phone spawning real
        # processes can do the same to keep their relative order (not part of ProcessIO).
        self.stderr_merged = pty or not v2

    @property
    def closed(self) -> bool:
        return self._stream.closed

    async def read_stdin(self) -> bytes:
        if not self._v2:
            return await self._stream.read()
        while not self._stdin:
            if self._stdin_closed or self._stream.closed:
                return b""
            self._stdin_ready.clear()
            await self._stdin_ready.wait()
        return self._stdin.popleft()

    async def write_stdout(self, data: bytes) -> None:
        await self._output(SHELL_STDOUT, data)

    async def write_stderr(self, data: bytes) -> None:
        await self._output(SHELL_STDOUT if self.stderr_merged else SHELL_STDERR, data)

    async def _output(self, packet_id: int, data: bytes) -> None:
        if not data or self._stream.closed:
            return
        if self._pty:
            data = data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
        with contextlib.suppress(ConnectionResetError):
            if self._v2:
                await self._packets(packet_id, data)
            else:
                await self._stream.write(data)

    async def _packets(self, packet_id: int, data: bytes) -> None:
        # One packet per WRTE, as adbd's buffer of one payload makes them.
        step = self._stream.max_payload - _SHELL_PACKET.size
        for offset in range(0, len(data), step):
            chunk = data[offset : offset + step]
            await self._stream.write(_SHELL_PACKET.pack(packet_id, len(chunk)) + chunk)

    async def send_exit(self, code: int) -> None:
        with contextlib.suppress(ConnectionResetError):
            await self._stream.write(_SHELL_PACKET.pack(SHELL_EXIT, 1) + bytes([code & 0xFF]))

    async def pump_host_packets(self) -> None:
        """shell_v2: splits what the host sends into stdin data, close-stdin and window size."""
        reader = _Buffered(self._stream)
        try:
            while (header := await reader.exactly(_SHELL_PACKET.size)) is not None:
                packet_id, length = _SHELL_PACKET.unpack(header)
                payload = await reader.exactly(length)
                if payload is None:
                    break
                if packet_id == SHELL_STDIN and not self._stdin_closed:
                    self._stdin.append(payload)
                elif packet_id == SHELL_CLOSE_STDIN:
                    self._stdin_closed = True
                elif packet_id == SHELL_WINDOW_SIZE:
                    self.window_size = payload.decode(errors="replace")
                self._stdin_ready.set()
        finally:
            self._stdin_closed = True
            self._stdin_ready.set()


def _parse_shell(service: str) -> tuple[bool, bool, str]:
    """(v2, pty, command) for "shell[,arg...]:command" and "exec:command"."""
    name, _, command = service.partition(":")
    if name == "exec":
        return False, False, command
    args = name.split(",")[1:]
    v2 = "v2" in args
    # adbd's default: a PTY for an interactive shell, raw for a command; "raw"/"pty" override it.
    pty = not command
    if "raw" in args:
        pty = False
    elif "pty" in args:
        pty = True
    return v2, pty, command


async def _serve_shell(stream: Stream, daemon: FakeAdbd) -> None:
    v2, pty, command = _parse_shell(stream.service)
    io = ShellIO(stream, v2=v2, pty=pty)
    await stream.accept()
    if stream.closed:
        return  # the host gave up before the process started (say, after a hang): never run it
    pump = asyncio.ensure_future(io.pump_host_packets()) if v2 else None
    process = asyncio.ensure_future(daemon.phone.run_shell(command, io))
    ended = asyncio.ensure_future(stream.ended.wait())
    try:
        await asyncio.wait({process, ended}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        ended.cancel()
        if pump is not None:
            pump.cancel()
        if not process.done():
            # The host closed the stream: on a phone the child loses its terminal or pipe and dies
            # (SIGHUP, SIGPIPE). uiautomator2 relies on this to stop its server.
            process.cancel()
            await asyncio.wait({process})
    if process.cancelled():
        return
    error = process.exception()
    if error is not None:
        log.error("fake adbd: run_shell(%r) raised", command, exc_info=error)
        await io.write_stderr(f"fake adbd: run_shell raised {error!r}\n".encode())
        code = 255
    else:
        code = process.result()
    if v2:
        await io.send_exit(code)


# --- sync ----------------------------------------------------------------------------------------

SYNC_DATA_MAX = 64 * 1024
_SYNC_PATH_MAX = 1024
_U32 = struct.Struct("<I")
_SYNC_REQUEST = struct.Struct("<4sI")
_DENT_V1 = struct.Struct("<4sIIII")  # id, mode, size, mtime, namelen
# id, error, dev, ino, mode, nlink, uid, gid, size, atime, mtime, ctime
_STAT_V2 = struct.Struct("<4sIQQIIIIQqqq")
_DENT_V2 = struct.Struct("<4sIQQIIIIQqqqI")  # the same, then namelen


def _stat_v2(tag: bytes, path: str, info: FileStat | None) -> bytes:
    if info is None:
        return _STAT_V2.pack(tag, errno.ENOENT, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    # A fake inode, stable across runs; uid/gid of root and one link, as most of a phone's files have.
    inode = zlib.crc32(path.encode())
    return _STAT_V2.pack(tag, 0, 0, inode, info.mode, 1, 0, 0, info.size, info.mtime, info.mtime, info.mtime)


def _errno_message(error: OSError) -> str:
    if error.errno is not None:
        return os.strerror(error.errno)
    by_type: dict[type[OSError], int] = {
        FileNotFoundError: errno.ENOENT,
        PermissionError: errno.EACCES,
        IsADirectoryError: errno.EISDIR,
        NotADirectoryError: errno.ENOTDIR,
        FileExistsError: errno.EEXIST,
    }
    for kind, number in by_type.items():
        if isinstance(error, kind):
            return os.strerror(number)
    return str(error) or type(error).__name__


class _SyncSession:
    """The `sync:` service: requests of (id, length, path) until QUIT, a failure or the host's close."""

    def __init__(self, stream: Stream, phone: PhoneSide, record: Callable[[str], None]) -> None:
        self._stream = stream
        self._phone = phone
        self._record = record
        self._reader = _Buffered(stream)
        self._handlers: dict[bytes, Callable[[str], Awaitable[bool]]] = {
            b"STAT": self._stat,
            b"STA2": self._stat2,
            b"LST2": self._stat2_lstat,
            b"LIST": self._list,
            b"LIS2": self._list2,
            b"RECV": self._recv,
            b"SEND": self._send,
        }

    async def run(self) -> None:
        await self._stream.accept()
        while (header := await self._reader.exactly(_SYNC_REQUEST.size)) is not None:
            request, length = _SYNC_REQUEST.unpack(header)
            if request == b"QUIT":
                return
            if length > _SYNC_PATH_MAX:
                await self._fail("path too long")
                return
            raw_path = await self._reader.exactly(length)
            if raw_path is None:
                return
            path = raw_path.decode("utf-8", errors="surrogateescape")
            self._record(f"{request.decode(errors='replace')} {path}")
            handler = self._handlers.get(request)
            if handler is None:
                await self._fail(f"unknown command {request!r}")
                return
            if not await handler(path):
                return

    async def _fail(self, message: str) -> None:
        encoded = message.encode()
        with contextlib.suppress(ConnectionResetError):
            await self._stream.write(b"FAIL" + _U32.pack(len(encoded)) + encoded)

    def _lstat(self, path: str) -> FileStat | None:
        """adbd's STAT (v1) and LST2 lstat the path; STA2 stats it (links followed)."""
        lstat = getattr(self._phone, "lstat", None)
        return lstat(path) if lstat is not None else self._phone.stat(path)

    async def _stat(self, path: str) -> bool:
        info = self._lstat(path)
        mode, size, mtime = (info.mode, info.size, info.mtime) if info else (0, 0, 0)
        await self._stream.write(b"STAT" + struct.pack("<III", mode, size & 0xFFFFFFFF, mtime))
        return True

    async def _stat2(self, path: str) -> bool:
        await self._stream.write(_stat_v2(b"STA2", path, self._phone.stat(path)))
        return True

    async def _stat2_lstat(self, path: str) -> bool:
        await self._stream.write(_stat_v2(b"LST2", path, self._lstat(path)))
        return True

    def _entries(self, path: str) -> list[tuple[str, FileStat]]:
        """What readdir gives, "." and ".." included; nothing when the directory cannot be opened
        (adbd then answers DONE alone, never FAIL)."""
        here = self._phone.stat(path)
        if here is None or not stat.S_ISDIR(here.mode):
            return []
        try:
            listed = self._phone.list_dir(path)
        except OSError:
            return []
        parent = self._phone.stat(posixpath.dirname(path.rstrip("/")) or "/") or here
        return [(".", here), ("..", parent), *listed]

    async def _list(self, path: str) -> bool:
        out = bytearray()
        for name, info in self._entries(path):
            encoded = name.encode()
            out += _DENT_V1.pack(b"DENT", info.mode, info.size & 0xFFFFFFFF, info.mtime, len(encoded))
            out += encoded
        out += _DENT_V1.pack(b"DONE", 0, 0, 0, 0)
        await self._stream.write(bytes(out))
        return True

    async def _list2(self, path: str) -> bool:
        out = bytearray()
        for name, info in self._entries(path):
            encoded = name.encode()
            entry = posixpath.join(path, name)
            out += _stat_v2(b"DNT2", entry, info) + _U32.pack(len(encoded)) + encoded
        out += _DENT_V2.pack(b"DONE", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        await self._stream.write(bytes(out))
        return True

    async def _recv(self, path: str) -> bool:
        try:
            data = self._phone.read_file(path)
        except OSError as error:
            await self._fail(f"open failed: {_errno_message(error)}")
            return False
        for offset in range(0, len(data), SYNC_DATA_MAX):
            chunk = data[offset : offset + SYNC_DATA_MAX]
            await self._stream.write(b"DATA" + _U32.pack(len(chunk)) + chunk)
        await self._stream.write(b"DONE" + _U32.pack(0))
        return True

    async def _send(self, spec: str) -> bool:
        path, _, mode_text = spec.rpartition(",")
        if not path:
            path, mode_text = spec, ""
        try:
            mode = int(mode_text)
        except ValueError:
            mode = stat.S_IFREG | 0o644
        body = bytearray()
        while True:
            header = await self._reader.exactly(_SYNC_REQUEST.size)
            if header is None:
                return False
            kind, value = _SYNC_REQUEST.unpack(header)
            if kind == b"DONE":
                mtime = value
                break
            if kind != b"DATA":
                await self._fail(f"invalid data message {kind!r}")
                return False
            if value > SYNC_DATA_MAX:
                await self._fail("oversize data message")
                return False
            chunk = await self._reader.exactly(value)
            if chunk is None:
                return False
            body += chunk
        try:
            self._phone.write_file(path, bytes(body), mode, mtime)
        except OSError as error:
            await self._fail(f"couldn't create file: {_errno_message(error)}")
            return False
        await self._stream.write(b"OKAY" + _U32.pack(0))
        return True


async def _serve_sync(stream: Stream, daemon: FakeAdbd) -> None:
    await _SyncSession(stream, daemon.phone, daemon.sync_requests.append).run()


# --- tcp -----------------------------------------------------------------------------------------


def _tcp_port(service: str) -> int | None:
    """The port of "tcp:PORT" or "tcp:HOST:PORT" when HOST is the phone itself."""
    parts = service.split(":")[1:]
    if len(parts) == 2 and parts[0] in ("localhost", "127.0.0.1"):
        parts = parts[1:]
    if len(parts) != 1 or not parts[0].isdigit():
        return None
    return int(parts[0])


async def _serve_tcp(stream: Stream, daemon: FakeAdbd) -> None:
    port = _tcp_port(stream.service)
    if port is None:
        raise ConnectionRefusedError(stream.service)
    await daemon.phone.open_tcp(port, stream)


Handler = Callable[[Stream, "FakeAdbd"], Awaitable[None]]


def _handler_for(service: str) -> Handler | None:
    name = service.partition(":")[0]
    if name in ("shell", "exec") or name.startswith("shell,"):
        return _serve_shell
    if name == "sync":
        return _serve_sync
    if name == "tcp":
        return _serve_tcp
    return None


# --- transport -----------------------------------------------------------------------------------


class _Connection:
    """One TCP connection from the adb server: the handshake, then streams until either side ends."""

    def __init__(self, daemon: FakeAdbd, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._daemon = daemon
        self._reader = reader
        self._writer = writer
        self._send_lock = asyncio.Lock()
        self._streams: dict[int, Stream] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._next_id = 1
        self.max_payload = daemon.max_payload

    async def send(self, command: int, arg0: int, arg1: int, data: bytes = b"") -> None:
        await self._daemon.awake.wait()  # a frozen phone sends nothing
        async with self._send_lock:
            self._writer.write(encode_message(command, arg0, arg1, data))
            await self._writer.drain()

    def forget(self, stream: Stream) -> None:
        self._streams.pop(stream.local_id, None)

    def abort(self) -> None:
        self._writer.transport.abort()

    async def serve(self) -> None:
        try:
            while True:
                await self._daemon.awake.wait()  # a frozen phone reads nothing; TCP buffers it
                header = await self._reader.readexactly(_HEADER.size)
                command, arg0, arg1, length, _checksum, magic = _HEADER.unpack(header)
                if magic != command ^ 0xFFFFFFFF or length > max(self.max_payload, _MAX_SERVICE):
                    log.warning("fake adbd: malformed message %08x, closing", command)
                    return
                data = await self._reader.readexactly(length)
                await self._dispatch(command, arg0, arg1, data)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            await self._teardown()

    async def _dispatch(self, command: int, arg0: int, arg1: int, data: bytes) -> None:
        if command == A_CNXN:
            await self._handshake(arg0, arg1)
        elif command == A_OPEN:
            self._open(arg0, data.rstrip(b"\0").decode("utf-8", errors="replace"))
        elif (stream := self._streams.get(arg1)) is None:
            pass  # a late message for a stream already closed: adbd ignores it too
        elif command == A_OKAY:
            stream.on_okay()
        elif command == A_WRTE:
            stream.on_write(data)
        elif command == A_CLSE:
            stream.on_host_close()

    async def _handshake(self, version: int, max_payload: int) -> None:
        # A CNXN from the host starts over: its old streams are gone.
        for stream in list(self._streams.values()):
            stream.on_host_close()
        self.max_payload = min(max_payload, self._daemon.max_payload)
        self._daemon.handshakes += 1
        banner = self._daemon.banner().encode()
        await self.send(A_CNXN, min(version, A_VERSION), self.max_payload, banner)

    def _open(self, remote_id: int, service: str) -> None:
        self._daemon.record(service)
        local_id = self._next_id
        self._next_id += 1
        stream = Stream(self, local_id, remote_id, service)
        self._streams[local_id] = stream
        task = asyncio.ensure_future(self._run_service(stream))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run_service(self, stream: Stream) -> None:
        handler = _handler_for(stream.service)
        try:
            if handler is None:
                log.info("fake adbd: refusing unknown service %r", stream.service)
            else:
                await handler(stream, self._daemon)
                await stream.accept()  # a handler that never touched the stream still accepted it
        except ConnectionRefusedError:
            log.info("fake adbd: %r refused", stream.service)
        except ConnectionResetError:
            pass  # the host went away mid-write
        except Exception:
            log.exception("fake adbd: service %r failed", stream.service)
        finally:
            with contextlib.suppress(ConnectionError):
                await stream.close()

    async def _teardown(self) -> None:
        for stream in list(self._streams.values()):
            stream.on_host_close()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            _, stuck = await asyncio.wait(set(self._tasks), timeout=_TEARDOWN_TIMEOUT)
            if stuck:
                # A phone method that ignores cancellation; better a loud log than a hung test.
                log.error("fake adbd: %d service(s) did not end when cancelled", len(stuck))
        self._writer.close()
        with contextlib.suppress(Exception):
            await self._writer.wait_closed()


class FakeAdbd:
    """A fake device daemon on 127.0.0.1 serving `phone`; `serial` is what `adb connect` takes.

    The phone's banner supplies the device properties; the daemon owns `features=`, since features
    name wire capabilities (pass e.g. DEFAULT_FEATURES without "shell_v2" to force shell v1).
    `max_payload` caps the WRTE size offered in CNXN (the host's own limit applies too).
    """

    def __init__(
        self,
        phone: PhoneSide,
        *,
        features: Sequence[str] = DEFAULT_FEATURES,
        max_payload: int = MAX_PAYLOAD,
        host: str = "127.0.0.1",
    ) -> None:
        self.phone = phone
        self.host = host  # another address than loopback: a phone adb reaches over Wi-Fi
        self.features = tuple(features)
        self.max_payload = max_payload
        self.port = 0
        self.opened: list[str] = []
        self.opened_counts: Counter[str] = Counter()
        self.sync_requests: list[str] = []  # "STA2 /sdcard/x", "SEND /data/local/tmp/u2.jar,33261"...
        self.handshakes = 0
        self.awake = asyncio.Event()  # cleared while hung
        self.awake.set()
        self._server: asyncio.Server | None = None
        self._connections: dict[_Connection, asyncio.Task[None]] = {}

    @property
    def serial(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def round_trips(self) -> int:
        """Streams opened so far: each is at least one round trip to the device."""
        return len(self.opened)

    def banner(self) -> str:
        """The phone's CNXN banner with this daemon's `features=`."""
        kind, sep, props = self.phone.banner().partition("::")
        fields = [f for f in props.split(";") if f and not f.startswith("features=")] if sep else []
        fields.append("features=" + ",".join(self.features))
        return f"{kind if sep else 'device'}::{';'.join(fields)}"

    def record(self, service: str) -> None:
        self.opened.append(service)
        self.opened_counts[service_kind(service)] += 1

    def reset_counts(self) -> None:
        self.opened.clear()
        self.opened_counts.clear()
        self.sync_requests.clear()

    async def start(self) -> None:
        """Listens on a free port (or, after the first start, the same port again)."""
        self._server = await asyncio.start_server(self._on_client, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def drop(self) -> None:
        """The phone vanishes: every connection is cut and the port refuses new ones."""
        if self._server is not None:
            self._server.close()
        await self._cut_all()
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None

    @property
    def hanging(self) -> bool:
        return not self.awake.is_set()

    def hang(self) -> None:
        """The phone freezes: connections stay open and new ones are accepted, but nothing is read
        or sent (the kernel still buffers what the host sends), so every request waits."""
        self.awake.clear()

    async def resume(self) -> None:
        """Back to normal on the same port. After a hang, the same connections carry on with what
        was buffered, as a phone that thaws does: requests made meanwhile run now, late."""
        self.awake.set()
        if self._server is None:
            await self.start()

    async def close(self) -> None:
        self.awake.set()
        await self.drop()

    async def _cut_all(self) -> None:
        tasks = list(self._connections.values())
        for conn, task in list(self._connections.items()):
            conn.abort()
            task.cancel()  # a connection frozen by hang() is not reading, so would not notice
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _on_client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        if sock is not None:
            # adb disables Nagle on its transports; without it small OKAYs wait for delayed ACKs.
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conn = _Connection(self, reader, writer)
        task = asyncio.current_task()
        assert task is not None
        self._connections[conn] = task
        try:
            await conn.serve()
        finally:
            self._connections.pop(conn, None)
