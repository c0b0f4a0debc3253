"""UI actions: touch, type, keys, waiting, and reading the screen."""

from __future__ import annotations

import asyncio
import base64
from typing import Any, Literal

from pydantic import Field, model_validator

from phoneuse_runtime.device.base import KEYCODES, ActedOn, Device, ElementAct
from phoneuse_runtime.kernel.capabilities import SCREENSHOT, UI
from phoneuse_runtime.kernel.errors import ElementNotFound, InvalidParams, PermissionDenied
from phoneuse_runtime.kernel.limits import MAX_UI_ELEMENTS, clip
from phoneuse_runtime.kernel.params import Params
from phoneuse_runtime.kernel.registry import ActionContext, ActionResult, ActionSpec
from phoneuse_runtime.owner.controls import HOW
from phoneuse_runtime.screen.image import DEFAULT_MAX_BYTES, DEFAULT_MAX_SIDE, DEFAULT_QUALITY
from phoneuse_runtime.screen.lookup import Element, SelectorFields, SelectorParams, find_element, screen
from phoneuse_runtime.screen.selector import Selector
from phoneuse_runtime.screen.stale import SeenScreen, expecting
from phoneuse_runtime.screen.target import Target, target_of
from phoneuse_runtime.screen.text import DEFAULT_MAX_ELEMENTS, render
from phoneuse_runtime.screen.ui import (
    SYSTEM_UI,
    UiNode,
    compact_elements,
    fingerprint,
    focused_node,
    front_package,
)
from phoneuse_runtime.util.polling import poll

Direction = Literal["up", "down", "left", "right"]

# Images stay under this (their base64 under 3 MiB) so a response fits grpc's default 4 MiB
# client limit, whatever `max_bytes` asks.
MAX_IMAGE_BYTES = 3 * 1024 * 1024 * 3 // 4


def _check_screen() -> Any:
    return Field(
        default=True,
        description="at coordinates: not done, STALE_SCREEN, when another app's window (a system "
        "dialog, a call, another app) came to the front since the last screen this caller was given; "
        "false does it whatever app is in front (the owner's controls are refused still)",
    )


def _aimed(ctx: ActionContext, check: bool) -> SeenScreen | None:
    """The screen a gesture at coordinates was aimed at: the last one this caller was given
    (None: no check, asked for none or no screen given yet)."""
    return ctx.device.refs.seen_by(ctx.caller.principal) if check else None


class PointOrSelector(SelectorParams):
    x: int | None = Field(default=None, ge=0)
    y: int | None = Field(default=None, ge=0)
    check_screen: bool = _check_screen()

    @model_validator(mode="after")
    def _one_target(self) -> PointOrSelector:
        has_point = self.x is not None or self.y is not None
        if has_point and (self.x is None or self.y is None):
            raise ValueError("give both x and y")
        if has_point == (not self.selector().is_empty()):
            raise ValueError(
                "give either x and y, or a selector (ref, text, resource_id, description, class_name)"
            )
        return self


class PressResult(ActionResult):
    x: int = Field(
        description="where the finger went: the point given, or the centre of the element as the phone "
        "found it when it pressed it"
    )
    y: int
    element: Target | None = Field(
        description="the element pressed, when a selector chose it, named as the compact form names it"
    )


async def _target(
    ctx: ActionContext, p: PointOrSelector
) -> tuple[int, int, Target | None, SeenScreen | None]:
    """Where to press, the element there (a selector's) and the screen the point is checked
    against (a point's: stale.py; an element just found is on the screen now)."""
    if p.x is not None and p.y is not None:
        return p.x, p.y, None, _aimed(ctx, p.check_screen)
    node = await find_element(ctx.device, p.selector(), wait_ms=p.wait_ms)
    _guard(ctx, node)
    x, y = node.center
    return x, y, target_of(ctx.device, node, ref=p.ref), None


def _guard(ctx: ActionContext, node: UiNode) -> None:
    if node.package in ctx.settings.owner_apps and not ctx.caller.owner:
        # Drawn over the app in front without taking the focus (a heads-up notification, the
        # status bar): the front check cannot see it, the element's own package can.
        raise PermissionDenied(
            f"{ctx.name}: the element is {node.package}'s, one of the owner's controls: {HOW}"
        )


