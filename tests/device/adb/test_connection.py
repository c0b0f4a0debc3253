"""Choosing the phone: the device setting, the serial, the adb server."""

from __future__ import annotations

import queue

import pytest

from phoneuse_runtime.config.addresses import server_address
from phoneuse_runtime.config.settings import ConfigError, Settings, default_adb_server
from phoneuse_runtime.device.adb.connection import (
    Attached,
    Client,
    Tracker,
    choose_serial,
    device_serial,
    is_network_serial,
)
from tests.fakes.adb_server import FakeDeviceFactory
from tests.fakes.echo_phone import EchoPhone


def test_device_setting_splits_at_the_first_colon_only() -> None:
    assert device_serial("adb") is None
    assert device_serial("adb:emulator-5554") == "emulator-5554"
    assert device_serial("adb:10.0.0.5:5555") == "10.0.0.5:5555"
    assert device_serial("adb:[::1]:5555") == "[::1]:5555"
    with pytest.raises(ConfigError, match="needs a serial"):
        device_serial("adb:")


@pytest.mark.parametrize(
    ("serial", "network"),
    [
        ("127.0.0.1:5555", True),
        ("phone.lan:40123", True),
        ("[::1]:5555", True),
        ("emulator-5554", False),
        ("R58M123ABC", False),
        ("adb-R58M-abc._adb-tls-connect._tcp", False),
        ("host:99999", False),
    ],
)
def test_network_serials(serial: str, network: bool) -> None:
    assert is_network_serial(serial) is network


def test_server_address() -> None:
    assert server_address("127.0.0.1:5037") == ("127.0.0.1", 5037)
    assert server_address("5038") == ("127.0.0.1", 5038)
    assert server_address("adbhost:6000") == ("adbhost", 6000)
    with pytest.raises(ConfigError, match="HOST:PORT"):
        server_address("adbhost:x")


def test_adb_server_default_follows_adb(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", "5099")
    assert default_adb_server() == "127.0.0.1:5099"
    assert Settings().adb_server == "127.0.0.1:5099"
    monkeypatch.delenv("ANDROID_ADB_SERVER_PORT")
    assert Settings().adb_server == "127.0.0.1:5037"


def test_serial_named_then_env_then_the_only_device() -> None:
    two = [Attached("A", "device"), Attached("B", "device")]
    assert choose_serial("X", "Y", two) == "X"
    assert choose_serial(None, "Y", two) == "Y"
    assert choose_serial(None, None, [Attached("A", "device"), Attached("B", "offline")]) == "A"


def test_zero_or_several_devices_list_what_was_found() -> None:
    with pytest.raises(ConfigError, match=r"no ready device \(found: none\)"):
        choose_serial(None, None, [])
    with pytest.raises(ConfigError, match=r"B \(unauthorized: unlock the phone and accept"):
        choose_serial(None, None, [Attached("B", "unauthorized")])
    with pytest.raises(ConfigError, match=r"2 ready devices \(found: A \(device\); C \(device\)\)"):
        choose_serial(None, None, [Attached("A", "device"), Attached("C", "device")])


def test_the_tracker_reports_a_phone_that_leaves_and_comes_back(
    fake_device_factory: FakeDeviceFactory,
) -> None:
    """Through the real adb server's host:track-devices: `adb disconnect` (as when a USB phone
    is unplugged) is reported at once, and so is the phone coming back. adb 29 drops the phone
    from the list at once ("absent"); adb 36 (the adbutils wheel's) first lists it "offline",
    then drops it: either way the first state after the drop is not "device", which is what the
    backend acts on (the link goes down, see AdbDevice._tracked)."""
    device = fake_device_factory(EchoPhone())
    seen: queue.Queue[str] = queue.Queue()
    tracker = Tracker(Client("127.0.0.1", device.adb_port), device.serial, seen.put)
    tracker.start()
    try:
        assert seen.get(timeout=5) == "device"
        device.server.disconnect(device.serial)
        assert seen.get(timeout=5) in {"offline", "absent"}
        device.reconnect()
        states = [seen.get(timeout=5)]
        while states[-1] != "device":  # adb may list it as offline (or gone) while it reconnects
            states.append(seen.get(timeout=5))
        assert set(states) <= {"absent", "offline", "connecting", "device"}
    finally:
        tracker.stop()
    assert not tracker.running  # stop() woke the blocked read
