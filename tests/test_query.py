"""Query: paging, limits, filters and the state that actions change."""

from __future__ import annotations

import grpc
import pytest

from phoneuse_runtime.rpc import protocol_pb2 as pb

from .conftest import AUTH, Client


async def _remember(client: Client, count: int) -> None:
    for i in range(count):
        await client.ok("REMEMBER", {"kind": "fact", "name": f"item {i:02d}", "tags": "bulk"})


async def test_limit_zero_means_twenty_and_paging_with_offset(client: Client) -> None:
    await _remember(client, 45)
    page1, total, more = await client.query(pb.MEMORY, {"tag": "bulk"})
    assert (len(page1), total, more) == (20, 45, True)
    page3, total, more = await client.query(pb.MEMORY, {"tag": "bulk", "offset": "40"}, limit=20)
    assert (len(page3), total, more) == (5, 45, False)
    seen: list[str] = []
    offset = 0
    while True:
        page, total, more = await client.query(pb.MEMORY, {"tag": "bulk", "offset": str(offset)}, limit=7)
        seen += [r["id"] for r in page]
        offset += len(page)
        if not more:
            break
    assert len(seen) == len(set(seen)) == 45
    past, total, more = await client.query(pb.MEMORY, {"tag": "bulk", "offset": "100"})
    assert (past, total, more) == ([], 45, False)


async def test_limit_is_clamped_to_the_maximum(client: Client) -> None:
    await _remember(client, 210)
    page, total, more = await client.query(pb.MEMORY, {}, limit=100_000)
    assert (len(page), total, more) == (200, 210, True)


@pytest.mark.parametrize(
    ("query_type", "filters", "limit", "fragment"),
    [
        (pb.QUERY_TYPE_UNSPECIFIED, {}, 0, "QUERY_TYPE_UNSPECIFIED"),
        (99, {}, 0, "not served"),
        (pb.CONTACTS, {"colour": "red"}, 0, "allowed: id, name, offset, phone, q"),
        (pb.CONTACTS, {"offset": "-1"}, 0, "offset"),
        (pb.CONTACTS, {"offset": "ten"}, 0, "offset"),
        (pb.CONTACTS, {}, -1, "limit"),
        (pb.APP_STATE, {"include_ui": "maybe"}, 0, "include_ui"),
    ],
)
async def test_bad_queries_are_invalid_argument(
    client: Client, query_type: int, filters: dict[str, str], limit: int, fragment: str
) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await client.stub.Query(
            pb.QueryRequest(query_type=query_type, filters=filters, limit=limit),  # type: ignore[arg-type]
            metadata=AUTH,
        )
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert fragment in (info.value.details() or "")


async def test_contacts_reflect_add_contact(client: Client) -> None:
    seed, total_before, _ = await client.query(pb.CONTACTS, {})
    assert total_before >= 5 and all({"id", "name", "phones", "emails"} <= set(c) for c in seed)
    added = await client.ok(
        "ADD_CONTACT", {"name": "Zoë Ünicode", "phone": "+49 30 1234567", "email": "zoe@example.org"}
    )
    found, total, _ = await client.query(pb.CONTACTS, {"name": "zoë"})
    assert total == 1
    assert found[0] == {
        "id": added["contact_id"],
        "name": "Zoë Ünicode",
        "phones": ["+49 30 1234567"],
        "emails": ["zoe@example.org"],
        "starred": False,
    }
    by_phone, _, _ = await client.query(pb.CONTACTS, {"phone": "1234567"})
    assert [c["name"] for c in by_phone] == ["Zoë Ünicode"]
    _, total_after, _ = await client.query(pb.CONTACTS, {})
    assert total_after == total_before + 1


async def test_app_state_follows_open_app(client: Client) -> None:
    await client.ok("OPEN_APP", {"package": "com.android.chrome"})
    states, _, _ = await client.query(pb.APP_STATE, {})
    assert states[0]["package"] == "com.android.chrome"
    assert states[0]["foreground"] is True and states[0]["activity"]
    assert states[0]["ui_fingerprint"]
    with_ui, _, _ = await client.query(pb.APP_STATE, {"package": "com.android.chrome", "include_ui": "true"})
    assert any(e["resource_id"] == "com.android.chrome:id/url_bar" for e in with_ui[0]["elements"])
    await client.ok("PRESS_KEY", {"key": "HOME"})
    after, _, _ = await client.query(pb.APP_STATE, {"package": "com.android.chrome"})
    assert after[0]["foreground"] is False and after[0]["running"] is True
    await client.ok("CLOSE_APP", {"package": "com.android.chrome"})
    closed, _, _ = await client.query(pb.APP_STATE, {"package": "com.android.chrome"})
    assert closed[0]["running"] is False
    missing, total, _ = await client.query(pb.APP_STATE, {"package": "com.not.installed"})
    assert (missing, total) == ([], 0)


async def test_memory_filters(client: Client) -> None:
    alice = await client.ok(
        "REMEMBER", {"kind": "person", "name": "Alice", "text": "likes green tea", "tags": '["friend"]'}
    )
    await client.ok(
        "REMEMBER",
        {"kind": "place", "name": "Tea house", "text": "Alice's favourite", "related_to": alice["id"]},
    )
    await client.ok("REMEMBER", {"kind": "fact", "name": "Wi-Fi", "text": "password in drawer"})
    people, _, _ = await client.query(pb.MEMORY, {"kind": "person"})
    assert [p["name"] for p in people] == ["Alice"]
    assert people[0]["tags"] == ["friend"]
    tea, _, _ = await client.query(pb.MEMORY, {"q": "TEA"})
    assert {t["name"] for t in tea} == {"Alice", "Tea house"}
    linked, _, _ = await client.query(pb.MEMORY, {"related_to": alice["id"]})
    assert [item["name"] for item in linked] == ["Tea house"]
    assert (await client.ok("FORGET", {"id": alice["id"]}))["forgotten"] is True
    assert await client.fail("FORGET", {"id": alice["id"]}) == "ELEMENT_NOT_FOUND"
    assert await client.fail("REMEMBER", {"name": "x", "related_to": "mem-999"}) == "INVALID_PARAMS"
    gone, total, _ = await client.query(pb.MEMORY, {"kind": "person"})
    assert total == 0 and gone == []
