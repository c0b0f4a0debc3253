"""A gesture at coordinates lands only on the screen its caller read (screen/stale.py), and the
front is read by window (an "isn't responding" dialog about the System UI is a system dialog,
not the notification shade): through gRPC, against the fake phone behind the real adb server,
the check in the gesture's own shell command (streams counted at the fake adbd)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from phoneuse_runtime.device.adb import dumpsys
from phoneuse_runtime.rpc import protocol_pb2 as pb
from tests.conftest import TOKEN
from tests.device.adb.conftest import AdbServe
from tests.fakes import seed
from tests.fakes.golden import golden
from tests.fakes.phone import FakePhone
from tests.fakes.state import SystemDialog
from tests.waiting import wait_until

NO_SETTLE = {"settle_ms": "0"}


async def test_an_anr_dialog_about_the_system_ui_is_not_the_shade(serve_adb: AdbServe) -> None:
    s = await serve_adb()
    s.state.dialog = SystemDialog("anr", seed.SYSTEMUI, "System UI")
    screen = (await s.client.ok("DUMP_UI"))["screen"]
    assert "System UI isn't responding" in screen
    [wait] = [
        e for e in (await s.client.ok("DUMP_UI", {"format": "json"}))["elements"] if e["text"] == "Wait"
    ]
    left, top, right, bottom = wait["bounds"]
    taps = len(s.state.log.taps)
    # At its point: the phone's own script reads the focused window (was PERMISSION_DENIED: "the
    # notification shade or lock screen is in front", its title naming com.android.systemui).
    await s.client.ok("TAP", {"x": str((left + right) // 2), "y": str((top + bottom) // 2), **NO_SETTLE})
    assert s.state.dialog is None and len(s.state.log.taps) == taps + 1
    assert s.state.log.taps[-1].source == "input"


async def test_a_tap_aimed_at_a_screen_gone_behind_a_dialog_is_not_done(serve_adb: AdbServe) -> None:
    s = await serve_adb()
    await s.client.ok("DUMP_UI")  # the launcher's screen
    s.state.dialog = SystemDialog("anr", seed.MESSAGES, "Messages")  # comes up over it
    taps, before = len(s.state.log.taps), len(s.opened())
    for action, params in (
        ("TAP", {"x": "360", "y": "640"}),
        ("LONG_PRESS", {"x": "360", "y": "640"}),
        ("SWIPE", {"x1": "360", "y1": "900", "x2": "360", "y2": "300"}),
    ):
        response = await s.client.execute(action, {**params, **NO_SETTLE})
        assert not response.success
        assert response.error == (
            'STALE_SCREEN: a system dialog ("Application Not Responding: com.google.android.apps.messaging") '
            f"is in front now, not {seed.LAUNCHER} of your last screen; read the screen again"
        ), (action, response.error)
    assert len(s.state.log.taps) == taps and s.state.dialog is not None  # nothing touched the dialog
    assert len(s.opened()) - before == 3  # one shell command each: the check costs no round trip
    # Opted out, the tap is done whatever is in front.
    await s.client.ok("TAP", {"x": "0", "y": "0", "check_screen": "false", **NO_SETTLE})
    assert len(s.state.log.taps) == taps + 1
    # Having read the screen again, the caller aims at the dialog.
    await s.client.ok("DUMP_UI")
    await s.client.ok("TAP", {"x": "360", "y": "640", **NO_SETTLE})


async def test_a_system_dialog_is_one_event_per_appearance(serve_adb: AdbServe) -> None:
    s = await serve_adb(poll_ms=3_600_000)  # the screen reads alone: the events' poll never ticks
    stream = s.client.stub.Subscribe(
        pb.SubscribeRequest(subscriber_id="dialogs", event_types=["SYSTEM_DIALOG"]),
        metadata=(("authorization", f"Bearer {TOKEN}"),),
    )
    got: list[dict[str, Any]] = []

    async def read() -> None:
        async for event in stream:
            got.append(json.loads(event.payload_json))
            if got[-1]["kind"] == "permission":
                return

    reader = asyncio.ensure_future(read())
    await s.client.ok("OPEN_APP", {"package": seed.MESSAGES})  # the phone's app list is read once
    s.state.dialog = SystemDialog("anr", seed.MESSAGES, "Messages")
    await s.client.ok("DUMP_UI")
    await s.client.ok("DUMP_UI")  # the same dialog, still up: no second event
    s.state.dialog = None
    await s.client.ok("DUMP_UI")
    s.state.dialog = SystemDialog("crash", seed.MESSAGES, "Messages")
    await s.client.ok("DUMP_UI")
    s.state.dialog = SystemDialog("permission", seed.MESSAGES, "Messages")
    await s.client.ok("DUMP_UI")
    await asyncio.wait_for(reader, 10)
    stream.cancel()
    assert [(e["kind"], e["label"], e["package"]) for e in got] == [
        ("anr", "Messages", seed.MESSAGES),
        ("crash", "Messages", seed.MESSAGES),
        ("permission", "Messages", seed.MESSAGES),
    ]
    assert got[0]["title"] == "Messages isn't responding" and got[0]["buttons"] == ["Close app", "Wait"]
    assert got[2]["buttons"] == ["While using the app", "Only this time", "Don't allow"]


async def test_the_permission_prompt_is_the_owners(serve_adb: AdbServe) -> None:
    s = await serve_adb()
    s.state.dialog = SystemDialog("permission", seed.MESSAGES, "Messages")
    await s.client.ok("DUMP_UI")
    taps = len(s.state.log.taps)
    response = await s.client.execute("TAP", {"text": "While using the app", **NO_SETTLE})
    assert not response.success and response.error.startswith("PERMISSION_DENIED"), response.error
    response = await s.client.execute("TAP", {"x": "360", "y": "640", **NO_SETTLE})
    assert not response.success and response.error.startswith("PERMISSION_DENIED"), response.error
    assert len(s.state.log.taps) == taps and s.state.dialog is not None


async def test_the_owner_may_have_anr_dialogs_answered(serve_adb: AdbServe) -> None:
    s = await serve_adb(error_dialogs="wait")
    s.state.dialog = SystemDialog("anr", seed.MESSAGES, "Messages")
    await s.client.ok("DUMP_UI")  # the screen read finds it: the runtime presses Wait
    await wait_until(lambda: s.state.dialog is None, what="the ANR dialog answered with Wait")
    assert s.state.log.taps[-1].target == "android:id/aerr_wait"
    s.state.dialog = SystemDialog("permission", seed.MESSAGES, "Messages")
    await s.client.ok("DUMP_UI")
    await s.client.ok("DUMP_UI")  # a look the runtime's answer would have come before
    assert s.state.dialog is not None  # a permission prompt is the owner's: never answered


async def test_error_dialogs_is_checked_when_loaded() -> None:
    from phoneuse_runtime.config.settings import Settings, problems

    assert ("error_dialogs", "must be one of report, wait, close, got 'tap'") in problems(
        Settings(error_dialogs="tap")
    )


async def test_the_events_poll_finds_a_dialog_while_somebody_listens(serve_adb: AdbServe) -> None:
    s = await serve_adb()
    stream = s.client.stub.Subscribe(
        pb.SubscribeRequest(subscriber_id="dialogs", event_types=["SYSTEM_DIALOG"]),
        metadata=(("authorization", f"Bearer {TOKEN}"),),
    )
    got: list[dict[str, Any]] = []

    async def read() -> None:
        async for event in stream:
            got.append(json.loads(event.payload_json))
            return

    reader = asyncio.ensure_future(read())
    s.state.dialog = SystemDialog("anr", seed.MESSAGES, "Messages")  # nobody reads the screen
    await asyncio.wait_for(reader, 10)
    stream.cancel()
    assert got == [
        {
            "kind": "anr",
            "package": seed.MESSAGES,
            "label": "",  # no app list read yet: the poll reads only the window
            "title": f"Application Not Responding: {seed.MESSAGES}",
            "buttons": [],
        }
    ]


async def test_a_fresh_tap_is_one_shell_command_and_before_android_11_the_read_it_makes(
    serve_adb: AdbServe,
) -> None:
    s = await serve_adb()
    await s.client.ok("DUMP_UI")
    before = len(s.opened())
    await s.client.ok("TAP", {"x": "360", "y": "1000", **NO_SETTLE})
    assert len(s.opened()) - before == 1  # the check and the tap in one script
    state = seed.default_state()
    state.props["ro.build.version.sdk"] = "29"  # `input` starts a VM a time: the front read, then u2's tap
    old = await serve_adb(FakePhone(state))
    await old.client.ok("DUMP_UI")
    old.state.dialog = SystemDialog("crash", seed.MESSAGES, "Messages")
    taps = len(old.state.log.taps)
    response = await old.client.execute("TAP", {"x": "360", "y": "1000", **NO_SETTLE})
    assert response.error.startswith('STALE_SCREEN: a system dialog ("Application Error: '), response.error
    assert len(old.state.log.taps) == taps


# A real `dumpsys window` (the MediaTek board's, Android 13), its focused window made the ANR
# dialog about the System UI with AOSP's own title: the rest of the capture as the phone printed it.
REAL_WINDOW = "window_mtk-tb8168p1_android13_asleep.txt"
ANR_TITLE = "Application Not Responding: com.android.systemui"


def _anr_over_the_camera() -> str:
    real = golden("dumpsys", REAL_WINDOW)
    assert "u0 NotificationShade}" in real
    return real.replace("u0 NotificationShade}", f"u0 {ANR_TITLE}}}")


def test_the_real_window_dump_with_an_anr_dialog_is_the_systems_window() -> None:
    assert dumpsys.parse_window_focus(_anr_over_the_camera()) == ("android", ANR_TITLE)
    # As captured (the shade focused, asleep), the System UI's.
    assert dumpsys.parse_window_focus(golden("dumpsys", REAL_WINDOW)) == (
        dumpsys.SYSTEM_UI,
        "NotificationShade",
    )


async def test_on_the_real_window_dump_a_tap_is_not_taken_for_the_shades(serve_adb: AdbServe) -> None:
    s = await serve_adb()
    s.state.printed["dumpsys window windows"] = _anr_over_the_camera()
    taps = len(s.state.log.taps)
    # The camera (mFocusedApp) is no owner's app, and the dialog's window is the system's: the tap
    # runs (it was PERMISSION_DENIED, "the notification shade or lock screen is in front").
    await s.client.ok("TAP", {"x": "360", "y": "640", **NO_SETTLE})
    assert len(s.state.log.taps) == taps + 1
    # Aimed at a screen read before the dialog came up, it is stale, named by the real window's title.
    await s.client.ok("DUMP_UI")
    response = await s.client.execute("TAP", {"x": "360", "y": "640", **NO_SETTLE})
    assert response.error.startswith(f'STALE_SCREEN: a system dialog ("{ANR_TITLE}") is in front now'), (
        response.error
    )
