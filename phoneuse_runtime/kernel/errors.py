"""One exception tree for every failure a call can report, and the one translation into it.

Each class carries a stable CODE. The runtime turns whatever a handler raises into one of
these (`translate`), for Execute and Query alike; each front end then keeps only a table
from CODE to its own wire (a gRPC status, the gateway's error frame). Nothing ever
recognises an error by matching its text.
"""

from __future__ import annotations

import asyncio
import logging
from typing import ClassVar

from phoneuse_runtime.kernel.limits import MAX_ERROR_CHARS, shorten

log = logging.getLogger(__name__)


class RuntimeFailure(Exception):
    """Base of every failure with a stable, documented code."""

    code: ClassVar[str] = "INTERNAL"
    summary: ClassVar[str] = "An unexpected failure inside the runtime; the server log has details."

    def __init__(self, message: str, *, details: dict[str, object] | None = None) -> None:
        # Bounded whatever it quotes: it is answered, published (TASK_COMPLETED) and kept for replays.
        message = shorten(message, MAX_ERROR_CHARS)
        super().__init__(message)
        self.message = message
        # Structured context for the caller (e.g. the candidates of an ambiguous name);
        # it becomes result_json of the failed response.
        self.details: dict[str, object] = details or {}

    def wire(self) -> str:
        """The `CODE: message` form used in ActionResponse.error and in status details."""
        return f"{self.code}: {self.message}"


class BadRequest(RuntimeFailure):
    code = "BAD_REQUEST"
    summary = (
        "The request as a whole is malformed (empty action_type or request_id, timeout_ms <= 0 or "
        "past a day, "
        "an unknown query type, a bad offset or limit, an id or name past its limit). gRPC answers "
        "it with the status "
        "INVALID_ARGUMENT instead of an ActionResponse."
    )


class UnknownAction(RuntimeFailure):
    code = "UNKNOWN_ACTION"
    summary = "No handler is registered for this action_type."


class InvalidParams(RuntimeFailure):
    code = "INVALID_PARAMS"
    summary = (
        "A param is missing, unknown, of the wrong type or past its limit, or names nothing that "
        "exists (a contact, an app); the message names the allowed keys or the closest names."
    )


class Timeout(RuntimeFailure):
    code = "TIMEOUT"
    summary = (
        "The call's own deadline (timeout_ms) passed: its device work was cancelled, or no answer "
        "came to the approval it was held for."
    )


class DeviceUnavailable(RuntimeFailure):
    code = "DEVICE_UNAVAILABLE"
    summary = (
        "The phone is not reachable, the backend it needs is not running, or a connection to it "
        "failed or timed out. An action that acts and met the phone's UI server dying says whether "
        "it may have run (`may_have_run` in `result_json`: read the screen before trying again) or "
        "did not; it is never done twice behind the caller's back."
    )


class ElementNotFound(RuntimeFailure):
    code = "ELEMENT_NOT_FOUND"
    summary = "No on-screen element (or stored item) matches."


class PermissionDenied(RuntimeFailure):
    code = "PERMISSION_DENIED"
    summary = "The phone or the server configuration does not permit this (e.g. SHELL without --allow-shell)."


class Unsupported(RuntimeFailure):
    code = "UNSUPPORTED"
    summary = (
        "The device cannot do this: it lacks a capability the action requires (the message says "
        "how to get it), no app handles the intent, or the platform refuses it for good (e.g. SMS "
        "on the Google Play build of Termux:API: get Termux:API from F-Droid or GitHub)."
    )


class Denied(RuntimeFailure):
    code = "DENIED"
    summary = "A policy refused the call (deny list, or a person declined it)."


class Conflict(RuntimeFailure):
    code = "CONFLICT"
    summary = (
        "The request_id was already used for a request with different content; or another "
        "principal holds the phone's lease (the message names the holder and the expiry)."
    )


class StaleScreen(RuntimeFailure):
    code = "STALE_SCREEN"
    summary = (
        "A gesture at coordinates (TAP, LONG_PRESS, SWIPE with x/y) was not done: another app's "
        "window (a system dialog, a call, another app) came to the front since the last screen this "
        "caller was given, so the point was computed for a screen no longer there. Read the screen "
        "again (DUMP_UI) and aim anew; `check_screen=false` opts out for one call."
    )


class OwnerMustUnlock(RuntimeFailure):
    code = "OWNER_MUST_UNLOCK"
    summary = (
        "The lock screen has a PIN, pattern or password: only the owner can unlock the phone (the "
        "runtime never types a secret). Ask the owner to unlock it, then try again."
    )


class Internal(RuntimeFailure):
    code = "INTERNAL"


FAILURES: tuple[type[RuntimeFailure], ...] = (
    BadRequest,
    UnknownAction,
    InvalidParams,
    Timeout,
    DeviceUnavailable,
    ElementNotFound,
    PermissionDenied,
    Unsupported,
    Denied,
    Conflict,
    StaleScreen,
    OwnerMustUnlock,
    Internal,
)


def translate(exc: BaseException, *, doing: str) -> RuntimeFailure:
    """The failure a call reports for an exception its handler let escape.

    Keyed by class, never by text. A timeout raised inside a handler (a socket's, a library's)
    is the device's trouble, not the call's deadline: only the runtime's own deadline makes
    TIMEOUT, and it never comes through here. Any other OSError is I/O with the phone too.
    Anything unforeseen is INTERNAL, logged once with its traceback."""
    if isinstance(exc, RuntimeFailure):
        return exc
    if isinstance(exc, (TimeoutError, asyncio.TimeoutError, ConnectionError)):
        return DeviceUnavailable(f"{doing}: the connection to the phone failed ({type(exc).__name__})")
    if isinstance(exc, OSError):  # a socket, pipe or file the backend reaches the phone through
        return DeviceUnavailable(
            f"{doing}: talking to the phone failed ({type(exc).__name__}: {exc.strerror or exc})"
        )
    log.error("%s failed unexpectedly", doing, exc_info=exc)
    return Internal(f"{doing} failed unexpectedly; see the server log")
