"""Screenshots: the current windows drawn with Pillow, as PNG (screencap -p), JPEG (u2's
takeScreenshot) or raw RGBA (screencap without -p). Flat boxes and the default bitmap font keep a
720x1280 frame at a few milliseconds, and a screen that is off is black, as on a phone; so is a
window that sets FLAG_SECURE (`PhoneState.secure_packages`), as SurfaceFlinger leaves a secure
layer out of any capture that is not itself secure, while the system UI's bars over it show.
"""

from __future__ import annotations

import io

from PIL import Image, ImageDraw

from .state import PhoneState
from .ui import UiNode

BACKGROUND = (250, 250, 252)
SYSTEM = (32, 33, 36)
BOX = (232, 236, 244)
FIELD = (241, 243, 244)
FOCUS = (26, 115, 232)
TEXT = (32, 33, 36)


def _draw(node: UiNode, draw: ImageDraw.ImageDraw) -> None:
    left, top, right, bottom = node.bounds
    if right > left and bottom > top:
        box = (left, top, right - 1, bottom - 1)
        if node.package == "com.android.systemui" and node.resource_id.endswith(
            ("status_bar", "navigation_bar_frame")
        ):
            draw.rectangle(box, fill=SYSTEM)
        elif node.editable:
            draw.rectangle(box, fill=FIELD, outline=FOCUS if node.focused else BOX, width=3)
        elif node.clickable:
            draw.rectangle(box, outline=BOX, width=2)
        label = node.a11y_text or (node.content_desc if node.clickable and not node.children else "")
        if label:
            colour = (255, 255, 255) if node.package == "com.android.systemui" else TEXT
            draw.text((left + 8, top + 8), label[:60], fill=colour)
    for child in node.children:
        _draw(child, draw)


def render(state: PhoneState, fmt: str, *, quality: int = 80, scale: float = 1.0) -> bytes:
    """The screen as "PNG", "JPEG" or "RAW" (RGBA bytes, no header)."""
    from .apps import windows

    size = state.screen_size
    image = Image.new("RGB", size, BACKGROUND if state.screen_on else (0, 0, 0))
    if state.screen_on:
        draw = ImageDraw.Draw(image)
        for window in windows(state):
            if window.package in state.secure_packages:
                left, top, right, bottom = window.bounds
                draw.rectangle((left, top, right - 1, bottom - 1), fill=(0, 0, 0))
            else:
                _draw(window, draw)
    if scale != 1.0 and scale > 0:
        image = image.resize((max(1, int(size[0] * scale)), max(1, int(size[1] * scale))))
    if fmt == "RAW":
        return image.convert("RGBA").tobytes()
    out = io.BytesIO()
    if fmt == "JPEG":
        image.save(out, format="JPEG", quality=max(1, min(100, quality)))
    else:
        image.save(out, format="PNG", compress_level=1)
    return out.getvalue()
