"""DEVICE_STATUS on `--device termux` (issue 27), through gRPC and the production factory: without
the phone's own adb, Termux:API's battery (real captures as it printed them) and Wi-Fi
connection, and the phone's /proc read by the runtime itself, the rest null; with it, the adb
backend's one-script status."""

from __future__ import annotations

import json
from typing import Any

import pytest

from phoneuse_runtime.device.termux.device import TermuxDevice
from phoneuse_runtime.kernel.capabilities import UI
from tests.conftest import ServerFactory
from tests.device.termux.conftest import TermuxServe
from tests.fakes.adb_server import FakeDeviceFactory
from tests.fakes.golden import golden
from tests.fakes.phone import FakePhone
from tests.fakes.termux.state import FakeTermux
from tests.waiting import wait_until

REAL = {
    # capture: (level, status, plugged, °C, charging)
    "battery-status_oppo-phy110_android16.json": (92, "discharging", "none", 32.3, False),
    "battery-status_2024_battery-nvim-27.json": (96, "charging", "ac", 24.6, True),
    "battery-status_2020_not-charging-positive-current_vim-battery-9.json": (
        52,
        "not_charging",
        "none",
        31.0,
        False,
    ),
    "battery-status_pixelbook-arc_2018_termux-api-package-27.json": (71, "charging", "ac", 0.0, True),
}


@pytest.mark.parametrize("name", sorted(REAL))
async def test_the_battery_as_termux_api_printed_it_on_real_phones(
    serve_termux: TermuxServe, termux: FakeTermux, name: str
) -> None:
    text = golden("termux", name)
    termux.update(lambda s: s["printed"].__setitem__("termux-battery-status", text))
    client = await serve_termux()
    battery = (await client.ok("DEVICE_STATUS"))["battery"]
    level, status, plugged, celsius, charging = REAL[name]
    assert battery == {
        "level": level,
        "status": status,
        "plugged": plugged,
        "temperature_c": celsius,
        "charging": charging,
    }
    assert json.loads(text)["percentage"] == level


async def test_device_status_without_the_phones_own_adb(
    serve_termux: TermuxServe, termux: FakeTermux
) -> None:
    client = await serve_termux()
    status = await client.ok("DEVICE_STATUS")
    assert status["via"] == "termux-api"
    assert status["battery"]["level"] == 80 and status["battery"]["plugged"] == "ac"
    assert status["network"]["wifi_connected"] is True and status["network"]["wifi_ssid"] == "HomeNet"
    assert status["network"]["wifi_enabled"] is True
    # What only a shell reads stays null: never made up.
    assert status["screen"] == {"on": None, "locked": None}
    network = status["network"]
    assert (network["mobile_data"], network["airplane_mode"], network["bluetooth_enabled"]) == (None,) * 3
    # This process runs on the phone: its own /proc and filesystem.
    assert status["memory"]["total_bytes"] > 0 and status["uptime_s"] > 0
    assert status["storage"]["total_bytes"] >= status["storage"]["free_bytes"] > 0
    assert (status["model"], status["android_version"], status["sdk"]) == ("Pixel 7", "14", 34)


async def test_no_location_permission_leaves_the_wifi_network_null(
    serve_termux: TermuxServe, termux: FakeTermux
) -> None:
    termux.update(lambda s: s["denied"].append("android.permission.ACCESS_FINE_LOCATION"))
    client = await serve_termux()
    network = (await client.ok("DEVICE_STATUS"))["network"]
    assert (network["wifi_connected"], network["wifi_ssid"]) == (None, None)

    def no_network(state: dict[str, Any]) -> None:
        state["denied"].clear()
        state["wifi"] = None

    termux.update(no_network)
    network = (await client.ok("DEVICE_STATUS"))["network"]
    assert (network["wifi_connected"], network["wifi_ssid"]) == (False, None)
    termux.update(lambda s: s.__setitem__("wifi", {"ssid": "", "supplicant_state": "INTERFACE_DISABLED"}))
    network = (await client.ok("DEVICE_STATUS"))["network"]
    assert (network["wifi_enabled"], network["wifi_connected"]) == (False, False)


async def test_device_status_through_the_phones_own_adb(
    make_client: ServerFactory, fake_device_factory: FakeDeviceFactory, termux: FakeTermux
) -> None:
    phone = FakePhone()
    phone.state.locked = True
    fake = fake_device_factory(phone)
    device = TermuxDevice(self_adb=fake.serial, adb_server=f"127.0.0.1:{fake.adb_port}", poll_ms=100)
    client = await make_client(device=device, poll_ms=100)
    await wait_until(lambda: UI in device.capabilities, within_s=30)
    status = await client.ok("DEVICE_STATUS")
    assert status["via"] == "adb shell (the phone's own adb)"
    assert status["screen"] == {"on": True, "locked": True}
    assert status["network"]["wifi_ssid"] == "AndroidWifi" and status["network"]["bluetooth_enabled"] is False
    assert status["battery"]["plugged"] == "usb"
