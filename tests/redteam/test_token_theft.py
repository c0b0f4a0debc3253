"""Token theft by port squatting, tried through the real `serve` and client commands.

Every app on a phone shares the loopback: whoever listens on a port the client commands call
gets `Bearer <token>`. A squatter here listens where a stale or forged record points, answers
like an HTTP/2 server far enough for a gRPC client to send its headers, and keeps every byte.
"""

from __future__ import annotations

import json
import os
import selectors
import socket
import stat
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.serving import EXE, ServeProcess, cli_env, run, served, start_serve

__all__ = ["served"]  # the fixture, used by name

# An empty SETTINGS frame, then the acknowledgement of the client's: enough for a gRPC client
# to take the connection as ready and send the call's headers, token included.
SETTINGS = b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
SETTINGS_ACK = b"\x00\x00\x00\x04\x01\x00\x00\x00\x00"


class Squatter:
    """A TCP listener that records what it is sent, on `port` (0: a free one)."""

    def __init__(self, port: int = 0) -> None:
        self._listener = socket.socket()
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", port))
        self._listener.listen()
        self.address = f"127.0.0.1:{self._listener.getsockname()[1]}"
        self.connections = 0
        self.received = bytearray()
        self._wake_r, self._wake_w = socket.socketpair()
        self._thread = threading.Thread(target=self._run)
        self._thread.start()

    def _run(self) -> None:
        selector = selectors.DefaultSelector()
        selector.register(self._listener, selectors.EVENT_READ)
        selector.register(self._wake_r, selectors.EVENT_READ)
        acked: set[socket.socket] = set()
        while True:
            for key, _ in selector.select():
                if key.fileobj is self._wake_r:
                    selector.close()
                    return
                if key.fileobj is self._listener:
                    conn, _ = self._listener.accept()
                    self.connections += 1
                    conn.sendall(SETTINGS)
                    selector.register(conn, selectors.EVENT_READ)
                    continue
                conn = key.fileobj  # type: ignore[assignment]
                data = conn.recv(65536)
                if not data:
                    selector.unregister(conn)
                    conn.close()
                    continue
                self.received += data
                if conn not in acked:
                    acked.add(conn)
                    conn.sendall(SETTINGS_ACK)

    def stop(self) -> None:
        """Stops listening. Call it after the client has exited: a connection the client made
        is then accepted or waiting in the backlog, which is counted too."""
        self._wake_w.send(b"x")
        self._thread.join()
        self._listener.setblocking(False)
        try:
            while True:
                conn, _ = self._listener.accept()
                self.connections += 1
                conn.close()
        except BlockingIOError:
            pass
        for s in (self._listener, self._wake_r, self._wake_w):
            s.close()


@pytest.fixture
def squatters() -> Iterator[list[Squatter]]:
    made: list[Squatter] = []
    yield made
    for squatter in made:
        if squatter._thread.is_alive():
            squatter.stop()


def _token(data_dir: Path) -> str:
    return (data_dir / "token").read_text().strip()


def _assert_nothing_reached(squatter: Squatter, token: str) -> None:
    squatter.stop()
    assert token.encode() not in squatter.received
    assert (squatter.connections, bytes(squatter.received)) == (0, b"")


def test_exec_goes_over_the_private_socket_and_never_to_the_recorded_tcp_port(
    served: ServeProcess, squatters: list[Squatter], tmp_path: Path
) -> None:
    # Whatever the record says about TCP, a client that has the socket sends the token there only.
    """Another app squats the TCP port recorded for the server, to take the token the client sends."""
    squatter = Squatter()
    squatters.append(squatter)
    record_file = served.data_dir / "server.json"
    record = json.loads(record_file.read_text())
    record_file.write_text(json.dumps({**record, "address": squatter.address}))
    ok = run(served, "exec", "DUMP_UI", "--timeout-ms", "2000")
    _assert_nothing_reached(squatter, _token(served.data_dir))
    assert ok.returncode == 0, ok.stderr
    sock = served.data_dir / "server.sock"
    assert (record["pid"], record["unix"]) == (served.proc.pid, f"unix:{sock}")
    assert stat.S_ISSOCK(sock.lstat().st_mode)
    assert stat.S_IMODE(sock.lstat().st_mode) == 0o600
    assert stat.S_IMODE(served.data_dir.stat().st_mode) == 0o700
    # A socket named by the user is honoured like any other address.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PHONEUSE_")}
    env.update(PHONEUSE_TOKEN=_token(served.data_dir), PHONEUSE_DATA_DIR=str(tmp_path / "empty"))
    named = subprocess.run(
        [*EXE, "exec", "DUMP_UI", "--server", f"unix:{sock}"], capture_output=True, text=True, env=env
    )
    assert named.returncode == 0, named.stderr


