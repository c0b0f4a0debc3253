"""A property test: random and malformed chat frames (bad envelopes, payloads of the wrong
shape, and well-formed requests about chats, messages, media and uploads that do not exist)
never close the connection, never change the stored history, channels or read receipts, and the
server still answers `ping` afterwards."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ..conftest import GatewayFactory, GatewayServer, IrisClient
from .conftest import history, say, upload

KNOWN = {"android:default"}
CHAT_TYPES = [
    "message.send",
    "history",
    "search",
    "read.receipt",
    "channel.create",
    "channel.rename",
    "channel.set_default",
    "channel.delete",
    "channel.list",
    "media.upload.start",
    "media.upload.end",
    "media.pull",
]
MAX_MEDIA = 1000

ids = st.integers(2**20, 2**31)  # above the ids the test client numbers its own requests with
unknown = st.text(max_size=12).filter(lambda s: s not in KNOWN).map(lambda s: f"x:{s}")
junk = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
blank = st.sampled_from(["", " ", "\n\t ", "\u3000"])


def frame(frame_type: str, payload: Any, **envelope: Any) -> dict[str, Any]:
    return {"v": 1, "type": frame_type, "payload": payload, **envelope}


def request(frame_type: str, payload: st.SearchStrategy[Any], **envelope: st.SearchStrategy[Any]) -> Any:
    """A request frame whose envelope fields are drawn from `envelope` (and an integer id)."""
    return st.fixed_dictionaries({"payload": payload, "id": ids, **envelope}).map(
        lambda d: frame(frame_type, d.pop("payload"), **d)
    )


# Well-formed requests that must be refused (not_found / unsupported / media_too_large).
refused_requests = st.one_of(
    request("message.send", st.fixed_dictionaries({"text": st.text(min_size=1)}), chat_id=unknown),
    request(
        "message.send",
        st.fixed_dictionaries({"text": st.text(min_size=1)}),
        chat_id=unknown,
        thread_id=st.text(max_size=8),
    ),
    request(
        "message.send",
        st.fixed_dictionaries({"text": st.text(min_size=1)}),
        thread_id=st.just("android:default"),
    ),
    request("message.send", st.fixed_dictionaries({"text": blank})),
    request("message.send", st.fixed_dictionaries({"text": st.text(), "reply_to": unknown})),
    request(
        "message.send",
        st.fixed_dictionaries({"text": st.text(), "media_refs": st.lists(unknown, min_size=1)}),
    ),
    request(
        "history", st.fixed_dictionaries({"limit": st.integers(max_value=0) | st.integers(min_value=201)})
    ),
    request("history", st.fixed_dictionaries({"before_message_id": unknown})),
    request("history", st.just({}), chat_id=unknown),
    request("search", st.fixed_dictionaries({"query": st.text(), "scope": st.just("chat")}), chat_id=unknown),
    request("read.receipt", st.fixed_dictionaries({"message_id": unknown})),
    request(
        "read.receipt", st.fixed_dictionaries({"message_id": unknown, "chat_id": st.just("android:default")})
    ),
    request("channel.create", st.fixed_dictionaries({"name": blank})),
    request(
        "channel.create",
        st.fixed_dictionaries({"name": st.text(min_size=101, max_size=120).filter(str.strip)}),
    ),
    request("channel.create", st.fixed_dictionaries({"name": st.just("n"), "parent_chat_id": unknown})),
    request("channel.create", st.fixed_dictionaries({"name": st.just("n"), "kind": st.just("thread")})),
    request("channel.rename", st.fixed_dictionaries({"name": st.text(min_size=1)}), chat_id=unknown),
    request("channel.rename", st.fixed_dictionaries({"name": blank})),
    request("channel.delete", st.just({}), chat_id=st.just("android:default") | unknown),
    request("channel.delete", st.just({})),  # the default
    request("channel.set_default", st.just({}), chat_id=unknown),
    request(
        "media.upload.start",
        st.fixed_dictionaries({"media_ref": st.text(max_size=5), "size": st.integers(MAX_MEDIA + 1)}),
    ),
    request("media.upload.end", st.fixed_dictionaries({"media_ref": st.text(), "sha256": st.text()})),
    request("media.pull", st.fixed_dictionaries({"media_id": unknown})),
)
# Payloads with a field of the wrong type, for every chat frame type that has fields.
FIELDS = {
    "message.send": ["text", "media_refs", "reply_to"],
    "history": ["limit", "before_message_id"],
    "search": ["query", "scope"],
    "read.receipt": ["message_id", "chat_id"],
    "channel.create": ["name", "kind", "parent_chat_id"],
    "channel.rename": ["name"],
    "media.upload.start": ["media_ref", "size", "kind"],
    "media.upload.end": ["media_ref", "sha256"],
    "media.pull": ["media_id"],
}
wrong_values = st.lists(st.integers(), min_size=1) | st.just({"x": 1}) | st.booleans().map(lambda b: [b])
wrong_shapes = st.sampled_from(sorted(FIELDS)).flatmap(
    lambda t: st.builds(
        lambda payload, i: frame(t, payload, id=i),
        st.dictionaries(st.sampled_from(FIELDS[t]), wrong_values, min_size=1),
        ids,
    )
)
broken_envelopes = st.one_of(
    st.builds(
        lambda t, v: {"v": v, "type": t, "payload": {}},
        st.sampled_from(CHAT_TYPES),
        junk.filter(lambda v: v != 1 or v is True),
    ),
    st.builds(
        lambda t, c: frame(t, {}, chat_id=c),
        st.sampled_from(CHAT_TYPES),
        junk.filter(lambda v: not isinstance(v, str)),
    ),
    st.builds(frame, st.sampled_from(CHAT_TYPES), junk.filter(lambda v: not isinstance(v, dict))),
)
frames = st.one_of(
    refused_requests.map(json.dumps),
    wrong_shapes.map(json.dumps),
    broken_envelopes.map(json.dumps),
    st.text(max_size=40),
    st.binary(min_size=1, max_size=40),  # media bytes with no upload open
)


@dataclass
class Seeded:
    server: GatewayServer
    client: IrisClient
    snapshot: dict[str, Any]


async def snapshot(client: IrisClient, chan: str) -> dict[str, Any]:
    """What the app can see of the stored chat: channels (with read receipts), and the history
    of every channel."""
    listed = await client.request("channel.list")
    pages = {
        c["chat_id"]: (await history(client, {"limit": 200}, chat_id=c["chat_id"]))["payload"]
        for c in listed["payload"]["channels"]
    }
    return {"channels": listed["payload"], "history": pages, "chan": chan}


@pytest.fixture
async def seeded(make_gateway: GatewayFactory) -> Seeded:
    server = await make_gateway(gateway_max_frames_per_second=100_000, gateway_max_media_bytes=MAX_MEDIA)
    client = await server.connect()
    chan = (await client.request("channel.create", {"name": "Other"}))["payload"]["chat_id"]
    await client.request("channel.create", {"name": "T", "parent_chat_id": chan})
    await upload(client, "pic", b"p" * 10)
    first = await say(client, "first words")
    await client.request("message.send", {"text": "with a picture", "media_refs": ["pic"]})
    await say(client, "elsewhere", chat_id=chan)
    await client.send_frame("read.receipt", {"message_id": first["payload"]["message_id"]})
    client.frames.clear()
    return Seeded(server, client, await snapshot(client, chan))


@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(batch=st.lists(frames, min_size=1, max_size=8))
async def test_malformed_chat_frames_leave_history_unchanged(
    seeded: Seeded, batch: list[str | bytes]
) -> None:
    client = seeded.client
    for data in batch:
        await client.send_raw(data)
    assert (await client.request("ping"))["type"] == "pong"
    answers = [f for f in client.frames if f["type"] != "pong"]
    assert all(f["type"] == "error" for f in answers), answers
    assert {f["payload"]["code"] for f in answers} <= {"unsupported", "not_found", "media_too_large"}, answers
    client.frames.clear()
    assert client.ws.close_code is None
    assert await snapshot(client, seeded.snapshot["chan"]) == seeded.snapshot
    client.frames.clear()
