"""Termux:API's failure modes over gRPC: permissions not granted, a command that never answers
(the Termux:API app missing), and a missing command."""

from __future__ import annotations

import os
import time
from pathlib import Path

import grpc
import pytest

from phoneuse_runtime.rpc import protocol_pb2 as pb
from tests.device.termux.conftest import TermuxServe
from tests.fakes.golden import golden_files
from tests.fakes.termux.state import FakeTermux


def _deny(termux: FakeTermux, *permissions: str) -> None:
    termux.update(lambda s: s["denied"].extend(f"android.permission.{p}" for p in permissions))


async def test_contacts_without_the_permission_is_permission_denied_naming_it(
    serve_termux: TermuxServe, termux: FakeTermux
) -> None:
    _deny(termux, "READ_CONTACTS")
    client = await serve_termux()
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await client.query(pb.CONTACTS, {"name": "bob"})
    assert raised.value.code() == grpc.StatusCode.PERMISSION_DENIED
    details = raised.value.details() or ""
    assert details.startswith(
        "PERMISSION_DENIED: termux-contact-list: Termux:API lacks android.permission.READ_CONTACTS"
    )
    assert "android.permission.READ_CONTACTS" in details and "Termux:API > Permissions > Contacts" in details


async def test_send_without_sms_permission_is_permission_denied_and_nothing_is_sent(
    serve_termux: TermuxServe, termux: FakeTermux
) -> None:
    _deny(termux, "SEND_SMS")
    client = await serve_termux()
    response = await client.execute("SEND_MESSAGE", {"to": "+14155550102", "body": "x"})
    assert response.error.startswith(
        "PERMISSION_DENIED: termux-sms-send: Termux:API lacks android.permission.SEND_SMS"
    )
    assert "Permissions > SMS" in response.error
    assert termux.state()["sent_log"] == []


async def test_a_send_whose_sent_box_is_unreadable_is_sent_unverified(
    serve_termux: TermuxServe, termux: FakeTermux
) -> None:
    _deny(termux, "READ_SMS")
    client = await serve_termux()
    result = await client.ok("SEND_MESSAGE", {"to": "+14155550102", "body": "blind"})
    assert (result["verified"], result["message_id"]) == (False, None)
    assert result["verify_error"].startswith(
        "the sent box cannot be read to verify the send: termux-sms-list"
    )
    assert "android.permission.READ_SMS" in result["verify_error"]
    assert termux.state()["sent_log"][0]["body"] == "blind"


async def test_call_without_the_phone_permission_is_permission_denied(
    serve_termux: TermuxServe, termux: FakeTermux
) -> None:
    _deny(termux, "CALL_PHONE")
    client = await serve_termux()
    response = await client.execute("MAKE_CALL", {"to": "+14155550102"})
    assert response.error.startswith("PERMISSION_DENIED: termux-telephony-call")
    assert "android.permission.CALL_PHONE" in response.error and "Permissions > Phone" in response.error
    assert termux.state()["dialed"] == []


async def test_a_hanging_command_times_out_at_the_deadline_and_the_next_call_works(
    serve_termux: TermuxServe, termux: FakeTermux
) -> None:
    termux.update(lambda s: s.update(hang=["termux-clipboard-set"]))
    client = await serve_termux()
    started = time.monotonic()
    response = await client.execute("SET_CLIPBOARD", {"text": "x"}, timeout_ms=800)
    took = time.monotonic() - started
    assert response.error.split(":")[0] in ("TIMEOUT", "DEVICE_UNAVAILABLE"), response.error
    assert took < 2.0  # within its deadline, not the command's own 10 s cap
    hung = [run for run in termux.state()["runs"] if run[0] == "termux-clipboard-set"]
    assert len(hung) == 1
    # The hung process was killed with its group: nothing of it is left running.
    assert not _running("termux-clipboard-set")
    termux.update(lambda s: s.update(hang=[]))
    result = await client.ok("SET_CLIPBOARD", {"text": "after"})
    assert result["verified"] is True and termux.state()["clipboard"] == "after"


