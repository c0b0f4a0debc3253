"""System dialogs as a way in (issue 26): the agent answers a runtime permission prompt, which is
the owner's (the permission controller is one of the owner's controls), by its text, its id, its
ref or its point, on the fake adb phone behind the real adb server and on the simulated phone;
and a tap the agent aimed at the screen it read lands on a dialog that came over it since. Each
is refused, the prompt is still up for the owner, and no finger touched it."""

from __future__ import annotations

import pytest

from ..conftest import Client
from ..device.adb.conftest import AdbServe
from ..fakes import seed
from ..fakes.state import SystemDialog

NO_SETTLE = {"settle_ms": "0"}
ALLOW = "While using the app"
ALLOW_ID = "com.android.permissioncontroller:id/permission_allow_foreground_only_button"


def _ways(screen: str, centre: tuple[int, int]) -> dict[str, dict[str, str]]:
    [line] = [line for line in screen.splitlines() if f'"{ALLOW}"' in line]
    return {
        "text": {"text": ALLOW},
        "resource_id": {"resource_id": ALLOW_ID},
        "ref": {"ref": line.split()[0]},
        "point": {"x": str(centre[0]), "y": str(centre[1])},
    }


WAYS = ("text", "resource_id", "ref", "point")


@pytest.mark.parametrize("way", WAYS)
async def test_on_adb_the_agent_cannot_allow_a_permission(serve_adb: AdbServe, way: str) -> None:
    s = await serve_adb()
    s.state.dialog = SystemDialog("permission", seed.MESSAGES, "Messages")
    screen = (await s.client.ok("DUMP_UI"))["screen"]
    taps = len(s.state.log.taps)
    w, h = s.state.screen_size
    response = await s.client.execute("TAP", {**_ways(screen, (w // 2, h // 2 - 30))[way], **NO_SETTLE})
    assert not response.success and response.error.startswith("PERMISSION_DENIED: "), response.error
    assert s.state.dialog is not None and len(s.state.log.taps) == taps


@pytest.mark.parametrize("way", WAYS)
async def test_on_the_sim_the_agent_cannot_allow_a_permission(client: Client, way: str) -> None:
    await client.ok("OPEN_APP", {"package": seed.MESSAGES})
    await client.ok("SIM_SHOW_DIALOG", {"kind": "permission", "package": seed.MESSAGES})
    screen = (await client.ok("DUMP_UI"))["screen"]
    response = await client.execute("TAP", {**_ways(screen, (540, 1100))[way], **NO_SETTLE})
    assert not response.success and response.error.startswith("PERMISSION_DENIED: "), response.error
    assert "Only this time" in (await client.ok("DUMP_UI"))["screen"]  # still up, for the owner


async def test_a_point_aimed_at_the_app_never_lands_on_a_dialog_over_it(serve_adb: AdbServe) -> None:
    s = await serve_adb()
    await s.client.ok("OPEN_APP", {"package": seed.MESSAGES, **NO_SETTLE})
    await s.client.ok("DUMP_UI")  # the agent reads Messages and aims at it
    s.state.dialog = SystemDialog("anr", seed.MESSAGES, "Messages")  # "Close app" now lies there
    w, h = s.state.screen_size
    response = await s.client.execute("TAP", {"x": str(w // 2), "y": str(h // 2 - 30), **NO_SETTLE})
    assert response.error.startswith("STALE_SCREEN: "), response.error
    assert s.state.dialog is not None and seed.MESSAGES in s.state.processes  # nothing closed
