"""NATS across principals (issue 25, items 7, 8 and 13): what a reader of the fleet's events, a
runtime, or hostile input can do to the stream, the leases and the owner's secrets through a real
nats-server, real nats-py clients and the real `serve`, `fleet` and `events` commands."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Awaitable, Iterator
from pathlib import Path
from typing import Any

import nats
import pytest

from phoneuse_runtime.config.settings import ConfigError, Settings, load_settings
from phoneuse_runtime.nats.server_process import NatsServer, available
from phoneuse_runtime.nats.sink import STREAM
from phoneuse_runtime.nats.spool import SPOOL_FILE
from phoneuse_runtime.rpc import protocol_pb2_grpc as pb_grpc
from tests.fleet.running import RunningFleet, execute, fleet, needs, new_token, stub
from tests.nats import conftest as nats_fixtures
from tests.nats.conftest import RuntimeFactory, eventually
from tests.nats.test_sink import sink_of, stream_messages

# The NATS tests' fixtures: a real nats-server per test, runtimes from the composition root.
nats_srv = nats_fixtures.nats_srv
make_runtime = nats_fixtures.make_runtime

# Skipped, saying so, without nats-server; CI (PHONEUSE_REQUIRE_NATS=1) runs them and fails.
with_nats_server = pytest.mark.skipif(
    not available() and os.environ.get("PHONEUSE_REQUIRE_NATS") != "1",
    reason="nats-server not installed (apt-get install nats-server)",
)

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


@with_nats_server
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


@with_nats_server
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


@with_nats_server
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


# --- item 7: NATS is not one key to everything -------------------------------------------------


@pytest.fixture(scope="module")
def farm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningFleet]:
    """A real fleet: two simulated phones, its own nats-server, nginx as the door."""
    data_dir = tmp_path_factory.mktemp("fleet") / "fleet"
    with fleet(data_dir, "--sim", "2", ready=2) as running:
        yield running


@pytest.fixture(scope="module")
def principals(farm: RunningFleet) -> tuple[str, str]:
    """The fleet tokens of alice and bob."""
    return new_token(farm.data_dir, "alice"), new_token(farm.data_dir, "bob")


def _login(farm: RunningFleet, user: str) -> dict[str, str]:
    """nats-py's options to connect as one of the fleet's NATS users, from its password file."""
    password = (farm.data_dir / "nats-users" / user).read_text().strip()
    return {"user": user, "password": password, "inbox_prefix": f"_INBOX_{user}"}


async def _connect(farm: RunningFleet, user: str, errors: list[str]) -> Any:
    async def error_cb(exc: Exception) -> None:
        errors.append(str(exc))

    return await nats.connect(
        farm.record()["nats_url"], error_cb=error_cb, allow_reconnect=False, **_login(farm, user)
    )


async def _refused(action: Awaitable[object]) -> None:
    """`action` does not get through: the server refuses it (its answer never comes)."""
    from nats.errors import Error as NatsError

    with pytest.raises((NatsError, asyncio.TimeoutError)):
        await asyncio.wait_for(action, timeout=2.0)


async def _kv_writes_refused(js: Any) -> None:
    """sim-1's lease key deleted, purged, overwritten (as nats-py's KeyValue writes it): refused."""
    subject = "$KV.phoneuse_leases.sim-1"
    taken = json.dumps({"holder": "intruder", "expires_at_ms": 2**53, "acquired_at_ms": 0}).encode()
    await _refused(js.publish(subject, b"", headers={"KV-Operation": "DEL"}))
    await _refused(js.publish(subject, b"", headers={"KV-Operation": "PURGE", "Nats-Rollup": "sub"}))
    await _refused(js.publish(subject, taken))


@needs(nats=True)
def test_the_events_reader_cannot_take_a_lease_forge_events_or_purge_the_stream(
    farm: RunningFleet, principals: tuple[str, str]
) -> None:
    """An event reader holding the credentials docs/fleet.md hands out takes sim-1's lease from alice,
    forges MESSAGE_RECEIVED and LEASE_RELEASED, purges and deletes the stream: none of it goes through."""
    from nats.errors import Error as NatsError
    from nats.js.api import ConsumerConfig

    alice, bob = principals
    channel, door = stub(farm.door)
    assert execute(door, "LEASE_ACQUIRE", {"ttl_s": "300"}, token=alice, device="sim-1").success
    assert execute(door, "SET_CLIPBOARD", {"text": "before"}, token=alice, device="sim-1").success
    record = farm.record()
    reader = record["nats_reader"]
    assert (
        reader["user"] == "reader"
        and Path(reader["password_file"]) == farm.data_dir / "nats-users" / "reader"
    )
    mark = uuid.uuid4().hex

    async def attack() -> list[str]:
        errors: list[str] = []
        nc = await _connect(farm, "reader", errors)
        js = nc.jetstream(timeout=2.0)
        try:
            await _refused(js.key_value("phoneuse_leases"))
            await _kv_writes_refused(js)
            forged = {"device": "sim-1", "event_type": "MESSAGE_RECEIVED", "payload": {"body": mark}}
            await _refused(js.publish("phoneuse.sim-1.MESSAGE_RECEIVED", json.dumps(forged).encode()))
            await _refused(js.publish("phoneuse.sim-1.LEASE_RELEASED", json.dumps(forged).encode()))
            await _refused(js.purge_stream(STREAM))
            await _refused(js.delete_stream(STREAM))
            await _refused(js.delete_key_value("phoneuse_leases"))
            # A consumer that delivers the stream into sim-1's lease key: JetStream does not
            # store a consumer's deliveries (the lease stays alice's, checked below).
            into_kv = ConsumerConfig(deliver_subject="$KV.phoneuse_leases.sim-1")
            with contextlib.suppress(NatsError, asyncio.TimeoutError):
                await js.add_consumer(STREAM, into_kv)
            # What it is for still works: reading the events.
            sub = await js.subscribe("phoneuse.sim-1.>", stream=STREAM, ordered_consumer=True)
            first = await sub.next_msg(timeout=10)
            assert first.subject.startswith("phoneuse.sim-1.")
            await sub.unsubscribe()
        finally:
            await nc.close()
        return errors

    errors = asyncio.run(attack())
    assert any("permissions violation" in e.lower() for e in errors), errors
    _nothing_of_alices_was_touched(farm, door, alice, bob, mark)
    channel.close()


@needs(nats=True)
def test_one_phones_runtime_cannot_write_another_phones_lease_or_subjects(
    farm: RunningFleet, principals: tuple[str, str]
) -> None:
    """A runtime taken over (sim-2's NATS user) releases sim-1's lease and speaks as sim-1: refused."""
    alice, bob = principals
    channel, door = stub(farm.door)
    execute(door, "LEASE_ACQUIRE", {"ttl_s": "300"}, token=alice, device="sim-1")
    mark = uuid.uuid4().hex

    async def attack() -> list[str]:
        errors: list[str] = []
        nc = await _connect(farm, "runtime-sim-2", errors)
        js = nc.jetstream(timeout=2.0)
        try:
            await _kv_writes_refused(js)
            forged = {"device": "sim-1", "event_type": "MESSAGE_RECEIVED", "payload": {"body": mark}}
            await _refused(js.publish("phoneuse.sim-1.MESSAGE_RECEIVED", json.dumps(forged).encode()))
            await _refused(js.purge_stream(STREAM))
            sub = await nc.subscribe("_INBOX_reader.>")  # another's replies
            await nc.flush()
            await _refused(sub.next_msg(timeout=1.0))
        finally:
            await nc.close()
        return errors

    errors = asyncio.run(attack())
    assert any("permissions violation" in e.lower() for e in errors), errors
    _nothing_of_alices_was_touched(farm, door, alice, bob, mark)
    # sim-2's own runtime still publishes and keeps its own lease.
    assert execute(door, "LEASE_ACQUIRE", {"ttl_s": "60"}, token=bob, device="sim-2").success
    assert execute(door, "LEASE_RELEASE", {}, token=bob, device="sim-2").success
    channel.close()


def _nothing_of_alices_was_touched(
    farm: RunningFleet, door: pb_grpc.AndroidRuntimeStub, alice: str, bob: str, mark: str
) -> None:
    """alice still holds sim-1 (bob gets CONFLICT), the stream keeps its events and no forged one."""
    refused = execute(door, "SET_CLIPBOARD", {"text": "bob's"}, token=bob, device="sim-1")
    assert not refused.success and "held by 'alice'" in refused.error, refused.error

    async def stream_state() -> tuple[int, int, list[bytes], bytes]:
        nc = await nats.connect(farm.record()["nats_url"], **_login(farm, "fleet"))
        try:
            js = nc.jetstream()
            info = await js.stream_info(STREAM)
            kv = await js.key_value("phoneuse_leases")
            lease = (await kv.get("sim-1")).value or b""
            datas = [
                (await js.get_msg(STREAM, seq)).data or b""
                for seq in range(info.state.first_seq, info.state.last_seq + 1)
            ]
            return info.state.first_seq, info.state.messages, datas, lease
        finally:
            await nc.close()

    first, count, datas, lease = asyncio.run(stream_state())
    assert first == 1 and count > 0, "the stream was purged"
    assert not any(mark.encode() in d for d in datas), "a forged event is in the stream"
    assert json.loads(lease)["holder"] == "alice"
    assert execute(door, "SET_CLIPBOARD", {"text": "alice's"}, token=alice, device="sim-1").success
