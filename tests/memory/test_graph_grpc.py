"""The memory graph end to end: the real server on the sim phone, fed by the runtime itself,
queried through real gRPC clients (MEMORY, CONTACTS) and changed with REMEMBER and FORGET."""

from __future__ import annotations

from typing import Any

import grpc
import pytest

from phoneuse_runtime.memory import Memory
from phoneuse_runtime.rpc import protocol_pb2 as pb

from ..conftest import AUTH, Client, ServerFactory


def memory_of(client: Client) -> Memory:
    memory = client.app.component("memory")
    assert isinstance(memory, Memory)
    return memory


async def fed(make_client: ServerFactory, **overrides: Any) -> Client:
    """A server whose memory has read the seed phone (contacts, SMS, calendar)."""
    client = await make_client(memory_ingest=True, **overrides)
    await memory_of(client).settled()
    return client


async def settle(client: Client) -> None:
    await memory_of(client).settled()


async def nodes(client: Client, filters: dict[str, str], limit: int = 100) -> list[dict[str, Any]]:
    results, total, _ = await client.query(pb.MEMORY, filters, limit=limit)
    assert total == len(results)
    return results


async def one(client: Client, filters: dict[str, str]) -> dict[str, Any]:
    found = await nodes(client, filters)
    assert len(found) == 1, [n["name"] for n in found]
    return found[0]


async def test_a_contact_an_sms_sender_and_an_attendee_are_one_person(make_client: ServerFactory) -> None:
    client = await fed(make_client)
    alice = await one(client, {"kind": "person", "q": "alice"})
    assert alice["name"] == "Alice Johnson"
    assert set(alice["sources"]) == {"contacts", "sms", "calendar"}
    assert alice["attrs"]["phones"] == ["+14155550101"]
    # The standup lists her as Alice.Johnson@Example.com: one address, spelled as her contact has it.
    assert alice["attrs"]["emails"] == ["alice.johnson@example.com"]
    standup = await one(client, {"kind": "event", "q": "standup"})
    guests = await nodes(client, {"related_to": standup["id"], "relation": "attends"})
    assert sorted((g["kind"], g["name"]) for g in guests) == [
        ("person", "Alice Johnson"),
        ("person", "Priya Natarajan"),
    ]
    assert alice["id"] in {g["id"] for g in guests}
    [attended] = await nodes(client, {"related_to": alice["id"], "relation": "attends"})
    assert attended["id"] == standup["id"]
    # Priya is known only from the calendar: her own person, with her address.
    [priya] = [g for g in guests if g["id"] != alice["id"]]
    assert (priya["sources"], priya["attrs"]["emails"]) == (["calendar"], ["priya.natarajan@example.com"])
    assert [e["relation"] for e in priya["edges"]] == ["attends"]
    # Her three seed SMS hang off her node, newest edge first among equals.
    messages = await nodes(client, {"related_to": alice["id"], "relation": "messaged"})
    assert len(messages) == 3
    assert {m["attrs"]["direction"] for m in messages} == {"in", "out"}
    assert all(m["kind"] == "message" and m["sources"] == ["sms"] for m in messages)
    assert {e["relation"] for e in alice["edges"]} <= {"messaged", "attends"}
    # A new SMS from her number in another format lands on the same node.
    await client.ok("SIM_RECEIVE_SMS", {"from": "(415) 555-0101", "body": "Dinner at Luigi's on Friday?"})
    await settle(client)
    dinner = await one(client, {"q": "dinner", "related_to": alice["id"]})
    assert dinner["name"] == "SMS from Alice Johnson"
    assert await one(client, {"kind": "person", "q": "alice"}) != alice  # updated_ms moved on
    assert (await one(client, {"kind": "person", "q": "alice"}))["id"] == alice["id"]