def _ref_selector(ctx: ActionContext, p: SelectorFields) -> Selector:
    """The selector to act with: for a ref alone whose element the last screen's text,
    description, id, class and package picked alone, those (the phone finds it as it acts, in one
    round trip: refs.py); else the params' own (a ref among them resolved on a fresh dump)."""
    selector = p.selector()
    if p.ref is None or selector != Selector(ref=p.ref):
        return selector
    target = ctx.device.refs.get(p.ref)
    if target is None or target.selector is None:
        return selector
    _guard(ctx, target.node)
    return target.selector


async def act_on(ctx: ActionContext, p: SelectorFields, act: ElementAct) -> ActedOn:
    """Does `act` to the element the params pick, found by the device as it acts (`Device.act_on`:
    one round trip on adb); ElementNotFound, having done nothing, when no element matches (a ref's
    element gone, or changed)."""
    selector = _ref_selector(ctx, p)
    acted = await ctx.device.act_on(selector, act, check=lambda node: _guard(ctx, node))
    if acted is not None:
        return acted
    if selector.ref is None and p.ref is not None:
        raise ElementNotFound(f"ref {p.ref}: its element is no longer on the screen")
    # The precise reason ("N matched, index out of range") from one last dump; an element that
    # appeared meanwhile is acted on the way any device can.
    node = selector.require(await screen(ctx.device))
    _guard(ctx, node)
    acted = await Device.act_on(ctx.device, selector, act, check=lambda node: _guard(ctx, node))
    if acted is None:
        raise ElementNotFound(f"no element matches {selector.describe()}")
    return acted


async def tap(ctx: ActionContext, p: PointOrSelector) -> PressResult:
    if (p.x is not None and p.y is not None) or p.wait_ms:
        x, y, element, aimed = await _target(ctx, p)
        with expecting(aimed):
            await ctx.device.tap(x, y)
        return PressResult(x=x, y=y, element=element, via=ctx.device.via)
    node = (await act_on(ctx, p, ElementAct("tap"))).node
    x, y = node.center
    return PressResult(x=x, y=y, element=target_of(ctx.device, node, ref=p.ref), via=ctx.device.via)


class LongPressParams(PointOrSelector):
    duration_ms: int = Field(
        default=800,
        gt=0,
        le=60_000,
        description="how long to hold; on an element, when not given: the phone's own long press (one "
        "round trip on adb)",
    )


async def long_press(ctx: ActionContext, p: LongPressParams) -> PressResult:
    if (p.x is not None and p.y is not None) or p.wait_ms:
        x, y, element, aimed = await _target(ctx, p)
        with expecting(aimed):
            await ctx.device.long_press(x, y, p.duration_ms)
        return PressResult(x=x, y=y, element=element, via=ctx.device.via)
    duration = p.duration_ms if "duration_ms" in p.model_fields_set else None
    node = (await act_on(ctx, p, ElementAct("long_press", duration_ms=duration))).node
    x, y = node.center
    return PressResult(x=x, y=y, element=target_of(ctx.device, node, ref=p.ref), via=ctx.device.via)


class SwipeParams(Params):
    x1: int | None = Field(default=None, ge=0)
    y1: int | None = Field(default=None, ge=0)
    x2: int | None = Field(default=None, ge=0)
    y2: int | None = Field(default=None, ge=0)
    direction: Direction | None = Field(default=None, description="the way the finger moves")
    distance: float = Field(default=0.5, gt=0, le=0.9, description="fraction of the screen, with direction")
    duration_ms: int = Field(default=300, gt=0, le=10_000)
    check_screen: bool = _check_screen()

    @model_validator(mode="after")
    def _coordinates_or_direction(self) -> SwipeParams:
        coords = (self.x1, self.y1, self.x2, self.y2)
        given = sum(c is not None for c in coords)
        if self.direction is None and given != 4:
            raise ValueError("give x1, y1, x2 and y2, or a direction (up, down, left, right)")
        if self.direction is not None and given:
            raise ValueError("give either coordinates or a direction, not both")
        return self


class SwipeResult(ActionResult):
    x1: int
    y1: int
    x2: int
    y2: int
    duration_ms: int


def _finger_path(
    bounds: tuple[int, int, int, int], finger: Direction, distance: float
) -> tuple[int, int, int, int]:
    left, top, right, bottom = bounds
    cx, cy = (left + right) // 2, (top + bottom) // 2
    dx = int((right - left) * distance / 2)
    dy = int((bottom - top) * distance / 2)
    return {
        "up": (cx, cy + dy, cx, cy - dy),
        "down": (cx, cy - dy, cx, cy + dy),
        "left": (cx + dx, cy, cx - dx, cy),
        "right": (cx - dx, cy, cx + dx, cy),
    }[finger]


