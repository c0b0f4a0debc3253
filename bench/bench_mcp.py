"""MCP tool call round trips: ours against the SDK's own server answering a constant, over the same
transport in the same run; and what `phoneuse-runtime mcp` attached to a server adds to a call
against the same call over gRPC.

- Streamable HTTP: `serve --mcp-listen` (bearer token, the sim's SET_CLIPBOARD {"text": "x"})
  against bench/_mcp_bare.py http (the SDK's low-level Server, one tool answering a constant),
  in both revisions the SDK's client speaks (2026-07-28 by default, 2025-11-25 by handshake).
- stdio: `phoneuse-runtime mcp` running the phone itself against bench/_mcp_bare.py stdio.
- attach: `phoneuse-runtime mcp` attached to a `serve` against grpc.aio's Execute to that serve.

The SDK's client runs here; each server in its own process. Goal: ours at least 0.7x bare's
throughput. Each printed row is the round with the median throughput.

    python bench/bench_mcp.py [--calls 400] [--warmup 40] [--concurrency 1 8] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
from _common import (
    AUTH,
    BENCH_DIR,
    TOKEN,
    ServeProcess,
    child_env,
    machine,
    percentile,
    ratio,
    stop_process,
    table,
)
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from phoneuse_runtime.rpc import protocol_pb2 as pb
from phoneuse_runtime.rpc import protocol_pb2_grpc as pb_grpc

TARGET = 0.7
ARGS = {"text": "x"}
SERVE_ENV = {
    "PHONEUSE_MCP_LISTEN": "127.0.0.1:0",
    "PHONEUSE_GATEWAY": "false",
    "PHONEUSE_MEMORY_INGEST": "false",
}


@dataclass(frozen=True)
class Run:
    name: str
    concurrency: int
    calls: int
    elapsed_s: float
    latencies_ms: list[float]

    @property
    def rps(self) -> float:
        return self.calls / self.elapsed_s

    @property
    def p50(self) -> float:
        return percentile(self.latencies_ms, 50)

    @property
    def p99(self) -> float:
        return percentile(self.latencies_ms, 99)


async def measure(
    name: str, call: Callable[[], Awaitable[None]], calls: int, warmup: int, concurrency: int
) -> Run:
    for _ in range(warmup):
        await call()
    latencies: list[float] = []
    left = calls

    async def worker() -> None:
        nonlocal left
        while left > 0:
            left -= 1
            started = time.perf_counter()
            await call()
            latencies.append((time.perf_counter() - started) * 1000)

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return Run(name, concurrency, calls, time.perf_counter() - started, sorted(latencies))


def tool_call(client: Client, name: str = "set_clipboard") -> Callable[[], Awaitable[None]]:
    async def call() -> None:
        result = await client.call_tool(name, ARGS)
        assert not result.is_error, result.content

    return call


@asynccontextmanager
async def http_client(url: str, mode: str, token: str | None) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    http = create_mcp_http_client(headers=headers)
    async with http, Client(streamable_http_client(url, http_client=http), mode=mode) as client:
        yield client


class Bare:
    """bench/_mcp_bare.py http, its port read from its stdout."""

    def __enter__(self) -> str:
        self.proc = subprocess.Popen(
            [sys.executable, str(BENCH_DIR / "_mcp_bare.py"), "http"],
            stdout=subprocess.PIPE,
            text=True,
            env=child_env(),
        )
        assert self.proc.stdout is not None
        port = int(self.proc.stdout.readline())
        return f"http://127.0.0.1:{port}/mcp"

    def __exit__(self, *exc: object) -> None:
        stop_process(self.proc)


def record_of(served: ServeProcess) -> dict[str, Any]:
    data_dir = Path(served._tmp.name) / "data"  # type: ignore[union-attr]
    record: dict[str, Any] = json.loads((data_dir / "server.json").read_text())
    record["data_dir"] = str(data_dir)
    return record


async def http_rounds(args: argparse.Namespace) -> list[list[str]]:
    rows = []
    for mode in ("auto", "legacy"):
        for concurrency in args.concurrency:
            pairs = []
            for _ in range(args.rounds):
                with ServeProcess(env=SERVE_ENV) as served, Bare() as bare_url:
                    url = record_of(served)["mcp"]
                    async with http_client(url, mode, TOKEN) as ours_client:
                        ours = await measure(
                            "ours", tool_call(ours_client), args.calls, args.warmup, concurrency
                        )
                    async with http_client(bare_url, mode, None) as bare_client:
                        bare = await measure(
                            "bare", tool_call(bare_client), args.calls, args.warmup, concurrency
                        )
                pairs.append((ours, bare))
            ours, bare = sorted(pairs, key=lambda p: p[0].rps / p[1].rps)[len(pairs) // 2]
            rows.append(row(f"http {mode}", concurrency, ours, bare))
    return rows


def stdio_params(*argv: str, env: dict[str, str] | None = None) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=list(argv), env={**child_env(), **(env or {})})


async def stdio_rounds(args: argparse.Namespace) -> list[list[str]]:
    rows = []
    for concurrency in args.concurrency:
        pairs = []
        for _ in range(args.rounds):
            with tempfile.TemporaryDirectory(prefix="phoneuse-bench-") as tmp:
                env = {
                    "PHONEUSE_DATA_DIR": str(Path(tmp) / "data"),
                    "PHONEUSE_GRPC_LISTEN": "127.0.0.1:0",
                    **SERVE_ENV,
                    "PHONEUSE_MCP_LISTEN": "",
                }
                ours_params = stdio_params("-m", "phoneuse_runtime", "mcp", "--standalone", env=env)
                async with Client(ours_params) as client:
                    ours = await measure("ours", tool_call(client), args.calls, args.warmup, concurrency)
            async with Client(stdio_params(str(BENCH_DIR / "_mcp_bare.py"), "stdio")) as client:
                bare = await measure("bare", tool_call(client), args.calls, args.warmup, concurrency)
            pairs.append((ours, bare))
        ours, bare = sorted(pairs, key=lambda p: p[0].rps / p[1].rps)[len(pairs) // 2]
        rows.append(row("stdio", concurrency, ours, bare))
    return rows


async def attach_rounds(args: argparse.Namespace) -> list[list[str]]:
    rows = []
    for concurrency in args.concurrency:
        pairs = []
        for _ in range(args.rounds):
            with ServeProcess(env={**SERVE_ENV, "PHONEUSE_MCP_LISTEN": ""}) as served:
                record = record_of(served)
                env = {"PHONEUSE_DATA_DIR": record["data_dir"], "PHONEUSE_TOKEN": TOKEN}
                attached = stdio_params("-m", "phoneuse_runtime", "mcp", env=env)
                async with Client(attached) as client:
                    ours = await measure("attached", tool_call(client), args.calls, args.warmup, concurrency)
                async with grpc.aio.insecure_channel(record["unix"]) as channel:
                    stub = pb_grpc.AndroidRuntimeStub(channel)

                    async def execute(stub: pb_grpc.AndroidRuntimeStub = stub) -> None:
                        request = pb.ActionRequest(
                            action_type="SET_CLIPBOARD",
                            params=ARGS,
                            request_id=uuid.uuid4().hex,
                            timeout_ms=30_000,
                        )
                        response = await stub.Execute(request, metadata=AUTH)
                        assert response.success, response.error

                    direct = await measure("grpc", execute, args.calls, args.warmup, concurrency)
            pairs.append((ours, direct))
        ours, direct = sorted(pairs, key=lambda p: p[0].rps / p[1].rps)[len(pairs) // 2]
        rows.append(
            [
                "attach vs gRPC",
                str(concurrency),
                f"{ours.rps:.0f}",
                f"{direct.rps:.0f}",
                ratio(ours.rps, direct.rps),
                f"{ours.p50:.2f}",
                f"{direct.p50:.2f}",
                f"+{ours.p50 - direct.p50:.2f} ms",
            ]
        )
    return rows


def row(name: str, concurrency: int, ours: Run, bare: Run) -> list[str]:
    share = ours.rps / bare.rps
    return [
        name,
        str(concurrency),
        f"{ours.rps:.0f}",
        f"{bare.rps:.0f}",
        f"{share:.2f}x" + ("" if share >= TARGET else " (below goal)"),
        f"{ours.p50:.2f}",
        f"{bare.p50:.2f}",
        f"p99 {ours.p99:.1f}/{bare.p99:.1f}",
    ]


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--warmup", type=int, default=40)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--only", choices=["http", "stdio", "attach"], nargs="+", default=["http", "stdio", "attach"]
    )
    args = parser.parse_args()
    print(f"MCP tool call round trips ({machine()}); goal: ours >= {TARGET}x bare's throughput")
    rows: list[list[str]] = []
    if "http" in args.only:
        rows += await http_rounds(args)
    if "stdio" in args.only:
        rows += await stdio_rounds(args)
    if "attach" in args.only:
        rows += await attach_rounds(args)
    headers = ["transport", "conc", "ours/s", "peer/s", "ours/peer", "ours p50 ms", "peer p50 ms", "note"]
    print(table(headers, rows))
    medians = [float(r[4].split("x")[0]) for r in rows if not r[0].startswith("attach")]
    if medians:
        print(f"median ours/bare over the transports: {statistics.median(medians):.2f}x")


if __name__ == "__main__":
    asyncio.run(main())
