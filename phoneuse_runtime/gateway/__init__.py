"""The Iris gateway: the chat app's WebSocket protocol (`proto/iris-wire-protocol.schema.json`),
served at `/ws` by the same process and over the same runtime as the gRPC server.

The API the gateway's parts code against (stable):

- `dispatch.Handlers`: a table of frame handlers. A part registers
  `@HANDLERS.on("frame.type", PayloadModel)` on `async def h(session, request, payload)`, and
  `@HANDLERS.on_binary` for media frames. `PayloadModel` subclasses `dispatch.Payload` (strict
  types, unknown fields ignored); a payload of the wrong shape is answered `unsupported` before
  the handler runs.
- `errors.GatewayError(code, message)`: raised by a handler, it becomes an `error` frame with
  the request's id (only when that id was an integer). Codes are the schema's: `auth`,
  `not_found`, `rate_limited`, `media_too_large`, `unsupported`, `internal`. Any other
  exception is logged and answered `internal`. The connection stays open.
- `protocol.Request`: `type`, `id` (int or None), `chat_id`, `thread_id`, `payload` (raw dict).
- `session.Session`, one live connection of a paired device: `pairing_id` (the device as the
  gateway knows it: outboxes, principals and read state are keyed by it), `device_id` (the
  app's own name for itself), `principal`, `state` (a dict for a part's per-connection data),
  `gateway`, and
  `await reply(request, type, payload)` (the request's id, chat_id and thread_id),
  `await send(type, payload, chat_id=, thread_id=)`, `await send_bytes(data)` (waits while the
  app is behind, so a large media pull goes at its pace), `await drained()`.
  Sending queues the frame for the connection's writer and returns at once; a slow app gets the
  latest `message.update` / `tool.progress` of each message or tool, and an app too far behind
  is closed (it resyncs). A session drops frames once its connection is gone: frames that must
  not be lost are sent with `broadcast`.
- `server.Gateway`, the component (`ctx.component(Gateway)` from an action, `session.gateway`
  from a handler): `runtime`, `settings`, `limits` (`limits.GatewayLimits`), `db`,
  `sessions` (pairing_id -> Session), `spawn(coro)` for work that must not hold up a
  connection's frames (handled one at a time, in order), and
  `await broadcast(type, payload, *, chat_id=None, thread_id=None, exclude=None)`: to all the
  owner's paired devices; frames the schema never drops go through each device's outbox, so a
  device that is offline gets them on `sync` (and an ntfy wake-up). `exclude` (a Session) gets
  nothing, neither live nor in its outbox. Also `await paired_devices()` (the pairing ids whose
  tokens work now, from the database) and `await cursor_of(pairing_id)`.
- `db.GatewayDb`: the one SQLite file for every gateway table (`DATA_DIR/gateway.sqlite3`),
  `await db.run(lambda conn: ...)` on its single thread, off the event loop; autocommit, with
  `db.transaction(conn)` for a transaction.
- `parts.Part`: `name`, `handlers`, `contribution()`, `start(gateway)`, `stop()`,
  `session_opened(session)` (after `hello.ack`), `session_closed(session)`. The chat
  (`gateway/chat/`) and the agent bridge (`gateway/agent/`) are the parts `serve` runs.
- `pairing.PairingStore`: pairings and pending requests (what `phoneuse-runtime pair` edits).
- Settings (`config.Settings`, flags / `PHONEUSE_*` / config.toml): `gateway`, `gateway_listen`,
  `gateway_*` limits (`limits.py`), `gateway_allowed_origins`, `ntfy_url`, `pairing_ttl_days`, and
  for the agent part `approvals` ("always" | "paired" | "off") and `approval_actions`.
"""

from __future__ import annotations