async def swipe(ctx: ActionContext, p: SwipeParams) -> SwipeResult:
    aimed = None
    if p.direction is not None:
        width, height = await ctx.device.screen_size()
        x1, y1, x2, y2 = _finger_path((0, 0, width, height), p.direction, p.distance)
    else:
        assert p.x1 is not None and p.y1 is not None and p.x2 is not None and p.y2 is not None
        x1, y1, x2, y2 = p.x1, p.y1, p.x2, p.y2
        aimed = _aimed(ctx, p.check_screen)
    with expecting(aimed):
        await ctx.device.swipe(x1, y1, x2, y2, p.duration_ms)
    return SwipeResult(x1=x1, y1=y1, x2=x2, y2=y2, duration_ms=p.duration_ms, via=ctx.device.via)


class ScrollParams(SelectorParams):
    direction: Direction = Field(
        default="down", description="where the content you want to see is: down reveals later items"
    )
    max_swipes: int = Field(default=10, ge=1, le=50, description="with a selector: swipes before giving up")


class ScrollResult(ActionResult):
    swipes: int
    reached_end: bool = Field(description="the screen stopped changing")
    element: Element | None = Field(description="the element scrolled to, when a selector was given")


_OPPOSITE: dict[Direction, Direction] = {"down": "up", "up": "down", "left": "right", "right": "left"}


def _scroll_node(root: UiNode) -> UiNode:
    """What a scroll moves: the largest scrollable element, else the app's window (not the
    status bar's), else the whole screen."""
    scrollables = [n for n in root.walk() if n.scrollable]
    if not scrollables:
        windows = [n for n in root.children if n.package != SYSTEM_UI]
        return windows[0] if len(windows) == 1 else root
    return max(scrollables, key=lambda n: (n.bounds[2] - n.bounds[0]) * (n.bounds[3] - n.bounds[1]))


async def scroll(ctx: ActionContext, p: ScrollParams) -> ScrollResult:
    selector = p.selector()
    root = await screen(ctx.device)
    wanted = None if selector.is_empty() else selector
    if wanted is not None:
        node = wanted.find(root)
        if node is not None:
            return ScrollResult(swipes=0, reached_end=False, element=Element.of(node), via=ctx.device.via)
    limit = p.max_swipes if wanted is not None else 1
    for count in range(1, limit + 1):
        # The end is where the scrolled content stopped changing; the rest of the screen (the
        # status bar's clock, a notification) may change meanwhile.
        area = _scroll_node(root)
        before = fingerprint(area)
        x1, y1, x2, y2 = _finger_path(area.bounds, _OPPOSITE[p.direction], 0.6)
        await ctx.device.swipe(x1, y1, x2, y2, 400)
        root = await screen(ctx.device)
        at_end = fingerprint(_scroll_node(root)) == before
        if wanted is not None:
            node = wanted.find(root)
            if node is not None:
                return ScrollResult(
                    swipes=count, reached_end=at_end, element=Element.of(node), via=ctx.device.via
                )
            if at_end:
                raise ElementNotFound(
                    f"scrolled {p.direction} to the end; no element matches {wanted.describe()}"
                )
        else:
            return ScrollResult(swipes=count, reached_end=at_end, element=None, via=ctx.device.via)
    assert wanted is not None
    raise ElementNotFound(f"no element matches {wanted.describe()} after {limit} swipes {p.direction}")


class FieldParams(SelectorFields):
    """Which text field: a selector, or the focused field when none is given."""

    field_text: str | None = Field(default=None, description="the field's current visible text")
    wait_ms: int = Field(default=0, ge=0)

    def selector_text(self) -> str | None:
        # `text` is what TYPE_TEXT types, so the field's own text has another name.
        return self.field_text


