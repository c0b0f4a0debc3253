"""DEVICE_STATUS and APP_STATE installed=true on adb (issue 27): through gRPC, the production
factory, the real adb server and the fake phone, every field read back from what the phone
says, in one shell stream; a phone that cannot say a thing leaves it null."""

from __future__ import annotations

from phoneuse_runtime.rpc import protocol_pb2 as pb
from tests.device.adb.conftest import AdbServe
from tests.fakes import seed
from tests.fakes.adbd import service_kind
from tests.fakes.golden import golden
from tests.fakes.phone import FakePhone


async def test_device_status_reads_the_phone_in_one_shell_stream(serve_adb: AdbServe) -> None:
    s = await serve_adb()
    before = len(s.opened())
    status = await s.client.ok("DEVICE_STATUS")
    streams = s.opened()[before:]
    assert [service_kind(x) for x in streams] == ["shell,v2"], streams
    assert status["battery"] == {
        "level": 100,
        "charging": True,
        "status": "charging",
        "plugged": "usb",
        "temperature_c": 25.0,
    }
    assert status["screen"] == {"on": True, "locked": False}
    assert status["network"] == {
        "wifi_enabled": True,
        "wifi_connected": True,
        "wifi_ssid": "AndroidWifi",
        "mobile_data": True,
        "airplane_mode": False,
        "bluetooth_enabled": False,
    }
    phone = s.state.status
    assert status["storage"] == {
        "free_bytes": (phone.data_total_kb - phone.data_used_kb) * 1024,
        "total_bytes": phone.data_total_kb * 1024,
    }
    assert phone.mem_available_kb is not None
    assert status["memory"] == {
        "free_bytes": phone.mem_available_kb * 1024,
        "total_bytes": phone.mem_total_kb * 1024,
    }
    assert status["uptime_s"] == phone.uptime_s
    props = s.state.props
    assert (status["model"], status["android_version"], status["sdk"]) == (
        props["ro.product.model"],
        props["ro.build.version.release"],
        33,
    )
    assert status["via"] == "adb shell"


async def test_device_status_follows_the_phone(serve_adb: AdbServe) -> None:
    s = await serve_adb()
    s.state.status.plugged, s.state.status.battery_status, s.state.status.level = "none", 3, 41
    s.state.screen_on, s.state.locked = False, True
    s.state.settings["global"].update(wifi_on="0", airplane_mode_on="1", bluetooth_on="1", mobile_data="0")
    status = await s.client.ok("DEVICE_STATUS")
    assert status["battery"]["level"] == 41 and status["battery"]["plugged"] == "none"
    assert status["battery"]["charging"] is False and status["battery"]["status"] == "discharging"
    assert status["screen"] == {"on": False, "locked": True}
    assert status["network"] == {
        "wifi_enabled": False,
        "wifi_connected": False,
        "wifi_ssid": None,
        "mobile_data": False,
        "airplane_mode": True,
        "bluetooth_enabled": True,
    }


async def test_a_real_phones_battery_and_power_as_it_printed_them(serve_adb: AdbServe) -> None:
    phone = FakePhone()
    phone.state.printed["dumpsys battery"] = golden("dumpsys", "battery_samsung_2018_sec-extras.txt")
    phone.state.printed["dumpsys power"] = golden("dumpsys", "power_mtk-tb8168p1_android13_asleep.txt")
    s = await serve_adb(phone)
    status = await s.client.ok("DEVICE_STATUS")
    assert status["battery"] == {
        "level": 84,
        "charging": True,
        "status": "charging",
        "plugged": "usb",
        "temperature_c": 32.6,
    }
    assert status["screen"]["on"] is False  # mWakefulness=Asleep


async def test_an_android_10_phone_says_no_ssid_and_an_unset_setting_is_null(serve_adb: AdbServe) -> None:
    phone = FakePhone()
    phone.state.props.update({"ro.build.version.sdk": "29", "ro.build.version.release": "10"})
    del phone.state.settings["global"]["bluetooth_on"]
    s = await serve_adb(phone)
    network = (await s.client.ok("DEVICE_STATUS"))["network"]
    # `cmd wifi status` is Android 11's: Wi-Fi's on/off from the setting, what it is connected to unknown
    assert (network["wifi_enabled"], network["wifi_connected"], network["wifi_ssid"]) == (True, None, None)
    assert network["bluetooth_enabled"] is None


