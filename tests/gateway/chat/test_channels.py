"""Channels over real sockets: create (channels and threads), rename, set_default, delete, list;
every change reaches the owner's other devices; unknown chats are `not_found`."""

from __future__ import annotations

import pytest

from ..conftest import GatewayFactory, IrisClient
from .conftest import Owner, history, say, texts


async def _channels(client: IrisClient) -> list[dict[str, object]]:
    reply = await client.request("channel.list")
    assert reply["type"] == "channel.list"
    channels: list[dict[str, object]] = reply["payload"]["channels"]
    return channels


async def test_the_built_in_default_is_listed_alone_at_first(iris: IrisClient) -> None:
    assert await _channels(iris) == [
        {
            "chat_id": "android:default",
            "name": "Android",
            "kind": "default",
            "parent_chat_id": None,
            "is_default": True,
        }
    ]


async def test_channel_list_with_an_empty_payload_or_none_is_a_request(iris: IrisClient) -> None:
    await iris.send_frame("channel.list", {}, id=40)
    assert (await iris.next("channel.list"))["id"] == 40
    await iris.ws.send('{"v": 1, "id": 41, "type": "channel.list"}')
    assert (await iris.next("channel.list"))["id"] == 41


async def test_create_answers_the_asker_and_reaches_every_other_device(owner: Owner) -> None:
    created = await owner.phone.request("channel.create", {"name": "  Groceries  "})
    assert created["type"] == "channel.created"
    channel = created["payload"]
    assert channel["name"] == "Groceries" and channel["kind"] == "channel" and not channel["is_default"]
    assert channel["chat_id"].startswith("android:chan_") and channel["parent_chat_id"] is None
    pushed = await owner.tablet.next("channel.created")
    assert pushed["payload"] == channel and "id" not in pushed
    assert channel in await _channels(owner.tablet)


async def test_hello_ack_lists_the_stored_channels(owner: Owner) -> None:
    created = (await owner.phone.request("channel.create", {"name": "Work"}))["payload"]
    client = await owner.server.open()
    ack = await client.hello(owner.server.pair().token)
    assert created in ack["payload"]["channels"]
    assert [c["chat_id"] for c in ack["payload"]["channels"] if c["is_default"]] == ["android:default"]


async def test_a_thread_belongs_to_its_channel_and_has_a_history_of_its_own(owner: Owner) -> None:
    chan = (await owner.phone.request("channel.create", {"name": "Trips"}))["payload"]["chat_id"]
    made = await owner.phone.request(
        "channel.create", {"name": "Rome", "kind": "thread", "parent_chat_id": chan}
    )
    thread = made["payload"]
    assert thread["kind"] == "thread" and thread["parent_chat_id"] == chan
    assert (await owner.tablet.next("channel.created"))["payload"]["kind"] == "channel"
    assert (await owner.tablet.next("channel.created"))["payload"] == thread
    # Naming a thread either way is one scope, and the server's frames say it canonically.
    first = await say(owner.phone, "in the thread", chat_id=thread["chat_id"])
    assert (first["chat_id"], first["thread_id"]) == (chan, thread["chat_id"])
    await say(owner.phone, "also in it", chat_id=chan, thread_id=thread["chat_id"])
    await say(owner.phone, "in the channel", chat_id=chan)
    assert await texts(owner.phone, chat_id=thread["chat_id"]) == ["in the thread", "also in it"]
    assert await texts(owner.phone, chat_id=chan) == ["in the channel"]


@pytest.mark.parametrize(
    ("payload", "code"),
    [
        ({"name": "x", "kind": "thread"}, "unsupported"),  # no parent
        ({"name": "x", "kind": "channel", "parent_chat_id": "android:default"}, "unsupported"),
        ({"name": "x", "parent_chat_id": "android:chan_nope"}, "not_found"),
        ({"name": "   "}, "unsupported"),
        ({"name": "x" * 101}, "unsupported"),
        ({"name": "x", "kind": "room"}, "unsupported"),
        ({}, "unsupported"),
    ],
)
async def test_a_bad_create_is_refused_and_makes_nothing(
    owner: Owner, payload: dict[str, object], code: str
) -> None:
    error = await owner.phone.request("channel.create", payload)
    assert error["type"] == "error" and error["payload"]["code"] == code, error
    assert len(await _channels(owner.phone)) == 1


