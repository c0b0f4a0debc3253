"""NATS across principals (issue 25, items 7, 8 and 13): what a reader of the fleet's events, a
runtime, or hostile input can do to the stream, the leases and the owner's secrets through a real
nats-server, real nats-py clients and the real `serve`, `fleet` and `events` commands."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import nats
import pytest

from phoneuse_runtime.config.settings import ConfigError, Settings, load_settings
from phoneuse_runtime.nats.server_process import NatsServer
from phoneuse_runtime.nats.sink import STREAM
from phoneuse_runtime.nats.spool import SPOOL_FILE
from tests.nats import conftest as nats_fixtures
from tests.nats.conftest import RuntimeFactory, eventually
from tests.nats.test_sink import sink_of, stream_messages

# The NATS tests' fixtures: a real nats-server per test, runtimes from the composition root.
nats_srv = nats_fixtures.nats_srv
make_runtime = nats_fixtures.make_runtime

EXE = [sys.executable, "-m", "phoneuse_runtime"]
CODE = "839201"
SECRET_SMS = f"Your verification code is {CODE}"


def _cli(*args: str, data_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PHONEUSE_")}
    env["PHONEUSE_DATA_DIR"] = str(data_dir)
    env["PHONEUSE_GATEWAY_LISTEN"] = "127.0.0.1:0"
    return subprocess.run([*EXE, *args], capture_output=True, text=True, env=env, timeout=60, check=False)


# --- item 13: a credential in the url ---------------------------------------------------------


@pytest.mark.parametrize("command", ["serve", "events"])
def test_a_nats_url_with_a_credential_is_refused_without_printing_it(command: str, tmp_path: Path) -> None:
    """Someone hands `serve` or `events` nats://TOKEN@host: refused, and the token is printed nowhere."""
    secret = "s3cr3t-nats-token-4f1d9a"
    for url in (f"nats://{secret}@127.0.0.1:4222", f"nats://user:{secret}@127.0.0.1:4222"):
        done = _cli(command, "--nats-url", url, data_dir=tmp_path / "d")
        assert done.returncode == 2, done
        assert "without credentials" in done.stderr, done.stderr
        assert secret not in done.stderr and secret not in done.stdout, done
    assert not any(secret in p.read_text(errors="replace") for p in tmp_path.rglob("*") if p.is_file())


def test_a_credential_in_the_url_is_refused_at_load_without_its_value() -> None:
    """The loader's own refusal of nats://TOKEN@host names the setting, never the credential."""
    with pytest.raises(ConfigError) as refused:
        load_settings({"nats_url": "nats://hunter2hunter2@127.0.0.1:4222"})
    assert "nats_url" in str(refused.value) and "hunter2" not in str(refused.value)


# --- item 7: a bad event does not kill the reader ---------------------------------------------


