"""The agent's work and the phone's events, as the app sees them."""

from __future__ import annotations

import asyncio

from ..conftest import GatewayFactory, GatewayServer, IrisClient


async def test_every_execute_is_a_tool_start_and_a_tool_end(server: GatewayServer, app: IrisClient) -> None:
    await server.grpc.ok("OPEN_APP", {"name": "Clock"})
    start = await app.next("tool.start")
    assert start["payload"]["name"] == "OPEN_APP"
    assert start["payload"]["args"] == {"name": "Clock"}
    assert start["payload"]["preview"] == "OPEN_APP name=Clock"
    end = await app.next("tool.end")
    assert end["payload"]["index"] == start["payload"]["index"]
    assert end["payload"]["name"] == "OPEN_APP"
    assert end["payload"]["ok"] is True
    assert end["payload"]["duration"] >= 0
    # What the phone did, from the result: the app it opened.
    assert '"package":"com.google.android.deskclock"' in end["payload"]["output_preview"]


async def test_a_long_result_is_previewed_with_its_long_values_cut(
    server: GatewayServer, app: IrisClient
) -> None:
    await server.grpc.ok("SCREENSHOT")
    end = await app.next("tool.end")
    preview = end["payload"]["output_preview"]
    assert end["payload"]["ok"] is True and '"format":"jpeg"' in preview
    assert '"image_base64":"' in preview and "…" in preview and len(preview) <= 512


async def test_a_refused_execute_shows_as_a_failed_tool(server: GatewayServer, app: IrisClient) -> None:
    assert await server.grpc.fail("OPEN_APP", {"nonsense": "1"}) == "INVALID_PARAMS"
    start = await app.next("tool.start")
    end = await app.next("tool.end")
    assert start["payload"]["index"] == end["payload"]["index"]
    assert end["payload"]["ok"] is False
    assert end["payload"]["output_preview"].startswith("INVALID_PARAMS")


async def test_tool_indexes_are_distinct_across_calls(server: GatewayServer, app: IrisClient) -> None:
    await asyncio.gather(*(server.grpc.ok("DUMP_UI") for _ in range(5)))
    starts = [(await app.next("tool.start"))["payload"]["index"] for _ in range(5)]
    ends = [(await app.next("tool.end"))["payload"]["index"] for _ in range(5)]
    assert len(set(starts)) == 5 and set(starts) == set(ends)


async def test_no_tool_frames_before_any_device_is_paired(make_gateway: GatewayFactory) -> None:
    server = await make_gateway()
    # Nobody paired: the gateway does not listen, so the runtime builds no task events for it.
    assert not server.app.runtime.bus.interested("TASK_STARTED")
    await server.grpc.ok("DUMP_UI")
    app = await server.connect()
    assert server.app.runtime.bus.interested("TASK_STARTED")
    await server.grpc.ok("PRESS_KEY", {"key": "home"})
    assert (await app.next("tool.start"))["payload"]["name"] == "PRESS_KEY"


async def test_offline_devices_get_tool_ends_on_sync(server: GatewayServer, app: IrisClient) -> None:
    token = server.pair().token
    first = await server.connect(token)
    cursor = (await first.request("sync", {"cursor": 0}))["payload"]["cursor"]
    await first.close()
    await server.grpc.ok("DUMP_UI")
    await app.next("tool.end")
    again = await server.connect(token)
    await again.request("sync", {"cursor": cursor})
    assert [f["payload"]["name"] for f in again.received if f["type"] == "tool.end"] == ["DUMP_UI"]


async def test_phone_events_are_generic_notifications(server: GatewayServer, app: IrisClient) -> None:
    await server.grpc.ok("SIM_RECEIVE_SMS", {"from": "+15550001", "body": "dinner at 8?"})
    sms = await app.next_where(lambda f: f["type"] == "notification" and "+15550001" in f["payload"]["title"])
    assert sms["payload"]["kind"] == "generic"
    assert sms["payload"]["body"] == "dinner at 8?"
    await server.grpc.ok(
        "SIM_POST_NOTIFICATION", {"package": "com.example", "title": "Sale", "text": "50% off"}
    )
    posted = await app.next_where(lambda f: f["type"] == "notification" and f["payload"]["title"] == "Sale")
    assert posted["payload"]["body"] == "50% off"
    await server.grpc.ok("SIM_INCOMING_CALL", {"from": "+15550002"})
    call = await app.next_where(
        lambda f: f["type"] == "notification" and f["payload"]["title"] == "Incoming call"
    )
    assert call["payload"]["body"] == "+15550002"
    assert call["payload"]["kind"] == "generic"


async def test_a_lost_phone_is_degraded_until_it_is_back(server: GatewayServer, app: IrisClient) -> None:
    result = await server.grpc.ok("SIM_SET_CONNECTED", {"connected": "false", "reason": "cable pulled"})
    assert result["connected"] is False
    assert (await app.next("status"))["payload"] == {"state": "degraded"}
    lost = await app.next("notification")
    assert lost["payload"]["kind"] == "generic" and lost["payload"]["body"] == "cable pulled"
    assert await server.grpc.fail("DUMP_UI") == "DEVICE_UNAVAILABLE"
    # A device that connects meanwhile is told at once.
    late = await server.connect()
    assert (await late.next("status"))["payload"] == {"state": "degraded"}
    # Setting the state it is in changes nothing.
    assert (await server.grpc.ok("SIM_SET_CONNECTED", {"connected": "false"}))["connected"] is False
    back = await server.grpc.ok("SIM_SET_CONNECTED", {"connected": "true"})
    assert back["connected"] is True
    assert (await app.next("status"))["payload"] == {"state": "online"}
    assert (await app.next("notification"))["payload"]["title"] == "The phone is back"
    await server.grpc.ok("DUMP_UI")
    assert [f["payload"]["state"] for f in app.received if f["type"] == "status"] == ["degraded", "online"]


async def test_sim_set_connected_refuses_bad_params(server: GatewayServer) -> None:
    assert await server.grpc.fail("SIM_SET_CONNECTED", {"connected": "perhaps"}) == "INVALID_PARAMS"
    assert await server.grpc.fail("SIM_SET_CONNECTED", {}) == "INVALID_PARAMS"
    assert (
        await server.grpc.fail("SIM_SET_CONNECTED", {"connected": "false", "reason": ""}) == "INVALID_PARAMS"
    )
    assert server.app.runtime.device.link.up