async def test_a_thread_of_a_thread_is_refused(owner: Owner) -> None:
    made = await owner.phone.request(
        "channel.create", {"name": "t", "kind": "thread", "parent_chat_id": "android:default"}
    )
    thread = made["payload"]["chat_id"]
    error = await owner.phone.request("channel.create", {"name": "tt", "parent_chat_id": thread})
    assert error["payload"]["code"] == "unsupported"
    assert "thread" in error["payload"]["message"]


async def test_rename_answers_and_reaches_the_others(owner: Owner) -> None:
    renamed = await owner.phone.request("channel.rename", {"name": "Phone"}, chat_id="android:default")
    assert renamed["type"] == "channel.renamed"
    assert renamed["payload"] == {"chat_id": "android:default", "name": "Phone"}
    assert (await owner.tablet.next("channel.renamed"))["payload"] == renamed["payload"]
    # Without a chat_id (or with an empty one), a request means the default channel.
    again = await owner.phone.request("channel.rename", {"name": "Home"})
    assert again["payload"] == {"chat_id": "android:default", "name": "Home"}
    empty = await owner.phone.request("channel.rename", {"name": "Home"}, chat_id="", thread_id="")
    assert empty["payload"] == {"chat_id": "android:default", "name": "Home"}
    assert (await _channels(owner.tablet))[0]["name"] == "Home"


async def test_set_default_moves_the_default_and_every_device_gets_the_list(owner: Owner) -> None:
    chan = (await owner.phone.request("channel.create", {"name": "Main"}))["payload"]["chat_id"]
    await owner.phone.send_frame("channel.set_default", {}, id=77, chat_id=chan)
    for client in (owner.phone, owner.tablet):
        listed = await client.next("channel.list")
        assert "id" not in listed  # set_default succeeds silently; the list is the change
        defaults = [c["chat_id"] for c in listed["payload"]["channels"] if c["is_default"]]
        assert defaults == [chan]
    assert not [f for f in owner.phone.frames if f.get("id") == 77]
    # Requests without a chat now mean the new default.
    sent = await say(owner.phone, "to the default")
    assert sent["chat_id"] == chan
    assert await texts(owner.phone, chat_id=chan) == ["to the default"]
    assert await texts(owner.phone, chat_id="android:default") == []
    # The old built-in default is a channel like the others now, and can go.
    gone = await owner.phone.request("channel.delete", chat_id="android:default")
    assert gone["type"] == "channel.deleted"


async def test_a_thread_cannot_be_the_default(owner: Owner) -> None:
    made = await owner.phone.request(
        "channel.create", {"name": "t", "kind": "thread", "parent_chat_id": "android:default"}
    )
    error = await owner.phone.request("channel.set_default", chat_id=made["payload"]["chat_id"])
    assert error["payload"]["code"] == "unsupported"
    assert [c["is_default"] for c in await _channels(owner.phone)] == [True, False]


async def test_the_default_channel_cannot_be_deleted(owner: Owner) -> None:
    await say(owner.phone, "keep me")
    for envelope in ({"chat_id": "android:default"}, {}):
        error = await owner.phone.request("channel.delete", **envelope)  # type: ignore[arg-type]
        assert error["type"] == "error" and error["payload"]["code"] == "unsupported"
        assert "default channel cannot be deleted" in error["payload"]["message"]
    assert len(await _channels(owner.phone)) == 1
    assert await texts(owner.phone) == ["keep me"]


