"""SET_WIFI ... SET_AUTO_ROTATE on the sim, through the real server: each answers the value read
back, the sim keeps it (its state file, its status bar, its Settings pages), bad params are
INVALID_PARAMS, and none is held by default but each can be (approval_actions)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from phoneuse_runtime.device.base import Switch
from phoneuse_runtime.device.sim.device import SimDevice
from phoneuse_runtime.screen.ui import parse_hierarchy

from ..conftest import Client, ServerFactory


def _sim(client: Client) -> SimDevice:
    device = client.app.runtime.device
    assert isinstance(device, SimDevice)
    return device


async def _descriptions(client: Client) -> set[str]:
    xml = await client.app.runtime.device.dump_hierarchy()
    return {n.description for n in parse_hierarchy(xml).walk() if n.description}


async def test_each_switch_is_set_and_read_back(client: Client) -> None:
    switches: tuple[tuple[str, Switch], ...] = (
        ("SET_WIFI", "wifi"),
        ("SET_BLUETOOTH", "bluetooth"),
        ("SET_AIRPLANE_MODE", "airplane_mode"),
        ("SET_AUTO_ROTATE", "auto_rotate"),
    )
    for action, switch in switches:
        for enabled in (True, False, True):
            result = await client.ok(action, {"enabled": str(enabled).lower()})
            assert result == {"enabled": enabled, "verified": True, "verify_error": None, "via": "sim"}
            assert await _sim(client).switch(switch) is enabled


async def test_volume_by_level_and_percent(client: Client) -> None:
    result = await client.ok("SET_VOLUME", {"stream": "music", "level": "12"})
    assert result == {
        "stream": "music",
        "level": 12,
        "max": 15,
        "percent": 80,
        "verified": True,
        "verify_error": None,
        "via": "sim",
    }
    result = await client.ok("SET_VOLUME", {"stream": "ring", "percent": "100"})
    assert (result["level"], result["max"], result["verified"]) == (7, 7, True)
    assert (await _sim(client).volume("ring")).level == 7
    assert (await client.ok("SET_VOLUME", {"stream": "alarm", "percent": "0"}))["level"] == 1  # its minimum


async def test_volume_out_of_range_or_ambiguous_is_invalid(client: Client) -> None:
    response = await client.execute("SET_VOLUME", {"stream": "ring", "level": "9"})
    assert response.error.startswith("INVALID_PARAMS: ") and "[0..7]" in response.error
    assert await client.fail("SET_VOLUME", {"stream": "music"}) == "INVALID_PARAMS"
    assert await client.fail("SET_VOLUME", {"level": "3", "percent": "20"}) == "INVALID_PARAMS"
    assert await client.fail("SET_VOLUME", {"stream": "voice", "level": "3"}) == "INVALID_PARAMS"
    assert (await _sim(client).volume("ring")).level == 5  # nothing was changed


async def test_brightness_level_and_auto(client: Client) -> None:
    result = await client.ok("SET_BRIGHTNESS", {"level": "200"})
    assert result == {"level": 200, "auto": False, "verified": True, "verify_error": None, "via": "sim"}
    result = await client.ok("SET_BRIGHTNESS", {"auto": "true"})
    assert (result["level"], result["auto"], result["verified"]) == (200, True, True)
    assert await client.fail("SET_BRIGHTNESS", {}) == "INVALID_PARAMS"
    assert await client.fail("SET_BRIGHTNESS", {"level": "256"}) == "INVALID_PARAMS"
    assert await client.fail("SET_BRIGHTNESS", {"level": "20", "auto": "true"}) == "INVALID_PARAMS"


async def test_do_not_disturb_modes(client: Client) -> None:
    for mode in ("priority", "alarms", "total", "off"):
        result = await client.ok("SET_DO_NOT_DISTURB", {"mode": mode})
        assert result == {"mode": mode, "verified": True, "verify_error": None, "via": "sim"}
    assert await client.fail("SET_DO_NOT_DISTURB", {"mode": "on"}) == "INVALID_PARAMS"


async def test_the_sim_shows_them_and_keeps_them(make_client: ServerFactory, tmp_path: Path) -> None:
    path = tmp_path / "sim.json"
    client = await make_client(sim_state=path)
    await client.ok("SET_BLUETOOTH", {"enabled": "true"})
    await client.ok("SET_DO_NOT_DISTURB", {"mode": "priority"})
    await client.ok("SET_AIRPLANE_MODE", {"enabled": "true"})
    assert {"Bluetooth on.", "Do Not Disturb.", "Airplane mode."} <= await _descriptions(client)
    await client.ok("SET_VOLUME", {"stream": "notification", "level": "2"})
    await client.ok("SET_BRIGHTNESS", {"level": "51"})
    await client.app.stop(grace_s=0)
    saved: dict[str, Any] = json.loads(path.read_text())
    assert saved["volumes"]["notification"] == 2
    assert (saved["brightness"], saved["brightness_auto"], saved["dnd"]) == (51, False, "priority")
    again = _sim(await make_client(sim_state=path))
    assert await again.switch("bluetooth") is True
    assert ((await again.volume("notification")).level, await again.dnd()) == (2, "priority")


async def test_an_old_state_file_starts_with_the_defaults() -> None:
    from phoneuse_runtime.device.sim.state import SimState

    old = json.loads(SimState().to_json())
    for key in ("bluetooth_enabled", "auto_rotate", "volumes", "brightness", "brightness_auto", "dnd"):
        del old[key]
    state = SimState.from_json(json.dumps(old))
    assert (state.bluetooth_enabled, state.auto_rotate, state.dnd, state.volumes["music"]) == (
        False,
        True,
        "off",
        5,
    )


async def test_not_held_by_default_but_the_owner_may_hold_them(make_client: ServerFactory) -> None:
    held = await make_client(
        approvals="always",
        approval_actions=frozenset({"SET_VOLUME"}),
        gateway=True,
        gateway_listen="127.0.0.1:0",
    )
    assert (await held.ok("SET_WIFI", {"enabled": "false"}))["verified"]  # not held: it answers at once
    response = await held.execute("SET_VOLUME", {"level": "3"}, timeout_ms=1500)
    assert response.error.startswith("TIMEOUT: "), response.error  # held for the owner, nobody answered
    assert (await _sim(held).volume("music")).level == 5
