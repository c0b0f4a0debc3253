"""The fake Termux:API's state: one JSON file that the fake `termux-*` executables (api.py) and the
test both read and write, each under an exclusive lock.

    phone = FakeTermux(tmp_path / "termux.json")        # seeded: a few contacts, SMS, calls
    monkeypatch.setenv("PATH", f"{BIN}:{os.environ['PATH']}"); phone.export(monkeypatch)
    phone.update(lambda s: s["denied"].append("android.permission.READ_SMS"))
    phone.receive_sms("+14155550101", "hi")             # arrives in the inbox
    phone.state()["dialed"]                             # what termux-telephony-call was given

Failure modes, as the real app shows them:
- `hang`: command names (or "*") that never answer, as every command does without the app;
- `denied`: permissions not granted: the command prints Termux:API's `{"error": ...}`;
- `notification_access: false`: termux-notification-list never answers (the app opens the
  settings instead, and returns nothing);
- `sms_send`: "ok" (a sent row appears), "silent" (exit 0, nothing stored: the phone did not
  send), or "failed" (a row in the failed box);
- `printed`: command name -> the text it prints instead of working (exit 0), e.g. a real
  capture of Termux:API's answer (tests/fakes/golden.py) such as the Google Play build's SMS refusal.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the fake commands import this module: no pytest at their start-up
    import pytest

BIN = Path(__file__).parent / "bin"
ENV = "FAKE_TERMUX_STATE"

NOW_MS = 1_767_000_000_000  # a fixed "now" for the seed rows (late 2025)


def seed() -> dict[str, Any]:
    return {
        "printed": {},
        "props": {
            "ro.product.model": "Pixel 7",
            "ro.product.manufacturer": "Google",
            "ro.build.version.release": "14",
            "ro.build.version.sdk": "34",
        },
        "contacts": [
            {"name": "Alice Johnson", "number": "+1 415 555 0101"},
            {"name": "Bob Smith", "number": "+1 415 555 0102"},
            {"name": "Bobby Tables", "number": "+1 415 555 0103"},
            {"name": "No Number", "number": None},
        ],
        "sms": [
            _sms(1, 1, "inbox", "+14155550101", "Lunch tomorrow?", NOW_MS - 3_600_000),
            _sms(2, 1, "sent", "+14155550101", "Sure, noon", NOW_MS - 3_500_000),
            _sms(3, 2, "inbox", "+14155550102", "Call me", NOW_MS - 60_000),
        ],
        "calls": [
            {
                "name": "Alice Johnson",
                "phone_number": "+14155550101",
                "type": "INCOMING",
                "date_ms": NOW_MS - 7_200_000,
                "duration_s": 62,
                "sim_id": "1",
            },
        ],
        "notifications": [
            {
                "id": 1,
                "tag": "",
                "key": "0|com.termux|1337|null|10123",
                "group": "",
                "packageName": "com.termux",
                "title": "Termux",
                "content": "1 session (wake lock held)",
                "when_ms": NOW_MS,
            }
        ],
        "clipboard": "",
        "battery": {
            "present": True,
            "technology": "Li-ion",
            "health": "GOOD",
            "plugged": "PLUGGED_AC",
            "status": "CHARGING",
            "temperature": 25.5,
            "voltage": 4200,
            "current": 500000,
            "percentage": 80,
            "level": 80,
            "scale": 100,
        },
        # termux-wifi-connectioninfo (issue 27); None: {"API_ERROR": "No current connection"}
        "wifi": {"ssid": "HomeNet", "supplicant_state": "COMPLETED"},
        "telephony": {
            "data_enabled": "true",
            "data_activity": "none",
            "data_state": "connected",
            "device_id": None,
            "device_software_version": "01",
            "phone_count": 1,
            "phone_type": "gsm",
            "network_operator": "310260",
            "network_operator_name": "T-Mobile",
            "network_country_iso": "us",
            "network_type": "lte",
            "network_roaming": False,
            "sim_country_iso": "us",
            "sim_operator": "310260",
            "sim_operator_name": "T-Mobile",
            "sim_serial_number": None,
            "sim_subscriber_id": None,
            "sim_state": "ready",
        },
        "denied": [],
        "hang": [],
        "notification_access": True,
        "sms_send": "ok",
        "sent_log": [],
        "dialed": [],
        "opened_urls": [],
        "toasts": [],
        "calls_made": 0,
        "runs": [],
        # the phone's settings (issue 27): stream -> [volume, max_volume], brightness 0..255
        "volumes": {
            "alarm": [6, 7],
            "music": [5, 15],
            "notification": [5, 7],
            "ring": [5, 7],
            "system": [5, 7],
            "call": [4, 5],
        },
        "brightness": 102,
        "brightness_auto": False,
        "wifi_enabled": True,
    }


def _sms(id_: int, thread: int, box: str, address: str, body: str, date_ms: int) -> dict[str, Any]:
    return {
        "_id": id_,
        "threadid": thread,
        "type": box,
        "read": True,
        "address": address,
        "body": body,
        "date_ms": date_ms,
    }


@contextlib.contextmanager
def locked(path: Path) -> Iterator[dict[str, Any]]:
    """The state, changed in place and written back when the block ends, under an exclusive lock."""
    with open(f"{path}.lock", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        state: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        yield state
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(state, ensure_ascii=False), encoding="utf-8")
        os.replace(tmp, path)


class FakeTermux:
    """The test's handle on the fake phone's state file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.write_text(json.dumps(seed(), ensure_ascii=False), encoding="utf-8")

    def export(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Puts the fake commands first on PATH and points them at this state."""
        monkeypatch.setenv(ENV, str(self.path))
        monkeypatch.setenv("PATH", f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")

    def state(self) -> dict[str, Any]:
        with locked(self.path) as state:
            return state

    def update(self, change: Callable[[dict[str, Any]], object]) -> None:
        with locked(self.path) as state:
            change(state)

    def receive_sms(self, address: str, body: str) -> int:
        with locked(self.path) as state:
            new_id = max((m["_id"] for m in state["sms"]), default=0) + 1
            state["sms"].append(_sms(new_id, 9, "inbox", address, body, int(time.time() * 1000)))
        return int(new_id)

    def post_notification(self, package: str, title: str, content: str, *, id_: int = 7) -> str:
        key = f"0|{package}|{id_}|null|10200"
        note = {
            "id": id_,
            "tag": "",
            "key": key,
            "group": "",
            "packageName": package,
            "title": title,
            "content": content,
            "when_ms": int(time.time() * 1000),
        }
        self.update(lambda s: s["notifications"].append(note))
        return key

    def log_call(self, number: str, kind: str = "MISSED", *, duration_s: int = 0) -> None:
        row = {
            "name": None,
            "phone_number": number,
            "type": kind,
            "date_ms": int(time.time() * 1000),
            "duration_s": duration_s,
            "sim_id": "1",
        }
        self.update(lambda s: s["calls"].append(row))
