"""The spec's section on NATS: the events stream, the fleet's events, and leases."""

from __future__ import annotations

from phoneuse_runtime.config.sections import MIN_STREAM_AGE_S, MIN_STREAM_BYTES
from phoneuse_runtime.config.settings import Settings
from phoneuse_runtime.nats.consumer import HEARTBEAT_S
from phoneuse_runtime.nats.leases import (
    BUCKET,
    BUCKET_BYTES,
    DEFAULT_TTL_S,
    LEASE_VALUE_BYTES,
    MAX_TTL_S,
    MIN_TTL_S,
)
from phoneuse_runtime.nats.sink import (
    ACK_TIMEOUT_S,
    DUPLICATE_WINDOW_S,
    PUBLISH_WINDOW,
    SPOOL_PAST,
    STREAM,
    SUBJECTS,
)
from phoneuse_runtime.nats.spool import SPOOL_FILE


def _lease_table() -> str:
    rows = [
        (
            "`LEASE_ACQUIRE`",
            "the lease (`holder`, `expires_at_ms`, `expires_at`, `ttl_s`, `device`); the holder "
            "acquiring again extends it; `CONFLICT` (as above) while another principal holds it",
        ),
        (
            "`LEASE_RENEW`",
            "the lease, now expiring `ttl_s` from now; `CONFLICT` for a non-holder, or when there "
            "is no live lease (none, or expired: acquire it again)",
        ),
        (
            "`LEASE_RELEASE`",
            "`released: true`; `released: false` when no lease was live; `CONFLICT` for a non-holder",
        ),
        (
            "any",
            f"`INVALID_PARAMS` for `ttl_s` outside {MIN_TTL_S}..{MAX_TTL_S}, not an integer, or an "
            "unknown param; `DEVICE_UNAVAILABLE` when NATS is configured but unreachable (nothing was taken)",
        ),
    ]
    return "\n".join(["| action | answers |", "|---|---|", *(f"| {a} | {b} |" for a, b in rows)])


PAYLOAD_ROW = (
    "| `payload` | the event's payload object, as documented under [Events](#events), with one-time "
    "codes and passwords masked in every text but ids (`[code]`, `[password]`: the memory's rule), "
    "in the stream and the spool alike |"
)


def _users_table() -> str:
    rows = [
        (
            "`fleet`",
            "everything: it makes the events stream (with the fleet's `nats_stream_*` bounds) and "
            "the leases' bucket",
        ),
        (
            "`reader`",
            "the events stream's info and ordered consumers on it (the `events` command); no "
            "publish, no lease, no purge or delete",
        ),
        (
            "`runtime-<device>`",
            f"publish `phoneuse.<device>.>`, write `$KV.{BUCKET}.<device>` (its own lease), read "
            "the two streams' info and its key",
        ),
    ]
    return "\n".join(["| user | may |", "|---|---|", *(f"| {a} | {b} |" for a, b in rows)])