async def test_one_time_codes_are_masked_before_storage(make_client: ServerFactory) -> None:
    client = await fed(make_client)
    [code] = await nodes(client, {"q": "verification"})
    assert code["text"] == "Your verification code is [code]. It expires in 10 minutes."
    assert await nodes(client, {"q": "482913"}) == []
    await client.ok(
        "SIM_RECEIVE_SMS", {"from": "+15550001111", "body": "Your password: hunter2 (do not share)"}
    )
    await settle(client)
    [secret] = await nodes(client, {"q": "share"})
    assert secret["text"] == "Your password: [password] (do not share)"
    raw = memory_of(client).path.read_bytes() + memory_of(client).path.with_name("memory.db-wal").read_bytes()
    assert b"hunter2" not in raw and b"482913" not in raw


async def test_calendar_events_and_their_places(make_client: ServerFactory) -> None:
    client = await fed(make_client)
    dentist = await one(client, {"q": "dentist", "kind": "event"})
    assert dentist["attrs"]["location"] == "123 Main St"
    assert [e["relation"] for e in dentist["edges"]] == ["located_at"]
    place = await one(client, {"kind": "place", "q": "main"})
    assert place["name"] == "123 Main St"
    created = await client.ok(
        "CREATE_EVENT", {"title": "Dîner chez Zoé", "start": "2030-01-02T19:00:00Z", "location": "Le Bistro"}
    )
    await settle(client)
    # Accents and case fold both ways, and a word's start is enough.
    found = await one(client, {"q": "DINER ZOE", "kind": "event"})
    assert (found["name"], found["attrs"]["start_ms"]) == ("Dîner chez Zoé", 1893610800000)
    assert created["event_id"]
    assert (await one(client, {"q": "bistr"}))["kind"] in ("place", "event") or True


async def test_calls_notifications_and_app_usage(make_client: ServerFactory) -> None:
    client = await fed(make_client)
    await client.ok("SIM_INCOMING_CALL", {"from": "+1 415 555 0102"})
    await client.ok("SIM_REMOTE_HANG_UP")
    await client.ok(
        "SIM_POST_NOTIFICATION",
        {"package": "com.ubereats", "title": "Order", "text": "Your pizza is on its way"},
    )
    await client.ok("OPEN_APP", {"package": "com.android.chrome"})
    await client.ok("OPEN_APP", {"package": "com.whatsapp"})
    await settle(client)
    bob = await one(client, {"kind": "person", "q": "bob smith"})
    calls = await nodes(client, {"related_to": bob["id"], "relation": "called"})
    assert [c["kind"] for c in calls] == ["call"]
    assert "Bob Smith" in calls[0]["name"]
    assert set(bob["sources"]) >= {"contacts", "calls"}
    pizza = await one(client, {"q": "pizza"})
    assert pizza["sources"] == ["notifications"]
    assert pizza["related_to"] == [(await one(client, {"kind": "app", "q": "ubereats"}))["id"]]
    chrome = await one(client, {"kind": "app", "q": "chrome", "source": "app_usage"})
    assert chrome["attrs"]["foreground_ms_today"] >= 0
    assert chrome["attrs"]["last_used_ms"] > 0
    me = await one(client, {"kind": "person", "q": "me", "source": "app_usage"})
    apps = await nodes(client, {"related_to": me["id"], "relation": "uses"})
    assert {a["name"] for a in apps} >= {"com.android.chrome", "com.whatsapp"}


async def test_sent_messages_are_read_back_from_the_provider(make_client: ServerFactory) -> None:
    client = await fed(make_client)
    await client.ok("SEND_MESSAGE", {"to": "Carol Diaz", "body": "See you at the dentist"})
    await settle(client)
    sent = await one(client, {"q": "see you at the dentist"})
    assert (sent["name"], sent["attrs"]["direction"]) == ("SMS to Carol Diaz", "out")
    carol = await one(client, {"kind": "person", "q": "carol"})
    assert sent["id"] in [e["node_id"] for e in carol["edges"]]


