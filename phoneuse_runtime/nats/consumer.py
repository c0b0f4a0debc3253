"""The fleet's events: every phone's events from the JetStream stream, in order, from a cursor.

The cursor is the stream sequence (`seq`) of the last event a reader handled: `read_events`
with `since=SEQ` yields the events stored after it (0: from the first), in stream order, which
is each phone's own order (one runtime publishes its events in order, acked one window at a
time). It is an ordered consumer (ephemeral, flow-controlled, no acks): when the connection
drops or nats-server restarts, nats-py re-creates it from the sequence after the last one
delivered, so a reader that keeps its cursor sees no event twice and misses none that the
stream still holds. `device` keeps one phone's events (`phoneuse.<device>.>`).

    phoneuse-runtime events --nats-url nats://127.0.0.1:4222 [--device NAME] [--since SEQ] [--follow] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from phoneuse_runtime.nats.sink import STREAM, SUBJECT_ROOT, SUBJECTS

if TYPE_CHECKING:
    from phoneuse_runtime.config.sections import NatsSettings

CONNECT_TIMEOUT_S = 5.0
HEARTBEAT_S = 1.0  # the ordered consumer's idle heartbeat: how soon a lost consumer is re-made


@dataclass(frozen=True, slots=True)
class StreamEvent:
    """One event as the stream holds it."""

    seq: int  # the stream sequence: the cursor
    device: str
    event_type: str
    payload: dict[str, Any]
    timestamp: int
    source: str
    id: str  # the sink's Nats-Msg-Id: <device>.<run>.<n>

    def as_json(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "device": self.device,
            "event_type": self.event_type,
            "timestamp": self.timestamp,
            "source": self.source,
            "id": self.id,
            "payload": self.payload,
        }


def filter_subject(device: str | None) -> str:
    return f"{SUBJECT_ROOT}.{device}.>" if device else SUBJECTS


class BadEvent(ValueError):
    """A message of the stream that is not an event of the sink's shape: reported and skipped."""

    def __init__(self, seq: int, why: str) -> None:
        super().__init__(f"event {seq} {why}")
        self.seq = seq
        self.why = why


def _event(seq: int, subject: str, data: bytes) -> StreamEvent:
    """The event stored at `seq`; BadEvent when a field is not of its type (anyone who could
    publish could have put it there)."""
    try:
        body = json.loads(data)
    except ValueError:
        raise BadEvent(seq, "is not JSON") from None
    if not isinstance(body, dict):
        raise BadEvent(seq, "is not a JSON object")
    parts = subject.split(".")
    payload = body.get("payload", {})
    timestamp = body.get("timestamp", 0)
    if isinstance(timestamp, bool) or not isinstance(timestamp, int):
        raise BadEvent(seq, "has a timestamp that is not a whole number")
    if not isinstance(payload, dict):
        raise BadEvent(seq, "has a payload that is not a JSON object")
    texts = {name: body.get(name, "") for name in ("device", "event_type", "source", "id")}
    for name, value in texts.items():
        if not isinstance(value, str):
            raise BadEvent(seq, f"has a {name} that is not text")
    return StreamEvent(
        seq=seq,
        device=texts["device"] or (parts[1] if len(parts) > 2 else ""),
        event_type=texts["event_type"] or parts[-1],
        payload=payload,
        timestamp=timestamp,
        source=texts["source"],
        id=texts["id"],
    )


