"""Events on the phone itself, found by polling Termux:API every `poll_ms`, and only while someone
subscribes to them (nothing is run while nobody listens):
- MESSAGE_RECEIVED: inbox rows above a high-water `_id` (`termux-sms-list -t inbox`), taken when
  interest starts, so what arrived while nobody listened is not replayed;
- NOTIFICATION_POSTED: keys in `termux-notification-list` not seen at the last poll;
- CALL_STATE_CHANGED: with the phone's own adb, its call state (`dumpsys telephony.registry`)
  compared with the last poll; without it, Termux:API cannot see a call ring or start (no API
  prints the call state), so each new row of `termux-call-log` is reported as the call with
  that number going back to `idle`.

A source whose command does not answer within its budget, or lacks its permission, rests for
`REST_S` (a permission granted meanwhile is picked up then); the others go on.

Backing off: every `STATE_CHECK_S` while it polls, the loop looks at the screen (`dumpsys power`
through the phone's own adb) and the battery (`termux-battery-status`): with the screen off it
polls `SCREEN_OFF_FACTOR` times less often, and with the screen's state unknown (no self-adb)
while on battery, `ON_BATTERY_FACTOR` times less often; never less often than `MAX_INTERVAL_S`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Protocol

from phoneuse_runtime.device.adb.events import report_messages, report_notifications
from phoneuse_runtime.device.base import (
    SYSTEM_SOURCE,
    CallRecord,
    CallState,
    Notification,
    SmsMessage,
    reset_deadline,
    set_deadline,
)
from phoneuse_runtime.device.termux.selfadb import SelfAdb
from phoneuse_runtime.kernel.errors import (
    DeviceUnavailable,
    PermissionDenied,
    RuntimeFailure,
    Timeout,
    Unsupported,
)
from phoneuse_runtime.kernel.events import CallStateChanged, EventSink

log = logging.getLogger(__name__)

MESSAGES = "MESSAGE_RECEIVED"
NOTIFICATIONS = "NOTIFICATION_POSTED"
CALLS = "CALL_STATE_CHANGED"
POLLED = (MESSAGES, NOTIFICATIONS, CALLS)

STATE_CHECK_S = 30.0
# A poll of one source gets this long (20 polls' worth, 2 to 10 s), and a source whose command
# did not answer (notification access not granted: termux-notification-list never returns) is
# left alone for REST_S, so that it does not hold up the others on every tick.
POLL_BUDGET_MIN_S, POLL_BUDGET_MAX_S = 2.0, 10.0
REST_S = 60.0
SCREEN_OFF_FACTOR = 5.0
ON_BATTERY_FACTOR = 2.0
MAX_INTERVAL_S = 30.0


class PolledPhone(Protocol):
    """What the pollers read of the phone (`TermuxDevice` is one)."""

    self_adb: SelfAdb

    async def screen_on(self) -> bool | None: ...
    async def on_battery(self) -> bool: ...
    async def highest_sms_id(self, *, box: str = "inbox") -> int: ...
    async def new_inbox(self, above_id: int) -> list[SmsMessage]: ...
    async def notifications(self) -> list[Notification]: ...
    async def call_state(self) -> CallState: ...
    async def recent_calls(self) -> list[CallRecord]: ...


class TermuxPollers:
    """The polling loop and what it remembers between polls."""

    def __init__(
        self,
        phone: PolledPhone,
        emit: EventSink,
        wanted: Callable[[str], bool],
        *,
        poll_ms: int,
        state_check_s: float = STATE_CHECK_S,
    ) -> None:
        self.phone = phone
        self.emit = emit
        self.wanted = wanted
        self.poll_s = poll_ms / 1000
        self.state_check_s = state_check_s
        self.factor = 1.0  # the current backoff
        self.why = "screen on or unknown, charging"
        self.ticks = 0  # wake-ups of the loop, wanted or not
        self.polls = 0  # ticks that ran a command, for tests and figures
        self._checked_at: float | None = None
        self._sms_mark: int | None = None
        self._notification_keys: set[str] | None = None
        self._call_state: CallState | None = None
        self._call_mark: tuple[int, set[str]] | None = None
        self._logged: set[str] = set()
        self.budget_s = min(POLL_BUDGET_MAX_S, max(POLL_BUDGET_MIN_S, 20 * self.poll_s))
        self.resting: dict[str, float] = {}  # source -> time.monotonic() it may be polled again

    @property
    def interval_s(self) -> float:
        return min(self.poll_s * self.factor, max(self.poll_s, MAX_INTERVAL_S))

    async def run(self) -> None:
        while True:
            await asyncio.sleep(self.interval_s)  # the poll interval (--poll-ms, backed off)
            await self.tick()

    async def tick(self) -> None:
        """One poll of every wanted source; forgets those nobody wants any more."""
        self.ticks += 1
        wanted = {t for t in POLLED if self.wanted(t)}
        if MESSAGES not in wanted:
            self._sms_mark = None
        if NOTIFICATIONS not in wanted:
            self._notification_keys = None
        if CALLS not in wanted:
            self._call_state, self._call_mark = None, None
        if not wanted:
            self._checked_at, self.factor = None, 1.0
            return
        if self._checked_at is None or time.monotonic() - self._checked_at >= self.state_check_s:
            self._checked_at = time.monotonic()
            await self._guard("the screen and battery", self._back_off)
        if MESSAGES in wanted:
            await self._guard("new SMS", self._messages)
        if NOTIFICATIONS in wanted:
            await self._guard("notifications", self._notifications)
        if CALLS in wanted:
            await self._guard("the call state", self._calls)
        self.polls += 1

    async def _guard(self, what: str, poll: Callable[[], Awaitable[None]]) -> None:
        if self.resting.get(what, 0.0) > time.monotonic():
            return
        # The poll runs under a deadline of its own, which every command it runs honours.
        token = set_deadline(time.monotonic() + self.budget_s)
        try:
            await poll()
        except RuntimeFailure as failure:
            key = f"{what}:{failure.code}"
            if key not in self._logged:  # once per kind, not once a second
                self._logged.add(key)
                log.warning("polling %s failed: %s", what, failure.message)
            # Unsupported: e.g. the Play build of Termux:API, which refuses SMS for good.
            if isinstance(failure, (Timeout, DeviceUnavailable, PermissionDenied, Unsupported)):
                self.resting[what] = time.monotonic() + REST_S
        finally:
            reset_deadline(token)

    async def _back_off(self) -> None:
        screen_on = await self.phone.screen_on()
        if screen_on is False:
            self.factor, self.why = SCREEN_OFF_FACTOR, "screen off"
            return
        if screen_on is None and await self.phone.on_battery():
            self.factor, self.why = ON_BATTERY_FACTOR, "on battery, screen state unknown (no self-adb)"
            return
        self.factor, self.why = 1.0, "screen on" if screen_on else "charging"

    async def _messages(self) -> None:
        if self._sms_mark is None:
            self._sms_mark = await self.phone.highest_sms_id(box="inbox")
            return
        arrived = await self.phone.new_inbox(self._sms_mark)
        self._sms_mark = report_messages(self.emit, arrived, self._sms_mark)

    async def _notifications(self) -> None:
        listed = await self.phone.notifications()
        self._notification_keys = report_notifications(self.emit, listed, self._notification_keys)

    async def _calls(self) -> None:
        if self.phone.self_adb.up:
            self._call_mark = None
            now = await self.phone.call_state()
            before, self._call_state = self._call_state, now
            if before is not None and (now.state, now.number) != (before.state, before.number):
                self.emit(CallStateChanged(state=now.state, number=now.number).to_event(SYSTEM_SOURCE))
            return
        self._call_state = None
        rows = await self.phone.recent_calls()
        mark = self._call_mark
        self._call_mark = _mark_of(rows, mark)
        if mark is None:
            return
        for row in sorted(rows, key=lambda r: r.date_ms):
            if row.date_ms > mark[0] or (row.date_ms == mark[0] and row.id not in mark[1]):
                self.emit(CallStateChanged(state="idle", number=row.number).to_event(SYSTEM_SOURCE))


def _mark_of(rows: list[CallRecord], before: tuple[int, set[str]] | None) -> tuple[int, set[str]]:
    """The newest date seen and the ids of the rows at that date (rows are dated to the second)."""
    newest = max((r.date_ms for r in rows), default=before[0] if before else 0)
    if before is not None and before[0] > newest:
        return before
    at = {r.id for r in rows if r.date_ms == newest}
    if before is not None and before[0] == newest:
        at |= before[1]
    return newest, at
