"""Messages over real sockets: message.send (stored, answered, broadcast, resends not stored
twice), the listeners other parts hook on, post_message, history paging, full-text search and
read receipts."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import pytest

from phoneuse_runtime.gateway.chat import StoredMessage, chat_part
from phoneuse_runtime.gateway.chat.store import RESEND_WINDOW_MS
from phoneuse_runtime.gateway.db import db_path
from phoneuse_runtime.gateway.errors import GatewayError
from phoneuse_runtime.gateway.session import Session

from ..conftest import GatewayFactory, GatewayServer, IrisClient
from .conftest import Owner, history, say, texts, upload


async def test_send_answers_with_the_id_and_the_other_devices_get_the_same_frame(owner: Owner) -> None:
    reply = await owner.phone.request("message.send", {"text": "hello agent"})
    assert reply["id"] == owner.phone.next_id - 1 and reply["type"] == "message"
    assert reply["chat_id"] == "android:default"
    body = reply["payload"]
    assert body["role"] == "user" and body["text"] == "hello agent"
    assert body["message_id"].startswith("msg_") and isinstance(body["ts"], int)
    pushed = await owner.tablet.next("message")
    assert "id" not in pushed and pushed["payload"] == body and pushed["chat_id"] == "android:default"
    assert not [f for f in owner.phone.frames if f["type"] == "message"]  # the sender gets it once
    assert await texts(owner.tablet) == ["hello agent"]


async def test_a_device_that_was_offline_gets_the_message_on_sync(owner: Owner) -> None:
    offline = owner.server.pair("laptop").token
    laptop = await owner.server.connect(offline)
    cursor = (await laptop.request("sync", {"cursor": 0}))["payload"]["cursor"]
    await laptop.close()
    sent = await say(owner.phone, "while you were away")
    laptop = await owner.server.connect(offline)
    await laptop.request("sync", {"cursor": cursor})
    replayed = [f for f in laptop.received if f["type"] == "message"]
    assert [f["payload"] for f in replayed] == [sent["payload"]]


async def test_a_resend_is_not_stored_twice_and_gets_the_same_reply(owner: Owner) -> None:
    await owner.phone.send_frame("message.send", {"text": "once"}, id=500)
    first = await owner.phone.next("message")
    await owner.tablet.next("message")
    # The app reconnects (same device, same token) and resends the request it had no answer to.
    await owner.phone.close()
    phone = await owner.server.connect(owner.phone_token, device_id="phone")
    await phone.send_frame("message.send", {"text": "once"}, id=500)
    second = await phone.next("message")
    assert second == first
    assert await texts(phone) == ["once"]
    # Apps number requests per connection: the same id with other content is a new message.
    await phone.send_frame("message.send", {"text": "twice"}, id=500)
    third = await phone.next("message")
    assert third["payload"]["message_id"] != first["payload"]["message_id"]
    assert await texts(phone) == ["once", "twice"]
    # Only the new message reached the tablet.
    assert (await owner.tablet.next("message"))["payload"]["text"] == "twice"
    assert not [f for f in owner.tablet.frames if f["type"] == "message"]


async def test_a_resend_after_24_hours_is_a_new_message(owner: Owner) -> None:
    await owner.phone.send_frame("message.send", {"text": "again"}, id=600)
    first = await owner.phone.next("message")
    # A day passes (the answered request's record ages; nothing else changes).
    conn = sqlite3.connect(db_path(owner.server.data_dir))
    with conn:
        conn.execute("UPDATE chat_sends SET created_ms = created_ms - ?", (RESEND_WINDOW_MS + 1,))
    conn.close()
    await owner.phone.send_frame("message.send", {"text": "again"}, id=600)
    second = await owner.phone.next("message")
    assert second["payload"]["message_id"] != first["payload"]["message_id"]
    assert await texts(owner.phone) == ["again", "again"]


async def test_the_same_id_from_another_device_is_another_message(owner: Owner) -> None:
    await owner.phone.send_frame("message.send", {"text": "same"}, id=9)
    await owner.tablet.send_frame("message.send", {"text": "same"}, id=9)
    a = await owner.phone.next_where(lambda f: f["type"] == "message" and f.get("id") == 9)
    b = await owner.tablet.next_where(lambda f: f["type"] == "message" and f.get("id") == 9)
    assert a["payload"]["message_id"] != b["payload"]["message_id"]
    assert await texts(owner.phone) == ["same", "same"]


@pytest.mark.parametrize(
    ("payload", "code"),
    [
        ({"text": ""}, "unsupported"),
        ({"text": "   "}, "unsupported"),
        ({}, "unsupported"),
        ({"text": 5}, "unsupported"),
        ({"text": "hi", "media_refs": "img"}, "unsupported"),
        ({"text": "hi", "reply_to": "msg_nope"}, "not_found"),
        ({"text": "hi", "media_refs": ["never-uploaded"]}, "not_found"),
    ],
)
async def test_a_bad_send_is_refused_and_stores_nothing(
    owner: Owner, payload: dict[str, object], code: str
) -> None:
    error = await owner.phone.request("message.send", payload)
    assert error["type"] == "error" and error["payload"]["code"] == code, error
    assert await texts(owner.phone) == []


async def test_reply_to_names_a_message_of_the_same_chat(owner: Owner) -> None:
    first = await say(owner.phone, "question")
    answer = await owner.phone.request(
        "message.send", {"text": "answer", "reply_to": first["payload"]["message_id"]}
    )
    assert answer["payload"]["reply_to"] == first["payload"]["message_id"]
    chan = (await owner.phone.request("channel.create", {"name": "Other"}))["payload"]["chat_id"]
    error = await owner.phone.request(
        "message.send", {"text": "x", "reply_to": first["payload"]["message_id"]}, chat_id=chan
    )
    assert error["payload"]["code"] == "not_found"


async def test_media_refs_name_this_devices_completed_uploads(owner: Owner) -> None:
    offer = await upload(owner.phone, "pic-1", b"\x89PNG" + bytes(3000), filename="a.png")
    assert offer["type"] == "media.offer"
    sent = await owner.phone.request("message.send", {"text": "look", "media_refs": ["pic-1"]})
    media = sent["payload"]["media"]
    assert media == [{k: offer["payload"][k] for k in ("media_id", "kind", "mime", "size", "filename")}]
    assert (await history(owner.tablet))["payload"]["messages"][0]["media"] == media
    # Another device's media_ref is not this one's.
    error = await owner.tablet.request("message.send", {"text": "mine?", "media_refs": ["pic-1"]})
    assert error["payload"]["code"] == "not_found"
    # Media alone is a message.
    alone = await owner.phone.request("message.send", {"media_refs": ["pic-1"]})
    assert alone["type"] == "message" and alone["payload"]["text"] == ""


async def test_listeners_get_each_new_user_message_after_it_is_answered(owner: Owner) -> None:
    heard: list[tuple[str, str, StoredMessage]] = []

    async def listener(session: Session, message: StoredMessage) -> None:
        heard.append((session.device_id, session.pairing_id, message))

    async def broken(session: Session, message: StoredMessage) -> None:
        raise RuntimeError("a listener's own bug")

    chat = chat_part(owner.server.gateway)
    chat.on_user_message(broken)
    chat.on_user_message(listener)
    await owner.phone.send_frame("message.send", {"text": "for the agent"}, id=3)
    reply = await owner.phone.next("message")
    await owner.phone.send_frame("message.send", {"text": "for the agent"}, id=3)  # a resend
    assert (await owner.phone.next("message")) == reply
    assert (await owner.phone.request("ping"))["type"] == "pong"  # the frames before it are done
    assert len(heard) == 1
    device, pairing_id, message = heard[0]
    assert device == "phone" == message.device_id and message.pairing_id == pairing_id
    assert message.message_id == reply["payload"]["message_id"]
    assert (message.chat_id, message.thread_id, message.text) == ("android:default", None, "for the agent")
    assert message.payload() == reply["payload"]


async def test_post_message_stores_and_reaches_every_device(owner: Owner) -> None:
    question = await say(owner.phone, "what's up")
    await owner.tablet.next("message")
    posted = await chat_part(owner.server.gateway).post_message(
        chat_id=None,
        thread_id=None,
        role="assistant",
        text="all good",
        reasoning="checked",
        model="m-1",
        tokens=42,
        reply_to=question["payload"]["message_id"],
    )
    for client in (owner.phone, owner.tablet):
        frame = await client.next("message")
        assert frame["chat_id"] == "android:default"
        assert frame["payload"] == posted.payload()
        assert frame["payload"]["role"] == "assistant" and frame["payload"]["tokens"] == 42
        assert frame["payload"]["reasoning"] == "checked" and frame["payload"]["model"] == "m-1"
    page = (await history(owner.phone))["payload"]["messages"]
    assert [m["role"] for m in page] == ["user", "assistant"]
    assert page[1] == posted.payload()


async def test_post_message_refuses_unknown_chats_other_roles_and_taken_ids(
    gateway_server: GatewayServer,
) -> None:
    chat = chat_part(gateway_server.gateway)
    client = await gateway_server.connect()
    with pytest.raises(GatewayError) as unknown:
        await chat.post_message(chat_id="android:chan_nope", thread_id=None, role="system", text="x")
    assert unknown.value.code == "not_found"
    with pytest.raises(GatewayError):
        await chat.post_message(chat_id=None, thread_id=None, role="system", text="x", reply_to="msg_nope")
    with pytest.raises(ValueError, match="role"):
        await chat.post_message(chat_id=None, thread_id=None, role="user", text="x")
    # Not announced: stored only (a stream's final text, after its message.stop).
    kept = await chat.post_message(
        chat_id="", thread_id="", role="assistant", text="streamed", message_id="stream-1", announce=False
    )
    with pytest.raises(ValueError, match="taken"):
        await chat.post_message(
            chat_id=None, thread_id=None, role="assistant", text="other", message_id="stream-1"
        )
    assert (await history(client))["payload"]["messages"] == [kept.payload()]
    assert (await client.request("ping"))["type"] == "pong"
    assert not [f for f in client.frames if f["type"] == "message"]


async def test_chat_exists_and_default_chat_id(owner: Owner) -> None:
    chat = chat_part(owner.server.gateway)
    assert await chat.default_chat_id() == "android:default"
    chan = (await owner.phone.request("channel.create", {"name": "B"}))["payload"]["chat_id"]
    thread = (await owner.phone.request("channel.create", {"name": "t", "parent_chat_id": chan}))["payload"]
    assert await chat.chat_exists(chan) and await chat.chat_exists(thread["chat_id"])
    assert not await chat.chat_exists("android:chan_nope")
    await owner.phone.send_frame("channel.set_default", chat_id=chan)
    await owner.phone.next("channel.list")
    assert await chat.default_chat_id() == chan


async def test_history_pages_from_oldest_to_newest(iris: IrisClient) -> None:
    sent = [(await say(iris, f"m{i}"))["payload"]["message_id"] for i in range(5)]
    page = (await history(iris, {"limit": 2}))["payload"]
    assert [m["text"] for m in page["messages"]] == ["m3", "m4"]
    assert page["has_more"] and page["oldest_message_id"] == sent[3]
    page = (await history(iris, {"limit": 2, "before_message_id": sent[3]}))["payload"]
    assert [m["text"] for m in page["messages"]] == ["m1", "m2"] and page["has_more"]
    page = (await history(iris, {"limit": 2, "before_message_id": sent[1]}))["payload"]
    assert [m["text"] for m in page["messages"]] == ["m0"] and not page["has_more"]
    assert page["oldest_message_id"] == sent[0]
    page = (await history(iris, {"before_message_id": sent[0]}))["payload"]
    assert page == {"messages": [], "has_more": False}
    full = (await history(iris))["payload"]
    assert [m["message_id"] for m in full["messages"]] == sent and not full["has_more"]


async def test_a_history_page_stays_within_max_frame_bytes(make_gateway: GatewayFactory) -> None:
    server = await make_gateway(gateway_max_frame_bytes=4096)
    client = await server.connect()
    sent = [(await say(client, f"{i} " + "é" * 500))["payload"]["message_id"] for i in range(7)]
    seen: list[str] = []
    before: dict[str, Any] = {}
    pages = 0
    while True:
        pages += 1
        page = await history(client, {"limit": 200, **before})
        assert len(json.dumps(page, ensure_ascii=False).encode()) <= 4096
        ids = [m["message_id"] for m in page["payload"]["messages"]]
        assert ids, page
        seen = ids + seen
        if not page["payload"]["has_more"]:
            break
        before = {"before_message_id": page["payload"]["oldest_message_id"]}
    assert seen == sent and pages >= 3


@pytest.mark.parametrize(
    ("payload", "code"),
    [
        ({"limit": 0}, "unsupported"),
        ({"limit": 201}, "unsupported"),
        ({"limit": "5"}, "unsupported"),
        ({"before_message_id": "msg_nope"}, "not_found"),
    ],
)
async def test_a_bad_history_request_is_refused(
    iris: IrisClient, payload: dict[str, object], code: str
) -> None:
    error = await iris.request("history", payload)
    assert error["type"] == "error" and error["payload"]["code"] == code


async def test_history_before_a_message_of_another_chat_is_not_found(iris: IrisClient) -> None:
    chan = (await iris.request("channel.create", {"name": "B"}))["payload"]["chat_id"]
    elsewhere = await say(iris, "in b", chat_id=chan)
    error = await iris.request("history", {"before_message_id": elsewhere["payload"]["message_id"]})
    assert error["payload"]["code"] == "not_found"


async def test_search_finds_words_in_every_chat_or_in_one(iris: IrisClient) -> None:
    chan = (await iris.request("channel.create", {"name": "Shopping"}))["payload"]["chat_id"]
    a = await say(iris, "Buy oat milk and bread")
    b = await say(iris, "milk is in the fridge", chat_id=chan)
    await say(iris, "nothing to see")
    found = await iris.request("search", {"query": "milk"})
    assert found["type"] == "search.results"
    assert found["payload"]["query"] == "milk" and found["payload"]["scope"] == "all"
    hits = found["payload"]["hits"]
    assert {h["message_id"] for h in hits} == {a["payload"]["message_id"], b["payload"]["message_id"]}
    hit = next(h for h in hits if h["chat_id"] == chan)
    assert hit["role"] == "user" and "milk" in hit["snippet"] and hit["thread_id"] is None
    in_chat = await iris.request("search", {"query": "MILK", "scope": "chat", "chat_id": chan})
    assert [h["message_id"] for h in in_chat["payload"]["hits"]] == [b["payload"]["message_id"]]
    by_envelope = await iris.request("search", {"query": "milk", "scope": "chat"})  # the default
    assert [h["message_id"] for h in by_envelope["payload"]["hits"]] == [a["payload"]["message_id"]]
    prefix = await iris.request("search", {"query": "fri"})
    assert [h["message_id"] for h in prefix["payload"]["hits"]] == [b["payload"]["message_id"]]
    both = await iris.request("search", {"query": "oat bread"})
    assert [h["message_id"] for h in both["payload"]["hits"]] == [a["payload"]["message_id"]]


@pytest.mark.parametrize("query", ['"', "milk AND", "NEAR(", "*", "a:b", "-milk", "", "  ", "(milk"])
async def test_search_syntax_in_a_query_is_never_an_error(iris: IrisClient, query: str) -> None:
    await say(iris, "milk")
    found = await iris.request("search", {"query": query})
    assert found["type"] == "search.results", found


async def test_search_bad_scope_is_unsupported(iris: IrisClient) -> None:
    error = await iris.request("search", {"query": "x", "scope": "everything"})
    assert error["payload"]["code"] == "unsupported"


async def test_read_receipts_are_stored_relayed_and_never_move_backwards(owner: Owner) -> None:
    first = (await say(owner.phone, "one"))["payload"]["message_id"]
    second = (await say(owner.phone, "two"))["payload"]["message_id"]
    await owner.phone.send_frame("read.receipt", {"chat_id": "android:default", "message_id": second}, id=10)
    relayed = await owner.tablet.next("read.receipt")
    assert relayed["payload"] == {"chat_id": "android:default", "message_id": second}
    listed = await owner.tablet.request("channel.list")
    assert listed["payload"]["channels"][0]["last_read_message_id"] == second
    # Going back changes nothing and tells nobody.
    await owner.tablet.send_frame("read.receipt", {"message_id": first}, id=11)
    await owner.phone.send_frame("read.receipt", {"message_id": second}, id=12)
    await owner.tablet.request("ping")
    await owner.phone.request("ping")
    assert not [f for f in owner.phone.frames + owner.tablet.frames if f["type"] == "read.receipt"]
    assert not [f for f in owner.phone.frames + owner.tablet.frames if f.get("id") in (10, 11, 12)]
    listed = await owner.phone.request("channel.list")
    assert listed["payload"]["channels"][0]["last_read_message_id"] == second


@pytest.mark.parametrize("chat_id", [None, "android:default", "other"])
async def test_a_read_receipt_for_an_unknown_message_is_not_found(owner: Owner, chat_id: str | None) -> None:
    payload = {"message_id": "msg_nope"}
    if chat_id == "other":
        chan = (await owner.phone.request("channel.create", {"name": "B"}))["payload"]["chat_id"]
        payload = {"message_id": (await say(owner.phone, "x"))["payload"]["message_id"], "chat_id": chan}
    elif chat_id is not None:
        payload["chat_id"] = chat_id
    error = await owner.phone.request("read.receipt", payload)
    assert error["payload"]["code"] == "not_found"
    listed = await owner.phone.request("channel.list")
    assert all("last_read_message_id" not in c for c in listed["payload"]["channels"])
