"""Gestures follow the display's rotation (issue 19, item 2): SWIPE by direction, through gRPC on
`--device adb:SERIAL`, on a screen turned each of the four ways, stays on the screen as it is
turned and moves the way asked."""

from __future__ import annotations

import pytest

from tests.device.adb.conftest import AdbServe
from tests.fakes.phone import FakePhone


@pytest.mark.parametrize("rotation", [0, 1, 2, 3])
async def test_swipe_by_direction_stays_on_the_screen_as_it_is_turned(
    serve_adb: AdbServe, rotation: int
) -> None:
    phone = FakePhone()
    phone.state.screen_size = (800, 1280)  # the SM-T377A's natural size; its dump has rotation="1"
    phone.state.rotation = rotation
    s = await serve_adb(phone)
    width, height = (1280, 800) if rotation % 2 else (800, 1280)
    for direction in ("up", "down", "left", "right"):
        got = await s.client.ok("SWIPE", {"direction": direction})
        swipe = s.state.log.swipes[-1]
        assert (swipe.x1, swipe.y1, swipe.x2, swipe.y2) == (got["x1"], got["y1"], got["x2"], got["y2"])
        for x, y in ((swipe.x1, swipe.y1), (swipe.x2, swipe.y2)):
            assert 0 <= x < width and 0 <= y < height, (direction, swipe)
        moved = {"up": swipe.y2 < swipe.y1, "down": swipe.y2 > swipe.y1}
        moved.update({"left": swipe.x2 < swipe.x1, "right": swipe.x2 > swipe.x1})
        assert moved[direction]
        # through the middle of the screen as it is turned
        assert {"up": swipe.x1, "down": swipe.x1}.get(direction, width // 2) == width // 2
        assert {"left": swipe.y1, "right": swipe.y1}.get(direction, height // 2) == height // 2


async def test_swipe_follows_a_turn_after_connect(serve_adb: AdbServe) -> None:
    """The size is read at connect, the rotation at each gesture: turning the phone later counts."""
    phone = FakePhone()
    phone.state.screen_size = (800, 1280)
    s = await serve_adb(phone)
    await s.client.ok("SWIPE", {"direction": "up"})
    assert s.state.log.swipes[-1].y1 > 800
    s.state.rotation = 1
    await s.client.ok("SWIPE", {"direction": "up"})
    swipe = s.state.log.swipes[-1]
    assert (swipe.x1, swipe.y1, swipe.y2) == (640, 600, 200)  # 800 high, half of it
