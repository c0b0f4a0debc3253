"""Bad input is the caller's mistake: INVALID_PARAMS (or BAD_REQUEST) with a clear message, and at
most one line in the server's log, never INTERNAL with a traceback."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator

import pytest

from phoneuse_runtime.kernel.limits import MAX_JSON_DEPTH, MAX_UI_DEPTH

from .frontend import FrontEnd, refused, wire_text_only

ALARM = "android.intent.extra.alarm."
EVENT_KEYS = "all_day, calendar, description, end, location, start, timezone, title"
TIME_RANGE = (
    "expected a time from 0001-01-02 to 9999-12-30 (UTC): ISO-8601 (2026-12-01T09:30:00+01:00) "
    "or epoch milliseconds"
)
NUMBERS = "JSON numbers must be finite, and integers within -2^63 .. 2^63-1"


@pytest.fixture
def quiet_log(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """Fails the test if the server logged more than one line, or any traceback, at INFO or above."""
    caplog.set_level(logging.INFO)
    yield
    records = [r for r in caplog.records if r.levelno >= logging.INFO]
    lines = sum(r.getMessage().count("\n") + 1 for r in records)
    assert lines <= 1, caplog.text[:2000]
    assert not any(r.exc_info for r in records), caplog.text[:2000]


def deep_list(depth: int) -> str:
    return "[" * depth + "]" * depth


def deep_object(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


def deep_screen(depth: int) -> str:
    node = '<node class="android.widget.FrameLayout" bounds="[0,0][10,10]">'
    return "<hierarchy>" + node * depth + "</node>" * depth + "</hierarchy>"


@pytest.mark.usefixtures("quiet_log")
@pytest.mark.parametrize(
    ("action", "params", "message"),
    [
        (
            "REMEMBER",
            {"name": "n", "tags": deep_list(10_000)},
            f"tags: JSON nested deeper than {MAX_JSON_DEPTH} levels",
        ),
        (
            "START_INTENT",
            {"action": "a", "extras": deep_object(10_000)},
            f"extras: JSON nested deeper than {MAX_JSON_DEPTH} levels",
        ),
        (
            "START_INTENT",
            {"action": "a", "extras": deep_object(MAX_JSON_DEPTH + 1)},
            f"extras: JSON nested deeper than {MAX_JSON_DEPTH} levels",
        ),
        (
            "START_INTENT",
            {"action": "android.intent.action.SET_ALARM", "extras": '{"' + ALARM + 'HOUR": 1e999}'},
            f"extras: JSON number 1e999 is out of range; {NUMBERS}",
        ),
        (
            "START_INTENT",
            {"action": "a", "extras": '{"n": -1E400}'},
            f"extras: JSON number -1E400 is out of range; {NUMBERS}",
        ),
        (
            "START_INTENT",
            {"action": "a", "extras": '{"n": NaN}'},
            f"extras: JSON number NaN is out of range; {NUMBERS}",
        ),
        (
            "START_INTENT",
            {"action": "a", "extras": '{"n": 9223372036854775808}'},
            f"extras: JSON number 9223372036854775808 is out of range; {NUMBERS}",
        ),
        (
            "START_INTENT",
            {"action": "a", "extras": '{"n": ' + "9" * 5000 + "}"},
            f"extras: JSON number {'9' * 40!r}… (5000 characters) is out of range; {NUMBERS}",
        ),
        ("CREATE_EVENT", {"title": "t", "start": "9" * 400}, f"start: {TIME_RANGE} (allowed: {EVENT_KEYS})"),
        (
            "CREATE_EVENT",
            {"title": "t", "start": "-" + "9" * 16},
            f"start: {TIME_RANGE} (allowed: {EVENT_KEYS})",
        ),
        (
            "CREATE_EVENT",
            {"title": "t", "start": "9999-12-31T23:30:00"},
            f"start: {TIME_RANGE} (allowed: {EVENT_KEYS})",
        ),
        (
            "CREATE_EVENT",
            {"title": "t", "start": "0", "end": "0001-01-01T00:00:00+01:00"},
            f"end: {TIME_RANGE} (allowed: {EVENT_KEYS})",
        ),
        ("CREATE_EVENT", {"title": "t", "start": "²"}, f"start: {TIME_RANGE} (allowed: {EVENT_KEYS})"),
        (
            "SIM_SET_SCREEN",
            {"xml": deep_screen(5000)},
            f"not a uiautomator hierarchy: nodes nested deeper than {MAX_UI_DEPTH} levels",
        ),
        (
            "SIM_SET_SCREEN",
            {"xml": deep_screen(MAX_UI_DEPTH + 1)},
            f"not a uiautomator hierarchy: nodes nested deeper than {MAX_UI_DEPTH} levels",
        ),
        ("PRESS_KEY", {"key": "²"}, "unknown key '²'; use a keycode or one of "),
        (
            "PRESS_KEY",
            {"key": "9" * 5000},
            f"unknown key {'9' * 40!r}… (5000 characters); use a keycode or one of ",
        ),
        ("SWIPE", {"direction": "up", "distance": "nan"}, "distance: Input should be a finite number"),
    ],
    ids=[
        "deep-tags",
        "deep-extras",
        "extras-one-level-too-deep",
        "alarm-hour-1e999",
        "extra-minus-1e400",
        "extra-nan",
        "extra-past-int64",
        "extra-5000-digits",
        "start-400-nines",
        "start-negative-17-digits",
        "start-at-the-end-of-time",
        "end-before-the-first-day",
        "start-superscript-two",
        "screen-5000-deep",
        "screen-one-level-too-deep",
        "key-superscript-two",
        "key-5000-digits",
        "distance-nan",
    ],
)
async def test_bad_input_is_invalid_params(
    frontend: FrontEnd, action: str, params: dict[str, str], message: str
) -> None:
    wire_text_only(frontend, action, params)
    answer = await frontend.execute(action, params)
    assert answer.code == "INVALID_PARAMS", answer.error[:500]
    assert answer.message.startswith(message), answer.message[:500]


@pytest.mark.usefixtures("quiet_log")
async def test_bad_input_just_inside_the_bounds_is_accepted(frontend: FrontEnd) -> None:
    extras = {ALARM + "HOUR": 7, ALARM + "MINUTES": 30, ALARM + "SKIP_UI": True, "n": -(2**63), "f": 1e308}
    answer = await frontend.execute(
        "START_INTENT", {"action": "android.intent.action.SET_ALARM", "extras": json.dumps(extras)}
    )
    assert answer.success, answer.error
    nested = await frontend.execute("REMEMBER", {"name": "n", "tags": deep_list(MAX_JSON_DEPTH)})
    assert nested.message.startswith("tags.0: Input should be a valid string")  # deep enough, not a string
    screen = await frontend.execute("SIM_SET_SCREEN", {"xml": deep_screen(MAX_UI_DEPTH)})
    assert screen.success, screen.error
    assert screen.result["nodes"] == MAX_UI_DEPTH
    early = await frontend.execute("CREATE_EVENT", {"title": "t", "start": "0001-01-02T00:00:00Z"})
    assert early.success, early.error
    assert early.result["start_ms"] == -62135510400000
    late = await frontend.execute(
        "CREATE_EVENT", {"title": "t", "start": "253402041600000", "all_day": "true"}
    )
    assert late.success, late.error


@pytest.mark.usefixtures("quiet_log")
@pytest.mark.parametrize(
    "offset",
    ["²", "9" * 5000, "1" * 10, "-1", "ten", " 1"],
    ids=["superscript-two", "5000-digits", "ten-digits", "negative", "word", "space"],
)
async def test_a_bad_offset_is_a_bad_request(frontend: FrontEnd, offset: str) -> None:
    wire_text_only(frontend, "MEMORY", {"offset": offset}, query=True)
    refusal = await refused(frontend.query("MEMORY", {"offset": offset}))
    shown = repr(offset) if len(offset) <= 40 else f"{offset[:40]!r}… ({len(offset)} characters)"
    assert refusal.error == (
        f"BAD_REQUEST: filter offset must be a non-negative integer of at most 9 digits, got {shown}"
    )
