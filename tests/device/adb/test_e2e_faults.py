"""Faults on `--device adb`: a phone that drops mid-call and comes back, a dead uiautomator2
server, and the choice of serial."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any

import pytest

from phoneuse_runtime.config.settings import ConfigError, Settings
from phoneuse_runtime.device.backends import make_device
from phoneuse_runtime.rpc import protocol_pb2 as pb
from tests.conftest import TOKEN, Client
from tests.device.adb.conftest import AdbServe
from tests.fakes.adb_server import AdbServer
from tests.waiting import wait_until

# "Fails fast" is a tenth of the call's own deadline: at a drop, not at the deadline.
DEADLINE_MS = 30_000
FAST_S = DEADLINE_MS / 1000 / 10


class Events:
    """A Subscribe stream read in the background, for waiting on one event type."""

    def __init__(self, client: Client, types: list[str]) -> None:
        self.seen: list[tuple[float, str, dict[str, Any]]] = []
        self.changed = asyncio.Event()
        self.stream = client.stub.Subscribe(
            pb.SubscribeRequest(subscriber_id="faults", event_types=types),
            metadata=(("authorization", f"Bearer {TOKEN}"),),
        )
        self.task = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        async for event in self.stream:
            self.seen.append((time.monotonic(), event.event_type, json.loads(event.payload_json)))
            self.changed.set()

    async def next(self, event_type: str, *, after: float, within_s: float) -> tuple[float, dict[str, Any]]:
        give_up = time.monotonic() + within_s
        while True:
            for at, kind, payload in self.seen:
                if kind == event_type and at >= after:
                    return at, payload
            self.changed.clear()
            await asyncio.wait_for(self.changed.wait(), max(0.01, give_up - time.monotonic()))

    def close(self) -> None:
        self.stream.cancel()
        self.task.cancel()


async def test_a_phone_that_drops_mid_call_fails_fast_and_comes_back(serve_adb: AdbServe) -> None:
    s = await serve_adb()
    c = s.client
    bus = c.app.runtime.bus
    subscribed = bus.subscriber_count
    events = Events(c, ["DEVICE_CONNECTED", "DEVICE_DISCONNECTED"])
    await wait_until(lambda: bus.subscriber_count > subscribed, what="the stream subscribed before the drop")
    s.state.faults.u2_latency_s = 3.0  # the tap is in flight on the phone when it drops
    looked = len(s.state.log.rpc)
    tap = asyncio.ensure_future(c.execute("TAP", {"x": "5", "y": "5"}, timeout_ms=DEADLINE_MS))
    await wait_until(lambda: len(s.state.log.rpc) > looked, what="the tap's call reaching the phone")
    dropped = time.monotonic()
    await asyncio.to_thread(s.device.adbd.drop)
    response = await tap
    failed_after = time.monotonic() - dropped
    assert not response.success and response.error.startswith("DEVICE_UNAVAILABLE"), response.error
    assert failed_after < FAST_S, failed_after
    at, lost = await events.next("DEVICE_DISCONNECTED", after=dropped, within_s=5)
    assert at - dropped < 5.0 and lost["serial"] == s.device.serial and lost["reason"], lost
    # While it is gone: at once, not at the deadline.
    started = time.monotonic()
    assert await c.fail("TAP", {"x": "5", "y": "5"}, timeout_ms=DEADLINE_MS) == "DEVICE_UNAVAILABLE"
    assert time.monotonic() - started < FAST_S, time.monotonic() - started
    s.state.faults.u2_latency_s = 0.0
    back = time.monotonic()
    await asyncio.to_thread(s.device.adbd.resume)
    at, connected = await events.next("DEVICE_CONNECTED", after=back, within_s=10)
    assert at - back < 10.0 and connected["serial"] == s.device.serial
    await c.ok("TAP", {"text": "Chrome"})
    assert s.state.foreground().package == "com.android.chrome"
    events.close()


async def test_a_dead_u2_server_is_restarted_once_and_logged(
    serve_adb: AdbServe, caplog: pytest.LogCaptureFixture
) -> None:
    s = await serve_adb()
    launches = s.state.u2.launches
    s.state.faults.u2_not_connected = True
    with caplog.at_level(logging.WARNING, logger="phoneuse_runtime.device.adb.ui"):
        await s.client.ok("TAP", {"x": "100", "y": "200"})
    assert s.state.u2.launches == launches + 1
    assert "restarting it once" in caplog.text and "uiautomator2 server restarted" in caplog.text
    assert (s.state.log.taps[-1].x, s.state.log.taps[-1].y) == (100, 200)


async def test_a_u2_server_that_cannot_restart_is_reported(serve_adb: AdbServe) -> None:
    s = await serve_adb()
    s.state.faults.u2_not_connected = True
    s.state.faults.u2_already_registered = 5
    # A tap on an element needs the server (a tap at coordinates no longer does: `input`).
    response = await s.client.execute("TAP", {"text": "Chrome"})
    assert not response.success
    assert response.error.startswith("DEVICE_UNAVAILABLE") and "already registered" in response.error


async def test_serial_selection(
    adb_server: AdbServer, serve_adb: AdbServe, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANDROID_SERIAL", raising=False)
    server = f"127.0.0.1:{adb_server.port}"
    none = make_device(Settings(device="adb", adb_server=server))
    with pytest.raises(ConfigError, match="no ready device"):
        await none.start(lambda _e: None)
    first = await serve_adb()
    only = make_device(Settings(device="adb", adb_server=server))
    await only.start(lambda _e: None)
    try:
        assert only.link.up and (await only.describe()).serial == first.device.serial
    finally:
        await only.close()
    second = await serve_adb()
    several = make_device(Settings(device="adb", adb_server=server))
    with pytest.raises(ConfigError, match="2 ready devices") as raised:
        await several.start(lambda _e: None)
    assert first.device.serial in str(raised.value) and second.device.serial in str(raised.value)
    monkeypatch.setenv("ANDROID_SERIAL", second.device.serial)
    chosen = make_device(Settings(device="adb", adb_server=server))
    await chosen.start(lambda _e: None)
    try:
        assert (await chosen.describe()).serial == second.device.serial
    finally:
        await chosen.close()


async def test_a_frozen_phone_times_out_at_the_deadline_and_recovers(serve_adb: AdbServe) -> None:
    s = await serve_adb()
    c = s.client
    await asyncio.to_thread(s.device.adbd.hang)
    frozen_ms = 800
    started = time.monotonic()
    assert await c.fail("DUMP_UI", timeout_ms=frozen_ms) == "TIMEOUT"
    took = time.monotonic() - started
    assert took < frozen_ms / 1000 * 2.5, took  # at the deadline, give or take the machine's load
    # The next call waits for the frozen one (bounded by its deadline), never runs beside it.
    second = await c.execute("DUMP_UI", timeout_ms=frozen_ms)
    assert not second.success, second
    await asyncio.to_thread(s.device.adbd.resume)  # adbd restarts: its connections are cut
    give_up = time.monotonic() + 10
    while True:
        response = await c.execute("TAP", {"text": "Chrome"}, timeout_ms=5000)
        if response.success or time.monotonic() > give_up:
            break
        await asyncio.sleep(0.2)  # a retry, bounded by give_up: the daemon comes back in its own time
    assert response.success, response.error
    assert s.state.foreground().package == "com.android.chrome"
