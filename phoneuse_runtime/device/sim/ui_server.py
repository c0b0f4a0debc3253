"""The simulated phone's UI server (its stand-in for uiautomator2's), which SIM_UI_SERVER_DIES
kills: the UI calls then meet its death as they do on a real phone over adb, through the same
rules (device/ui_server.py): the server is restarted (an ERROR event UI_SERVER_RESTARTED), a read
goes on, an act is answered DEVICE_UNAVAILABLE saying whether it may have run, and after
RESTARTS_IN_WINDOW restarts within RESTART_WINDOW_S restarts pause."""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterator

from phoneuse_runtime.device.ui_server import RestartLimiter, died_during, restarted_event
from phoneuse_runtime.kernel.errors import DeviceUnavailable
from phoneuse_runtime.kernel.events import EventSink

log = logging.getLogger(__name__)

SERVER = "uiautomator2 server (simulated)"
CAUSE = "killed by SIM_UI_SERVER_DIES"
MAX_DEATHS = 10  # what one SIM_UI_SERVER_DIES may ask for, and at most pending at once


class SimUiServer:
    """Whether the server is dead, how many deaths are still to come, and the restarts' limiter."""

    def __init__(self, emit: EventSink) -> None:
        self._emit = emit
        self._deaths = 0  # deaths to come: the server is dead while this is above 0
        self._during = False  # an act meeting a death had been sent (it ran)
        self.limiter = RestartLimiter(SERVER)

    def dies(self, times: int, *, during: bool) -> int:
        """Kills the server; it dies again right after each restart, `times` deaths in all.
        The deaths still to come."""
        self._deaths = min(MAX_DEATHS, self._deaths + times)
        self._during = during
        return self._deaths

    @property
    def dead(self) -> bool:
        return self._deaths > 0

    @contextlib.contextmanager
    def serving(self, doing: str, *, reads: bool) -> Iterator[None]:
        """Around one UI primitive: while the server is dead, it is restarted first (or the call
        refused while restarts pause). A read then runs; an act does not run (`during` false) or
        runs and is answered DEVICE_UNAVAILABLE all the same (`during` true: it may have run)."""
        if self._deaths <= 0:
            yield
            return
        refusal = self.limiter.refusal(CAUSE)
        if refusal is not None:
            raise DeviceUnavailable(f"{doing}: {refusal}", details={} if reads else {"may_have_run": False})
        started = time.monotonic()
        self._deaths -= 1
        took_ms = round((time.monotonic() - started) * 1000)
        log.warning("%s restarted in %d ms (it had died: %s)", SERVER, took_ms, CAUSE)
        self._emit(restarted_event(SERVER, cause=CAUSE, took_ms=took_ms))
        after = f"the server was restarted in {took_ms} ms"
        if reads:
            yield
        elif self._during:
            yield
            raise died_during(doing, SERVER, cause=CAUSE, may_have_run=True, after=after)
        else:
            raise died_during(doing, SERVER, cause=CAUSE, may_have_run=False, after=after)
