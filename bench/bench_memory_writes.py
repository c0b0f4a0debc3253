"""Blocking file writes and a bounded sim: what a large memory store costs REMEMBER and unrelated
queries, and the RSS a flood of SIM_RECEIVE_SMS leaves behind.

Starts `phoneuse-runtime serve --device sim` with a data dir whose memory.json already holds
`--items` items, then, over the wire:

1. **idle**: `--queries` CONTACTS queries one after another (latency of each);
2. **REMEMBER alone**: `--remembers` REMEMBERs one after another;
3. **under writes**: `--writers` clients send REMEMBERs back to back while one client sends
   `--queries` CONTACTS queries one after another; both latencies are recorded.

With `--sms N` it then sends N `SIM_RECEIVE_SMS` (`--body` characters each, from `--senders`
numbers in turn, at `--concurrency`) and prints the server's RSS before and after, each the
median of five samples after `--idle` s without calls.

    python bench/bench_memory_writes.py [--items 10000] [--queries 300] [--remembers 100]
                                        [--writers 4] [--sms 85000] [--body 20] [--senders 1]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import grpc
import psutil
from _common import AUTH, ServeProcess, machine, percentile, table

from phoneuse_runtime.rpc import protocol_pb2 as pb
from phoneuse_runtime.rpc import protocol_pb2_grpc as pb_grpc

MIB = 1024 * 1024


def memory_file(items: int) -> str:
    """memory.json's content with `items` plausible items (~230 bytes of JSON each)."""
    rows = [
        {
            "id": f"mem-{i}",
            "kind": ("person", "place", "fact", "preference")[i % 4],
            "name": f"item {i}",
            "text": f"something the agent was told to remember, number {i}, with a few more words",
            "tags": ["bench", f"t{i % 10}"],
            "related_to": [],
            "created_ms": 1_700_000_000_000 + i,
            "updated_ms": 1_700_000_000_000 + i,
        }
        for i in range(1, items + 1)
    ]
    return json.dumps({"next_id": items + 1, "items": rows})


@dataclass
class Latencies:
    label: str
    ms: list[float]
    elapsed_s: float = 0.0  # of the whole phase

    def row(self) -> list[str]:
        values = sorted(self.ms)
        return [
            self.label,
            str(len(values)),
            f"{len(values) / self.elapsed_s:,.0f}" if self.elapsed_s else "",
            f"{percentile(values, 50):.1f}",
            f"{percentile(values, 99):.1f}",
            f"{max(values):.1f}",
        ]


class Client:
    def __init__(self, channel: grpc.aio.Channel) -> None:
        self.stub = pb_grpc.AndroidRuntimeStub(channel)

    async def execute(self, action: str, params: dict[str, str]) -> float:
        request = pb.ActionRequest(
            action_type=action, params=params, request_id=uuid.uuid4().hex, timeout_ms=60_000
        )
        started = time.perf_counter()
        response = await self.stub.Execute(request, metadata=AUTH, timeout=120)
        elapsed = (time.perf_counter() - started) * 1000
        if not response.success:
            raise RuntimeError(f"{action} failed: {response.error}")
        return elapsed

    async def query(self) -> float:
        request = pb.QueryRequest(query_type=pb.CONTACTS, filters={"name": "alice"}, limit=5)
        started = time.perf_counter()
        response = await self.stub.Query(request, metadata=AUTH, timeout=120)
        elapsed = (time.perf_counter() - started) * 1000
        if response.total_count != 1:
            raise RuntimeError(f"CONTACTS name=alice found {response.total_count}")
        return elapsed


