"""SEND_MESSAGE end to end: SMS to numbers and contacts, WhatsApp through its UI, and safe retries."""

from __future__ import annotations

import asyncio

import pytest

from phoneuse_runtime.device.base import SmsFilter, SmsMessage

from ..conftest import Client
from .conftest import WHATSAPP, failure, front, sim, texts


async def _sent(client: Client) -> list[SmsMessage]:
    return await sim(client).sms_messages(SmsFilter(box="sent"))


async def test_send_to_a_number(client: Client) -> None:
    before = await _sent(client)
    result = await client.ok("SEND_MESSAGE", {"to": "+1 (650) 555-0199", "body": "Hello there"})
    assert result["to"] == "+1 (650) 555-0199"
    assert result["contact"] is None
    assert result["app"] == "sms"
    assert result["verified"] is True and result["verify_error"] is None
    assert result["via"] == "sim"
    after = await _sent(client)
    assert len(after) == len(before) + 1
    newest = max(after, key=lambda m: int(m.id))
    assert result["message_id"] == newest.id
    assert (newest.address, newest.body, newest.box) == ("+1 (650) 555-0199", "Hello there", "sent")
    assert newest.id not in {m.id for m in before}


@pytest.mark.parametrize(
    ("to", "name", "number"),
    [
        ("Alice Johnson", "Alice Johnson", "+1 415 555 0101"),
        ("alice johnson", "Alice Johnson", "+1 415 555 0101"),
        ("alice", "Alice Johnson", "+1 415 555 0101"),
        ("  MOM ", "Mom", "+1 415 555 0100"),
        ("bob smith", "Bob Smith", "+1 415 555 0102"),
        ("Bobby", "Bobby Tables", "+1 415 555 0103"),
        ("carol", "Carol Diaz", "+1 415 555 0104"),  # the first of her two numbers
    ],
)
async def test_send_to_a_contact_by_name(client: Client, to: str, name: str, number: str) -> None:
    body = "Dinner at 8? 🍝 «ça va» 日本"
    result = await client.ok("SEND_MESSAGE", {"to": to, "body": body})
    assert (result["to"], result["contact"], result["verified"]) == (number, name, True)
    stored = [m for m in await _sent(client) if m.id == result["message_id"]]
    assert len(stored) == 1
    assert (stored[0].address, stored[0].body) == (number, body)


async def test_an_ambiguous_name_sends_nothing_and_names_the_candidates(client: Client) -> None:
    before = await _sent(client)
    code, message, details = await failure(client, "SEND_MESSAGE", {"to": "bob", "body": "hi"})
    assert code == "INVALID_PARAMS"
    assert "Bob Smith" in message and "Bobby Tables" in message
    assert details == {
        "candidates": [
            {"id": "2", "name": "Bob Smith", "phones": ["+1 415 555 0102"]},
            {"id": "3", "name": "Bobby Tables", "phones": ["+1 415 555 0103"]},
        ]
    }
    assert await _sent(client) == before


@pytest.mark.parametrize(
    ("to", "suggestions"),
    [
        ("Zelda", []),
        ("Alice Johnsonn", ["Alice Johnson"]),
        ("ali ce", ["Alice Johnson"]),
        ("Alcie", ["Alice Johnson"]),  # a misspelt first name finds the full name
        ("Bob Smyth", ["Bob Smith"]),
        ("Bobbi", ["Bobby Tables", "Bob Smith"]),  # closest first
    ],
)
async def test_an_unknown_name_is_invalid_params_and_suggests_the_closest(
    client: Client, to: str, suggestions: list[str]
) -> None:
    before = await _sent(client)
    code, message, details = await failure(client, "SEND_MESSAGE", {"to": to, "body": "hi"})
    assert code == "INVALID_PARAMS"
    assert message.startswith(f"no contact named {to!r}")
    assert details == {"suggestions": suggestions}
    if suggestions:
        assert f"did you mean {' or '.join(repr(s) for s in suggestions)}?" in message
    else:
        assert "did you mean" not in message
    assert await _sent(client) == before


async def test_a_contact_without_a_number_is_invalid_params(client: Client) -> None:
    await client.ok("ADD_CONTACT", {"name": "Email Only", "email": "only@example.org"})
    code, message, _ = await failure(client, "SEND_MESSAGE", {"to": "Email Only", "body": "hi"})
    assert code == "INVALID_PARAMS"
    assert "has no phone number" in message


