"""Termux:API's JSON, read into the Device records. The shapes are those of the Termux:API app's
sources (app/src/main/java/com/termux/api/apis/*.java):

- `termux-sms-list` (SmsInboxAPI): `[{"threadid": 1, "type": "inbox", "read": true, "sender":
  "Alice", "address": "+1415...", "number": "+1415...", "received": "2026-01-02 03:04:05",
  "body": "...", "_id": 12}]`, oldest of the newest `-l` rows first. Before 2025 there was no
  `address` (only `number`) and `read` was always there.
- `termux-contact-list` (ContactListAPI): `[{"name": "Alice", "number": "+1415..."}]`: one number
  per contact (the last one the phone lists), no id, contacts without a number left out.
- `termux-call-log` (CallLogAPI): `[{"name": "UNKNOWN_CALLER", "phone_number": "...", "type":
  "INCOMING", "date": "2026-01-02 03:04:05", "duration": "01:02", "sim_id": "1"}]`, oldest first.
- `termux-notification-list` (NotificationListAPI): `[{"id": 1, "tag": "", "key": "0|pkg|1|null|10123",
  "group": "", "packageName": "pkg", "title": "...", "content": "...", "when": "2026-..."}]`
  (`lines` too for inbox-style ones).
- `termux-battery-status` (BatteryStatusAPI): `{"present": true, "health": "GOOD", "plugged":
  "UNPLUGGED", "status": "DISCHARGING", "temperature": 25.5, "percentage": 80, ...}`; `plugged`
  is PLUGGED_AC, PLUGGED_USB, PLUGGED_WIRELESS, PLUGGED_DOCK or UNPLUGGED (`PLUGGED_<n>` for a
  kind it does not name), `status` CHARGING, DISCHARGING, FULL, NOT_CHARGING or UNKNOWN. Before
  2020 there was no `current`, before 2024 no `level`/`scale` (only `percentage`).
- `termux-wifi-connectioninfo` (WifiAPI): `{"bssid": ..., "ip": ..., "ssid": "Home",
  "supplicant_state": "COMPLETED", ...}` (the SSID unquoted; `<unknown ssid>` without location
  access), or `{"API_ERROR": "No current connection"}`.

Dates are the phone's local time, to the second ("yyyy-MM-dd HH:mm:ss"); this process runs on
the phone, in its time zone, so they are read as local time.
"""

from __future__ import annotations

import hashlib
import time
from typing import Any

from phoneuse_runtime.device.base import (
    BatteryStatus,
    CallRecord,
    Contact,
    Notification,
    Plugged,
    SmsBox,
    SmsMessage,
)
from phoneuse_runtime.kernel.errors import DeviceUnavailable

DATE_FORMAT = "%Y-%m-%d %H:%M:%S"
_BOXES: dict[str, SmsBox] = {
    "inbox": "inbox",
    "sent": "sent",
    "outbox": "outbox",
    "failed": "failed",
    "draft": "draft",
}
_CALL_KINDS: dict[str, Any] = {
    "INCOMING": "incoming",
    "OUTGOING": "outgoing",
    "MISSED": "missed",
    "REJECTED": "rejected",
    "BLOCKED": "blocked",
    "VOICEMAIL": "voicemail",
}


def local_ms(text: str) -> int:
    """Epoch milliseconds of a Termux:API date ("yyyy-MM-dd HH:mm:ss", local time); 0 if unreadable."""
    try:
        return int(time.mktime(time.strptime(text.strip(), DATE_FORMAT)) * 1000)
    except (ValueError, OverflowError):
        return 0


def format_local(ms: int) -> str:
    return time.strftime(DATE_FORMAT, time.localtime(ms / 1000))


def _rows(value: object, command: str) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not all(isinstance(r, dict) for r in value):
        raise DeviceUnavailable(f"{command} printed {type(value).__name__}, not a list of objects")
    return value


def sms_rows(value: object) -> list[SmsMessage]:
    out = []
    for row in _rows(value, "termux-sms-list"):
        box = _BOXES.get(str(row.get("type", "")))
        if box is None:  # "queued" and unknown types print ""
            continue
        out.append(
            SmsMessage(
                id=str(row.get("_id", "")),
                thread_id=str(row.get("threadid", "")),
                address=str(row.get("address", row.get("number", "")) or ""),
                body=str(row.get("body", "") or ""),
                date_ms=local_ms(str(row.get("received", ""))),
                box=box,
                read=bool(row.get("read", True)),
            )
        )
    return out


