"""Execute's validation: malformed requests, unknown actions, params coerced from strings or refused."""

from __future__ import annotations

import pytest

from .frontend import FrontEnd, FrontEndFactory, names_tools, ok, refused, wire_text_only

KEYS = (
    "APP_SWITCH, BACK, CALL, CAMERA, DEL, DPAD_DOWN, DPAD_LEFT, DPAD_RIGHT, DPAD_UP, ENDCALL, ENTER, "
    "ESCAPE, FORWARD_DEL, HOME, MEDIA_PLAY_PAUSE, MENU, MOVE_END, MOVE_HOME, POWER, RECENTS, SEARCH, "
    "SLEEP, SPACE, TAB, VOLUME_DOWN, VOLUME_MUTE, VOLUME_UP, WAKEUP"
)
TAP_KEYS = "check_screen, class_name, description, index, ref, resource_id, settle_ms, text, wait_ms, x, y"
EVENT_KEYS = "all_day, calendar, description, end, location, start, timezone, title"
INTENT_KEYS = "action, categories, component, data, extras, kind, mime, package, settle_ms"
ALARM_KEYS = "days, hour, label, minute"


@pytest.mark.parametrize(
    ("action_type", "request_id", "timeout_ms", "message"),
    [
        ("", "r", 1000, "action_type is empty"),
        ("TAP", "", 1000, "request_id is empty"),
        ("TAP", "r", 0, "timeout_ms must be > 0, got 0"),
        ("TAP", "r", -5, "timeout_ms must be > 0, got -5"),
    ],
    ids=["no-action-type", "no-request-id", "zero-timeout", "negative-timeout"],
)
async def test_a_malformed_request_is_refused_as_bad_request(
    frontend: FrontEnd, action_type: str, request_id: str, timeout_ms: int, message: str
) -> None:
    if not action_type:
        names_tools(frontend)
    refusal = await refused(frontend.execute(action_type, request_id=request_id, timeout_ms=timeout_ms))
    assert (refusal.code, refusal.message) == ("BAD_REQUEST", message)


async def test_a_malformed_request_is_not_stored(frontend: FrontEnd) -> None:
    """A refused request used no request_id: the same id then runs."""
    await refused(frontend.execute("SET_CLIPBOARD", {"text": "a"}, request_id="m-1", timeout_ms=0))
    assert (await frontend.execute("SET_CLIPBOARD", {"text": "a"}, request_id="m-1")).success


async def test_unknown_action_suggests_close_names(frontend: FrontEnd) -> None:
    names_tools(frontend)
    answer = await frontend.execute("SEND_MESAGE", {}, request_id="u1")
    assert not answer.success
    assert answer.error == (
        "UNKNOWN_ACTION: no action 'SEND_MESAGE'; did you mean SEND_MESSAGE? "
        "(`phoneuse-runtime actions` lists them)"
    )
    assert answer.request_id == "u1"
    assert answer.result == {}
    nothing_close = await frontend.execute("FROBNICATE", {})
    assert nothing_close.error == (
        "UNKNOWN_ACTION: no action 'FROBNICATE' (`phoneuse-runtime actions` lists them)"
    )


async def test_unknown_params_name_the_allowed_keys(frontend: FrontEnd) -> None:
    answer = await frontend.execute("SET_CLIPBOARD", {"text": "a", "colour": "red"})
    assert answer.error == "INVALID_PARAMS: unknown param(s) colour; allowed: text"
    assert answer.result == {}


