"""`--device termux` while the phone's own adb is not there (wireless debugging off; issue 26 §4):
it is looked for again with a back-off, at most 2 looks (each one `adb mdns services`) a minute
after the first minute, where it used to look every 5 s forever (12 a minute); and at once when a
call needs it. The watch's waits are driven by the test (`Clock`: each returns at once and moves
a clock on), so ten idle minutes take no time and nothing sleeps; the `adb` runs are counted by
a wrapper around the real adb binary, talking to the session's isolated real adb server, which
lists no device on this machine's own address and whose mdns finds no wireless debugging."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from phoneuse_runtime.device.termux.device import SELF_ADB_RETRY_S, TermuxDevice
from phoneuse_runtime.device.termux.selfadb import RETRY_MAX_S, Backoff
from tests.conftest import ServerFactory
from tests.fakes.adb_server import AdbServer
from tests.fakes.termux.state import FakeTermux
from tests.waiting import wait_until

IDLE_S = 600.0  # ten minutes, on the driven clock


class Clock:
    """The self-adb watch's pause, driven: a wait returns at once and moves `now` on by it, until
    `now` would pass `until`; there it waits to be woken (as the real pause does, for ever)."""

    def __init__(self, runs: Path, until: float) -> None:
        self.runs, self.until, self.now = runs, until, 0.0
        self.waits: list[float] = []
        self.looks: list[tuple[float, int]] = []  # (when, adb runs so far) at each wait's start
        self.parked = False

    def adb_runs(self) -> int:
        return len(self.runs.read_text().splitlines()) if self.runs.exists() else 0

    async def pause(self, woken: asyncio.Event, wait_s: float) -> None:
        self.looks.append((self.now, self.adb_runs()))
        self.waits.append(wait_s)
        if woken.is_set():
            return
        if self.now + wait_s > self.until:
            self.parked = True
            await woken.wait()
            self.parked = False
            return
        self.now += wait_s
        await asyncio.sleep(0)  # a turn for the loop, as a real wait gives


@pytest.fixture
def counted_adb(adb_server: AdbServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every adb run (adbutils.adb_path: $ADBUTILS_ADB_PATH) logged, then the real adb run."""
    real = os.environ["ADBUTILS_ADB_PATH"]
    runs = tmp_path / "adb-runs"
    wrapper = tmp_path / "adb"
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> {runs}\nexec {real} "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("ADBUTILS_ADB_PATH", str(wrapper))
    return runs


def test_the_back_off_doubles_to_two_looks_a_minute_and_starts_over() -> None:
    backoff = Backoff(SELF_ADB_RETRY_S)
    assert [backoff.next_s() for _ in range(6)] == [5.0, 10.0, 20.0, 30.0, 30.0, 30.0]
    backoff.reset()
    assert backoff.next_s() == SELF_ADB_RETRY_S
    assert RETRY_MAX_S == 30.0


async def test_idle_without_the_phones_adb_looks_twice_a_minute_and_at_once_when_asked(
    make_client: ServerFactory, adb_server: AdbServer, counted_adb: Path, termux: FakeTermux
) -> None:
    clock = Clock(counted_adb, until=IDLE_S)
    device = TermuxDevice(
        self_adb="auto",
        adb_server=f"127.0.0.1:{adb_server.port}",
        poll_ms=100,
        self_adb_pause=clock.pause,
    )
    client = await make_client(device=device, poll_ms=100)
    await wait_until(lambda: clock.parked, within_s=60)  # ten driven minutes went by
    assert device.self_adb.device is None
    runs = clock.adb_runs()
    assert runs == device.self_adb.looks  # each look: one `adb mdns services`
    assert all("mdns services" in line for line in counted_adb.read_text().splitlines())
    # Before: a look every 5 s, 120 in ten minutes. Now 5, 10, 20 and then 30 s apart.
    per_minute = [sum(1 for when, _ in clock.looks if m * 60 <= when < (m + 1) * 60) for m in range(10)]
    assert max(per_minute[1:]) <= 2, per_minute
    assert runs <= 4 + 2 * 9, per_minute
    print(f"adb runs in {IDLE_S:.0f} s idle: {runs} (every 5 s: {int(IDLE_S / 5)}); a minute: {per_minute}")

    # A call that needs the UI: looked for at once, and the back-off starts over.
    clock.until = clock.now  # the clock stands still from here: one look, then parked again
    response = await client.execute("TAP", {"x": "1", "y": "1"})
    assert response.error.startswith("UNSUPPORTED: TAP: this device (termux) lacks the 'ui' capability")
    await wait_until(lambda: device.self_adb.looks == runs + 1 and clock.parked, within_s=30)
    assert clock.adb_runs() == runs + 1
    assert clock.waits[-1] == SELF_ADB_RETRY_S  # after the look it asked for: from 5 s again