def stable_id(*parts: str) -> str:
    """An id for a row Termux:API prints without one: the same row gets the same id every time."""
    return "t" + hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:12]


def contact_rows(value: object) -> list[Contact]:
    out = []
    for row in _rows(value, "termux-contact-list"):
        name, number = str(row.get("name", "") or ""), str(row.get("number", "") or "")
        out.append(Contact(id=stable_id(name, number), name=name, phones=[number] if number else []))
    return out


def _duration_s(text: str) -> int:
    """ "HH:MM:SS" or "MM:SS" (CallLogAPI.getTimeString) in seconds."""
    seconds = 0
    for part in text.split(":"):
        if not part.strip().isdigit():
            return 0
        seconds = seconds * 60 + int(part)
    return seconds


def call_rows(value: object) -> list[CallRecord]:
    out = []
    for row in _rows(value, "termux-call-log"):
        number, date = str(row.get("phone_number", "") or ""), str(row.get("date", ""))
        kind = _CALL_KINDS.get(str(row.get("type", "")), "incoming")
        name = str(row.get("name", "") or "")
        out.append(
            CallRecord(
                id=stable_id(date, number, kind),
                number=number,
                kind=kind,
                date_ms=local_ms(date),
                duration_s=_duration_s(str(row.get("duration", ""))),
                name="" if name == "UNKNOWN_CALLER" else name,
            )
        )
    return out


def notification_rows(value: object) -> list[Notification]:
    out = []
    for row in _rows(value, "termux-notification-list"):
        package = str(row.get("packageName", "") or "")
        key = str(row.get("key", "") or "") or f"{package}|{row.get('id', '')}|{row.get('tag', '')}"
        out.append(
            Notification(
                key=key,
                package=package,
                title=str(row.get("title", "") or ""),
                text=str(row.get("content", "") or ""),
                posted_ms=local_ms(str(row.get("when", ""))),
            )
        )
    return out


def battery(value: object) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise DeviceUnavailable(f"termux-battery-status printed {type(value).__name__}, not an object")
    return value


def on_battery(status: dict[str, Any]) -> bool:
    return str(status.get("plugged", "")) == "UNPLUGGED"


_PLUGGED: dict[str, Plugged] = {
    "PLUGGED_AC": "ac",
    "PLUGGED_USB": "usb",
    "PLUGGED_WIRELESS": "wireless",
    "PLUGGED_DOCK": "dock",
    "UNPLUGGED": "none",
}
_BATTERY_STATUS: dict[str, BatteryStatus] = {
    "CHARGING": "charging",
    "DISCHARGING": "discharging",
    "FULL": "full",
    "NOT_CHARGING": "not_charging",
    "UNKNOWN": "unknown",
}


def battery_fields(
    status: dict[str, Any],
) -> tuple[int | None, BatteryStatus | None, Plugged | None, float | None]:
    """(level in percent, status, what powers it, °C) from termux-battery-status, each None when
    the answer lacks it (or holds something other than a number)."""
    percent = status.get("percentage")
    level = percent if isinstance(percent, int) and not isinstance(percent, bool) else None
    temperature = status.get("temperature")
    celsius = (
        round(float(temperature), 1)
        if isinstance(temperature, (int, float)) and not isinstance(temperature, bool)
        else None
    )
    return (
        level,
        _BATTERY_STATUS.get(str(status.get("status", ""))),
        _PLUGGED.get(str(status.get("plugged", ""))),
        celsius,
    )


def wifi_connection(value: object) -> tuple[bool | None, bool | None, str | None]:
    """(enabled, connected, SSID) from termux-wifi-connectioninfo: enabled is known only when
    connected (COMPLETED) or when the supplicant says the interface is off (INTERFACE_DISABLED)."""
    if not isinstance(value, dict):
        return None, None, None
    if "API_ERROR" in value:
        return None, False, None
    state = str(value.get("supplicant_state", ""))
    if state == "INTERFACE_DISABLED":
        return False, False, None
    connected = state == "COMPLETED"
    ssid = str(value.get("ssid") or "")
    named = ssid if connected and ssid and ssid != "<unknown ssid>" else None
    return (True if connected else None), connected, named
