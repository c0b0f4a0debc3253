"""Settling: after a UI action, look at the screen until it stops changing, and say what changed.

An agent that taps needs to know what the tap did. Rather than have it sleep and call DUMP_UI,
every action whose spec `settles` compares the screen after it with the one before it (the last
screen given to a caller, which the device remembers for its refs; a look before the handler
only when there is none) and, after it, looks until two consecutive looks agree (the status bar,
whose clock ticks, left out of the comparison; the screen the handler's own device work read
after it last acted, `ScreenSeen`, is the first look), within a bound the caller sets
(`settle_ms`, 0 to skip) and always before the call's deadline. Its result then carries
`settle` (whether the screen settled, how long it took, how many looks), the new
`ui_fingerprint` (the one DUMP_UI would give) and `changes`, a short account of what appeared,
what went and what changed (see `changes`), each element named as DUMP_UI's compact form names
it. When the app in front changed (or most of the screen did), the account gives the new screen
whole, in the compact form (`screen`), and only counts what went.

Running out of time is never an error: settling stops with `settled: false`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from phoneuse_runtime.config.owner import SYSTEM_UI
from phoneuse_runtime.device.base import Device, ScreenSeen, unwatch_screen, watch_screen
from phoneuse_runtime.kernel.errors import RuntimeFailure
from phoneuse_runtime.kernel.limits import SETTLE_CHANGES_MAX, SETTLE_DEFAULT_MS, SETTLE_MAX_MS, fit_json
from phoneuse_runtime.kernel.params import Params, parse_params
from phoneuse_runtime.screen.refs import element_refs
from phoneuse_runtime.screen.target import named_id
from phoneuse_runtime.screen.text import DEFAULT_MAX_ELEMENTS, render
from phoneuse_runtime.screen.ui import UiNode, fingerprint, parse_hierarchy

if TYPE_CHECKING:
    from phoneuse_runtime.kernel.context import ActionContext

log = logging.getLogger(__name__)

# An action's run: (its context, its params, settle_ms) to its result as JSON (ActionSpec.run).
Run = Callable[["ActionContext", Any, int], Awaitable[str]]

SETTLE_KEY = "settle_ms"

# The first pause between looks, doubled while the screen keeps changing, up to the cap: the
# app is drawing, so looking again at once would only see it half drawn and cost the phone a
# dump. A screen that does not move settles at the second look.
FIRST_PAUSE_S = 0.02
MAX_PAUSE_S = 0.32
# Time kept back before the call's deadline for the answer to be written and sent.
ANSWER_MARGIN_S = 0.05


class SettleParams(Params):
    """The param every settling action takes besides its own."""

    settle_ms: int = Field(
        default=SETTLE_DEFAULT_MS,
        ge=0,
        le=SETTLE_MAX_MS,
        description="after the action, wait at most this long for the screen to stop changing (and "
        "report what changed); 0 skips it. Always ends before the call's timeout_ms",
    )


class Seen(BaseModel):
    """An element in the account of changes, named as DUMP_UI's compact form names it (empty
    fields left out): its ref, text and description, and its resource-id only where the compact
    form writes `#id` (an element with no text or description, a text field), without the
    `package:id/` prefix when the id is its own app's (`resource_id=` takes it so)."""

    model_config = ConfigDict(defer_build=True)
    ref: str = ""  # as DUMP_UI's compact form gives it: `TAP ref=…` acts on an element that appeared
    text: str = ""
    description: str = ""
    resource_id: str = ""


class Changed(Seen):
    """An element still there whose text, description or state changed: its new values, and in
    `was` the old ones of what changed."""

    checked: bool | None = None
    selected: bool | None = None
    enabled: bool | None = None
    focused: bool | None = None
    was: dict[str, str | bool] = Field(default_factory=dict)


class Changes(BaseModel):
    """What the action changed on the screen (the status bar left out), a bounded number of
    entries of each kind (limits.SETTLE_CHANGES_MAX); `*_more` counts the rest. Empty ones are
    left out."""

    model_config = ConfigDict(defer_build=True)
    appeared: list[Seen] = Field(default_factory=list, description="elements that were not there before")
    appeared_more: int = Field(default=0, description="how many more there were")
    went: list[Seen] = Field(default_factory=list, description="elements that are gone")
    went_more: int = Field(default=0, description="how many more there were")
    changed: list[Changed] = Field(default_factory=list, description="elements whose text or state changed")
    changed_more: int = Field(default=0, description="how many more there were")
    app: str = Field(default="", description="the package now in front, when it changed")
    was_app: str = Field(default="", description="the package in front before, when it changed")
    screen: str = Field(
        default="",
        description="when the app in front changed, or most of the screen did: the new screen in "
        "DUMP_UI's compact form (its lines, at most its default page, the status bar left out), "
        "instead of `appeared`; `went` is then only counted, in `went_more`",
    )