def test_after_kill_9_the_stale_record_gets_no_token_and_the_next_serve_starts(
    tmp_path: Path, squatters: list[Squatter]
) -> None:
    """Another app squats the port of a stale record left by kill -9."""
    data_dir = tmp_path / "data"
    first = start_serve(data_dir)
    first.proc.kill()
    first.proc.wait()
    # Another app takes the dead server's port, and waits for a client.
    squatter = Squatter(int(first.address.rsplit(":", 1)[1]))
    squatters.append(squatter)
    refusals = [run(first, "exec", "DUMP_UI", "--timeout-ms", "2000")]
    _assert_nothing_reached(squatter, _token(data_dir))
    refusals += [run(first, "query", "CONTACTS"), run(first, "subscribe")]
    for refused in refusals:
        assert refused.returncode == 2, refused.stderr
        assert f"(pid {first.proc.pid}) is gone" in refused.stderr
    sock = data_dir / "server.sock"
    assert sock.exists()  # the killed server's, which nothing answers on now
    # The socket file left behind does not stop the next server, which removes it and serves.
    second = start_serve(data_dir)
    try:
        head: str = second.stderr_head
        assert f"removed {sock}, a socket left by a server that did not stop cleanly" in head
        ok = run(second, "exec", "DUMP_UI")
        assert ok.returncode == 0, ok.stderr
    finally:
        second.proc.kill()
        second.proc.wait()


def test_a_record_whose_process_is_not_the_server_is_refused(
    tmp_path: Path, squatters: list[Squatter]
) -> None:
    """Another app forges the endpoint record with a pid that is not the server's.

    The recorded pid is alive, but as a zombie, or as a later process given the same pid."""
    data_dir = tmp_path / "data"
    data_dir.mkdir(mode=0o700)
    (data_dir / "token").write_text("a-token-worth-stealing-" + "x" * 20)
    squatter = Squatter()
    squatters.append(squatter)
    zombie = subprocess.Popen([*EXE, "--help"], stdout=subprocess.DEVNULL)
    os.waitid(os.P_PID, zombie.pid, os.WEXITED | os.WNOWAIT)  # it has exited; nobody reaped it
    records = [
        {"pid": zombie.pid, "address": squatter.address, "unix": None},
        {"pid": os.getpid(), "started": 1, "address": squatter.address, "unix": None},
    ]
    refusals = []
    try:
        for record in records:
            (data_dir / "server.json").write_text(json.dumps(record))
            command = [*EXE, "exec", "DUMP_UI", "--timeout-ms", "2000"]
            refusals.append(subprocess.run(command, capture_output=True, text=True, env=cli_env(data_dir)))
    finally:
        zombie.wait()
    _assert_nothing_reached(squatter, _token(data_dir))
    for record, refused in zip(records, refusals, strict=True):
        assert refused.returncode == 2, refused.stderr
        assert f"(pid {record['pid']}) is gone" in refused.stderr


def test_a_second_serve_for_the_same_data_dir_is_refused_and_leaves_the_first_its_socket(
    served: ServeProcess,
) -> None:
    """A second serve for the same data dir takes the first one's socket."""
    second = subprocess.run(
        [*EXE, "serve", "--grpc-listen", "127.0.0.1:0"],
        capture_output=True,
        text=True,
        env=cli_env(served.data_dir),
        timeout=30,
    )
    assert second.returncode == 2, second
    assert f"another server is already serving for {served.data_dir}" in second.stderr
    assert "Traceback" not in second.stderr
    ok = run(served, "exec", "DUMP_UI")
    assert ok.returncode == 0, ok.stderr


def test_serve_warns_of_files_others_can_read_and_of_a_token_on_the_command_line(tmp_path: Path) -> None:
    """Another user reads a token given on the command line, or a data dir others can read."""
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    data_dir.chmod(0o755)
    stored = "stored-token-" + "s" * 30
    (data_dir / "token").write_text(stored + "\n")
    (data_dir / "token").chmod(0o644)
    flagged = "flagged-token-" + "f" * 30
    s = start_serve(data_dir, "--token", flagged)
    try:
        head: str = s.stderr_head
        assert f"{data_dir} is open to other users (mode 755)" in head
        assert f"{data_dir / 'token'} is open to other users (mode 644)" in head
        assert "`ps` shows it" in head and "PHONEUSE_TOKEN" in head
        client = run(s, "exec", "DUMP_UI", "--token", flagged)
        assert client.returncode == 0, client.stderr
        assert "`ps` shows it" in client.stderr
        for text in (head, client.stderr):
            assert stored not in text and flagged not in text
    finally:
        s.proc.kill()
        s.proc.wait()
