"""Text that someone else wrote, made safe to show on the owner's terminal.

An app names its device, a message carries its body, a contact its name: any of them may hold
terminal escapes (ESC[2J clears the screen, an OSC sequence retitles the window, ESC[8m hides
what follows, a C1 CSI does what ESC[ does) or bidi controls that make a line read differently
from what it holds. Every CLI output of such text goes through `printable` (or `safe_json`,
`json_text` for JSON), which shows those characters as escapes (`\\x1b`, `\\u202e`) and leaves
every other character as it is: emoji (with their joiners, variation selectors and flag tags),
CJK, Arabic, Devanagari stay readable.
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

# Bidi embeddings, overrides and isolates, and the marks: Unicode's "Cf" covers them, but
# they are listed so that a reader sees what is meant.
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
# Format characters that readable text needs: the zero-width joiner (emoji sequences such as
# 👩‍💻) and non-joiner (Persian, Hindi). They join or part glyphs; they hide and reorder nothing.
_JOINERS = frozenset("\u200c\u200d")
# Tag characters (U+E0020..E007F) are invisible ASCII look-alikes ("ASCII smuggling"), except
# inside an emoji tag sequence, the flags of England, Scotland and Wales: 🏴 tags... CANCEL TAG.
_TAG_FLAG = re.compile("\U0001f3f4[\U000e0020-\U000e007e]{1,32}\U000e007f")
_TAGS = range(0xE0020, 0xE0080)


def _unsafe(char: str) -> bool:
    if char in _BIDI:
        return True
    # Cc: C0 and C1 controls (ESC, CSI, BEL, NUL, DEL, ...); Cf: format characters (bidi,
    # zero-width, tags); Cs: lone surrogates (which a terminal's UTF-8 cannot even encode);
    # Zl/Zp: line and paragraph separators.
    return unicodedata.category(char) in ("Cc", "Cf", "Cs", "Zl", "Zp") and char not in _JOINERS


def _escape(char: str) -> str:
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def _flag_tags(text: str) -> set[int]:
    """The positions of tag characters that belong to an emoji flag, where they stay."""
    if not any(ord(c) in _TAGS for c in text):
        return set()
    return {i for m in _TAG_FLAG.finditer(text) for i in range(m.start() + 1, m.end())}


def printable(text: str, *, keep_newlines: bool = False) -> str:
    """`text` with control, format and bidi characters shown as escapes. With `keep_newlines`,
    a plain newline stays a newline (a message body printed over several lines)."""
    if text.isprintable():  # the common case: nothing to do
        return text
    flags = _flag_tags(text)
    return "".join(
        _escape(c) if _unsafe(c) and not (keep_newlines and c == "\n") and i not in flags else c
        for i, c in enumerate(text)
    )


def json_text(text: str) -> str:
    """JSON text (as `json.dumps(..., ensure_ascii=False)` writes it) with the characters that
    `printable` escapes written as JSON `\\uXXXX` escapes: the same JSON value, safe to print.
    Outside its strings JSON holds only whitespace, so a raw newline there is an indent's."""
    if text.isprintable():
        return text
    flags = _flag_tags(text)
    return "".join(
        c if c == "\n" or i in flags or not _unsafe(c) else "".join(f"\\u{u:04x}" for u in _utf16(c))
        for i, c in enumerate(text)
    )


def safe_json(value: Any, *, indent: int | None = None) -> str:
    """`json.dumps` for a terminal: non-ASCII text stays readable, but the characters that
    `printable` escapes are written as JSON `\\uXXXX` escapes, so the output is still JSON
    (and decodes to `value`). json.dumps itself escapes only C0 controls."""
    return json_text(json.dumps(value, ensure_ascii=False, indent=indent))


def columns(text: str) -> int:
    """How many terminal columns `text` takes: wide and full-width characters (CJK, most
    emoji) two, combining marks and joiners none. A table pads its cells by this, not `len`."""
    if text.isascii():
        return len(text)
    width, joined = 0, False
    for c in text:
        if joined or c in _JOINERS or unicodedata.category(c) in ("Mn", "Me", "Cf"):
            joined = c == "\u200d"  # what a ZWJ joins is drawn in its predecessor's cells
            continue
        width += 2 if unicodedata.east_asian_width(c) in ("W", "F") else 1
    return width


def _utf16(char: str) -> list[int]:
    code = ord(char)
    if code <= 0xFFFF:  # a BMP character or a lone surrogate: one unit (UTF-16 cannot encode the latter)
        return [code]
    code -= 0x10000
    return [0xD800 + (code >> 10), 0xDC00 + (code & 0x3FF)]
