"""The screen as an image: the uiautomator2 server's JPEG, else `screencap` to a file on the
phone read back over sync (a server that could not take one)."""

from __future__ import annotations

import io
from collections.abc import Callable

import adbutils

from phoneuse_runtime.device.adb.shell import command
from phoneuse_runtime.device.adb.ui import Ui
from phoneuse_runtime.device.adb.worker import Budget
from phoneuse_runtime.device.base import Screenshot, ShellResult

SCREENSHOT_REMOTE = "/data/local/tmp/phoneuse-screen.png"


def screenshot(
    budget: Budget, ui: Ui, device: adbutils.AdbDevice, sh: Callable[[Budget, str], ShellResult]
) -> Screenshot:
    """One screenshot, with its size and format read from the image's header."""
    from PIL import Image  # reads the header only: the image is not decoded here

    data = ui.screenshot_jpeg(budget)
    via, kind = "uiautomator2", "jpeg"
    if data is None:
        sh(budget, command("screencap", "-p", SCREENSHOT_REMOTE))
        data = device.sync.read_bytes(SCREENSHOT_REMOTE)
        via, kind = "screencap", "png"
    with Image.open(io.BytesIO(data)) as image:
        width, height = image.size
        kind = "png" if image.format == "PNG" else "jpeg"
    return Screenshot(data=data, format=kind, width=width, height=height, via=via)  # type: ignore[arg-type]
