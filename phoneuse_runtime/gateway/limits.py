"""What one app connection may send and hold, advertised (the first three) in `hello.ack`'s
`server_caps`, how long the outbox keeps frames, and what hellos before authentication may cost
(guesses, pending pairing requests, the lengths of what a hello names). The spec's gateway
limits table (`limit_rows`) is written from here."""

from __future__ import annotations

from dataclasses import dataclass, fields

from phoneuse_runtime.config.sections import GatewaySettings
from phoneuse_runtime.config.settings import Settings
from phoneuse_runtime.kernel.limits import MAX_ID_CHARS

# A hello's fields, in characters; a longer one is refused (`bad hello payload`), never clipped:
# a device_id is an identity, and a name the owner reads must not be a different one.
DEVICE_ID_CHARS = MAX_ID_CHARS
DEVICE_NAME_CHARS = 64
TOKEN_CHARS = 256  # ours are 43; an app's own needs 22 (base64url) or 32 (hex) at least

# A frame up to this many times max_frame_bytes is refused with an error and the connection stays
# open; past it the WebSocket layer closes the connection (1009) without reading it whole.
OVERSIZE_TOLERANCE = 4


@dataclass(frozen=True)
class GatewayLimits:
    max_frame_bytes: int
    max_media_bytes: int
    max_frames_per_second: int
    send_queue_bytes: int
    outbox_retention_s: float
    outbox_max_frames: int
    outbox_max_bytes: int
    auth_failures: int
    auth_window_s: float
    hello_timeout_s: float
    max_pending_requests: int

    @classmethod
    def from_settings(cls, gateway: GatewaySettings) -> GatewayLimits:
        """The limits of the `gateway` section (checked by load_settings)."""
        return cls(**{f.name: getattr(gateway, f.name) for f in fields(cls)})

    def caps(self) -> dict[str, int]:
        """The extra `server_caps` fields."""
        return {
            "max_frame_bytes": self.max_frame_bytes,
            "max_media_bytes": self.max_media_bytes,
            "max_frames_per_second": self.max_frames_per_second,
        }


def limit_rows(settings: Settings | None = None) -> list[tuple[str, str, str]]:
    """(setting or field, default, what it bounds) for the spec's table of the gateway's limits."""
    d = settings or Settings()
    mib = 1024 * 1024
    return [
        ("gateway_max_frame_bytes", f"{d.gateway_max_frame_bytes:,} B",
         "A frame after hello past it is an `unsupported` error and the connection stays open; "
         f"one past {OVERSIZE_TOLERANCE} times it closes the connection (1009) unread. Every frame "
         "before authentication (the hello) is held to it: a larger one closes the connection (1009)."),
        ("gateway_max_media_bytes", f"{d.gateway_max_media_bytes // mib} MiB",
         "An upload past it is `media_too_large`."),
        ("gateway_max_frames_per_second", f"{d.gateway_max_frames_per_second:,}",
         "Frames from one connection, in a token bucket of one second's worth; every frame counts, "
         "oversized and malformed ones too. Past it a frame is answered `rate_limited`, unhandled."),
        ("gateway_send_queue_bytes", f"{d.gateway_send_queue_bytes // mib} MiB",
         "Frames waiting to be written to a slow app; past it the connection is closed (1013)."),
        ("gateway_outbox_retention_s", f"{d.gateway_outbox_retention_s:g} s",
         "How long a device's outbox keeps never-dropped frames..."),
        ("gateway_outbox_max_frames", f"{d.gateway_outbox_max_frames:,}",
         "...and how many, oldest out first."),
        ("gateway_auth_failures", f"{d.gateway_auth_failures:,}",
         "Failed hellos (a token that opens nothing) on the whole gateway within the window, from "
         "every address together. Past it an unknown token is `rate_limited` and makes no pairing "
         "request; a paired or pending token is always looked up and let in."),
        ("gateway_auth_window_s", f"{d.gateway_auth_window_s:g} s", "The window of `gateway_auth_failures`."),
        ("gateway_hello_timeout_s", f"{d.gateway_hello_timeout_s:g} s",
         "A connection that has not said hello by then is closed."),
        ("gateway_max_pending_requests", f"{d.gateway_max_pending_requests:,}",
         "Pairing requests waiting for the owner at once (each lives 10 minutes). Past it a new one "
         "is `rate_limited`; those waiting are kept."),
        ("gateway_allowed_origins", "none",
         "Origins a WebSocket upgrade may carry. Native apps send none; an upgrade with any other "
         "`Origin` (a web page's) is refused with HTTP 403."),
        ("hello `device_id`", f"{DEVICE_ID_CHARS} characters", "Longer is refused (`bad hello payload`)."),
        ("hello `device_name`", f"{DEVICE_NAME_CHARS} characters",
         "Longer is refused (`bad hello payload`)."),
        ("hello `token`", f"{TOKEN_CHARS} characters",
         "Longer is refused. An app's own token must carry 128 bits: 22 or more base64url "
         "characters or 32 or more hex digits that look random (no runs, repeats or patterns)."),
    ]  # fmt: skip