async def _focus_field(ctx: ActionContext, p: FieldParams, *, always: bool = False) -> UiNode:
    """Taps the selected field (or takes the focused one) and returns it as it was found: one
    round trip where the device finds it as it taps (with `always`, tapped even when it has the
    focus already, which a field about to be emptied does not mind)."""
    selector = p.selector()
    if selector.is_empty():
        node = focused_node(await screen(ctx.device))
        if node is None:
            raise ElementNotFound(
                "no text field has focus; give resource_id, description, class_name or field_text"
            )
        return node
    if not p.wait_ms:
        return (await act_on(ctx, p, ElementAct("focus", always=always))).node
    node = await find_element(ctx.device, selector, wait_ms=p.wait_ms)
    if not node.focused:
        await ctx.device.tap(*node.center)
    return node


def _content(node: UiNode) -> str:
    """What a field holds: Android reports an empty field's hint as its text (the dump's `hint` tells)."""
    return "" if node.hint and node.text == node.hint else node.text


def _shows(node: UiNode, expected: str) -> bool:
    """Whether the field shows `expected`; an empty one may show its hint instead."""
    return node.text == expected or (expected == "" and _content(node) == "")


async def _read_field(ctx: ActionContext, was: UiNode | None) -> UiNode | None:
    """The field after an edit: the focused editable, else the one at the same place."""
    root = await screen(ctx.device)
    focused = focused_node(root)
    if focused is not None or was is None:
        return focused
    return next((n for n in root.walk() if n.editable and n.bounds == was.bounds), None)


class TypeTextParams(FieldParams):
    text: str = Field(description="any Unicode; typed verbatim")
    clear: bool = Field(default=True, description="empty the field first")
    submit: bool = Field(default=False, description="press ENTER afterwards")


class TypeTextResult(ActionResult):
    typed: str
    field: Target | None = Field(description="the field typed into, named as the compact form names it")
    read_back: str | None = Field(description="the field's text after typing, as the screen shows it")
    verified: bool
    verify_error: str | None = None
    submitted: bool


async def type_text(ctx: ActionContext, p: TypeTextParams) -> TypeTextResult:
    # The focused field, emptied and typed into, needs no look before: the typing says when no
    # field has focus, and the read back shows the field (two round trips on adb).
    node = None if p.clear and p.selector().is_empty() else await _focus_field(ctx, p, always=p.clear)
    before = "" if p.clear or node is None else _content(node)
    via = await ctx.device.input_text(p.text, replace=p.clear)
    after = await _read_field(ctx, node)
    if after is None and node is None:
        raise ElementNotFound(
            "no text field has focus; give resource_id, description, class_name or field_text"
        )
    read_back = after.text if after is not None else None
    verify_error = None
    if after is None:
        verify_error = "the field could not be found after typing"
    elif after.password:
        verify_error = "password fields do not show their text"
    elif not _shows(after, before + p.text):
        verify_error = f"the field shows {clip(after.text)}, expected {clip(before + p.text)}"
    if p.submit:
        await ctx.device.press_key(KEYCODES["ENTER"])
    return TypeTextResult(
        typed=p.text,
        field=target_of(ctx.device, field, ref=p.ref) if (field := after or node) is not None else None,
        read_back=read_back,
        verified=verify_error is None,
        verify_error=verify_error,
        submitted=p.submit,
        via=via,
    )


class ClearTextResult(ActionResult):
    field: Target = Field(description="the field emptied, named as the compact form names it")
    verified: bool


async def clear_text(ctx: ActionContext, p: FieldParams) -> ClearTextResult:
    if not p.selector().is_empty() and not p.wait_ms:
        # Found, focused, emptied and read again as the device acts: one round trip on adb.
        acted = await act_on(ctx, p, ElementAct("clear"))
        node, after = acted.node, acted.after
    elif p.selector().is_empty():
        # The focused field, emptied (the device says when none has focus) and read again.
        await ctx.device.clear_text()
        after = await _read_field(ctx, None)
        if after is None:
            raise ElementNotFound(
                "no text field has focus; give resource_id, description, class_name or field_text"
            )
        node = after
    else:
        node = await _focus_field(ctx, p)
        await ctx.device.clear_text()
        after = await _read_field(ctx, node)
    return ClearTextResult(
        field=target_of(ctx.device, after or node, ref=p.ref),
        verified=after is not None and _shows(after, ""),
        via=ctx.device.via,
    )


