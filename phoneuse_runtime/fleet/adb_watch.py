"""The devices the adb server lists, followed as they come and go: `host:track-devices`, which
the server answers with its whole list whenever it changes (as the adb backend's Tracker follows
its one phone, device/adb/connection.py). Only devices in the "device" state are ready; an
offline or unauthorized one counts as gone until it is ready again. When the adb server is not
running the watcher asks again every second, quietly (the fleet may have simulated phones only)."""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)

RETRY_S = 1.0


class AdbWatch:
    """Calls `on_change(serials)` (on its own thread) with the ready devices' serials, at start
    and whenever the list changes."""

    def __init__(self, adb_server: str, on_change: Callable[[frozenset[str]], None]) -> None:
        from ..device.adb.connection import Client, server_address

        host, port = server_address(adb_server)
        self.client = Client(host, port)
        self.address = f"{host}:{port}"
        self.on_change = on_change
        self._stopped = threading.Event()
        self._conn: object | None = None
        self._thread = threading.Thread(target=self._run, name="fleet adb watch", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stopped.set()
        conn = self._conn
        if conn is not None:
            with contextlib.suppress(OSError, AttributeError):
                conn.conn.shutdown(socket.SHUT_RDWR)  # type: ignore[attr-defined]  # wakes the read
        self._thread.join(timeout=2.0)

    def _run(self) -> None:
        import adbutils

        from ..device.adb.connection import device_states

        last: frozenset[str] | None = None
        said_down = False
        while not self._stopped.is_set():
            try:
                with self.client.make_connection() as conn:
                    self._conn = conn
                    conn.send_command("host:track-devices")
                    conn.check_okay()
                    said_down = False
                    while not self._stopped.is_set():
                        listed = device_states(str(conn.read_string_block()))
                        ready = frozenset(s for s, state in listed.items() if state == "device")
                        if ready != last:
                            last = ready
                            self.on_change(ready)
            except (adbutils.AdbError, OSError) as exc:
                if not self._stopped.is_set() and not said_down:
                    log.info(
                        "no adb server answers on %s (%s); asking every %.0f s", self.address, exc, RETRY_S
                    )
                    said_down = True
                if last:  # the server went away: its devices with it
                    last = frozenset()
                    self.on_change(last)
            finally:
                self._conn = None
            self._stopped.wait(RETRY_S)