@pytest.mark.parametrize(
    "body",
    [
        "Emoji 👩‍👩‍👧‍👦🇯🇵 and skin tone 👍🏾",
        "مرحبا — שלום — e\u0301",
        "quotes \"double\" 'single' `back` $(rm -rf /); && | > <tag/>",
        "multi\nline\n\ttabbed",
        "x" * 2000,
    ],
)
async def test_the_body_is_kept_verbatim(client: Client, body: str) -> None:
    result = await client.ok("SEND_MESSAGE", {"to": "Emma", "body": body})
    assert result["verified"] is True
    stored = [m for m in await _sent(client) if m.id == result["message_id"]]
    assert [m.body for m in stored] == [body]


async def test_send_with_whatsapp_goes_through_its_ui(client: Client) -> None:
    before = await sim(client).sms_messages()
    body = 'On my way 🚗 — "5 min"'
    result = await client.ok("SEND_MESSAGE", {"to": "alice", "body": body}, app_target=WHATSAPP)
    assert result == {
        "to": "+1 415 555 0101",
        "contact": "Alice Johnson",
        "app": WHATSAPP,
        "message_id": None,
        "verified": True,
        "verify_error": None,
        "via": "sim",
    }
    assert await sim(client).sms_messages() == before  # not a single SMS row
    assert (await front(client))[0] == WHATSAPP
    assert await texts(client, WHATSAPP + ":id/conversation_contact_name") == ["Alice Johnson"]
    bubbles = await texts(client, WHATSAPP + ":id/message_text")
    assert bubbles[-1] == body
    assert "Did you see the photos from Saturday?" in bubbles  # the existing chat, not a new one
    # The entry is empty again (it shows its hint).
    assert await texts(client, WHATSAPP + ":id/entry") == ["Message"]


async def test_whatsapp_to_a_new_number_starts_a_chat(client: Client) -> None:
    result = await client.ok("SEND_MESSAGE", {"to": "+49 30 1234567", "body": "Hallo!"}, app_target=WHATSAPP)
    assert result["verified"] is True
    assert await texts(client, WHATSAPP + ":id/conversation_contact_name") == ["+49301234567"]
    assert await texts(client, WHATSAPP + ":id/message_text") == ["Hallo!"]


@pytest.mark.parametrize("target", ["org.telegram.messenger", "com.facebook.orca", "whatsapp"])
async def test_an_unsupported_app_target_is_unsupported(client: Client, target: str) -> None:
    before = await sim(client).sms_messages()
    code, message, _ = await failure(client, "SEND_MESSAGE", {"to": "alice", "body": "hi"}, app_target=target)
    assert code == "UNSUPPORTED"
    assert target in message and "com.whatsapp" in message
    assert await sim(client).sms_messages() == before


@pytest.mark.parametrize("target", ["com.google.android.apps.messaging", "sms"])
async def test_sms_app_targets_send_sms(client: Client, target: str) -> None:
    result = await client.ok("SEND_MESSAGE", {"to": "mom", "body": "Call you later"}, app_target=target)
    assert (result["app"], result["verified"]) == (target, True)
    assert result["message_id"] in {m.id for m in await _sent(client)}


async def test_a_retry_with_the_same_request_id_sends_one_sms(client: Client) -> None:
    before = len(await _sent(client))
    params = {"to": "alice", "body": "Only once, please"}
    first = await client.execute("SEND_MESSAGE", params, request_id="sms-retry-1")
    second = await client.execute("SEND_MESSAGE", params, request_id="sms-retry-1")
    assert first.success and second.success
    assert first.result_json == second.result_json
    concurrent = await asyncio.gather(
        *(client.execute("SEND_MESSAGE", params, request_id="sms-retry-2") for _ in range(5))
    )
    assert all(r.success for r in concurrent)
    assert len({r.result_json for r in concurrent}) == 1
    rows = [m for m in await _sent(client) if m.body == "Only once, please"]
    assert len(rows) == 2  # one per request_id
    assert len(await _sent(client)) == before + 2
    # A new request_id is a new message.
    await client.ok("SEND_MESSAGE", params, request_id="sms-retry-3")
    assert len(await _sent(client)) == before + 3


@pytest.mark.parametrize(
    ("params", "fragment"),
    [
        ({"to": "alice", "body": ""}, "body"),
        ({"to": "", "body": "hi"}, "to"),
        ({"to": "alice"}, "body"),
        ({"to": "alice", "body": "x" * 10_001}, "body"),
        ({"to": "alice", "body": "hi", "subject": "x"}, "subject"),
    ],
)
async def test_bad_params(client: Client, params: dict[str, str], fragment: str) -> None:
    code, message, _ = await failure(client, "SEND_MESSAGE", params)
    assert code == "INVALID_PARAMS"
    assert fragment in message
