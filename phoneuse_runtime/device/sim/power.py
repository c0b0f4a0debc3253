"""The simulated phone's screen power, its lock screen and its screen recorder (issue 27).

The lock screen is `none` (no lock screen at all), `swipe` (a lock screen that needs no secret)
or a secure one (`pin`, `pattern`, `password`), which only the owner may open: `dismiss` never
opens it. A recording is a small mp4-like file (its `ftyp` box, then 1 KiB a second it ran) kept
in memory, the last MAX_RECORDINGS of them: the sim's shared storage for recordings."""

from __future__ import annotations

import asyncio
import collections
import time
from dataclasses import dataclass, field
from typing import Literal

from phoneuse_runtime.device.base import RecordedFile, Recording
from phoneuse_runtime.device.recording import busy, nothing_recorded, recording_path

LockKind = Literal["none", "swipe", "pin", "pattern", "password"]
SECURE_LOCKS = frozenset({"pin", "pattern", "password"})
MAX_RECORDINGS = 8  # files kept; the oldest goes first (at most MAX_RECORDINGS * 186 KiB)
HEADER = b"\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom"
BYTES_A_SECOND = 1024
VIA = "sim"


@dataclass
class SimPower:
    awake: bool = True
    locked: bool = False
    lock: LockKind = "swipe"

    @property
    def secure(self) -> bool:
        return self.lock in SECURE_LOCKS

    def sleep(self) -> None:
        self.awake = False
        self.locked = self.lock != "none"  # the screen locks when it goes off

    def wake(self) -> None:
        self.awake = True

    def dismiss(self) -> None:
        """`wm dismiss-keyguard`: opens an insecure lock screen on an awake screen."""
        if self.awake and not self.secure:
            self.locked = False


@dataclass
class _Running:
    recording: Recording
    began: float  # the loop's clock
    timer: asyncio.TimerHandle | None = None


@dataclass
class SimRecorder:
    files: collections.OrderedDict[str, bytes] = field(default_factory=collections.OrderedDict)
    running: _Running | None = None
    finished: RecordedFile | None = None  # stopped at its limit, not yet collected

    def start(self, max_s: int) -> Recording:
        if self.running is not None:
            raise busy(self.running.recording)
        path = recording_path()
        while path in self.files:  # two in one second
            path = path.removesuffix(".mp4") + "-1.mp4"
        recording = Recording(path=path, max_s=max_s, started_ms=int(time.time() * 1000), via=VIA)
        loop = asyncio.get_running_loop()
        self.running = _Running(recording, loop.time())
        self.running.timer = loop.call_later(max_s, self._finish, "limit")
        self.finished = None
        return recording

    def _finish(self, ended: Literal["stopped", "limit"]) -> RecordedFile:
        running = self.running
        assert running is not None
        self.running = None
        if running.timer is not None:
            running.timer.cancel()
        elapsed = asyncio.get_running_loop().time() - running.began
        duration_ms = min(running.recording.max_s * 1000, int(elapsed * 1000))
        data = HEADER + bytes(BYTES_A_SECOND * max(1, (duration_ms + 999) // 1000))
        self.files[running.recording.path] = data
        while len(self.files) > MAX_RECORDINGS:
            self.files.popitem(last=False)
        done = RecordedFile(
            path=running.recording.path, size=len(data), duration_ms=duration_ms, ended=ended, via=VIA
        )
        self.finished = done if ended == "limit" else None
        return done

    def stop(self) -> RecordedFile:
        if self.running is not None:
            return self._finish("stopped")
        done, self.finished = self.finished, None
        if done is None:
            raise nothing_recorded()
        return done

    def close(self) -> None:
        if self.running is not None:
            self._finish("stopped")
