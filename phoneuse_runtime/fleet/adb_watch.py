"""The devices the adb server lists, followed as they come and go: `host:track-devices`, which
the server answers with its whole list whenever it changes (as the adb backend's Tracker follows
its one phone, device/adb/connection.py). Only devices in the "device" state are ready; an
offline or unauthorized one counts as gone until it is ready again. When the adb server is not
running the watcher asks again every second, quietly (the fleet may have simulated phones only)."""

from __future__ import annotations

import logging
from collections.abc import Callable

from phoneuse_runtime.config.addresses import server_address
from phoneuse_runtime.device.adb.connection import Client, TrackDevices

log = logging.getLogger(__name__)


class AdbWatch(TrackDevices):
    """Calls `on_change(serials)` (on its own thread) with the ready devices' serials, at start
    and whenever the list changes."""

    def __init__(self, adb_server: str, on_change: Callable[[frozenset[str]], None]) -> None:
        host, port = server_address(adb_server)
        super().__init__(Client(host, port), name="fleet adb watch")
        self.address = f"{host}:{port}"
        self.on_change = on_change
        self._last: frozenset[str] | None = None
        self._said_down = False

    def _connected(self) -> None:
        self._said_down = False

    def _listed(self, states: dict[str, str]) -> None:
        ready = frozenset(s for s, state in states.items() if state == "device")
        if ready != self._last:
            self._last = ready
            self.on_change(ready)

    def _lost(self, exc: Exception, *, stopping: bool) -> None:
        if not stopping and not self._said_down:
            log.info("no adb server answers on %s (%s); asking every %.0f s", self.address, exc, self.RETRY_S)
            self._said_down = True
        if self._last:  # the server went away: its devices with it
            self._last = frozenset()
            self.on_change(self._last)