async def test_without_the_termux_api_app_every_command_hangs_and_each_call_ends_in_time(
    serve_termux: TermuxServe, termux: FakeTermux
) -> None:
    client = await serve_termux()
    termux.update(lambda s: s.update(hang=["*"]))
    for action, params in (("MAKE_CALL", {"to": "+14155550102"}), ("SET_CLIPBOARD", {"text": "y"})):
        started = time.monotonic()
        response = await client.execute(action, params, timeout_ms=600)
        assert response.error.startswith("TIMEOUT: "), response.error
        assert time.monotonic() - started < 2.0
    termux.update(lambda s: s.update(hang=[]))
    assert (await client.ok("MAKE_CALL", {"to": "+14155550102"}))["via"] == "termux-telephony-call"


async def test_a_missing_command_is_unsupported_with_the_package_to_install(
    serve_termux: TermuxServe, termux: FakeTermux, monkeypatch: pytest.MonkeyPatch, tmp_path: os.PathLike[str]
) -> None:
    client = await serve_termux()
    monkeypatch.setenv("PATH", str(tmp_path))  # no termux-* at all
    response = await client.execute("SET_CLIPBOARD", {"text": "x"})
    assert response.error == (
        "UNSUPPORTED: termux-clipboard-set is not installed: pkg install termux-api (and install the "
        "Termux:API app)"
    )


def _running(name: str) -> bool:
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if name.encode() in f.read():
                    return True
        except OSError:
            continue
    return False


async def test_a_missing_getprop_is_androids_own_not_a_package_to_install(
    serve_termux: TermuxServe,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """getprop is /system/bin's: the warning says so, never `pkg install termux-api`."""
    import sys

    from tests.fakes.termux.state import BIN

    path = tmp_path / "bin"
    path.mkdir()
    for fake in BIN.iterdir():
        if fake.name != "getprop":
            (path / fake.name).symlink_to(fake)
    (path / "python3").symlink_to(sys.executable)  # what the fakes' `#!/usr/bin/env python3` runs
    monkeypatch.setenv("PATH", str(path))
    with caplog.at_level("WARNING", logger="phoneuse_runtime.device.termux.device"):
        await serve_termux()
    lines = [record.getMessage() for record in caplog.records]
    warned = [line for line in lines if "cannot read the phone's properties" in line]
    assert warned == [
        "cannot read the phone's properties (getprop is not on PATH: it is Android's own, "
        "/system/bin/getprop; add /system/bin to PATH (Termux's own shell has it; a service's "
        "environment may not))"
    ]


# The Google Play build of Termux:API answers its SMS commands with a refusal (captured:
# termux/sms-list_error_google-play-build_*.json); termux-sms-send's answer there is not captured,
# so the fake prints the same shape with the send's wording.
PLAY_SEND_REFUSAL = '{\n  "error": "Sending SMS is no longer permitted by Google"\n}\n'


def _play_build(termux: FakeTermux) -> None:
    listed = golden_files("termux", "sms-list_error_google-play-build_*.json")
    assert listed, "the capture of the Play build's termux-sms-list is missing"
    refusal = listed[0].read_text(encoding="utf-8")
    termux.update(
        lambda s: s["printed"].update({"termux-sms-list": refusal, "termux-sms-send": PLAY_SEND_REFUSAL})
    )


async def test_sms_on_termux_apis_play_build_is_unsupported_with_where_to_get_the_full_app(
    serve_termux: TermuxServe, termux: FakeTermux
) -> None:
    """A permanent refusal by the platform is UNSUPPORTED (not DEVICE_UNAVAILABLE, which says the
    phone cannot be reached), with the fix: Termux:API from F-Droid or GitHub."""
    _play_build(termux)
    client = await serve_termux()
    response = await client.execute("SEND_MESSAGE", {"to": "+14155550102", "body": "x"})
    assert response.error.startswith(
        "UNSUPPORTED: termux-sms-send: Termux:API said: Sending SMS is no longer"
    )
    assert "F-Droid or GitHub" in response.error
    assert termux.state()["sms"][-1]["body"] != "x"  # nothing sent
    # the phone is still there (not reported lost): the next call works
    await client.ok("SET_CLIPBOARD", {"text": "still here"})
    assert termux.state()["clipboard"] == "still here"
