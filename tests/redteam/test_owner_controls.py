"""Approvals the agent cannot get around (issue 16, findings 8 and 10), through the real server:
the agent's gRPC calls, the owner's Iris app on the gateway's WebSocket.

- the agent never drives, opens, closes or sends intents to the owner's controls;
- while a call is held, the agent's other device work waits for the answer;
- `approve_ui_in` holds every UI action in the apps it lists;
- refusals that need no person (SHELL without --allow-shell, ...) come before any hold.
"""

from __future__ import annotations

import asyncio

import pytest

from phoneuse_runtime.config.owner import IRIS_APP

from ..gateway.conftest import GatewayFactory, GatewayServer, IrisClient
from .shared import LAUNCHER, SHADE, front

SMS = {"to": "+15551234", "body": "on my way"}
CLOCK = "com.google.android.deskclock"


def pickers(app: IrisClient) -> list[dict[str, object]]:
    return [f for f in app.received if f["type"] == "picker.approval"]


# --- finding 10: refusals that need no person come first ----------------------------------
async def test_shell_without_allow_shell_is_refused_at_once_not_held(
    server: GatewayServer, app: IrisClient
) -> None:
    """An agent with a valid token sends SHELL without --allow-shell, to be held, not refused."""
    response = await server.grpc.execute("SHELL", {"command": "id"}, timeout_ms=5000)
    assert response.error == (
        "PERMISSION_DENIED: SHELL is disabled; start the server with --allow-shell to enable it"
    )
    assert (await app.next("tool.end"))["payload"]["ok"] is False
    assert not pickers(app)


@pytest.mark.parametrize(
    ("action", "params", "code"),
    [
        (
            "START_INTENT",
            {"action": "android.intent.action.VIEW", "data": "file:///sdcard/x"},
            "PERMISSION_DENIED",
        ),
        ("START_INTENT", {"action": "android.settings.ACCESSIBILITY_SETTINGS"}, "PERMISSION_DENIED"),
        ("START_INTENT", {"component": "com.termux/.app.TermuxActivity"}, "PERMISSION_DENIED"),
        ("START_INTENT", {"action": "android.intent.action.SEND", "extras": "[1]"}, "INVALID_PARAMS"),
        ("PRESS_KEY", {"key": "FLY"}, "INVALID_PARAMS"),
    ],
)
async def test_every_refusal_that_needs_no_person_comes_before_the_hold(
    make_gateway: GatewayFactory, action: str, params: dict[str, str], code: str
) -> None:
    """An agent with a valid token sends calls a rule refuses, to be held, not refused."""
    server = await make_gateway(approval_actions=frozenset({"START_INTENT", "PRESS_KEY"}))
    app = await server.connect()
    response = await server.grpc.execute(action, params, timeout_ms=5000)
    assert response.error.startswith(f"{code}: "), response.error
    await app.next("tool.end")
    assert not pickers(app)


# --- finding 8: the owner's controls ------------------------------------------------------
@pytest.mark.parametrize(
    ("action", "params"),
    [
        ("OPEN_APP", {"name": "Settings"}),
        ("OPEN_APP", {"package": IRIS_APP}),
        ("OPEN_APP", {"package": "com.google.android.permissioncontroller"}),
        ("CLOSE_APP", {"package": "com.termux"}),
        ("START_INTENT", {"action": "android.settings.APPLICATION_DEVELOPMENT_SETTINGS"}),
        ("START_INTENT", {"action": "android.settings.MANAGE_DEFAULT_APPS_SETTINGS"}),
        ("START_INTENT", {"action": "android.app.action.ADD_DEVICE_ADMIN"}),
        ("START_INTENT", {"action": "android.intent.action.MAIN", "package": "com.termux.api"}),
        ("OPEN_URL", {"url": "https://example.com"}),  # app_target: the Iris app
    ],
)
async def test_the_agent_never_opens_the_owners_controls(
    server: GatewayServer, app: IrisClient, action: str, params: dict[str, str]
) -> None:
    """An agent with a valid token opens, closes or sends an intent to one of the owner's controls."""
    target = IRIS_APP if action == "OPEN_URL" else None
    response = await server.grpc.execute(action, params, app_target=target)
    assert response.error.startswith(f"PERMISSION_DENIED: {action}: "), response.error
    assert "one of the owner's controls" in response.error or "owner's settings" in response.error
    assert await front(server) == LAUNCHER
    assert not pickers(app)


async def test_the_agent_never_drives_the_notification_shade(server: GatewayServer, app: IrisClient) -> None:
    """An agent with a valid token drives the notification shade, where the approval notification is."""
    await server.grpc.ok("SWIPE", SHADE)  # from the home screen: allowed; the shade comes down
    assert await front(server) == "com.android.systemui"
    for action, params in (
        ("TAP", {"x": "540", "y": "400"}),
        ("SWIPE", {"direction": "up"}),
        ("TYPE_TEXT", {"text": "approve"}),
        ("PRESS_KEY", {"key": "ENTER"}),
    ):
        response = await server.grpc.execute(action, params)
        assert response.error.startswith(f"PERMISSION_DENIED: {action}: the notification shade"), (
            response.error
        )
    assert await front(server) == "com.android.systemui"
    await server.grpc.ok("PRESS_KEY", {"key": "BACK"})  # leaving is always allowed
    assert await front(server) == LAUNCHER


# --- finding 8: a held call holds the agent's other device work -------------------------
async def test_a_held_call_holds_the_agents_other_device_work(server: GatewayServer, app: IrisClient) -> None:
    """An agent with a valid token drives the UI around its own held call."""
    held = asyncio.ensure_future(server.grpc.execute("SEND_MESSAGE", SMS))
    picker = (await app.next("picker.approval"))["payload"]
    approval_id = picker["picker_id"]
    for action, params in (
        ("OPEN_APP", {"name": "Messages"}),
        ("DUMP_UI", {}),
        ("TAP", {"x": "540", "y": "1200"}),
    ):
        response = await server.grpc.execute(action, params, timeout_ms=300)
        assert response.error.startswith(
            f"TIMEOUT: {action} waited for approval {approval_id} (another call held for the owner)"
        ), response.error
        assert f"phoneuse-runtime approvals approve {approval_id}" in response.error
    assert await front(server) == LAUNCHER  # nothing moved
    assert not held.done()
    waiting = asyncio.ensure_future(server.grpc.execute("OPEN_APP", {"name": "Clock"}))
    await app.send_frame("picker.select", {"picker_id": approval_id, "value": "approve"})
    assert (await held).success
    opened = await waiting
    assert opened.success, opened.error
    assert await front(server) == CLOCK


async def test_a_tap_by_selector_on_the_system_uis_elements_is_refused(server: GatewayServer) -> None:
    """An agent with a valid token taps the status bar's elements, drawn over an app.

    The status bar is drawn over every app without the focus: its elements name their package."""
    await server.grpc.ok("OPEN_APP", {"name": "Clock"})
    response = await server.grpc.execute("TAP", {"resource_id": "com.android.systemui:id/clock"})
    assert response.error.startswith("PERMISSION_DENIED: TAP: the element is com.android.systemui's")
