"""In-memory stand-ins for the daemon's side of the seam (contract.ProcessIO and ByteStream), so
tests can drive a FakePhone without adb: feed stdin, collect stdout/stderr, close like a host."""

from __future__ import annotations

import asyncio


class MemoryIO:
    """A shell process's streams: stdin given up front, output collected."""

    def __init__(self, stdin: bytes = b"", *, eof: bool = True) -> None:
        self._stdin: asyncio.Queue[bytes] = asyncio.Queue()
        if stdin:
            self._stdin.put_nowait(stdin)
        if eof:
            self._stdin.put_nowait(b"")
        self.stdout = bytearray()
        self.stderr = bytearray()
        self._closed = False

    async def read_stdin(self) -> bytes:
        chunk = await self._stdin.get()
        if not chunk:
            self._stdin.put_nowait(b"")  # end of input stays the end
        return chunk

    async def write_stdout(self, data: bytes) -> None:
        self.stdout += data

    async def write_stderr(self, data: bytes) -> None:
        self.stderr += data

    @property
    def closed(self) -> bool:
        return self._closed

    def feed(self, data: bytes) -> None:
        self._stdin.put_nowait(data)

    def close(self) -> None:
        """The host went away."""
        self._closed = True
        self._stdin.put_nowait(b"")


class MemoryStream:
    """One tcp:PORT stream: the phone reads what the test `send`s; the test `recv`s its writes."""

    def __init__(self) -> None:
        self._to_phone: asyncio.Queue[bytes] = asyncio.Queue()
        self._to_host: asyncio.Queue[bytes] = asyncio.Queue()
        self._closed = False

    async def read(self) -> bytes:
        if self._closed and self._to_phone.empty():
            return b""
        chunk = await self._to_phone.get()
        if not chunk:
            self._to_phone.put_nowait(b"")
        return chunk

    async def write(self, data: bytes) -> None:
        if self._closed:
            raise ConnectionResetError("stream closed by the host")
        self._to_host.put_nowait(bytes(data))

    @property
    def closed(self) -> bool:
        return self._closed

    def send(self, data: bytes) -> None:
        self._to_phone.put_nowait(data)

    def close(self) -> None:
        self._closed = True
        self._to_phone.put_nowait(b"")

    async def recv(self, timeout: float = 5.0) -> bytes:
        return await asyncio.wait_for(self._to_host.get(), timeout)

    async def recv_response(self, timeout: float = 5.0) -> tuple[int, dict[str, str], bytes]:
        """Reads one HTTP response (Content-Length or chunked): (status, headers, body)."""
        buf = b""
        while b"\r\n\r\n" not in buf:
            buf += await self.recv(timeout)
        head, _, rest = buf.partition(b"\r\n\r\n")
        lines = head.decode("iso-8859-1").split("\r\n")
        status = int(lines[0].split(" ")[1])
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
        if headers.get("transfer-encoding") == "chunked":
            while not rest.endswith(b"0\r\n\r\n"):
                rest += await self.recv(timeout)
            body, data = b"", rest
            while True:
                size_line, _, data = data.partition(b"\r\n")
                size = int(size_line, 16)
                if size == 0:
                    break
                body, data = body + data[:size], data[size + 2 :]
            return status, headers, body
        length = int(headers.get("content-length", "0"))
        while len(rest) < length:
            rest += await self.recv(timeout)
        return status, headers, rest[:length]