class PressKeyParams(Params):
    key: str = Field(
        description="BACK, HOME, RECENTS, ENTER, DEL, VOLUME_UP, VOLUME_DOWN, POWER, ... or a keycode"
    )

    def keycode(self) -> int:
        name = self.key.strip().upper().removeprefix("KEYCODE_")
        if name in KEYCODES:
            return KEYCODES[name]
        # isdigit() alone takes "²", which int() refuses.
        if len(name) <= 3 and name.isascii() and name.isdigit() and 0 < int(name) < 400:
            return int(name)
        raise InvalidParams(
            f"unknown key {clip(self.key)}; use a keycode or one of {', '.join(sorted(KEYCODES))}"
        )


class PressKeyResult(ActionResult):
    key: str
    keycode: int


# Keys that leave what is in front, or only wake, sleep or sound the phone: allowed even in front
# of the owner's controls (owner/controls.py), so an agent is never stuck in the shade.
LEAVING_KEYS = frozenset(
    KEYCODES[k] for k in ("HOME", "BACK", "WAKEUP", "SLEEP", "POWER", "VOLUME_UP", "VOLUME_DOWN")
)


def _key_drives_ui(p: PressKeyParams) -> bool:
    return p.keycode() not in LEAVING_KEYS


def _check_key(ctx: ActionContext, p: PressKeyParams) -> None:
    p.keycode()  # INVALID_PARAMS for an unknown key, before any hold


async def press_key(ctx: ActionContext, p: PressKeyParams) -> PressKeyResult:
    code = p.keycode()
    await ctx.device.press_key(code)
    return PressKeyResult(key=p.key.upper(), keycode=code, via=ctx.device.via)


class WaitForParams(SelectorParams):
    gone: bool = Field(default=False, description="wait for the element to disappear instead")
    poll_ms: int = Field(
        default=0,
        ge=0,
        description="with gone=true, how often to look; 0 uses the server's setting (an element to appear "
        "is waited for by the device itself, at the server's setting where it must poll)",
    )


class WaitForResult(ActionResult):
    gone: bool
    element: Element | None
    waited_ms: int


async def wait_for(ctx: ActionContext, p: WaitForParams) -> WaitForResult:
    selector = p.selector()
    if selector.is_empty():
        raise InvalidParams("give a selector: ref, text, resource_id, description or class_name")
    device = ctx.device
    loop = asyncio.get_running_loop()
    started = loop.time()
    interval_ms = p.poll_ms or ctx.settings.wait_poll_ms
    # No limit of its own: the call's timeout_ms ends it with TIMEOUT.
    node: UiNode | None
    if p.gone:
        if p.poll_ms:  # the caller's own cadence of looks

            async def look() -> tuple[None] | None:
                return (None,) if await device.find(selector) is None else None

            await poll(look, interval_ms=interval_ms, within_ms=None)
        else:
            # Waited for by the device (on adb, the phone itself) for the rest of the call.
            while True:
                left_ms = max(0, int((ctx.deadline - loop.time()) * 1000))
                if await device.wait_gone(selector, timeout_ms=left_ms):
                    break
                await asyncio.sleep(interval_ms / 1000)  # the device gave up early; the deadline has not
        node = None
    else:
        while True:
            # One wait on the device for the rest of the call (a backend that can waits on the phone).
            left_ms = max(0, int((ctx.deadline - loop.time()) * 1000))
            node = await device.find(selector, timeout_ms=left_ms)
            if node is not None:
                break
            await asyncio.sleep(interval_ms / 1000)  # the device gave up early; the deadline has not
    return WaitForResult(
        gone=p.gone,
        element=Element.of(node) if node is not None else None,
        waited_ms=int((loop.time() - started) * 1000),
        via=device.via,
    )


class ScreenshotParams(Params):
    format: Literal["png", "jpeg"] | None = Field(
        default=None,
        description="png or jpeg; by default the phone's own bytes when they fit `max_side` and "
        "`max_bytes` as they are (the result's format says which), else jpeg",
    )
    quality: int = Field(
        default=DEFAULT_QUALITY, ge=1, le=100, description="JPEG quality, when the image is encoded here"
    )
    max_side: int = Field(
        default=DEFAULT_MAX_SIDE,
        ge=16,
        le=8192,
        description="scale so neither side exceeds this (the default is what a vision model takes "
        "unscaled; the result's `scale` maps a point back to the screen)",
    )
    max_bytes: int = Field(
        default=DEFAULT_MAX_BYTES,
        ge=16_384,
        le=MAX_IMAGE_BYTES,
        description="scale down further until the image is at most this many bytes",
    )
    marks: bool = Field(
        default=False,
        description="draw each element's box and ref (DUMP_UI's compact form's, which TAP ref= takes) "
        "on the image, at its scaled size; reads the screen once more, and the image is encoded here",
    )


