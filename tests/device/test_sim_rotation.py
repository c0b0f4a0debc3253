"""The simulated phone follows the rotation of the screen in front (issue 19, item 2): a screen a
scenario supplies from a landscape dump (the SM-T377A's, rotation="1") is landscape, and SWIPE by
direction stays on it, in each of the four rotations."""

from __future__ import annotations

import re

import pytest

from phoneuse_runtime.device.sim.widgets import HEIGHT, WIDTH
from tests.conftest import Client
from tests.fakes.golden import golden

T377A = "samsung-tab-a-sm-t377a_android6.0.1_dev-settings_landscape-rot1_with-dump-status-line.xml"


def _turned(rotation: int) -> str:
    text = golden("uidump", T377A)
    xml = text[text.index("<?xml") :]  # after the dump's own status line
    # Settings is one of the owner's controls, which the agent never drives: another app's screen.
    xml = xml.replace('package="com.android.settings"', 'package="com.example.tablet"')
    return re.sub(r'(<hierarchy\b[^>]*\brotation=)"\d"', rf'\g<1>"{rotation}"', xml, count=1)


@pytest.mark.parametrize("rotation", [0, 1, 2, 3])
async def test_swipe_by_direction_stays_on_a_turned_screen(client: Client, rotation: int) -> None:
    await client.ok("SIM_SET_SCREEN", {"xml": _turned(rotation)})
    width, height = (HEIGHT, WIDTH) if rotation % 2 else (WIDTH, HEIGHT)
    for direction in ("up", "down", "left", "right"):
        got = await client.ok("SWIPE", {"direction": direction, "duration_ms": "10"})
        for x, y in ((got["x1"], got["y1"]), (got["x2"], got["y2"])):
            assert 0 <= x < width and 0 <= y < height, (direction, got)
    up = await client.ok("SWIPE", {"direction": "up", "duration_ms": "10"})
    assert (up["x1"], up["y1"], up["y2"]) == (
        width // 2,
        height // 2 + height // 4,
        height // 2 - height // 4,
    )
