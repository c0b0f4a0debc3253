"""MCP sessions on a phone (issue 25, item 14): what each open session costs the server, and what
subscribed sessions add to the phone's event traffic.

- fan-out: N gRPC Execute calls (SET_CLIPBOARD, two events each, every one announced to each
  session subscribed to phoneuse://events) with K subscribed sessions (the SDK's client, 2025
  revision), against the same calls with none; printed as a ratio, ours with K against K = 0.
- memory: the server's RSS after opening the K sessions, against before (per session).
- the bound: 2,000 sessions asked for against a server with the default `mcp_max_sessions`:
  how many were opened and how many refused (503).

Each server is `serve` in its own process; the clients run here.

    python bench/bench_mcp_sessions.py [--calls 400] [--sessions 16 64] [--flood 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from contextlib import AsyncExitStack
from typing import Any

import grpc
import httpx2
import psutil
from _common import AUTH, TOKEN, ServeProcess, machine, ratio, table
from bench_mcp import http_client, record_of

from phoneuse_runtime.rpc import protocol_pb2 as pb
from phoneuse_runtime.rpc import protocol_pb2_grpc as pb_grpc

SERVE_ENV = {
    "PHONEUSE_MCP_LISTEN": "127.0.0.1:0",
    "PHONEUSE_GATEWAY": "false",
    "PHONEUSE_MEMORY_INGEST": "false",
}
EVENTS_URI = "phoneuse://events"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "b", "version": "0"},
    },
}


async def calls_s(port: int, calls: int) -> float:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = pb_grpc.AndroidRuntimeStub(channel)
        started = time.perf_counter()
        for i in range(calls):
            request = pb.ActionRequest(
                action_type="SET_CLIPBOARD", params={"text": f"x{i}"}, request_id=f"r{i}", timeout_ms=10_000
            )
            response = await stub.Execute(request, metadata=AUTH, timeout=30)
            assert response.success, response.error
        return time.perf_counter() - started


async def with_sessions(sessions: int, calls: int) -> tuple[float, float]:
    """(seconds for the calls, server RSS added by the sessions in MB)."""
    env = {**SERVE_ENV, "PHONEUSE_MCP_MAX_SESSIONS": str(max(sessions, 1))}
    with ServeProcess(env=env) as served:
        url = record_of(served)["mcp"]
        server = psutil.Process(served.pid)
        await calls_s(served.port, 20)  # warm
        before = server.memory_info().rss
        async with AsyncExitStack() as stack:
            for _ in range(sessions):
                client = await stack.enter_async_context(http_client(url, "legacy", TOKEN))
                await client.subscribe_resource(EVENTS_URI)
            added_mb = (server.memory_info().rss - before) / 2**20
            return await calls_s(served.port, calls), added_mb


async def flood(asked: int) -> tuple[int, int, float]:
    """(opened, refused, server RSS added in MB) for `asked` sessions against the defaults."""
    with ServeProcess(env=SERVE_ENV) as served:
        url = record_of(served)["mcp"]
        server = psutil.Process(served.pid)
        before = server.memory_info().rss
        statuses: dict[int, int] = {}
        headers: dict[str, Any] = {
            "authorization": f"Bearer {TOKEN}",
            "accept": "application/json, text/event-stream",
        }
        async with httpx2.AsyncClient() as http:
            for _ in range(asked):
                answer = await http.post(url, json=INITIALIZE, headers=headers)
                statuses[answer.status_code] = statuses.get(answer.status_code, 0) + 1
        added = (server.memory_info().rss - before) / 2**20
        return statuses.get(200, 0), statuses.get(503, 0), added


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--sessions", type=int, nargs="+", default=[16, 64])
    parser.add_argument("--flood", type=int, default=2000)
    args = parser.parse_args()
    print(machine())
    base_s, _ = await with_sessions(0, args.calls)
    rows = [["0", f"{base_s:.2f}", "1.00x", "-", "-"]]
    for k in args.sessions:
        took, added = await with_sessions(k, args.calls)
        rows.append([str(k), f"{took:.2f}", ratio(took, base_s), f"{added:.1f}", f"{added * 1024 / k:.0f}"])
    print(f"{args.calls} Execute calls (2 events each) with K sessions subscribed to {EVENTS_URI}")
    print(table(["K", "seconds", "vs K=0", "RSS added MB", "KB/session"], rows))
    opened, refused, added = await flood(args.flood)
    print(
        f"{args.flood} sessions asked of the defaults: {opened} opened, {refused} refused (503), "
        f"+{added:.1f} MB"
    )


if __name__ == "__main__":
    asyncio.run(main())