class SettleReport(BaseModel):
    """How the wait for the screen went."""

    model_config = ConfigDict(defer_build=True)
    settled: bool = Field(
        description="two consecutive looks agreed; false when the bound or deadline came first"
    )
    waited_ms: int = Field(description="from the end of the action to the last look")
    looks: int = Field(description="screen reads after the action")
    bound_ms: int = Field(description="the settle_ms this call had")


class Settled(BaseModel):
    """What a settling action adds to its result (absent with settle_ms=0)."""

    model_config = ConfigDict(defer_build=True)
    settle: SettleReport
    ui_fingerprint: str | None = Field(
        default=None, description="the screen's fingerprint after the action, as DUMP_UI gives it"
    )
    changes: Changes | None = Field(
        default=None, description="what changed since before the action (absent when a look failed)"
    )


def split_settle(wire: Mapping[str, str]) -> tuple[Mapping[str, str], int]:
    """The action's own params, and the call's settle_ms (INVALID_PARAMS for a bad one)."""
    if SETTLE_KEY not in wire:
        return wire, SETTLE_DEFAULT_MS
    own = dict(wire)
    parsed = parse_params(SettleParams, {SETTLE_KEY: own.pop(SETTLE_KEY)})
    assert isinstance(parsed, SettleParams)
    return own, parsed.settle_ms


def _is_bar(window: UiNode, height: int) -> bool:
    """The status bar (or navigation bar): a System UI window that is a strip across the screen,
    at most a tenth of its height. Its clock ticks; a shade or lock screen pulled over the app is
    no strip and counts."""
    top, bottom = window.bounds[1], window.bounds[3]
    return window.package == SYSTEM_UI and (bottom - top) * 10 <= height


def _app_windows(root: UiNode) -> UiNode:
    """The tree without the system bars' windows (the whole tree when nothing else is left)."""
    if root.class_name != "hierarchy":
        return root
    height = root.bounds[3] - root.bounds[1]
    windows = [w for w in root.children if not _is_bar(w, height)]
    if not windows or len(windows) == len(root.children):
        return root
    return UiNode(class_name="hierarchy", bounds=root.bounds, children=windows)


def steady_fingerprint(root: UiNode) -> str:
    """The fingerprint of what the app shows: the status bar's windows (its clock) left out."""
    return fingerprint(_app_windows(root))


def _named(node: UiNode) -> bool:
    """Whether the account names the element: it has a text or description, or an id and can be
    acted on (a switch, a field, a button); a container known only by its id is layout."""
    if node.text or node.description:
        return True
    return bool(node.resource_id) and (
        node.clickable or node.long_clickable or node.checkable or node.scrollable or node.editable
    )


def _visible(root: UiNode) -> Iterable[UiNode]:
    """The elements the account names, outside the system bars, in screen order."""
    for node in _app_windows(root).walk():
        if node.class_name != "hierarchy" and _named(node):
            yield node


_STATES = ("checked", "selected", "enabled", "focused")


def _seen(node: UiNode, refs: dict[int, str]) -> Seen:
    return Seen(
        ref=refs.get(id(node), ""), text=node.text, description=node.description, resource_id=named_id(node)
    )


def front_package(root: UiNode) -> str:
    """The package of the app in front: that of the largest window outside the system bars (a
    keyboard's or a dialog's window over the app is smaller; System UI only when nothing else
    is there: the shade, the lock screen), the first of equals; a window without a package of
    its own takes its first element's."""
    apps = _app_windows(root)
    windows = apps.children if apps.class_name == "hierarchy" else [apps]
    best, area = "", -1
    for window in windows:
        package = window.package or next((n.package for n in window.walk() if n.package), "")
        if not package or (package == SYSTEM_UI and len(windows) > 1):
            continue
        left, top, right, bottom = window.bounds
        if (right - left) * (bottom - top) > area:
            best, area = package, (right - left) * (bottom - top)
    return best