def spec_section() -> str:
    """The spec's section on the Iris gateway's door and limits (docs/protocol_spec.md)."""
    rows = "\n".join(f"| `{name}` | {value} | {what} |" for name, value, what in limit_rows())
    return f"""## The Iris gateway's door

The gateway (`ws://HOST:PORT/ws`, the chat app's WebSocket) is reachable by every app on the
phone and by every page in its browser, so what a caller without a paired token can do or cost
is bounded. Each `gateway_*` limit is a setting (`PHONEUSE_GATEWAY_...`, or `gateway_...` in
`config.toml`); the hello fields' lengths and the token rule are fixed.

| setting or field | default | what it bounds |
|---|---|---|
{rows}

- **Origin.** An upgrade that carries an `Origin` header is refused with HTTP 403 unless
  `gateway_allowed_origins` lists it exactly. Native apps send none.
- **A paired token always gets in.** A hello's token is looked up (by an indexed hash: no
  hello scans the pairings) before any budget is consulted; only a token that opens nothing
  counts against `gateway_auth_failures`, which is one budget for the whole gateway, not per
  address. Past it such a hello is `rate_limited`: `too many failed hellos on this gateway`.
  A flood from another app on the phone can so keep a new app from a pairing code (and fill
  the pending cap) for as long as it lasts; what it never stops: a paired app, an app already
  waiting (told its own code again, free), and the owner's `pair new`, whose token gets in at
  once. Both refusals say so.
- **An app's own token** makes a pending pairing request with a code, bound to that token: a
  hello with another token and the same `device_id` makes a request of its own, never sees the
  first one's code, and `pair approve CODE` pairs the token of that code's request only. A token
  that does not carry 128 bits is refused (`auth`) with: `an app's own token must carry at least
  128 bits: 22 or more base64url characters (A-Z a-z 0-9 - _) or 32 or more hex digits, from a
  random generator; ...` (the rest says what is wrong: other characters, too short, or repeats
  itself like no random token does: runs such as `abcdef`, a repeated block, few distinct
  characters, one kind of character only). The common shapes are read as such: a UUID (its 32
  hex digits), and up to three short words ending in `-`, `_`, `.` or `:` before a random body
  (`app-` + 40 hex digits, `sk_live_` + hex, `iris:` + a UUID). It is an estimate, not a proof:
  make the token with a CSPRNG (e.g. 32 random bytes as base64url, or a UUID4).
- **After a revoke** (`pair revoke`, or an expiry) not one more frame of the device is handled:
  each frame is checked against the pairings as they are now before it is handled, and those
  of a revoked device are dropped while its connection closes (an `auth` error, then 1008).
"""
