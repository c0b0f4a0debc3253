"""Set-of-marks: a screenshot with each listed element's box and ref drawn on it, for vision models.

The elements and refs are DUMP_UI's compact form's (screen_text.lines), so a ref read off the
image is the one `TAP ref=…` takes. They are drawn on the image at the size it is answered
(screen/image.py scales first), so a box and its ref stay sharp on a scaled picture.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from phoneuse_runtime.screen.text import lines
from phoneuse_runtime.screen.ui import UiNode

if TYPE_CHECKING:
    from PIL import Image

# Distinct, legible on light and dark screens; a ref's colour is fixed by the ref.
_COLOURS = ("#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4", "#008080", "#9a6324", "#800000")


def draw_marks(image: Image.Image, root: UiNode, *, scale: float) -> None:
    """Draws the marks on `image` (RGB), in place; `scale` maps the tree's screen pixels to the
    image's."""
    from PIL import ImageDraw, ImageFont

    width = image.width
    font = ImageFont.load_default(size=max(10, round(width / 40)))
    draw = ImageDraw.Draw(image)
    for line in lines(root):
        left, top, right, bottom = (round(v * scale) for v in line.node.bounds)
        colour = _COLOURS[sum(line.ref.encode()) % len(_COLOURS)]
        box = (left, top, max(left, right - 1), max(top, bottom - 1))
        draw.rectangle(box, outline=colour, width=max(2, width // 360))
        tag = draw.textbbox((left, top), line.ref, font=font)
        draw.rectangle((tag[0] - 2, tag[1] - 2, tag[2] + 2, tag[3] + 2), fill=colour)
        draw.text((left, top), line.ref, fill="white", font=font)