def spec_section() -> str:
    buffer = Settings().nats_buffer_events
    return f"""## NATS: the events stream, the fleet's events, leases

Off unless configured: `serve --nats-url nats://HOST:PORT --device-name NAME` (settings
`nats_url`, `device_name`; `PHONEUSE_NATS_URL`, ...; needs the `nats` extra, nats-py). The
device name defaults to the serial of `adb:SERIAL` with every character outside
`[A-Za-z0-9_-]` made `_` (`192.168.1.5:5555` is `192_168_1_5_5555`), else the device kind
(`sim`, `termux`); a name is 1 to 64 of those characters. A url with credentials is refused:
a NATS server that wants a token gets it from `nats_token_file` (`--nats-token-file`, a file of
one line, 16 to 512 of `A-Z a-z 0-9 . _ ~ + / = -`), never from a url or a log line; the
`events` command takes `--nats-token-file` (or `$PHONEUSE_NATS_TOKEN_FILE`) too, and
`phoneuse_runtime.nats.server_process.NatsServer(store_dir, token_file=...)` starts nats-server
asking for it (from a 0600 config file, not its command line). A server with users takes
`nats_user` (`--nats-user`, 1 to 80 of `A-Z a-z 0-9 _ -`; it needs `nats_token_file`, which then
holds the user's password), and the client's replies come on the inbox prefix `_INBOX_<user>`.
A url with credentials is refused without printing them. Without a token or users, anyone who
can reach the NATS port reads every event and can write the leases: keep it on loopback.

The fleet's own nats-server (`NatsServer(store_dir, users=...)`, phoneuse_runtime/nats/users.py)
has one user per party, each allowed only its part:

{_users_table()}

Each subscribes only to its own `_INBOX_<user>.>`. The passwords are files
`FLEET_DIR/nats-users/<user>` (0600); `fleet.json` names the reader's (`nats_reader`).

### The events stream

Every event on the runtime's bus (all types, the runtime's own listeners' view: the phone is
not polled for it) is appended to the JetStream stream `{STREAM}` (subjects `{SUBJECTS}`, file
storage, duplicate window {DUPLICATE_WINDOW_S:g} s; created if absent) under the subject
`phoneuse.<device_name>.<event_type>`. The stream is bounded: events older than
`nats_stream_max_age_s` ({Settings().nats_stream_max_age_s:,} s) leave it, and so do the oldest
past `nats_stream_max_bytes` ({Settings().nats_stream_max_bytes:,} bytes); the settings are
refused at load below {MIN_STREAM_AGE_S} s (the duplicate window) and {MIN_STREAM_BYTES:,}
bytes. A stream made without bounds gets them; one with bounds keeps its own (the fleet, which
administers its stream, sets them at its start). The body is one JSON object:

| field | what |
|---|---|
| `id` | `<device_name>.<run>.<n>`: `run` is new at each start of the runtime, `n` counts its events from 1 |
| `device` | the device name |
| `event_type`, `source`, `timestamp` | as on Subscribe |
{PAYLOAD_ROW}

Each message carries the header `Nats-Msg-Id` = `id`: a message published again after a lost
ack is stored once. The sink publishes in order, up to {PUBLISH_WINDOW} messages in flight, and
waits for JetStream's acks ({ACK_TIMEOUT_S:g} s at most, then it publishes the same messages
again); an event leaves its buffer only once acked, and the log (DEBUG) names the last `id`
acked. An ack means nats-server has stored the event: a runtime killed afterwards has lost
none of the events it logged as acked.

**Outage bound.** A runtime that cannot reach NATS keeps serving (Execute, Query and Subscribe
are unaffected) and keeps at most `nats_buffer_events` ({buffer:,}) unacked events in memory; past
that the oldest are dropped, counted and logged, and once NATS is back, after what was kept, an
`ERROR` event with `code` `EVENTS_DROPPED` and the count is appended. Within the bound it
catches up in order when NATS returns (nats-py reconnects every 0.25 s). While NATS is
unreachable the buffer is also kept in `DATA_DIR/{SPOOL_FILE}` (0600; setting `nats_spool`, on
by default): a runtime killed during an outage publishes what it had accepted (what the sink
had taken from the bus, a turn of the event loop after it was published) at its next start, first,
with the events' own ids (stored once if the first try did reach the stream within the
duplicate window), and the file is removed once everything is acked. The spool survives the
process being killed, not a power cut (no fsync). The same happens with NATS up when more than
{SPOOL_PAST} events wait for their acks (NATS falls behind a flood), so a kill loses at most
{SPOOL_PAST} accepted events, never one that was acked.

### The fleet's events (a documented consumer)

`phoneuse-runtime events --nats-url URL [--device NAME] [--since SEQ] [--follow] [--json]`, or
`phoneuse_runtime.nats.consumer.read_events(js, device=, since=, follow=)` in Python, reads the
stream with an ordered consumer (ephemeral, flow control, idle heartbeat {HEARTBEAT_S:g} s)
starting at stream sequence `SEQ + 1` (`--since 0`, the default, from the first event), filtered
to `phoneuse.<NAME>.>` with `--device`. Events come in stream order, which is each phone's own
order. Each line is `SEQ DEVICE EVENT_TYPE PAYLOAD_JSON` (with `--json`: one object with `seq`,
`device`, `event_type`, `timestamp`, `source`, `id`, `payload`); at the end (or on Ctrl-C) stderr
says `cursor: SEQ (resume with --since SEQ)`. The cursor is the last `seq` handled: keep it, and
a reader that starts again with `--since` it misses nothing the stream still holds and sees
nothing twice. Within one run, when the connection drops or nats-server restarts, the consumer
is made again from the sequence after the last one delivered. Without `--follow` the command
ends once it has printed what the stream held when it started. A message that is not an event
of this shape (not a JSON object, a `timestamp` that is not an integer, a `payload` that is not
an object, a text field that is not text) is reported on stderr, `phoneuse-runtime: skipped
event SEQ <why>`, and passed over; the cursor moves past it. A missing url, a bad device name
or a negative `--since` exit 2; so does an unreachable NATS, saying so.

### Leases

`LEASE_ACQUIRE` (`ttl_s`, {MIN_TTL_S}..{MAX_TTL_S}, default {DEFAULT_TTL_S}), `LEASE_RENEW`
(`ttl_s`) and `LEASE_RELEASE` (the peer: LAMDA's `Lock`, `acquire_lock` / `refresh_lock` /
`release_lock`) give one principal at a time the phone (the principal of the caller's token; through a fleet,
the fleet token's name). While a principal holds a live lease:

- another principal's Execute answers `CONFLICT: <ACTION>: the lease on device <NAME> is held
  by '<holder>' until <ISO 8601 UTC> (<N> s from now)`, with `result_json`
  `{{"holder", "expires_at_ms", "device"}}`; nothing runs. The answer is kept for its
  `request_id` like any other: after the lease is free, send a new `request_id`;
- the holder's calls run; Query and Subscribe stay open to every authorized caller; the phone's
  owner (the Iris app's slash commands) is never blocked;
- a lease its holder stops renewing expires at `expires_at_ms` and then blocks nothing.

{_lease_table()}

Where it is kept: with `nats_url`, in the NATS KV bucket `{BUCKET}` (file storage, history 1,
values of at most {LEASE_VALUE_BYTES} bytes, {BUCKET_BYTES:,} bytes in all, created if absent),
key = the device name, value `{{"holder", "expires_at_ms", "acquired_at_ms"}}`
(nats-server 2.9's KV has a TTL per bucket only, so the expiry is in the value). Acquire creates
the key if absent, or updates it with the revision it read when the stored lease expired (or is
the caller's own): a compare-and-set, so two runtimes racing for one key give one holder and the
other `CONFLICT`. Renew updates with the revision, release deletes with it, by the holder only.
Runtimes sharing one KV keep their own keys: one phone's lease never blocks another phone.
Without `nats_url`, the same rules run in the runtime's memory (a lease then ends with the
runtime). The Execute check reads the runtime's copy of its phone's lease (read from the KV at
start and written by every lease action), so Execute works, and leases taken are enforced, while
NATS is unreachable; a runtime restarted during an outage enforces the stored lease once it has
read it. The lease actions publish `LEASE_ACQUIRED` and `LEASE_RELEASED` events, and a lease
that runs out unrenewed `LEASE_EXPIRED`.
"""
