"""SCREEN_RECORD over adb (issue 27): `screenrecord` (frameworks/av cmds/screenrecord, Android 4.4+)
started in the background, stopped with SIGINT, its file read back with `stat`.

screenrecord runs detached from the adb stream (its output to a log file, `&`), so the worker is
not held while it records and the recording survives the stream; `$!` is its pid. It stops by
itself at `--time-limit` (at most 180 s: a longer one it refuses, "Time limit Ns outside acceptable
range [1,180]"); on SIGINT it stops the encoder and writes the mp4's index (a file killed harder
does not play), so a stop is `kill -2 PID`, the phone waiting for the process to go, then
`stat -c %s`: one shell script, one round trip.
Its messages (a size the encoder refuses, a path it cannot open) are in LOG, quoted when it ended
before it was stopped. The one running is the device's: one at a time (device/recording.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from phoneuse_runtime.device.adb.shell import command, quote
from phoneuse_runtime.device.adb.worker import Budget
from phoneuse_runtime.device.base import RecordedFile, Recording, ShellResult
from phoneuse_runtime.device.recording import RECORDINGS_DIR
from phoneuse_runtime.kernel.errors import DeviceUnavailable, InvalidParams, Unsupported
from phoneuse_runtime.kernel.limits import shorten

Sh = Callable[[Budget, str], ShellResult]

LOG = "/data/local/tmp/phoneuse-screenrecord.log"
FINISH_S = 5.0  # how long screenrecord may take to write the mp4's index after SIGINT
MIN_SDK = 19  # screenrecord is there from Android 4.4
ALIVE = "alive"
VIA = "screenrecord"


@dataclass
class Running:
    pid: int
    recording: Recording
    began: float  # time.monotonic()


def start_script(path: str, *, max_s: int, size: tuple[int, int] | None, bit_rate: int | None) -> str:
    args: list[str | int] = ["screenrecord", "--time-limit", max_s]
    if size is not None:
        args += ["--size", f"{size[0]}x{size[1]}"]
    if bit_rate is not None:
        args += ["--bit-rate", bit_rate]
    args.append(path)
    return f"mkdir -p {quote(RECORDINGS_DIR)}; {command(*args)} > {LOG} 2>&1 & echo $!"


def alive_script(pid: int) -> str:
    return f"kill -0 {pid} 2>/dev/null && echo {ALIVE}"


def start(
    sh: Sh, budget: Budget, recording: Recording, *, size: tuple[int, int] | None, bit_rate: int | None
) -> Running:
    """Starts screenrecord; Unsupported (quoting it) when it refused at once."""
    script = start_script(recording.path, max_s=recording.max_s, size=size, bit_rate=bit_rate)
    out = sh(budget, script).stdout.strip()
    if not out.isdigit():
        raise DeviceUnavailable(f"screenrecord did not start: {shorten(out, 300) or 'no pid'}")
    running = Running(int(out), recording, time.monotonic())
    if not is_alive(sh, budget, running.pid):
        said = read_log(sh, budget)
        if "outside acceptable range" in said or "Invalid size" in said:
            raise InvalidParams(f"screenrecord refused it: {said}")
        raise Unsupported(f"screenrecord ended at once: {said or 'it printed nothing'}")
    return running


def is_alive(sh: Sh, budget: Budget, pid: int) -> bool:
    return sh(budget, alive_script(pid)).stdout.strip() == ALIVE


def read_log(sh: Sh, budget: Budget) -> str:
    return shorten(sh(budget, f"cat {LOG} 2>/dev/null").stdout.strip(), 500)


def interrupt(sh: Sh, budget: Budget, pid: int) -> None:
    sh(budget, f"kill -2 {pid} 2>/dev/null")


WAS_RUNNING = "phoneuse-was-running"
STILL_RUNNING = "phoneuse-still-running"
SIZE = "phoneuse-size="
POLL_S = 0.05  # the phone's own poll while screenrecord writes the mp4's index


def stop_script(pid: int, path: str) -> str:
    """One round trip: SIGINT unless it ended already, the phone itself waiting (at most FINISH_S)
    for it to go, then the file's size and screenrecord's log."""
    polls = int(FINISH_S / POLL_S)
    return (
        f"if kill -0 {pid} 2>/dev/null; then echo {WAS_RUNNING}; kill -2 {pid}; i=0; "
        f"while kill -0 {pid} 2>/dev/null && [ $i -lt {polls} ]; do sleep {POLL_S}; i=$((i+1)); done; fi; "
        f"kill -0 {pid} 2>/dev/null && echo {STILL_RUNNING}; "
        f"echo {SIZE}$(stat -c %s {quote(path)} 2>/dev/null); cat {LOG} 2>/dev/null"
    )


def stop(sh: Sh, budget: Budget, running: Running) -> RecordedFile:
    """SIGINT (unless it already ended), the wait for the mp4 to be written, its size read back."""
    recording = running.recording
    limit_at = running.began + recording.max_s
    lines = sh(budget, stop_script(running.pid, recording.path)).stdout.splitlines()
    now = time.monotonic()
    if STILL_RUNNING in lines:
        raise DeviceUnavailable(
            f"screenrecord (pid {running.pid}) did not finish {recording.path} within "
            f"{FINISH_S:.0f} s of SIGINT; the file may be incomplete"
        )
    ended: Literal["stopped", "limit", "failed"] = "stopped"
    if WAS_RUNNING not in lines:
        ended = "limit" if now >= limit_at - 1 else "failed"
    size_text = next((line[len(SIZE) :] for line in lines if line.startswith(SIZE)), "")
    said = shorten(
        "\n".join(line for line in lines if line.strip() and not line.startswith("phoneuse-")), 500
    )
    if not size_text.isdigit():
        raise Unsupported(f"screenrecord left no file at {recording.path}" + (f": {said}" if said else ""))
    duration_ms = int((min(now, limit_at) - running.began) * 1000)
    return RecordedFile(
        path=recording.path, size=int(size_text), duration_ms=max(0, duration_ms), ended=ended, via=VIA
    )
