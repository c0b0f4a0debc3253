"""Bounds: every id, name, param and stored text has a documented limit (phoneuse_runtime/kernel/limits.py),
past which the call is refused as BAD_REQUEST or INVALID_PARAMS and nothing is kept; and no
answer exceeds what a client with gRPC's default 4 MiB receive limit accepts."""

from __future__ import annotations

import json

import pytest
from pydantic import Field

from phoneuse_runtime.device.base import ContactFilter
from phoneuse_runtime.kernel.limits import (
    MAX_BULK_CHARS,
    MAX_EVENT_TYPES,
    MAX_ID_CHARS,
    MAX_PARAM_CHARS,
    MAX_RESPONSE_JSON_BYTES,
    MEMORY_TEXT_CHARS,
)
from phoneuse_runtime.kernel.params import Params
from phoneuse_runtime.kernel.registry import ActionContext, ActionResult, ActionSpec

from ..extras import Extra
from .frontend import (
    SCREEN_WITH_TEXT,
    FrontEnd,
    FrontEndFactory,
    fits_the_wire,
    names_subscribers,
    names_tools,
    ok,
    refused,
    sim,
)

EVENT_KEYS = "all_day, calendar, description, end, location, start, timezone, title"
REMEMBER_KEYS = "emails, kind, name, phones, related_to, tags, text"


@pytest.mark.parametrize(
    ("action_type", "request_id", "app_target", "message"),
    [
        ("SET_CLIPBOARD", "r" * 129, None, "request_id has 129 characters; at most 128 are allowed"),
        (
            "SET_CLIPBOARD",
            "x"
            * 1_500_000,  # the issue sent 3 MB: past the 2 MiB receive limit now, refused before it is read
            None,
            "request_id has 1500000 characters; at most 128 are allowed",
        ),
        ("SET_CLIPBOARD", "a\nb", None, "request_id must be printable ASCII, got 'a\\nb'"),
        ("SET_CLIPBOARD", "café", None, "request_id must be printable ASCII, got 'café'"),
        ("A" * 65, "r", None, "action_type has 65 characters; at most 64 are allowed"),
        ("SET_CLIPBOARD", "r", "p" * 257, "app_target has 257 characters; at most 256 are allowed"),
    ],
    ids=[
        "long-request-id",
        "1.5mb-request-id",
        "control-char",
        "non-ascii",
        "long-action-type",
        "long-target",
    ],
)
async def test_ids_past_their_limits_are_bad_requests(
    frontend: FrontEnd, action_type: str, request_id: str, app_target: str | None, message: str
) -> None:
    if action_type != "SET_CLIPBOARD":
        names_tools(frontend)
    refusal = await refused(
        frontend.execute(action_type, {"text": "t"}, request_id=request_id, app_target=app_target)
    )
    assert (refusal.code, refusal.message) == ("BAD_REQUEST", message)


async def test_ids_at_their_limits_run(frontend: FrontEnd) -> None:
    request_id = ("any printable ASCII: ~!@#$%^&*() " * 5)[:MAX_ID_CHARS]
    answer = await frontend.execute("SET_CLIPBOARD", {"text": "t"}, request_id=request_id)
    assert answer.success, answer.error
    assert answer.request_id == request_id
    assert (await frontend.execute("SET_CLIPBOARD", {"text": "t"}, request_id=request_id)) == answer


@pytest.mark.parametrize(
    ("subscriber_id", "event_types", "message"),
    [
        ("s" * 129, (), "subscriber_id has 129 characters; at most 128 are allowed"),
        ("s" * 1_000_000, (), "subscriber_id has 1000000 characters; at most 128 are allowed"),
        ("née", (), "subscriber_id must be printable ASCII, got 'née'"),
        ("s", ("E" * 65,), "event type has 65 characters; at most 64 are allowed"),
        (
            "s",
            ("TASK_STARTED",) * (MAX_EVENT_TYPES + 1),
            "event_types has 65 entries; at most 64 are allowed",
        ),
    ],
    ids=["long-id", "1mb-id", "non-ascii-id", "long-event-type", "too-many-event-types"],
)
async def test_subscriptions_past_their_limits_are_bad_requests(
    frontend: FrontEnd, subscriber_id: str, event_types: tuple[str, ...], message: str
) -> None:
    names_subscribers(frontend)
    refusal = await refused(frontend.subscribe(event_types, subscriber_id))
    assert (refusal.code, refusal.message) == ("BAD_REQUEST", message)
    # The refusal cost the front end nothing: a stream with a good id still works.
    stream = await frontend.subscribe(("TASK_COMPLETED",), "s" * MAX_ID_CHARS)
    assert stream.subscriber_id == "s" * MAX_ID_CHARS
    await ok(frontend, "SET_CLIPBOARD", {"text": "t"})
    assert (await stream.next()).payload["action_type"] == "SET_CLIPBOARD"


