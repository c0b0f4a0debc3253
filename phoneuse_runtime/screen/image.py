"""A screenshot a model can take, and the black one a secure window gives.

`fit` makes the picture SCREENSHOT answers: scaled so its long side is at most `max_side` and its
bytes at most `max_bytes` (a vision model's own limits: past 1568 px on the long side it scales
the image down itself, and large images overflow its request), set-of-marks drawn at that size,
and the scale from screen to image kept so a point on the image maps back (screen = image /
scale). The phone's own bytes go out untouched when they already fit.

`black_screen` says whether an image is the one a window with FLAG_SECURE (banking, OTP,
password managers) gives: all or nearly all black while the tree lists labels it does not show.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from phoneuse_runtime.screen.marks import draw_marks
from phoneuse_runtime.screen.text import lines
from phoneuse_runtime.screen.ui import UiNode

if TYPE_CHECKING:
    from PIL import Image as PilImage

ImageFormat = Literal["png", "jpeg"]

# What a vision model takes without scaling it down itself (Anthropic's guidance: 1568 px on the
# long side) and a size every model's API takes.
DEFAULT_MAX_SIDE = 1568
DEFAULT_MAX_BYTES = 1_000_000
DEFAULT_QUALITY = 80

# A pixel this dark (luminance 0-255) is black: a secure layer is drawn 0, JPEG noise adds a few;
# Material's dark background (#121212, 18) is not.
BLACK_LUMA = 12
# A label's box whose brightest pixel is under this shows nothing (light text on it would be over).
SHOWN_LUMA = 48
# The share of black pixels past which an image is "nearly all black": the bars of the system UI
# drawn over a secure app keep it from being all black.
BLACK_SHARE = 0.85
SYSTEM_UI = "com.android.systemui"
# The image is judged on a copy this small (the share), the labels' boxes on the full one.
_PROBE_SIDE = 256


@dataclass(frozen=True)
class Fitted:
    """The picture as answered: its bytes and format, its size, and screen->image scale."""

    data: bytes
    format: ImageFormat
    width: int
    height: int
    scale: float


def _header(data: bytes) -> tuple[ImageFormat, tuple[int, int]]:
    from PIL import Image

    with Image.open(io.BytesIO(data)) as img:  # reads the header only
        return ("png" if img.format == "PNG" else "jpeg"), img.size


def fit(
    data: bytes,
    *,
    fmt: ImageFormat | None,
    quality: int = DEFAULT_QUALITY,
    max_side: int = DEFAULT_MAX_SIDE,
    max_bytes: int = DEFAULT_MAX_BYTES,
    marks: UiNode | None = None,
    screen_width: int | None = None,
) -> Fitted:
    """`data` (PNG or JPEG) as a model should get it: in `fmt` (else the phone's own format when
    its bytes fit untouched, else JPEG), the long side at most `max_side`, at most `max_bytes`
    (scaled down further until it is), with `marks` (a tree: its compact form's boxes and refs)
    drawn at the final size. `screen_width` is the screen's width in the tree's pixels (the
    image's own by default): the scale is from it to the image."""
    from PIL import Image

    given, original = _header(data)
    screen_w = screen_width or original[0]
    if marks is None and fmt in (None, given) and max(original) <= max_side and len(data) <= max_bytes:
        return Fitted(data, given, original[0], original[1], _ratio(original[0], screen_w))
    out_fmt: ImageFormat = fmt or "jpeg"
    with Image.open(io.BytesIO(data)) as img:
        image = img.convert("RGB")
    factor = min(1.0, max_side / max(original))
    while True:
        size = (max(1, round(original[0] * factor)), max(1, round(original[1] * factor)))
        frame = image if size == original else image.resize(size, Image.Resampling.LANCZOS)
        if marks is not None:
            frame = frame.copy() if frame is image else frame
            draw_marks(frame, marks, scale=size[0] / screen_w)
        encoded = _encode(frame, out_fmt, quality)
        if len(encoded) <= max_bytes or max(size) <= 16:
            return Fitted(encoded, out_fmt, size[0], size[1], _ratio(size[0], screen_w))
        # Bytes grow about with the area: aim under the bound in one step, at most halving a side.
        factor *= max(0.5, min(0.9, (max_bytes / len(encoded)) ** 0.5 * 0.95))


def _ratio(image_w: int, screen_w: int) -> float:
    return round(image_w / screen_w, 6) if screen_w > 0 else 1.0


def _encode(image: PilImage.Image, fmt: ImageFormat, quality: int) -> bytes:
    out = io.BytesIO()
    if fmt == "jpeg":
        image.save(out, "JPEG", quality=quality, optimize=True)
    else:
        image.save(out, "PNG", optimize=True)
    return out.getvalue()


def nearly_black(data: bytes) -> bool:
    """Whether the image (PNG or JPEG) is all or nearly all black (BLACK_SHARE of its pixels)."""
    from PIL import Image

    with Image.open(io.BytesIO(data)) as img:
        img.draft("L", (_PROBE_SIDE, _PROBE_SIDE))  # a JPEG decodes at a fraction of its size
        probe = img.convert("L")
    probe.thumbnail((_PROBE_SIDE, _PROBE_SIDE))
    histogram: list[int] = probe.histogram()
    return sum(histogram[: BLACK_LUMA + 1]) >= BLACK_SHARE * sum(histogram)


def black_screen(data: bytes, root: UiNode, *, screen_width: int | None = None) -> bool:
    """Whether `data` is the black picture of a screen whose tree `root` has content: nearly all
    black, and none of the labelled elements of the apps' windows (the system UI's bars may
    show) drawn where the tree says they are. A dark app draws its labels; a secure one nothing."""
    from PIL import Image

    labelled = [line.node for line in lines(root) if line.labels and line.node.package != SYSTEM_UI]
    if not labelled or not nearly_black(data):
        return False
    with Image.open(io.BytesIO(data)) as img:
        image = img.convert("L")
    scale = image.width / (screen_width or image.width)
    for node in labelled:
        left, top, right, bottom = (round(v * scale) for v in node.bounds)
        box = (max(0, left), max(0, top), min(image.width, right), min(image.height, bottom))
        if box[2] <= box[0] or box[3] <= box[1]:
            continue
        if image.crop(box).getextrema()[1] >= SHOWN_LUMA:
            return False
    return True