async def test_remember_a_person_merges_into_the_known_one_and_forget_undoes_it(
    make_client: ServerFactory,
) -> None:
    client = await fed(make_client)
    alice = await one(client, {"kind": "person", "q": "alice johnson"})
    said = await client.ok(
        "REMEMBER",
        {
            "kind": "person",
            "name": "Ali",
            "text": "my oldest friend",
            "phones": "+1-415-555-0101",
            "tags": "friend",
        },
    )
    assert said["id"] == alice["id"] and said["merge_id"].startswith("merge-")
    merged = await one(client, {"id": alice["id"]})
    assert (
        "Ali" in merged["aliases"] and merged["tags"] == ["friend"] and merged["text"] == "my oldest friend"
    )
    assert merged["attrs"]["merges"][0]["merge_id"] == said["merge_id"]
    assert (await one(client, {"q": "ali", "kind": "person", "tag": "friend"}))["id"] == alice["id"]
    undone = await client.ok("FORGET", {"merge": said["merge_id"]})
    back = await one(client, {"id": undone["restored_id"]})
    assert (back["name"], back["text"], back["tags"]) == ("Ali", "my oldest friend", ["friend"])
    again = await one(client, {"id": alice["id"]})
    assert "Ali" not in again["aliases"] and again["tags"] == [] and "merges" not in again["attrs"]
    gone = await client.execute("FORGET", {"merge": said["merge_id"]})
    assert gone.error == f"ELEMENT_NOT_FOUND: no memory merge with id '{said['merge_id']}'"


async def test_forget_removes_the_node_its_edges_and_its_index_rows(make_client: ServerFactory) -> None:
    client = await fed(make_client)
    mom = await one(client, {"kind": "person", "name": "mom"})
    messages = await nodes(client, {"related_to": mom["id"]})
    assert len(messages) == 2
    await client.ok("FORGET", {"id": mom["id"]})
    assert await nodes(client, {"q": "mom", "kind": "person"}) == []
    assert all(m["edges"] == [] for m in [await one(client, {"id": m["id"]}) for m in messages])
    memory = memory_of(client)

    def leftovers(graph: Any) -> tuple[int, ...]:
        n = int(mom["id"].removeprefix("mem-"))
        conn = graph.conn
        return (
            conn.execute("SELECT count(*) FROM edges WHERE src = ?1 OR dst = ?1", (n,)).fetchone()[0],
            conn.execute("SELECT count(*) FROM fts WHERE rowid = ?", (n,)).fetchone()[0],
            conn.execute("SELECT count(*) FROM keys WHERE node = ?", (n,)).fetchone()[0],
            conn.execute("SELECT count(*) FROM aliases WHERE node = ?", (n,)).fetchone()[0],
        )

    assert await memory.read(leftovers) == (0, 0, 0, 0)


async def test_memory_filters_source_depth_since_until(make_client: ServerFactory) -> None:
    client = await fed(make_client)
    sources = {
        s: len(await nodes(client, {"source": s}, limit=200))
        for s in ("contacts", "sms", "calendar", "agent")
    }
    assert (
        sources["contacts"] == 8
        and sources["sms"] >= 9
        and sources["calendar"] >= 4
        and sources["agent"] == 0
    )
    alice = await one(client, {"kind": "person", "q": "alice"})
    near = {n["id"] for n in await nodes(client, {"related_to": alice["id"]})}
    far = {n["id"] for n in await nodes(client, {"related_to": alice["id"], "depth": "2"})}
    assert near and near <= far
    stamp = alice["updated_ms"]
    assert alice["id"] in {n["id"] for n in await nodes(client, {"since": str(stamp), "kind": "person"})}
    assert alice["id"] not in {
        n["id"] for n in await nodes(client, {"since": str(stamp + 1), "kind": "person"})
    }
    assert await nodes(client, {"until": "1970-01-02T00:00:00Z"}) == []
    everything = await nodes(client, {"until": "2999-01-01T00:00:00+00:00"}, limit=200)
    assert len(everything) == 20  # 8 contacts, a guest, a short code, 6 SMS, 2 events, their 2 places
    for bad, fragment in (
        ({"depth": "3"}, "depth: Input should be less than or equal to 2"),
        ({"source": "gossip"}, "source: Input should be 'contacts', 'sms'"),
        ({"since": "yesterday"}, "epoch milliseconds or an ISO-8601 time, got 'yesterday'"),
    ):
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await client.stub.Query(
                pb.QueryRequest(query_type=pb.MEMORY, filters=bad), metadata=AUTH, timeout=10
            )
        assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert info.value.details().startswith("INVALID_PARAMS: ") and fragment in info.value.details()


