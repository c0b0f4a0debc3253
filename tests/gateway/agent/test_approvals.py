"""The owner's approvals: risky actions wait for a paired app's answer."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from phoneuse_runtime.config.settings import ConfigError, load_settings
from phoneuse_runtime.rpc import protocol_pb2 as pb

from ..conftest import GatewayFactory, GatewayServer, IrisClient
from .conftest import send_text, system_message

SMS = {"to": "+15551234", "body": "on my way"}


def _held(
    server: GatewayServer, params: dict[str, str] = SMS, **kw: Any
) -> asyncio.Future[pb.ActionResponse]:
    return asyncio.ensure_future(server.grpc.execute("SEND_MESSAGE", params, **kw))


async def test_an_approved_action_runs(server: GatewayServer, app: IrisClient) -> None:
    other = await server.connect()
    call = _held(server)
    picker = await app.next("picker.approval")
    assert (await other.next("picker.approval"))["payload"] == picker["payload"]
    command = picker["payload"]["command"]
    assert command.startswith("SEND_MESSAGE ")
    assert "to=+15551234" in command and "body=on my way" in command
    assert picker["payload"]["description"].startswith("agent asks to send an SMS")
    assert not call.done()
    picker_id = picker["payload"]["picker_id"]
    await other.send_frame("picker.select", {"picker_id": picker_id, "value": "approve"})
    response = await call
    assert response.success, response.error
    late = await app.request("picker.select", {"picker_id": picker_id, "value": "deny"})
    assert late["type"] == "error" and late["payload"]["code"] == "not_found"
    resolved = await app.next_where(
        lambda f: f["type"] == "notification" and f["payload"]["kind"] == "approval"
    )
    assert resolved["payload"]["title"].startswith("Approved by")
    assert (await app.next("tool.end"))["payload"]["ok"] is True


async def test_a_denied_action_is_denied(server: GatewayServer, app: IrisClient) -> None:
    call = _held(server)
    picker = await app.next("picker.approval")
    await app.send_frame("picker.select", {"picker_id": picker["payload"]["picker_id"], "value": "deny"})
    response = await call
    assert response.error.startswith("DENIED")
    messages = await server.grpc.query(pb.QueryType.CONTACTS)  # the phone still answers
    assert messages is not None
    end = await app.next("tool.end")
    assert end["payload"]["ok"] is False and end["payload"]["output_preview"].startswith("DENIED")


async def test_no_answer_is_a_timeout_not_a_denial(server: GatewayServer, app: IrisClient) -> None:
    response = await server.grpc.execute("SEND_MESSAGE", SMS, timeout_ms=400)
    assert response.error.startswith("TIMEOUT")
    assert "no answer came to approval" in response.error
    picker = await app.next("picker.approval")
    expired = await app.next_where(
        lambda f: f["type"] == "notification" and f["payload"]["kind"] == "approval"
    )
    assert expired["payload"]["title"] == "Expired"
    late = await app.request(
        "picker.select", {"picker_id": picker["payload"]["picker_id"], "value": "approve"}
    )
    assert late["payload"]["code"] == "not_found"


async def test_an_answer_must_be_approve_or_deny(server: GatewayServer, app: IrisClient) -> None:
    call = _held(server)
    picker_id = (await app.next("picker.approval"))["payload"]["picker_id"]
    wrong = await app.request("picker.select", {"picker_id": picker_id, "value": "yes"})
    assert wrong["type"] == "error" and wrong["payload"]["code"] == "unsupported"
    assert not call.done()
    await app.send_frame("picker.select", {"picker_id": picker_id, "value": "approve"})
    assert (await call).success


async def test_pending_approvals_are_replayed_to_a_device_that_reconnects(server: GatewayServer) -> None:
    token = server.pair().token
    first = await server.connect(token)
    call = _held(server)
    shown = await first.next("picker.approval")
    await first.close()
    again = await server.connect(token)
    replayed = await again.next("picker.approval")
    assert replayed["payload"] == shown["payload"]
    await again.send_frame(
        "picker.select", {"picker_id": replayed["payload"]["picker_id"], "value": "approve"}
    )
    assert (await call).success


async def test_each_listed_action_is_held(server: GatewayServer, app: IrisClient) -> None:
    for action, params in (
        ("MAKE_CALL", {"to": "+15559876"}),
        ("START_INTENT", {"action": "android.intent.action.VIEW", "data": "https://example.com"}),
    ):
        call = asyncio.ensure_future(server.grpc.execute(action, params))
        picker = await app.next("picker.approval")
        assert picker["payload"]["command"].startswith(action)
        await app.send_frame("picker.select", {"picker_id": picker["payload"]["picker_id"], "value": "deny"})
        assert (await call).error.startswith("DENIED")


async def test_unlisted_actions_are_not_held(server: GatewayServer, app: IrisClient) -> None:
    await server.grpc.ok("OPEN_APP", {"name": "Clock"})
    assert not [f for f in app.received if f["type"] == "picker.approval"]


async def test_with_nobody_paired_nothing_is_held(make_gateway: GatewayFactory) -> None:
    server = await make_gateway()
    await server.grpc.ok("SEND_MESSAGE", SMS)


async def test_approvals_off_holds_nothing(make_gateway: GatewayFactory) -> None:
    server = await make_gateway(approvals="off")
    app = await server.connect()
    await server.grpc.ok("SEND_MESSAGE", SMS)
    assert not [f for f in app.received if f["type"] == "picker.approval"]


async def test_approvals_always_holds_even_with_nobody_paired(
    make_gateway: GatewayFactory,
) -> None:
    server = await make_gateway(approvals="always")
    response = await server.grpc.execute("SEND_MESSAGE", SMS, timeout_ms=300)
    assert response.error.startswith("TIMEOUT")


async def test_the_approval_list_is_configurable(make_gateway: GatewayFactory) -> None:
    server = await make_gateway(approval_actions=frozenset({"PRESS_KEY"}))
    app = await server.connect()
    await server.grpc.ok("SEND_MESSAGE", SMS)
    call = asyncio.ensure_future(server.grpc.execute("PRESS_KEY", {"key": "home"}))
    picker = await app.next("picker.approval")
    await app.send_frame("picker.select", {"picker_id": picker["payload"]["picker_id"], "value": "approve"})
    assert (await call).success


async def test_deny_lists_run_first(make_gateway: GatewayFactory) -> None:
    server = await make_gateway(deny_actions=frozenset({"SEND_MESSAGE"}))
    app = await server.connect()
    response = await server.grpc.execute("SEND_MESSAGE", SMS)
    assert response.error.startswith("DENIED") and "deny list" in response.error
    await app.next("tool.end")
    assert not [f for f in app.received if f["type"] == "picker.approval"]


async def test_the_owners_own_slash_command_is_not_held(server: GatewayServer, app: IrisClient) -> None:
    await send_text(app, "/sms +15551234 on my way")
    assert "/sms done" in await system_message(app)
    assert not [f for f in app.received if f["type"] == "picker.approval"]


async def test_slash_approve_and_deny_answer_the_newest(server: GatewayServer, app: IrisClient) -> None:
    call = _held(server)
    await app.next("picker.approval")
    await send_text(app, "/approve")
    assert (await call).success
    assert (await system_message(app)).startswith("Approved: SEND_MESSAGE")
    call = _held(server, {"to": "+15550000", "body": "x"})
    picker = await app.next("picker.approval")
    await send_text(app, f"/deny {picker['payload']['picker_id']}")
    assert (await call).error.startswith("DENIED")
    assert (await system_message(app)).startswith("Denied")
    await send_text(app, "/approve")
    assert await system_message(app) == "No approval is pending."


@pytest.mark.parametrize(
    ("overrides", "problem"),
    [
        ({"approval_actions": frozenset({"FLY"})}, "FLY"),
    ],
)
async def test_bad_approval_settings_stop_the_server(
    make_gateway: GatewayFactory, overrides: dict[str, Any], problem: str
) -> None:
    with pytest.raises(ConfigError, match=problem):
        await make_gateway(**overrides)


def test_an_unknown_approvals_mode_is_found_when_loading(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"approvals \(flag\): must be one of always, paired, off"):
        load_settings({"data_dir": tmp_path, "approvals": "sometimes"})


def test_approvals_come_from_the_environment_and_the_config_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "config.toml").write_text('approvals = "always"\napproval_actions = ["SHELL"]\n')
    settings = load_settings({"data_dir": str(tmp_path)})
    assert (settings.approvals, settings.approval_actions) == ("always", frozenset({"SHELL"}))
    monkeypatch.setenv("PHONEUSE_APPROVALS", "off")
    monkeypatch.setenv("PHONEUSE_APPROVAL_ACTIONS", "SHELL,MAKE_CALL")
    settings = load_settings({"data_dir": str(tmp_path)})
    assert (settings.approvals, settings.approval_actions) == ("off", frozenset({"SHELL", "MAKE_CALL"}))


async def test_an_answer_applies_to_the_exact_call_it_showed(server: GatewayServer, app: IrisClient) -> None:
    first = _held(server, {"to": "+15550001", "body": "one"})
    shown_first = await app.next("picker.approval")
    second = _held(server, {"to": "+15550002", "body": "two"})
    shown_second = await app.next("picker.approval")
    assert shown_first["payload"]["picker_id"] != shown_second["payload"]["picker_id"]
    assert "+15550002" in shown_second["payload"]["command"]
    await app.send_frame(
        "picker.select", {"picker_id": shown_second["payload"]["picker_id"], "value": "approve"}
    )
    assert (await second).success
    assert not first.done()
    await app.send_frame("picker.select", {"picker_id": shown_first["payload"]["picker_id"], "value": "deny"})
    assert (await first).error.startswith("DENIED")
    holds = server.app.runtime.approvals.pending()
    assert holds == []


async def test_an_offline_device_finds_the_approval_in_its_outbox(
    server: GatewayServer, app: IrisClient
) -> None:
    token = server.pair().token
    away = await server.connect(token)
    cursor = (await away.request("sync", {"cursor": 0}))["payload"]["cursor"]
    await away.close()
    call = _held(server)
    picker = await app.next("picker.approval")
    back = await server.connect(token)
    await back.request("sync", {"cursor": cursor})
    synced = [f for f in back.received if f["type"] == "picker.approval"]
    assert synced and synced[0]["payload"] == picker["payload"]
    await back.send_frame("picker.select", {"picker_id": picker["payload"]["picker_id"], "value": "approve"})
    assert (await call).success
