"""SET_WIFI ... SET_AUTO_ROTATE through gRPC on `--device adb:HOST:PORT`, against the fake phone
behind the real adb server, on the Android versions whose tools differ (SDK 28, 29, 30, 33, 34):
each runs the command that version has, reads the value back from the phone, and refuses what the
version's shell cannot do (UNSUPPORTED) or what the phone refuses (PERMISSION_DENIED)."""

from __future__ import annotations

import pytest

from tests.device.adb.conftest import AdbServe, Served
from tests.fakes.phone import FakePhone
from tests.network import own_address

SDKS = pytest.mark.parametrize("sdk", [28, 29, 30, 33, 34])


def _phone(sdk: int) -> FakePhone:
    phone = FakePhone()
    phone.state.props["ro.build.version.sdk"] = str(sdk)
    return phone


def _ran(s: Served, name: str) -> list[str]:
    return [" ".join(argv) for argv in s.state.log.ran(name)]


def _global(s: Served, key: str) -> str | None:
    return s.state.setting("global", key)


@SDKS
async def test_wifi_and_bluetooth_by_the_tool_each_version_has(serve_adb: AdbServe, sdk: int) -> None:
    s = await serve_adb(_phone(sdk))
    result = await s.client.ok("SET_WIFI", {"enabled": "false"})
    assert (result["enabled"], result["verified"]) == (False, True)
    assert _global(s, "wifi_on") == "0"
    if sdk >= 30:
        assert "cmd wifi set-wifi-enabled disabled" in _ran(s, "cmd")
        assert result["via"] == "cmd wifi"
    else:
        assert "svc wifi disable" in _ran(s, "svc")
        assert result["via"] == "svc wifi"
    result = await s.client.ok("SET_BLUETOOTH", {"enabled": "true"})
    assert (result["enabled"], result["verified"]) == (True, True)
    assert _global(s, "bluetooth_on") == "1"
    assert result["via"] == ("cmd bluetooth_manager" if sdk >= 33 else "svc bluetooth")


@SDKS
async def test_airplane_mode_only_from_android_11(serve_adb: AdbServe, sdk: int) -> None:
    s = await serve_adb(_phone(sdk))
    response = await s.client.execute("SET_AIRPLANE_MODE", {"enabled": "true"})
    if sdk < 30:
        assert response.error.startswith("UNSUPPORTED: "), response.error
        assert "before Android 11" in response.error and "quick settings" in response.error
        assert _global(s, "airplane_mode_on") == "0"
        return
    assert response.success, response.error
    assert "cmd connectivity airplane-mode enable" in _ran(s, "cmd")
    assert _global(s, "airplane_mode_on") == "1"
    result = await s.client.ok("SET_AIRPLANE_MODE", {"enabled": "false"})
    assert (result["enabled"], result["verified"]) == (False, True)


@SDKS
async def test_volume_by_level_and_percent_on_each_version(serve_adb: AdbServe, sdk: int) -> None:
    s = await serve_adb(_phone(sdk))
    result = await s.client.ok("SET_VOLUME", {"stream": "music", "percent": "60"})
    assert (result["level"], result["max"], result["percent"], result["verified"]) == (9, 15, 60, True)
    assert s.state.volumes[3] == 9
    tool = "cmd media_session" if sdk >= 29 else "media volume"
    assert result["via"] == tool
    result = await s.client.ok("SET_VOLUME", {"stream": "alarm", "level": "7"})
    assert (result["level"], result["max"], result["verified"]) == (7, 7, True)
    assert s.state.volumes[4] == 7
    response = await s.client.execute("SET_VOLUME", {"stream": "ring", "level": "12"})
    assert response.error.startswith("INVALID_PARAMS: ") and "[0..7]" in response.error
    assert s.state.volumes[2] == 5


@pytest.mark.parametrize("features", [("cmd",), ("shell_v2", "cmd")], ids=["shell_v1", "shell_v2"])
async def test_brightness_and_auto_rotate_through_settings(
    serve_adb: AdbServe, features: tuple[str, ...]
) -> None:
    s = await serve_adb(_phone(34), features=features)
    before = len(s.opened())
    result = await s.client.ok("SET_BRIGHTNESS", {"level": "30"})
    assert result == {"level": 30, "auto": False, "verified": True, "verify_error": None, "via": "settings"}
    assert s.state.setting("system", "screen_brightness") == "30"
    assert len(s.opened()) - before == 2  # both settings written in one round trip, read in one
    result = await s.client.ok("SET_BRIGHTNESS", {"auto": "true"})
    assert (result["auto"], result["level"], result["verified"]) == (True, 30, True)
    assert s.state.setting("system", "screen_brightness_mode") == "1"
    result = await s.client.ok("SET_AUTO_ROTATE", {"enabled": "false"})
    assert (result["enabled"], result["verified"], result["via"]) == (False, True, "settings put")
    assert s.state.setting("system", "accelerometer_rotation") == "0"


@SDKS
async def test_do_not_disturb_from_android_11(serve_adb: AdbServe, sdk: int) -> None:
    s = await serve_adb(_phone(sdk))
    response = await s.client.execute("SET_DO_NOT_DISTURB", {"mode": "total"})
    if sdk < 30:
        assert response.error.startswith("UNSUPPORTED: "), response.error
        assert _global(s, "zen_mode") == "0"
        return
    assert response.success, response.error
    assert "cmd notification set_dnd none" in _ran(s, "cmd")  # "on" would mean the same: total silence
    for mode, zen in (("priority", "1"), ("alarms", "3"), ("total", "2"), ("off", "0")):
        result = await s.client.ok("SET_DO_NOT_DISTURB", {"mode": mode})
        assert (result["mode"], result["verified"]) == (mode, True)
        assert _global(s, "zen_mode") == zen


async def test_a_phone_that_refuses_settings_writes_is_permission_denied(serve_adb: AdbServe) -> None:
    phone = _phone(33)
    phone.state.settings_write_denied = True  # MIUI without "USB debugging (Security settings)"
    s = await serve_adb(phone)
    response = await s.client.execute("SET_AUTO_ROTATE", {"enabled": "false"})
    assert response.error.startswith("PERMISSION_DENIED: "), response.error
    assert "WRITE_SECURE_SETTINGS" in response.error
    assert s.state.setting("system", "accelerometer_rotation") == "1"


async def test_adb_over_wifi_is_never_cut(serve_adb: AdbServe) -> None:
    host = own_address()
    s = await serve_adb(_phone(34), host=host)  # the serial is HOST:PORT, as after `adb connect`
    for action, params in (("SET_WIFI", {"enabled": "false"}), ("SET_AIRPLANE_MODE", {"enabled": "true"})):
        response = await s.client.execute(action, params)
        assert response.error.startswith("PERMISSION_DENIED: "), response.error
        assert f"adb over Wi-Fi ({host}:" in response.error
    assert _global(s, "wifi_on") == "1" and _global(s, "airplane_mode_on") == "0"
    assert not [c for c in _ran(s, "cmd") if "wifi" in c or "connectivity" in c]  # nothing was tried
    assert (await s.client.ok("SET_WIFI", {"enabled": "true"}))["verified"]  # on cuts nothing


async def test_the_owner_may_allow_cutting_adb_over_wifi(serve_adb: AdbServe) -> None:
    host = own_address()
    s = await serve_adb(_phone(34), host=host, allow_cutting_link=True)
    assert (await s.client.ok("SET_WIFI", {"enabled": "false"}))["enabled"] is False
