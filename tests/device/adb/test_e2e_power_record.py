"""WAKE, SLEEP, UNLOCK, keep_awake and SCREEN_RECORD_START/STOP through gRPC on
`--device adb:127.0.0.1:PORT`, against the fake phone behind the real adb server (issue 27): each
read back from the phone, a secure lock refused before it is touched."""

from __future__ import annotations

import pytest

from tests.device.adb.conftest import AdbServe
from tests.fakes.phone import FakePhone
from tests.fakes.power_cmds import MP4_HEAD
from tests.waiting import wait_until


async def test_sleep_wake_and_unlock_read_back_from_the_phone(serve_adb: AdbServe) -> None:
    s = await serve_adb()
    c = s.client
    slept = await c.ok("SLEEP")
    assert (slept["awake"], slept["locked"], slept["secure"], slept["verified"]) == (False, True, False, True)
    assert slept["via"] == "input keyevent KEYCODE_SLEEP" and s.state.screen_on is False
    assert s.state.log.keys[-1].code == 223  # KEYCODE_SLEEP
    woken = await c.ok("WAKE")
    assert (woken["awake"], woken["locked"], woken["verified"]) == (True, True, True)
    assert s.state.log.keys[-1].code == 224
    unlocked = await c.ok("UNLOCK")
    assert (unlocked["awake"], unlocked["locked"], unlocked["verified"]) == (True, False, True)
    assert unlocked["via"] == "wm dismiss-keyguard"  # awake already: only dismissed
    assert s.state.locked is False
    assert any("wm dismiss-keyguard" in line for line in s.opened())


async def test_unlock_from_asleep_wakes_first(serve_adb: AdbServe) -> None:
    s = await serve_adb()
    await s.client.ok("SLEEP")
    unlocked = await s.client.ok("UNLOCK")
    assert unlocked["verified"] is True and s.state.screen_on and not s.state.locked


@pytest.mark.parametrize("lock", ["pin", "pattern", "password"])
async def test_unlock_refuses_a_secure_lock_and_never_touches_it(serve_adb: AdbServe, lock: str) -> None:
    phone = FakePhone()
    phone.state.lock_screen = lock  # type: ignore[assignment]
    phone.state.locked = True
    s = await serve_adb(phone)
    typed_before, keys_before = len(s.state.log.texts), len(s.state.log.keys)
    response = await s.client.execute("UNLOCK")
    assert not response.success
    assert response.error.startswith(
        "OWNER_MUST_UNLOCK: UNLOCK: the lock screen has a PIN, pattern or password"
    )
    assert s.state.locked is True
    assert not any("dismiss-keyguard" in line for line in s.opened())
    assert len(s.state.log.texts) == typed_before and len(s.state.log.keys) == keys_before


async def test_unlock_before_android_8_dismisses_with_menu(serve_adb: AdbServe) -> None:
    phone = FakePhone()
    phone.state.props["ro.build.version.sdk"] = "25"
    phone.state.props["ro.build.version.release"] = "7.1.1"
    phone.state.locked = True
    s = await serve_adb(phone)
    assert (await s.client.ok("UNLOCK"))["locked"] is False
    assert s.state.log.keys[-1].code == 82
    assert not any("dismiss-keyguard" in line for line in s.opened())


async def test_keep_awake_sets_stay_on_and_puts_it_back_at_stop(serve_adb: AdbServe) -> None:
    phone = FakePhone()
    phone.state.settings.setdefault("global", {})["stay_on_while_plugged_in"] = "2"  # the owner's: USB
    s = await serve_adb(phone, keep_awake=True)
    await wait_until(lambda: s.state.setting("global", "stay_on_while_plugged_in") == "7", what="stay on")
    await s.client.app.stop(grace_s=0)
    assert s.state.setting("global", "stay_on_while_plugged_in") == "2"


async def test_keep_awake_off_leaves_the_setting_alone(serve_adb: AdbServe) -> None:
    s = await serve_adb()
    before = s.state.setting("global", "stay_on_while_plugged_in")
    await s.client.ok("WAKE")
    await s.client.app.stop(grace_s=0)
    assert s.state.setting("global", "stay_on_while_plugged_in") == before
    assert not s.state.log.ran("svc") and not any("stay_on" in line for line in s.state.log.shell)


