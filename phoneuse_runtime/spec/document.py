"""Generates docs/protocol_spec.md from the handler, result and event models.

`phoneuse-runtime spec --output docs/protocol_spec.md` rewrites it; a test fails when
the committed file differs from what this produces.
"""

from __future__ import annotations

import inspect
import json
from typing import Any

from pydantic import BaseModel

from phoneuse_runtime.config.settings import Settings
from phoneuse_runtime.device.sim.state import LIMITS as SIM_LIMITS
from phoneuse_runtime.kernel.capabilities import CAPABILITIES
from phoneuse_runtime.kernel.errors import FAILURES
from phoneuse_runtime.kernel.limits import (
    CLIP_CHARS,
    MAX_APP_TARGET_CHARS,
    MAX_BULK_CHARS,
    MAX_ERROR_CHARS,
    MAX_EVENT_TYPES,
    MAX_ID_CHARS,
    MAX_JSON_DEPTH,
    MAX_NAME_CHARS,
    MAX_OFFSET_DIGITS,
    MAX_PARAM_CHARS,
    MAX_RESPONSE_JSON_BYTES,
    MAX_TIMEOUT_MS,
    MAX_UI_DEPTH,
    MEMORY_KIND_CHARS,
    MEMORY_LINKS,
    MEMORY_NAME_CHARS,
    MEMORY_QUERY_WORDS,
    MEMORY_TAG_CHARS,
    MEMORY_TAGS,
    MEMORY_TEXT_CHARS,
    OMITTED,
    SETTLE_CHANGES_MAX,
    SETTLE_DEFAULT_MS,
    SETTLE_MAX_MS,
)
from phoneuse_runtime.kernel.registry import AnyActionSpec, AnyQuerySpec, Registry
from phoneuse_runtime.kernel.runtime import DEFAULT_QUERY_LIMIT
from phoneuse_runtime.memory.embeddings import MAX_ANSWER_BYTES as EMBEDDINGS_MAX_ANSWER_BYTES
from phoneuse_runtime.memory.embeddings import MAX_DIMENSIONS as EMBEDDINGS_MAX_DIMENSIONS
from phoneuse_runtime.rpc.auth import REFUSAL_LOG_INTERVAL_S
from phoneuse_runtime.rpc.frontends import FRONTEND_KEY, RELAYED

BUILTIN_MODULES = (
    "phoneuse_runtime.actions.",
    "phoneuse_runtime.queries.",
    "phoneuse_runtime.gateway.",
    "phoneuse_runtime.nats.",
)
_DEFAULTS = Settings()  # the documented figures are the defaults; config may change them


def _type(prop: dict[str, Any], defs: dict[str, Any]) -> str:
    if "$ref" in prop:
        return str(prop["$ref"]).rsplit("/", 1)[-1]
    if "anyOf" in prop:
        kinds = [_type(p, defs) for p in prop["anyOf"] if p.get("type") != "null"]
        nullable = any(p.get("type") == "null" for p in prop["anyOf"])
        return " or ".join(kinds) + (" or null" if nullable else "")
    if "enum" in prop:
        return " or ".join(f"`{v}`" for v in prop["enum"])
    if "const" in prop:
        return f"`{prop['const']}`"
    kind = prop.get("type", "any")
    if kind == "array":
        return f"list of {_type(prop.get('items', {}), defs)}"
    if kind == "string" and prop.get("format") == "date-time":
        return "time (ISO-8601 or epoch ms)"
    if kind == "object":
        return "JSON object"
    return str(kind)


def _limits(prop: dict[str, Any]) -> str:
    parts = []
    for key, label in (
        ("minimum", ">="),
        ("exclusiveMinimum", ">"),
        ("maximum", "<="),
        ("exclusiveMaximum", "<"),
        ("minLength", "min length"),
        ("maxLength", "max length"),
        ("maxItems", "at most"),
    ):
        if key in prop:
            parts.append(f"{label} {prop[key]}" + (" items" if key == "maxItems" else ""))
    item_limits = _limits(prop["items"]) if isinstance(prop.get("items"), dict) else ""
    if item_limits:
        parts.append(f"each {item_limits}")
    return ", ".join(parts)


def _mib(size: int) -> str:
    return f"{size / (1024 * 1024):g} MiB"


def _kib(chars: int) -> str:
    return f"{chars} ({chars // 1024} Ki)" if chars % 1024 == 0 else str(chars)


