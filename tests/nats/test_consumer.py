"""The fleet's events from JetStream: every phone's, in order per phone, from a cursor, across
a nats-server restart; the library function and the `events` command, against real runtimes
and a real nats-server."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import nats
import pytest

from phoneuse_runtime.nats.consumer import StreamEvent, read_events
from phoneuse_runtime.nats.server_process import NatsServer

from .conftest import Runtime, RuntimeFactory, eventually
from .test_sink import sink_of, sms

EXE = [sys.executable, "-m", "phoneuse_runtime"]


async def read_all(url: str, **options: object) -> list[StreamEvent]:
    nc = await nats.connect(url)
    try:
        return [event async for event in read_events(nc.jetstream(), **options)]  # type: ignore[arg-type]
    finally:
        await nc.close()


async def settled(*runtimes: Runtime) -> None:
    async def acked() -> bool:
        return all(sink_of(r).buffered == 0 for r in runtimes)

    await eventually(acked, what="every runtime's events acked")


def bodies(events: list[StreamEvent], device: str) -> list[str]:
    return [e.payload["body"] for e in events if e.event_type == "MESSAGE_RECEIVED" and e.device == device]


async def test_every_phones_events_in_order_per_phone_and_one_phones_alone(
    nats_srv: NatsServer, make_runtime: RuntimeFactory
) -> None:
    p1 = await make_runtime(device_name="p1", nats_url=nats_srv.url)
    p2 = await make_runtime(device_name="p2", nats_url=nats_srv.url)
    await asyncio.gather(sms(p1, 6), sms(p2, 6))
    await settled(p1, p2)
    events = await read_all(nats_srv.url)
    assert [e.seq for e in events] == sorted(e.seq for e in events) and len({e.seq for e in events}) == len(
        events
    )
    assert bodies(events, "p1") == bodies(events, "p2") == [f"m{i}" for i in range(6)]
    for device in ("p1", "p2"):
        ns = [int(e.id.rsplit(".", 1)[1]) for e in events if e.device == device]
        assert ns == list(range(1, len(ns) + 1))  # each phone's own order, nothing missing
    only = await read_all(nats_srv.url, device="p2")
    assert only and {e.device for e in only} == {"p2"}
    assert [e.seq for e in only] == [e.seq for e in events if e.device == "p2"]


async def test_a_reader_resumes_from_its_cursor(nats_srv: NatsServer, make_runtime: RuntimeFactory) -> None:
    phone = await make_runtime(device_name="p1", nats_url=nats_srv.url)
    await sms(phone, 3)
    await settled(phone)
    first = await read_all(nats_srv.url)
    cursor = first[-1].seq
    assert await read_all(nats_srv.url, since=cursor) == []  # nothing new: returns at once
    await sms(phone, 2, start=3)
    await settled(phone)
    rest = await read_all(nats_srv.url, since=cursor)
    assert rest[0].seq == cursor + 1
    assert bodies(rest, "p1") == ["m3", "m4"]
    assert [e.seq for e in first + rest] == [e.seq for e in await read_all(nats_srv.url)]


async def test_a_follower_keeps_its_place_across_a_nats_restart(
    nats_srv: NatsServer, make_runtime: RuntimeFactory
) -> None:
    phone = await make_runtime(device_name="p1", nats_url=nats_srv.url)
    seen: list[StreamEvent] = []
    nc = await nats.connect(nats_srv.url, max_reconnect_attempts=-1, reconnect_time_wait=0.2)

    async def follow() -> None:
        async for event in read_events(nc.jetstream(), device="p1", follow=True):
            seen.append(event)

    await sms(phone, 2)
    await settled(phone)
    follower = asyncio.create_task(follow())
    try:

        async def has(n: int) -> bool:
            return len(bodies(seen, "p1")) >= n

        await eventually(lambda: has(2), what="the follower reads the first events")
        await nats_srv.stop()
        await sms(phone, 2, start=2)  # while NATS is down: buffered by the sink
        await nats_srv.start()
        await sms(phone, 2, start=4)
        await eventually(lambda: has(6), timeout_s=30, what="the follower reads the events after the restart")
        assert bodies(seen, "p1") == [f"m{i}" for i in range(6)]
        seqs = [e.seq for e in seen]
        assert seqs == sorted(set(seqs))  # none twice, in order
    finally:
        follower.cancel()
        await asyncio.gather(follower, return_exceptions=True)
        await nc.close()


def _events(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PHONEUSE_")}
    return subprocess.run([*EXE, "events", *args], capture_output=True, text=True, env=env, timeout=60)


async def test_the_events_command_prints_seq_device_type_and_payload(
    nats_srv: NatsServer, make_runtime: RuntimeFactory
) -> None:
    phone = await make_runtime(device_name="p1", nats_url=nats_srv.url)
    await sms(phone, 2)
    await settled(phone)
    done = await asyncio.to_thread(_events, "--nats-url", nats_srv.url, "--json")
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    expected = await read_all(nats_srv.url)
    assert [line["seq"] for line in lines] == [e.seq for e in expected]
    assert {"seq", "device", "event_type", "payload", "timestamp", "source", "id"} <= set(lines[0])
    last = lines[-1]["seq"]
    assert f"cursor: {last} (resume with --since {last})" in done.stderr
    text = await asyncio.to_thread(
        _events, "--nats-url", nats_srv.url, "--device", "p1", "--since", str(last - 1)
    )
    assert text.returncode == 0, text.stderr
    seq, device, event_type, payload = text.stdout.strip().split(" ", 3)
    assert (int(seq), device, event_type) == (last, "p1", lines[-1]["event_type"])
    assert json.loads(payload) == lines[-1]["payload"]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        ((), "needs --nats-url"),
        (("--nats-url", "nats://127.0.0.1:1", "--device", "a.b"), "is not a device name"),
        (("--nats-url", "nats://127.0.0.1:1", "--since", "-1"), "--since must be"),
    ],
)
def test_bad_events_arguments_are_refused(args: tuple[str, ...], says: str) -> None:
    done = _events(*args)
    assert done.returncode == 2 and says in done.stderr and done.stdout == "", done


def test_an_unreachable_nats_is_said_so(tmp_path: Path) -> None:
    server = NatsServer(tmp_path / "nats")
    url = server.start_sync()
    server.stop_sync()
    done = _events("--nats-url", url)
    assert done.returncode == 2 and f"cannot reach NATS at {url}" in done.stderr, done
