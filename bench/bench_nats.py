"""Events per second into JetStream: through the runtime's sink against nats-py publishing bare.

One nats-server (Debian's, JetStream on, file storage in a temp dir) and, in the same run and
process, in turns (`--rounds` each, the median reported):

- **sink**: a runtime built by the composition root with `nats_url` set publishes `--events`
  MESSAGE_RECEIVED events on its bus (in chunks of `--chunk`, yielding between them, as a busy
  phone would); timed from the first publish until the sink has had the last one acked. The
  publisher lets at most `SPOOL_PAST` events wait for acks (NATS keeps up: nothing spooled),
  and in a second row 8 windows (NATS behind: the spool file is written too).
- **bare, windowed**: nats-py's `js.publish_async` of the same bodies to the same subjects with
  the same `Nats-Msg-Id` headers, at most the sink's window in flight, then awaiting the acks:
  what a hand-written publisher with acks does at best.
- **bare, one by one**: `await js.publish(...)` for each, waiting for each ack.

Each side publishes to its own stream (the sink's `PHONEUSE_EVENTS`, purged between rounds, and
`BARE`), file storage both.

    python bench/bench_nats.py [--events 20000] [--rounds 3] [--chunk 256]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path

from _common import machine, ratio, table

from phoneuse_runtime.app import build_app
from phoneuse_runtime.config.settings import Settings
from phoneuse_runtime.kernel.events import Event, MessageReceived
from phoneuse_runtime.nats.components import nats_components
from phoneuse_runtime.nats.server_process import NatsServer
from phoneuse_runtime.nats.sink import PUBLISH_WINDOW, SPOOL_PAST, STREAM, JetStreamSink, subject_for

DEVICE = "bench"


def make_events(n: int) -> list[Event]:
    return [
        MessageReceived(
            from_=f"+1555010{i % 10:02d}",
            body=f"message number {i}: a few words such as a person would send",
            app="sms",
            thread_id=str(i % 7),
            message_id=str(i),
        ).to_event("sim")
        for i in range(n)
    ]


def body_of(event: Event, msg_id: str) -> bytes:
    """The body the sink publishes for `event` (the same shape, for the bare side)."""
    return json.dumps(
        {
            "id": msg_id,
            "device": DEVICE,
            "event_type": event.event_type,
            "source": event.source,
            "timestamp": event.timestamp,
            "payload": json.loads(event.payload_json),
        },
        separators=(",", ":"),
    ).encode()


async def sink_round(url: str, data_dir: Path, events: list[Event], chunk: int, backlog: int) -> float:
    settings = Settings(
        data_dir=data_dir, gateway=False, memory_ingest=False, nats_url=url, device_name=DEVICE
    )
    app = await build_app(
        settings, token="bench-" + "x" * 32, components=nats_components(settings.nats, data_dir=data_dir)
    )
    try:
        sink = app.components["nats-events"]
        assert isinstance(sink, JetStreamSink)
        assert await sink.link.wait_connected(10)
        bus = app.runtime.bus
        start = time.perf_counter()
        for i in range(0, len(events), chunk):
            for event in events[i : i + chunk]:
                bus.publish(event)
            await asyncio.sleep(0)  # the publisher's turn ends: the sink takes what it queued
            # A flood faster than JetStream acks would pass the outage buffer and be dropped
            # (by design); the bench measures the sink's sustained rate, so it waits meanwhile.
            while sink.buffered > backlog:
                await asyncio.sleep(0.0005)
        while sink.acked < len(events) and not sink.dropped:
            await asyncio.sleep(0.001)  # polling the ack counter
        elapsed = time.perf_counter() - start
        assert sink.dropped == 0, f"{sink.dropped} events dropped: use a smaller --chunk"
        return len(events) / elapsed
    finally:
        await app.stop(grace_s=1)


async def bare_round(js: object, events: list[Event], *, windowed: bool, run: int) -> float:
    items = [
        (
            subject_for(DEVICE, e.event_type).replace("phoneuse.", "bare.", 1),
            body_of(e, f"{run}.{i}"),
            f"{run}.{i}",
        )
        for i, e in enumerate(events)
    ]
    start = time.perf_counter()
    if windowed:
        for i in range(0, len(items), PUBLISH_WINDOW):
            futures = [
                await js.publish_async(subject, body, headers={"Nats-Msg-Id": msg_id})  # type: ignore[attr-defined]
                for subject, body, msg_id in items[i : i + PUBLISH_WINDOW]
            ]
            await asyncio.gather(*futures)
    else:
        for subject, body, msg_id in items:
            await js.publish(subject, body, headers={"Nats-Msg-Id": msg_id})  # type: ignore[attr-defined]
    return len(items) / (time.perf_counter() - start)


async def main_async(args: argparse.Namespace) -> None:
    import nats

    events = make_events(args.events)
    with tempfile.TemporaryDirectory(prefix="bench-nats-") as tmp:
        server = NatsServer(Path(tmp) / "nats")
        url = await server.start()
        try:
            nc = await nats.connect(url)
            js = nc.jetstream()
            await js.add_stream(name="BARE", subjects=["bare.>"], storage="file")
            sink_rates: list[float] = []
            spooling: list[float] = []
            windowed: list[float] = []
            one_by_one: list[float] = []
            for r in range(args.rounds):
                sink_rates.append(await sink_round(url, Path(tmp) / f"d{r}", events, args.chunk, SPOOL_PAST))
                await js.purge_stream(STREAM)
                backlog = 8 * PUBLISH_WINDOW
                spooling.append(await sink_round(url, Path(tmp) / f"s{r}", events, args.chunk, backlog))
                await js.purge_stream(STREAM)
                windowed.append(await bare_round(js, events, windowed=True, run=2 * r))
                one_by_one.append(await bare_round(js, events, windowed=False, run=2 * r + 1))
                await js.purge_stream("BARE")
            await nc.close()
        finally:
            await server.stop()
    sink, spooled, bare_w, bare_1 = (
        statistics.median(x) for x in (sink_rates, spooling, windowed, one_by_one)
    )
    print(
        f"{args.events} MESSAGE_RECEIVED events into JetStream (file storage), "
        f"median of {args.rounds}; {machine()}"
    )
    print()
    rows = [
        [f"sink, <= {SPOOL_PAST} waiting for acks", f"{sink:,.0f}", "1.00x", ratio(spooled, sink)],
        [f"sink, {8 * PUBLISH_WINDOW} waiting (spooling)", f"{spooled:,.0f}", ratio(sink, spooled), "1.00x"],
        [
            f"bare nats-py publish_async, window {PUBLISH_WINDOW}",
            f"{bare_w:,.0f}",
            ratio(sink, bare_w),
            ratio(spooled, bare_w),
        ],
        [
            "bare nats-py publish, one ack at a time",
            f"{bare_1:,.0f}",
            ratio(sink, bare_1),
            ratio(spooled, bare_1),
        ],
    ]
    print(table(["publisher", "events/s", "sink / this", "spooling sink / this"], rows))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--chunk", type=int, default=256, help="events published per turn of the loop")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
