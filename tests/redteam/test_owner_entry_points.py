"""Every way in to the owner's apps (issue 25, "a red team that stays"), tried by the agent with a
valid token on the simulated phone, through the real server (gRPC from the agent, the owner's
Iris app on the gateway's WebSocket): by name, package, component and intent, by a deep link, by
tapping its notification, by switching to it from recents or tapping its icon, by sharing into
it, by a link in the browser. Settings stands for them (the sim's owner app with a screen of its
own; the Iris app and Termux are not installed there). Each is refused, and the owner's app is
as the owner left it: not in front, its screen the one the owner last had. The same on the fake
adb phone behind the real adb server, where a tap that brings Settings up still runs (a strict
xfail: the front is checked there before the action, in its own command, not after it)."""

from __future__ import annotations

from typing import Any

import pytest

from phoneuse_runtime.config.owner import IRIS_APP

from ..device.adb.conftest import AdbServe
from ..fakes import apps, seed
from ..gateway.agent.conftest import send_text, system_message
from ..gateway.conftest import GatewayServer, IrisClient
from .shared import LAUNCHER, SHADE, front, sim

SETTINGS = "com.android.settings"
CHROME = "com.android.chrome"
NO_SETTLE = {"settle_ms": "0"}


async def owner_left_settings(server: GatewayServer, app: IrisClient) -> str:
    """The owner opens Settings from the Iris app and goes home: Settings is running, in recents,
    on the screen the owner had (returned: its activity)."""
    await send_text(app, "/open Settings")
    assert "/open done" in await system_message(app)
    activity = (await sim(server).foreground()).activity
    await server.grpc.ok("PRESS_KEY", {"key": "HOME"})
    assert await front(server) == LAUNCHER
    return activity


async def assert_untouched(server: GatewayServer, app: IrisClient, activity: str) -> None:
    """Settings is not in front, and the owner, opening it again, finds the screen they left."""
    assert await front(server) != SETTINGS
    assert not [f for f in app.received if f["type"] == "picker.approval"]  # nothing asked either
    await send_text(app, "/open Settings")
    assert "/open done" in await system_message(app)
    now = await sim(server).foreground()
    assert (now.package, now.activity) == (SETTINGS, activity)


async def refused(server: GatewayServer, action: str, params: dict[str, str], **kw: Any) -> str:
    response = await server.grpc.execute(action, params, **kw)
    assert not response.success, f"{action} {params} ran: {response.result_json}"
    assert response.error.startswith("PERMISSION_DENIED: "), response.error
    return str(response.error)


@pytest.mark.parametrize(
    ("action", "params"),
    [
        ("OPEN_APP", {"name": "Settings"}),  # by name
        ("OPEN_APP", {"name": "  sETTINGS "}),  # by name, as match_name folds it
        ("OPEN_APP", {"name": "Sett"}),  # by a unique prefix of its name
        ("OPEN_APP", {"package": SETTINGS}),  # by package
        ("OPEN_APP", {"package": f" {SETTINGS}\t"}),
        ("CLOSE_APP", {"package": SETTINGS}),  # closing it loses the owner's screen
        ("START_INTENT", {"component": f"{SETTINGS}/.Settings"}),  # by component
        ("START_INTENT", {"component": f"{SETTINGS}/{SETTINGS}.Settings"}),
        ("START_INTENT", {"component": f" {SETTINGS}/.Settings"}),
        ("START_INTENT", {"kind": "broadcast", "component": f"{SETTINGS}/.Receiver"}),
        ("START_INTENT", {"action": "android.intent.action.MAIN", "package": SETTINGS}),  # by intent
        ("START_INTENT", {"action": "android.settings.WIFI_SETTINGS"}),
        ("START_INTENT", {"action": " android.settings.SETTINGS "}),
        ("START_INTENT", {"action": "android.app.action.ADD_DEVICE_ADMIN"}),
        ("START_INTENT", {"action": "android.intent.action.VIEW", "data": "settings://wifi"}),  # deep links
        ("START_INTENT", {"action": "android.intent.action.VIEW", "data": f"package:{SETTINGS}"}),
        ("OPEN_URL", {"url": "intent:#Intent;component=com.android.settings/.Settings;end"}),
        ("OPEN_URL", {"url": "market://details?id=ai.lemon.iris"}),
        ("OPEN_URL", {"url": "settings:"}),
        ("START_INTENT", {"action": "android.intent.action.SEND", "package": IRIS_APP}),  # share into it
        ("START_INTENT", {"action": "android.intent.action.SEND", "component": "com.termux/.ShareActivity"}),
    ],
)
async def test_the_agent_reaches_no_owner_app_by_name_package_component_intent_or_link(
    server: GatewayServer, app: IrisClient, action: str, params: dict[str, str]
) -> None:
    """An agent with a valid token opens, closes or sends an intent to an owner's app."""
    activity = await owner_left_settings(server, app)
    await refused(server, action, params)
    await assert_untouched(server, app, activity)