class ScreenshotResult(ActionResult):
    format: str = Field(description="png or jpeg")
    width: int = Field(description="the image's width, in image pixels")
    height: int = Field(description="the image's height, in image pixels")
    original_width: int = Field(description="the screen's width as the phone captured it")
    original_height: int = Field(description="the screen's height as the phone captured it")
    scale: float = Field(
        description="image pixels per screen pixel: a point (x, y) on the image is (x / scale, "
        "y / scale) on the screen, as TAP takes it"
    )
    size_bytes: int
    secure: bool = Field(
        default=False,
        description="the image is black while the screen's tree has content: a window that forbids "
        "capture (FLAG_SECURE: banking, OTP, password managers), or a screen that is off; `hint` "
        "says what to do",
    )
    hint: str | None = Field(default=None, description="what to do when the image cannot show the screen")
    image_base64: str


SECURE_HINT = (
    "the picture is black but the screen is not: a window that forbids screenshots (FLAG_SECURE) "
    "is in front (or the screen is off); read the screen with DUMP_UI, whose compact form lists "
    "what the window holds"
)


async def _tree(ctx: ActionContext) -> UiNode:
    from phoneuse_runtime.screen.ui import parse_hierarchy

    root = parse_hierarchy(await ctx.device.dump_hierarchy())
    ctx.device.refs.remember(root, by=ctx.caller.principal)
    return root


async def screenshot(ctx: ActionContext, p: ScreenshotParams) -> ScreenshotResult:
    from phoneuse_runtime.screen.image import Picture, black_screen, fit, nearly_black

    shot = await ctx.device.screenshot()
    picture = await asyncio.to_thread(Picture, shot.data, max_side=p.max_side)
    root = await _tree(ctx) if p.marks else None
    secure = False
    if UI in ctx.device.capabilities and await asyncio.to_thread(nearly_black, picture):
        # Only a black picture costs a look at the tree: is it the screen, or a window hiding it?
        tree = root or await _tree(ctx)
        secure = await asyncio.to_thread(black_screen, picture, tree, screen_width=shot.width)
    fitted = await asyncio.to_thread(
        fit,
        picture,
        fmt=p.format,
        quality=p.quality,
        max_bytes=p.max_bytes,
        marks=root,
        screen_width=shot.width,
    )
    return ScreenshotResult(
        format=fitted.format,
        width=fitted.width,
        height=fitted.height,
        original_width=shot.width,
        original_height=shot.height,
        scale=fitted.scale,
        size_bytes=len(fitted.data),
        secure=secure,
        hint=SECURE_HINT if secure else None,
        image_base64=base64.b64encode(fitted.data).decode("ascii"),
        via=shot.via,
    )


class DumpUiParams(Params):
    format: Literal["compact", "json"] = Field(
        default="compact",
        description="compact: `screen`, one line per element for a model to read (see 'The compact "
        "screen form'); json: `elements`, the structured list for programs",
    )
    max_elements: int = Field(
        default=DEFAULT_MAX_ELEMENTS, ge=1, le=MAX_UI_ELEMENTS, description="compact: elements per page"
    )
    offset: int = Field(default=0, ge=0, description="compact: the first element of the page (0-based)")
    include_xml: bool = Field(default=False, description="also return the raw uiautomator XML")


class DumpUiResult(ActionResult):
    format: str = Field(description="compact or json, as asked")
    package: str = Field(description="the app on screen: the first package other than the status bar's")
    screen: str | None = Field(
        default=None,
        description="compact: the page of elements, one a line; an element marked `opaque` (a web "
        "page or a drawn surface: a game, a video, Flutter without semantics) shows what the tree "
        "cannot hold: look at it with SCREENSHOT",
    )
    total: int | None = Field(default=None, description="compact: the elements on the screen")
    offset: int | None = Field(default=None, description="compact: the page's first element")
    omitted: int | None = Field(
        default=None, description="compact: the elements not on this page (before or after it)"
    )
    next_offset: int | None = Field(
        default=None, description="compact: the offset of the next page; null on the last"
    )
    elements: list[Element] | None = Field(default=None, description="json: every element")
    ui_fingerprint: str
    xml: str | None = None


