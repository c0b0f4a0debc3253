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
import logging
import re
import unicodedata
from typing import Any

# What is escaped: Unicode's Cc (C0 and C1 controls: ESC, CSI, BEL, NUL, DEL, ...), Cf (format
# characters: the bidi embeddings, overrides, isolates and marks, zero-width ones, tags), Cs
# (lone surrogates, which a terminal's UTF-8 cannot even encode), Zl and Zp (line and paragraph
# separators), as of Unicode 14, in ranges, so that one regex finds them at C speed. Two format
# characters stay, because readable text needs them: the zero-width joiner (emoji such as 👩‍💻)
# and non-joiner (Persian, Hindi); they join or part glyphs, and hide or reorder nothing.
# tests/test_display.py checks the ranges against this Python's unicodedata.
UNSAFE_RANGES = (
    (0x0000, 0x001F), (0x007F, 0x009F), (0x00AD, 0x00AD), (0x0600, 0x0605), (0x061C, 0x061C),
    (0x06DD, 0x06DD), (0x070F, 0x070F), (0x0890, 0x0891), (0x08E2, 0x08E2), (0x180E, 0x180E),
    (0x200B, 0x200B), (0x200E, 0x200F), (0x2028, 0x202E), (0x2060, 0x2064), (0x2066, 0x206F),
    (0xD800, 0xDFFF), (0xFEFF, 0xFEFF), (0xFFF9, 0xFFFB), (0x110BD, 0x110BD), (0x110CD, 0x110CD),
    (0x13430, 0x13438), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0001, 0xE0001),
    (0xE0020, 0xE007F),
)  # fmt: skip
# Tag characters (U+E0020..E007F) are invisible ASCII look-alikes ("ASCII smuggling"), except in
# an emoji tag sequence, the flags of England, Scotland and Wales: 🏴, tags, CANCEL TAG. Those stay.
_FOUND = re.compile(
    "(\U0001f3f4[\U000e0020-\U000e007e]{1,32}\U000e007f)|["
    + "".join(f"\\U{a:08x}-\\U{b:08x}" for a, b in UNSAFE_RANGES)
    + "]"
)


def _escape(char: str) -> str:
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def _json_escape(char: str) -> str:
    code = ord(char)
    if code <= 0xFFFF:  # a BMP character or a lone surrogate: one UTF-16 unit
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def _shown(match: re.Match[str]) -> str:
    return match.group(1) or _escape(match.group())


def _shown_with_newlines(match: re.Match[str]) -> str:
    text = match.group()
    return text if match.group(1) or text == "\n" else _escape(text)


def _json_shown(match: re.Match[str]) -> str:
    text = match.group()
    return text if match.group(1) or text == "\n" else _json_escape(text)


def printable(text: str, *, keep_newlines: bool = False) -> str:
    """`text` with control, format and bidi characters shown as escapes. With `keep_newlines`,
    a plain newline stays a newline (a message body printed over several lines)."""
    if text.isprintable():  # the common case: nothing to do
        return text
    return _FOUND.sub(_shown_with_newlines if keep_newlines else _shown, text)


def json_text(text: str) -> str:
    """JSON text (as `json.dumps(..., ensure_ascii=False)` writes it) with the characters that
    `printable` escapes written as JSON `\\uXXXX` escapes: the same JSON value, safe to print.
    Outside its strings JSON holds only whitespace, so a raw newline there is an indent's."""
    if text.isprintable():
        return text
    return _FOUND.sub(_json_shown, text)


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
        if joined or c in "\u200c\u200d" or unicodedata.category(c) in ("Mn", "Me", "Cf"):
            joined = c == "\u200d"  # what a ZWJ joins is drawn in its predecessor's cells
            continue
        width += 2 if unicodedata.east_asian_width(c) in ("W", "F") else 1
    return width


class PrintableFormatter(logging.Formatter):
    """Log lines as `printable` shows them: a device name or a message body that a handler logs
    reaches the terminal with its escapes shown, not run (a traceback keeps its newlines)."""

    def format(self, record: logging.LogRecord) -> str:
        return printable(super().format(record), keep_newlines=True)
