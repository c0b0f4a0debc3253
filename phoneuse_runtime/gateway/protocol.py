"""Iris frames without I/O: the envelope read from a text frame, and the frames the server writes.

The contract is `proto/iris-wire-protocol.schema.json` (version 1). Every frame is a JSON
object `{v: 1, id?, type, chat_id?, thread_id?, payload?}`; binary frames carry media only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from phoneuse_runtime.gateway.errors import GatewayError

PROTOCOL_VERSION = 1

# The schema's reliability section: frames that are never dropped (and so go through each
# device's outbox), and frames a slow connection may coalesce to the latest.
NEVER_DROPPED_EXACT = frozenset(
    {
        "message",
        "message.stop",
        "tool.end",
        "notification",
        "agent.busy",
        "agent.idle",
        "history",
        "commands.catalog",
        "commands.complete",
        "search.results",
        "error",
    }
)
NEVER_DROPPED_PREFIXES = ("picker.", "channel.")
COALESCABLE = frozenset({"message.update", "tool.progress"})


def never_dropped(frame_type: str) -> bool:
    return frame_type in NEVER_DROPPED_EXACT or frame_type.startswith(NEVER_DROPPED_PREFIXES)


@dataclass(frozen=True, slots=True)
class Request:
    """One frame from the app, its envelope checked. `id` is None unless it was an integer."""

    type: str
    id: int | None = None
    chat_id: str | None = None
    thread_id: str | None = None
    payload: dict[str, Any] = field(default_factory=dict)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def parse_request(text: str) -> Request:
    """The envelope of a text frame; GatewayError("unsupported") for anything that is not one.
    The error carries the frame's id when the id itself was readable (see `request_id_of`)."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        raise GatewayError("unsupported", "the frame is not JSON") from None
    if not isinstance(data, dict):
        raise GatewayError("unsupported", "a frame is a JSON object")
    frame_id = data.get("id")
    known_id = frame_id if _is_int(frame_id) else None
    if "id" in data and known_id is None:
        raise GatewayError("unsupported", "the envelope's id must be an integer")
    if data.get("v") != PROTOCOL_VERSION or not _is_int(data.get("v")):
        raise GatewayError("unsupported", f"the envelope's v must be {PROTOCOL_VERSION}", request_id=known_id)
    frame_type = data.get("type")
    if not isinstance(frame_type, str) or not frame_type:
        raise GatewayError(
            "unsupported", "the envelope's type must be a non-empty string", request_id=known_id
        )
    for key in ("chat_id", "thread_id"):
        if key in data and not isinstance(data[key], str):
            raise GatewayError("unsupported", f"the envelope's {key} must be a string", request_id=known_id)
    payload = data.get("payload", {})
    if not isinstance(payload, dict):
        raise GatewayError("unsupported", "the envelope's payload must be an object", request_id=known_id)
    return Request(frame_type, known_id, data.get("chat_id"), data.get("thread_id"), payload)


def encode_frame(
    frame_type: str,
    payload: dict[str, Any],
    *,
    id: int | None = None,
    chat_id: str | None = None,
    thread_id: str | None = None,
) -> str:
    """A server frame as JSON text; absent scope fields are left out, never sent as null."""
    frame: dict[str, Any] = {"v": PROTOCOL_VERSION}
    if id is not None:
        frame["id"] = id
    frame["type"] = frame_type
    if chat_id is not None:
        frame["chat_id"] = chat_id
    if thread_id is not None:
        frame["thread_id"] = thread_id
    frame["payload"] = payload
    return json.dumps(frame, ensure_ascii=False, separators=(",", ":"))