async def dump_ui(ctx: ActionContext, p: DumpUiParams) -> DumpUiResult:
    from phoneuse_runtime.screen.ui import parse_hierarchy

    xml = await ctx.device.dump_hierarchy()
    root = parse_hierarchy(xml)
    result = DumpUiResult(
        format=p.format,
        package=front_package(root),
        ui_fingerprint=fingerprint(root),
        xml=xml if p.include_xml else None,
        via=ctx.device.via,
    )
    if p.format == "json":
        result.elements = [Element.model_validate(e) for e in compact_elements(root)]
        return result
    ctx.device.refs.remember(root, by=ctx.caller.principal)
    page = render(root, max_elements=p.max_elements, offset=p.offset)
    result.screen = page.text
    result.total = page.total
    result.offset = page.offset
    result.omitted = page.omitted
    result.next_offset = page.next_offset
    return result


ACTIONS = (
    ActionSpec(
        "TAP",
        PointOrSelector,
        tap,
        PressResult,
        "Tap a point (x, y) or the center of an element",
        requires=frozenset({UI}),
        drives_ui=True,
        settles=True,
    ),
    ActionSpec(
        "LONG_PRESS",
        LongPressParams,
        long_press,
        PressResult,
        "Press and hold a point or an element",
        requires=frozenset({UI}),
        drives_ui=True,
        settles=True,
    ),
    ActionSpec(
        "SWIPE",
        SwipeParams,
        swipe,
        SwipeResult,
        "Swipe between two points, or across the screen",
        requires=frozenset({UI}),
        drives_ui=True,
        settles=True,
    ),
    ActionSpec(
        "SCROLL",
        ScrollParams,
        scroll,
        ScrollResult,
        "Scroll the main list one page, or until an element is visible",
        requires=frozenset({UI}),
        drives_ui=True,
        settles=True,
    ),
    ActionSpec(
        "TYPE_TEXT",
        TypeTextParams,
        type_text,
        TypeTextResult,
        "Type Unicode text into a field (the focused one by default) and read it back",
        requires=frozenset({UI}),
        drives_ui=True,
        settles=True,
    ),
    ActionSpec(
        "CLEAR_TEXT",
        FieldParams,
        clear_text,
        ClearTextResult,
        "Empty a text field",
        requires=frozenset({UI}),
        drives_ui=True,
        settles=True,
    ),
    ActionSpec(
        "PRESS_KEY",
        PressKeyParams,
        press_key,
        PressKeyResult,
        "Press a hardware or navigation key",
        requires=frozenset({UI}),
        check=_check_key,
        drives_ui=_key_drives_ui,
        settles=True,
    ),
    ActionSpec(
        "WAIT_FOR",
        WaitForParams,
        wait_for,
        WaitForResult,
        "Wait until an element appears (or, with gone=true, disappears); TIMEOUT at timeout_ms",
        exclusive=False,  # it only looks; holding the phone while waiting would block the change it awaits
        requires=frozenset({UI}),
        reads_only=True,
    ),
    ActionSpec(
        "SCREENSHOT",
        ScreenshotParams,
        screenshot,
        ScreenshotResult,
        "Capture the screen as base64 JPEG/PNG, sized for a vision model",
        exclusive=False,
        requires=frozenset({SCREENSHOT}),
        reads_only=True,
        notes="By default the image's long side is at most 1568 px and it is at most 1 MB (`max_side`, "
        "`max_bytes`, `quality` change that): the phone's own bytes when they fit as they are, else "
        "JPEG (PNG when `format=png`). `scale` is image pixels per screen pixel, so a point (x, y) "
        "on the image is (x / scale, y / scale) for TAP; `marks` are drawn at the image's size. "
        "A picture that is (nearly) all black while the screen's tree shows labels there is a "
        "window that forbids capture (FLAG_SECURE: banking, OTP, password managers): `secure` is "
        "true and `hint` says to read the screen with DUMP_UI, which still lists it (only a black "
        "picture costs that look at the tree).",
    ),
    ActionSpec(
        "DUMP_UI",
        DumpUiParams,
        dump_ui,
        DumpUiResult,
        "Read the screen: by default `screen`, the compact text form made for a model (one line per "
        "element, with refs: see The compact screen form), or with format=json the element list; and "
        "the screen's fingerprint",
        exclusive=False,
        requires=frozenset({UI}),
        reads_only=True,
    ),
)
