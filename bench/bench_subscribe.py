"""Event fan-out to many Subscribe streams: bare grpc.aio queues vs our event bus.

Each server runs in its own process; the subscribers and the publisher are grpc.aio clients
here. Subscribers (100 by default) open streams for NOTIFICATION_POSTED only, then every event
is triggered by an Execute call:

- ours: SIM_POST_NOTIFICATION {"package": P, "title": "t", "text": KEY}, which publishes
  NOTIFICATION_POSTED (delivered) and TASK_COMPLETED (filtered out by the bus). P defaults to
  com.whatsapp: the sim refuses notifications from packages it has not installed (com.example);
- bare: a generic unary handler that puts one Event into every stream's asyncio.Queue.

Two phases after a warm-up, each event's KEY travelling in the payload's "text":

- burst: --events triggers back to back; deliveries/second over all streams, from the first
  trigger sent to the last arrival, and the CPU each process spent per delivery;
- paced: --paced triggers one at a time, each after the previous one reached every stream;
  latency from sending the trigger to the arrival at each stream and at the last stream.
  (In the burst, latency mostly measures the queue a faster publisher builds up.)

Times are time.perf_counter on this side, so there is no clock skew.

    python bench/bench_subscribe.py [--subscribers 100] [--events 1000] [--paced 200]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
import uuid
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
from _common import AUTH, EXECUTE, SUBSCRIBE, ServerProcess, machine, percentile, ratio, table

from phoneuse_runtime.rpc import protocol_pb2 as pb

WANTED = "NOTIFICATION_POSTED"
WAIT_S = 120.0


@dataclass(frozen=True)
class FanoutRun:
    server: str
    subscribers: int
    events: int
    delivered: int  # burst deliveries that arrived
    unexpected: int  # events of other types (e.g. EVENTS_DROPPED notices)
    burst_s: float  # first burst trigger sent -> last burst arrival
    server_cpu_s: float  # during the burst
    client_cpu_s: float
    delivery_ms: list[float]  # paced: trigger sent -> arrival at each stream, sorted
    last_delivery_ms: list[float]  # paced: trigger sent -> arrival at the last stream, sorted

    @property
    def rate(self) -> float:
        return self.delivered / self.burst_s if self.burst_s > 0 else 0.0

    def per_delivery_us(self, cpu_s: float) -> float:
        return cpu_s / self.delivered * 1e6 if self.delivered else 0.0


class Subscribers:
    """The client side of N streams: when each keyed event reached each stream."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.arrivals: defaultdict[str, list[float]] = defaultdict(list)
        self.received = 0
        self.unexpected = 0
        self.ready = 0
        self.all_ready = asyncio.Event()
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []

    def until(self, total: int) -> asyncio.Future[None]:
        """Resolves once `total` wanted events have arrived, over all streams."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if self.received >= total:
            future.set_result(None)
        else:
            self._waiters.append((total, future))
        return future

    def _arrived(self, key: str, now: float) -> None:
        self.arrivals[key].append(now)
        self.received += 1
        if self._waiters:
            for total, future in self._waiters:
                if self.received >= total and not future.done():
                    future.set_result(None)
            self._waiters = [(t, f) for t, f in self._waiters if not f.done()]

    async def read(self, subscribe: Any, index: int, metadata: Any) -> None:
        request = pb.SubscribeRequest(subscriber_id=f"bench-{index}", event_types=[WANTED])
        call = subscribe(request, metadata=metadata)
        try:
            await call.initial_metadata()  # the subscription is live once headers arrive
            self.ready += 1
            if self.ready == self.count:
                self.all_ready.set()
            async for event in call:
                now = time.perf_counter()
                if event.event_type == WANTED:
                    self._arrived(json.loads(event.payload_json)["text"], now)
                else:
                    self.unexpected += 1
        except asyncio.CancelledError:
            call.cancel()
            raise


async def wait(future: asyncio.Future[None], what: str) -> bool:
    try:
        await asyncio.wait_for(future, WAIT_S)
    except asyncio.TimeoutError:
        print(f"  gave up waiting for {what} after {WAIT_S:.0f} s")
        return False
    return True


async def measure(
    server: ServerProcess,
    label: str,
    *,
    subscribers: int,
    events: int,
    paced: int,
    warmup: int,
    publishers: int,
    package: str,
) -> FanoutRun:
    metadata = AUTH if label == "ours" else None
    target = f"127.0.0.1:{server.port}"
    subs = Subscribers(subscribers)
    sent: dict[str, float] = {}
    async with (
        grpc.aio.insecure_channel(target) as sub_channel,
        grpc.aio.insecure_channel(target) as pub_channel,
    ):
        subscribe = sub_channel.unary_stream(
            SUBSCRIBE,
            request_serializer=pb.SubscribeRequest.SerializeToString,
            response_deserializer=pb.Event.FromString,
        )
        execute = pub_channel.unary_unary(
            EXECUTE,
            request_serializer=pb.ActionRequest.SerializeToString,
            response_deserializer=pb.ActionResponse.FromString,
        )

        async def trigger(key: str) -> None:
            request = pb.ActionRequest(
                action_type="SIM_POST_NOTIFICATION",
                params={"package": package, "title": "t", "text": key},
                request_id=uuid.uuid4().hex,
                timeout_ms=10_000,
            )
            sent[key] = time.perf_counter()
            response: pb.ActionResponse = await execute(request, metadata=metadata, timeout=30)
            if not response.success:
                raise RuntimeError(f"{label}: trigger failed: {response.error}")

        async def burst(keys: list[str]) -> None:
            pending = iter(keys)

            async def publisher() -> None:
                for key in pending:  # shared iterator: each key is sent once
                    await trigger(key)

            await asyncio.gather(*(publisher() for _ in range(publishers)))

        readers = [asyncio.create_task(subs.read(subscribe, i, metadata)) for i in range(subscribers)]
        try:
            await asyncio.wait_for(subs.all_ready.wait(), WAIT_S)
            await burst([f"w{j}" for j in range(warmup)])
            await wait(subs.until(warmup * subscribers), "the warm-up events")

            burst_keys = [f"b{j}" for j in range(events)]
            goal = subs.received + events * subscribers
            server.profiling(True)
            server_cpu, client_cpu = server.cpu_seconds(), time.process_time()
            await burst(burst_keys)
            await wait(subs.until(goal), "the burst")
            server_cpu, client_cpu = server.cpu_seconds() - server_cpu, time.process_time() - client_cpu
            server.profiling(False)

            paced_keys = [f"p{j}" for j in range(paced)]
            for key in paced_keys:
                goal = subs.received + subscribers
                await trigger(key)
                if not await wait(subs.until(goal), f"paced event {key}"):
                    break
        finally:
            for task in readers:
                task.cancel()
            await asyncio.gather(*readers, return_exceptions=True)

    burst_arrivals = [subs.arrivals[k] for k in burst_keys if subs.arrivals[k]]
    last_arrival = max((max(a) for a in burst_arrivals), default=sent[burst_keys[0]])
    delivery = sorted((t - sent[k]) * 1000 for k in paced_keys for t in subs.arrivals[k])
    last_delivery = sorted((max(subs.arrivals[k]) - sent[k]) * 1000 for k in paced_keys if subs.arrivals[k])
    run = FanoutRun(
        server=label,
        subscribers=subscribers,
        events=events,
        delivered=sum(len(a) for a in burst_arrivals),
        unexpected=subs.unexpected,
        burst_s=last_arrival - sent[burst_keys[0]],
        server_cpu_s=server_cpu,
        client_cpu_s=client_cpu,
        delivery_ms=delivery,
        last_delivery_ms=last_delivery,
    )
    print(f"  {label:4} {run.rate:8.0f} deliveries/s", flush=True)
    return run


def report(bare: FanoutRun, ours: FanoutRun, *, publishers: int, warmup: int, paced: int) -> None:
    def cells(run: FanoutRun) -> list[str]:
        return [
            f"{run.delivered}/{run.subscribers * run.events}",
            f"{run.rate:.0f}",
            f"{run.per_delivery_us(run.server_cpu_s):.1f}",
            f"{run.per_delivery_us(run.client_cpu_s):.1f}",
            f"{percentile(run.delivery_ms, 50):.2f}",
            f"{percentile(run.delivery_ms, 99):.2f}",
            f"{percentile(run.last_delivery_ms, 50):.2f}",
            f"{percentile(run.last_delivery_ms, 99):.2f}",
            str(run.unexpected),
        ]

    def ratios(pairs: Sequence[tuple[float, float]]) -> list[str]:
        return [ratio(o, b) for o, b in pairs]

    ratio_row = [
        "ours/bare",
        "",
        *ratios(
            [
                (ours.rate, bare.rate),
                (ours.per_delivery_us(ours.server_cpu_s), bare.per_delivery_us(bare.server_cpu_s)),
                (ours.per_delivery_us(ours.client_cpu_s), bare.per_delivery_us(bare.client_cpu_s)),
                (percentile(ours.delivery_ms, 50), percentile(bare.delivery_ms, 50)),
                (percentile(ours.delivery_ms, 99), percentile(bare.delivery_ms, 99)),
                (percentile(ours.last_delivery_ms, 50), percentile(bare.last_delivery_ms, 50)),
                (percentile(ours.last_delivery_ms, 99), percentile(bare.last_delivery_ms, 99)),
            ]
        ),
        "",
    ]
    print()
    print(
        f"Subscribe fan-out to {bare.subscribers} streams: burst of {bare.events} events from {publishers} "
        f"publisher(s), then {paced} paced events; {warmup} warm-up; {machine()}"
    )
    print("burst: deliveries/s over all streams; srv/cli CPU = CPU time per delivery of the server / client")
    print("paced: trigger sent -> arrival at each stream (deliv) and at the last stream (last), in ms")
    print()
    headers = [
        "server",
        "burst delivered",
        "deliv/s",
        "srv CPU us",
        "cli CPU us",
        "deliv p50",
        "deliv p99",
        "last p50",
        "last p99",
        "other",
    ]
    print(table(headers, [[bare.server, *cells(bare)], [ours.server, *cells(ours)], ratio_row]))


async def main_async(args: argparse.Namespace) -> None:
    options = {
        "subscribers": args.subscribers,
        "events": args.events,
        "paced": args.paced,
        "warmup": args.warmup,
        "publishers": args.publishers,
    }
    package: str = args.package
    print(f"bare first, then ours, each in its own process; {args.subscribers} streams", flush=True)
    with ServerProcess("bare-fanout") as bare_server:
        bare = await measure(bare_server, "bare", package=package, **options)
    with ServerProcess("ours", profile=args.profile) as ours_server:
        ours = await measure(ours_server, "ours", package=package, **options)
    report(bare, ours, publishers=args.publishers, warmup=args.warmup, paced=args.paced)
    if args.profile is not None:
        print(f"\ncProfile of ours during the burst: {args.profile}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--subscribers", type=int, default=100)
    parser.add_argument("--events", type=int, default=1000, help="burst events (each goes to every stream)")
    parser.add_argument("--paced", type=int, default=200, help="events sent one at a time, for latency")
    parser.add_argument("--warmup", type=int, default=20, help="unmeasured events first")
    parser.add_argument("--publishers", type=int, default=1, help="concurrent triggering clients (burst)")
    parser.add_argument("--package", default="com.whatsapp", help="an app installed on the sim")
    parser.add_argument("--profile", type=Path, help="cProfile ours during the burst; stats go here")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
