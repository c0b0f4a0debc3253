"""Delivery you can trust: the per-device outbox, sync, restarts, retention and slow apps."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from phoneuse_runtime.gateway.session import CLOSE_TOO_SLOW, WRITE_AT_ONCE_BYTES

from .conftest import GatewayFactory, GatewayServer, IrisClient


def note(i: int, body: str = "") -> dict[str, object]:
    return {"kind": "generic", "title": f"note {i}", "body": body, "ts": i}


async def titles_after_sync(client: IrisClient, cursor: int) -> tuple[list[str], dict[str, Any]]:
    """Syncs from `cursor`; the replayed notifications' titles, and the sync.done frame."""
    done = await client.request("sync", {"cursor": cursor})
    assert done["type"] == "sync.done", done
    titles = [f["payload"]["title"] for f in client.frames if f["type"] == "notification"]
    client.frames.clear()
    return titles, done


async def test_an_offline_device_gets_never_dropped_frames_on_sync_in_order(
    gateway_server: GatewayServer,
) -> None:
    token = gateway_server.pair().token
    first = await gateway_server.connect(token)
    start = (await first.request("sync", {"cursor": 0}))["payload"]["cursor"]
    await first.close()
    for i in range(5):
        await gateway_server.gateway.broadcast("notification", note(i))
    await gateway_server.gateway.broadcast("typing", {"on": True})  # droppable: not kept
    client = await gateway_server.open()
    ack = await client.hello(token)
    assert ack["payload"]["sync_cursor"] > start
    assert not [f for f in client.frames if f["type"] == "notification"]  # nothing before sync
    titles, done = await titles_after_sync(client, start)
    assert titles == [f"note {i}" for i in range(5)]
    assert done["payload"]["cursor"] == ack["payload"]["sync_cursor"]
    assert "reset" not in done["payload"]
    again, _ = await titles_after_sync(client, done["payload"]["cursor"])
    assert again == []
    assert not any(f["type"] == "typing" for f in client.received)


async def test_a_connected_device_gets_broadcasts_live_and_the_excluded_one_does_not(
    gateway_server: GatewayServer,
) -> None:
    a = await gateway_server.connect()
    b = await gateway_server.connect()
    session_a = gateway_server.gateway.sessions[next(iter(gateway_server.gateway.sessions))]
    await gateway_server.gateway.broadcast("notification", note(1), exclude=session_a)
    await gateway_server.gateway.broadcast("typing", {"on": True}, chat_id="android:default")
    assert (await b.next("notification"))["payload"]["title"] == "note 1"
    assert (await b.next("typing"))["chat_id"] == "android:default"
    assert (await a.next("typing"))["payload"] == {"on": True}
    titles, _ = await titles_after_sync(a, 0)
    assert titles == []  # the excluded device's outbox did not get it either


async def test_a_disconnect_mid_stream_then_sync_loses_nothing(gateway_server: GatewayServer) -> None:
    token = gateway_server.pair().token
    client = await gateway_server.connect(token)
    cursor = (await client.request("sync", {"cursor": 0}))["payload"]["cursor"]
    for i in range(3):
        await gateway_server.gateway.broadcast("notification", note(i))
    await client.next_where(lambda f: f["type"] == "notification" and f["payload"]["title"] == "note 0")
    await client.close()
    for i in range(3, 6):
        await gateway_server.gateway.broadcast("notification", note(i))
    again = await gateway_server.connect(token)
    titles, _ = await titles_after_sync(again, cursor)
    assert titles == [f"note {i}" for i in range(6)]  # what came live is replayed too: idempotent


async def test_the_outbox_survives_a_restart(make_gateway: GatewayFactory) -> None:
    first = await make_gateway()
    token = first.pair().token
    for i in range(3):
        await first.gateway.broadcast("notification", note(i))
    data_dir = first.data_dir
    await first.stop()
    second = await make_gateway(data_dir=data_dir)
    client = await second.connect(token)
    titles, done = await titles_after_sync(client, 0)
    assert titles == ["note 0", "note 1", "note 2"]
    await second.gateway.broadcast("notification", note(3))
    assert (await client.next("notification"))["payload"]["title"] == "note 3"  # live
    more, _ = await titles_after_sync(client, done["payload"]["cursor"])  # and kept
    assert more == ["note 3"]


async def test_a_cursor_older_than_retention_is_answered_with_a_reset(make_gateway: GatewayFactory) -> None:
    server = await make_gateway(gateway_outbox_max_frames=3)
    token = server.pair().token
    for i in range(6):  # trimmed to the newest 3 every 3 appends
        await server.gateway.broadcast("notification", note(i))
    client = await server.connect(token)
    titles, done = await titles_after_sync(client, 0)
    assert titles == []
    assert done["payload"]["reset"] is True
    newest = done["payload"]["cursor"]
    assert client.received[0]["payload"]["sync_cursor"] == newest
    # From the oldest cursor still answerable, the replay has no holes.
    titles, done = await titles_after_sync(client, newest - 3)
    assert titles == ["note 3", "note 4", "note 5"]


