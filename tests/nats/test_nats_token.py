"""A NATS server that wants a token: nats-server started with it (from a private config file,
never its command line), the runtime's sink and leases and the `events` command presenting it
from a file, and what a missing or bad token file says."""

from __future__ import annotations

import asyncio
import os
import secrets
import subprocess
import sys
from pathlib import Path

import nats
import psutil
import pytest

from phoneuse_runtime.config.settings import ConfigError, Settings
from phoneuse_runtime.nats.components import nats_components
from phoneuse_runtime.nats.server_process import NatsServer

from .conftest import RuntimeFactory, eventually
from .test_sink import sink_of, sms

EXE = [sys.executable, "-m", "phoneuse_runtime"]


@pytest.fixture
def token_file(tmp_path: Path) -> Path:
    path = tmp_path / "nats-token"
    path.write_text(secrets.token_urlsafe(32) + "\n")
    path.chmod(0o600)
    return path


async def test_a_server_with_a_token_refuses_clients_without_it(tmp_path: Path, token_file: Path) -> None:
    server = NatsServer(tmp_path / "nats", token_file=token_file)
    url = await server.start()
    try:
        token = token_file.read_text().strip()
        assert server.pid is not None
        assert token not in " ".join(psutil.Process(server.pid).cmdline())  # not where ps shows it
        with pytest.raises(Exception, match=r"[Aa]uthorization"):
            await nats.connect(url, allow_reconnect=False, connect_timeout=2)
        nc = await nats.connect(url, token=token)
        assert nc.is_connected
        await nc.close()
    finally:
        await server.stop()


async def test_the_runtime_and_the_events_command_present_the_token_from_its_file(
    tmp_path: Path, token_file: Path, make_runtime: RuntimeFactory
) -> None:
    server = NatsServer(tmp_path / "nats", token_file=token_file)
    url = await server.start()
    try:
        phone = await make_runtime(device_name="p1", nats_url=url, nats_token_file=str(token_file))
        await sms(phone, 2)

        async def acked() -> bool:
            return sink_of(phone).buffered == 0 and sink_of(phone).acked > 0

        await eventually(acked, what="the sink's events acked through the token")
        assert (await phone.ok("alice", "LEASE_ACQUIRE", {"ttl_s": "30"}))["via"] == "nats-kv"
        env = {k: v for k, v in os.environ.items() if not k.startswith("PHONEUSE_")}

        def events(*extra: str) -> subprocess.CompletedProcess[str]:
            cmd = [*EXE, "events", "--nats-url", url, "--json", *extra]
            return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=60)

        ok = await asyncio.to_thread(events, "--nats-token-file", str(token_file))
        assert ok.returncode == 0 and '"MESSAGE_RECEIVED"' in ok.stdout, ok.stderr
        refused = await asyncio.to_thread(events)
        for _ in range(4):
            assert refused.returncode == 2 and "cannot reach NATS" in refused.stderr, refused.stderr
            if "Connection reset" not in refused.stderr:
                break
            # nats-server closes as it refuses, with the client's PING unread: the reset may
            # reach the client before its -ERR does (a loaded machine). Refused all the same.
            refused = await asyncio.to_thread(events)
        assert "uthorization" in refused.stderr, refused.stderr
        assert token_file.read_text().strip() not in refused.stderr + ok.stderr
    finally:
        await server.stop()


@pytest.mark.parametrize(
    ("content", "says"),
    [(None, "cannot be read"), ("short", "not a token"), ("has spaces in it, long enough", "not a token")],
)
def test_a_missing_or_bad_token_file_is_a_config_error_that_never_shows_it(
    tmp_path: Path, content: str | None, says: str
) -> None:
    path = tmp_path / "token"
    if content is not None:
        path.write_text(content)
    settings = Settings(data_dir=tmp_path, nats_url="nats://127.0.0.1:4222", nats_token_file=str(path))
    with pytest.raises(ConfigError, match=says) as caught:
        nats_components(settings.nats, data_dir=tmp_path)
    assert content is None or content not in str(caught.value)