async def test_an_event_with_a_bad_field_is_reported_and_skipped_by_events(nats_srv: NatsServer) -> None:
    """Whoever can publish puts an event with a non-integer timestamp in the stream: `events`
    reports it and prints the events after it, and `--since` resumes past it."""
    from phoneuse_runtime.nats.sink import ensure_stream

    nc = await nats.connect(nats_srv.url)
    js = nc.jetstream()
    await ensure_stream(js)

    def body(ts: object, n: int) -> bytes:
        return json.dumps(
            {
                "id": f"p1.r.{n}",
                "device": "p1",
                "event_type": "MESSAGE_RECEIVED",
                "source": "x",
                "timestamp": ts,
                "payload": {"body": f"m{n}"},
            }
        ).encode()

    await js.publish("phoneuse.p1.MESSAGE_RECEIVED", body(1, 1))
    bad = (await js.publish("phoneuse.p1.MESSAGE_RECEIVED", body("soon", 2))).seq
    await js.publish("phoneuse.p1.MESSAGE_RECEIVED", body([1, 2], 3))
    last = (await js.publish("phoneuse.p1.MESSAGE_RECEIVED", body(4, 4))).seq
    await nc.close()
    for since in (0, bad - 1):
        done = await asyncio.to_thread(
            subprocess.run,
            [*EXE, "events", "--nats-url", nats_srv.url, "--since", str(since), "--json"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        assert "Traceback" not in done.stderr, done.stderr
        printed = [json.loads(line) for line in done.stdout.splitlines()]
        assert printed[-1]["seq"] == last and printed[-1]["payload"] == {"body": "m4"}
        assert bad not in [p["seq"] for p in printed]
        assert f"skipped event {bad}" in done.stderr, done.stderr
        assert f"cursor: {last}" in done.stderr


# --- item 8: no secrets in NATS, and a bounded stream ------------------------------------------


async def test_a_code_in_an_sms_never_reaches_jetstream_or_the_spool(
    tmp_path: Path, nats_srv: NatsServer, make_runtime: RuntimeFactory
) -> None:
    """A bank texts the owner a code: neither the stream's files nor the spool ever hold it (MESSAGE_RECEIVED,
    NOTIFICATION_POSTED, TASK_STARTED's params), while the rest of the message is kept."""
    phone = await make_runtime(device_name="p1", nats_url=nats_srv.url)
    await phone.ok("agent", "SIM_RECEIVE_SMS", {"from": "+15550100", "body": SECRET_SMS})

    async def stored() -> bool:
        kinds = {b["event_type"] for _, _, _, b in await stream_messages(nats_srv.url)}
        return {"MESSAGE_RECEIVED", "TASK_STARTED"} <= kinds and not sink_of(phone).buffered

    await eventually(stored, what="the SMS's events in the stream")
    messages = await stream_messages(nats_srv.url)
    text = json.dumps([b for _, _, _, b in messages], ensure_ascii=False)
    assert CODE not in text
    assert "Your verification code is [code]" in text
    kinds = {b["event_type"] for _, _, _, b in messages if "[code]" in json.dumps(b)}
    assert {"MESSAGE_RECEIVED", "TASK_STARTED"} <= kinds, kinds
    files = [p for p in (tmp_path / "nats").rglob("*") if p.is_file()]
    assert files and not any(CODE.encode() in p.read_bytes() for p in files)

    # NATS away: the spool takes the events, masked too.
    await nats_srv.stop()
    await phone.ok("agent", "SIM_RECEIVE_SMS", {"from": "+15550100", "body": f"PIN: 4417 ; {SECRET_SMS}"})
    spool = phone.settings.data_dir / SPOOL_FILE

    async def spooled() -> bool:
        return spool.is_file() and b"MESSAGE_RECEIVED" in spool.read_bytes()

    await eventually(spooled, what="the SMS spooled")
    raw = spool.read_bytes()
    assert CODE.encode() not in raw and b"4417" not in raw and b"[code]" in raw


async def test_the_stream_is_bounded_in_age_and_bytes_as_the_settings_say(
    nats_srv: NatsServer, make_runtime: RuntimeFactory
) -> None:
    """A flood of events cannot grow the stream without end: it has the settings' max age and max bytes."""
    phone = await make_runtime(
        device_name="p1", nats_url=nats_srv.url, nats_stream_max_age_s=3600, nats_stream_max_bytes=4 << 20
    )
    await phone.ok("agent", "SIM_RECEIVE_SMS", {"from": "+15550100", "body": "hi"})
    await eventually(lambda: _stream_exists(nats_srv.url), what="the stream")
    nc = await nats.connect(nats_srv.url)
    try:
        info = await nc.jetstream().stream_info(STREAM)
    finally:
        await nc.close()
    assert info.config.max_age == 3600 and info.config.max_bytes == 4 << 20


async def _stream_exists(url: str) -> bool:
    return bool(await stream_messages(url))


@pytest.mark.parametrize(
    ("name", "value"),
    [("nats_stream_max_age_s", 0), ("nats_stream_max_bytes", 0), ("nats_stream_max_bytes", -5)],
)
def test_stream_bounds_that_bound_nothing_are_refused_at_load(name: str, value: int) -> None:
    """An unbounded stream is not a setting: 0 or less is refused at load, naming the setting."""
    with pytest.raises(ConfigError, match=name):
        load_settings({name: value})
    assert getattr(Settings(), name) > 0
