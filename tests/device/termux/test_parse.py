"""Termux:API's JSON read into the Device records, including the shapes older versions print."""

from __future__ import annotations

import json

import pytest

from phoneuse_runtime.device.adb.status import parse_screen_on as screen_state
from phoneuse_runtime.device.termux import commands, parse
from phoneuse_runtime.kernel.errors import DeviceUnavailable, PermissionDenied

NEW_SMS = {
    "threadid": 3,
    "type": "sent",
    "read": True,
    "sender": "You",
    "address": "+1555",
    "number": "+1555",
    "received": "2026-01-02 03:04:05",
    "body": "hi",
    "_id": 12,
}
# Before 2025: no `address`, only `number`.
OLD_SMS = {"threadid": 4, "type": "inbox", "read": False, "number": "+1666", "body": "yo", "_id": 7}


def test_sms_rows_before_and_after_the_address_key() -> None:
    queued = dict(NEW_SMS, type="", _id=13)  # a queued message prints an empty type
    rows = parse.sms_rows([NEW_SMS, dict(OLD_SMS, received="2019-05-06 07:08:09"), queued])
    assert [(m.id, m.box, m.address, m.read) for m in rows] == [
        ("12", "sent", "+1555", True),
        ("7", "inbox", "+1666", False),
    ]
    assert parse.format_local(rows[0].date_ms) == "2026-01-02 03:04:05"


def _call(name: str, number: str, kind: str, date: str, duration: str) -> dict[str, object]:
    return {
        "name": name,
        "phone_number": number,
        "type": kind,
        "date": date,
        "duration": duration,
        "sim_id": "1",
    }


def test_call_rows_read_durations_and_unknown_callers() -> None:
    missed = _call("UNKNOWN_CALLER", "+1777", "MISSED", "2026-01-02 03:04:05", "00:00")
    rows = parse.call_rows([missed, _call("Ann", "+1888", "OUTGOING", "2026-01-02 04:00:00", "01:02:03")])
    assert [(r.name, r.kind, r.duration_s) for r in rows] == [("", "missed", 0), ("Ann", "outgoing", 3723)]
    # The same call has the same id on every read (the log prints none).
    assert rows[0].id == parse.call_rows([dict(missed, duration="00:00")])[0].id


def test_contact_rows_get_stable_ids() -> None:
    rows = parse.contact_rows([{"name": "Ann", "number": "+1"}, {"name": "Ann", "number": "+2"}])
    assert (
        rows[0].id != rows[1].id and rows[0].id == parse.contact_rows([{"name": "Ann", "number": "+1"}])[0].id
    )


def test_a_list_where_an_object_belongs_is_device_unavailable() -> None:
    with pytest.raises(DeviceUnavailable, match="termux-sms-list printed dict, not a list of objects"):
        parse.sms_rows({"a": 1})
    with pytest.raises(DeviceUnavailable, match="not JSON"):
        commands.parse_json(commands.Output("termux-sms-list", "oops", "", 0))


def test_the_permission_error_names_every_permission() -> None:
    text = json.dumps(
        {
            "error": "Please grant the following permissions to use this command: "
            "android.permission.READ_SMS ,android.permission.READ_CONTACTS"
        },
        indent=2,
    )
    with pytest.raises(PermissionDenied) as raised:
        commands.parse_json(commands.Output("termux-sms-list", text, "", 0))
    assert "android.permission.READ_SMS, android.permission.READ_CONTACTS" in raised.value.message
    assert "Permissions > Contacts, SMS > Allow" in raised.value.message


def test_the_screen_state_in_dumpsys_power() -> None:
    assert screen_state("  mWakefulness=Awake\n") is True
    assert screen_state("  mWakefulness=Asleep\n") is False
    assert screen_state("Display Power: state=OFF\n") is False
    assert screen_state("nothing here") is None