async def memory_phases(port: int, *, queries: int, remembers: int, writers: int) -> list[Latencies]:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        client = Client(channel)
        for _ in range(20):  # warm-up: connections, first-call imports
            await client.query()
        started = time.perf_counter()
        idle = Latencies("CONTACTS, idle", [await client.query() for _ in range(queries)])
        idle.elapsed_s = time.perf_counter() - started
        started = time.perf_counter()
        alone = Latencies(
            "REMEMBER, alone",
            [await client.execute("REMEMBER", {"name": f"alone {i}"}) for i in range(remembers)],
        )
        alone.elapsed_s = time.perf_counter() - started
        written = Latencies("REMEMBER, under writes", [])
        stop = asyncio.Event()

        async def write(n: int) -> None:
            i = 0
            while not stop.is_set():
                written.ms.append(await client.execute("REMEMBER", {"name": f"w{n}-{i}"}))
                i += 1

        loops = [asyncio.ensure_future(write(n)) for n in range(writers)]
        busy = Latencies(f"CONTACTS, {writers} REMEMBER loops", [])
        started = time.perf_counter()
        try:
            for _ in range(queries):
                busy.ms.append(await client.query())
        finally:
            stop.set()
            await asyncio.gather(*loops)
        busy.elapsed_s = written.elapsed_s = time.perf_counter() - started
        return [idle, busy, alone, written]


async def flood(port: int, *, count: int, senders: int, concurrency: int, body: int) -> float:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        client = Client(channel)
        queue = iter(range(count))

        async def worker() -> None:
            for i in queue:
                number = f"+1 555 {i % senders // 10_000:03d} {i % senders % 10_000:04d}"
                text = f"flood message {i} ".ljust(body, "x")
                await client.execute("SIM_RECEIVE_SMS", {"from": number, "body": text})

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return time.perf_counter() - started


def rss(pid: int, idle_s: float) -> float:
    """Median RSS in MiB of five samples over a second, after `idle_s` without calls."""
    time.sleep(idle_s)
    samples: list[int] = []
    for _ in range(5):
        samples.append(int(psutil.Process(pid).memory_info().rss))
        time.sleep(0.25)
    return statistics.median(samples) / MIB


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--items", type=int, default=10_000, help="items memory.json holds at start")
    parser.add_argument("--queries", type=int, default=1000, help="CONTACTS queries per phase")
    parser.add_argument("--remembers", type=int, default=100, help="REMEMBERs one after another")
    parser.add_argument("--writers", type=int, default=4, help="concurrent REMEMBER loops")
    parser.add_argument("--sms", type=int, default=0, help="SIM_RECEIVE_SMS to send after (0: none)")
    parser.add_argument("--senders", type=int, default=1, help="distinct numbers the SMS come from")
    parser.add_argument("--body", type=int, default=20, help="characters in each SMS body")
    parser.add_argument("--concurrency", type=int, default=32, help="concurrent SIM_RECEIVE_SMS")
    parser.add_argument("--idle", type=float, default=2.0, help="seconds idle before an RSS sample")
    args = parser.parse_args(argv)

    content = memory_file(args.items)

    def prepare(data_dir: Path) -> None:
        (data_dir / "memory.json").write_text(content, encoding="utf-8")

    print(f"memory.json with {args.items:,} items ({len(content) / MIB:.1f} MiB); {machine()}")
    with ServeProcess(prepare=prepare) as server:
        phases = asyncio.run(
            memory_phases(server.port, queries=args.queries, remembers=args.remembers, writers=args.writers)
        )
        print()
        print(table(["phase", "calls", "calls/s", "p50 ms", "p99 ms", "max ms"], [p.row() for p in phases]))
        if args.sms:
            before = rss(server.pid, args.idle)
            elapsed = asyncio.run(
                flood(
                    server.port,
                    count=args.sms,
                    senders=args.senders,
                    concurrency=args.concurrency,
                    body=args.body,
                )
            )
            after = rss(server.pid, args.idle)
            print(
                f"\n{args.sms:,} SIM_RECEIVE_SMS of {args.body:,} characters from {args.senders:,} "
                f"number(s) in {elapsed:.1f} s "
                f"({args.sms / elapsed:,.0f}/s): RSS {before:.1f} MiB before, {after:.1f} MiB after "
                f"({after - before:+.1f} MiB)"
            )


if __name__ == "__main__":
    main()