async def test_delete_takes_the_threads_and_messages_with_it(owner: Owner) -> None:
    chan = (await owner.phone.request("channel.create", {"name": "Old"}))["payload"]["chat_id"]
    made = await owner.phone.request("channel.create", {"name": "t", "parent_chat_id": chan})
    thread = made["payload"]["chat_id"]
    await say(owner.phone, "old words", chat_id=chan)
    await say(owner.phone, "thread words", chat_id=thread)
    deleted = await owner.phone.request("channel.delete", chat_id=chan)
    assert deleted["type"] == "channel.deleted" and deleted["payload"] == {"chat_id": chan}
    assert (await owner.phone.next("channel.deleted"))["payload"] == {"chat_id": thread}
    others = [(await owner.tablet.next("channel.deleted"))["payload"]["chat_id"] for _ in range(2)]
    assert others == [chan, thread]
    assert [c["chat_id"] for c in await _channels(owner.phone)] == ["android:default"]
    for gone in (chan, thread):
        error = await owner.phone.request("history", chat_id=gone)
        assert error["payload"]["code"] == "not_found"
    hits = await owner.phone.request("search", {"query": "words"})
    assert hits["payload"]["hits"] == []


@pytest.mark.parametrize(
    ("frame_type", "payload"),
    [
        ("channel.rename", {"name": "x"}),
        ("channel.set_default", {}),
        ("channel.delete", {}),
        ("message.send", {"text": "hi"}),
        ("history", {}),
        ("search", {"query": "hi", "scope": "chat"}),
    ],
)
async def test_an_unknown_chat_is_not_found_anywhere(
    owner: Owner, frame_type: str, payload: dict[str, object]
) -> None:
    for envelope in (
        {"chat_id": "android:chan_nope"},
        {"chat_id": "android:chan_nope", "thread_id": "t1"},
        {"thread_id": "android:default"},  # a channel, not a thread
    ):
        error = await owner.phone.request(frame_type, payload, **envelope)  # type: ignore[arg-type]
        assert error["type"] == "error" and error["payload"]["code"] == "not_found", error
    assert await texts(owner.phone) == []
    assert (await _channels(owner.phone))[0]["name"] == "Android"


async def test_channels_survive_a_restart(make_gateway: GatewayFactory) -> None:
    server = await make_gateway()
    token = server.pair().token
    client = await server.connect(token)
    chan = (await client.request("channel.create", {"name": "Kept"}))["payload"]
    await client.send_frame("channel.set_default", chat_id=chan["chat_id"])
    await client.next("channel.list")
    await say(client, "still here")
    await server.stop()
    again = await make_gateway(data_dir=server.data_dir)
    client = await again.connect(token)
    channels = await _channels(client)
    assert [(c["chat_id"], c["is_default"]) for c in channels] == [
        ("android:default", False),
        (chan["chat_id"], True),
    ]
    assert (await history(client))["payload"]["messages"][0]["text"] == "still here"


async def test_a_thread_id_that_names_no_channel_is_a_thread_scope_of_its_own(owner: Owner) -> None:
    sent = await say(owner.phone, "in topic t1", thread_id="t1")
    assert (sent["chat_id"], sent["thread_id"]) == ("android:default", "t1")
    assert (await owner.tablet.next("message"))["thread_id"] == "t1"
    assert await texts(owner.phone, thread_id="t1") == ["in topic t1"]
    assert await texts(owner.phone, chat_id="android:default", thread_id="t1") == ["in topic t1"]
    assert await texts(owner.phone) == []
    # It is no channel: channel requests about it are not_found.
    error = await owner.phone.request("channel.rename", {"name": "x"}, thread_id="t1")
    assert error["payload"]["code"] == "not_found"
    assert len(await _channels(owner.phone)) == 1


async def test_a_thread_of_another_chat_is_not_found(owner: Owner) -> None:
    a = (await owner.phone.request("channel.create", {"name": "A"}))["payload"]["chat_id"]
    made = await owner.phone.request("channel.create", {"name": "t", "parent_chat_id": a})
    thread = made["payload"]["chat_id"]
    for envelope in (
        {"chat_id": "android:default", "thread_id": thread},
        {"chat_id": thread, "thread_id": "t9"},
    ):
        error = await owner.phone.request("message.send", {"text": "x"}, **envelope)
        assert error["payload"]["code"] == "not_found", error
    # Named by its id alone, a thread needs no chat_id.
    sent = await say(owner.phone, "ok", thread_id=thread)
    assert (sent["chat_id"], sent["thread_id"]) == (a, thread)
