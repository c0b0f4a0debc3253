"""What every backend's screen recording shares (issue 27): screenrecord's own limits, the file
names, and the rule of one recording at a time with its CONFLICT."""

from __future__ import annotations

import time

from phoneuse_runtime.device.base import Recording
from phoneuse_runtime.kernel.errors import Conflict, InvalidParams

# screenrecord's own limit (frameworks/av cmds/screenrecord: kMaxTimeLimitSec = 180): a longer
# --time-limit is refused, and without one it stops at 180 s.
MAX_S = 180
# screenrecord's --bit-rate default (kDefaultBitRate, 20 Mbps since Android 10; 4 Mbps before)
# and the range it takes (kMinBitRate 100 kbps, kMaxBitRate 200 Mbps).
DEFAULT_BIT_RATE = 20_000_000
MIN_BIT_RATE = 100_000
MAX_BIT_RATE = 200_000_000
# Where recordings go: shared storage, so PULL_FILE reaches them.
RECORDINGS_DIR = "/sdcard/Movies"


def recording_path(now_s: float | None = None) -> str:
    """/sdcard/Movies/phoneuse-YYYYmmdd-HHMMSS.mp4 (UTC), a new name a second."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(time.time() if now_s is None else now_s))
    return f"{RECORDINGS_DIR}/phoneuse-{stamp}.mp4"


def busy(running: Recording) -> Conflict:
    """The answer to a second SCREEN_RECORD_START: which recording runs, and until when."""
    left_s = max(0, running.max_s - int(time.time() - running.started_ms / 1000))
    return Conflict(
        f"a screen recording is already running ({running.path}, at most {left_s} s more): "
        "SCREEN_RECORD_STOP it first",
        details={"path": running.path, "max_s": running.max_s, "started_ms": running.started_ms},
    )


def nothing_recorded() -> InvalidParams:
    return InvalidParams("no screen recording is running or waiting to be collected: SCREEN_RECORD_START one")