@pytest.mark.parametrize(
    ("action", "params", "message"),
    [
        (
            "SET_ALARM",
            {"hour": "seven"},
            "hour: Input should be a valid integer, unable to parse string as an integer "
            f"(allowed: {ALARM_KEYS})",
        ),
        (
            "SET_ALARM",
            {"hour": "25"},
            f"hour: Input should be less than or equal to 23 (allowed: {ALARM_KEYS})",
        ),
        (
            "SET_ALARM",
            {"hour": "7", "days": "mon,funday"},
            f"days: unknown day 'funday'; use MON, TUE, WED, THU, FRI, SAT, SUN (allowed: {ALARM_KEYS})",
        ),
        ("TAP", {"x": "10"}, f"params: give both x and y (allowed: {TAP_KEYS})"),
        (
            "TAP",
            {},
            "params: give either x and y, or a selector (ref, text, resource_id, description, class_name) "
            f"(allowed: {TAP_KEYS})",
        ),
        (
            "TAP",
            {"x": "1", "y": "2", "text": "OK"},
            "params: give either x and y, or a selector (ref, text, resource_id, description, class_name) "
            f"(allowed: {TAP_KEYS})",
        ),
        (
            "CREATE_EVENT",
            {"title": "t", "start": "tomorrow"},
            "start: expected a time from 0001-01-02 to 9999-12-30 (UTC): ISO-8601 "
            "(2026-12-01T09:30:00+01:00) or epoch milliseconds "
            f"(allowed: {EVENT_KEYS})",
        ),
        (
            "CREATE_EVENT",
            {"title": "t", "start": "2026-12-01T10:00:00", "end": "2026-12-01T09:00:00"},
            f"params: end is before start (allowed: {EVENT_KEYS})",
        ),
        (
            "START_INTENT",
            {"action": "a", "extras": "{not json"},
            "extras: not valid JSON (Expecting property name enclosed in double quotes at char 1) "
            f"(allowed: {INTENT_KEYS})",
        ),
        (
            "START_INTENT",
            {"action": "a", "extras": '{"k": {"nested": 1}}'},
            "extras.k: dict is not an extra type; use string, integer, number, bool or a list of strings",
        ),
        ("SEND_MESSAGE", {"to": "+14155550101"}, "body: Field required (allowed: body, to)"),
        (
            "SWIPE",
            {"direction": "sideways"},
            "direction: Input should be 'up', 'down', 'left' or 'right' "
            "(allowed: check_screen, direction, distance, duration_ms, settle_ms, x1, x2, y1, y2)",
        ),
        (
            "SCREENSHOT",
            {"quality": "0"},
            "quality: Input should be greater than or equal to 1 "
            "(allowed: format, marks, max_bytes, max_side, quality)",
        ),
        ("PRESS_KEY", {"key": "NOT_A_KEY"}, f"unknown key 'NOT_A_KEY'; use a keycode or one of {KEYS}"),
    ],
)
async def test_bad_params_are_invalid_params(
    frontend: FrontEnd, action: str, params: dict[str, str], message: str
) -> None:
    wire_text_only(frontend, action, params)
    answer = await frontend.execute(action, params)
    assert (answer.code, answer.message) == ("INVALID_PARAMS", message)


async def test_params_are_coerced_from_strings(frontend: FrontEnd) -> None:
    wire_text_only(frontend, "SET_ALARM", {"minute": "05"})  # the wire's text, coerced
    result = await ok(frontend, "SET_ALARM", {"hour": "7", "minute": "05", "days": "fri,MON", "label": "Gym"})
    assert (result["hour"], result["minute"], result["days"]) == (7, 5, ["MON", "FRI"])
    assert result["verified"] is True
    event = await ok(frontend, "CREATE_EVENT", {"title": "Lunch", "start": "1796112000000"})
    assert event["start_ms"] == 1796112000000
    assert event["end_ms"] == 1796112000000 + 3600_000


async def test_every_result_names_its_path(frontend: FrontEnd) -> None:
    for action, params in [
        ("DUMP_UI", {}),
        ("SET_CLIPBOARD", {"text": "v"}),
        ("PRESS_KEY", {"key": "HOME"}),
        ("REMEMBER", {"name": "n"}),
    ]:
        result = await ok(frontend, action, params)
        assert result["via"] in ("sim", "memory"), (action, result)


async def test_shell_is_refused_by_default(frontend: FrontEnd) -> None:
    answer = await frontend.execute("SHELL", {"command": "echo hi"})
    assert answer.error == (
        "PERMISSION_DENIED: SHELL is disabled; start the server with --allow-shell to enable it"
    )


async def test_shell_runs_with_allow_shell(make_frontend: FrontEndFactory) -> None:
    frontend = await make_frontend(allow_shell=True)
    result = await ok(frontend, "SHELL", {"command": "echo 'hi there'"})
    assert result["exit_code"] == 0
    assert result["stdout"].strip() == "hi there"
    missing = await ok(frontend, "SHELL", {"command": "frobnicate"})
    assert missing["exit_code"] == 127
