"""`--device termux` and issue 27's power and recording actions: through the phone's own adb when
it answers (the adb backend, composed), UNSUPPORTED saying how to turn it on when it does not."""

from __future__ import annotations

from phoneuse_runtime.kernel.capabilities import POWER, SCREEN_RECORD
from tests.conftest import ServerFactory
from tests.device.termux.conftest import TermuxServe, own_adb_device
from tests.fakes.adb_server import FakeDeviceFactory
from tests.fakes.phone import FakePhone
from tests.fakes.power_cmds import MP4_HEAD
from tests.fakes.termux.state import FakeTermux
from tests.waiting import wait_until


async def test_power_and_recording_go_through_the_phones_own_adb(
    make_client: ServerFactory, fake_device_factory: FakeDeviceFactory, termux: FakeTermux
) -> None:
    phone = FakePhone()
    phone.state.settings.setdefault("global", {})["stay_on_while_plugged_in"] = "0"
    fake = fake_device_factory(phone)
    device = own_adb_device(fake, keep_awake=True)
    client = await make_client(device=device, poll_ms=100)
    await wait_until(lambda: {POWER, SCREEN_RECORD} <= device.capabilities, within_s=30)
    await wait_until(lambda: phone.state.setting("global", "stay_on_while_plugged_in") == "7", what="stay on")
    assert (await client.ok("SLEEP"))["awake"] is False and phone.state.screen_on is False
    unlocked = await client.ok("UNLOCK")
    assert (unlocked["awake"], unlocked["locked"], unlocked["via"]) == (
        True,
        False,
        "input keyevent KEYCODE_WAKEUP + wm dismiss-keyguard",
    )
    started = await client.ok("SCREEN_RECORD_START", {"max_s": "30"})
    stopped = await client.ok("SCREEN_RECORD_STOP")
    assert stopped["path"] == started["path"] and stopped["via"] == "screenrecord"
    assert phone.state.files.read(started["path"]).startswith(MP4_HEAD)
    await client.app.stop(grace_s=0)
    assert phone.state.setting("global", "stay_on_while_plugged_in") == "0"  # put back


async def test_without_its_own_adb_termux_says_how_to_get_it(serve_termux: TermuxServe) -> None:
    client = await serve_termux(self_adb="off")
    for action in ("WAKE", "SLEEP", "UNLOCK", "SCREEN_RECORD_START", "SCREEN_RECORD_STOP"):
        response = await client.execute(action)
        assert response.error.startswith(f"UNSUPPORTED: {action}: this device (termux) lacks the"), (
            response.error
        )
        assert "self_adb = off" in response.error
