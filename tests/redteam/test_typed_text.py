"""What the agent types, read by another app (issue 16, finding 12): on adb, TYPE_TEXT through
uiautomator2's input method is a broadcast, and one sent to no package reaches every app with a
receiver for its action, passwords included. Through gRPC, against the fake adb phone behind the
real adb server: the broadcast names the input method's package alone."""

from __future__ import annotations

from ..device.adb.conftest import AdbServe
from ..device.adb.test_e2e_actions import _keep_field, _open_keep
from ..fakes import seed
from ..fakes.phone import FakePhone


async def test_typed_text_is_broadcast_to_the_input_method_alone(serve_adb: AdbServe) -> None:
    """Another app on the phone registers for the keyboard's broadcast to read what the agent types.

    `am broadcast -a ADB_KEYBOARD_INPUT_TEXT` without `-p` reaches every app with a receiver
    for that action (passwords included): the broadcast names uiautomator2's IME package."""
    phone_state = seed.default_state()
    u2 = seed.u2_app_package()
    phone_state.packages[u2.name] = u2
    s = await serve_adb(FakePhone(phone_state))
    await _open_keep(s)
    typed = await s.client.ok("TYPE_TEXT", {"text": "hunter2", "resource_id": _keep_field(s)})
    assert typed["via"] == "uiautomator2 ime"
    sent = [i for i in s.state.log.intents if (i.action or "").startswith("ADB_KEYBOARD_")]
    assert sent
    assert {i.package for i in sent} == {"com.github.uiautomator"}
