"""Draws a UiNode tree as a PNG, so a screenshot is a plausible picture of the simulated screen."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

from phoneuse_runtime.screen.ui import UiNode

if TYPE_CHECKING:
    from PIL import ImageDraw, ImageFont

BACKGROUND = (250, 250, 252)
STATUS = (32, 33, 36)
CLICKABLE = (232, 236, 244)
OUTLINE = (196, 199, 206)
FIELD = (241, 243, 244)
FOCUS = (26, 115, 232)
TEXT = (32, 33, 36)
ON = (26, 115, 232)
OFF = (160, 160, 160)


def _wrap(text: str, font: ImageFont.ImageFont | ImageFont.FreeTypeFont, width: int) -> list[str]:
    lines: list[str] = []
    for paragraph in text.split("\n"):
        line = ""
        for word in paragraph.split(" "):
            candidate = f"{line} {word}" if line else word
            if font.getlength(candidate) <= width or not line:
                line = candidate
            else:
                lines.append(line)
                line = word
        lines.append(line)
    return lines


def _is_bubble(node: UiNode) -> bool:
    """A chat bubble: a layout around one message text."""
    return len(node.children) == 1 and node.children[0].resource_id.endswith(":id/message_text")


def _draw(
    node: UiNode, draw: ImageDraw.ImageDraw, font: ImageFont.ImageFont | ImageFont.FreeTypeFont
) -> None:
    left, top, right, bottom = node.bounds
    if right <= left or bottom <= top:
        return
    box = (left, top, right - 1, bottom - 1)
    if node.package == "com.android.systemui" and node.resource_id.endswith(":id/status_bar"):
        draw.rectangle(box, fill=STATUS)
    elif node.class_name.endswith("Switch"):
        cy = (top + bottom) // 2
        draw.rounded_rectangle(
            (left + 20, cy - 30, right - 20, cy + 30), radius=30, fill=ON if node.checked else OFF
        )
        knob = right - 80 if node.checked else left + 20
        draw.ellipse((knob, cy - 30, knob + 60, cy + 30), fill=(255, 255, 255))
    elif node.editable:
        draw.rounded_rectangle(
            box, radius=24, fill=FIELD, outline=FOCUS if node.focused else OUTLINE, width=4
        )
    elif (node.clickable and node.class_name != "android.widget.TextView") or _is_bubble(node):
        draw.rounded_rectangle(box, radius=28, fill=CLICKABLE, outline=OUTLINE, width=2)
    label = node.text or (node.description if node.clickable and not node.children else "")
    if label and bottom - top >= 30:
        colour = (255, 255, 255) if node.package == "com.android.systemui" else TEXT
        y = top + 8
        width = max(1, right - left - 24)
        for wrapped in _wrap(label, font, width):
            line = wrapped
            while len(line) > 1 and font.getlength(line) > width:
                line = line[:-1]
            if y + 44 > bottom + 8:
                break
            draw.text((left + 12, y), line, fill=colour, font=font)
            y += 50
    for child in node.children:
        _draw(child, draw, font)


def render_png(root: UiNode, size: tuple[int, int], *, secure: frozenset[str] = frozenset()) -> bytes:
    """The screen as PNG; the windows of the `secure` packages (FLAG_SECURE) are drawn black."""
    from PIL import Image, ImageDraw, ImageFont  # a dependency, but only screenshots need it

    image = Image.new("RGB", size, BACKGROUND)
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=40)
    windows = root.children if root.class_name == "hierarchy" else [root]
    for window in windows:
        if window.package in secure:
            left, top, right, bottom = window.bounds
            draw.rectangle((left, top, right - 1, bottom - 1), fill=(0, 0, 0))
        else:
            _draw(window, draw, font)
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()
