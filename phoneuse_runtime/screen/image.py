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
# The share is counted on a copy this small; the labels' boxes are looked at on the decoded picture.
_PROBE_SIDE = 256


@dataclass(frozen=True)
class Fitted:
    """The picture as answered: its bytes and format, its size, and screen->image scale."""

    data: bytes
    format: ImageFormat
    width: int
    height: int
    scale: float


class Picture:
    """A screenshot's bytes, read once: its format and size from the header, and decoded at most
    once, a JPEG at the smallest 1/2^n of its size that is still at least the `max_side` fit's
    (libjpeg scales while it decodes: several times faster than decoding it whole)."""

    def __init__(self, data: bytes, *, max_side: int = DEFAULT_MAX_SIDE) -> None:
        from PIL import Image

        self.data = data
        with Image.open(io.BytesIO(data)) as img:  # reads the header only
            self.format: ImageFormat = "png" if img.format == "PNG" else "jpeg"
            self.size: tuple[int, int] = img.size
        self.factor = min(1.0, max_side / max(1, *self.size))
        self._image: PilImage.Image | None = None

    def sized(self, factor: float) -> tuple[int, int]:
        return max(1, round(self.size[0] * factor)), max(1, round(self.size[1] * factor))

    def image(self) -> PilImage.Image:
        """The picture decoded, RGB, at least the size of the `max_side` fit."""
        from PIL import Image

        if self._image is None:
            with Image.open(io.BytesIO(self.data)) as img:
                img.draft("RGB", self.sized(self.factor))
                self._image = img.convert("RGB")
        return self._image


def fit(
    picture: Picture,
    *,
    fmt: ImageFormat | None,
    quality: int = DEFAULT_QUALITY,
    max_bytes: int = DEFAULT_MAX_BYTES,
    marks: UiNode | None = None,
    screen_width: int | None = None,
) -> Fitted:
    """The picture as a model should get it: in `fmt` (else the phone's own format when its bytes
    fit untouched, else JPEG), the long side at most the picture's `max_side`, at most
    `max_bytes` (scaled down further until it is), with `marks` (a tree: its compact form's boxes
    and refs) drawn at the final size. `screen_width` is the screen's width in the tree's pixels
    (the picture's own by default): the scale is from it to the image."""
    from PIL import Image

    original = picture.size
    screen_w = screen_width or original[0]
    if (
        marks is None
        and fmt in (None, picture.format)
        and picture.factor == 1
        and len(picture.data) <= max_bytes
    ):
        return Fitted(picture.data, picture.format, original[0], original[1], _ratio(original[0], screen_w))
    out_fmt: ImageFormat = fmt or "jpeg"
    image = picture.image()
    factor = picture.factor
    while True:
        size = picture.sized(factor)
        # Box-reduced by whole factors first, then bicubic: as sharp as Lanczos on a screen's text
        # at a third of its cost.
        frame = (
            image if size == image.size else image.resize(size, Image.Resampling.BICUBIC, reducing_gap=2.0)
        )
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


def nearly_black(picture: Picture) -> bool:
    """Whether the picture is all or nearly all black (BLACK_SHARE of its pixels). A JPEG is
    judged on a small decode of its own; a PNG decoded once for this and what follows."""
    from PIL import Image

    if picture.format == "jpeg":
        with Image.open(io.BytesIO(picture.data)) as img:
            img.draft("L", (_PROBE_SIDE, _PROBE_SIDE))
            probe = img.convert("L")
    else:
        probe = picture.image().convert("L")
    probe.thumbnail((_PROBE_SIDE, _PROBE_SIDE))
    histogram: list[int] = probe.histogram()
    return sum(histogram[: BLACK_LUMA + 1]) >= BLACK_SHARE * sum(histogram)


def black_screen(picture: Picture, root: UiNode, *, screen_width: int | None = None) -> bool:
    """Whether the picture is the black one of a screen whose tree `root` has content: nearly all
    black, and none of the labelled elements of the apps' windows (the system UI's bars may
    show) drawn where the tree says they are. A dark app draws its labels; a secure one nothing."""
    labelled = [line.node for line in lines(root) if line.labels and line.node.package != SYSTEM_UI]
    if not labelled or not nearly_black(picture):
        return False
    image = picture.image().convert("L")
    scale = image.width / (screen_width or picture.size[0])
    for node in labelled:
        left, top, right, bottom = (round(v * scale) for v in node.bounds)
        box = (max(0, left), max(0, top), min(image.width, right), min(image.height, bottom))
        if box[2] <= box[0] or box[3] <= box[1]:
            continue
        brightest = image.crop(box).getextrema()[1]  # one band ("L"): (min, max)
        if isinstance(brightest, (int, float)) and brightest >= SHOWN_LUMA:
            return False
    return True
