"""The Termux backend's parsing on what Termux:API printed on real phones (the shared real
captures, tests/fakes/golden.py; skipped where they are absent)."""

from __future__ import annotations

import json

import pytest

from phoneuse_runtime.device.termux import commands, parse
from phoneuse_runtime.kernel.errors import PermissionDenied, Unsupported
from tests.fakes.golden import golden, golden_files


def _out(command: str, text: str) -> commands.Output:
    return commands.Output(command, text, "", 0)


def test_every_battery_capture_reads_and_says_whether_it_is_plugged() -> None:
    files = golden_files("termux", "battery-status_*.json")
    assert len(files) == 5
    for path in files:
        status = parse.battery(
            commands.parse_json(_out("termux-battery-status", path.read_text(encoding="utf-8")))
        )
        assert isinstance(status["percentage"], int), path.name
        assert parse.on_battery(status) == (status["plugged"] == "UNPLUGGED"), path.name


def test_a_real_permission_refusal_is_permission_denied_naming_it() -> None:
    text = golden("termux", "permission-denied_telephony-cellinfo_oppo-phy110_android16.json")
    with pytest.raises(PermissionDenied) as raised:
        commands.parse_json(_out("termux-telephony-cellinfo", text))
    assert "android.permission.ACCESS_COARSE_LOCATION" in raised.value.message
    assert "Termux:API > Permissions > ACCESS_COARSE_LOCATION > Allow" in raised.value.message


def test_the_play_builds_sms_refusal_is_unsupported_with_the_fix() -> None:
    (path,) = golden_files("termux", "sms-list_error_google-play-build_*.json")
    with pytest.raises(Unsupported) as raised:
        commands.parse_json(_out("termux-sms-list", path.read_text(encoding="utf-8")))
    assert "F-Droid or GitHub" in raised.value.message


def test_the_deviceinfo_capture_is_a_json_object() -> None:
    text = golden("termux", "telephony-deviceinfo_oppo-phy110_android16_redacted.json")
    value = commands.parse_json(_out("termux-telephony-deviceinfo", text))
    assert isinstance(value, dict) and value


def test_a_real_notification_list_reads_even_with_a_when_past_year_9999() -> None:
    """The capture's ongoing notification has `when` in the year 292269055 (Long.MAX_VALUE)."""
    text = golden("termux", "notification-list_sanitized-excerpt_termux-api-575.txt")
    # The paste is truncated after its first object (SOURCES.md): read that one, as a list.
    first = text[: text.index("\n    },")] + "\n    }\n]"
    rows = parse.notification_rows(json.loads(first))
    assert rows and rows[0].package == "com.example_organisation.app_name"
    assert rows[0].title == "Notification title" and rows[0].text == "Notification content"
    assert rows[0].posted_ms == 0  # unreadable as a time: none, rather than a failure