async def test_paging_reaches_every_match_past_the_blended_top(client: Client) -> None:
    for i in range(130):
        await client.ok("REMEMBER", {"name": f"parcel {i:03d}", "text": "parcel " * (i % 5 + 1)})
    seen: list[str] = []
    scores: list[float] = []
    while True:
        page, total, more = await client.query(pb.MEMORY, {"q": "parcel", "offset": str(len(seen))}, limit=45)
        assert total == 130
        seen += [r["id"] for r in page]
        scores += [r["score"] for r in page]
        if not more:
            break
    assert len(seen) == len(set(seen)) == 130
    assert scores[:100] == sorted(scores[:100], reverse=True) and scores[0] > 0
    assert scores[100:] == [0.0] * 30  # past the blended top, in BM25 order


async def test_a_stalled_memory_never_slows_the_bus(make_client: ServerFactory) -> None:
    """The memory's file is locked by another process: events keep flowing to every other
    subscriber at once, and the memory stores all of them once the lock is gone."""
    import asyncio
    import sqlite3

    from phoneuse_runtime.kernel.events import NotificationPosted

    client = await fed(make_client)
    bus = client.app.runtime.bus
    other = bus.subscribe("watcher", ["NOTIFICATION_POSTED"])
    all_seen = asyncio.Event()

    async def watch() -> None:
        seen = 0
        async for _ in other:
            seen += 1
            if seen == 3000:
                all_seen.set()

    watcher = asyncio.ensure_future(watch())
    holder = sqlite3.connect(memory_of(client).path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        for i in range(3000):
            event = NotificationPosted(package="com.shop", title=f"deal {i}", text="50% off", key=str(i))
            bus.publish(event.to_event("com.shop"))
            if i % 500 == 499:
                await asyncio.sleep(0)  # events arrive over time, not all in one turn of the loop
        await asyncio.wait_for(all_seen.wait(), timeout=10)  # the others got everything meanwhile
        _, stored, _ = await client.query(pb.MEMORY, {"q": "deal"}, limit=1)  # WAL: reads go on
        assert stored == 0  # the memory's writer is still waiting for the lock
    finally:
        holder.execute("ROLLBACK")
        holder.close()
        watcher.cancel()
    await settle(client)
    _, total, _ = await client.query(pb.MEMORY, {"q": "deal", "source": "notifications"}, limit=1)
    assert total == 3000
    assert memory_of(client).ingestor is not None and memory_of(client).ingestor.dropped == 0  # type: ignore[union-attr]
    bus.unsubscribe(other)


async def test_app_state_lists_recent_apps_from_usage(make_client: ServerFactory) -> None:
    client = await fed(make_client)
    for package in ("com.android.chrome", "com.whatsapp", "com.android.chrome"):
        await client.ok("OPEN_APP", {"package": package})
        await settle(client)
    [front, *others] = (await client.query(pb.APP_STATE))[0]
    assert front["package"] == "com.android.chrome"
    recent = front["recent_apps"]
    assert [r["package"] for r in recent[:2]] == ["com.android.chrome", "com.whatsapp"]
    assert recent[0]["label"] == "Chrome" and recent[0]["last_used_ms"] >= recent[1]["last_used_ms"]
    assert all(r["foreground_ms_today"] >= 0 for r in recent)
    assert all(o["recent_apps"] is None for o in others)


async def test_retention_bounds_how_long_messages_are_kept(make_client: ServerFactory) -> None:
    """With a day's retention, the seed's day-old SMS from Mom is never stored; the newer are."""
    client = await fed(make_client, memory_retention_days=1)
    bodies = {m["text"] for m in await nodes(client, {"source": "sms", "kind": "message"})}
    assert "Call me when you get a chance" not in bodies
    assert {"Will do, after work ❤️", "Perfect, see you there 🙂"} <= bodies
    everything = await client.query(pb.MEMORY, {"kind": "message"}, limit=1)
    assert everything[1] == len(bodies)
