"""Every action that takes a selector or a ref acts on it in one device round trip on adb (issue
17): the phone resolves the selector as it acts (a JSON-RPC batch to uiautomator2's server), and
a ref whose element is gone answers ELEMENT_NOT_FOUND having done nothing. Through gRPC, against
the fake adbd and phone behind the real adb server; streams counted at the fake adbd, the
action's own work only (settle_ms=0: settling's looks are counted in test_e2e_actions)."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.device.adb.conftest import AdbServe, Served
from tests.fakes import apps, seed
from tests.fakes.phone import FakePhone

KEEP_FIELD = "com.google.android.keep:id/edit_note_text"
NO_SETTLE = {"settle_ms": "0"}


def _ref(screen: str, label: str) -> str:
    [line] = [line for line in screen.splitlines() if f'"{label}"' in line]
    return line.split()[0]


async def _streams(s: Served, action: str, params: dict[str, str]) -> tuple[list[str], dict[str, Any]]:
    before = len(s.opened())
    result: dict[str, Any] = await s.client.ok(action, {**params, **NO_SETTLE})
    return s.opened()[before:], result


async def test_long_press_by_ref_is_one_round_trip(serve_adb: AdbServe) -> None:
    s = await serve_adb()
    ref = _ref((await s.client.ok("DUMP_UI"))["screen"], "Keep Notes")
    taps = len(s.state.log.taps)
    streams, pressed = await _streams(s, "LONG_PRESS", {"ref": ref})
    assert streams == ["tcp:9008"] and pressed["element"]["text"] == "Keep Notes"
    assert len(s.state.log.taps) == taps + 1 and s.state.log.rpc[-1].method == "longClick"


async def test_long_press_for_a_given_time_looks_then_presses(serve_adb: AdbServe) -> None:
    s = await serve_adb()
    streams, _ = await _streams(s, "LONG_PRESS", {"text": "Keep Notes", "duration_ms": "1500"})
    assert (
        len(streams) == 2
    )  # the element, then a press held as long as asked (uiautomator2 has no one-call form)
    assert s.state.log.taps[-1].duration_ms == 1500


async def test_clear_text_by_selector_is_one_round_trip(serve_adb: AdbServe) -> None:
    s = await serve_adb()
    await s.client.ok("OPEN_APP", {"package": seed.KEEP})
    await s.client.ok("TYPE_TEXT", {"text": "to be cleared", "resource_id": KEEP_FIELD})
    streams, cleared = await _streams(s, "CLEAR_TEXT", {"resource_id": KEEP_FIELD})
    assert streams == ["tcp:9008"]  # found, focused, emptied and read again in one batch
    assert cleared["verified"] is True


async def test_type_text_by_selector_is_three_round_trips(serve_adb: AdbServe) -> None:
    state = seed.default_state()
    u2 = seed.u2_app_package()
    state.packages[u2.name] = u2
    s = await serve_adb(FakePhone(state))
    await s.client.ok("OPEN_APP", {"package": seed.KEEP})
    streams, typed = await _streams(s, "TYPE_TEXT", {"text": "Olá 你好 🚲", "resource_id": KEEP_FIELD})
    # The field found and focused (one batch), the keyboard's script, the read back.
    assert len(streams) == 3, streams
    assert typed["verified"] is True and typed["via"] == "uiautomator2 ime"


async def test_wait_for_an_element_that_appears_is_one_round_trip(serve_adb: AdbServe) -> None:
    s = await serve_adb()
    before = len(s.opened())
    s.state.u2.waiting.clear()

    async def open_later() -> None:
        # The element appears while the phone waits for it.
        assert await asyncio.to_thread(s.state.u2.waiting.wait, 10), "the phone never waited"
        apps.launch_package(s.state, seed.KEEP, source="test")

    opener = asyncio.create_task(open_later())
    waited = await s.client.ok("WAIT_FOR", {"resource_id": KEEP_FIELD}, timeout_ms=5000)
    await opener
    assert s.opened()[before:] == ["tcp:9008"]  # waitForExists and objInfo in one batch
    assert waited["element"]["resource_id"] == KEEP_FIELD


async def test_wait_for_gone_is_waited_for_by_the_phone(serve_adb: AdbServe) -> None:
    s = await serve_adb()
    await s.client.ok("OPEN_APP", {"package": seed.KEEP})
    before = len(s.opened())
    s.state.u2.waiting.clear()

    async def leave_later() -> None:
        # The element goes while the phone waits.
        assert await asyncio.to_thread(s.state.u2.waiting.wait, 10), "the phone never waited"
        apps.launch_package(s.state, seed.LAUNCHER, source="test")

    leaver = asyncio.create_task(leave_later())
    waited = await s.client.ok("WAIT_FOR", {"resource_id": KEEP_FIELD, "gone": "true"}, timeout_ms=5000)
    await leaver
    assert waited["gone"] is True and waited["waited_ms"] > 0, waited
    assert s.opened()[before:] == ["tcp:9008"] and s.state.log.rpc[-1].method == "waitUntilGone"


async def test_a_stale_ref_acts_on_nothing_whatever_the_action(serve_adb: AdbServe) -> None:
    s = await serve_adb()
    await s.client.ok("OPEN_APP", {"package": seed.KEEP})
    screen = (await s.client.ok("DUMP_UI"))["screen"]
    field_ref = next(line.split()[0] for line in screen.splitlines() if "edit_note_text" in line)
    await s.client.ok("PRESS_KEY", {"key": "HOME"})  # the note and its field are gone
    taps, texts = len(s.state.log.taps), len(s.state.log.texts)
    for action, params in (
        ("TAP", {"ref": field_ref}),
        ("LONG_PRESS", {"ref": field_ref}),
        ("CLEAR_TEXT", {"ref": field_ref}),
        ("TYPE_TEXT", {"ref": field_ref, "text": "nowhere"}),
    ):
        response = await s.client.execute(action, {**params, **NO_SETTLE})
        assert not response.success and response.error.startswith("ELEMENT_NOT_FOUND: "), (action, response)
    assert len(s.state.log.taps) == taps and len(s.state.log.texts) == texts


async def test_gestures_at_coordinates_and_keys_are_one_round_trip(serve_adb: AdbServe) -> None:
    """Android 11+: `input` in the one script that checks the front first."""
    s = await serve_adb()
    taps, keys = len(s.state.log.taps), len(s.state.log.keys)
    for action, params in (
        ("TAP", {"x": "360", "y": "1000"}),
        ("LONG_PRESS", {"x": "360", "y": "1000", "duration_ms": "900"}),
        ("SWIPE", {"x1": "360", "y1": "900", "x2": "360", "y2": "300"}),
        ("PRESS_KEY", {"key": "ENTER"}),
    ):
        streams, _ = await _streams(s, action, params)
        assert len(streams) == 1 and streams[0].startswith("shell,v2:f=$(dumpsys window windows"), (
            action,
            streams,
        )
    assert len(s.state.log.taps) == taps + 2 and s.state.log.taps[-1].duration_ms == 900
    assert len(s.state.log.keys) == keys + 1 and s.state.log.keys[-1].code == 66


async def test_before_android_11_a_gesture_reads_the_front_then_acts(serve_adb: AdbServe) -> None:
    """`input` starts a VM a time there: the front read, then uiautomator2's tap."""
    state = seed.default_state()
    state.props["ro.build.version.sdk"] = "29"
    s = await serve_adb(FakePhone(state))
    streams, _ = await _streams(s, "TAP", {"x": "360", "y": "1000"})
    assert streams == ["shell,v2:dumpsys window windows", "tcp:9008"]
    await s.client.ok("DUMP_UI")  # the agent looks: what comes to the front now is the owner's doing
    apps.launch_package(s.state, seed.SETTINGS, source="test")
    taps = len(s.state.log.taps)
    response = await s.client.execute("TAP", {"x": "360", "y": "1000", **NO_SETTLE})
    assert response.error.startswith("PERMISSION_DENIED: TAP: com.android.settings is in front")
    assert len(s.state.log.taps) == taps
