"""The front-end-neutral interface the contract suite is written against.

A front end (gRPC today, the Iris WebSocket gateway next) implements `FrontEnd` over its own
wire: a real server built by the composition root, a real client on a real socket. The
contract tests speak only this interface, plus `FrontEnd.app` to answer approvals and read
the sim's stores, so adding a front end means writing one adapter and one fixture param.

What each call means, whichever wire carries it:
- `execute` answers every well-formed Execute with an `Answer` (success or a failure's code
  and message); a malformed one (empty action_type or request_id, timeout_ms <= 0) raises
  `Refused` with the runtime's code, BAD_REQUEST.
- `query` returns a `Page`, or raises `Refused` with the runtime's code for any failure.
- `subscribe` returns once the subscription is live: every event published afterwards
  reaches the `Stream`; a malformed one (a subscriber_id or event_types past their limits)
  raises `Refused` with BAD_REQUEST.
Every call names its principal; the adapter authenticates as that principal ("agent" and
"other" are both known to every front end the suite builds).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from phoneuse_runtime.app import App
from phoneuse_runtime.config.settings import Settings
from phoneuse_runtime.device.base import Device
from phoneuse_runtime.device.sim.device import SimDevice
from phoneuse_runtime.kernel.components import Component
from phoneuse_runtime.kernel.policies import Policy

# The bound on any wait for something that should come promptly: it never elapses in a passing
# run, it only turns a hang into a failure.
WAIT_S = 10.0
PRINCIPALS = ("agent", "other")

# A screen with one text on it, "Incoming!", for SIM_SET_SCREEN.
SCREEN_WITH_TEXT = (
    "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"
    '<node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="com.example" '
    'content-desc="" checkable="false" checked="false" clickable="false" enabled="true" focusable="false" '
    'focused="false" scrollable="false" long-clickable="false" password="false" selected="false" '
    'bounds="[0,0][1080,2400]"><node index="0" text="Incoming!" resource-id="com.example:id/banner" '
    'class="android.widget.TextView" package="com.example" content-desc="" checkable="false" checked="false" '
    'clickable="false" enabled="true" focusable="false" focused="false" scrollable="false" '
    'long-clickable="false" password="false" selected="false" bounds="[0,100][1080,200]" />'
    "</node></hierarchy>"
)


class Refused(Exception):
    """A request the runtime refused as a whole: a malformed Execute, or any failed Query.

    `code` is the runtime's code (errors.py). `message` is the runtime's message, or None
    when the front end's own deadline answered first and the runtime's message was lost on
    the way (gRPC's Query; see tests/test_query.py)."""

    def __init__(self, code: str, message: str | None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message

    @property
    def error(self) -> str:
        return f"{self.code}: {self.message}"


@dataclass(frozen=True)
class Answer:
    """An Execute's answer. `code` and `message` are empty on success."""

    request_id: str
    success: bool
    result: dict[str, Any]
    code: str
    message: str
    duration_ms: int

    @property
    def error(self) -> str:
        """The wire's `CODE: message` form, empty on success."""
        return f"{self.code}: {self.message}" if self.code else ""

    @classmethod
    def parse(
        cls, *, request_id: str, success: bool, result_json: str, error: str, duration_ms: int
    ) -> Answer:
        """Checks the shape every front end promises: a JSON object result, and an error that
        is empty on success and `CODE: message` on failure."""
        result = json.loads(result_json)
        assert isinstance(result, dict), result_json
        if success:
            assert error == "", error
            code = message = ""
        else:
            code, sep, message = error.partition(": ")
            assert sep and code.isupper() and message, error
        return cls(request_id, success, result, code, message, duration_ms)


@dataclass(frozen=True)
class Page:
    results: list[dict[str, Any]]
    total_count: int
    has_more: bool


@dataclass(frozen=True)
class Event:
    event_type: str
    payload: dict[str, Any]
    source: str
    timestamp: int


class StreamEnded(AssertionError):
    """`Stream.next` found the stream ended instead of the event it waited for."""


class Stream(Protocol):
    """One live subscription."""

    subscriber_id: str  # as the server names it (an anonymous stream gets one too)

    async def next(self, event_type: str | None = None, *, within: float = WAIT_S) -> Event:
        """The next event (of `event_type`, skipping others); fails after `within` seconds,
        and raises StreamEnded if the stream ends first."""
        ...

    async def ended(self, *, within: float = WAIT_S) -> bool:
        """Reads to the end of the stream: True once it ended cleanly (an unclean end fails),
        False if it is still open after `within` seconds."""
        ...

    async def close(self) -> None:
        """Ends the subscription from the client's side."""
        ...


class FrontEnd(Protocol):
    """A running app, reached through one front end's wire."""

    kind: str  # the caller's front end as the runtime names it (Caller.frontend)
    app: App

    async def execute(
        self,
        action_type: str,
        params: Mapping[str, str] | None = None,
        *,
        request_id: str | None = None,  # None: a fresh one; "" is sent as is
        timeout_ms: int = 10_000,
        app_target: str | None = None,
        principal: str = "agent",
    ) -> Answer: ...

    async def query(
        self,
        query_type: str,  # the QueryType's name, e.g. "CONTACTS"; "" is unspecified
        filters: Mapping[str, str] | None = None,
        limit: int = 0,
        *,
        timeout_ms: int | None = None,  # None: the front end's default
        principal: str = "agent",
    ) -> Page: ...

    async def subscribe(
        self, event_types: tuple[str, ...] = (), subscriber_id: str = "", *, principal: str = "agent"
    ) -> Stream: ...

    async def stop(self) -> None:
        """Stops the app (once; the fixture stops it anyway at the end of the test)."""
        ...

    async def close(self) -> None:
        """The fixture's: closes the client's side (streams, connections), then stops the app."""
        ...


class StartFrontEnd(Protocol):
    """How the fixture starts one kind of front end: builds the app through `app.build_app` with
    the front end's own component (knowing both PRINCIPALS) first, then `components`."""

    async def __call__(
        self,
        settings: Settings,
        *,
        device: Device | None,
        policies: Sequence[Policy],
        components: Sequence[Component],
    ) -> FrontEnd: ...


FrontEndFactory = Callable[..., Awaitable[FrontEnd]]
"""make_frontend(*, device=None, policies=(), components=(), **settings_overrides) -> FrontEnd"""


# --- helpers the tests share ------------------------------------------------------------


async def ok(
    fe: FrontEnd, action_type: str, params: Mapping[str, str] | None = None, **kw: Any
) -> dict[str, Any]:
    """Executes and asserts success; returns the result."""
    answer = await fe.execute(action_type, params, **kw)
    assert answer.success, answer.error
    return answer.result


async def refused(call: Awaitable[object]) -> Refused:
    """Awaits a call that must be refused as a whole, and returns the refusal."""
    try:
        await call
    except Refused as refusal:
        return refusal
    raise AssertionError("the call was not refused")


def sim(fe: FrontEnd) -> SimDevice:
    """The production SimDevice behind the front end, for reading stores no query exposes."""
    device = fe.app.runtime.device
    assert isinstance(device, SimDevice)
    return device


def caller(fe: FrontEnd, principal: str = "agent") -> dict[str, str]:
    """A caller as events name it."""
    return {"frontend": fe.kind, "principal": principal}


async def hold_the_phone(frontend: FrontEnd, request_id: str, duration_ms: int) -> asyncio.Task[Answer]:
    """Starts a LONG_PRESS and returns once it holds the phone (its TASK_STARTED comes just before
    it takes its turn, and nothing else contends for it)."""
    started = await frontend.subscribe(("TASK_STARTED",))
    press: asyncio.Task[Answer] = asyncio.create_task(
        frontend.execute(
            "LONG_PRESS", {"x": "540", "y": "1200", "duration_ms": str(duration_ms)}, request_id=request_id
        )
    )
    while (await started.next()).payload["request_id"] != request_id:
        pass
    await started.close()
    return press


def wire_text_only(fe: FrontEnd, name: str, params: Mapping[str, str], *, query: bool = False) -> None:
    """Skips a case whose input is the gRPC wire's text for a typed field ("seven" for an integer,
    "nan" for a number, "maybe" for a boolean): a front end with JSON-typed arguments (MCP) refuses
    that as the wrong type before the runtime reads it, with its own message (tests/mcp covers it)."""
    untyped = getattr(fe, "untyped", None)
    keys = untyped(name, params, query=query) if untyped is not None else []
    if keys:
        import pytest

        pytest.skip(
            f"{fe.kind} takes JSON types: {', '.join(keys)} here is text no value of its type reads as"
        )


def names_tools(fe: FrontEnd) -> None:
    """Skips a case about action_type itself (empty, misspelt): MCP calls tools by name, and an
    unknown tool is its own error (tests/mcp/test_http.py)."""
    if fe.kind == "mcp":
        import pytest

        pytest.skip("MCP calls tools by name: no action_type is sent")


def names_subscribers(fe: FrontEnd) -> None:
    """Skips a case about subscriber ids: MCP's events are one resource read by cursor, with no
    subscriber of its own to name (tests/mcp/test_events.py covers it)."""
    if fe.kind == "mcp":
        import pytest

        pytest.skip("MCP's events resource has no subscriber ids")


def fits_the_wire(fe: FrontEnd, *values: str) -> None:
    """Skips a case whose request cannot reach the runtime on this front end's wire: over MCP's HTTP
    these values, as JSON (a control character is six bytes), pass the body limit, and the request
    is refused with 413 before it is read (tests/mcp/test_http.py covers it)."""
    limit = getattr(fe, "max_body_bytes", None)
    if limit is not None and sum(len(json.dumps(v)) for v in values) > limit:
        import pytest

        pytest.skip(f"{fe.kind}: a request past {limit} bytes is refused with 413 before it is read")
