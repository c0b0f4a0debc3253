"""Screens the tree or the picture cannot show, on `--device adb:` through the real adb server
against the fake phone: a FLAG_SECURE window's black screenshot (uiautomator2's and screencap's),
and a large panel's screenshot scaled to what a model takes, on both paths."""

from __future__ import annotations

import base64
import io

from PIL import Image

from phoneuse_runtime.screen.image import DEFAULT_MAX_BYTES, DEFAULT_MAX_SIDE
from tests.device.adb.conftest import AdbServe
from tests.fakes import seed
from tests.fakes.phone import FakePhone


def _image(shot: dict[str, object]) -> Image.Image:
    data = base64.b64decode(str(shot["image_base64"]), validate=True)
    assert shot["size_bytes"] == len(data)
    image = Image.open(io.BytesIO(data))
    image.load()
    return image


async def test_a_secure_window_is_said_on_both_paths_and_its_tree_still_read(serve_adb: AdbServe) -> None:
    s = await serve_adb()
    plain = await s.client.ok("SCREENSHOT")
    assert (plain["secure"], plain["hint"]) == (False, None)
    s.state.secure_packages.add(seed.LAUNCHER)  # the home screen sets FLAG_SECURE
    for via in ("uiautomator2", "screencap"):
        s.state.faults.u2_screenshot_null = via == "screencap"
        shot = await s.client.ok("SCREENSHOT")
        assert shot["via"] == via and shot["secure"] is True, via
        assert "FLAG_SECURE" in shot["hint"] and "DUMP_UI" in shot["hint"]
        # The picture is black where the app is, as the phone gave it.
        middle = _image(shot).convert("L").getpixel((shot["width"] // 2, shot["height"] // 2))
        assert isinstance(middle, int) and middle < 12
    screen = (await s.client.ok("DUMP_UI"))["screen"]
    assert '"Keep Notes"' in screen  # the compact screen still lists what the tree has


async def test_a_black_picture_of_an_empty_tree_is_not_secure(serve_adb: AdbServe) -> None:
    # A black picture with nothing in the app's tree is not a secure window: nothing is hidden.
    s = await serve_adb()
    s.state.secure_packages.add(seed.LAUNCHER)
    s.state.custom_screens[seed.LAUNCHER + "/" + seed.HOME_ACT] = (
        "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"
        '<node index="0" text="" resource-id="" class="android.widget.FrameLayout" '
        f'package="{seed.LAUNCHER}" content-desc="" checkable="false" checked="false" '
        'clickable="false" enabled="true" focusable="false" focused="false" scrollable="false" '
        'long-clickable="false" password="false" selected="false" bounds="[0,0][720,1280]" /></hierarchy>'
    )
    shot = await s.client.ok("SCREENSHOT")
    assert shot["secure"] is False


async def test_a_large_panel_is_scaled_on_both_paths(serve_adb: AdbServe) -> None:
    phone = FakePhone()
    phone.state.screen_size = (1440, 3200)
    s = await serve_adb(phone)
    for via in ("uiautomator2", "screencap"):
        s.state.faults.u2_screenshot_null = via == "screencap"
        shot = await s.client.ok("SCREENSHOT")
        image = _image(shot)
        assert shot["via"] == via
        # Not the full panel, and not a PNG: what a model takes, with the way back to the screen.
        assert (shot["original_width"], shot["original_height"]) == (1440, 3200)
        assert image.size == (shot["width"], shot["height"]) == (706, DEFAULT_MAX_SIDE), via
        assert image.format == "JPEG" and shot["format"] == "jpeg"
        assert shot["size_bytes"] <= DEFAULT_MAX_BYTES
        assert shot["scale"] == round(706 / 1440, 6)
    marked = await s.client.ok("SCREENSHOT", {"marks": "true", "format": "png"})
    assert (marked["width"], marked["height"]) == (706, DEFAULT_MAX_SIDE)
    # A point read off the image maps back to the element the tree has there.
    dump = await s.client.ok("DUMP_UI", {"format": "json"})
    icon = next(e for e in dump["elements"] if e["text"] == "Keep Notes")
    left, top, right, bottom = icon["bounds"]
    x, y = round((left + right) / 2 * shot["scale"]), round((top + bottom) / 2 * shot["scale"])
    tapped = await s.client.ok(
        "TAP", {"x": str(round(x / shot["scale"])), "y": str(round(y / shot["scale"]))}
    )
    assert s.state.foreground().package == seed.KEEP, tapped