# A new screen needs at least this many elements that appeared: a text changing on a screen of
# one or two elements is a change, not a new screen.
NEW_SCREEN_MIN = 3


def _mostly_new(appeared: int, went: int, before: int, after: int) -> bool:
    """Whether most of the screen changed: more than half of the new screen appeared (at least
    NEW_SCREEN_MIN elements) and more than half of the old one went (a few rows coming or going
    is not a new screen)."""
    return appeared >= NEW_SCREEN_MIN and appeared * 2 > after and went * 2 > before


def _identity(node: UiNode) -> tuple[str, str, str, str]:
    return (node.resource_id, node.text, node.description, node.class_name)


def _place(node: UiNode) -> tuple[object, ...]:
    """Where an element is, for pairing an old and a new text: its id, else its class and bounds."""
    return (node.resource_id, node.class_name) if node.resource_id else (node.class_name, node.bounds)


def _changed(old: UiNode, new: UiNode, refs: dict[int, str]) -> Changed | None:
    was: dict[str, str | bool] = {}
    if old.text != new.text:
        was["text"] = old.text
    if old.description != new.description:
        was["description"] = old.description
    states: dict[str, bool | None] = {}
    for name in _STATES:
        if getattr(old, name) != getattr(new, name):
            was[name] = getattr(old, name)
            states[name] = getattr(new, name)
    if not was:
        return None
    return Changed(
        ref=refs.get(id(new), ""),
        text=new.text,
        description=new.description,
        resource_id=named_id(new),
        was=was,
        **states,
    )


def changes(before: UiNode, after: UiNode, *, limit: int = SETTLE_CHANGES_MAX) -> Changes:
    """What appeared, what went and what changed between two trees, in screen order.

    Elements are named by text, description and resource id. One that stayed (same id, text,
    description and class) and changed state is `changed`; so is one whose text or description
    changed in place (same id, or with none the same class and bounds). The rest is `appeared`
    or `went`, counted as multisets (two equal rows are two).

    A new screen (another app in front, or most of it changed: `_mostly_new`) is given whole in
    the compact form, `screen`, with what went only counted and nothing paired in place."""
    old_nodes, new_nodes = list(_visible(before)), list(_visible(after))
    old_refs, new_refs = element_refs(before), element_refs(after)
    old_by_id: dict[tuple[str, str, str, str], list[UiNode]] = {}
    for node in old_nodes:
        old_by_id.setdefault(_identity(node), []).append(node)
    changed: list[Changed] = []
    appeared: list[UiNode] = []
    for node in new_nodes:
        same = old_by_id.get(_identity(node))
        if same:
            old = same.pop(0)
            change = _changed(old, node, new_refs)
            if change is not None:
                changed.append(change)
        else:
            appeared.append(node)
    went = [node for nodes in old_by_id.values() for node in nodes]
    went.sort(key=old_nodes.index)
    old_app, new_app = front_package(before), front_package(after)
    switched = bool(old_app and new_app and old_app != new_app)
    if switched or _mostly_new(len(appeared), len(went), len(old_nodes), len(new_nodes)):
        # A new screen: the screen itself is the cheapest account of it, and what went is only
        # counted (an element changed in place on it is on the screen as it is now).
        return Changes(
            went_more=len(went),
            app=new_app if switched else "",
            was_app=old_app if switched else "",
            screen=render(_app_windows(after), max_elements=DEFAULT_MAX_ELEMENTS).text,
        )
    # An element whose text changed in place is one change, not a going and a coming.
    gone_at: dict[tuple[object, ...], list[UiNode]] = {}
    for node in went:
        gone_at.setdefault(_place(node), []).append(node)
    still_appeared: list[UiNode] = []
    for node in appeared:
        there = gone_at.get(_place(node))
        if there:
            old = there.pop(0)
            change = _changed(old, node, new_refs)
            if change is not None:
                changed.append(change)
            went.remove(old)
        else:
            still_appeared.append(node)
    return Changes(
        appeared=[_seen(n, new_refs) for n in still_appeared[:limit]],
        appeared_more=max(0, len(still_appeared) - limit),
        went=[_seen(n, old_refs) for n in went[:limit]],
        went_more=max(0, len(went) - limit),
        changed=changed[:limit],
        changed_more=max(0, len(changed) - limit),
    )


@dataclass
class Look:
    """One read of the screen: the tree, and its fingerprint without the status bar."""

    root: UiNode
    steady: str