async def test_frames_older_than_the_retention_time_are_pruned_at_start(make_gateway: GatewayFactory) -> None:
    first = await make_gateway()
    token = first.pair().token
    await first.gateway.broadcast("notification", note(0))
    data_dir = first.data_dir
    await first.stop()
    second = await make_gateway(data_dir=data_dir, gateway_outbox_retention_s=0.001)
    client = await second.connect(token)
    titles, done = await titles_after_sync(client, 0)
    assert (titles, done["payload"]["reset"]) == ([], True)


async def test_a_cursor_this_server_never_gave_is_a_reset_and_a_negative_one_unsupported(
    iris: IrisClient,
) -> None:
    titles, done = await titles_after_sync(iris, 10**9)
    assert titles == []
    assert done["payload"]["reset"] is True
    error = await iris.request("sync", {"cursor": -1})
    assert error["payload"]["code"] == "unsupported"


async def test_updates_waiting_for_a_busy_connection_coalesce_to_the_latest(
    gateway_server: GatewayServer,
) -> None:
    token = gateway_server.pair().token
    slow = await gateway_server.slow(token)
    gateway = gateway_server.gateway
    session = gateway.sessions[next(iter(gateway.sessions))]
    # An app that reads nothing: once the kernel's buffers and the transport's fill up, the
    # frames for it wait in its queue.
    filler = 0
    while session.ws.transport.get_write_buffer_size() <= WRITE_AT_ONCE_BYTES:
        filler += 1
        await gateway.broadcast(
            "message.update", {"message_id": "m0", "text": f"m0 {filler} " + "x" * 50_000}
        )
    # Each update waiting in the queue replaces the one waiting for the same message; another
    # message's and a tool's are kept apart, and all come before the stop that follows them.
    for i in range(100):
        await gateway.broadcast("message.update", {"message_id": "m1", "text": f"m1 {i}"})
        await gateway.broadcast("message.update", {"message_id": "m2", "text": f"m2 {i}"})
        await gateway.broadcast("tool.progress", {"index": 0, "name": "TAP", "note": f"t {i}"})
    await gateway.broadcast("message.stop", {"message_id": "m1", "final_text": "m1 99"})
    await slow.read_until(lambda f: f["type"] == "message.stop", timeout=30)
    rest = [f for f in slow.received if f["type"] != "hello.ack" and f["payload"].get("message_id") != "m0"]
    texts = [f["payload"].get("text") or f["payload"].get("note") for f in rest]
    assert texts == ["m1 99", "m2 99", "t 99", None]
    assert rest[-1]["type"] == "message.stop"


async def test_a_slow_app_gets_updates_in_order_and_the_last_one_before_the_stop(
    gateway_server: GatewayServer,
) -> None:
    token = gateway_server.pair().token
    slow = await gateway_server.slow(token)
    text = ""
    sent = 200  # 20 MB: more than the kernel buffers for a socket nobody reads
    for i in range(sent):
        text = f"{i:04d} " + "x" * 100_000
        await gateway_server.gateway.broadcast("message.update", {"message_id": "m1", "text": text})
        await asyncio.sleep(0)
    await gateway_server.gateway.broadcast("message.stop", {"message_id": "m1", "final_text": text})
    await slow.read_until(lambda f: f["type"] == "message.stop", timeout=30)
    stop = slow.received[-1]
    updates = [f for f in slow.received if f["type"] == "message.update"]
    assert 0 < len(updates) < sent  # coalesced
    assert updates[-1]["payload"]["text"] == text  # the trailing update, before the stop
    assert slow.received.index(updates[-1]) < slow.received.index(stop)
    numbers = [int(u["payload"]["text"][:4]) for u in updates]
    assert numbers == sorted(set(numbers))  # monotonic, none twice


async def test_an_app_that_cannot_keep_up_is_closed_and_loses_nothing(make_gateway: GatewayFactory) -> None:
    # (an outbox that holds the 10 MB: the default keeps 8 MiB a device)
    server = await make_gateway(gateway_send_queue_bytes=64 * 1024, gateway_outbox_max_bytes=32 * 1024 * 1024)
    token = server.pair().token
    slow = await server.slow(token)
    cursor = slow.received[0]["payload"]["sync_cursor"]
    for i in range(1000):  # 10 MB: more than the kernel buffers, and the queue's 64 KiB
        await server.gateway.broadcast("notification", note(i, "y" * 10_000))
    await slow.read_until(lambda f: False, timeout=30)
    assert slow.close_code == CLOSE_TOO_SLOW
    again = await server.connect(token)
    titles, _ = await titles_after_sync(again, cursor)
    assert titles == [f"note {i}" for i in range(1000)]


async def test_a_store_failure_is_internal_and_the_connection_stays_open(
    gateway_server: GatewayServer, caplog: pytest.LogCaptureFixture
) -> None:
    import sqlite3

    from phoneuse_runtime.gateway.db import db_path

    client = await gateway_server.connect()
    conn = sqlite3.connect(db_path(gateway_server.data_dir))
    conn.execute("DROP TABLE outbox")  # the store breaks under the running server
    conn.close()
    error = await client.request("sync", {"cursor": 0})
    assert error["type"] == "error"
    assert error["payload"]["code"] == "internal"
    assert "sqlite" not in error["payload"]["message"].lower()  # no internals to the app
    assert "the sync handler failed" in caplog.text
    assert (await client.request("ping"))["type"] == "pong"
