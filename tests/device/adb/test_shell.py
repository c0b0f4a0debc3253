"""The adb backend's command building and output reading, without a phone."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from phoneuse_runtime.device.adb.shell import (
    RowFormatError,
    bind,
    command,
    parse_getprop,
    parse_rows,
    parse_wm_size,
    provider_failure,
    quote,
    sql_like,
    sql_text,
)

HOSTILE = [
    "'; rm -rf / #",
    "$(reboot)",
    "`reboot`",
    'a "quoted" \\ back\\slash',
    "new\nline\ttab",
    "",
    "-n",
    "*",
    "~root",
    "!history",
    "a;b&c|d>e<f",
    "مرحبا بالعالم",  # Arabic
    "שלום עולם",  # Hebrew
    "你好，世界",  # CJK  # noqa: RUF001 (a CJK comma, on purpose)
    "😀👍🏽🇫🇷",  # emoji, a skin tone, a flag
    "Crème brûlée à l'œuf",  # accented Latin with a quote
]


@pytest.mark.skipif(shutil.which("sh") is None, reason="needs a POSIX sh")
@pytest.mark.parametrize("text", HOSTILE)
def test_quoted_words_reach_the_program_verbatim(text: str) -> None:
    # The phone's shell parses the joined command line again, as a POSIX sh does here.
    line = command("printf", "%s|", text, "second")
    out = subprocess.run(["sh", "-c", line], capture_output=True, text=True, check=True).stdout
    assert out == f"{text}|second|"


def test_plain_words_stay_unquoted() -> None:
    assert command("am", "start", "-n", "com.pkg/.Main", 42) == "am start -n com.pkg/.Main 42"
    assert quote("") == "''"
    assert quote("it's") == "'it'\\''s'"


def test_sql_literals() -> None:
    assert sql_text("O'Brien") == "'O''Brien'"
    assert sql_like("50%_a") == "'%50\\%\\_a%' ESCAPE '\\'"


@pytest.mark.parametrize(
    ("sdk", "expected"),
    [(30, "title:s:10:30 \\o/"), (31, "title:s:10\\:30 \\\\o/"), (34, "title:s:10\\:30 \\\\o/")],
)
def test_bind_escapes_colons_from_android_12(sdk: int, expected: str) -> None:
    assert bind("title", "s", "10:30 \\o/", sdk=sdk) == ["--bind", expected]


def test_rows_split_on_the_projection_not_on_commas() -> None:
    out = (
        "Row: 0 _id=12, address=+15551234567, body=Hello, world, date=, thanks\n"
        "Row: 1 _id=11, address=NULL, body=line one\nline two\nRow: 7 not a row\n"
    )
    rows = parse_rows(out, ("_id", "address", "body"))
    assert rows == [
        {"_id": "12", "address": "+15551234567", "body": "Hello, world, date=, thanks"},
        {"_id": "11", "address": "", "body": "line one\nline two\nRow: 7 not a row"},
    ]


def test_no_rows_and_bad_rows() -> None:
    assert parse_rows("No result found.\n", ("_id",)) == []
    assert parse_rows("", ("_id",)) == []
    with pytest.raises(RowFormatError):
        parse_rows("Row: 0 name=x\n", ("_id", "name"))
    with pytest.raises(RowFormatError):
        parse_rows("Error while accessing provider:sms\n", ("_id",))


def test_provider_failures_are_recognised() -> None:
    denied = (
        "Error while accessing provider:sms\n"
        "java.lang.SecurityException: Permission Denial: reading com.android.providers.telephony\n"
        "\tat android.os.Parcel.createException(Parcel.java:2071)\n"
    )
    assert provider_failure(denied) == (
        "java.lang.SecurityException: Permission Denial: reading com.android.providers.telephony"
    )
    assert provider_failure("Row: 0 _id=1\n") is None


def test_getprop_and_wm_size() -> None:
    props = parse_getprop("[ro.product.model]: [Pixel 8]\n[ro.build.version.sdk]: [34]\n[empty]: []\n")
    assert props == {"ro.product.model": "Pixel 8", "ro.build.version.sdk": "34", "empty": ""}
    assert parse_wm_size("Physical size: 1080x2400\n") == (1080, 2400)
    assert parse_wm_size("Physical size: 1080x2400\nOverride size: 720x1600\n") == (720, 1600)
    assert parse_wm_size("nothing") is None
