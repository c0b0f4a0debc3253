"""The MCP face's section of docs/protocol_spec.md (spec/document.py renders it; no SDK needed)."""

from __future__ import annotations

from phoneuse_runtime.config.sections import MAX_MCP_SESSIONS
from phoneuse_runtime.config.settings import Settings
from phoneuse_runtime.kernel.limits import MIB
from phoneuse_runtime.kernel.registry import Registry
from phoneuse_runtime.mcp import ANNOUNCE_GAP_S, EVENTS_KEPT, EVENTS_PAGE, EVENTS_URI, MCP_PATH
from phoneuse_runtime.mcp.files import MAX_RESOURCE_BYTES
from phoneuse_runtime.mcp.tools import (
    ACTION_OPTIONS,
    DEFAULT_TIMEOUT_MS,
    QUERY_OPTIONS,
    QUERY_PREFIX,
    ToolTable,
)

DEFAULT_MAX_SESSIONS = Settings.mcp_max_sessions
DEFAULT_IDLE_S = Settings.mcp_session_idle_s

INTRO = f"""## The MCP front end

The same runtime as a Model Context Protocol server (`phoneuse_runtime/mcp/`, the `mcp` extra:
`pip install '.[mcp]'` in a checkout, `pip install 'WHEEL[mcp]'` from a built wheel).
`phoneuse-runtime mcp config claude-desktop|claude-code|cursor` prints a client's snippet with
the absolute path of this install's executable and the data dir (`--http` the Streamable HTTP
form, whose token only `--show-token` puts in it). Two transports:

- **stdio**: `phoneuse-runtime mcp [--device D] [--data-dir DIR]`. It attaches to the running
  server of its data dir (a gRPC client over its Unix socket, with the data dir's token; the tools
  are what that server records in `server.json`: its device and the names it serves). When none
  runs it serves the phone itself, as `serve` would (token, socket, record, components), so that
  the next `mcp` or client attaches to it. Logs go to stderr only. When it can serve neither way
  (no server and no phone, a bad setting, no SDK), it says why on stderr and answers the client's
  requests (`server/discover`, `initialize`) with a JSON-RPC error (-32603) whose message is
  `phoneuse-runtime cannot serve: <why>`, then exits with status 2.
- **Streamable HTTP**: `serve --mcp-listen HOST:PORT` (setting `mcp_listen`; off by default) at
  `{MCP_PATH}`. Every request carries `Authorization: Bearer <token>` (the gRPC token, checked
  against its hash; never in the URL): without it, or with a wrong one, `401` and nothing runs. A
  request with an `Origin` that `mcp_allowed_origins` does not list gets `403` (DNS rebinding);
  one without `Origin` (a native client) is served. A body past `grpc_max_receive_bytes` gets
  `413` before it is read. `server.json` records the URL as bound (`mcp`), and `serve` logs it.
  At most `mcp_max_sessions` sessions (default {DEFAULT_MAX_SESSIONS}, at most {MAX_MCP_SESSIONS}) are
  open at once: a new one past it gets `503` and the open ones go on; a session with no request
  for `mcp_session_idle_s` seconds (default {DEFAULT_IDLE_S:g}) is closed, and its next request
  gets `404` (start a new session). A 2026-07-28 request opens no session.

Revisions: those of the official Python SDK (mcp 2.x): 2026-07-28 (per-request envelope,
`server/discover`) and, through the initialize handshake, 2025-11-25 and the earlier ones.

Callers: a call over HTTP carries `Caller("mcp", principal)`, the token's principal; over stdio
the principal is `agent`. Policies, capabilities, deadlines, allow/deny lists and approvals apply
as for gRPC. An attached stdio face is a gRPC client of the server that sends
`x-phoneuse-frontend: mcp` on every call, so the server's caller is `mcp:agent` there too (see
"Front ends behind a gRPC client" in the gRPC section).

### Tools

One tool per action and per query, generated from the registry (plug-ins' and components'
included), named in snake case: an action `SEND_MESSAGE` is `send_message`, a query `CONTACTS`
is `{QUERY_PREFIX}contacts`. `phoneuse-runtime actions` lists the same things. The description
is the summary (and notes); the input schema is the params model's JSON schema (integers,
numbers, booleans, enums, required keys, descriptions; each string with its `maxLength`), with
the call's own options: {", ".join(f"`{k}`" for k in ACTION_OPTIONS)} for actions (`timeout_ms`
defaults to {DEFAULT_TIMEOUT_MS}), {", ".join(f"`{k}`" for k in QUERY_OPTIONS)} for queries. The
output schema is the result model's (a query's: `results`, `total_count`, `has_more`,
`next_offset`), or the too-large marker. Annotations: `readOnlyHint` for queries and for actions
that only read (`reads_only` in their spec); the others are `destructiveHint`. An action the
device lacks a capability for stays listed, its description says so, and a call answers
`UNSUPPORTED` with how to get it.

A retry with the same `request_id` (and the same arguments) gets the first call's answer without
running again; the same id with other arguments is `CONFLICT`: the idempotency of gRPC, per
principal. Results carry `_meta` `phoneuse/request_id` and `phoneuse/duration_ms`.

Arguments are JSON-typed: a string where the schema says integer, boolean or number is refused,
never read as text (a list or object may also come as its JSON text, as gRPC carries it).

### Results and errors

- Success: `structuredContent` is the result object; the text content is its JSON, except
  `dump_ui`, whose text is the compact screen form (then the other fields as JSON), and
  `screenshot`, which is image content (`image/jpeg` or `image/png`: the picture SCREENSHOT
  answers, by default scaled to a long side of at most 1568 px and at most 1 MB) plus the other
  fields (`scale` maps a point on the image back to the screen; `secure` and `hint` say when the
  picture is black while the screen is not).
- Failure: a tool result with `isError` and `CODE: message` as its text (`ELEMENT_NOT_FOUND: …`,
  `DENIED: …`, `TIMEOUT: …`, `STALE_SCREEN: …` for a tap, long press or swipe at coordinates
  aimed at a screen another window came over since: read the screen again, or pass
  `check_screen: false`), the failure's details as `structuredContent`.
- Refused before anything ran: the protocol's invalid-params error (`-32602`) with `CODE: message`
  and `data.code`: an unknown tool (`UNKNOWN_ACTION`, with the closest names), a value of the
  wrong JSON type, and the runtime's own `INVALID_PARAMS` (unknown keys, limits, ranges) and
  `BAD_REQUEST` (an empty `request_id`, `timeout_ms` <= 0, a bad `offset`).

### Approvals

A held call waits as a gRPC one does and is answered the same ways, by the owner (the Iris app,
`phoneuse-runtime approvals`). The MCP client is the agent: it is never asked, unless the owner's
settings say that the client's user is the owner (`mcp_client_is_owner = true`, off by default).
Then, when the client declared elicitation, its user is asked too: a form with one boolean,
`approve`, and a message that is the Iris app's text (the action and its target first, never
cut, control, bidi and zero-width characters stripped; then the reason and every param). On the
2025 revisions that is an `elicitation/create` request during the call, withdrawn when an answer
comes first from elsewhere. On 2026-07-28 the call answers `input_required` with the question;
the held call goes on in the runtime, and the retry (whose `requestState` names the call's
request_id and approval id, sealed by an HMAC under a secret of the serving process over the
session, principal and both ids) applies the answer and joins the call for its outcome. A
`requestState` this server did not give, in that session, for that principal (hand-made, with
another seal, from another process, or with the setting off) is `BAD_REQUEST: requestState is
not one this server gave`, and nothing is answered; only holds of the face's own calls are asked
about, never those of a gRPC client that says `x-phoneuse-frontend: mcp`. An attached stdio face
asks too: it hears its calls' holds from the server's `APPROVAL_REQUESTED` events (those of
`mcp:agent` whose request_id is a call of its own in flight) and writes its user's answer into
the data dir's approval store, as `phoneuse-runtime approvals` does, bound to the digest shown; the
server names the answerer `terminal (the MCP client's user)`. The first answer wins;
the user's is bound to the call's digest; `decline` or `approve: false` denies; `cancel` leaves
the other ways to answer.

### Events

The resource `{EVENTS_URI}` (JSON) holds the phone's {EVENTS_KEPT} most recent events:
`{{events: [{{seq, event_type, payload, timestamp, source}}], cursor, missed, more}}`.
`{EVENTS_URI}?after=CURSOR` reads those after a cursor (at most {EVENTS_PAGE}; `more` says whether
further ones wait, `missed` how many passed out of the window); `types=A,B` keeps some types
(an unknown type, or past the runtime's limits on event types, is `BAD_REQUEST`). Updates are
announced by `notifications/resources/updated` for `{EVENTS_URI}`: on 2026-07-28 to a
`subscriptions/listen` stream that names it, on the 2025 revisions to a session that
`resources/subscribe`d to it; the first of a burst at once, then at most one per
{ANNOUNCE_GAP_S:g} s however many come (a read by cursor gets them all). Events are every event
of the phone, as a gRPC subscriber with no
filter gets them: device events (MESSAGE_RECEIVED, NOTIFICATION_POSTED, APP_STATE_CHANGED,
SYSTEM_DIALOG, CALL_STATE_CHANGED, DEVICE_DISCONNECTED, ...) and other callers' task and approval
events, which name their caller. The face subscribes once, when a client first reads or subscribes.

Two more resources: `phoneuse://screen`, the screen now in the compact form (a `DUMP_UI` call of
the reader's, under the same rules), and `phoneuse://spec`, this document as served (Markdown).
Neither announces updates: read them when needed. And one per file of the runtime's files
directory, `phoneuse://files/<name>` (what `PULL_FILE` saved with `name`; the template
`phoneuse://files/{{name}}`): UTF-8 text as text, anything else as a blob, at most
{MAX_RESOURCE_BYTES // MIB} MiB (a larger file is read from the phone in chunks with `pull_file`); a name
that is no plain file name of that directory is INVALID_PARAMS naming its path rule.
"""


def spec_section(registry: Registry) -> str:
    table = ToolTable.of(registry, frozenset().union(*(s.requires for s in registry.actions.values())))
    lines = [INTRO, "| tool | calls | reads only |", "|---|---|---|"]
    for tool in table.tools.values():
        kind = "query" if tool.kind == "query" else "action"
        lines.append(f"| `{tool.name}` | {kind} `{tool.target}` | {'yes' if tool.read_only else ''} |")
    return "\n".join(lines) + "\n"
