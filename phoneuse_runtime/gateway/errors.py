"""The one error a gateway handler raises: its code is the schema's `error.code`."""

from __future__ import annotations

from typing import Literal

ErrorCode = Literal["auth", "not_found", "rate_limited", "media_too_large", "unsupported", "internal"]


class GatewayError(Exception):
    """Becomes an `error {code, message}` frame carrying the request's id (when it was an
    integer). The connection stays open unless the code is `auth`."""

    def __init__(self, code: ErrorCode, message: str, *, request_id: int | None = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code: ErrorCode = code
        self.message = message
        self.request_id = request_id  # set by the envelope parser, which knows no Request yet
