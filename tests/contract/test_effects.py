"""Deny lists judge what a call would do, not only its name: START_INTENT and OPEN_URL are also
the actions whose effect they have, and START_INTENT's data is held to url_schemes."""

from __future__ import annotations

from pathlib import Path

import pytest

from phoneuse_runtime.app import build_app
from phoneuse_runtime.config.settings import ConfigError, Settings
from phoneuse_runtime.device.base import SmsFilter

from .frontend import FrontEnd, FrontEndFactory, ok, sim

DENIED = frozenset({"MAKE_CALL", "SEND_MESSAGE", "SET_ALARM", "SHELL"})
SCHEMES = frozenset({"http", "https", "tel", "smsto", "sms"})  # only the deny list stands in the way
CALL = "android.intent.action.CALL"


@pytest.mark.parametrize(
    ("action_type", "params", "effect"),
    [
        ("START_INTENT", {"action": CALL, "data": "tel:+14155550101"}, "MAKE_CALL"),
        ("START_INTENT", {"action": "android.intent.action.DIAL", "data": "tel:+14155550101"}, "MAKE_CALL"),
        (
            "START_INTENT",
            {"action": "android.intent.action.SENDTO", "data": "smsto:+14155550101"},
            "SEND_MESSAGE",
        ),
        (
            "START_INTENT",
            {
                "action": "android.intent.action.SET_ALARM",
                "extras": '{"android.intent.extra.alarm.HOUR": 6, "android.intent.extra.alarm.MINUTES": 30, '
                '"android.intent.extra.alarm.SKIP_UI": true}',
            },
            "SET_ALARM",
        ),
        ("OPEN_URL", {"url": "tel:+14155550101"}, "MAKE_CALL"),
        ("OPEN_URL", {"url": "sms:+14155550101"}, "SEND_MESSAGE"),
    ],
)
async def test_an_intent_is_denied_for_the_effect_it_has(
    make_frontend: FrontEndFactory, action_type: str, params: dict[str, str], effect: str
) -> None:
    frontend = await make_frontend(deny_actions=DENIED, url_schemes=SCHEMES)
    phone = sim(frontend)
    sent_box = SmsFilter(box="sent")
    alarms, sent = len(await phone.alarms()), len(await phone.sms_messages(sent_box))
    answer = await frontend.execute(action_type, params)
    assert answer.error == (
        f"DENIED: {action_type} does what {effect} does, and {effect} is on this server's deny list"
    )
    assert (await phone.call_state()).state == "idle"
    assert len(await phone.alarms()) == alarms and len(await phone.sms_messages(sent_box)) == sent
    # An intent with no such effect still runs.
    main = {"action": "android.intent.action.MAIN", "package": "com.android.chrome"}
    await ok(frontend, "START_INTENT", main)


async def test_an_allow_list_is_judged_by_effect_too(make_frontend: FrontEndFactory) -> None:
    frontend = await make_frontend(allow_actions=frozenset({"START_INTENT"}), url_schemes=SCHEMES)
    answer = await frontend.execute("START_INTENT", {"action": CALL, "data": "tel:+14155550101"})
    assert answer.error == (
        "DENIED: START_INTENT does what MAKE_CALL does, and MAKE_CALL is not on this server's allow list"
    )


@pytest.mark.parametrize("data", ["javascript:alert(1)", "file:///sdcard/secret.txt", "tel:+14155550101"])
async def test_start_intent_data_is_held_to_url_schemes(make_frontend: FrontEndFactory, data: str) -> None:
    frontend = await make_frontend()  # url_schemes: http, https
    answer = await frontend.execute("START_INTENT", {"action": "android.intent.action.VIEW", "data": data})
    scheme = data.split(":", 1)[0]
    assert answer.error == (
        f"PERMISSION_DENIED: data scheme '{scheme}' is not allowed by this server (allowed: http, https)"
    )
    assert (await phone_front(frontend)) == "com.google.android.apps.nexuslauncher"


async def phone_front(frontend: FrontEnd) -> str:
    return (await sim(frontend).foreground()).package


@pytest.mark.parametrize(
    ("setting", "names", "message"),
    [
        (
            "deny_actions",
            frozenset({"make_call"}),
            "deny_actions names no action or query: 'make_call' (did you mean MAKE_CALL?)",
        ),
        (
            "allow_actions",
            frozenset({"TAP", "CONTACTZ"}),
            "allow_actions names no action or query: 'CONTACTZ' (did you mean CONTACTS?)",
        ),
    ],
)
async def test_a_list_naming_nothing_is_a_start_up_error(
    tmp_path: Path, setting: str, names: frozenset[str], message: str
) -> None:
    settings = Settings(data_dir=tmp_path, grpc_listen="127.0.0.1:0", **{setting: names})  # type: ignore[arg-type]
    with pytest.raises(ConfigError) as info:
        await build_app(settings, token="t")
    assert str(info.value).startswith(message)
