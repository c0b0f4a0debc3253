"""`phoneuse-runtime serve` serves the gateway beside gRPC, and `pair` works on its data dir
while it runs."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from websockets.asyncio.client import connect

from .conftest import GatewayFactory, validate_server_frame

EXE = [sys.executable, "-m", "phoneuse_runtime"]


def _env(data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PHONEUSE_")}
    env["PHONEUSE_DATA_DIR"] = str(data_dir)
    return env


@pytest.fixture
def serve_lines(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], list[str]]]:
    proc = subprocess.Popen(
        [*EXE, "serve", "--grpc-listen", "127.0.0.1:0", "--gateway-listen", "127.0.0.1:0"],
        stderr=subprocess.PIPE,
        text=True,
        env=_env(tmp_path / "data"),
    )
    assert proc.stderr is not None
    lines = []
    for line in proc.stderr:
        lines.append(line)
        if "serving the Iris gateway on" in line:
            break
    else:
        raise AssertionError("no gateway:\n" + "".join(lines))
    yield proc, lines
    proc.terminate()
    proc.wait(timeout=30)


async def test_serve_runs_the_gateway_and_pair_new_works_beside_it(
    tmp_path: Path, serve_lines: tuple[subprocess.Popen[str], list[str]]
) -> None:
    _, lines = serve_lines
    found = re.search(r"serving the Iris gateway on (ws://127\.0\.0\.1:\d+/ws)", lines[-1])
    assert found
    issued = subprocess.run(
        [*EXE, "pair", "new", "--name", "phone", "--json"],
        capture_output=True,
        text=True,
        env=_env(tmp_path / "data"),
        timeout=60,
        check=True,
    )
    token = json.loads(issued.stdout)["token"]
    assert token not in "".join(lines)
    async with connect(found.group(1)) as ws:
        await ws.send(json.dumps({"v": 1, "id": 1, "type": "hello", "payload": {"token": token}}))
        ack = json.loads(await ws.recv())
        validate_server_frame(ack)
        assert ack["type"] == "hello.ack"


def test_no_gateway_turns_it_off(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [*EXE, "serve", "--grpc-listen", "127.0.0.1:0", "--no-gateway"],
        stderr=subprocess.PIPE,
        text=True,
        env=_env(tmp_path / "data"),
    )
    assert proc.stderr is not None
    try:
        for line in proc.stderr:
            assert "Iris gateway" not in line
            if "serving AndroidRuntime on" in line:
                break
        proc.terminate()
        rest = proc.communicate(timeout=30)[1]
        assert "Iris gateway" not in rest
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_gateway_settings_come_from_flags_env_and_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from phoneuse_runtime.config.settings import load_settings

    (tmp_path / "config.toml").write_text(
        'gateway_listen = "127.0.0.1:9001"\n'
        'ntfy_url = "http://ntfy.local"\n'
        "gateway_max_frames_per_second = 7\n"
    )
    monkeypatch.setenv("PHONEUSE_GATEWAY", "false")
    settings = load_settings({"data_dir": tmp_path})
    assert (settings.gateway_listen, settings.ntfy_url, settings.gateway) == (
        "127.0.0.1:9001",
        "http://ntfy.local",
        False,
    )
    assert settings.gateway_max_frames_per_second == 7
    flagged = load_settings({"data_dir": tmp_path, "gateway_listen": "127.0.0.1:9002", "gateway": True})
    assert (flagged.gateway_listen, flagged.gateway) == ("127.0.0.1:9002", True)


def test_a_zero_limit_is_a_config_error_at_load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from phoneuse_runtime.config.settings import ConfigError, load_settings

    monkeypatch.setenv("PHONEUSE_GATEWAY_MAX_FRAME_BYTES", "0")
    with pytest.raises(ConfigError, match=r"gateway_max_frame_bytes \(environment\): must be greater than 0"):
        load_settings({"data_dir": tmp_path})


async def test_a_gateway_port_in_use_stops_the_start_with_a_clear_error(
    make_gateway: GatewayFactory, tmp_path: Path
) -> None:
    first = await make_gateway()
    with pytest.raises(OSError, match=f"cannot listen on 127.0.0.1:{first.gateway.port}"):
        await make_gateway(gateway_listen=f"127.0.0.1:{first.gateway.port}")
    assert (await (await first.connect()).request("ping"))["type"] == "pong"
