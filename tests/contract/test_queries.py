"""Query: paging, limits, filters, and the state that actions change."""

from __future__ import annotations

import pytest

from .frontend import FrontEnd, names_tools, ok, refused, wire_text_only


async def remember(frontend: FrontEnd, count: int) -> None:
    for i in range(count):
        await ok(frontend, "REMEMBER", {"kind": "fact", "name": f"item {i:02d}", "tags": "bulk"})


async def test_limit_zero_means_twenty_and_paging_with_offset(frontend: FrontEnd) -> None:
    await remember(frontend, 45)
    page1 = await frontend.query("MEMORY", {"tag": "bulk"})
    assert (len(page1.results), page1.total_count, page1.has_more) == (20, 45, True)
    page3 = await frontend.query("MEMORY", {"tag": "bulk", "offset": "40"}, limit=20)
    assert (len(page3.results), page3.total_count, page3.has_more) == (5, 45, False)
    seen: list[str] = []
    offset = 0
    while True:
        page = await frontend.query("MEMORY", {"tag": "bulk", "offset": str(offset)}, limit=7)
        assert page.total_count == 45
        seen += [r["id"] for r in page.results]
        offset += len(page.results)
        if not page.has_more:
            break
    assert len(seen) == len(set(seen)) == 45
    past = await frontend.query("MEMORY", {"tag": "bulk", "offset": "100"})
    assert (past.results, past.total_count, past.has_more) == ([], 45, False)


async def test_limit_is_clamped_to_the_maximum(frontend: FrontEnd) -> None:
    await remember(frontend, 210)
    page = await frontend.query("MEMORY", {}, limit=100_000)
    assert (len(page.results), page.total_count, page.has_more) == (200, 210, True)


@pytest.mark.parametrize(
    ("query_type", "filters", "limit", "error"),
    [
        (
            "",
            {},
            0,
            "BAD_REQUEST: query_type QUERY_TYPE_UNSPECIFIED is not served; use APP_STATE, CONTACTS, MEMORY",
        ),
        (
            "CONTACTS",
            {"colour": "red"},
            0,
            "INVALID_PARAMS: unknown param(s) colour; allowed: email, id, name, offset, phone, q",
        ),
        (
            "CONTACTS",
            {"offset": "-1"},
            0,
            "BAD_REQUEST: filter offset must be a non-negative integer of at most 9 digits, got '-1'",
        ),
        (
            "CONTACTS",
            {"offset": "ten"},
            0,
            "BAD_REQUEST: filter offset must be a non-negative integer of at most 9 digits, got 'ten'",
        ),
        ("CONTACTS", {}, -1, "BAD_REQUEST: limit must be >= 0, got -1"),
        (
            "APP_STATE",
            {"include_ui": "maybe"},
            0,
            "INVALID_PARAMS: include_ui: Input should be a valid boolean, unable to interpret input "
            "(allowed: include_ui, installed, offset, package, ui_format)",
        ),
    ],
    ids=["unspecified", "unknown-filter", "negative-offset", "bad-offset", "negative-limit", "bad-bool"],
)
async def test_bad_queries_are_refused(
    frontend: FrontEnd, query_type: str, filters: dict[str, str], limit: int, error: str
) -> None:
    if not query_type:
        names_tools(frontend)
    wire_text_only(frontend, query_type, filters, query=True)
    refusal = await refused(frontend.query(query_type, filters, limit))
    assert refusal.error == error


async def test_contacts_reflect_add_contact(frontend: FrontEnd) -> None:
    before = await frontend.query("CONTACTS")
    assert before.total_count >= 5
    assert all({"id", "name", "phones", "emails"} <= set(c) for c in before.results)
    added = await ok(
        frontend,
        "ADD_CONTACT",
        {"name": "Zoë Ünicode", "phone": "+49 30 1234567", "email": "zoe@example.org"},
    )
    found = await frontend.query("CONTACTS", {"name": "zoë"})
    assert found.total_count == 1
    assert found.results[0] == {
        "id": added["contact_id"],
        "name": "Zoë Ünicode",
        "phones": ["+49 30 1234567"],
        "phones_e164": ["+49301234567"],
        "emails": ["zoe@example.org"],
        "starred": False,
        "sources": ["contacts"],
        "last_contacted": None,
        "memory_id": None,
        "relevance": 2.0,  # the start of the name
    }
    by_phone = await frontend.query("CONTACTS", {"phone": "1234567"})
    assert [c["name"] for c in by_phone.results] == ["Zoë Ünicode"]
    assert (await frontend.query("CONTACTS")).total_count == before.total_count + 1


async def test_app_state_follows_open_app(frontend: FrontEnd) -> None:
    await ok(frontend, "OPEN_APP", {"package": "com.android.chrome"})
    [state, *_] = (await frontend.query("APP_STATE")).results
    assert state["package"] == "com.android.chrome"
    assert state["foreground"] is True and state["activity"]
    assert state["ui_fingerprint"]
    [with_ui] = (
        await frontend.query("APP_STATE", {"package": "com.android.chrome", "include_ui": "true"})
    ).results
    assert "#url_bar" in with_ui["screen"] and with_ui["elements"] is None
    [as_json] = (
        await frontend.query(
            "APP_STATE", {"package": "com.android.chrome", "include_ui": "true", "ui_format": "json"}
        )
    ).results
    assert any(e["resource_id"] == "com.android.chrome:id/url_bar" for e in as_json["elements"])
    await ok(frontend, "PRESS_KEY", {"key": "HOME"})
    [after] = (await frontend.query("APP_STATE", {"package": "com.android.chrome"})).results
    assert after["foreground"] is False and after["running"] is True
    await ok(frontend, "CLOSE_APP", {"package": "com.android.chrome"})
    [closed] = (await frontend.query("APP_STATE", {"package": "com.android.chrome"})).results
    assert closed["running"] is False
    missing = await frontend.query("APP_STATE", {"package": "com.not.installed"})
    assert (missing.results, missing.total_count) == ([], 0)


async def test_memory_filters(frontend: FrontEnd) -> None:
    alice = await ok(
        frontend,
        "REMEMBER",
        {"kind": "person", "name": "Alice", "text": "likes green tea", "tags": '["friend"]'},
    )
    await ok(
        frontend,
        "REMEMBER",
        {"kind": "place", "name": "Tea house", "text": "Alice's favourite", "related_to": alice["id"]},
    )
    await ok(frontend, "REMEMBER", {"kind": "fact", "name": "Wi-Fi", "text": "password in drawer"})
    people = (await frontend.query("MEMORY", {"kind": "person"})).results
    assert [p["name"] for p in people] == ["Alice"]
    assert people[0]["tags"] == ["friend"]
    tea = (await frontend.query("MEMORY", {"q": "TEA"})).results
    assert {t["name"] for t in tea} == {"Alice", "Tea house"}
    linked = (await frontend.query("MEMORY", {"related_to": alice["id"]})).results
    assert [item["name"] for item in linked] == ["Tea house"]
    assert (await ok(frontend, "FORGET", {"id": alice["id"]}))["forgotten"] is True
    gone_again = await frontend.execute("FORGET", {"id": alice["id"]})
    assert gone_again.error == f"ELEMENT_NOT_FOUND: no memory item with id '{alice['id']}'"
    unknown = await frontend.execute("REMEMBER", {"name": "x", "related_to": "mem-999"})
    assert unknown.error == "INVALID_PARAMS: related_to names unknown memory id(s): mem-999"
    gone = await frontend.query("MEMORY", {"kind": "person"})
    assert (gone.results, gone.total_count) == ([], 0)
