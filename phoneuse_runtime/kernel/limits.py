"""Every bound on what a caller sends and what the runtime stores or answers, in one place.

The figures are part of the contract: docs/protocol_spec.md documents each one (spec/document.py reads
them from here), and past them a call is refused with BAD_REQUEST (a malformed request: the
gRPC status INVALID_ARGUMENT) or INVALID_PARAMS, never stored. They are chosen so that a
real agent never meets them; they are not settings, because clients rely on them.

The gRPC receive limit (rpc/server.py) bounds a whole request in bytes; these bound each part
of it, in characters, which is what a caller counts.
"""

from __future__ import annotations

import json

KIB = 1024
MIB = 1024 * KIB

# request_id and subscriber_id: 1 to 128 printable ASCII characters (a UUID is 36). They are
# keys the runtime keeps (replays, streams), and a subscriber_id goes back in a response header.
MAX_ID_CHARS = 128
# action_type, a param or filter key, an event type in Subscribe's event_types.
MAX_NAME_CHARS = 64
# app_target: an Android package name.
MAX_APP_TARGET_CHARS = 256
# How many event types one Subscribe may name (there are a dozen).
MAX_EVENT_TYPES = 64

# One param or filter value, unless its field documents its own maximum (`max length`).
MAX_PARAM_CHARS = 256 * KIB
# The fields that take bulk text say so with this maximum (SIM_SET_SCREEN's xml: a real
# uiautomator dump of a long list or a web page reaches a few hundred KB).
MAX_BULK_CHARS = MIB
# JSON in a param (extras, tags, ...): nesting depth, and numbers a phone can carry.
MAX_JSON_DEPTH = 32
JSON_INT_MIN, JSON_INT_MAX = -(2**63), 2**63 - 1
# A uiautomator hierarchy (SIM_SET_SCREEN, and every dump a backend reads): levels of nesting.
# Android warns well before 100; a WebView's rarely passes 60.
MAX_UI_DEPTH = 256
# DUMP_UI's compact form: the most elements one page may hold (`max_elements`).
MAX_UI_ELEMENTS = 1000
# The Query filter `offset`: digits.
MAX_OFFSET_DIGITS = 9
# A call's deadline (Execute's `timeout_ms`, MCP's, a Query's own): at most a day. Every store and
# client it reaches (the approvals' SQLite mirror, the Iris app's `Long`) holds a deadline this far.
MAX_TIMEOUT_MS = 24 * 3600 * 1000

# Settling after a UI action (settle.py): the default and largest `settle_ms`, and how many
# elements of each kind (appeared, went, changed) its account of changes lists.
SETTLE_DEFAULT_MS = 2_000
SETTLE_MAX_MS = 10_000
SETTLE_CHANGES_MAX = 20

# The agent's memory (REMEMBER): what one item may hold.
MEMORY_KIND_CHARS = 64
MEMORY_NAME_CHARS = 256
MEMORY_TEXT_CHARS = 64 * KIB
MEMORY_TAGS = 32
MEMORY_TAG_CHARS = 64
MEMORY_LINKS = 32
# MEMORY's `q`: words (each must match, as a prefix). A person asks with a few; each word is one
# more prefix scan of the full-text index, so a `q` of 120k one-letter words ran 11 s.
MEMORY_QUERY_WORDS = 32

# Responses: a Query page's results, an Execute's result_json, an event's payload, in UTF-8 bytes. gRPC
# clients refuse messages over 4 MiB unless told otherwise; this leaves room for the rest of
# the message (a SCREENSHOT's image is at most 3 MiB of base64, see actions/ui.py).
MAX_RESPONSE_JSON_BYTES = 3 * MIB + 512 * KIB
OMITTED = "TOO_LARGE"
# An error's message (`CODE: message`): at most this many characters, cut with an ellipsis. What
# the caller sent is quoted in it by `clip`, its first CLIP_CHARS characters and its length.
MAX_ERROR_CHARS = 4 * KIB
CLIP_CHARS = 40


def utf8_size(text: str) -> int:
    """The UTF-8 length of `text`; cheap for ASCII, which CPython knows without looking."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def omitted_json(size: int) -> str:
    """The marker that stands for a result (or event payload) too large to send: a JSON object,
    like what it replaces."""
    return json.dumps({"omitted": OMITTED, "bytes": size, "max_bytes": MAX_RESPONSE_JSON_BYTES})


def fit_json(text: str) -> str:
    """`text`, or the omitted-result marker when its UTF-8 would pass MAX_RESPONSE_JSON_BYTES.
    A character takes at most 4 bytes, so only a long text needs measuring."""
    if len(text) > MAX_RESPONSE_JSON_BYTES // 4:
        size = utf8_size(text)
        if size > MAX_RESPONSE_JSON_BYTES:
            return omitted_json(size)
    return text


def shorten(text: str, limit: int) -> str:
    """`text` itself, at most `limit` characters: cut ones end in an ellipsis."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def clip(text: str, limit: int = CLIP_CHARS) -> str:
    """`text` as a message shows a caller's input: its repr, shortened past `limit` characters."""
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}… ({len(text)} characters)"


def bad_id(what: str, value: str, *, empty_ok: bool = False) -> str | None:
    """Why `value` cannot be a request_id or subscriber_id, or None when it can."""
    if not value:
        return None if empty_ok else f"{what} is empty"
    if len(value) > MAX_ID_CHARS:
        return f"{what} has {len(value)} characters; at most {MAX_ID_CHARS} are allowed"
    if not (value.isascii() and value.isprintable()):
        return f"{what} must be printable ASCII, got {clip(value)}"
    return None


def bad_timeout(timeout_ms: float) -> str | None:
    """Why `timeout_ms` cannot be a call's deadline, or None when it can."""
    if timeout_ms <= 0:
        return f"timeout_ms must be > 0, got {timeout_ms}"
    if timeout_ms > MAX_TIMEOUT_MS:
        text = str(timeout_ms)
        shown = text if len(text) <= 24 else f"{text[:12]}… ({len(text)} characters)"
        return f"timeout_ms must be at most {MAX_TIMEOUT_MS} (a day), got {shown}"
    return None


def too_long(what: str, length: int, limit: int) -> str:
    return f"{what} has {length} characters; at most {limit} are allowed"
