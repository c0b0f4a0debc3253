"""Execute round trips: bare grpc.aio with the same messages vs our server on the sim device.

Each server runs in its own process (bench/_servers.py); the grpc.aio client runs here, so
client and server never share an event loop. Ours executes SET_CLIPBOARD {"text": "x"} with a
fresh request_id per call and token auth on; bare answers a fixed ActionResponse. Both are sent
the same request and headers. Each round starts a fresh pair of servers; each printed row is the
round with the median throughput.

    python bench/bench_execute.py [--requests 3000] [--warmup 300] [--concurrency 1 32] [--rounds 3]
    python bench/bench_execute.py --profile /tmp/ours.prof   # cProfile ours during measurement
"""

from __future__ import annotations

import argparse
import asyncio
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
from _common import AUTH, EXECUTE, ServerProcess, machine, percentile, ratio, table

from phoneuse_runtime.rpc import protocol_pb2 as pb

THROUGHPUT_TARGET = 0.8


@dataclass(frozen=True)
class Run:
    server: str
    concurrency: int
    requests: int
    failures: int
    elapsed_s: float
    latencies_ms: list[float]
    server_cpu_s: float
    client_cpu_s: float

    @property
    def rps(self) -> float:
        return self.requests / self.elapsed_s

    @property
    def server_cpu_us(self) -> float:
        return self.server_cpu_s / self.requests * 1e6

    @property
    def client_cpu_us(self) -> float:
        return self.client_cpu_s / self.requests * 1e6

    @property
    def p50(self) -> float:
        return percentile(self.latencies_ms, 50)

    @property
    def p99(self) -> float:
        return percentile(self.latencies_ms, 99)


def make_request() -> pb.ActionRequest:
    """The same request to both servers (with the same headers); bare ignores it."""
    return pb.ActionRequest(
        action_type="SET_CLIPBOARD", params={"text": "x"}, request_id=uuid.uuid4().hex, timeout_ms=10_000
    )


async def load(
    call: Any,
    make_request: Callable[[], pb.ActionRequest],
    metadata: Sequence[tuple[str, str]] | None,
    *,
    total: int,
    concurrency: int,
) -> tuple[float, list[float], int]:
    """`total` calls from `concurrency` workers; returns elapsed seconds, sorted latencies (ms), failures."""
    latencies: list[float] = []
    failures = 0
    remaining = total

    async def worker() -> None:
        nonlocal remaining, failures
        while remaining > 0:
            remaining -= 1
            request = make_request()
            started = time.perf_counter()
            response: pb.ActionResponse = await call(request, metadata=metadata, timeout=30)
            latencies.append((time.perf_counter() - started) * 1000)
            if not response.success:
                failures += 1

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    elapsed = time.perf_counter() - started
    latencies.sort()
    return elapsed, latencies, failures


async def measure(
    server: ServerProcess, label: str, *, requests: int, warmup: int, levels: Sequence[int]
) -> list[Run]:
    # Both get the same bytes, the token's header included: on a machine where the client shares
    # the CPUs with the server, a header sent to ours only would also count as ours' cost.
    metadata = AUTH
    runs: list[Run] = []
    async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        call = channel.unary_unary(
            EXECUTE,
            request_serializer=pb.ActionRequest.SerializeToString,
            response_deserializer=pb.ActionResponse.FromString,
        )
        for concurrency in levels:
            await load(call, make_request, metadata, total=warmup, concurrency=concurrency)
            server.profiling(True)
            server_cpu, client_cpu = server.cpu_seconds(), time.process_time()
            elapsed, latencies, failures = await load(
                call, make_request, metadata, total=requests, concurrency=concurrency
            )
            server_cpu, client_cpu = server.cpu_seconds() - server_cpu, time.process_time() - client_cpu
            server.profiling(False)
            runs.append(
                Run(label, concurrency, requests, failures, elapsed, latencies, server_cpu, client_cpu)
            )
            print(f"  {label:4} c={concurrency:<3} {requests / elapsed:8.0f} req/s", flush=True)
    return runs


