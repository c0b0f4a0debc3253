"""Filling the phone's disk through the chat (issue 16, finding 18): an app's messages and the
agent's CHAT_REPLYs are bounded by a documented quota of message bytes and a retention in days
(config/settings.py's gateway_chat_*), and each device's outbox copies by gateway_outbox_max_bytes;
the oldest go first, the newest are kept."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from phoneuse_runtime.gateway.db import db_path

from ..gateway.conftest import GatewayFactory

QUOTA = 1024 * 1024
OUTBOX = 1024 * 1024
BODY = 100_000


def stored(data_dir: Path) -> tuple[int, dict[str, int], list[str]]:
    """The chat's message bytes, each device's outbox bytes, and the texts' first words, from
    the file itself."""
    conn = sqlite3.connect(db_path(data_dir))
    try:
        chat = conn.execute(
            "SELECT coalesce(sum(length(CAST(text AS BLOB)) + coalesce(length(CAST(reasoning AS BLOB)), 0)"
            " + length(CAST(media AS BLOB))), 0) FROM chat_messages"
        ).fetchone()[0]
        outboxes = dict(
            conn.execute(
                "SELECT pairing_id, sum(length(CAST(frame AS BLOB))) FROM outbox GROUP BY pairing_id"
            ).fetchall()
        )
        heads = [r[0].split()[0] for r in conn.execute("SELECT text FROM chat_messages ORDER BY seq")]
    finally:
        conn.close()
    return int(chat), {k: int(v) for k, v in outboxes.items()}, heads


def size_on_disk(data_dir: Path) -> int:
    path = db_path(data_dir)
    return sum(p.stat().st_size for p in (path, path.with_name(path.name + "-wal")) if p.exists())


async def test_a_flood_of_messages_stays_under_the_quota_newest_kept(make_gateway: GatewayFactory) -> None:
    """A paired app floods the chat with large messages to fill the phone's disk."""
    # The quota on its own: the frame rate limit (50 a second) would otherwise stop a flood that
    # the server answers fast enough (as it does since masking got 30 times faster).
    server = await make_gateway(
        gateway_chat_max_bytes=QUOTA, gateway_outbox_max_bytes=OUTBOX, gateway_max_frames_per_second=100_000
    )
    sender = await server.connect()
    offline = [server.pair().token for _ in range(2)]  # two more devices: each gets an outbox copy
    for token in offline:
        await (await server.connect(token)).close()
    for i in range(80):  # 8 MB of text
        sent = await sender.request("message.send", {"text": f"m{i:03d} " + "x" * BODY})
        assert sent["type"] == "message", sent
    chat, outboxes, heads = stored(server.data_dir)
    assert chat <= QUOTA
    assert len(outboxes) == 2 and all(size <= OUTBOX for size in outboxes.values()), outboxes
    assert heads and heads[-1] == "m079" and heads == [f"m{i:03d}" for i in range(80 - len(heads), 80)]
    # The full-text index went with them: the oldest are not found, the newest are.
    assert (await sender.request("search", {"query": "m000"}))["payload"]["hits"] == []
    assert len((await sender.request("search", {"query": "m079"}))["payload"]["hits"]) == 1
    history = await sender.request("history", {"limit": 200})
    assert [m["text"].split()[0] for m in history["payload"]["messages"]][-1] == "m079"
    # The file stays near the quotas (without them: 8 MB of text, its index and two copies).
    assert size_on_disk(server.data_dir) < 16 * 1024 * 1024
    # A device that was offline throughout syncs from where it was: the start is gone, so it is
    # told to reset, and it gets what the outbox still holds from then on.
    again = await server.connect(offline[0])
    done = await again.request("sync", {"cursor": 0})
    assert done["type"] == "sync.done" and done["payload"].get("reset") is True, done


async def test_messages_past_the_retention_go(make_gateway: GatewayFactory) -> None:
    """A chat kept forever fills the phone's disk: messages past the retention go."""
    server = await make_gateway(gateway_chat_retention_days=1)
    sender = await server.connect()
    old = await sender.request("message.send", {"text": "from last year"})
    conn = sqlite3.connect(db_path(server.data_dir))
    conn.execute(
        "UPDATE chat_messages SET ts = ts - 2 * 86400000 WHERE message_id = ?",
        (old["payload"]["message_id"],),
    )
    conn.commit()
    conn.close()
    await sender.request("message.send", {"text": "today"})
    _, _, heads = stored(server.data_dir)
    assert heads == ["today"]


async def test_an_agent_flood_of_replies_is_bounded_too(make_gateway: GatewayFactory) -> None:
    """An agent with a valid token floods CHAT_REPLY to fill the phone's disk."""
    server = await make_gateway(gateway_chat_max_bytes=QUOTA, gateway_outbox_max_bytes=OUTBOX)
    await (await server.connect()).close()
    for i in range(30):  # 3 MB of replies, with as much reasoning
        await server.grpc.ok("CHAT_REPLY", {"text": f"r{i:03d} " + "y" * BODY, "reasoning": "z" * BODY})
    chat, outboxes, heads = stored(server.data_dir)
    assert chat <= QUOTA and all(size <= OUTBOX for size in outboxes.values())
    assert heads[-1] == "r029" and heads == [f"r{i:03d}" for i in range(30 - len(heads), 30)]
