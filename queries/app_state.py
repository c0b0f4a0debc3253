"""APP_STATE: the foreground app and the running ones, optionally with the screen's elements; with
installed=true every installed app (issue 27), by package name, paged like every query."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import Field

from phoneuse_runtime.kernel.capabilities import APPS, UI
from phoneuse_runtime.kernel.params import Params
from phoneuse_runtime.kernel.registry import QueryContext, QueryResult, QuerySpec
from phoneuse_runtime.memory import Memory
from phoneuse_runtime.screen.lookup import Element, screen
from phoneuse_runtime.screen.text import DEFAULT_MAX_ELEMENTS, render
from phoneuse_runtime.screen.ui import compact_elements, fingerprint


class AppStateFilters(Params):
    package: str | None = Field(
        default=None, description="only this app (installed but not running is reported too)"
    )
    installed: bool = Field(
        default=False,
        description="every installed app, by package name (with label, version and system), "
        "instead of the running ones",
    )
    include_ui: bool = Field(default=False, description="add the foreground screen's elements")
    ui_format: Literal["compact", "json"] = Field(
        default="compact",
        description="with include_ui: compact gives `screen` (DUMP_UI's compact form, its first "
        "page), json gives `elements`",
    )


class RecentApp(QueryResult):
    package: str
    label: str
    last_used_ms: int
    foreground_ms_today: int


class AppStateResult(QueryResult):
    package: str
    label: str
    activity: str = Field(description="the top activity; empty unless foreground")
    foreground: bool
    running: bool
    ui_fingerprint: str | None = Field(description="for the foreground app")
    screen: str | None = Field(
        default=None, description="with include_ui (compact), for the foreground app: as DUMP_UI's `screen`"
    )
    elements: list[Element] | None = Field(
        description="with include_ui and ui_format=json, for the foreground app"
    )
    system: bool | None = Field(
        default=None, description="part of the system image; null for a package the phone did not list"
    )
    version_code: int | None = Field(
        default=None, description="null where the phone does not list it (adb before Android 9)"
    )
    version_name: str | None = Field(
        default=None, description="null where the backend cannot read it cheaply (adb)"
    )
    recent_apps: list[RecentApp] | None = Field(
        default=None,
        description="on the foreground app's result: the apps last brought to the front, newest first, "
        "from the memory's usage data (APP_STATE_CHANGED)",
    )


async def app_state(ctx: QueryContext, f: AppStateFilters) -> Sequence[AppStateResult]:
    if f.include_ui:
        ctx.require(UI)
    device = ctx.device
    installed = {a.package: a for a in await device.installed_apps()}
    labels = {p: a.label for p, a in installed.items()}
    front, running = await device.running_apps()
    order = [front.package] + [p for p in running if p != front.package]
    if f.installed:
        order = sorted(installed)
    if f.package is not None:
        if f.package not in labels and (f.installed or f.package not in order):
            return []
        order = [f.package]
    # The screen, for the foreground app's fingerprint: not read when that app is not asked for,
    # nor on a device without UI, nor for the list of installed apps unless include_ui asks.
    wants_front = front.package in order and (f.include_ui or not f.installed)
    root = await screen(device) if wants_front and UI in device.capabilities else None
    recent = [
        RecentApp(package=p, label=labels.get(p, p), last_used_ms=used, foreground_ms_today=today)
        for p, used, today in await ctx.component(Memory).recent_apps()
    ]
    out = []
    for package in order:
        is_front = package == front.package
        elements = None
        text = None
        if is_front and f.include_ui and root is not None:
            if f.ui_format == "json":
                elements = [Element.model_validate(e) for e in compact_elements(root)]
            else:
                device.refs.remember(root, by=ctx.caller.principal)
                text = render(root, max_elements=DEFAULT_MAX_ELEMENTS).text
        app = installed.get(package)
        out.append(
            AppStateResult(
                package=package,
                label=labels.get(package, package),
                activity=front.activity if is_front else "",
                foreground=is_front,
                running=is_front or package in running,
                ui_fingerprint=fingerprint(root) if is_front and root is not None else None,
                screen=text,
                elements=elements,
                system=app.system if app else None,
                version_code=app.version_code if app else None,
                version_name=app.version_name if app else None,
                recent_apps=recent if is_front else None,
            )
        )
    return out


QUERIES = (
    QuerySpec(
        "APP_STATE",
        AppStateFilters,
        app_state,
        AppStateResult,
        "The foreground app first, then the other running apps; with installed=true every installed "
        "app by package name",
        requires=frozenset({APPS}),
    ),
)
