"""The owner's controls as the owner means them (the attacks on them: tests/redteam/test_owner_controls.py
and test_owner_entry_points.py): an owner who frees Settings lets the agent in, the owner drives
their own controls, a denied hold frees the work that waited, work that needs no phone is not
held, a UI action in a listed app is held, and the lists are settings."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from phoneuse_runtime.config.owner import IRIS_APP
from phoneuse_runtime.config.settings import Settings, load_settings

from ...redteam.shared import front
from ...redteam.test_owner_controls import SMS, pickers
from ..conftest import GatewayFactory, GatewayServer, IrisClient
from .conftest import send_text, system_message


async def test_an_owner_who_frees_settings_lets_the_agent_in(make_gateway: GatewayFactory) -> None:
    server = await make_gateway(owner_apps=frozenset({IRIS_APP}))
    await server.grpc.ok("OPEN_APP", {"name": "Settings"})
    await server.grpc.ok("SWIPE", {"direction": "up"})


async def test_the_owner_may_drive_their_own_controls(server: GatewayServer, app: IrisClient) -> None:
    await send_text(app, "/open Settings")
    assert "/open done" in await system_message(app)
    assert await front(server) == "com.android.settings"


async def test_a_denied_hold_frees_the_work_that_waited(server: GatewayServer, app: IrisClient) -> None:
    held = asyncio.ensure_future(server.grpc.execute("SEND_MESSAGE", SMS))
    picker = (await app.next("picker.approval"))["payload"]
    waiting = asyncio.ensure_future(server.grpc.execute("OPEN_APP", {"name": "Clock"}))
    await app.send_frame("picker.select", {"picker_id": picker["picker_id"], "value": "deny"})
    assert (await held).error.startswith("DENIED")
    assert (await waiting).success


async def test_work_that_needs_no_phone_is_not_held(server: GatewayServer, app: IrisClient) -> None:
    held = asyncio.ensure_future(server.grpc.execute("SEND_MESSAGE", SMS))
    picker = (await app.next("picker.approval"))["payload"]
    await server.grpc.ok("CHAT_REPLY", {"text": "waiting for your answer"})
    await app.send_frame("picker.select", {"picker_id": picker["picker_id"], "value": "deny"})
    await held


# --- finding 8: approve_ui_in -------------------------------------------------------------
async def test_ui_in_a_listed_app_is_held_for_the_owner(make_gateway: GatewayFactory) -> None:
    server = await make_gateway(approve_ui_in=frozenset({"com.whatsapp"}))
    app = await server.connect()
    await server.grpc.ok("OPEN_APP", {"name": "WhatsApp"})
    await server.grpc.ok("DUMP_UI")  # looking is not held
    assert not pickers(app)
    tap = asyncio.ensure_future(server.grpc.execute("TAP", {"x": "540", "y": "1200"}))
    picker = (await app.next("picker.approval"))["payload"]
    assert picker["command"].startswith("TAP ")
    assert "com.whatsapp is in front" in picker["description"]
    assert not tap.done()
    await app.send_frame("picker.select", {"picker_id": picker["picker_id"], "value": "approve"})
    assert (await tap).success
    denied = asyncio.ensure_future(server.grpc.execute("SWIPE", {"direction": "up"}))
    picker = (await app.next("picker.approval"))["payload"]
    await app.send_frame("picker.select", {"picker_id": picker["picker_id"], "value": "deny"})
    assert (await denied).error.startswith("DENIED")
    await server.grpc.ok("PRESS_KEY", {"key": "HOME"})  # leaving is not held
    await server.grpc.ok("TAP", {"text": "Clock"})  # nor UI elsewhere


def test_the_owners_controls_and_approve_ui_in_are_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert {IRIS_APP, "com.termux", "com.android.settings", "com.android.systemui"} <= Settings().owner_apps
    assert Settings().approve_ui_in == frozenset()
    (tmp_path / "config.toml").write_text(
        'owner_apps = ["ai.lemon.iris"]\napprove_ui_in = ["com.whatsapp"]\n'
    )
    settings = load_settings({"data_dir": str(tmp_path)})
    assert settings.owner_apps == frozenset({IRIS_APP})
    assert settings.approve_ui_in == frozenset({"com.whatsapp"})
    monkeypatch.setenv("PHONEUSE_APPROVE_UI_IN", "com.whatsapp,org.telegram.messenger")
    assert load_settings({"data_dir": str(tmp_path)}).approve_ui_in == {
        "com.whatsapp",
        "org.telegram.messenger",
    }