async def read_events(
    js: Any,
    *,
    device: str | None = None,
    since: int = 0,
    follow: bool = False,
    skipped: Callable[[BadEvent], None] | None = None,
) -> AsyncIterator[StreamEvent]:
    """The events after stream sequence `since`, in order; with `follow`, then each new one as
    it is stored, until the caller stops iterating. `js` is a nats-py JetStream context. A
    message that is not an event (BadEvent) is handed to `skipped` and passed over."""
    from nats.js.api import ConsumerConfig, DeliverPolicy
    from nats.js.errors import NotFoundError

    if since < 0:
        raise ValueError(f"since must be 0 or a stream sequence, got {since}")
    try:
        info = await js.stream_info(STREAM)
    except NotFoundError:
        if not follow:
            return
        info = None
    if not follow and info is not None and info.state.last_seq <= since:
        return
    config = ConsumerConfig(deliver_policy=DeliverPolicy.BY_START_SEQUENCE, opt_start_seq=since + 1)
    sub = await js.subscribe(
        filter_subject(device),
        stream=STREAM,
        config=config,
        ordered_consumer=True,
        idle_heartbeat=HEARTBEAT_S,
    )
    try:
        if not follow:
            state = await sub.consumer_info()
            if state.num_pending == 0 and not (state.delivered and state.delivered.consumer_seq):
                return  # nothing matches past the cursor: nothing will come
        async for msg in sub.messages:
            meta = msg.metadata
            try:
                event = _event(meta.sequence.stream, msg.subject, msg.data)
            except BadEvent as bad:
                if skipped is not None:
                    skipped(bad)
            else:
                yield event
            if not follow and meta.num_pending == 0:
                return
    finally:
        await sub.unsubscribe()


# --- the command line (its parser: cli/events.py) ------------------------------------------


def main(args: argparse.Namespace, nats: NatsSettings) -> int:
    """`phoneuse-runtime events`, with the NATS server and token file of the `nats` section
    (flags > PHONEUSE_NATS_* > config.toml > defaults, as load_settings read them)."""
    from phoneuse_runtime.util.device_names import is_device_name
    from phoneuse_runtime.util.display import printable, safe_json

    url = nats.url
    if not url:
        print(
            "phoneuse-runtime: events needs --nats-url (or $PHONEUSE_NATS_URL, or nats_url)", file=sys.stderr
        )
        return 2
    if args.device is not None and not is_device_name(args.device):
        print(f"phoneuse-runtime: {printable(repr(args.device))} is not a device name", file=sys.stderr)
        return 2
    if args.since < 0:
        print("phoneuse-runtime: --since must be 0 or a stream sequence", file=sys.stderr)
        return 2
    from phoneuse_runtime.config.settings import ConfigError
    from phoneuse_runtime.nats.link import connect_options

    try:
        options = connect_options(nats.user, nats.token_file)
    except ConfigError as exc:
        print(f"phoneuse-runtime: {printable(str(exc))}", file=sys.stderr)
        return 2

    async def run() -> int:
        import nats

        errors: list[Exception] = []

        async def quiet(exc: Exception) -> None:
            """nats-py's connection errors: the last one makes the command's one line, never a traceback."""
            errors[:] = [exc]

        try:
            # Reconnects for as long as it runs, once it got in; the first connection is bounded.
            nc = await asyncio.wait_for(
                nats.connect(
                    url,
                    connect_timeout=2,
                    **options,
                    max_reconnect_attempts=-1,
                    reconnect_time_wait=0.5,
                    error_cb=quiet,
                ),
                timeout=CONNECT_TIMEOUT_S,
            )
        except Exception as exc:  # nats-py's connection errors, OSError, timeouts
            why = str(exc) or " ".join(map(str, errors)) or f"no answer within {CONNECT_TIMEOUT_S:g} s"
            print(
                f"phoneuse-runtime: cannot reach NATS at {printable(url)}: {printable(why)}", file=sys.stderr
            )
            return 2
        last = args.since

        def skipped(bad: BadEvent) -> None:
            nonlocal last
            last = bad.seq  # the cursor moves past it: --since resumes after it
            print(f"phoneuse-runtime: skipped {printable(str(bad))}", file=sys.stderr, flush=True)

        try:
            async for event in read_events(
                nc.jetstream(), device=args.device, since=args.since, follow=args.follow, skipped=skipped
            ):
                last = event.seq
                if args.json:
                    print(safe_json(event.as_json()), flush=True)
                else:
                    payload = safe_json(event.payload)
                    print(
                        f"{event.seq} {printable(event.device)} {printable(event.event_type)} {payload}",
                        flush=True,
                    )
        finally:
            print(f"cursor: {last} (resume with --since {last})", file=sys.stderr)
            await nc.close()
        return 0

    try:
        return asyncio.run(run())
    except KeyboardInterrupt:
        return 0
