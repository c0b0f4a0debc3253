"""Slash commands: the owner drives the phone from the chat."""

from __future__ import annotations

import base64

from ..conftest import GatewayServer, IrisClient
from .conftest import send_text, subscribe, system_message


async def test_the_catalog_lists_actions_and_built_ins(app: IrisClient) -> None:
    catalog = await app.request("commands.catalog")
    assert catalog["type"] == "commands.catalog"
    names = {c["name"] for c in catalog["payload"]["commands"]}
    for name in (
        "/tap",
        "/type",
        "/open",
        "/screenshot",
        "/sms",
        "/call",
        "/help",
        "/status",
        "/approve",
        "/deny",
    ):
        assert name in names
    assert "/sim_receive_sms" in names
    assert all(n.startswith("/") for n in names)
    assert not [n for n in names if n.startswith("/chat")]
    sms = next(c for c in catalog["payload"]["commands"] if c["name"] == "/sms")
    assert sms["args_hint"] == "<to> <body...>"
    assert sms["description"].startswith("Send an SMS")


async def test_complete_matches_a_prefix(app: IrisClient) -> None:
    done = await app.request("commands.complete", {"prefix": "/s"})
    assert done["type"] == "commands.complete"
    names = [m["name"] for m in done["payload"]["matches"]]
    assert {"/screenshot", "/sms", "/status", "/swipe"} <= set(names)
    assert all(n.startswith("/s") for n in names)
    bare = await app.request("commands.complete", {"prefix": "ta"})
    assert [m["name"] for m in bare["payload"]["matches"]] == ["/tap"]
    none = await app.request("commands.complete", {"prefix": "/zz"})
    assert none["payload"]["matches"] == []
    bad = await app.request("commands.complete", {"prefix": 3})
    assert bad["type"] == "error" and bad["payload"]["code"] == "unsupported"


async def test_a_slash_command_runs_on_the_phone_with_tool_frames(
    server: GatewayServer, app: IrisClient
) -> None:
    await send_text(app, "/open Settings")
    start = await app.next("tool.start")
    assert start["payload"]["name"] == "OPEN_APP"
    assert start["payload"]["args"] == {"name": "Settings"}
    end = await app.next("tool.end")
    assert end["payload"]["ok"] is True
    assert (await system_message(app)).startswith("/open done")
    assert server.app.runtime.device.link.up


async def test_key_value_params_and_positional_ones(server: GatewayServer, app: IrisClient) -> None:
    await send_text(app, "/tap 100 200")
    assert (await app.next("tool.start"))["payload"]["args"] == {"x": "100", "y": "200"}
    assert (await system_message(app)).startswith("/tap done")
    await send_text(app, '/sim_post_notification package=com.example title="Big sale" text=now')
    start = await app.next("tool.start")
    assert start["payload"]["args"] == {"package": "com.example", "title": "Big sale", "text": "now"}


async def test_a_failing_command_says_why(app: IrisClient) -> None:
    await send_text(app, "/tap text=Nowhere wait_ms=0")
    assert (await app.next("tool.end"))["payload"]["ok"] is False
    assert "failed: ELEMENT_NOT_FOUND" in await system_message(app)


async def test_bad_command_lines_change_nothing(server: GatewayServer, app: IrisClient) -> None:
    await send_text(app, "/frobnicate now")
    assert "Unknown command /frobnicate" in await system_message(app)
    await send_text(app, "/screenshot please")
    assert "/screenshot takes no positional arguments" in await system_message(app)
    await send_text(app, "/tap 1 2 3")
    assert "/tap takes <x> <y>" in await system_message(app)
    await send_text(app, "/tap x=abc y=1")
    assert "failed: INVALID_PARAMS" in await system_message(app)
    pong = await app.request("ping")
    assert pong["type"] == "pong"


async def test_a_screenshot_is_offered_as_media(server: GatewayServer, app: IrisClient) -> None:
    await send_text(app, "/screenshot")
    offer = await app.next("media.offer")
    ref = offer["payload"]
    assert ref["kind"] == "image" and ref["mime"] == "image/jpeg" and ref["size"] > 0  # scaled for a model
    message = await app.next_where(lambda f: f["type"] == "message" and f["payload"]["role"] == "system")
    assert message["payload"]["media"] == [ref]
    shot = await server.grpc.ok("SCREENSHOT")
    assert len(base64.b64decode(shot["image_base64"])) == ref["size"]


async def test_help_and_status(server: GatewayServer, app: IrisClient) -> None:
    await send_text(app, "/help")
    text = await system_message(app)
    assert "/sms <to> <body...> — Send an SMS" in text
    await send_text(app, "/status")
    status = await system_message(app)
    assert "Phone: sim, online" in status and "Agent: not connected" in status


async def test_slash_commands_are_not_sent_to_the_agent(server: GatewayServer, app: IrisClient) -> None:

    agent = await subscribe(server.grpc, "CHAT_MESSAGE")
    try:
        await send_text(app, "/status")
        assert "Agent: connected" in await system_message(app)
        await send_text(app, "plain words")
        assert (await agent.event("CHAT_MESSAGE"))["text"] == "plain words"
    finally:
        agent.close()
