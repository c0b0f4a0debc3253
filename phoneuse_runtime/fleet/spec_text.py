"""The fleet's section of docs/protocol_spec.md: the door's header, device names, the door's own
errors and the fleet's tokens (spec/document.py puts it in place)."""

from __future__ import annotations

from phoneuse_runtime.config.settings import Settings
from phoneuse_runtime.fleet.door import GRPC_FRAME_BYTES, HEADER, RELOAD_GRACE_S, STREAM_TIMEOUT_S
from phoneuse_runtime.rpc.auth import REVOKED, TOKENS_RECHECK_S
from phoneuse_runtime.util.device_names import NAME_MAX, SERIAL_MAX

_DEFAULTS = Settings()


def spec_section() -> str:
    limit = _DEFAULTS.grpc_max_receive_bytes
    known = "known devices: NAME (SERIAL), ..."
    rows = "\n".join(
        f"| {call} | `{status}` | {message} |"
        for call, status, message in (
            (f"has no `{HEADER}` header", "NOT_FOUND", f"`no {HEADER} metadata: ...; {known}`"),
            (
                "names no device of the fleet (unknown, or one that left)",
                "NOT_FOUND",
                f"`the {HEADER} metadata names no device of this fleet; {known}`",
            ),
            (
                "names a device whose runtime does not answer (starting, restarting)",
                "UNAVAILABLE",
                "`that device's runtime is not answering ...; retry shortly`",
            ),
            (
                f"sends a body past the runtime's receive limit ({limit} bytes of message, plus "
                f"{GRPC_FRAME_BYTES} of gRPC framing)",
                "RESOURCE_EXHAUSTED",
                "`the request is larger than the runtime's receive limit ...` (the runtime itself "
                "usually refuses such a message first, as soon as it reads its length, with the same "
                "status)",
            ),
        )
    )
    return f"""\
## The fleet's door

`phoneuse-runtime fleet` runs one runtime per phone behind one gRPC endpoint, nginx (the
door). Every call through the door names its phone in the `{HEADER}` metadata header: the
device's serial (`emulator-5554`, `192.168.1.5:5555`) or its name. The door passes the call,
with all its metadata (`authorization` included), to that phone's runtime, which answers it as
in the rest of this document. The service, its messages and its methods are the same; health
(`grpc.health.v1.Health/Check`, service `""` or `ai.lemon.phoneuse.mcpserver.protocol.AndroidRuntime`)
and reflection answer per phone, by the same header.

### Device names

A device's name is its serial with every character outside `[A-Za-z0-9_-]` replaced by `_`:
`192.168.1.5:5555` is `192_168_1_5_5555`, `emulator-5554` stays `emulator-5554`. A name has
at most {NAME_MAX} characters: a longer one keeps its first {NAME_MAX - 9} and ends in `-` and 8 hex
digits of the serial's SHA-256. A serial has at most {SERIAL_MAX} characters (adb's mDNS form,
`adb-28231FDH200XYZ-AbCdEf._adb-tls-connect._tcp`, has 47): a device with a longer one is
refused. The name is the phone's in NATS subjects and KV keys too. Names are compared without
regard to case, as the door matches the header (nginx's `map`): `SIM-2` is `sim-2`. Two serials
that would have one name are refused when the fleet starts, naming both; a device that comes
later with a taken name (or a serial too long) is refused on its own and logged, and the other
devices stay routed. Simulated phones are `sim-1` ... `sim-N`.

### The door's own answers

The door answers these calls itself, at once, as Trailers-Only gRPC responses (HTTP 200,
`grpc-status` and a percent-encoded `grpc-message` in the headers, no body):

| the call | status | message |
|---|---|---|
{rows}

The list of known devices is cut at about 1500 characters (`... (N in all)`). Everything else
(`UNAUTHENTICATED` for a missing or wrong token, `INVALID_ARGUMENT`, an Execute's
`success=false` with its code) comes from the phone's runtime, unchanged. Right after a device
joins or its runtime restarts (on a new port) the door is reloaded; a call made while nginx
reloads (tens of milliseconds) may still meet the routes of before (`UNAVAILABLE`, or
`NOT_FOUND` for a device that just joined): clients retry those. The fleet's `fleet.json` names
a device's address only once the door routes to it.

Streams: the door waits up to {STREAM_TIMEOUT_S} s ({STREAM_TIMEOUT_S // 3600} h) for a byte in
either direction (`grpc_read_timeout`, `grpc_send_timeout`), so a Subscribe stream may stay
quiet that long, whatever the runtime's keepalive pings (every `grpc_keepalive_s`) count for.
An Execute's own `timeout_ms` and the client's deadline still apply. When the door is
reloaded (a device came, went, or restarted), calls open through it run on in the old nginx
worker for up to {RELOAD_GRACE_S} s ({RELOAD_GRACE_S // 60} min), which then ends them: a
Subscribe client then sees its stream end and subscribes again (with its `subscriber_id`, the
new stream replaces the old one).

### Principals through the door

`phoneuse-runtime fleet token new NAME` makes a token for principal `NAME` (a letter, then up
to 63 letters, digits, `_`, `.` or `-`; not `agent` in any case), prints it once and stores only its
SHA-256 in the fleet's `tokens.json`. Every member runtime is started with
`serve --tokens-file FLEET_DIR/tokens.json` and accepts those tokens beside its own, each as
its principal (in task events' `caller`, the scope of `request_id`s and `subscriber_id`s, and
leases). The principal comes from the token the runtime checks: no header sets it, and the
door checks nothing. The runtime re-reads the file when it changes (at each call, and every
{TOKENS_RECHECK_S:g} s between calls): `fleet token revoke NAME` refuses the token (`UNAUTHENTICATED`)
on every phone from its next call, with no restart, and ends that principal's open Subscribe
streams, through the door or straight, with `UNAUTHENTICATED` (`{REVOKED}`) within
{TOKENS_RECHECK_S:g} s, their queued events dropped; a tokens file that is gone or unreadable holds
no tokens (and so ends every fleet principal's streams).
"""
