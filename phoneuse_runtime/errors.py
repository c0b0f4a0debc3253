"""One exception tree for every failure an action or query can report.

Each class carries a stable CODE. The gRPC layer turns a failed Execute into
`success=false, error="CODE: message"` and a failed Query into a gRPC status;
nothing ever recognises an error by matching its text.
"""

from __future__ import annotations

from typing import ClassVar


class RuntimeFailure(Exception):
    """Base of every failure with a stable, documented code."""

    code: ClassVar[str] = "INTERNAL"
    summary: ClassVar[str] = "An unexpected failure inside the runtime; the server log has details."

    def __init__(self, message: str, *, details: dict[str, object] | None = None) -> None:
        super().__init__(message)
        self.message = message
        # Structured context for the caller (e.g. the candidates of an ambiguous name);
        # it becomes result_json of the failed response.
        self.details: dict[str, object] = details or {}

    def wire(self) -> str:
        """The `CODE: message` form used in ActionResponse.error."""
        return f"{self.code}: {self.message}"


class UnknownAction(RuntimeFailure):
    code = "UNKNOWN_ACTION"
    summary = "No handler is registered for this action_type on this device."


class InvalidParams(RuntimeFailure):
    code = "INVALID_PARAMS"
    summary = "A param is missing, unknown, or of the wrong type; the message names the allowed keys."


class Timeout(RuntimeFailure):
    code = "TIMEOUT"
    summary = "The action did not finish within timeout_ms; its device work was cancelled."


class DeviceUnavailable(RuntimeFailure):
    code = "DEVICE_UNAVAILABLE"
    summary = "The phone is not reachable, or the backend it needs is not running."


class ElementNotFound(RuntimeFailure):
    code = "ELEMENT_NOT_FOUND"
    summary = "No on-screen element matches the selector."


class PermissionDenied(RuntimeFailure):
    code = "PERMISSION_DENIED"
    summary = "The phone or the server configuration does not permit this (e.g. SHELL without --allow-shell)."


class Unsupported(RuntimeFailure):
    code = "UNSUPPORTED"
    summary = "The device cannot do this, e.g. no app handles the intent."


class Denied(RuntimeFailure):
    code = "DENIED"
    summary = "A policy refused the call (deny list, or a person declined it)."


class Conflict(RuntimeFailure):
    code = "CONFLICT"
    summary = "The request_id was already used for a request with different content."


class Internal(RuntimeFailure):
    code = "INTERNAL"


FAILURES: tuple[type[RuntimeFailure], ...] = (
    UnknownAction,
    InvalidParams,
    Timeout,
    DeviceUnavailable,
    ElementNotFound,
    PermissionDenied,
    Unsupported,
    Denied,
    Conflict,
    Internal,
)


class BadRequest(Exception):
    """A request that is malformed as a whole (gRPC INVALID_ARGUMENT), not a failed action."""
