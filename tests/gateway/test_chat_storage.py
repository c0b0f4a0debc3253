"""The agent's CHAT_REPLY cannot fill the disk either: its replies count against the chat's
quota and the outbox copies against each device's, as an app's messages do (chat/test_quota.py)."""

from __future__ import annotations

from .chat.test_quota import BODY, OUTBOX, QUOTA, stored
from .conftest import GatewayFactory


async def test_an_agent_flood_of_replies_is_bounded_too(make_gateway: GatewayFactory) -> None:
    server = await make_gateway(gateway_chat_max_bytes=QUOTA, gateway_outbox_max_bytes=OUTBOX)
    await (await server.connect()).close()
    for i in range(30):  # 3 MB of replies, with as much reasoning
        await server.grpc.ok("CHAT_REPLY", {"text": f"r{i:03d} " + "y" * BODY, "reasoning": "z" * BODY})
    chat, outboxes, heads = stored(server.data_dir)
    assert chat <= QUOTA and all(size <= OUTBOX for size in outboxes.values())
    assert heads[-1] == "r029" and heads == [f"r{i:03d}" for i in range(30 - len(heads), 30)]