async def test_app_state_installed_lists_every_app_paged(serve_adb: AdbServe) -> None:
    s = await serve_adb()
    everything = sorted(s.state.packages)
    page, total, more = await s.client.query(pb.APP_STATE, {"installed": "true"}, limit=5)
    assert total == len(everything) and more is True
    assert [a["package"] for a in page] == everything[:5]
    rest, _, more = await s.client.query(pb.APP_STATE, {"installed": "true", "offset": "5"}, limit=100)
    assert [a["package"] for a in page + rest] == everything and more is False
    by_name = {a["package"]: a for a in page + rest}
    for name, pkg in s.state.packages.items():
        assert by_name[name]["system"] is pkg.system
        assert by_name[name]["version_code"] == pkg.version_code
        assert by_name[name]["version_name"] is None  # only dumpsys package says it
    assert by_name[seed.LAUNCHER]["foreground"] is True and by_name[seed.LAUNCHER]["running"] is True
    chrome = by_name[seed.CHROME]
    assert chrome["label"] == "Chrome" and chrome["foreground"] is False


async def test_app_state_installed_reads_the_list_in_one_stream(serve_adb: AdbServe) -> None:
    s = await serve_adb()
    before = len(s.opened())
    await s.client.query(pb.APP_STATE, {"installed": "true"})
    kinds = [service_kind(x) for x in s.opened()[before:]]
    # the apps (one script: packages with versions, system ones, launchers, labels), then the
    # foreground and the running ones (one script); no screen read for the list
    assert kinds == ["shell,v2", "shell,v2"], kinds


async def test_app_state_installed_before_android_9_has_no_versions(serve_adb: AdbServe) -> None:
    phone = FakePhone()
    phone.state.props.update({"ro.build.version.sdk": "27", "ro.build.version.release": "8.1.0"})
    s = await serve_adb(phone)
    apps, total, _ = await s.client.query(pb.APP_STATE, {"installed": "true"}, limit=100)
    assert total == len(s.state.packages)
    assert {a["version_code"] for a in apps} == {None}
    assert any(argv[:3] == ["pm", "list", "packages"] and len(argv) == 3 for argv in s.state.log.commands)


async def test_app_state_installed_for_one_package(serve_adb: AdbServe) -> None:
    s = await serve_adb()
    (chrome,), total, _ = await s.client.query(pb.APP_STATE, {"installed": "true", "package": seed.CHROME})
    assert total == 1 and chrome["package"] == seed.CHROME and chrome["running"] is False
    none, total, _ = await s.client.query(pb.APP_STATE, {"installed": "true", "package": "com.not.here"})
    assert (none, total) == ([], 0)


async def test_an_android_6_phone_toolbox_df_and_no_memavailable(serve_adb: AdbServe) -> None:
    phone = FakePhone()
    phone.state.props.update({"ro.build.version.sdk": "23", "ro.build.version.release": "6.0.1"})
    phone.state.status.mem_available_kb = None  # Linux 3.10: no MemAvailable
    phone.state.printed["dumpsys power"] = golden(
        "dumpsys", "power_samsung-sm-t377a_android6.0.1_crlf-doubled-lines.txt"
    )
    s = await serve_adb(phone)
    status = await s.client.ok("DEVICE_STATUS")
    total_kb = s.state.status.data_total_kb
    # toolbox rounds to a tenth of a GiB
    assert abs(status["storage"]["total_bytes"] - total_kb * 1024) < 0.06 * 2**30
    assert status["storage"]["free_bytes"] < status["storage"]["total_bytes"]
    assert status["memory"] == {"free_bytes": None, "total_bytes": s.state.status.mem_total_kb * 1024}
    assert status["screen"]["on"] is True  # the real tablet's mWakefulness=Awake, lines doubled
    assert status["network"]["wifi_ssid"] is None and status["android_version"] == "6.0.1"


async def test_the_identity_is_a_real_phones_getprop(serve_adb: AdbServe) -> None:
    phone = FakePhone()
    phone.state.printed["getprop"] = golden("getprop", "getprop_motorola_edge20_android13.txt")
    s = await serve_adb(phone)
    status = await s.client.ok("DEVICE_STATUS")
    assert (status["model"], status["android_version"], status["sdk"]) == ("motorola edge 20", "13", 33)
