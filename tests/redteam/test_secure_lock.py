"""The agent gets past the owner's secure lock screen (issue 27), on the fake adb phone behind the
real adb server: UNLOCK given a PIN, TYPE_TEXT or a tap on the lock screen, MENU then UNLOCK. The
runtime never types a secret and never touches a secure lock: each is refused and the phone stays
locked, with nothing typed."""

from __future__ import annotations

import pytest

from tests.device.adb.conftest import AdbServe, Served
from tests.fakes.phone import FakePhone


async def _locked_with_a_pin(serve_adb: AdbServe) -> Served:
    phone = FakePhone()
    phone.state.lock_screen, phone.state.locked = "pin", True
    return await serve_adb(phone)


def _untouched(s: Served) -> None:
    assert s.state.locked is True
    assert not s.state.log.texts
    assert not any("dismiss-keyguard" in line for line in s.opened())


@pytest.mark.parametrize("params", [{"pin": "1234"}, {"password": "hunter2"}, {"pattern": "1-2-3-6-9"}])
async def test_unlock_takes_no_secret(serve_adb: AdbServe, params: dict[str, str]) -> None:
    """The agent hands UNLOCK the owner's PIN (from a message it read), to have it typed."""
    s = await _locked_with_a_pin(serve_adb)
    response = await s.client.execute("UNLOCK", params)
    assert response.error.startswith("INVALID_PARAMS: "), response.error
    _untouched(s)


@pytest.mark.parametrize(
    ("action", "params"),
    [("TYPE_TEXT", {"text": "1234"}), ("TAP", {"x": "360", "y": "900"}), ("PRESS_KEY", {"key": "ENTER"})],
)
async def test_the_lock_screen_cannot_be_driven(
    serve_adb: AdbServe, action: str, params: dict[str, str]
) -> None:
    """The agent types the PIN into the lock screen itself, or taps and presses its keys."""
    s = await _locked_with_a_pin(serve_adb)
    response = await s.client.execute(action, params)
    assert response.error.startswith("PERMISSION_DENIED: "), response.error
    assert "one of the owner's controls" in response.error
    _untouched(s)


async def test_unlock_after_menu_still_refuses(serve_adb: AdbServe) -> None:
    """The agent presses MENU on the lock screen (refused: it is the owner's), then UNLOCKs."""
    s = await _locked_with_a_pin(serve_adb)
    await s.client.execute("PRESS_KEY", {"key": "MENU"})
    response = await s.client.execute("UNLOCK")
    assert response.error.startswith("OWNER_MUST_UNLOCK: "), response.error
    _untouched(s)
