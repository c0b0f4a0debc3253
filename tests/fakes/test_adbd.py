"""The fake adbd through the real adb server and real adbutils: shell v1/v2, exec, sync, tcp
streams, the adb CLI, and the faults (drop, hang, resume)."""

from __future__ import annotations

import asyncio
import os
import struct
import time
from collections.abc import Callable
from pathlib import Path

import adbutils
import pytest

from tests.fakes.adb_server import AdbServer, FakeDeviceFactory, fake_device, find_adb
from tests.fakes.adbd import (
    A_CLSE,
    A_CNXN,
    A_OKAY,
    A_OPEN,
    A_WRTE,
    DEFAULT_FEATURES,
    FakeAdbd,
    encode_message,
    service_kind,
)
from tests.fakes.contract import ProcessIO
from tests.fakes.echo_phone import ECHO_PORT, EchoPhone

pytestmark = [
    pytest.mark.skipif(find_adb() is None, reason="no adb binary (apt-get install adb, or adbutils' wheel)"),
    pytest.mark.timeout(30),
]

NO_SHELL_V2 = tuple(f for f in DEFAULT_FEATURES if f != "shell_v2")
TIMEOUT = 10.0  # seconds any single adbutils call may take before the test fails instead of hanging


def shell_v2_exchange(
    device: adbutils.AdbDevice, service: str, stdin: bytes = b""
) -> tuple[bytes, bytes, int]:
    """Opens a shell_v2 service by hand (adbutils has no stdin for v2): sends `stdin` and
    close-stdin, returns (stdout, stderr, exit code)."""
    conn = device.open_transport(timeout=TIMEOUT)
    try:
        conn.send_command(service)
        conn.check_okay()
        if stdin:
            conn.conn.sendall(struct.pack("<BI", 0, len(stdin)) + stdin)
        conn.conn.sendall(struct.pack("<BI", 4, 0))
        out, err = bytearray(), bytearray()
        while True:
            packet_id, length = struct.unpack("<BI", conn.read_exact(5))
            data = conn.read_exact(length)
            if packet_id == 1:
                out += data
            elif packet_id == 2:
                err += data
            elif packet_id == 3:
                return bytes(out), bytes(err), data[0]
    finally:
        conn.close()


def wait_until(predicate: Callable[[], bool], timeout: float = TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.01)  # polling against a deadline


# --- wire helpers (no adb needed, but cheap) --------------------------------------------------


def test_message_header_has_checksum_and_magic() -> None:
    raw = encode_message(0x4E45504F, 5, 0, b"shell:\0")
    command, arg0, arg1, length, checksum, magic = struct.unpack("<6I", raw[:24])
    assert (command, arg0, arg1, length) == (0x4E45504F, 5, 0, 7)
    assert checksum == sum(b"shell:\0")
    assert magic == command ^ 0xFFFFFFFF
    assert raw[24:] == b"shell:\0"


def test_service_kinds() -> None:
    assert service_kind("shell:ls") == "shell"
    assert service_kind("shell,v2,TERM=xterm,raw:ls") == "shell,v2"
    assert service_kind("sync:") == "sync"
    assert service_kind("tcp:9008") == "tcp:9008"


# --- the transport, spoken by hand (no adb server) -----------------------------------------------


