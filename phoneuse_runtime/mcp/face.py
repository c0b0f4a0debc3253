"""The MCP face: an SDK low-level `Server` whose tools, resources and subscriptions are the runtime's.

Built over a `Backend` (the runtime here, or the running server over gRPC), the same for stdio
and Streamable HTTP. Tools come from the registry (tools.py). A call that fails is a tool result
with `isError` and `CODE: message`; a call refused before anything ran (an unknown tool, a value
of the wrong JSON type, the runtime's INVALID_PARAMS, UNKNOWN_ACTION or BAD_REQUEST) is the
protocol's invalid-params error with the same `CODE: message`.

Events: the resource `phoneuse://events` holds the phone's recent events, each with a `seq`;
`phoneuse://events?after=SEQ&types=A,B` reads those after a cursor. A client subscribed to it
(resources/subscribe on a 2025 session, subscriptions/listen on a 2026-07-28 one) is sent
notifications/resources/updated when events come.

Approvals: the MCP client is the agent, so a held call waits for the owner (the Iris app, the
terminal's `approvals`) like any other. Only where the owner's settings say this client's user is
the owner (`mcp_client_is_owner`) is that user asked too, by elicitation, about the face's own
calls (holds.py: the runtime's holds here, or, attached, the server's, answered through the data
dir's approval store); a 2026-07-28 `requestState` is then one this face issued for that
principal, sealed with an HMAC under a secret of this process, and any other is refused.
"""

from __future__ import annotations

import asyncio
import collections
import hashlib
import hmac
import json
import logging
import secrets
import uuid
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

import mcp_types as types
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.server.session import ServerSession
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ResourceUpdated
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from phoneuse_runtime import __version__
from phoneuse_runtime.kernel.errors import BadRequest, RuntimeFailure
from phoneuse_runtime.kernel.events import Event
from phoneuse_runtime.kernel.limits import MAX_EVENT_TYPES, MAX_NAME_CHARS, bad_timeout, too_long
from phoneuse_runtime.kernel.registry import Registry
from phoneuse_runtime.kernel.runtime import ActionCall, ActionOutcome, QueryCall
from phoneuse_runtime.mcp import ANNOUNCE_GAP_S, EVENTS_KEPT, EVENTS_PAGE, EVENTS_URI, files
from phoneuse_runtime.mcp.backends import Backend, EventSource, event_json, known_types
from phoneuse_runtime.mcp.holds import FaceHold, FaceHolds, TooLate
from phoneuse_runtime.mcp.tools import DEFAULT_TIMEOUT_MS, ArgumentError, Tool, ToolTable
from phoneuse_runtime.owner.approval_text import prompt

log = logging.getLogger(__name__)

SCREEN_URI = "phoneuse://screen"
SPEC_URI = "phoneuse://spec"
ANSWERED_BY = "the MCP client's user"
REFUSED_BEFORE_RUNNING = frozenset({"INVALID_PARAMS", "UNKNOWN_ACTION", "BAD_REQUEST"})
META_PREFIX = "phoneuse/"
DEFAULT_QUERY_TIMEOUT_S = 30.0
PrincipalOf = Callable[[ServerRequestContext[Any, Any]], str]
STATE_REFUSED = "BAD_REQUEST: requestState is not one this server gave"
_SEAL_KEY = secrets.token_bytes(32)  # this process's: a requestState sealed by another is refused

INSTRUCTIONS = (
    "These tools drive an Android phone. Read the screen with dump_ui (its `screen` text has one "
    "line per element, each with a ref that tap, type_text and long_press take), act, then read "
    "again. Some calls wait for the phone's owner to approve them. A failed call says CODE: message."
)


def invalid(text: str) -> MCPError:
    return MCPError(types.INVALID_PARAMS, text, {"code": text.partition(":")[0]})


