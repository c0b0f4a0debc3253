"""The client commands and the server's endpoint record, beside the token-theft attacks
(tests/redteam/test_token_theft.py): after a clean stop the client says no server runs, and a data
dir too long for a socket gets one in a private temp dir."""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import tempfile
from pathlib import Path

import pytest

from tests.redteam.test_token_theft import _token
from tests.serving import ServeProcess, run, served, start_serve

__all__ = ["served"]  # the fixture, used by name


def test_after_a_clean_stop_the_client_says_no_server_runs(served: ServeProcess) -> None:
    sock = served.data_dir / "server.sock"
    served.proc.send_signal(signal.SIGTERM)
    assert served.proc.wait(timeout=30) == 0
    assert not sock.exists()
    assert not (served.data_dir / "server.json").exists()
    refused = run(served, "exec", "DUMP_UI")
    assert refused.returncode == 2, refused
    assert refused.stdout == ""
    assert f"no server is running for {served.data_dir}" in refused.stderr
    assert "phoneuse-runtime serve" in refused.stderr
    assert _token(served.data_dir) not in refused.stderr


def test_a_data_dir_too_long_for_a_socket_gets_one_in_a_private_temp_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A TMPDIR short enough for a socket whatever tmp_path is (pytest-xdist's are longer).
    short_tmp = Path(tempfile.mkdtemp(prefix="pu-"))
    monkeypatch.setenv("TMPDIR", str(short_tmp))
    data_dir = tmp_path / ("long-" * 24)
    assert len(str(data_dir / "server.sock")) > 107
    s = start_serve(data_dir)
    try:
        head: str = s.stderr_head
        unix = json.loads((data_dir / "server.json").read_text())["unix"]
        assert unix, head
        sock = Path(unix.removeprefix("unix:"))
        assert sock.parent == short_tmp / f"phoneuse-runtime-{os.geteuid()}"
        assert f"is too long for a Unix socket (107 bytes at most): the socket is {sock} instead" in head
        assert stat.S_IMODE(sock.parent.stat().st_mode) == 0o700
        assert stat.S_IMODE(sock.lstat().st_mode) == 0o600
        ok = run(s, "exec", "DUMP_UI")
        assert ok.returncode == 0, ok.stderr
        s.proc.send_signal(signal.SIGTERM)
        assert s.proc.wait(timeout=30) == 0
        assert not sock.exists()
    finally:
        if s.proc.poll() is None:
            s.proc.kill()
            s.proc.wait()
        shutil.rmtree(short_tmp, ignore_errors=True)