async def test_a_recording_is_started_stopped_by_sigint_and_read_back(serve_adb: AdbServe) -> None:
    s = await serve_adb()
    c = s.client
    started = await c.ok("SCREEN_RECORD_START", {"max_s": "60", "size": "720x1280", "bit_rate": "4000000"})
    path = started["path"]
    assert path.startswith("/sdcard/Movies/phoneuse-") and started["via"] == "screenrecord"
    assert any(
        "screenrecord --time-limit 60 --size 720x1280 --bit-rate 4000000" in line for line in s.opened()
    )
    assert [p.name for p in s.state.shell_processes.values()] == ["screenrecord"]
    busy = await c.execute("SCREEN_RECORD_START")
    assert not busy.success and busy.error.startswith(
        "CONFLICT: a screen recording is already running (" + path
    )
    stopped = await c.ok("SCREEN_RECORD_STOP")
    assert (stopped["path"], stopped["ended"], stopped["verified"]) == (path, "stopped", True)
    data = s.state.files.read(path)
    assert data.startswith(MP4_HEAD) and stopped["size"] == len(data)
    assert not s.state.shell_processes  # SIGINT ended it
    assert (await c.execute("SCREEN_RECORD_STOP")).error.startswith("INVALID_PARAMS: no screen recording")


async def test_a_recording_ends_at_its_limit_and_is_still_answered(serve_adb: AdbServe) -> None:
    s = await serve_adb()
    started = await s.client.ok("SCREEN_RECORD_START", {"max_s": "1"})
    await wait_until(lambda: not s.state.shell_processes, what="screenrecord to reach its time limit")
    stopped = await s.client.ok("SCREEN_RECORD_STOP")
    assert (stopped["path"], stopped["ended"]) == (started["path"], "limit")
    assert stopped["duration_ms"] <= 1000 and stopped["size"] > len(MP4_HEAD)


async def test_a_recording_left_running_is_finished_at_shutdown(serve_adb: AdbServe) -> None:
    s = await serve_adb()
    started = await s.client.ok("SCREEN_RECORD_START", {"max_s": "180"})
    await s.client.app.stop(grace_s=0)
    await wait_until(lambda: not s.state.shell_processes, what="screenrecord to finish on SIGINT")
    assert s.state.files.read(started["path"]).startswith(MP4_HEAD)


async def test_screenrecord_refusing_a_size_is_answered_with_its_message(serve_adb: AdbServe) -> None:
    s = await serve_adb()
    response = await s.client.execute("SCREEN_RECORD_START", {"max_s": "181"})
    assert response.error.startswith("INVALID_PARAMS")  # refused by the params, before the phone
    assert not any("screenrecord" in line for line in s.opened())


async def test_unlock_where_the_phone_cannot_say_it_is_secure_reads_back_and_refuses(
    serve_adb: AdbServe,
) -> None:
    # Android 4.4's policy dump has no KeyguardServiceDelegate block: showing, but secure unknown.
    phone = FakePhone()
    phone.state.props["ro.build.version.sdk"] = "19"
    phone.state.props["ro.build.version.release"] = "4.4.2"
    phone.state.lock_screen, phone.state.locked = "pin", True
    phone.state.printed["dumpsys window policy"] = (
        "    mShowingLockscreen=true mShowingDream=false mDreamingLockscreen=false\n"
    )
    s = await serve_adb(phone)
    response = await s.client.execute("UNLOCK")
    assert response.error.startswith(
        "OWNER_MUST_UNLOCK: UNLOCK: the lock screen did not go away (the phone cannot say"
    )
    assert s.state.locked is True and s.state.log.keys[-1].code == 82  # MENU: no secret typed
    assert not s.state.log.texts


async def test_screenrecord_is_unsupported_before_android_4_4(serve_adb: AdbServe) -> None:
    phone = FakePhone()
    phone.state.props["ro.build.version.sdk"] = "18"
    phone.state.props["ro.build.version.release"] = "4.3"
    s = await serve_adb(phone)
    response = await s.client.execute("SCREEN_RECORD_START")
    assert response.error.startswith(
        "UNSUPPORTED: screenrecord needs Android 4.4 or later; this phone runs Android 4.3"
    )
    assert not s.state.log.ran("screenrecord")


async def test_unlock_on_an_asleep_secure_phone_does_not_even_wake_it(serve_adb: AdbServe) -> None:
    phone = FakePhone()
    phone.state.lock_screen, phone.state.locked, phone.state.screen_on = "password", True, False
    s = await serve_adb(phone)
    response = await s.client.execute("UNLOCK")
    assert response.error.startswith("OWNER_MUST_UNLOCK: ")
    assert s.state.screen_on is False and not s.state.log.keys
