"""Components: what they contribute is served through every front end like a built-in; their
handlers reach them; they start in order and stop in reverse."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from phoneuse_runtime.app import build_app
from phoneuse_runtime.config.settings import ConfigError, Settings
from phoneuse_runtime.kernel.events import EventPayload
from phoneuse_runtime.kernel.params import Params
from phoneuse_runtime.kernel.registry import ActionContext, ActionResult, ActionSpec, build_registry
from phoneuse_runtime.spec.document import render_spec

from ..extras import Extra
from .frontend import FrontEndFactory, hold_the_phone, ok


class ExtraPinged(EventPayload):
    """A test component's own event: its PING action ran."""

    event_type: str = "EXTRA_PINGED"
    component: str
    by: str


class PingResult(ActionResult):
    component: str


class Absent:
    """A component class no app serves."""


async def ping(ctx: ActionContext, p: Params) -> PingResult:
    extra = ctx.component(Extra)
    assert extra.runtime is not None  # started before any call
    extra.runtime.bus.publish(ExtraPinged(component=extra.name, by=ctx.caller.principal).to_event(extra.name))
    return PingResult(component=extra.name, via="extra")


async def look_for_absent(ctx: ActionContext, p: Params) -> ActionResult:
    ctx.component(Absent)
    return ActionResult(via="extra")


def pinger(log: list[str] | None = None, name: str = "extra") -> Extra:
    return Extra(
        ActionSpec("PING", Params, ping, PingResult, "Ping the test component"),
        ActionSpec("LOOK_FOR_ABSENT", Params, look_for_absent, ActionResult, "Reach a component not served"),
        name=name,
        events=[ExtraPinged],
        log=log,
    )


async def test_a_component_action_reaches_its_component_and_publishes_its_event(
    make_frontend: FrontEndFactory,
) -> None:
    frontend = await make_frontend(components=[pinger()])
    events = await frontend.subscribe(("EXTRA_PINGED",), principal="other")
    assert await ok(frontend, "PING") == {"via": "extra", "component": "extra"}
    event = await events.next()
    assert (event.payload, event.source) == ({"component": "extra", "by": "agent"}, "extra")
    absent = await frontend.execute("LOOK_FOR_ABSENT")
    assert absent.error == "UNSUPPORTED: this server runs no Absent component"


async def test_a_component_action_runs_alongside_an_action_holding_the_phone(
    make_frontend: FrontEndFactory,
) -> None:
    frontend = await make_frontend(components=[pinger()])
    press = await hold_the_phone(frontend, "press", 2000)
    answer = await frontend.execute("PING", timeout_ms=1000)  # requires nothing, so takes no turn
    assert answer.success, answer.error
    assert not press.done()
    press.cancel()  # the caller goes away; the app's stop cuts the press short
    await asyncio.gather(press, return_exceptions=True)


async def test_components_start_in_order_and_stop_in_reverse(make_frontend: FrontEndFactory) -> None:
    log: list[str] = []
    frontend = await make_frontend(components=[pinger(log, "first"), Extra(name="second", log=log)])
    assert log == ["contribution first", "contribution second", "start first", "start second"]
    await frontend.stop()
    assert log[2:] == ["start first", "start second", "stop second", "stop first"]


async def test_component_names_must_be_unique(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="component names must be unique, got extra, extra"):
        await build_app(Settings(data_dir=tmp_path), token="t", components=[Extra(), Extra()])


def test_a_component_event_is_registered_and_documented() -> None:
    registry = build_registry([pinger()])
    assert registry.events["EXTRA_PINGED"] is ExtraPinged
    assert registry.origins["event EXTRA_PINGED"] == "component extra"
    assert registry.origins["PING"] == "component extra"
    text = render_spec(registry)
    assert "### EXTRA_PINGED\n" in text
    assert "A test component's own event: its PING action ran." in text
