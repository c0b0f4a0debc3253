"""Bounds on what a caller sends, in one place: past them a call is refused with BAD_REQUEST
or INVALID_PARAMS, never INTERNAL. They are chosen so that a real agent never meets them."""

from __future__ import annotations

# JSON in a param (extras, tags, ...): nesting depth, and numbers a phone can carry.
MAX_JSON_DEPTH = 32
JSON_INT_MIN, JSON_INT_MAX = -(2**63), 2**63 - 1
# A uiautomator hierarchy (SIM_SET_SCREEN, and every dump a backend reads): levels of nesting.
# Android warns well before 100; a WebView's rarely passes 60.
MAX_UI_DEPTH = 256
# The Query filter `offset`: digits.
MAX_OFFSET_DIGITS = 9


def clip(text: str, limit: int = 40) -> str:
    """`text` as a message shows a caller's input: its repr, shortened past `limit` characters."""
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}… ({len(text)} characters)"