async def test_a_param_past_its_limit_is_invalid_params(frontend: FrontEnd) -> None:
    too_long = "d" * (MAX_PARAM_CHARS + 1)
    answer = await frontend.execute("CREATE_EVENT", {"title": "t", "start": "0", "description": too_long})
    assert (answer.code, answer.message) == (
        "INVALID_PARAMS",
        f"description has {MAX_PARAM_CHARS + 1} characters; at most {MAX_PARAM_CHARS} are allowed",
    )
    at_limit = await ok(frontend, "CREATE_EVENT", {"title": "t", "start": "0", "description": too_long[:-1]})
    assert at_limit["verified"] is True
    refusal = await refused(frontend.query("CONTACTS", {"q": too_long}))
    assert refusal.error == (
        f"INVALID_PARAMS: q has {MAX_PARAM_CHARS + 1} characters; at most {MAX_PARAM_CHARS} are allowed"
    )


async def test_a_field_may_declare_a_larger_limit(frontend: FrontEnd) -> None:
    """SIM_SET_SCREEN's xml is bulk text: it takes more than an ordinary param, up to its own limit."""
    padding = f'<node text="{"p" * (MAX_PARAM_CHARS + 10)}" bounds="[0,0][1,1]" />'
    large = SCREEN_WITH_TEXT.replace("</node></hierarchy>", padding + "</node></hierarchy>")
    assert (await ok(frontend, "SIM_SET_SCREEN", {"xml": large}))["nodes"] == 3
    too_large = large + " " * (MAX_BULK_CHARS - len(large) + 1)
    answer = await frontend.execute("SIM_SET_SCREEN", {"xml": too_large})
    assert (answer.code, answer.message) == (
        "INVALID_PARAMS",
        f"xml has {MAX_BULK_CHARS + 1} characters; at most {MAX_BULK_CHARS} are allowed",
    )


async def test_unknown_keys_are_named_briefly(frontend: FrontEnd) -> None:
    answer = await frontend.execute("SET_CLIPBOARD", {"text": "t", "k" * 100_000: "v"})
    assert answer.message == f"unknown param(s) {'k' * 40!r}… (100000 characters); allowed: text"
    many = {f"key{i:05d}": "v" for i in range(10_000)}
    answer = await frontend.execute("SET_CLIPBOARD", {"text": "t", **many})
    assert answer.message == (
        "unknown param(s) key00000, key00001, key00002, key00003, key00004, key00005, key00006, "
        "key00007 and 9992 more; allowed: text"
    )


async def test_memory_text_is_bounded_and_memory_stays_readable(frontend: FrontEnd) -> None:
    """1 MB of \\x01 was stored as 6 MB of JSON escapes, after which every MEMORY query failed."""
    fits_the_wire(frontend, "\x01" * 1_000_000)
    answer = await frontend.execute("REMEMBER", {"name": "blob", "text": "\x01" * 1_000_000})
    assert (answer.code, answer.message) == (
        "INVALID_PARAMS",
        f"text has 1000000 characters; at most {MEMORY_TEXT_CHARS} are allowed",
    )
    tags = await frontend.execute("REMEMBER", {"name": "n", "tags": ",".join(f"t{i}" for i in range(33))})
    assert (tags.code, tags.message) == (
        "INVALID_PARAMS",
        f"tags: List should have at most 32 items after validation, not 33 (allowed: {REMEMBER_KEYS})",
    )
    await ok(frontend, "REMEMBER", {"name": "small", "text": "fine"})
    page = await frontend.query("MEMORY")
    assert [r["name"] for r in page.results] == ["small"]


def json_size(result: dict[str, object]) -> int:
    """Its size as the server's JSON (pydantic's: compact, UTF-8, control characters escaped)."""
    return len(json.dumps(result, ensure_ascii=False, separators=(",", ":")).encode())


def json_bytes(results: list[dict[str, object]]) -> int:
    return sum(json_size(r) for r in results)