async def test_a_link_to_an_owner_app_opened_in_the_browser_does_not_reach_it(
    server: GatewayServer, app: IrisClient
) -> None:
    """An agent with a valid token opens a web page in Chrome and types an intent: link to Settings."""
    activity = await owner_left_settings(server, app)
    await refused(server, "OPEN_URL", {"url": "https://example.com"}, app_target=SETTINGS)
    await server.grpc.ok("OPEN_URL", {"url": "https://example.com"})
    await server.grpc.ok("TAP", {"resource_id": f"{CHROME}:id/url_bar"})
    await server.grpc.ok("TYPE_TEXT", {"text": "intent://#Intent;action=android.settings.SETTINGS;end"})
    await server.grpc.ok("PRESS_KEY", {"key": "ENTER"})
    assert await front(server) == CHROME
    await assert_untouched(server, app, activity)


async def test_switching_to_an_owner_app_from_recents_is_refused(
    server: GatewayServer, app: IrisClient
) -> None:
    """An agent with a valid token opens recents and taps the card of the owner's Settings."""
    activity = await owner_left_settings(server, app)
    await server.grpc.ok("PRESS_KEY", {"key": "RECENTS"})
    error = await refused(server, "TAP", {"description": "Settings"})
    assert "brought com.android.settings to the front" in error, error
    await assert_untouched(server, app, activity)


async def test_tapping_an_owner_apps_icon_on_the_home_screen_is_refused(
    server: GatewayServer, app: IrisClient
) -> None:
    """An agent with a valid token taps the Settings icon on the home screen."""
    activity = await owner_left_settings(server, app)
    await refused(server, "TAP", {"text": "Settings"})
    await assert_untouched(server, app, activity)


async def test_an_owner_apps_notification_cannot_be_tapped(server: GatewayServer, app: IrisClient) -> None:
    """An agent with a valid token pulls the shade down to tap the notification of an owner's app."""
    activity = await owner_left_settings(server, app)
    await server.grpc.ok(
        "SIM_POST_NOTIFICATION", {"package": SETTINGS, "title": "Wi-Fi is off", "text": "Tap"}
    )
    await server.grpc.ok("SWIPE", SHADE)  # the shade may come down: NOTIFICATION_POSTED told as much
    assert await front(server) == "com.android.systemui"
    await refused(server, "TAP", {"description": "Settings notification: Wi-Fi is off"})
    await refused(server, "TAP", {"x": "540", "y": "548"})
    await refused(server, "LONG_PRESS", {"x": "540", "y": "548"})
    await refused(server, "SWIPE", {"x1": "100", "y1": "548", "x2": "1000", "y2": "548", "duration_ms": "20"})
    await server.grpc.ok("PRESS_KEY", {"key": "BACK"})
    assert [n.title for n in await sim(server).notifications()] == [
        "Wi-Fi is off"
    ]  # still there, never opened
    await assert_untouched(server, app, activity)