def model_table(model: type[BaseModel], *, inputs: bool) -> list[str]:
    schema = model.model_json_schema(by_alias=True, mode="validation" if inputs else "serialization")
    props: dict[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", []))
    defs = schema.get("$defs", {})
    if not props:
        return ["_(none)_", ""]
    head = "| key | type | required | default | notes |" if inputs else "| field | type | notes |"
    rows = [head, "|---|---|---|---|---|" if inputs else "|---|---|---|"]
    for name, prop in props.items():
        if name == "event_type":
            continue
        kind = _type(prop, defs)
        note = "; ".join(x for x in (prop.get("description", ""), _limits(prop)) if x)
        if inputs:
            default = (
                ""
                if name in required
                else f"`{json.dumps(prop['default'], ensure_ascii=False)}`"
                if "default" in prop
                else ""
            )
            rows.append(f"| `{name}` | {kind} | {'yes' if name in required else 'no'} | {default} | {note} |")
        else:
            rows.append(f"| `{name}` | {kind} | {note} |")
    return [*rows, ""]


def _nested(models: list[type[BaseModel]]) -> dict[str, type[BaseModel]]:
    found: dict[str, type[BaseModel]] = {}
    for model in models:
        for info in model.model_fields.values():
            for arg in _flatten(info.annotation):
                if isinstance(arg, type) and issubclass(arg, BaseModel) and arg.__name__ not in found:
                    found[arg.__name__] = arg
    return found


def _flatten(annotation: Any) -> list[Any]:
    args = getattr(annotation, "__args__", None)
    if not args:
        return [annotation]
    return [x for a in args for x in _flatten(a)]


def _builtin(spec: AnyActionSpec | AnyQuerySpec) -> bool:
    return spec.handler.__module__.startswith(BUILTIN_MODULES)


PREAMBLE = f"""# phoneuse-runtime protocol spec

_Generated by `phoneuse-runtime spec` from the handler models. Do not edit by hand._

The wire contract is `proto/protocol.proto` (package `ai.lemon.phoneuse.mcpserver.protocol`,
service `AndroidRuntime`). This page documents what travels inside its strings.

## Calls

- **Auth.** Every call carries metadata `authorization: Bearer <token>`. A missing or wrong
  token is `UNAUTHENTICATED`. `grpc.health.v1.Health` and server reflection need no token.
- **Execute.** `params` values are strings, coerced to each action's types below: integers,
  floats (finite), `true`/`false`, times as ISO-8601 (`2026-12-01T09:30:00+01:00`, naive means
  UTC) or epoch milliseconds, JSON for objects, and a JSON list or comma-separated text for lists.
  Unknown keys fail with `INVALID_PARAMS`, naming the allowed keys. Every value has a maximum
  length ([Limits](#limits)).
  - A malformed request (empty `action_type`, empty `request_id`, `timeout_ms <= 0` or past a day,
    an id or `action_type` past its [limit](#limits)) is the gRPC status `INVALID_ARGUMENT`.
  - A failed action is `success=false` and `error` = `CODE: message`; `result_json` is then a
    JSON object with details where there are any (e.g. `candidates` of an ambiguous name), else `{{}}`.
  - `timeout_ms` bounds the whole call, policies and approvals included: at the deadline the
    device work is cancelled and the answer is `TIMEOUT`. Only this deadline makes `TIMEOUT`: a
    connection to the phone that times out inside an action is `DEVICE_UNAVAILABLE`.
  - **Idempotency.** A `request_id` seen from the same caller in the last
    {_DEFAULTS.idempotency_ttl_s / 60:g} minutes returns the stored response without acting again
    (a retry during the first call waits for its outcome). The same id with a different
    `action_type`, `app_target` or `params` is `CONFLICT`. The action runs to its own deadline
    even if the caller goes away, so a retry after a client-side timeout is safe.
  - **Capabilities.** Each action requires some of the device's capabilities (listed with it
    below); on a device that lacks one, it answers `UNSUPPORTED` before it runs, with a hint that
    says how to get it. `phoneuse-runtime actions --device KIND` shows what a device can do.
  - Every result names the path the backend took in `via` (`sim`, `uiautomator2`, `am start`,
    `termux-api`, `memory`, ...).
- **Query.** `limit` 0 means {DEFAULT_QUERY_LIMIT}; larger than {_DEFAULTS.query_max_limit} is clamped
  to it; negative is `INVALID_ARGUMENT`. `total_count` counts every match, `has_more` says
  whether results remain past this page, and the filter `offset` (a non-negative integer of at
  most {MAX_OFFSET_DIGITS} digits, default 0) pages. A page also ends early, with `has_more`, rather
  than pass {_mib(MAX_RESPONSE_JSON_BYTES)} of results ([Limits](#limits)): page on by the number of
  results received. Unknown filter keys and `QUERY_TYPE_UNSPECIFIED` are `INVALID_ARGUMENT`.
  Device trouble maps to gRPC statuses
  (`DEVICE_UNAVAILABLE` → `UNAVAILABLE`, `TIMEOUT` → `DEADLINE_EXCEEDED`, ...), with
  `CODE: message` as details, and `UNSUPPORTED` → `UNIMPLEMENTED`, `DENIED` → `PERMISSION_DENIED`.
- **Subscribe.** Empty `event_types` means all; a `subscriber_id` or `event_types` past its
  [limit](#limits) is `INVALID_ARGUMENT`, and so is an event type the server does not know (one
  not listed under [Events](#events), nor contributed by a component or plug-in it runs): the
  details name the known ones (`phoneuse-runtime actions` lists them too), since a stream for a
  misspelt type would wait forever. Response headers are sent once the subscription
  is live (`x-subscriber-id`), so a client that awaits them misses nothing after. A new stream with
  the `subscriber_id` of a live one replaces it; the old stream ends with status OK. Each subscriber
  has a queue of {_DEFAULTS.event_queue_size} events and {_mib(_DEFAULTS.event_queue_bytes)}
  (`event_queue_size`, `event_queue_bytes`). **Overflow policy:** the publisher never waits; when a
  subscriber's queue is full its oldest events are dropped (the newest is always kept), and the
  next thing it reads is an `ERROR`
  event with `code` `EVENTS_DROPPED` and the count, whatever its `event_types`. Other subscribers
  are unaffected. On server shutdown, streams end with status OK after their queued events.
  **Polled events** (`APP_STATE_CHANGED`, `MESSAGE_RECEIVED`, `NOTIFICATION_POSTED`,
  `CALL_STATE_CHANGED` on the adb and Termux backends) are looked for on the phone only while a
  Subscribe stream (or an Iris app device connected to the gateway) wants them, every `poll_ms`
  ({_DEFAULTS.poll_ms} ms); with none, no command runs on the phone. `MEMORY` and `CONTACTS`
  first read the SMS and calls the phone gained since the memory last looked (it also looks
  after a provider-writing action and every `memory.catch_up_s`, {_DEFAULTS.memory_catch_up_s} s).

- **One action at a time on the phone.** Actions that drive the phone take turns in arrival
  order, so two agents' taps and typing never interleave; waiting for the turn counts against
  `timeout_ms`. Actions marked "runs alongside" below (looking at the screen, waiting, memory,
  simulated world events) do not wait.

## Callers

Every call carries its caller: the front end it came through (`grpc`, or `gateway` for the
owner's slash commands in a paired Iris app) and the principal it authenticated as (`agent` for
the gRPC token, `device:PAIRING_ID` for a paired app device).
`request_id`s and `subscriber_id`s belong to their principal: two callers that pick the same id
never collide. Every authenticated subscriber receives every event, other callers' included:
they all act for the phone's one owner, and a front end that mirrors the agent's work needs to
see it. `TASK_STARTED`, `TASK_COMPLETED` and the approval events name the caller, so a front
end can tell its own calls from others'.

**Front ends behind a gRPC client.** A gRPC client that relays for another front end says which
in the metadata `{FRONTEND_KEY}` on each call (known: {", ".join(f"`{name}`" for name in sorted(RELAYED))},
which the attached `phoneuse-runtime mcp` sends), and its caller is then that front end with the
token's principal (`mcp:agent`); the principal never comes from metadata. Any other value (in
any entry of the key, if it comes more than once) is `INVALID_ARGUMENT` (`BAD_REQUEST: ...`)
before the request is read; the token is checked first. Without the key the front end is
`grpc`. It grants nothing: no policy, approval, limit or allow/deny list treats one front end
differently from another (only the owner's slash commands are, and metadata cannot make a call
the owner's), and ids stay scoped by principal. Nor does it get the MCP face's ways: the face
asks its client's user about held calls only where the owner set `mcp_client_is_owner`, and
only about calls it made itself, never a gRPC client's that says `mcp`; a `requestState` naming
such a hold is refused. A client that says `mcp` differs from a gRPC one only in how events and
approvals name its calls.

## Policies and approvals

Every Execute and every Query passes an ordered chain of policies after its params are
validated and before its handler runs: first the `allow_actions` / `deny_actions` lists of the
config, which name actions and queries alike (`DENIED`), then those of the app's components,
then the app's own. The lists judge a call by its effects: its own name and the actions whose
effect it has (START_INTENT's and OPEN_URL's are listed with them below). A list that names no
action or query stops the server from starting.
A policy may hold a call for a person's answer:

- `APPROVAL_REQUESTED` announces the hold, with the exact call, its SHA-256 `digest` and the
  deadline; `APPROVAL_RESOLVED` ends it: `approved`, `denied` (the call is `DENIED`), `expired`
  or `cancelled` (the server stopped).
- The hold counts against the call's `timeout_ms`; the device work gets what is left. A hold
  that the deadline ends is `TIMEOUT` with the message "no answer came to approval ID ...", and
  nothing was done; the message says how the owner answers (the Iris app, or
  `phoneuse-runtime approvals approve ID` on the server's machine) or switches approvals off.
  `TASK_COMPLETED` reports the time held as `held_ms`.
- Refusals that need no person come before any hold: an unknown action, a missing capability,
  invalid params, and each action's own preconditions (SHELL without `--allow-shell`, a URL
  scheme outside `url_schemes`, an intent aimed at the owner's controls) answer at once.
- While a hold of a caller other than the owner is pending, every other action of such a caller
  that uses the phone (OPEN_APP, DUMP_UI, TAP, ...) waits for it to be answered, within its own
  `timeout_ms` (past it: `TIMEOUT` "ACTION waited for approval ID ..."); an approved call goes on.
  Queries, and actions that leave the phone alone (CHAT_REPLY), are not held up.

## The owner's controls

No caller but the owner (a slash command in the Iris app) drives the apps and screens that
would let it answer or switch off its own approvals: those of the `owner_apps` setting (by
default the Iris app `ai.lemon.iris`, Termux `com.termux`, `com.termux.api`, `com.termux.boot`,
Settings `com.android.settings`, the permission controllers, the package installers, and the
system UI `com.android.systemui`: the notification shade and the lock screen).

- A UI action (TAP, LONG_PRESS, SWIPE, SCROLL, TYPE_TEXT, CLEAR_TEXT, PRESS_KEY) while one of
  them is in front is `PERMISSION_DENIED: ACTION: ... is in front, one of the owner's controls`.
  The front is checked once the action has its turn on the phone: on adb by the phone itself, in
  the action's own command (an element is looked for only in the focused window, and only an
  unguarded app's; typing's script, and on Android 11+ the `input` script of a gesture at
  coordinates or a key, reads the focused window before it acts; before Android 11 a gesture or
  key reads it just before, in the same worker call), elsewhere by a read just before it runs.
  PRESS_KEY of HOME, BACK, WAKEUP, SLEEP, POWER, VOLUME_UP or VOLUME_DOWN is allowed: those only
  leave. So are WAKE, SLEEP and UNLOCK, which are no UI action: UNLOCK only dismisses a lock
  screen that needs no secret, and on one with a PIN, pattern or password answers
  `OWNER_MUST_UNLOCK` before touching it (the runtime never types a secret).
- A UI action that brings one of them (but the system UI) to the front (its icon on the home
  screen, its card in recents, a button that opens it) is undone with HOME, which leaves it as
  it was in the background, and is `PERMISSION_DENIED: ACTION: it brought ... to the front`. The
  front after is read from the settle's last look (adb: no round trip of its own), or by a read
  after the action (the other backends). On adb with `settle_ms=0` nothing looks after the
  action: the next look (DUMP_UI) or UI action within 10 s that finds one of them in front
  undoes it and is refused instead, `PERMISSION_DENIED: ACTION: the UI action before it, with
  settle_ms=0, brought ...`.
- OPEN_APP, CLOSE_APP, OPEN_URL (by `app_target`) and START_INTENT (by `package`, `component`
  or `app_target`) aimed at one of them, and START_INTENT of a settings screen
  (`android.settings.*`) or of an action that changes who guards the phone (device admin,
  roles such as the default SMS app, permissions, uninstalling) are `PERMISSION_DENIED`.
- With `approve_ui_in` (e.g. `["com.whatsapp"]`), every UI action while one of those packages is
  in front is held for the owner's approval.
- No action cuts the runtime's own link to the phone: SET_WIFI `enabled=false` and
  SET_AIRPLANE_MODE (on or off) are `PERMISSION_DENIED`, before any hold, naming the link, while
  the runtime reaches the phone over its Wi-Fi (adb over TCP off loopback or by an mDNS
  `_adb-tls-connect` name, the Termux backend's own adb over wireless debugging, an Iris app
  connected from a non-loopback address), unless the owner set `allow_cutting_link = true`.
- The front is read by window, never by a package named anywhere in a line: the system's
  "isn't responding" or "keeps stopping" dialog (window "Application Not Responding: PKG") is
  the system's window (package `android`), whatever package its title names; the permission
  controller's prompt is one of the owner's controls (`PERMISSION_DENIED` for any tap on it).

## Stale screens and system dialogs

- TAP, LONG_PRESS and SWIPE at coordinates are aimed at the last screen the caller (its
  principal) was given: DUMP_UI, an action's settled screen, APP_STATE's screen, SCREENSHOT's
  marks. When the window in front is none of that screen's (a system dialog, a call, another
  app came up since), the gesture is not done: `STALE_SCREEN: WHAT is in front now, not APP of
  your last screen; read the screen again`. On adb the check is in the gesture's own shell
  command (no round trip of its own); `check_screen=false` opts out for one call. A caller given
  no screen yet is not checked.
- A system dialog on a screen read for a caller ("isn't responding", "keeps stopping", a runtime
  permission prompt, another of the system's alerts) is published once per appearance as
  `SYSTEM_DIALOG` (`kind` anr, crash, permission or other; `package`, `label`, `title`,
  `buttons`); on adb and Termux's own adb also from the events' poll of the focused window while
  somebody subscribes to it (then `title` is the window's and `buttons` empty): no read of its
  own. The `error_dialogs` setting says what the runtime does about ANR and crash dialogs:
  `report` (the default) nothing more, `wait` presses Wait on an ANR dialog (Close app on a
  crash dialog), `close` presses Close app. A permission prompt is never answered by the runtime.
- `SIM_SHOW_DIALOG kind=anr|crash|permission package=PKG` shows one on the simulated phone.
"""


_PRINTABLE = "printable ASCII characters"
LIMIT_ROWS: tuple[tuple[str, str, str], ...] = (
    ("`request_id`", f"1 to {MAX_ID_CHARS} {_PRINTABLE}", "`BAD_REQUEST`"),
    (
        "`subscriber_id`",
        f"empty (the server names the stream) or 1 to {MAX_ID_CHARS} {_PRINTABLE}",
        "`BAD_REQUEST`",
    ),
    ("`action_type`", f"{MAX_NAME_CHARS} characters", "`BAD_REQUEST`"),
    ("`app_target`", f"{MAX_APP_TARGET_CHARS} characters", "`BAD_REQUEST`"),
    ("`event_types`", f"{MAX_EVENT_TYPES} entries of {MAX_NAME_CHARS} characters", "`BAD_REQUEST`"),
    ("filter `offset`", f"{MAX_OFFSET_DIGITS} ASCII digits", "`BAD_REQUEST`"),
    (
        "`timeout_ms` (Execute, MCP's tools)",
        f"1 to {MAX_TIMEOUT_MS:,} ms (a day); a Query's own gRPC deadline is cut to a day",
        "`BAD_REQUEST`",
    ),
    (
        "a param or filter value",
        f"{_kib(MAX_PARAM_CHARS)} characters, or its field's own `max length` below (bulk text such as "
        f"`SIM_SET_SCREEN`'s `xml`: {_kib(MAX_BULK_CHARS)})",
        "`INVALID_PARAMS`",
    ),
    (
        "JSON in a param",
        f"{MAX_JSON_DEPTH} levels of nesting; numbers finite (no `NaN`, `Infinity` or `1e999`), "
        "integers from -2^63 to 2^63-1",
        "`INVALID_PARAMS`",
    ),
    (
        "a time",
        "from 0001-01-02 to 9999-12-30 (UTC), so that a day either way is one too",
        "`INVALID_PARAMS`",
    ),
    ("a UI hierarchy (`SIM_SET_SCREEN`)", f"{MAX_UI_DEPTH} levels of nested `node`s", "`INVALID_PARAMS`"),
    (
        "a memory item (`REMEMBER`)",
        f"`kind` {MEMORY_KIND_CHARS}, `name` {MEMORY_NAME_CHARS}, `text` {_kib(MEMORY_TEXT_CHARS)} "
        f"characters; {MEMORY_TAGS} `tags` of {MEMORY_TAG_CHARS} characters; {MEMORY_LINKS} `related_to` ids",
        "`INVALID_PARAMS`",
    ),
    (
        "`MEMORY`'s `q`",
        f"{MEMORY_QUERY_WORDS} words (each must match, as a prefix)",
        "`INVALID_PARAMS`",
    ),
    (
        "an error's message",
        f"{MAX_ERROR_CHARS:,} characters, cut with `…`; a value the caller sent is quoted as its first "
        f"{CLIP_CHARS} characters and its length",
        "—",
    ),
    (
        "a response's results, an event's payload",
        f"{_mib(MAX_RESPONSE_JSON_BYTES)} ({MAX_RESPONSE_JSON_BYTES} bytes) of JSON, as UTF-8",
        "the page ends early, or the marker below",
    ),
)

LIMITS = f"""## Limits

Every id, param and stored text has a limit, chosen so that a real agent never meets it. Past
one, the call is refused as a whole and nothing runs or is stored: `BAD_REQUEST` (over gRPC, the
status `INVALID_ARGUMENT`) for the request's own fields, `INVALID_PARAMS` for params and filters
(an Execute's `success=false`; a Query's `INVALID_ARGUMENT`). The message names the field, its
length and the limit. Lengths count characters (Unicode code points); the gRPC server's receive
limit bounds a whole request in bytes.

| what | limit | past it |
|---|---|---|
{chr(10).join(f"| {what} | {limit} | {past} |" for what, limit, past in LIMIT_ROWS)}

**Responses never pass what a gRPC client accepts by default (4 MiB).** A Query page ends
before its results would pass {_mib(MAX_RESPONSE_JSON_BYTES)}, with `has_more` true even if fewer than `limit`
results came: page on with `offset` + the number of results received, and every result is reached
once. A single result larger than that on its own is replaced, in its place, by the marker
below; so is an Execute's `result_json`, and an event's `payload_json` (a stream that received
one would end), when larger:

```json
{{"omitted": "{OMITTED}", "bytes": 4200081, "max_bytes": {MAX_RESPONSE_JSON_BYTES}}}
```

where `bytes` is the size of what was left out. An Execute answered with the marker still
succeeded (`success=true`): the action was done, only its result was too large to send.

**What the runtime keeps is bounded too** (settings, with their defaults), in bytes whatever a
caller sends: the responses kept for replays at most `idempotency_max_entries`
({Settings.idempotency_max_entries:,}) and `idempotency_max_bytes`
({_mib(Settings.idempotency_max_bytes)}), each subscriber's queue `event_queue_bytes`
({_mib(Settings.event_queue_bytes)}), the oldest going first; the chat's messages hold at most
`gateway_chat_max_bytes` ({_mib(Settings.gateway_chat_max_bytes)}) of text and are kept
`gateway_chat_retention_days` ({Settings.gateway_chat_retention_days}) days, each device's outbox at most
`gateway_outbox_max_bytes` ({_mib(Settings.gateway_outbox_max_bytes)}), the oldest going first; the
memory keeps messages and calls `memory.retention_days` ({Settings.memory_retention_days}) days; the
runtime's files directory (`DATA_DIR/files`, PULL_FILE's and PUSH_FILE's side) holds at most
`files_max_bytes` ({_mib(Settings.files_max_bytes)}) in all, and one push carries at most
`files_max_push_bytes` ({_mib(Settings.files_max_push_bytes)}): past either the call is refused and
nothing is kept. An
embeddings endpoint's answer is read up to {_mib(EMBEDDINGS_MAX_ANSWER_BYTES)}, with vectors of at most
{EMBEDDINGS_MAX_DIMENSIONS} numbers, all of the dimension the first ones stored had. One-time codes
and passwords in message text are masked (`[code]`, `[password]`) before any of it is stored.
"""

SIM_LIMITS_INTRO = """\
`--device sim` starts as the seed phone of `phoneuse_runtime/device/sim/seed.py`. Its stores are
bounded, as a phone's are: what the world sends (`SIM_RECEIVE_SMS`, incoming WhatsApp messages,
`SIM_POST_NOTIFICATION`) pushes out the oldest, and what the owner adds is refused past its limit.
The same limits hold for a state loaded with `--sim-state`."""


def _limit_rows() -> str:
    d = _DEFAULTS
    rows = [
        ("grpc_max_receive_bytes", f"{d.grpc_max_receive_bytes:,} B",
         "The largest request. A larger one is `RESOURCE_EXHAUSTED`. The largest params the limits "
         "below allow fit: a value's 256 Ki characters even as 4-byte UTF-8, `SIM_SET_SCREEN`'s "
         "1 Mi-character `xml` as ASCII."),
        ("grpc_max_concurrent_calls", f"{d.grpc_max_concurrent_calls:,}",
         "Calls open at once, streams included. A call past it is `RESOURCE_EXHAUSTED`."),
        ("grpc_max_concurrent_streams", f"{d.grpc_max_concurrent_streams:,}",
         "Calls open at once on one connection (HTTP/2 `MAX_CONCURRENT_STREAMS`). A gRPC client "
         "holds the calls past it until one ends; none is refused."),
        ("grpc_max_pending_calls", f"{d.grpc_max_pending_calls:,}",
         "Calls that have arrived and wait for the server to take them up (a burst, a flood). Below "
         "it they wait their turn; past it a new call is `CANCELLED`."),
        ("grpc_max_connections", f"{d.grpc_max_connections:,}",
         "Connections open at once, and never more than the open-file limit less 64, which are kept "
         "for the server's own files. A connection past it is closed at once."),
        ("grpc_handshake_timeout_s", f"{d.grpc_handshake_timeout_s:g} s",
         "A connection that has not begun HTTP/2 by then (one that sends nothing) is closed."),
        ("grpc_idle_timeout_s", f"{d.grpc_idle_timeout_s:g} s",
         "A connection without calls for this long is sent GOAWAY; a client connects again for "
         "its next call."),
        ("grpc_keepalive_s", f"{d.grpc_keepalive_s:g} s",
         "A connection with open calls that has been quiet this long is pinged..."),
        ("grpc_keepalive_timeout_s", f"{d.grpc_keepalive_timeout_s:g} s",
         "...and closed if the ping is not answered within this (a frozen app's streams end)."),
    ]  # fmt: skip
    return "\n".join(f"| `{name}` | {value} | {what} |" for name, value, what in rows)


CONNECTION_LIMITS = f"""## Connections and limits

Every app on the phone can reach the server's port, so what one caller can hold of the server
is bounded. Each limit is a setting (`PHONEUSE_GRPC_...` in the environment, or `grpc_...` in
`config.toml`); the defaults below are sized for a phone: thousands of calls at once from one
client get through, and a silent or hostile connection holds a few seconds and a bounded share
of open files.

| setting | default | what it bounds |
|---|---|---|
{_limit_rows()}

- **Before the message.** A call's token is checked before its request message is read: a
  caller without a valid token is `UNAUTHENTICATED` whatever it sends, or if it sends nothing,
  and its message is neither decoded nor kept. The server keeps each call's HTTP/2 receive
  window at 64 KiB, so that is the most a caller can send ahead of being read.
- A request that is not a valid protobuf message of its type is `INVALID_ARGUMENT` (`not a
  valid ActionRequest message`).
- **The log.** Refused calls are logged at most once every {REFUSAL_LOG_INTERVAL_S:g} s: the first at
  once, then one line for each {REFUSAL_LOG_INTERVAL_S:g} s in which more came, with how many and
  the last one's reason.
"""


def _policy_section(registry: Registry) -> list[str]:
    """The policies the served components add to the chain, each with its documentation."""
    out = ["## Policies of the components", ""]
    for policy in [*registry.refusals, *registry.policies]:
        out += [f"### {policy.name}", "", inspect.cleandoc(type(policy).__doc__ or ""), ""]
    return out


def _nats_section() -> str:
    from phoneuse_runtime.nats.spec_text import spec_section

    return spec_section()


def render_spec(registry: Registry) -> str:
    """docs/protocol_spec.md for `registry` (the composition root's `served_registry` for the
    committed file): its built-in actions and queries, its events and its components' policies."""
    actions = [s for s in registry.actions.values() if _builtin(s)]
    queries = [s for s in registry.queries.values() if _builtin(s)]
    from phoneuse_runtime.fleet.spec_text import spec_section as fleet_section
    from phoneuse_runtime.gateway.limits import spec_section as gateway_section
    from phoneuse_runtime.mcp.spec_section import spec_section as mcp_section

    out = [
        PREAMBLE,
        CONNECTION_LIMITS,
        gateway_section(),
        mcp_section(registry),
        fleet_section(),
        LIMITS,
        _nats_section(),
        "## Error codes",
        "",
        "| code | meaning |",
        "|---|---|",
    ]
    out += [f"| `{f.code}` | {f.summary} |" for f in FAILURES]
    out += ["", "## Actions", ""]
    out += [
        f"- [`{s.action_type}`](#{s.action_type.lower()}) — {s.summary}" for s in sorted(actions, key=_key)
    ]
    out.append("")
    for spec in sorted(actions, key=_key):
        out += [f"### {spec.action_type}", "", spec.summary + "."]
        if spec.requires:
            out.append(f"Requires: {', '.join(f'`{c}`' for c in sorted(spec.requires))}.")
        if not spec.takes_turns:
            out.append("Runs alongside other actions (it does not take the phone).")
        if spec.notes:
            out += ["", spec.notes]
        if spec.settles:
            out += ["", SETTLES_LINE]
        out += ["", "Params:", "", *model_table(spec.params, inputs=True)]
        out += ["Result:", "", *model_table(spec.result, inputs=False)]
    from phoneuse_runtime.screen.text import spec_section as screen_section

    out += _settling_section()  # a subsection of the actions
    out += [screen_section()]
    out += ["## Queries", ""]
    for qspec in sorted(queries, key=lambda s: s.query_type):
        out += [f"### {qspec.query_type}", "", qspec.summary + "."]
        if qspec.requires:
            out.append(f"Requires: {', '.join(f'`{c}`' for c in sorted(qspec.requires))}.")
        out += ["", "Filters (and `offset`):", ""]
        out += model_table(qspec.filters, inputs=True)
        out += ["Each result:", "", *model_table(qspec.result, inputs=False)]
    out += ["## Events", "", "Every event has `timestamp` (epoch ms) and `source` set.", ""]
    for name, payload in registry.events.items():
        about = inspect.cleandoc(payload.__doc__ or "")
        out += [f"### {name}", "", about, "", *model_table(payload, inputs=False)]
    out += _policy_section(registry)
    out += ["## Capabilities", "", "| capability | what it is | how a device gets it |", "|---|---|---|"]
    out += [f"| `{name}` | {what} | {how} |" for name, (what, how) in CAPABILITIES.items()]
    out += ["", "## The simulated phone", "", SIM_LIMITS_INTRO, "", "| store | at most |", "|---|---|"]
    out += [f"| {what} | {limit} |" for what, limit in SIM_LIMITS]
    out.append("")
    nested = _nested(
        [s.result for s in actions] + [q.result for q in queries] + list(registry.events.values())
    )
    if nested:
        out += ["## Shared objects", ""]
        for name, model in sorted(nested.items()):
            out += [f"### {name}", "", (model.__doc__ or "").strip(), "", *model_table(model, inputs=False)]
    return "\n".join(out).rstrip() + "\n"


SETTLES_LINE = (
    "It settles: it also takes `settle_ms`, and its result also has `settle`, `ui_fingerprint` and "
    "`changes` ([Settling](#settling))."
)


def _settling_section() -> list[str]:
    from phoneuse_runtime.screen.settle import (
        ANSWER_MARGIN_S,
        FIRST_PAUSE_S,
        MAX_PAUSE_S,
        NEW_SCREEN_MIN,
        Changed,
        Changes,
        Seen,
        Settled,
        SettleParams,
        SettleReport,
    )

    out = [
        "### Settling",
        "",
        "Every action marked *it settles* (the UI actions) compares the screen after it with the screen "
        "before it: the last one given to a caller (DUMP_UI, APP_STATE's screen, or the previous action's "
        "settled screen), else one read before it acts. After it acts, it "
        "reads the screen until two consecutive reads agree (the screen stopped changing); the screen its "
        "own device work read after it acted is the first read (on adb an action on an element reads it in "
        "the same round trip, and TYPE_TEXT's read back is one), leaving the system bars "
        "(`com.android.systemui` windows that are strips at most a tenth of the screen's height: the "
        "status bar, whose clock ticks) out of the comparison and the account; a shade or lock "
        "screen pulled over the app counts. The pause between "
        f"reads starts at {FIRST_PAUSE_S * 1000:g} ms and doubles while the screen keeps changing, up to "
        f"{MAX_PAUSE_S * 1000:g} ms; a screen that does not move settles at the second read. It stops "
        "at `settle_ms` (default "
        f"{SETTLE_DEFAULT_MS} ms, at most {SETTLE_MAX_MS} ms, 0 skips settling and adds nothing to the "
        f"result), and always {ANSWER_MARGIN_S * 1000:g} ms and one read's time before the call's "
        "`timeout_ms`: then `settle.settled` is false. Settling never fails the action and never makes "
        "a `TIMEOUT`: a read that fails or would pass the deadline ends it unsettled. On a device "
        "without the `ui` capability nothing is read.",
        "",
        "`changes` names elements as DUMP_UI's compact form does: by `ref` (the settled screen's for "
        "what appeared or changed, the screen before's for what went; `TAP ref=` takes the former "
        "with no DUMP_UI between), `text`, `description`, and `resource_id` only where the compact "
        "form writes `#id` (an element with no text or description, a text field), without its "
        "`package:id/` prefix when the id is the element's own app's (`android:id/switch_widget` "
        "stays whole). Empty fields are left out. It lists the elements that have a text or a "
        "description, or an id and "
        "can be acted on (clickable, checkable, scrollable or a text field), outside the system bars, "
        "in screen "
        f"order, at most {SETTLE_CHANGES_MAX} of each kind, `*_more` counting the rest. An element "
        "that stayed (same id, text, description and class) and changed `checked`, `selected`, "
        "`enabled` or `focused`, or whose text or description changed in place (the same id, or "
        "without one the same class and bounds), is in `changed` with its new values and the old ones "
        "in `was`; the rest is in `appeared` or `went`. Empty lists and zero counts are left out.",
        "",
        "A new screen is given whole instead: when the app in front changed (the package of the "
        "largest window outside the system bars, so a keyboard or a dialog over the app is no "
        "change; `app` and `was_app` then name both), or when most of the "
        f"screen changed (at least {NEW_SCREEN_MIN} elements appeared, more than half of "
        "the new screen, and more than half of the old one went), `changes` has `screen`, the "
        "settled screen in [the compact screen form](#the-compact-screen-form) (its lines, the "
        "system bars' windows left out, at most DUMP_UI's default page, ending with its `… <n> more "
        "elements` line when there are more), and `went_more`, how many elements went, with no "
        "`appeared`, `went` or `changed`.",
        "",
        "The element an action acted on (TAP's and LONG_PRESS's `element`, TYPE_TEXT's and "
        "CLEAR_TEXT's `field`) is named the same way (`Target`): its ref on the screen last given "
        "to the caller (the one given, else the element there with the same id, description, class "
        "and package), its text and description, and its id where it names it; `x`/`y` say where "
        "the finger went. DUMP_UI `format=json` and WAIT_FOR's `element` give an element whole "
        "(bounds, class, package, states) for programs.",
        "",
        "Param:",
        "",
        *model_table(SettleParams, inputs=True),
        "What the result gains:",
        "",
        *model_table(Settled, inputs=False),
    ]
    for model in (SettleReport, Changes, Seen, Changed):
        out += [
            f"#### {model.__name__}",
            "",
            (model.__doc__ or "").strip(),
            "",
            *model_table(model, inputs=False),
        ]
    return out


def _key(spec: AnyActionSpec) -> tuple[bool, str]:
    return (spec.action_type.startswith("SIM_"), spec.action_type)