async def test_a_query_page_ends_early_rather_than_exceed_the_response_limit(frontend: FrontEnd) -> None:
    """Twelve items of the largest text, each 384 KiB as JSON: 4.5 MiB in one page of 20 would pass
    the client's 4 MiB limit. Pages stop short of the limit with has_more set, and paging by
    offset still reaches every item once."""
    for i in range(12):
        await ok(frontend, "REMEMBER", {"name": f"big {i:02d}", "text": "\x01" * MEMORY_TEXT_CHARS})
    seen: list[str] = []
    offset = 0
    while True:
        page = await frontend.query("MEMORY", {"offset": str(offset)})
        assert page.total_count == 12
        assert 0 < len(page.results) < 12
        assert json_bytes(page.results) <= MAX_RESPONSE_JSON_BYTES
        assert all(r["text"] == "\x01" * MEMORY_TEXT_CHARS for r in page.results)
        seen += [r["name"] for r in page.results]
        offset += len(page.results)
        assert page.has_more == (offset < 12)
        if not page.has_more:
            break
    assert seen == [f"big {i:02d}" for i in reversed(range(12))]


async def test_a_result_too_large_to_send_is_replaced_by_a_marker(frontend: FrontEnd) -> None:
    """A contact whose name alone is 4.2 MB as JSON (the sim's store takes what the phone gives)."""
    phone = sim(frontend)
    saved = await phone.add_contact("\x01" * 700_000, ["+1 555 0100"], [])
    [contact] = await phone.contacts(ContactFilter(id=saved.id))
    page = await frontend.query("CONTACTS", {"id": contact.id})
    assert (page.total_count, page.has_more) == (1, False)
    as_json = {
        "id": contact.id,
        "name": contact.name,
        "phones": contact.phones,
        "phones_e164": ["+15550100"],
        "emails": [],
        "starred": False,
        "sources": ["contacts"],
        "last_contacted": None,
        "memory_id": None,
        "relevance": 0.0,
    }
    assert page.results == [
        {"omitted": "TOO_LARGE", "bytes": json_size(as_json), "max_bytes": MAX_RESPONSE_JSON_BYTES}
    ]
    everyone = await frontend.query("CONTACTS", limit=200)
    assert len(everyone.results) == everyone.total_count
    assert sum("omitted" in r for r in everyone.results) == 1


class HugeParams(Params):
    size: int = Field(ge=0)


class HugeResult(ActionResult):
    blob: str


async def huge(ctx: ActionContext, p: HugeParams) -> HugeResult:
    return HugeResult(blob="€" * p.size, via="extra")


async def test_an_execute_result_too_large_to_send_is_replaced_by_a_marker(
    make_frontend: FrontEndFactory,
) -> None:
    frontend = await make_frontend(
        components=[Extra(ActionSpec("HUGE", HugeParams, huge, HugeResult, "A result of any size"))]
    )
    fits = await ok(frontend, "HUGE", {"size": str(1_000_000)})
    assert fits["blob"] == "€" * 1_000_000
    result = await ok(frontend, "HUGE", {"size": str(1_500_000)}, request_id="huge-1")
    size = json_size({"via": "extra", "blob": "€" * 1_500_000})
    assert result == {"omitted": "TOO_LARGE", "bytes": size, "max_bytes": MAX_RESPONSE_JSON_BYTES}
    again = await ok(frontend, "HUGE", {"size": str(1_500_000)}, request_id="huge-1")
    assert again == result


async def test_an_event_too_large_to_send_is_replaced_by_a_marker(frontend: FrontEnd) -> None:
    """TASK_STARTED carries the params as sent: 1 Mi characters of \\x01 are 6 MiB as JSON, which
    would end every stream it reached. The stream gets the marker instead, and lives on."""
    fits_the_wire(frontend, "\x01" * MAX_BULK_CHARS)
    stream = await frontend.subscribe()
    answer = await frontend.execute("SIM_SET_SCREEN", {"xml": "\x01" * MAX_BULK_CHARS}, request_id="big")
    assert answer.code == "INVALID_PARAMS"
    started = await stream.next("TASK_STARTED")
    payload = {
        "request_id": "big",
        "action_type": "SIM_SET_SCREEN",
        "params": {"xml": "\x01" * MAX_BULK_CHARS},
        "caller": {"frontend": frontend.kind, "principal": "agent"},
    }
    size = len(json.dumps(payload, ensure_ascii=False).encode())  # as events.py writes it
    assert started.payload == {"omitted": "TOO_LARGE", "bytes": size, "max_bytes": MAX_RESPONSE_JSON_BYTES}
    completed = await stream.next("TASK_COMPLETED")
    assert completed.payload["request_id"] == "big"
    await ok(frontend, "SET_CLIPBOARD", {"text": "t"})
    assert (await stream.next("TASK_COMPLETED")).payload["action_type"] == "SET_CLIPBOARD"
