"""display.printable / safe_json / json_text / columns: what reaches the owner's terminal of text
that someone else wrote. Escapes and bidi controls are shown, readable scripts are left alone."""

from __future__ import annotations

import json

import pytest

from phoneuse_runtime.util.display import columns, json_text, printable, safe_json

READABLE = [
    "plain ASCII, with spaces",
    "👩‍💻 👨‍👩‍👧‍👦 🏳️‍🌈 ❤️ 👍🏽",  # ZWJ sequences, variation selectors, skin tones
    "🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f",  # Scotland: a flag tag sequence
    "王小明 さくら 김민준",  # CJK
    "محمد بن سلمان",  # Arabic
    "می‌خواهم",  # Persian, with a zero-width non-joiner
    "नमस्ते",  # Devanagari, combining marks
    "Zoë Ñuñez\u3000wide space",
]
HOSTILE = {
    "\x1b[2J": "\\x1b[2J",
    "\x1b]0;pwned\x07": "\\x1b]0;pwned\\x07",
    "\x1b[8mhidden": "\\x1b[8mhidden",
    "\u202egnp.exe": "\\u202egnp.exe",
    "\x9b31m": "\\x9b31m",  # a C1 CSI: ESC[ in one character
    "a\x7fb": "a\\x7fb",
    "line\u2028sep": "line\\u2028sep",
    "bom\ufeff": "bom\\ufeff",
    "lone \ud800 surrogate": "lone \\ud800 surrogate",
    "smuggled\U000e0041\U000e0042": "smuggled\\U000e0041\\U000e0042",  # tags outside a flag
    "\u2066isolate\u2069": "\\u2066isolate\\u2069",
}


@pytest.mark.parametrize("text", READABLE)
def test_readable_text_is_left_as_it_is(text: str) -> None:
    assert printable(text) == text
    assert json.loads(safe_json(text)) == text
    assert safe_json(text) == json.dumps(text, ensure_ascii=False)


@pytest.mark.parametrize(("text", "shown"), HOSTILE.items())
def test_controls_format_and_bidi_characters_are_shown_escaped(text: str, shown: str) -> None:
    assert printable(text) == shown
    encoded = safe_json({"name": text})
    assert encoded.isprintable()
    assert json.loads(encoded) == {"name": text}  # still JSON, and the same value


def test_newlines_stay_only_when_asked() -> None:
    assert printable("a\nb") == "a\\x0ab"
    assert printable("a\nb\x1b", keep_newlines=True) == "a\nb\\x1b"
    indented = safe_json({"a": ["\u202e"]}, indent=2)
    assert "\n" in indented and "\u202e" not in indented and json.loads(indented) == {"a": ["\u202e"]}


def test_json_text_escapes_what_json_dumps_leaves_raw() -> None:
    raw = json.dumps({"k": "\x9b\u202e\x7f"}, ensure_ascii=False)
    assert "\u202e" in raw  # json.dumps escapes C0 controls only
    assert json_text(raw) == '{"k": "\\u009b\\u202e\\u007f"}'
    assert json.loads(json_text(raw)) == json.loads(raw)
    astral = json.dumps("\U000e0041", ensure_ascii=False)
    assert json_text(astral) == '"\\udb40\\udc41"' and json.loads(json_text(astral)) == "\U000e0041"


@pytest.mark.parametrize(
    ("text", "width"),
    [("abc", 3), ("王小明", 6), ("e\u0301", 1), ("👩‍💻", 2), ("👨‍👩‍👧", 2), ("محمد", 4), ("", 0)],
)
def test_columns_counts_terminal_cells(text: str, width: int) -> None:
    assert columns(text) == width


def test_the_escaped_ranges_cover_every_control_format_and_separator_character() -> None:
    """UNSAFE_RANGES is Unicode 14's Cc, Cf, Cs, Zl and Zp but the two joiners; a Python with
    a newer Unicode that adds a format character fails here until the ranges name it."""
    import sys
    import unicodedata

    from phoneuse_runtime.util.display import UNSAFE_RANGES

    listed = {cp for a, b in UNSAFE_RANGES for cp in range(a, b + 1)}
    wanted = {
        cp
        for cp in range(sys.maxunicode + 1)
        if unicodedata.category(chr(cp)) in ("Cc", "Cf", "Cs", "Zl", "Zp") and cp not in (0x200C, 0x200D)
    }
    assert wanted <= listed, sorted(wanted - listed)[:10]
    assert all(unicodedata.category(chr(cp)) in ("Cc", "Cf", "Cs", "Zl", "Zp", "Cn") for cp in listed)


def test_serves_log_lines_show_what_they_quote_escaped() -> None:
    """`serve` formats its log lines with display.PrintableFormatter: a handler that logs a device's
    name cannot send the name's escapes to the terminal (a traceback keeps its lines)."""
    import logging

    from phoneuse_runtime.util.display import PrintableFormatter

    record = logging.LogRecord(
        "x", logging.INFO, __file__, 1, "device %s said hello", ("\x1b[2J\u202e",), None
    )
    assert PrintableFormatter("%(message)s").format(record) == "device \\x1b[2J\\u202e said hello"
    try:
        raise ValueError("bad\x1b]0;t\x07")
    except ValueError:
        import sys

        record = logging.LogRecord("x", logging.ERROR, __file__, 1, "failed", (), sys.exc_info())
    shown = PrintableFormatter("%(message)s").format(record)
    assert "\n" in shown and "\x1b" not in shown and "\x07" not in shown
