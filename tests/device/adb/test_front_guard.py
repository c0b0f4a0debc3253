"""The owner's controls on adb, checked by the phone in the action's own command (front_guard.py):
no UI action runs while one of the owner's apps (Settings, the notification shade...) is in
front, and none costs a device round trip of its own for the check. Through gRPC, against the
fake adbd and phone behind the real adb server; streams counted at the fake adbd."""

from __future__ import annotations

import pytest

from tests.device.adb.conftest import AdbServe, Served
from tests.fakes import apps, seed
from tests.fakes.phone import FakePhone

KEEP_FIELD = "com.google.android.keep:id/edit_note_text"
NO_SETTLE = {"settle_ms": "0"}  # the action's own device work; settling's looks are test_settle's


def _ref(screen: str, label: str) -> str:
    [line] = [line for line in screen.splitlines() if f'"{label}"' in line]
    return line.split()[0]


def _with_ime() -> FakePhone:
    state = seed.default_state()
    u2 = seed.u2_app_package()
    state.packages[u2.name] = u2
    return FakePhone(state)


async def _refused(s: Served, action: str, params: dict[str, str]) -> str:
    response = await s.client.execute(action, {**params, **NO_SETTLE})
    assert not response.success
    return response.error


async def test_typing_checks_the_front_in_its_own_script(serve_adb: AdbServe) -> None:
    s = await serve_adb(_with_ime())
    await s.client.ok("OPEN_APP", {"package": seed.KEEP})
    await s.client.ok("TAP", {"resource_id": KEEP_FIELD})
    apps.launch_package(s.state, seed.SETTINGS, source="test")  # the owner opened Settings
    texts, before = len(s.state.log.texts), len(s.opened())
    error = await _refused(s, "TYPE_TEXT", {"text": "switch the guard off"})
    assert error.startswith("PERMISSION_DENIED: TYPE_TEXT: com.android.settings is in front"), error
    assert len(s.state.log.texts) == texts  # nothing typed
    assert len(s.opened()) - before == 1  # the script alone: its check refused, and it typed nothing
    assert s.state.setting("secure", "default_input_method") == seed.LATIN_IME  # never switched


async def test_a_tap_by_selector_finds_nothing_of_an_owners_app_in_front(serve_adb: AdbServe) -> None:
    s = await serve_adb()
    apps.launch_package(s.state, seed.SETTINGS, source="test")
    taps = len(s.state.log.taps)
    screen = (await s.client.ok("DUMP_UI"))["screen"]
    label = next(line.split('"')[1] for line in screen.splitlines() if '"' in line and "Settings" not in line)
    error = await _refused(s, "TAP", {"text": label})
    assert error.startswith("PERMISSION_DENIED: TAP: com.android.settings is in front"), error
    error = await _refused(s, "TAP", {"ref": _ref(screen, label)})
    assert error.startswith("PERMISSION_DENIED: TAP: the element is com.android.settings's"), error
    error = await _refused(s, "TAP", {"x": "100", "y": "400"})
    assert error.startswith("PERMISSION_DENIED: TAP: com.android.settings is in front"), error
    assert len(s.state.log.taps) == taps


async def test_a_stale_ref_under_the_shade_taps_nothing(serve_adb: AdbServe) -> None:
    s = await serve_adb()
    ref = _ref((await s.client.ok("DUMP_UI"))["screen"], "Keep Notes")
    s.state.shade_open = True  # pulled down over the launcher: its Approve buttons are a tap away
    taps = len(s.state.log.taps)
    for action, params in (
        ("TAP", {"ref": ref}),
        ("TAP", {"text": "Keep Notes"}),
        ("LONG_PRESS", {"text": "Keep Notes"}),
        ("CLEAR_TEXT", {}),
        ("SWIPE", {"direction": "up"}),
        ("PRESS_KEY", {"key": "ENTER"}),
    ):
        error = await _refused(s, action, params)
        assert error.startswith(f"PERMISSION_DENIED: {action}: the notification shade"), (action, error)
    assert len(s.state.log.taps) == taps and s.state.shade_open
    s.state.shade_open = False
    await s.client.ok("TAP", {"ref": ref})  # the same ref, the shade gone: it acts again
    assert s.state.foreground().package == seed.KEEP


@pytest.mark.parametrize(
    ("action", "params"),
    [
        ("TAP", {"text": "Keep Notes"}),
        ("LONG_PRESS", {"text": "Keep Notes"}),
    ],
)
async def test_an_action_on_a_selector_is_one_round_trip(
    serve_adb: AdbServe, action: str, params: dict[str, str]
) -> None:
    s = await serve_adb()
    before, taps = len(s.opened()), len(s.state.log.taps)
    result = await s.client.ok(action, {**params, **NO_SETTLE})
    assert s.opened()[before:] == ["tcp:9008"]  # looked up, checked and pressed in one batch
    assert result["element"]["text"] == "Keep Notes"
    assert len(s.state.log.taps) == taps + 1


async def test_the_owner_drives_the_owners_apps(serve_adb: AdbServe) -> None:
    """The guard is the agent's: the owner's own calls (the gateway's owner) are not guarded. Here
    a caller whose owner_apps leave Settings out taps in Settings, in one round trip too."""
    s = await serve_adb(owner_apps=frozenset({"ai.lemon.iris"}))
    apps.launch_package(s.state, seed.SETTINGS, source="test")
    screen = (await s.client.ok("DUMP_UI"))["screen"]
    label = next(line.split('"')[1] for line in screen.splitlines() if '"' in line)
    before = len(s.opened())
    await s.client.ok("TAP", {"text": label, **NO_SETTLE})
    assert s.opened()[before:] == ["tcp:9008"]
