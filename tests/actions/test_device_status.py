"""DEVICE_STATUS and APP_STATE installed=true on the simulated phone (issue 27), through gRPC:
a battery a scenario sets (SIM_SET_BATTERY) and DEVICE_STATUS reads back, the radios as the sim
has them, the installed apps paged; and both as MCP tools with their schemas."""

from __future__ import annotations

from pathlib import Path

from phoneuse_runtime.device.sim.catalog import APPS
from phoneuse_runtime.rpc import protocol_pb2 as pb

from ..conftest import Client
from ..mcp.helpers import connect, start_app, url_of
from .conftest import failure, sim


async def test_device_status_on_the_sim(client: Client) -> None:
    status = await client.ok("DEVICE_STATUS")
    assert status["via"] == "sim"
    assert status["battery"]["level"] == 76 and status["battery"]["charging"] is False
    assert status["battery"]["plugged"] == "none" and status["battery"]["status"] == "discharging"
    assert status["screen"] == {"on": True, "locked": False}
    assert status["network"]["wifi_enabled"] is True and status["network"]["wifi_ssid"] == "SimNet"
    assert status["network"]["airplane_mode"] is False
    assert 0 < status["storage"]["free_bytes"] < status["storage"]["total_bytes"]
    assert 0 < status["memory"]["free_bytes"] < status["memory"]["total_bytes"]
    assert status["uptime_s"] >= 0
    assert (status["model"], status["android_version"], status["sdk"]) == ("Pixel 8 (simulated)", "14", 34)


async def test_is_it_charging_after_sim_set_battery(client: Client) -> None:
    set_ = await client.ok("SIM_SET_BATTERY", {"level": "35", "charging": "true"})
    assert set_ == {"level": 35, "status": "charging", "plugged": "usb", "temperature_c": 29.5, "via": "sim"}
    battery = (await client.ok("DEVICE_STATUS"))["battery"]
    assert battery == {
        "level": 35,
        "charging": True,
        "status": "charging",
        "plugged": "usb",
        "temperature_c": 29.5,
    }
    await client.ok("SIM_SET_BATTERY", {"level": "100", "plugged": "wireless", "temperature_c": "33.5"})
    battery = (await client.ok("DEVICE_STATUS"))["battery"]
    assert (battery["status"], battery["charging"], battery["plugged"]) == ("full", True, "wireless")
    await client.ok("SIM_SET_BATTERY", {"charging": "false"})
    battery = (await client.ok("DEVICE_STATUS"))["battery"]
    assert (battery["level"], battery["charging"], battery["plugged"]) == (100, False, "none")


async def test_sim_set_battery_refuses_a_level_out_of_range(client: Client) -> None:
    code, message, _ = await failure(client, "SIM_SET_BATTERY", {"level": "101"})
    assert code == "INVALID_PARAMS" and "level" in message
    assert sim(client).battery.level == 76


async def test_device_status_follows_the_sims_wifi_and_airplane_mode(client: Client) -> None:
    phone = sim(client)._reachable()
    phone.state.wifi_enabled, phone.state.airplane_mode = False, True
    network = (await client.ok("DEVICE_STATUS"))["network"]
    assert (network["wifi_enabled"], network["wifi_ssid"], network["airplane_mode"]) == (False, None, True)


async def test_app_state_installed_pages_the_sims_apps(client: Client) -> None:
    names = sorted(app.package for app in APPS)
    first, total, more = await client.query(pb.APP_STATE, {"installed": "true"}, limit=4)
    assert (total, more) == (len(names), True) and [a["package"] for a in first] == names[:4]
    rest, _, more = await client.query(pb.APP_STATE, {"installed": "true", "offset": "4"}, limit=100)
    assert [a["package"] for a in first + rest] == names and more is False
    whatsapp = next(a for a in first + rest if a["package"] == "com.whatsapp")
    assert (whatsapp["label"], whatsapp["system"]) == ("WhatsApp", False)
    assert whatsapp["version_name"] == "2.24.25.78"
    assert whatsapp["version_code"] == 242578007 and whatsapp["ui_fingerprint"] is None


async def test_the_mcp_tools_of_device_status_and_installed_apps(tmp_path: Path) -> None:
    app = await start_app(tmp_path / "data")
    try:
        async with connect(url_of(app)) as mcp:
            tools = {tool.name: tool for tool in (await mcp.list_tools()).tools}
            status = tools["device_status"]
            assert status.annotations is not None and status.annotations.read_only_hint is True
            assert status.output_schema is not None
            assert "installed" in tools["query_app_state"].input_schema["properties"]
            battery = tools["sim_set_battery"].input_schema["properties"]
            assert battery["level"]["anyOf"][0]["maximum"] == 100
            read = await mcp.call_tool("device_status", {})
            assert not read.is_error and read.structured_content is not None
            assert read.structured_content["battery"]["level"] == 76
            listed = await mcp.call_tool("query_app_state", {"installed": True, "limit": 3})
            assert listed.structured_content is not None and len(listed.structured_content["results"]) == 3
    finally:
        await app.stop(grace_s=0)
