"""One rule for "the same phone number", as the sim's threads, contacts and chats show it over gRPC."""

from __future__ import annotations

from phoneuse_runtime.device.base import ContactFilter
from phoneuse_runtime.rpc import protocol_pb2 as pb

from ..conftest import Client
from .conftest import DIALER, WHATSAPP, sim, texts

ALICE = "+14155550101"


async def _add_lea(client: Client) -> None:
    added = await client.ok("ADD_CONTACT", {"name": "Léa Martin", "phone": "+33 6 12 34 56 78"})
    assert added["verified"] is True


async def _newest_title(client: Client) -> str:
    return (await sim(client).notifications())[0].title


async def test_a_national_number_joins_the_thread_of_its_international_form(client: Client) -> None:
    await _add_lea(client)
    first = await client.ok("SIM_RECEIVE_SMS", {"from": "+33 6 12 34 56 78", "body": "Salut !"})
    assert await _newest_title(client) == "Léa Martin"
    second = await client.ok("SIM_RECEIVE_SMS", {"from": "06 12 34 56 78", "body": "Tu es là ?"})
    assert second["thread_id"] == first["thread_id"]
    assert await _newest_title(client) == "Léa Martin"


async def test_a_national_number_rings_as_its_contact(client: Client) -> None:
    await _add_lea(client)
    await client.ok("SIM_INCOMING_CALL", {"from": "06 12 34 56 78"})
    assert await texts(client, DIALER + ":id/contactgrid_contact_name") == ["Léa Martin"]
    await client.ok("END_CALL")


async def test_another_country_with_the_same_national_digits_is_another_thread(client: Client) -> None:
    alice_thread = next(m.thread_id for m in await sim(client).sms_messages() if m.address == ALICE)
    same_ten = await client.ok("SIM_RECEIVE_SMS", {"from": "+44 415 555 0101", "body": "Wrong Alice"})
    assert same_ten["thread_id"] != alice_thread
    assert await _newest_title(client) == "+44 415 555 0101"
    same_nine = await client.ok("SIM_RECEIVE_SMS", {"from": "+1 515 555 0101", "body": "Other area"})
    assert same_nine["thread_id"] not in (alice_thread, same_ten["thread_id"])
    formatted = await client.ok("SIM_RECEIVE_SMS", {"from": "(415) 555-0101", "body": "Alice again"})
    assert formatted["thread_id"] == alice_thread
    assert await _newest_title(client) == "Alice Johnson"


async def test_a_short_code_is_not_a_suffix_of_a_longer_one(client: Client) -> None:
    code_thread = next(m.thread_id for m in await sim(client).sms_messages() if m.address == "72345")
    longer = await client.ok("SIM_RECEIVE_SMS", {"from": "172345", "body": "Another service"})
    assert longer["thread_id"] != code_thread
    again = await client.ok("SIM_RECEIVE_SMS", {"from": "72 345", "body": "Code 112233"})
    assert again["thread_id"] == code_thread


async def test_whatsapp_to_another_country_with_the_same_national_digits_starts_a_new_chat(
    client: Client,
) -> None:
    result = await client.ok(
        "SEND_MESSAGE", {"to": "+44 415 555 0101", "body": "Hello?"}, app_target=WHATSAPP
    )
    assert result["verified"] is True
    assert await texts(client, WHATSAPP + ":id/conversation_contact_name") == ["+444155550101"]
    assert await texts(client, WHATSAPP + ":id/message_text") == ["Hello?"]


async def test_contacts_and_send_message_agree_on_a_national_number(client: Client) -> None:
    """CONTACTS matched numbers by their E.164 form (read in the memory's region, US here) where
    SEND_MESSAGE and the sim compare them with `same_number`: a contact saved in its French
    national form was the recipient of a message to its international form, yet CONTACTS did not
    find it by that number. One rule now."""
    added = await client.ok("ADD_CONTACT", {"name": "Léa Martin", "phone": "06 12 34 56 78"})
    rows, total, _ = await client.query(pb.CONTACTS, {"phone": "+33 6 12 34 56 78"})
    assert [r["id"] for r in rows] == [added["contact_id"]] and total == 1
    rows, _, _ = await client.query(pb.CONTACTS, {"q": "+33 6 12 34 56 78"})
    assert [r["id"] for r in rows] == [added["contact_id"]]
    sent = await client.ok("SEND_MESSAGE", {"to": "+33 6 12 34 56 78", "body": "Coucou"})
    assert sent["verified"] is True
    by_sim = await sim(client).contacts(ContactFilter(phone="+33 6 12 34 56 78"))
    assert [c.id for c in by_sim] == [added["contact_id"]]