class EventLog:
    """The phone's recent events for the events resource, fed by one subscription of the face's own,
    opened by the first read or subscribe (so that a face nobody asks never has the phone polled)."""

    def __init__(self, backend: Backend, principal: str, on_new: Callable[[], None]) -> None:
        self.backend = backend
        self.principal = principal
        self.on_new = on_new
        self.seq = 0
        self.kept: collections.deque[tuple[int, Event]] = collections.deque(maxlen=EVENTS_KEPT)
        self._source: EventSource | None = None
        self._pump: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Returns once the subscription is live: every event after it is kept."""
        if self._pump is None:
            self._source = self.backend.events(self.principal)
            self._pump = asyncio.get_running_loop().create_task(self._run(self._source))
        assert self._source is not None
        await self._source.ready()

    async def _run(self, source: EventSource) -> None:
        async for event in source:
            self.seq += 1
            self.kept.append((self.seq, event))
            self.on_new()

    def read(self, after: int | None, event_types: frozenset[str]) -> dict[str, Any]:
        oldest = self.kept[0][0] if self.kept else self.seq + 1
        start = self.seq if after is None else after  # no cursor: from now on, nothing yet
        if after is None:
            chosen = [(s, e) for s, e in self.kept if not event_types or e.event_type in event_types]
            chosen = chosen[-EVENTS_PAGE:]
        else:
            chosen = [
                (s, e) for s, e in self.kept if s > start and (not event_types or e.event_type in event_types)
            ][:EVENTS_PAGE]
        cursor = chosen[-1][0] if chosen and after is not None else self.seq
        missed = max(0, oldest - 1 - after) if after is not None else 0
        return {
            "events": [event_json(s, e) for s, e in chosen],
            "cursor": cursor,
            "missed": missed,
            "more": after is not None and any(s > cursor for s, _ in self.kept),
        }

    async def close(self) -> None:
        if self._source is not None:
            await self._source.close()
        if self._pump is not None:
            self._pump.cancel()
            await asyncio.gather(self._pump, return_exceptions=True)


# docs/protocol_spec.md for a registry (spec/document.py's render_spec, given by whoever builds the
# face: the MCP room sits below the spec, which quotes it).
RenderSpec = Callable[[Registry], str]


class McpFace:
    """One MCP server over a backend; `server` is the SDK's, served by stdio or HTTP."""

    def __init__(
        self,
        backend: Backend,
        *,
        principal_of: PrincipalOf,
        render_spec: RenderSpec,
        principal: str = "agent",
        client_is_owner: bool = False,
    ) -> None:
        self.backend = backend
        # The owner's word that this client's user is the owner: only then is that user asked.
        self.client_is_owner = client_is_owner
        self.render_spec = render_spec  # phoneuse://spec, handed down by the composition root
        self.table = ToolTable.of(backend.registry, backend.capabilities)
        self.principal_of = principal_of
        self.bus = InMemorySubscriptionBus()
        self.listen = ListenHandler(self.bus)
        self._watchers: set[ServerSession] = set()  # 2025 sessions subscribed to the events
        self._dirty = False  # events came since the last announcement
        self._teller: asyncio.Task[None] | None = None
        self.events = EventLog(backend, principal, self._announce)
        # Calls of this face's callers held for an approval, by (principal, request_id): a client
        # that can elicit is asked too where the owner allows it (see _elicited).
        self._held: dict[tuple[str, str], asyncio.Future[FaceHold]] = {}
        # The holds this face asked a client's user about, while pending: (principal, request_id).
        self._issued: dict[str, tuple[str, str]] = {}
        self.holds: FaceHolds | None = backend.holds
        if self.holds is not None:
            self.holds.watch(self._on_hold)
        self._tools = [self._listed(tool) for tool in self.table.tools.values()]
        self.server: Server[Any] = Server(
            "phoneuse-runtime",
            version=__version__,
            title="Android phone (phoneuse-runtime)",
            instructions=INSTRUCTIONS,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_list_resources=self._list_resources,
            on_list_resource_templates=self._list_templates,
            on_read_resource=self._read_resource,
            on_subscribe_resource=self._subscribe,
            on_unsubscribe_resource=self._unsubscribe,
            on_subscriptions_listen=self._listen,
            get_tool_input_schema=self._input_schema,
        )

    # --- tools ---------------------------------------------------------------
    @staticmethod
    def _listed(tool: Tool) -> types.Tool:
        return types.Tool(
            name=tool.name,
            title=tool.title,
            description=tool.description,
            input_schema=tool.input_schema,
            output_schema=tool.output_schema,
            annotations=types.ToolAnnotations(
                title=tool.title,
                read_only_hint=tool.read_only,
                destructive_hint=not tool.read_only,
                idempotent_hint=tool.read_only,
                open_world_hint=True,
            ),
            _meta={f"{META_PREFIX}{tool.kind}": tool.target, f"{META_PREFIX}supported": tool.supported},
        )

    def _input_schema(self, name: str) -> dict[str, Any] | None:
        tool = self.table.tools.get(name)
        return tool.input_schema if tool else None

    async def _list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=self._tools)

    async def _call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        try:
            tool = self.table.get(params.name)
            wire, options = tool.split(params.arguments or {})
        except ArgumentError as refusal:
            raise invalid(refusal.wire()) from None
        # The schema's maximum, enforced as the runtime does (BAD_REQUEST): 1e300 is an integer
        # to JSON Schema, and a deadline no store or client can hold.
        problem = bad_timeout(options["timeout_ms"]) if options.get("timeout_ms") is not None else None
        if problem is not None:
            raise invalid(BadRequest(problem).wire())
        principal = self.principal_of(ctx)
        if tool.kind == "query":
            return await self._query(tool, wire, options, principal)
        call = ActionCall(
            tool.target,
            wire,
            str(options.get("request_id") if "request_id" in options else uuid.uuid4().hex),
            int(options.get("timeout_ms", DEFAULT_TIMEOUT_MS)),
            options.get("app_target"),
        )
        asks = self.holds is not None and self.client_is_owner
        modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
        if params.request_state is not None and not (asks and modern):
            raise invalid(STATE_REFUSED)  # none was given: nobody here is asked
        try:
            if params.request_state is not None:
                outcome = await self._resumed(ctx, principal, call, params)
            elif asks and _can_elicit(ctx):
                answer = await self._elicited(ctx, principal, call)
                if isinstance(answer, types.InputRequiredResult):
                    return answer
                outcome = answer
            else:
                outcome = await self.backend.execute(principal, call)
        except RuntimeFailure as failure:  # a malformed call: BAD_REQUEST
            raise invalid(failure.wire()) from None
        meta = {
            f"{META_PREFIX}request_id": outcome.request_id,
            f"{META_PREFIX}duration_ms": outcome.duration_ms,
        }
        result = _object(outcome.result_json)
        if not outcome.success:
            if outcome.error.partition(":")[0] in REFUSED_BEFORE_RUNNING:
                raise invalid(outcome.error)
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=outcome.error)],
                structured_content=result,
                is_error=True,
                _meta=meta,
            )
        return types.CallToolResult(content=_content(tool, result), structured_content=result, _meta=meta)

    # --- approvals by elicitation -----------------------------------------------
    def _on_hold(self, hold: FaceHold, began: bool) -> None:
        """A hold of a call that came through this face (holds.py says which do) began or ended."""
        if not began:
            self._issued.pop(hold.approval_id, None)
            return
        waiting = self._held.get((hold.principal, hold.request_id))
        if waiting is not None and not waiting.done():
            waiting.set_result(hold)

    async def _elicited(
        self,
        ctx: ServerRequestContext[Any, Any],
        principal: str,
        call: ActionCall,
    ) -> ActionOutcome | types.InputRequiredResult:
        """Runs the call; if a policy holds it, the client's user is asked too (elicitation), beside
        the Iris app and `phoneuse-runtime approvals` (only with `mcp_client_is_owner`). The first
        answer wins; the user's is bound to the exact call shown (its digest). Accept with
        approve=false, or decline, denies it; cancel leaves the other ways to answer.

        On the 2025 revisions the question is a request to the client during the call. On
        2026-07-28 the call answers `input_required` with the question; the held call goes on in
        the runtime, and the client's retry (with the answer, and the sealed `requestState` naming
        the call's request_id) joins it and gets its outcome."""
        modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
        assert self.holds is not None
        await self.holds.ready()  # before the call: its hold is heard however soon it begins
        loop = asyncio.get_running_loop()
        key = (principal, call.request_id)
        held: asyncio.Future[FaceHold] = loop.create_future()
        self._held[key] = held
        running = loop.create_task(self.backend.execute(principal, call))
        try:
            first: set[asyncio.Future[Any]] = {running, held}
            await asyncio.wait(first, return_when=asyncio.FIRST_COMPLETED)
            if held.done() and not running.done():
                hold = held.result()
                if modern:  # the runtime keeps the call: only this wait for it ends
                    running.cancel()
                    await asyncio.gather(running, return_exceptions=True)
                    message, schema = _question(hold, principal)
                    self._issued[hold.approval_id] = (principal, call.request_id)
                    state = {
                        "request_id": call.request_id,
                        "approval_id": hold.approval_id,
                        "seal": _seal(_session(ctx), principal, hold.approval_id, call.request_id),
                    }
                    return types.InputRequiredResult(
                        input_requests={
                            "approve": types.ElicitRequest(
                                params=types.ElicitRequestFormParams(message=message, requested_schema=schema)
                            )
                        },
                        request_state=json.dumps(state),
                    )
                asking = loop.create_task(self._ask(ctx, hold, principal))
                second: set[asyncio.Future[Any]] = {running, asking}
                await asyncio.wait(second, return_when=asyncio.FIRST_COMPLETED)
                if not asking.done():
                    asking.cancel()  # answered elsewhere: the client's prompt is withdrawn
                await asyncio.gather(asking, return_exceptions=True)
            return await running
        finally:
            self._held.pop(key, None)
            held.cancel()

    async def _resumed(
        self,
        ctx: ServerRequestContext[Any, Any],
        principal: str,
        call: ActionCall,
        params: types.CallToolRequestParams,
    ) -> ActionOutcome:
        """A 2026-07-28 retry after `input_required`: the user's answer (if it still applies to the
        call this face asked about, as shown), then the held call's outcome. The state is refused
        unless its seal is this process's, for this session and principal, over its ids."""
        try:
            state = json.loads(params.request_state or "")
            request_id, approval_id, seal = state["request_id"], state["approval_id"], state["seal"]
        except (ValueError, KeyError, TypeError):
            raise invalid(STATE_REFUSED) from None
        if not all(isinstance(v, str) for v in (request_id, approval_id, seal)) or not hmac.compare_digest(
            seal.encode(), _seal(_session(ctx), principal, approval_id, request_id).encode()
        ):
            raise invalid(STATE_REFUSED)
        call.request_id = request_id  # the held call's own: the retry joins it
        assert self.holds is not None
        hold = self.holds.pending(approval_id)
        if not (
            hold is not None
            and self._issued.get(approval_id) == (principal, request_id)
            and (hold.principal, hold.request_id) == (principal, request_id)
        ):
            hold = None
        response = (params.input_responses or {}).get("approve")
        if hold is not None and isinstance(response, types.ElicitResult):
            await self._apply(hold, response)
        return await self.backend.execute(principal, call)

    async def _ask(self, ctx: ServerRequestContext[Any, Any], hold: FaceHold, principal: str) -> None:
        message, schema = _question(hold, principal)
        try:
            answer = await ctx.session.elicit_form(message, schema, related_request_id=ctx.request_id)
        except Exception as exc:  # the client failed to ask: the other ways to answer remain
            log.info(
                "approval %s: the MCP client did not ask its user (%s)", hold.approval_id, type(exc).__name__
            )
            return
        await self._apply(hold, answer)

    async def _apply(self, hold: FaceHold, answer: types.ElicitResult) -> None:
        if answer.action == "cancel":
            return
        approved = answer.action == "accept" and (answer.content or {}).get("approve") is True
        assert self.holds is not None
        try:
            await self.holds.answer(hold, approved=approved, by=ANSWERED_BY)
        except TooLate:  # answered first elsewhere, or no longer this call
            log.info("approval %s: the MCP client's answer came too late", hold.approval_id)

    async def _query(
        self, tool: Tool, wire: dict[str, str], options: dict[str, Any], principal: str
    ) -> types.CallToolResult:
        timeout_ms = options.get("timeout_ms")
        call = QueryCall(
            tool.target,
            wire,
            int(options.get("limit", 0)),
            DEFAULT_QUERY_TIMEOUT_S if timeout_ms is None else int(timeout_ms) / 1000,
        )
        try:
            page = await self.backend.query(principal, call)
        except RuntimeFailure as failure:
            if failure.code in REFUSED_BEFORE_RUNNING:
                raise invalid(failure.wire()) from None
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=failure.wire())],
                structured_content=failure.details,
                is_error=True,
            )
        results = [json.loads(r) for r in page.results]
        offset = int(wire.get("offset", "0"))
        structured = {
            "results": results,
            "total_count": page.total_count,
            "has_more": page.has_more,
            "next_offset": offset + len(results) if page.has_more else None,
        }
        text = json.dumps(structured, ensure_ascii=False)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)], structured_content=structured
        )

    # --- resources -----------------------------------------------------------
    async def _list_resources(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    uri=EVENTS_URI,
                    name="events",
                    title="The phone's recent events",
                    description=(
                        "JSON: {events: [{seq, event_type, payload, timestamp, source}], cursor, missed, "
                        "more}. "
                        f"Read {EVENTS_URI}?after=CURSOR for the events since a read; subscribe to be told "
                        "when new ones come."
                    ),
                    mime_type="application/json",
                ),
                types.Resource(
                    uri=SCREEN_URI,
                    name="screen",
                    title="The phone's screen now",
                    description="The compact screen form (what dump_ui answers as text), read when asked.",
                    mime_type="text/plain",
                ),
                types.Resource(
                    uri=SPEC_URI,
                    name="spec",
                    title="The protocol spec",
                    description="Every action, query, event, error code and limit as served here (Markdown).",
                    mime_type="text/markdown",
                ),
                *files.listed(self.backend.files_dir),
            ]
        )

    async def _list_templates(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(
            resource_templates=[
                types.ResourceTemplate(
                    uri_template=EVENTS_URI + "{?after,types}",
                    name="events-since",
                    description="the events after a cursor (seq), optionally of some types only "
                    "(comma-separated)",
                    mime_type="application/json",
                ),
                files.TEMPLATE,
            ]
        )

    async def _read_resource(
        self, ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        if uri == SCREEN_URI:
            return await self._screen(ctx)
        if uri.startswith(files.FILES_URI):
            return await asyncio.to_thread(files.read, self.backend.files_dir, uri)
        if uri == SPEC_URI:
            text = self.render_spec(self.backend.registry)
            return types.ReadResourceResult(
                contents=[types.TextResourceContents(uri=uri, mime_type="text/markdown", text=text)]
            )
        after, event_types = self._events_query(uri)
        await self.events.start()
        body = self.events.read(after, event_types)
        return types.ReadResourceResult(
            contents=[
                types.TextResourceContents(
                    uri=str(params.uri),
                    mime_type="application/json",
                    text=json.dumps(body, ensure_ascii=False),
                )
            ]
        )

    async def _screen(self, ctx: ServerRequestContext[Any, Any]) -> types.ReadResourceResult:
        """The screen now, in the compact form: a DUMP_UI call of the reader's, under its rules."""
        call = ActionCall("DUMP_UI", {}, uuid.uuid4().hex, DEFAULT_TIMEOUT_MS)
        try:
            outcome = await self.backend.execute(self.principal_of(ctx), call)
        except RuntimeFailure as failure:
            raise MCPError(types.INTERNAL_ERROR, failure.wire()) from None
        if not outcome.success:
            raise MCPError(types.INTERNAL_ERROR, outcome.error)
        result = _object(outcome.result_json)
        text = str(result.get("screen", ""))
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=SCREEN_URI, mime_type="text/plain", text=text)]
        )

    def _events_query(self, uri: str) -> tuple[int | None, frozenset[str]]:
        parts = urlsplit(uri)
        if f"{parts.scheme}://{parts.netloc}{parts.path}" != EVENTS_URI:
            raise MCPError(types.INVALID_PARAMS, f"no resource {uri[:200]!r}; resources/list lists them")
        query = parse_qs(parts.query, keep_blank_values=True)
        after: int | None = None
        if "after" in query:
            text = query["after"][-1]
            if not (text.isascii() and text.isdigit() and len(text) <= 18):
                raise invalid(
                    f"BAD_REQUEST: after must be a non-negative integer (a cursor), got {text[:40]!r}"
                )
            after = int(text)
        wanted = [t for t in ",".join(query.get("types", [])).split(",") if t]
        if len(wanted) > MAX_EVENT_TYPES:  # the runtime's own limits, in its words
            raise invalid(
                f"BAD_REQUEST: event_types has {len(wanted)} entries; at most {MAX_EVENT_TYPES} are allowed"
            )
        longest = max(wanted, key=len, default="")
        if len(longest) > MAX_NAME_CHARS:
            raise invalid(f"BAD_REQUEST: {too_long('event type', len(longest), MAX_NAME_CHARS)}")
        problem = known_types(self.backend.registry, wanted)
        if problem:
            raise invalid(f"BAD_REQUEST: {problem}")
        return after, frozenset(wanted)

    async def _subscribe(
        self, ctx: ServerRequestContext[Any, Any], params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        if str(params.uri) in (SCREEN_URI, SPEC_URI):
            raise invalid(
                f"BAD_REQUEST: only {EVENTS_URI} announces its updates; read {params.uri} when needed"
            )
        self._events_query(str(params.uri))
        await self.events.start()
        self._watchers.add(ctx.session)
        return types.EmptyResult()

    async def _listen(
        self, ctx: ServerRequestContext[Any, Any], params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        """2026-07-28's subscriptions/listen: a listen to the events starts them as a read or a
        resources/subscribe does (before its acknowledgement: every event after it is announced)."""
        if EVENTS_URI in (params.notifications.resource_subscriptions or ()):
            await self.events.start()
        return await self.listen(ctx, params)  # other URIs are honored and never fire, as the SDK does

    async def _unsubscribe(
        self, ctx: ServerRequestContext[Any, Any], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        self._watchers.discard(ctx.session)
        return types.EmptyResult()

    def _announce(self) -> None:
        """New events: every subscriber is told at once, then at most once per ANNOUNCE_GAP_S
        however many come (a read by cursor gets them all), so that a stream of events costs
        each subscribed session a bounded rate of notifications, not one per event."""
        self._dirty = True
        if self._teller is None or self._teller.done():
            self._teller = asyncio.get_running_loop().create_task(self._tell())

    async def _tell(self) -> None:
        await asyncio.sleep(0)  # let a burst of events land first: one notification for them all
        while self._dirty:
            self._dirty = False
            await self.bus.publish(ResourceUpdated(uri=EVENTS_URI))
            for session in list(self._watchers):
                try:
                    await session.send_resource_updated(EVENTS_URI)
                except Exception:  # the session ended: it is told nothing more
                    log.debug("an MCP session subscribed to the events is gone")
                    self._watchers.discard(session)
            await asyncio.sleep(ANNOUNCE_GAP_S)  # events meanwhile: one more announcement after it

    async def close(self) -> None:
        self.listen.close()
        if self._teller is not None:
            self._teller.cancel()
            await asyncio.gather(self._teller, return_exceptions=True)
        await self.events.close()


def _question(hold: FaceHold, principal: str) -> tuple[str, dict[str, Any]]:
    """What the client's user is asked about a held call: the Iris app's text (approval_text.py:
    the action and its target first, never cut, every value stripped), then every param."""
    message = prompt(hold.name, hold.params, hold.app_target, who=principal, reason=hold.reason)
    schema = {
        "type": "object",
        "properties": {
            "approve": {"type": "boolean", "title": "Approve", "description": f"run {hold.name} as shown"}
        },
        "required": ["approve"],
    }
    return message, schema


def _session(ctx: ServerRequestContext[Any, Any]) -> str:
    """The Streamable HTTP session of the request ("" where there is none: 2026-07-28, stdio)."""
    request = ctx.request
    headers = getattr(request, "headers", None)
    value = headers.get("mcp-session-id") if headers is not None else None
    return value if isinstance(value, str) else ""


def _seal(session: str, principal: str, approval_id: str, request_id: str) -> str:
    """HMAC-SHA256 under this process's secret over the session, principal and the hold's ids."""
    text = json.dumps([session, principal, approval_id, request_id], ensure_ascii=True)
    return hmac.new(_SEAL_KEY, text.encode(), hashlib.sha256).hexdigest()


def _can_elicit(ctx: ServerRequestContext[Any, Any]) -> bool:
    """Whether the client said it can ask its user (elicitation)."""
    try:
        return ctx.session.check_client_capability(
            types.ClientCapabilities(elicitation=types.ElicitationCapability())
        )
    except Exception:  # no connection state to ask
        return False


def _object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {"value": value}


def _content(tool: Tool, result: dict[str, Any]) -> list[types.TextContent | types.ImageContent]:
    """What a model reads: DUMP_UI's compact screen as text, SCREENSHOT as an image, else the JSON."""
    if tool.target == "SCREENSHOT" and isinstance(result.get("image_base64"), str):
        image = result.pop("image_base64")
        fmt = str(result.get("format", "png"))
        summary = json.dumps(result, ensure_ascii=False)
        return [
            types.ImageContent(type="image", data=image, mime_type=f"image/{fmt}"),
            types.TextContent(type="text", text=summary),
        ]
    if tool.target == "DUMP_UI" and isinstance(result.get("screen"), str):
        head = {k: v for k, v in result.items() if k not in ("screen", "elements", "xml")}
        return [
            types.TextContent(type="text", text=f"{result['screen']}\n{json.dumps(head, ensure_ascii=False)}")
        ]
    return [types.TextContent(type="text", text=json.dumps(result, ensure_ascii=False))]
