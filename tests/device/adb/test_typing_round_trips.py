"""TYPE_TEXT in two round trips (issue 17): one shell script types through uiautomator2's input
method (installed-check, switch, base-64 text, the user's keyboard back), one read shows the
field; counted at the fake adbd, for ASCII, Unicode with emoji, and shell metacharacters."""

from __future__ import annotations

import pytest

from tests.device.adb.conftest import AdbServe
from tests.fakes import seed
from tests.fakes.phone import FakePhone

KEEP_FIELD = "com.google.android.keep:id/edit_note_text"
TEXTS = {
    "ascii": "hello world",
    "unicode": "Olá 你好 🚲",
    "shell": 'it\'s "quoted" $HOME; a & b | c\nsecond line',
}


@pytest.mark.parametrize("name", list(TEXTS))
async def test_type_text_into_the_focused_field_takes_two_round_trips(serve_adb: AdbServe, name: str) -> None:
    state = seed.default_state()
    u2 = seed.u2_app_package()
    state.packages[u2.name] = u2
    s = await serve_adb(FakePhone(state))
    await s.client.ok("OPEN_APP", {"package": seed.KEEP})
    await s.client.ok("TAP", {"resource_id": KEEP_FIELD})  # the field has focus
    text = TEXTS[name]
    before = len(s.opened())
    # The typing's own round trips; settling's looks at the screen are counted in test_settle.
    typed = await s.client.ok("TYPE_TEXT", {"text": text, "settle_ms": "0"})
    streams = s.opened()[before:]
    # The script (which checks what is in front itself, front_guard.py), and the read back.
    assert len(streams) == 2, streams
    assert streams[0].startswith("shell,v2:f=$(dumpsys window windows | grep") and "ime set" in streams[0]
    assert streams[1] == "tcp:9008"
    assert typed["via"] == "uiautomator2 ime"
    assert typed["verified"] is True and typed["read_back"] == text
    assert s.state.log.texts[-1].text == text
    assert s.state.setting("secure", "default_input_method") == seed.LATIN_IME  # the user's keyboard


async def test_type_text_with_no_field_focused_is_element_not_found(serve_adb: AdbServe) -> None:
    state = seed.default_state()
    u2 = seed.u2_app_package()
    state.packages[u2.name] = u2
    s = await serve_adb(FakePhone(state))
    assert await s.client.fail("TYPE_TEXT", {"text": "nowhere"}) == "ELEMENT_NOT_FOUND"
    assert s.state.setting("secure", "default_input_method") == seed.LATIN_IME


async def test_a_keyboard_slow_to_come_up_is_waited_for_on_the_phone(serve_adb: AdbServe) -> None:
    state = seed.default_state()
    u2 = seed.u2_app_package()
    state.packages[u2.name] = u2
    s = await serve_adb(FakePhone(state))
    await s.client.ok("OPEN_APP", {"package": seed.KEEP})
    await s.client.ok("TAP", {"resource_id": KEEP_FIELD})
    await s.client.ok("TYPE_TEXT", {"text": "what was there"})
    # Its receiver registers after the switch: the clear and the text each wait on the phone.
    s.state.faults.ime_warmup_broadcasts = 3
    before = len(s.opened())
    typed = await s.client.ok("TYPE_TEXT", {"text": "once only", "settle_ms": "0"})
    assert len(s.opened()[before:]) == 2  # the script (its retries on the phone), the read
    assert typed["via"] == "uiautomator2 ime" and typed["read_back"] == "once only"
    assert [t.text for t in s.state.log.texts].count("once only") == 1  # typed once
    assert s.state.setting("secure", "default_input_method") == seed.LATIN_IME