async def _look(device: Device) -> Look:
    root = parse_hierarchy(await device.dump_hierarchy())
    return Look(root, steady_fingerprint(root))


async def _look_by(device: Device, until: float) -> Look | None:
    """A look that must end by loop time `until`; None when it could not (too late, or the
    device failed: settling never fails an action)."""
    loop = asyncio.get_running_loop()
    if loop.time() >= until:
        return None
    try:
        return await asyncio.wait_for(_look(device), timeout=until - loop.time())
    except asyncio.TimeoutError:
        return None
    except RuntimeFailure as exc:
        log.info("settling: a look at the screen failed: %s", exc)
        return None


async def look_before(device: Device, *, deadline: float) -> Look | None:
    """The screen before the action: the last one given to a caller (DUMP_UI, APP_STATE's, the
    previous action's settled screen), which the account of changes is about and the device
    remembers for its refs; a look now, given at most a quarter of the time the call has left,
    only when there is none."""
    remembered = device.refs.screen
    if remembered is not None:
        return Look(remembered, steady_fingerprint(remembered))
    now = asyncio.get_running_loop().time()
    return await _look_by(device, now + max(0.0, deadline - ANSWER_MARGIN_S - now) / 4)


async def settle(
    device: Device,
    before: Look | None,
    *,
    bound_ms: int,
    deadline: float,
    by: str,
    first: str | None = None,
) -> Settled:
    """Looks until two consecutive looks agree, for at most `bound_ms` and never past the
    call's deadline (less the time the longest look took, and the answer's margin). `first`:
    the screen the action's own work read after it acted (in the same round trip), the first
    look."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    stop = min(started + bound_ms / 1000, deadline - ANSWER_MARGIN_S)
    looks = 0
    last: Look | None = None
    settled = False
    pause = FIRST_PAUSE_S
    longest = 0.0
    given = first
    while True:
        began = loop.time()
        if given is not None:
            root = parse_hierarchy(given)
            look: Look | None = Look(root, steady_fingerprint(root))
            given = None
        else:
            look = await _look_by(device, stop)
        if look is None:
            break
        looks += 1
        longest = max(longest, loop.time() - began)
        if last is not None and look.steady == last.steady:
            last, settled = look, True
            break
        last = look
        # The next look must fit before the stop, as long as the longest one took.
        wake = loop.time() + pause
        if wake + longest >= stop:
            break
        await asyncio.sleep(pause)
        pause = min(pause * 2, MAX_PAUSE_S)
    report = SettleReport(
        settled=settled, waited_ms=int((loop.time() - started) * 1000), looks=looks, bound_ms=bound_ms
    )
    if last is None:
        return Settled(settle=report)
    account = changes(before.root, last.root) if before is not None else None
    device.refs.remember(last.root, by=by)  # the refs the account names are the settled screen's
    return Settled(settle=report, ui_fingerprint=fingerprint(last.root), changes=account)


def attach(result_json: str, settled: Settled) -> str:
    """The action's result object with the settle fields added (empty ones left out)."""
    extra = settled.model_dump_json(exclude_defaults=True, exclude_none=True)
    if result_json == "{}":
        return extra
    return result_json[:-1] + "," + extra[1:]


def settling(
    handler: Callable[[ActionContext, Any], Awaitable[BaseModel]], to_json: Callable[[BaseModel], str]
) -> Run:
    """The run of an action whose spec `settles` (ActionSpec.run applies it): the handler, and
    for a settling call (settle_ms > 0) the wait for the screen to settle after it, adding what
    changed since the screen before it (the last one a caller was given, else a look now) to
    its result (`to_json`'s, fitted). The screen the handler's own device work read after it
    last acted is settling's first look."""

    async def run(ctx: ActionContext, params: Any, settle_ms: int) -> str:
        if not settle_ms:
            return fit_json(to_json(await handler(ctx, params)))
        before = await look_before(ctx.device, deadline=ctx.deadline)
        seen = ScreenSeen()
        token = watch_screen(seen)
        try:
            result = await handler(ctx, params)
        finally:
            unwatch_screen(token)
        settled = await settle(
            ctx.device,
            before,
            bound_ms=settle_ms,
            deadline=ctx.deadline,
            by=ctx.caller.principal,
            first=seen.xml,
        )
        return fit_json(attach(to_json(result), settled))

    return run
