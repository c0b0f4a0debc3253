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
  "UNPLUGGED", "status": "DISCHARGING", "temperature": 25.5, "percentage": 80, ...}`.

Dates are the phone's local time, to the second ("yyyy-MM-dd HH:mm:ss"); this process runs on
the phone, in its time zone, so they are read as local time.
"""

from __future__ import annotations

import hashlib
import time
from typing import Any

from phoneuse_runtime.device.base import CallRecord, Contact, Notification, SmsBox, SmsMessage
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


def screen_state(dumpsys_power: str) -> bool | None:
    """The screen's state in `dumpsys power`: mWakefulness (Awake, Asleep, Dozing, Dreaming)."""
    for line in dumpsys_power.splitlines():
        text = line.strip()
        if text.startswith("mWakefulness="):
            return text.split("=", 1)[1].strip() in ("Awake", "Dreaming")
        if text.startswith("Display Power: state="):
            return text.split("=", 1)[1].strip() == "ON"
    return None
