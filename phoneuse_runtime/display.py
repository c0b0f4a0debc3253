"""Text that someone else wrote, made safe to show on the owner's terminal.

An app names its device, a message carries its body, a contact its name: any of them may hold
terminal escapes (ESC[2J clears the screen, an OSC sequence retitles the window, ESC[8m hides
what follows) or bidi controls that make a line read differently from what it holds. Every CLI
output of such text goes through `printable`, which shows those characters as escapes
(`\\x1b`, `\\u202e`) and leaves every other character, emoji and scripts included, as it is.
"""

from __future__ import annotations

import json
import unicodedata
from typing import Any

# Bidi embeddings, overrides and isolates, and the marks: Unicode's "Cf" covers them, but
# they are listed so that a reader sees what is meant.
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def _unsafe(char: str) -> bool:
    if char in _BIDI:
        return True
    category = unicodedata.category(char)
    # Cc: C0 and C1 controls (ESC, CSI, BEL, NUL, DEL, ...); Cf: format characters (bidi,
    # zero-width); Zl/Zp: line and paragraph separators. ZWJ stays: emoji sequences need it.
    return (category in ("Cc", "Zl", "Zp") or category == "Cf") and char != "\u200d"


def _escape(char: str) -> str:
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def printable(text: str, *, keep_newlines: bool = False) -> str:
    """`text` with control, format and bidi characters shown as escapes. With `keep_newlines`,
    a plain newline stays a newline (a message body printed over several lines)."""
    if text.isprintable():  # the common case: nothing to do
        return text
    return "".join(_escape(c) if _unsafe(c) and not (keep_newlines and c == "\n") else c for c in text)


def safe_json(value: Any, *, indent: int | None = None) -> str:
    """`json.dumps` for a terminal: non-ASCII text stays readable, but the characters that
    `printable` escapes are written as JSON `\\uXXXX` escapes, so the output is still JSON."""
    text = json.dumps(value, ensure_ascii=False, indent=indent)
    # json.dumps escapes C0 controls itself; a raw newline here is the indent's own.
    return "".join(
        c if c == "\n" or not _unsafe(c) else "".join(f"\\u{u:04x}" for u in _utf16(c)) for c in text
    )


def _utf16(char: str) -> list[int]:
    data = char.encode("utf-16-be")
    return [int.from_bytes(data[i : i + 2], "big") for i in range(0, len(data), 2)]
