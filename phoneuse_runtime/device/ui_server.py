"""The phone's UI server dying, as every backend that has one reports it: the adb backend (and
Termux through its own adb) for uiautomator2's server, the sim for its SIM_UI_SERVER_DIES.

On a real phone the server is killed (low memory, an app update, another UiAutomation client
such as Appium taking the phone) and every UI call then fails. The backend notices, restarts it
and tells (an ERROR event `UI_SERVER_RESTARTED` with `took_ms`, and a log line); a call that only
reads is then sent once more, a call that acts is answered DEVICE_UNAVAILABLE saying whether it
may have run (`died_during`), never sent twice. A server that keeps dying is not restarted
forever: after RESTARTS_IN_WINDOW restarts within RESTART_WINDOW_S, restarts stop for
RESTART_PAUSE_S and the calls say why (`RestartLimiter`).
"""

from __future__ import annotations

import collections
import logging
import time
from collections.abc import Callable

from phoneuse_runtime.kernel.errors import DeviceUnavailable
from phoneuse_runtime.kernel.events import ErrorEvent, Event
from phoneuse_runtime.kernel.limits import shorten

log = logging.getLogger(__name__)

RESTARTED = "UI_SERVER_RESTARTED"  # the ERROR event's code
RESTARTS_IN_WINDOW = 3  # at most this many restarts...
RESTART_WINDOW_S = 60.0  # ...within this long; one more death then pauses the restarts...
RESTART_PAUSE_S = 60.0  # ...for this long (the calls meanwhile answer DEVICE_UNAVAILABLE)
KEEPS_DYING = "something on the phone keeps ending it (low memory, another automation client)"
REASON_CHARS = 600  # what the limiter keeps of a reason (it is quoted in every refusal)
SOURCE = "android.system"  # as the other events the phone itself causes (device/base.py's)


def restarted_event(server: str, *, cause: str, took_ms: int) -> Event:
    """The ERROR event of one restart that worked."""
    message = f"the {server} died ({cause}) and was restarted in {took_ms} ms"
    return ErrorEvent(code=RESTARTED, message=message, took_ms=took_ms).to_event(SOURCE)


def died_during(doing: str, server: str, *, cause: str, may_have_run: bool, after: str) -> DeviceUnavailable:
    """DEVICE_UNAVAILABLE for a call that acts and met the server's death: whether it may have
    run (the request had reached the server) or did not (it was never taken), and what became of
    the server (`after`: restarted in N ms, or why not). `details.may_have_run` says it too."""
    if may_have_run:
        said = f"the {server} died during it ({cause}): it may have run; read the screen before trying again"
    else:
        said = f"the {server} died before it was sent ({cause}): it did not run"
    return DeviceUnavailable(f"{doing}: {said}; {after}", details={"may_have_run": may_have_run})


class RestartLimiter:
    """Whether the server may be restarted now: at most RESTARTS_IN_WINDOW restarts within
    RESTART_WINDOW_S, then none for RESTART_PAUSE_S. Holds a few timestamps and one reason."""

    def __init__(self, server: str, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.server = server
        self._clock = clock
        self._times: collections.deque[float] = collections.deque(maxlen=RESTARTS_IN_WINDOW)
        self._paused_until = 0.0
        self._why = ""
        self._failure = ""  # why the last restart failed, "" when it worked

    def refusal(self, cause: str) -> str | None:
        """Why the server must not be restarted after this death (`cause`), or None: then the
        restart is counted. The pause starts at the death past the limit."""
        now = self._clock()
        if now < self._paused_until:
            return self._paused(now)
        while self._times and now - self._times[0] > RESTART_WINDOW_S:
            self._times.popleft()
        if len(self._times) >= RESTARTS_IN_WINDOW:
            self._times.clear()
            self._paused_until = now + RESTART_PAUSE_S
            self._why = shorten(
                f"the {self.server} was restarted {RESTARTS_IN_WINDOW} times within "
                f"{RESTART_WINDOW_S:.0f} s and died again ({cause}); " + (self._failure or KEEPS_DYING),
                REASON_CHARS * 2,
            )
            log.warning("%s; not restarting it for %.0f s", self._why, RESTART_PAUSE_S)
            return self._paused(now)
        self._times.append(now)
        return None

    def restart_failed(self, why: str | None) -> None:
        """How the counted restart ended: None when it worked, else why not (another client
        holding UiAutomation, named), which the pause then names."""
        self._failure = shorten(why or "", REASON_CHARS)

    def _paused(self, now: float) -> str:
        left = max(1, round(self._paused_until - now))
        return f"{self._why}; not restarting it for another {left} s"