def report(bare: list[Run], ours: list[Run], *, requests: int, warmup: int, rounds: int) -> None:
    rows: list[list[str]] = []
    verdicts: list[str] = []
    for b, o in zip(bare, ours, strict=True):
        for run in (b, o):
            rows.append(
                [
                    str(run.concurrency),
                    run.server,
                    f"{run.rps:.0f}",
                    f"{run.p50:.3f}",
                    f"{run.p99:.3f}",
                    f"{run.server_cpu_us:.0f}",
                    f"{run.client_cpu_us:.0f}",
                    str(run.failures),
                ]
            )
        rows.append(
            [
                str(b.concurrency),
                "ours/bare",
                ratio(o.rps, b.rps),
                ratio(o.p50, b.p50),
                ratio(o.p99, b.p99),
                ratio(o.server_cpu_us, b.server_cpu_us),
                ratio(o.client_cpu_us, b.client_cpu_us),
                "",
            ]
        )
        share = o.rps / b.rps
        verdict = "meets" if share >= THROUGHPUT_TARGET else "MISSES"
        verdicts.append(
            f"c={b.concurrency}: throughput {share:.2f}x of bare {verdict} the >= {THROUGHPUT_TARGET}x target"
        )
    print()
    print(
        f"Execute, {requests} requests per row after {warmup} warm-up, median-throughput of {rounds} "
        f"round(s); {machine()}"
    )
    print("bare = grpc.aio generic handler, fixed ActionResponse, ignores the authorization header;")
    print("ours = build_app on the sim, SET_CLIPBOARD {text: x}, fresh request_id, token auth")
    print()
    print("srv/cli CPU = CPU time per request of the server process / of this client process (user+sys)")
    print()
    headers = ["conc", "server", "req/s", "p50 ms", "p99 ms", "srv CPU us", "cli CPU us", "failed"]
    print(table(headers, rows, left=2))
    print()
    for line in verdicts:
        print(line)


def median_run(runs: list[Run]) -> Run:
    """The run with the median throughput (the upper one of an even count)."""
    return sorted(runs, key=lambda r: r.rps)[len(runs) // 2]


async def main_async(args: argparse.Namespace) -> None:
    levels: list[int] = args.concurrency
    rounds: int = args.rounds
    print(
        f"{rounds} round(s) of bare then ours, each server in its own process; concurrency {levels}",
        flush=True,
    )
    bare_runs: dict[int, list[Run]] = {c: [] for c in levels}
    ours_runs: dict[int, list[Run]] = {c: [] for c in levels}
    for number in range(1, rounds + 1):
        print(f"round {number}", flush=True)
        with ServerProcess("bare-echo") as bare_server:
            for run in await measure(
                bare_server, "bare", requests=args.requests, warmup=args.warmup, levels=levels
            ):
                bare_runs[run.concurrency].append(run)
        with ServerProcess("ours", profile=args.profile) as ours_server:
            for run in await measure(
                ours_server, "ours", requests=args.requests, warmup=args.warmup, levels=levels
            ):
                ours_runs[run.concurrency].append(run)
    bare = [median_run(bare_runs[c]) for c in levels]
    ours = [median_run(ours_runs[c]) for c in levels]
    report(bare, ours, requests=args.requests, warmup=args.warmup, rounds=rounds)
    if args.profile is not None:
        print(f"\ncProfile of ours during the measured calls of the last round: {args.profile}")
        show = f"pstats.Stats('{args.profile}').sort_stats('tottime').print_stats(30)"
        print(f'  python -c "import pstats; {show}"')


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=3000, help="measured calls per concurrency level")
    parser.add_argument("--warmup", type=int, default=300, help="unmeasured calls before each level")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 32])
    parser.add_argument(
        "--rounds", type=int, default=3, help="fresh server pairs; each row is the median-throughput round"
    )
    parser.add_argument("--profile", type=Path, help="cProfile ours during the measured calls; stats go here")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