# --- the same ways in on the fake adb phone, behind the real adb server --------------------
@pytest.mark.parametrize(
    ("action", "params"),
    [
        ("OPEN_APP", {"name": "Settings"}),
        ("OPEN_APP", {"package": SETTINGS}),
        ("CLOSE_APP", {"package": SETTINGS}),
        ("START_INTENT", {"component": f"{SETTINGS}/.Settings"}),
        ("START_INTENT", {"action": "android.settings.WIFI_SETTINGS"}),
        ("START_INTENT", {"action": "android.intent.action.MAIN", "package": SETTINGS}),
        ("START_INTENT", {"action": "android.intent.action.SEND", "package": IRIS_APP}),
        ("OPEN_URL", {"url": "intent:#Intent;component=com.android.settings/.Settings;end"}),
    ],
)
async def test_on_adb_the_agent_reaches_no_owner_app_by_name_package_component_intent_or_link(
    serve_adb: AdbServe, action: str, params: dict[str, str]
) -> None:
    """An agent with a valid token opens, closes or sends an intent to an owner's app on a real-wire phone."""
    s = await serve_adb()
    apps.launch_package(s.state, seed.SETTINGS, source="test")  # the owner left Settings open
    apps.launch_package(s.state, seed.LAUNCHER, source="test")  # and went home
    intents = len(s.state.log.intents)
    response = await s.client.execute(action, params)
    assert response.error.startswith("PERMISSION_DENIED: "), response.error
    assert s.state.foreground().package == seed.LAUNCHER
    assert len(s.state.log.intents) == intents  # nothing was started, nor stopped
    kept = [a.activity for task in s.state.tasks for a in task.activities if a.package == seed.SETTINGS]
    assert kept == [seed.SETTINGS_MAIN]  # the owner's Settings, as they left it


async def test_on_adb_tapping_an_owner_apps_icon_on_the_home_screen_is_undone_and_refused(
    serve_adb: AdbServe,
) -> None:
    """An agent with a valid token taps the Settings icon on the home screen of a real-wire phone.
    The phone checks the front before the tap (the home screen: let through); the runtime reads
    what the tap brought from the settle's last look, at no round trip of its own."""
    s = await serve_adb()
    response = await s.client.execute("TAP", {"description": "Settings"})
    assert response.error.startswith("PERMISSION_DENIED: TAP: it brought com.android.settings")
    assert "pressed HOME" in response.error
    assert s.state.foreground().package == seed.LAUNCHER
    kept = [a.activity for task in s.state.tasks for a in task.activities if a.package == seed.SETTINGS]
    assert kept == [seed.SETTINGS_MAIN]  # Settings as the tap opened it, in the background


async def test_on_adb_an_owner_app_a_tap_without_settle_brought_is_undone_at_the_next_ui_action(
    serve_adb: AdbServe,
) -> None:
    """With settle_ms=0 nothing looks after the tap (one round trip, and a read at once would miss
    an app still starting): the agent's next UI action, which the phone refuses with Settings in
    front, undoes it and says which action brought it; nothing is done in Settings."""
    s = await serve_adb()
    await s.client.ok("TAP", {"description": "Settings", **NO_SETTLE})
    taps = len(s.state.log.taps)
    response = await s.client.execute("TAP", {"text": "Network & internet", **NO_SETTLE})
    assert response.error.startswith(
        "PERMISSION_DENIED: TAP: the UI action before it, with settle_ms=0, brought com.android.settings"
    ), response.error
    assert s.state.foreground().package == seed.LAUNCHER
    kept = [a.activity for task in s.state.tasks for a in task.activities if a.package == seed.SETTINGS]
    assert kept == [seed.SETTINGS_MAIN]  # nothing was opened in Settings
    assert len(s.state.log.taps) == taps
    # Once undone, the next refusal is the plain one: nothing is pressed for the owner's own use.
    apps.launch_package(s.state, seed.SETTINGS, source="test")  # the owner opens Settings
    response = await s.client.execute("TAP", {"text": "Network & internet", **NO_SETTLE})
    assert response.error.startswith("PERMISSION_DENIED: TAP: com.android.settings is in front")
    assert s.state.foreground().package == seed.SETTINGS


async def test_on_adb_an_owner_app_a_tap_without_settle_brought_is_undone_at_the_next_look(
    serve_adb: AdbServe,
) -> None:
    """The same tap, then a read of the screen: the read's own look judges the front (no round
    trip more), presses HOME and refuses it, so Settings is not left in front for the agent."""
    s = await serve_adb()
    await s.client.ok("TAP", {"description": "Settings", **NO_SETTLE})
    response = await s.client.execute("DUMP_UI")
    assert response.error.startswith(
        "PERMISSION_DENIED: DUMP_UI: the UI action before it, with settle_ms=0, brought com.android.settings"
    ), response.error
    assert s.state.foreground().package == seed.LAUNCHER
