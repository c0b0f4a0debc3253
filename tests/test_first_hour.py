"""What a new user meets first, through the console script as a subprocess: `--version`, the
log level's help, and `doctor` checking what `serve` would check (the device, the ports)."""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from phoneuse_runtime import __version__
from tests.serving import EXE, cli_env, start_serve


def _run(data_dir: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {**cli_env(data_dir), "PHONEUSE_GRPC_LISTEN": "127.0.0.1:0", **env}
    return subprocess.run([*EXE, *args], capture_output=True, text=True, env=environ, timeout=60)


@pytest.fixture
def taken() -> Iterator[str]:
    """An address another program listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield f"127.0.0.1:{sock.getsockname()[1]}"


def test_version(tmp_path: Path) -> None:
    done = _run(tmp_path, "--version")
    assert done.returncode == 0, done
    assert done.stdout.strip() == f"phoneuse-runtime {__version__}"


def test_log_level_has_help_and_refuses_a_typo(tmp_path: Path) -> None:
    shown = _run(tmp_path, "serve", "--help")
    assert "--log-level {DEBUG,INFO,WARNING,ERROR}" in shown.stdout
    assert "what the log (stderr) shows" in shown.stdout
    typo = _run(tmp_path, "serve", "--log-level", "LOUD")
    assert typo.returncode == 2 and "invalid choice: 'LOUD'" in typo.stderr, typo


def test_doctor_refuses_an_unknown_device_as_serve_does(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    checked = _run(data_dir, "doctor", "--device", "bogus")
    served = _run(data_dir, "serve", "--device", "bogus")
    for done in (checked, served):
        assert done.returncode == 2, done
        assert "unknown device 'bogus'; use sim, adb[:SERIAL] or termux" in done.stderr
        assert "all needed checks passed" not in done.stdout
    assert not (data_dir / "token").exists()  # serve refused before it made anything


@pytest.mark.parametrize("device", ["sim:x", "termux:1", "adbx"])
def test_a_kind_with_a_suffix_it_does_not_take_is_unknown(tmp_path: Path, device: str) -> None:
    done = _run(tmp_path / "data", "doctor", "--device", device)
    assert done.returncode == 2 and f"unknown device '{device}'" in done.stderr, done


def test_doctor_and_serve_say_which_flag_frees_a_taken_grpc_port(tmp_path: Path, taken: str) -> None:
    data_dir = tmp_path / "data"
    checked = _run(data_dir, "doctor", PHONEUSE_GRPC_LISTEN=taken, PHONEUSE_GATEWAY_LISTEN="127.0.0.1:0")
    assert checked.returncode == 1, checked.stdout
    assert f"listen (grpc): cannot listen on {taken}: {taken} is in use by another program" in checked.stdout
    assert "fix: serve --grpc-listen HOST:PORT" in checked.stdout
    served = _run(data_dir, "serve", "--grpc-listen", taken)
    assert served.returncode == 2, served
    last = served.stderr.strip().splitlines()[-1]
    assert last == (
        f"phoneuse-runtime: cannot listen on {taken}: {taken} is in use by another program; "
        "choose another with `serve --grpc-listen HOST:PORT` (grpc_listen)"
    )
    assert "add_port" not in served.stderr  # no line of gRPC core's own


def test_doctor_and_serve_say_which_flag_frees_a_taken_gateway_port(tmp_path: Path, taken: str) -> None:
    data_dir = tmp_path / "data"
    checked = _run(data_dir, "doctor", PHONEUSE_GATEWAY_LISTEN=taken)
    assert checked.returncode == 1, checked
    assert f"listen (gateway): cannot listen on {taken}" in checked.stdout
    assert "fix: serve --gateway-listen HOST:PORT, or --no-gateway" in checked.stdout
    served = _run(data_dir, "serve", PHONEUSE_GATEWAY_LISTEN=taken)
    assert served.returncode == 2, served
    assert "--gateway-listen HOST:PORT` (gateway_listen), or --no-gateway" in served.stderr
    free = _run(data_dir, "doctor", PHONEUSE_GATEWAY_LISTEN=taken, PHONEUSE_GATEWAY="false")
    assert free.returncode == 0, free.stdout  # no gateway, no port of its own to check
    assert "listen (gateway)" not in free.stdout


def test_doctor_beside_a_running_server_says_it_serves(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    s = start_serve(data_dir)
    try:
        done = _run(data_dir, "doctor")
        assert done.returncode == 0, done.stdout
        assert "listen: a server already serves this data dir (unix:" in done.stdout
    finally:
        s.proc.kill()
        s.proc.wait()
