"""Soak: does idle RSS of `phoneuse-runtime serve` stay flat across 100k Execute calls with 100 subscribers?

The real server runs as `phoneuse-runtime serve --device sim` in its own process and is driven
only over the wire (generated stubs) from here; `bench/_servers.py bare-echo` is the baseline,
measured as bench_memory.py does. Ours gets the same 50 warm-up calls, then `--subscribers`
Subscribe streams (all event types) are opened, confirmed and drained for the whole run, and
`--calls` Execute SET_CLIPBOARD calls are sent at `--concurrency`, pausing every `--checkpoint`
calls. Server RSS is the median of five psutil samples over a second, taken once the streams
have gone quiet and `--idle` seconds have passed: before the load, at each checkpoint, after it,
and after the subscribers hang up.

The server keeps up to 10,000 finished request_ids for 10 minutes (idempotency_max_entries,
idempotency_ttl_s), so RSS may rise until that cap is reached; past it, it must plateau.

    python bench/bench_soak.py [--calls 100000] [--subscribers 100] [--concurrency 32] [--checkpoint 20000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import grpc
import psutil
from _common import AUTH, ServeProcess, machine, ratio, table
from bench_memory import measure_bare, warm_up

from phoneuse_runtime.rpc import protocol_pb2 as pb
from phoneuse_runtime.rpc import protocol_pb2_grpc as pb_grpc

MIB = 1024 * 1024
RSS_TARGET = 1.4
# "No growth" when after-load idle RSS is within the larger of these of the before-load figure.
GROWTH_TOLERANCE_MIB = 3.0
GROWTH_TOLERANCE_PCT = 3.0
# The server's default idempotency_max_entries: finished request_ids kept for replay.
RETAINED_IDS = 10_000
WARMUP_CALLS = 50  # as bench_memory.py
READY_TIMEOUT_S = 60.0
QUIET_S = 0.5  # the streams count as drained once no event arrived for this long
DRAIN_TIMEOUT_S = 300.0
CALL_TIMEOUT_S = 30.0
DROPPED_COUNT = re.compile(r"^(\d+)")


@dataclass
class Stream:
    """What one Subscribe stream received."""

    index: int
    by_type: Counter[str] = field(default_factory=Counter)
    drop_notices: int = 0
    dropped: int = 0  # as reported by the notices
    ended: str = ""  # set when the stream ended before we cancelled it

    @property
    def total(self) -> int:
        return sum(self.by_type.values())


class Subscribers:
    """N Subscribe streams for every event type, each drained by its own task."""

    def __init__(self, stub: Any, count: int) -> None:
        self.stub = stub
        self.count = count
        self.streams = [Stream(i) for i in range(count)]
        self.ready = 0
        self.all_ready = asyncio.Event()
        self.last_arrival = time.monotonic()
        self._tasks: list[asyncio.Task[None]] = []
        self._closing = False

    def start(self) -> None:
        self._tasks = [asyncio.create_task(self._read(s)) for s in self.streams]

    async def _read(self, stream: Stream) -> None:
        request = pb.SubscribeRequest(subscriber_id=f"soak-{stream.index}", event_types=[])
        call = self.stub.Subscribe(request, metadata=AUTH)
        try:
            await call.initial_metadata()  # the subscription is live once headers arrive
            self.ready += 1
            if self.ready == self.count:
                self.all_ready.set()
            async for event in call:
                self.last_arrival = time.monotonic()
                stream.by_type[event.event_type] += 1
                if event.event_type == "ERROR":
                    payload = json.loads(event.payload_json)
                    if payload.get("code") == "EVENTS_DROPPED":
                        stream.drop_notices += 1
                        found = DROPPED_COUNT.match(str(payload.get("message", "")))
                        stream.dropped += int(found.group(1)) if found else 0
            stream.ended = "stream ended by the server"
        except grpc.aio.AioRpcError as exc:
            if not self._closing:
                stream.ended = f"{exc.code().name}: {exc.details()}"
        except asyncio.CancelledError:
            call.cancel()
            raise

    async def drained(self) -> bool:
        """Waits until no event has arrived for QUIET_S; False if that took over DRAIN_TIMEOUT_S."""
        deadline = time.monotonic() + DRAIN_TIMEOUT_S
        while time.monotonic() < deadline:
            quiet_for = time.monotonic() - self.last_arrival
            if quiet_for >= QUIET_S:
                return True
            await asyncio.sleep(QUIET_S - quiet_for)
        return False

    async def close(self) -> None:
        self._closing = True
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


@dataclass
class Failures:
    unsuccessful: int = 0  # success=false
    first_error: str = ""
    rpc_errors: Counter[str] = field(default_factory=Counter)

    @property
    def total(self) -> int:
        return self.unsuccessful + sum(self.rpc_errors.values())


async def load(stub: Any, *, total: int, concurrency: int, failures: Failures) -> None:
    """`total` SET_CLIPBOARD calls, each with a fresh request_id, from `concurrency` workers."""
    remaining = total

    async def worker() -> None:
        nonlocal remaining
        while remaining > 0:
            remaining -= 1
            request = pb.ActionRequest(
                action_type="SET_CLIPBOARD",
                params={"text": "x"},
                request_id=uuid.uuid4().hex,
                timeout_ms=10_000,
            )
            try:
                response: pb.ActionResponse = await stub.Execute(
                    request, metadata=AUTH, timeout=CALL_TIMEOUT_S
                )
            except grpc.aio.AioRpcError as exc:
                failures.rpc_errors[exc.code().name] += 1
                continue
            if not response.success:
                failures.unsuccessful += 1
                failures.first_error = failures.first_error or response.error

    await asyncio.gather(*(worker() for _ in range(concurrency)))


async def idle_rss(pid: int, idle_s: float) -> int:
    """Waits `idle_s`, then the median RSS of five samples over a second; the loop keeps draining."""
    await asyncio.sleep(idle_s)
    process = psutil.Process(pid)
    samples = []
    for _ in range(5):
        samples.append(int(process.memory_info().rss))
        await asyncio.sleep(0.25)
    return int(statistics.median(samples))


@dataclass(frozen=True)
class Point:
    label: str
    calls: int
    rss: int
    idle: bool = True  # counted against the idle RSS target


@dataclass
class Soak:
    points: list[Point] = field(default_factory=list)
    streams: list[Stream] = field(default_factory=list)
    failures: Failures = field(default_factory=Failures)
    load_s: float = 0.0
    undrained: list[str] = field(default_factory=list)

    def point(self, label: str) -> Point:
        return next(p for p in self.points if p.label == label)


async def soak(args: argparse.Namespace) -> Soak:
    result = Soak()
    with ServeProcess() as server:
        pid = server.pid
        result.points.append(Point("at start", 0, int(psutil.Process(pid).memory_info().rss), idle=False))
        await warm_up(server.port, WARMUP_CALLS, auth=True)
        result.points.append(Point(f"idle, {WARMUP_CALLS} warm-up calls", 0, await idle_rss(pid, args.idle)))
        target = f"127.0.0.1:{server.port}"
        async with (
            grpc.aio.insecure_channel(target) as sub_channel,
            grpc.aio.insecure_channel(target) as call_channel,
        ):
            subs = Subscribers(pb_grpc.AndroidRuntimeStub(sub_channel), args.subscribers)
            result.streams = subs.streams
            subs.start()
            try:
                await asyncio.wait_for(subs.all_ready.wait(), READY_TIMEOUT_S)
            except asyncio.TimeoutError:
                await subs.close()
                raise RuntimeError(
                    f"only {subs.ready} of {args.subscribers} streams were confirmed"
                ) from None
            try:
                result.points.append(Point("before", 0, await idle_rss(pid, args.idle)))
                print(
                    f"{args.subscribers} streams open; RSS before {result.points[-1].rss / MIB:.1f} MiB",
                    flush=True,
                )
                stub = pb_grpc.AndroidRuntimeStub(call_channel)
                done = 0
                while done < args.calls:
                    batch = min(args.checkpoint, args.calls - done)
                    started = time.perf_counter()
                    await load(stub, total=batch, concurrency=args.concurrency, failures=result.failures)
                    elapsed = time.perf_counter() - started
                    result.load_s += elapsed
                    done += batch
                    if not await subs.drained():
                        result.undrained.append(str(done))
                    label = "after, idle" if done == args.calls else "checkpoint"
                    result.points.append(Point(label, done, await idle_rss(pid, args.idle)))
                    print(
                        f"  {done:>7} calls  {batch / elapsed:6.0f} calls/s  "
                        f"RSS {result.points[-1].rss / MIB:6.1f} MiB",
                        flush=True,
                    )
            finally:
                await subs.close()
        result.points.append(Point("subscribers gone", args.calls, await idle_rss(pid, args.idle)))
    return result


def growth(before: int, after: int) -> tuple[float, float, bool]:
    """MiB, %, and whether that is within the tolerance."""
    mib = (after - before) / MIB
    pct = (after - before) / before * 100
    return mib, pct, mib <= GROWTH_TOLERANCE_MIB or pct <= GROWTH_TOLERANCE_PCT


def report(args: argparse.Namespace, bare_rss: int, result: Soak, wall_s: float) -> None:
    before = result.point("before").rss
    rows = [["bare-echo idle", "", f"{bare_rss / MIB:.1f}", "", "1.00x"]]
    since = result.points.index(result.point("before"))
    for i, p in enumerate(result.points):
        delta = f"{(p.rss - before) / MIB:+.1f}" if i >= since else ""
        rows.append([p.label, str(p.calls), f"{p.rss / MIB:.1f}", delta, ratio(p.rss, bare_rss)])
    print()
    print(
        f"Soak: {args.calls} Execute calls (SET_CLIPBOARD, fresh request_ids, concurrency "
        f"{args.concurrency}) with {args.subscribers} Subscribe streams (all event types); {machine()}"
    )
    print(
        "ours = phoneuse-runtime serve --device sim (token auth); bare = bench/_servers.py bare-echo; "
        f"RSS idle = median of 5 samples after the streams went quiet and {args.idle:.1f} s idle"
    )
    print()
    print(table(["point", "calls", "RSS MiB", "vs before", "x bare"], rows, left=1))
    print()

    idle = [p for p in result.points if p.idle]
    worst = max(idle, key=lambda p: p.rss)
    share = worst.rss / bare_rss
    verdict = "meets" if share <= RSS_TARGET else "MISSES"
    print(
        f"idle RSS: before the load {ratio(before, bare_rss)}, after it "
        f"{ratio(result.point('after, idle').rss, bare_rss)} of bare; highest {share:.2f}x "
        f"({worst.label}) {verdict} the <= {RSS_TARGET}x target"
    )
    after = result.point("after, idle").rss
    mib, pct, flat = growth(before, after)
    tolerance = f"tolerance +{GROWTH_TOLERANCE_MIB:.0f} MiB or {GROWTH_TOLERANCE_PCT:.0f} %"
    print(
        f"growth after {args.calls} calls vs before: {mib:+.1f} MiB ({pct:+.1f} %): "
        f"{'no growth' if flat else 'GROWS'} ({tolerance})"
    )
    # Past the retained-id cap the idempotency store stops growing, so any rise from here is not it.
    capped = [
        p for p in result.points if p.calls >= RETAINED_IDS and p.label in ("checkpoint", "after, idle")
    ]
    if len(capped) >= 2:
        mib, pct, flat = growth(capped[0].rss, capped[-1].rss)
        print(
            f"past the {RETAINED_IDS} retained request_ids, {capped[0].calls} -> {capped[-1].calls} calls: "
            f"{mib:+.1f} MiB ({pct:+.1f} %): {'plateau' if flat else 'STILL GROWS'} ({tolerance})"
        )
    print()

    totals = [s.total for s in result.streams]
    completed = [s.by_type["TASK_COMPLETED"] for s in result.streams]
    types: Counter[str] = Counter()
    for s in result.streams:
        types.update(s.by_type)
    notices = sum(s.drop_notices for s in result.streams)
    dropped = sum(s.dropped for s in result.streams)
    print(
        f"events per stream: min {min(totals)}, max {max(totals)}; TASK_COMPLETED min {min(completed)}, "
        f"max {max(completed)} (expected {args.calls})"
    )
    print(f"event types over all streams: {dict(sorted(types.items()))}")
    print(
        f"EVENTS_DROPPED notices: {notices} on {sum(1 for s in result.streams if s.drop_notices)} stream(s), "
        f"reporting {dropped} event(s) dropped"
    )
    ended = [f"#{s.index} {s.ended}" for s in result.streams if s.ended]
    if ended:
        print(f"streams that ended early: {len(ended)}, e.g. {ended[0]}")
    f = result.failures
    errors = ", ".join(f"{code} {n}" for code, n in f.rpc_errors.most_common()) or "none"
    first = f" (first: {f.first_error})" if f.first_error else ""
    print(
        f"failures: {f.total} of {args.calls} calls; success=false {f.unsuccessful}{first}; "
        f"RPC errors: {errors}"
    )
    if result.undrained:
        print(f"streams still busy after {DRAIN_TIMEOUT_S:.0f} s at: {', '.join(result.undrained)} calls")
    print(
        f"load: {args.calls / result.load_s:.0f} calls/s over {result.load_s:.0f} s of sending; "
        f"whole run {wall_s:.0f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=100_000, help="Execute calls in all")
    parser.add_argument("--subscribers", type=int, default=100, help="Subscribe streams open during the load")
    parser.add_argument("--concurrency", type=int, default=32, help="Execute calls in flight")
    parser.add_argument("--checkpoint", type=int, default=20_000, help="calls between RSS samples")
    parser.add_argument("--idle", type=float, default=2.0, help="seconds idle before each RSS sample")
    args = parser.parse_args()
    if min(args.calls, args.subscribers, args.concurrency, args.checkpoint) < 1:
        parser.error("--calls, --subscribers, --concurrency and --checkpoint must be at least 1")

    started = time.perf_counter()
    print(f"bare-echo: {WARMUP_CALLS} calls, {args.idle:.1f} s idle", flush=True)
    bare = measure_bare(WARMUP_CALLS, args.idle)
    print(f"bare-echo idle RSS {bare.idle_rss / MIB:.1f} MiB; starting phoneuse-runtime serve", flush=True)
    result = asyncio.run(soak(args))
    report(args, bare.idle_rss, result, time.perf_counter() - started)


if __name__ == "__main__":
    main()
