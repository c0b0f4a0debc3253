"""Set-of-marks: a screenshot with each listed element's box and ref drawn on it, for vision models.

The elements and refs are DUMP_UI's compact form's (screen_text.lines), so a ref read off the
image is the one `TAP ref=…` takes.
"""

from __future__ import annotations

import io

from phoneuse_runtime.screen.text import lines
from phoneuse_runtime.screen.ui import UiNode

# Distinct, legible on light and dark screens; a ref's colour is fixed by the ref.
_COLOURS = ("#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4", "#008080", "#9a6324", "#800000")


def draw_marks(data: bytes, root: UiNode) -> tuple[bytes, int, int]:
    """The image `data` (PNG or JPEG) with the marks drawn, as PNG; returns (png, width, height).
    Bounds are screen pixels, scaled when the image is smaller than the screen."""
    from PIL import Image, ImageDraw, ImageFont

    with Image.open(io.BytesIO(data)) as img:
        image = img.convert("RGB")
    width, height = image.size
    screen_w = max(1, root.bounds[2]) if root.bounds[2] > 0 else width
    scale = width / screen_w if screen_w else 1.0
    font = ImageFont.load_default(size=max(10, round(width / 40)))
    draw = ImageDraw.Draw(image)
    for line in lines(root):
        left, top, right, bottom = (round(v * scale) for v in line.node.bounds)
        colour = _COLOURS[sum(line.ref.encode()) % len(_COLOURS)]
        draw.rectangle((left, top, right - 1, bottom - 1), outline=colour, width=max(1, width // 360))
        box = draw.textbbox((left, top), line.ref, font=font)
        draw.rectangle((box[0] - 2, box[1] - 2, box[2] + 2, box[3] + 2), fill=colour)
        draw.text((left, top), line.ref, fill="white", font=font)
    out = io.BytesIO()
    image.save(out, "PNG", optimize=True)
    return out.getvalue(), width, height
