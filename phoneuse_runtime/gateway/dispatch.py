"""Frame handlers, keyed by frame type, and the dispatcher that runs them.

A handler is an async function `(session, request, payload) -> None`, registered with the
pydantic model of its payload:

    HANDLERS = Handlers()

    class PingPayload(Payload):
        ts: int | None = None

    @HANDLERS.on("ping", PingPayload)
    async def ping(session: Session, request: Request, payload: PingPayload) -> None:
        await session.reply(request, "pong", {"ts": now_ms()})

A payload of the wrong shape never reaches the handler: the dispatcher answers `unsupported`.
A handler raises `GatewayError(code, message)` for a failure the app should see; anything else
is logged and answered `internal`. Either way the connection stays open and nothing changes.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from phoneuse_runtime.gateway.errors import GatewayError
from phoneuse_runtime.gateway.protocol import Request

if TYPE_CHECKING:
    from phoneuse_runtime.gateway.session import Session

log = logging.getLogger(__name__)


class Payload(BaseModel):
    """Base of the app-to-server payload models. Types are strict (a `"5"` is no integer); fields
    the schema does not name are ignored, as the app ignores the server's extra fields."""

    model_config = ConfigDict(strict=True, extra="ignore", frozen=True, defer_build=True)


class Empty(Payload):
    """A payload with nothing in it (`channel.list`, `agent.stop`, ...)."""


P = TypeVar("P", bound=Payload)
HandlerFn = Callable[["Session", Request, P], Awaitable[None]]
BinaryFn = Callable[["Session", bytes], Awaitable[None]]


@dataclass(frozen=True)
class FrameHandler(Generic[P]):
    frame_type: str
    payload: type[P]
    run: HandlerFn[P]


class Handlers:
    """A table of frame handlers; tables from several parts merge into the gateway's one."""

    def __init__(self) -> None:
        self.frames: dict[str, FrameHandler[Any]] = {}
        self.binary: BinaryFn | None = None  # binary frames carry media only: one handler

    def on(self, frame_type: str, payload: type[P]) -> Callable[[HandlerFn[P]], HandlerFn[P]]:
        """Registers the decorated function for `frame_type`."""

        def register(fn: HandlerFn[P]) -> HandlerFn[P]:
            if frame_type in self.frames:
                raise ValueError(f"two handlers for frame type {frame_type!r}")
            self.frames[frame_type] = FrameHandler(frame_type, payload, fn)
            return fn

        return register

    def on_binary(self, fn: BinaryFn) -> BinaryFn:
        """Registers the decorated function for binary frames."""
        if self.binary is not None:
            raise ValueError("two handlers for binary frames")
        self.binary = fn
        return fn

    @classmethod
    def merged(cls, tables: Iterable[Handlers]) -> Handlers:
        """One table from several; a frame type handled twice is a programming error."""
        out = cls()
        for table in tables:
            for frame_type, handler in table.frames.items():
                if frame_type in out.frames:
                    raise ValueError(f"two handlers for frame type {frame_type!r}")
                out.frames[frame_type] = handler
            if table.binary is not None:
                out.on_binary(table.binary)
        return out


def payload_problem(exc: ValidationError) -> str:
    """A short account of a payload's first few problems, naming the fields."""
    parts = []
    for error in exc.errors()[:3]:
        where = ".".join(str(x) for x in error["loc"]) or "payload"
        parts.append(f"{where}: {error['msg']}")
    return "; ".join(parts)


async def dispatch(handlers: Handlers, session: Session, request: Request) -> None:
    """Runs the request's handler; answers an `error` frame for any failure."""
    handler = handlers.frames.get(request.type)
    try:
        if handler is None:
            raise GatewayError("unsupported", f"unknown frame type {request.type!r}")
        try:
            payload = handler.payload.model_validate(request.payload)
        except ValidationError as exc:
            raise GatewayError("unsupported", f"bad {request.type} payload: {payload_problem(exc)}") from None
        await handler.run(session, request, payload)
    except GatewayError as exc:
        await session.error(exc, request.id)
    except Exception:
        log.exception("the %s handler failed", request.type)
        await session.error(GatewayError("internal", f"{request.type} failed on the server"), request.id)


async def dispatch_binary(handlers: Handlers, session: Session, data: bytes) -> None:
    try:
        if handlers.binary is None:
            raise GatewayError("unsupported", "binary frames carry media uploads, and none is open")
        await handlers.binary(session, data)
    except GatewayError as exc:
        await session.error(exc, None)
    except Exception:
        log.exception("the binary frame handler failed")
        await session.error(GatewayError("internal", "a binary frame failed on the server"), None)