class RawHost:
    """The adb server's side of the transport, by hand, to check what the server does not show."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    def send(self, command: int, arg0: int, arg1: int, data: bytes = b"") -> None:
        self.writer.write(encode_message(command, arg0, arg1, data))

    async def receive(self) -> tuple[int, int, int, bytes]:
        header = await asyncio.wait_for(self.reader.readexactly(24), TIMEOUT)
        command, arg0, arg1, length, checksum, magic = struct.unpack("<6I", header)
        data = await self.reader.readexactly(length)
        assert magic == command ^ 0xFFFFFFFF and checksum == sum(data)
        return command, arg0, arg1, data


async def test_transport_by_hand() -> None:
    daemon = FakeAdbd(EchoPhone(model="Raw"), max_payload=4096)
    await daemon.start()
    reader, writer = await asyncio.open_connection("127.0.0.1", daemon.port)
    host = RawHost(reader, writer)
    try:
        host.send(A_CNXN, 0x01000001, 1024 * 1024, b"host::features=shell_v2\0")
        command, version, max_data, banner = await host.receive()
        assert (command, version, max_data) == (A_CNXN, 0x01000001, 4096)
        assert banner.startswith(b"device::") and b"ro.product.model=Raw" in banner

        # Unknown service: CLSE(0, their id), as adbd refuses.
        host.send(A_OPEN, 7, 0, b"jdwp:1234\0")
        assert await host.receive() == (A_CLSE, 0, 7, b"")

        # One WRTE in flight: the next comes only after our OKAY, and the daemon still answers
        # other streams meanwhile.
        host.send(A_OPEN, 8, 0, b"exec:seq 0 99999\0")
        command, ours, theirs, _ = await host.receive()
        assert (command, theirs) == (A_OKAY, 8)
        command, _, _, first = await host.receive()
        assert command == A_WRTE and len(first) == 4096
        host.send(A_OPEN, 9, 0, b"nothing\0")
        assert await host.receive() == (A_CLSE, 0, 9, b"")
        host.send(A_OKAY, 8, ours)
        command, _, _, second = await host.receive()
        assert command == A_WRTE and (first + second).startswith(b"0\n1\n2\n")
        host.send(A_CLSE, 8, ours)
    finally:
        writer.close()
        await daemon.close()
    assert daemon.opened == ["jdwp:1234", "exec:seq 0 99999", "nothing"]


# --- shell ------------------------------------------------------------------------------------


def test_shell_v2_separates_stdout_stderr_and_exit_code(fake_device_factory: FakeDeviceFactory) -> None:
    device = fake_device_factory(EchoPhone())
    result = device.adbutils_device().shell2("echo out; echo err >&2; exit 3", timeout=TIMEOUT, v2=True)
    assert (result.stdout, result.stderr, result.returncode) == ("out\n", "err\n", 3)
    assert device.adbd.opened == ["shell,v2:echo out; echo err >&2; exit 3"]


def test_shell_v1_when_the_device_has_no_shell_v2(fake_device_factory: FakeDeviceFactory) -> None:
    device = fake_device_factory(EchoPhone(), features=NO_SHELL_V2)
    d = device.adbutils_device()
    assert d.shell("echo out; echo err >&2", timeout=TIMEOUT) == "out\nerr"
    # adbutils falls back to v1 and recovers the exit code with its own `echo X4EXIT:$?`.
    result = d.shell2("echo out; echo err >&2; false", timeout=TIMEOUT, v2=True)
    assert (result.output, result.stderr, result.returncode) == ("out\nerr\n", "", 1)
    assert [service_kind(s) for s in device.adbd.opened] == ["shell", "shell"]


def test_shell_v1_stdin(fake_device_factory: FakeDeviceFactory) -> None:
    d = fake_device_factory(EchoPhone()).adbutils_device()
    conn = d.shell("head -c 5 | tr a-z A-Z", stream=True)
    try:
        conn.conn.settimeout(TIMEOUT)
        conn.conn.sendall(b"hello")
        assert conn.read_until_close() == "HELLO"
    finally:
        conn.close()


def test_shell_v2_stdin_and_close_stdin(fake_device_factory: FakeDeviceFactory) -> None:
    d = fake_device_factory(EchoPhone()).adbutils_device()
    assert shell_v2_exchange(d, "shell,v2,raw:tr a-z A-Z; exit 7", b"hello\n") == (b"HELLO\n", b"", 7)


def test_shell_v2_pty_merges_stderr_and_translates_newlines(fake_device_factory: FakeDeviceFactory) -> None:
    d = fake_device_factory(EchoPhone()).adbutils_device()
    assert shell_v2_exchange(d, "shell,v2,pty:echo a; echo b >&2") == (b"a\r\nb\r\n", b"", 0)


def test_exec_is_raw_with_stderr_merged(fake_device_factory: FakeDeviceFactory) -> None:
    d = fake_device_factory(EchoPhone()).adbutils_device()
    conn = d.open_transport(timeout=TIMEOUT)
    try:
        conn.send_command("exec:echo out; echo err >&2")
        conn.check_okay()
        assert conn.read_until_close() == "out\nerr\n"
    finally:
        conn.close()


class BrokenPhone(EchoPhone):
    async def run_shell(self, command: str, io: ProcessIO) -> int:
        raise RuntimeError("boom")


def test_a_phone_that_raises_exits_255(fake_device_factory: FakeDeviceFactory) -> None:
    d = fake_device_factory(BrokenPhone()).adbutils_device()
    result = d.shell2("anything", timeout=TIMEOUT, v2=True)
    assert result.returncode == 255 and "boom" in result.stderr, result


LARGE = b"".join(b"%d\n" % i for i in range(200_000))  # ~1.3 MiB, no two chunks alike


@pytest.mark.parametrize("max_payload", [1024 * 1024, 4096])
def test_large_output_v1_and_v2(fake_device_factory: FakeDeviceFactory, max_payload: int) -> None:
    d = fake_device_factory(EchoPhone(), max_payload=max_payload).adbutils_device()
    command = "seq 0 199999"
    assert d.shell(command, timeout=TIMEOUT, encoding=None) == LARGE
    result = d.shell2(command, timeout=TIMEOUT, encoding=None, v2=True)
    assert (result.stdout, result.returncode) == (LARGE, 0)


def test_host_closing_a_shell_ends_the_process(fake_device_factory: FakeDeviceFactory) -> None:
    """uiautomator2 stops its server by closing the shell stream that started it."""
    phone = EchoPhone()
    d = fake_device_factory(phone).adbutils_device()
    conn = d.shell("sleep 30", stream=True)
    wait_until(lambda: phone.commands == ["sleep 30"])
    conn.close()
    wait_until(lambda: phone.killed == ["sleep 30"])


def test_cli_shell(fake_device_factory: FakeDeviceFactory, adb_server: AdbServer) -> None:
    device = fake_device_factory(EchoPhone())
    done = adb_server.adb("-s", device.serial, "shell", "echo hi; exit 4", check=False)
    assert (done.stdout, done.returncode) == ("hi\n", 4)
    [service] = device.adbd.opened
    assert service.startswith("shell,v2,") and service.endswith(":echo hi; exit 4"), service


# --- sync -------------------------------------------------------------------------------------


def test_sync_push_stat_list_pull(fake_device_factory: FakeDeviceFactory, tmp_path: Path) -> None:
    phone = EchoPhone()
    device = fake_device_factory(phone)
    d = device.adbutils_device()
    payload = os.urandom(300 * 1024)
    assert d.sync.push(payload, "/data/local/tmp/blob", mode=0o644) == len(payload)
    assert phone.files["/data/local/tmp/blob"][0] == payload

    info = d.sync.stat("/data/local/tmp/blob")
    assert (info.mode, info.size) == (0o100644, len(payload))
    assert [f.path for f in d.sync.list("/data/local/tmp")] == [".", "..", "blob"]
    assert d.sync.read_bytes("/data/local/tmp/blob") == payload
    d.sync.pull("/data/local/tmp/blob", tmp_path / "blob")
    assert (tmp_path / "blob").read_bytes() == payload
    assert set(device.adbd.daemon.opened_counts) == {"sync"}


def test_sync_missing_file(fake_device_factory: FakeDeviceFactory) -> None:
    d = fake_device_factory(EchoPhone()).adbutils_device()
    assert not d.sync.exists("/sdcard/nope")
    with pytest.raises(adbutils.AdbError, match="No such file or directory"):
        d.sync.read_bytes("/sdcard/nope")
    assert d.sync.list("/sdcard/nope") == []


def test_cli_push_pull_use_stat_v2_and_ls_v2(
    fake_device_factory: FakeDeviceFactory, adb_server: AdbServer, tmp_path: Path
) -> None:
    phone = EchoPhone()
    device = fake_device_factory(phone)
    serial = device.serial
    (tmp_path / "up").write_bytes(b"z" * 100_000)
    adb_server.adb("-s", serial, "push", str(tmp_path / "up"), "/sdcard/new/dir/up")
    assert phone.files["/sdcard/new/dir/up"][0] == b"z" * 100_000
    adb_server.adb("-s", serial, "pull", "/sdcard/new/dir/up", str(tmp_path / "down"))
    assert (tmp_path / "down").read_bytes() == b"z" * 100_000
    adb_server.adb("-s", serial, "pull", "/sdcard/new", str(tmp_path / "tree"))
    assert (tmp_path / "tree" / "dir" / "up").read_bytes() == b"z" * 100_000
    missing = adb_server.adb("-s", serial, "pull", "/sdcard/nope", str(tmp_path / "x"), check=False)
    assert missing.returncode != 0, missing
    assert "No such file or directory" in missing.stdout + missing.stderr  # adb 29 prints it on stdout
    # The CLI uses STA2 and LIS2 because the banner offers stat_v2 and ls_v2.
    requests = {r.split()[0] for r in device.adbd.daemon.sync_requests}
    assert requests == {"STA2", "LIS2", "SEND", "RECV"}


# --- tcp --------------------------------------------------------------------------------------


def test_tcp_stream_echo_and_refusal(fake_device_factory: FakeDeviceFactory) -> None:
    device = fake_device_factory(EchoPhone())
    d = device.adbutils_device()
    with d.create_connection(adbutils.Network.TCP, ECHO_PORT) as sock:
        sock.settimeout(TIMEOUT)
        big = os.urandom(200_000)
        sock.sendall(big)
        echoed = bytearray()
        while len(echoed) < len(big):
            echoed += sock.recv(65536)
        assert echoed == big
    with pytest.raises(adbutils.AdbError):
        d.create_connection(adbutils.Network.TCP, 9008)
    assert device.adbd.daemon.opened_counts == {f"tcp:{ECHO_PORT}": 1, "tcp:9008": 1}


def test_unknown_service_is_refused(fake_device_factory: FakeDeviceFactory) -> None:
    device = fake_device_factory(EchoPhone())
    with pytest.raises(adbutils.AdbError):
        device.adbutils_device().create_connection(adbutils.Network.LOCAL_ABSTRACT, "nothing")
    assert device.adbd.opened == ["localabstract:nothing"]


# --- faults -----------------------------------------------------------------------------------


def test_drop_then_resume(fake_device_factory: FakeDeviceFactory, adb_server: AdbServer) -> None:
    device = fake_device_factory(EchoPhone())
    d = device.adbutils_device()
    assert d.shell("echo before", timeout=TIMEOUT) == "before"

    device.adbd.drop()
    started = time.monotonic()
    with pytest.raises(adbutils.AdbError):
        d.shell2("echo during", timeout=TIMEOUT, v2=True)
    assert time.monotonic() - started < 2
    assert adb_server.state(device.serial) == "offline"

    device.adbd.resume()
    device.reconnect()
    assert d.shell("echo after", timeout=TIMEOUT) == "after"
    # One more handshake at least (the server may also have redialled on its own first).
    assert device.adbd.daemon.handshakes >= 2


def test_hang_times_out_then_resume(fake_device_factory: FakeDeviceFactory, adb_server: AdbServer) -> None:
    device = fake_device_factory(EchoPhone())
    d = device.adbutils_device()
    device.adbd.hang()
    with pytest.raises(adbutils.AdbTimeout):
        d.shell2("echo hung", timeout=0.5, v2=True)
    assert adb_server.state(device.serial) == "device"  # a frozen phone still looks connected
    device.adbd.resume()
    # The same connection carries on: no reconnect needed.
    assert d.shell("echo back", timeout=TIMEOUT) == "back"
    assert device.adbd.daemon.handshakes == 1


def test_banner_features_reach_the_adb_server(fake_device_factory: FakeDeviceFactory) -> None:
    device = fake_device_factory(EchoPhone(model="Pixel 9"), features=("shell_v2", "cmd"))
    # While the session's server runs, adbutils' defaults point at it (never at 5037).
    assert adbutils.AdbClient().port == adbutils.adb.port == device.adb_port
    d = adbutils.AdbClient().device(device.serial)
    assert set(d.get_features().split(",")) == {"shell_v2", "cmd"}
    assert d.get_state() == "device"
    assert "ro.product.model=Pixel 9" in device.adbd.daemon.banner()


# --- the other adb binary ---------------------------------------------------------------------


def test_adbutils_bundled_adb_too(adb_server: AdbServer, tmp_path: Path) -> None:
    """CI uses Debian's adb 29; adbutils' wheel bundles a much newer one. Both must work."""
    bundled = Path(adbutils.__file__).parent / "binaries" / "adb"
    if not os.access(bundled, os.X_OK) or bundled.resolve() == Path(adb_server.adb_path).resolve():
        pytest.skip("no second adb binary to compare with")
    server = AdbServer(str(bundled), tmp_path)
    server.start()
    try:
        with fake_device(server, EchoPhone()) as device:
            d = device.adbutils_device()
            result = d.shell2("echo out; echo err >&2; exit 2", timeout=TIMEOUT, v2=True)
            assert (result.stdout, result.stderr, result.returncode) == ("out\n", "err\n", 2)
            d.sync.push(b"abc" * 50_000, "/sdcard/f")
            assert d.sync.read_bytes("/sdcard/f") == b"abc" * 50_000
            assert d.shell("seq 0 199999", timeout=TIMEOUT, encoding=None) == LARGE
            done = server.adb("-s", device.serial, "shell", "echo hi", check=False)
            assert (done.stdout, done.returncode) == ("hi\n", 0)
    finally:
        server.stop()
