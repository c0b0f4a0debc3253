"""Secrets at rest (issue 16, finding 13): a one-time code that reaches the phone, by SMS or in a
chat message, is on no file of the data dir, read byte for byte with the write-ahead logs."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

from phoneuse_runtime.memory import Memory
from phoneuse_runtime.owner.privacy import mask_secrets

from ..gateway.conftest import GatewayFactory
from ..gateway.test_privacy import digits
from ..privacy_corpus import CODE_MESSAGES


def is_notification(frame: dict[str, Any], *, body: str) -> bool:
    return bool(frame["type"] == "notification" and frame["payload"]["body"] == body)


def raw(data_dir: Path, name: str) -> bytes:
    """The database file and its write-ahead log, as bytes on the disk."""
    return b"".join(p.read_bytes() for p in (data_dir / name, data_dir / f"{name}-wal") if p.exists())


async def test_an_sms_code_is_in_no_file_after_it_arrives(make_gateway: GatewayFactory) -> None:
    """A one-time code arrives by SMS and stays on disk for whoever reads the data dir."""
    server = await make_gateway()
    offline = server.pair().token  # a paired device that is not connected: its outbox keeps it
    live = await server.connect()
    first = await server.connect(offline)
    cursor = (await first.request("sync", {"cursor": 0}))["payload"]["cursor"]
    await first.close()
    codes = [(m, c) for m, c in CODE_MESSAGES[:12]] + [("Ваш код: 662211", "662211")]
    for body, _ in codes:
        await server.grpc.ok("SIM_RECEIVE_SMS", {"from": "+15550001", "body": body})
    for body, _ in codes:
        # Live, the connected app sees the code as it came: the owner may need it on screen now.
        await live.next_where(partial(is_notification, body=body))
    memory = server.app.component("memory")
    assert isinstance(memory, Memory)
    await memory.settled()
    # What is kept for the device that was offline (and for every later sync) is masked.
    again = await server.connect(offline)
    done = await again.request("sync", {"cursor": cursor})
    assert done["type"] == "sync.done", done
    replayed = [f["payload"]["body"] for f in again.received if f["type"] == "notification"]
    # (each SMS shows as the message and as the Messages app's notification of it)
    assert set(replayed) == {mask_secrets(body) for body, _ in codes}
    gateway_bytes = raw(server.data_dir, "gateway.sqlite3")
    memory_bytes = raw(server.data_dir, "memory.db")
    assert b"+15550001" in gateway_bytes and b"+15550001" in memory_bytes  # the files do hold the SMSs
    for _, code in codes:
        for form in {code, digits(code)}:
            assert form.encode() not in gateway_bytes, form
            assert form.encode() not in memory_bytes, form


async def test_a_chat_message_with_a_code_is_stored_masked(make_gateway: GatewayFactory) -> None:
    """A chat message carrying a door code and a password is stored in clear."""
    server = await make_gateway()
    app = await server.connect()
    other = await server.connect()
    sent = await app.request("message.send", {"text": "the door code is 4821 9930, password: hunter2"})
    assert sent["payload"]["text"] == "the door code is 4821 9930, password: hunter2"  # live: as sent
    live = await other.next("message")
    assert live["payload"]["text"] == sent["payload"]["text"]
    history = await app.request("history", {})
    assert [m["text"] for m in history["payload"]["messages"]] == [
        "the door code is [code], password: [password]"
    ]
    stored = raw(server.data_dir, "gateway.sqlite3")
    for secret in (b"4821 9930", b"48219930", b"hunter2"):
        assert secret not in stored
