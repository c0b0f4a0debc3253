"""The contract suite's MCP front end: the production MCP face (`McpFace` over the runtime, the SDK
`Server` that `serve --mcp-listen` serves over Streamable HTTP and `mcp` over stdio), over the app
from the composition root, reached by the official SDK's `Client` in process (the SDK's in-memory
connection, no socket), one client per principal. The transports are proven in tests/mcp (HTTP:
test_http.py and the others there; stdio: test_stdio.py); here the contracts are the face's.

The suite speaks the gRPC wire's terms (params as strings); this adapter writes them as the tool's
JSON types, as an MCP client would send them: "7" becomes 7 where the schema says integer, "true"
true where it says boolean; a list or object goes as its JSON text (which MCP takes too). Text that
is not how JSON writes a value of its field's type ("05", "yes", "nan") is the gRPC wire's own:
such cases are skipped here (frontend.wire_text_only), and tests/mcp covers the type errors.

Answers map back: a tool result is an Answer (isError: its `CODE: message`); a protocol
invalid-params error is BAD_REQUEST (a Refused) or an Answer with its INVALID_PARAMS or
UNKNOWN_ACTION; a subscription is the events resource, read after each resources/updated.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
import math
import re
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from mcp import Client
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError

from phoneuse_runtime.app import App, build_app
from phoneuse_runtime.config.settings import Settings
from phoneuse_runtime.device.base import Device
from phoneuse_runtime.kernel.components import Component
from phoneuse_runtime.kernel.policies import Policy
from phoneuse_runtime.mcp import EVENTS_URI
from phoneuse_runtime.mcp.backends import LocalBackend
from phoneuse_runtime.mcp.face import McpFace
from phoneuse_runtime.mcp.tools import ToolTable, _types_of
from phoneuse_runtime.spec.document import render_spec

from .frontend import WAIT_S, Answer, Event, Page, Refused, StreamEnded

TOKEN = f"contract-mcp-{uuid.uuid4().hex}"
INVALID_PARAMS = -32602
logging.getLogger("mcp").setLevel(logging.WARNING)  # the SDK's line per session
# The principal of the client a request comes from: set in each client's task and around each of
# its calls, read by the face's `principal_of` (over HTTP the token's, from the Guard).
PRINCIPAL: contextvars.ContextVar[str] = contextvars.ContextVar("contract_mcp_principal")


def principal_of(ctx: ServerRequestContext[Any, Any]) -> str:
    return PRINCIPAL.get()


INTEGER = re.compile(r"-?[0-9]{1,4000}")  # as JSON writes one (Python reads at most 4300 digits)


def typed(prop: Mapping[str, Any], defs: Mapping[str, Any], text: str) -> Any:
    """A wire string as the JSON value of the property's type, when it reads as one."""
    kinds = _types_of(prop, defs) or {"string"}
    if "string" in kinds or kinds & {"array", "object"}:  # lists and objects: their JSON text, as sent
        return text
    # Only the text JSON itself writes for the value: "05" or " 1" is no integer's JSON.
    if kinds & {"integer", "number"} and INTEGER.fullmatch(text) and str(int(text)) == text:
        return int(text)
    if "number" in kinds:
        try:
            number = float(text)
        except ValueError:
            pass
        else:
            if math.isfinite(number) and json.dumps(number) == text:
                return number
    if "boolean" in kinds and text in ("true", "false"):
        return text == "true"
    return text


class McpClient:
    """One principal's SDK client, entered and left in a task of its own (anyio's scopes ask it)."""

    def __init__(self, face: McpFace, principal: str) -> None:
        self.face = face
        self.principal = principal
        self.client: Client | None = None
        self.tools: dict[str, dict[str, Any]] = {}
        self._ready = asyncio.Event()
        self._done = asyncio.Event()
        self._failed: BaseException | None = None
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        PRINCIPAL.set(self.principal)
        try:
            async with Client(self.face.server) as client:
                self.client = client
                self.tools = {t.name: t.input_schema for t in (await client.list_tools()).tools}
                self._ready.set()
                await self._done.wait()
        except BaseException as exc:
            self._failed = exc
            self._ready.set()
            if not isinstance(exc, (asyncio.CancelledError, Exception)):
                raise

    async def ready(self) -> Client:
        await asyncio.wait_for(self._ready.wait(), WAIT_S)
        if self._failed is not None or self.client is None:
            raise AssertionError(f"the MCP client failed: {self._failed!r}")
        return self.client

    def arguments(self, tool: str, params: Mapping[str, str]) -> dict[str, Any]:
        schema = self.tools.get(tool, {})
        props: dict[str, Any] = schema.get("properties", {})
        defs = schema.get("$defs", {})
        return {key: typed(props[key], defs, v) if key in props else v for key, v in params.items()}

    async def close(self) -> None:
        self._done.set()
        await asyncio.gather(self._task, return_exceptions=True)


class McpStream:
    """The events resource, read after each notification that it changed."""

    def __init__(self, client: Client, event_types: tuple[str, ...]) -> None:
        self.subscriber_id = "mcp-events"
        self._client = client
        self._uri = EVENTS_URI + (f"?types={','.join(event_types)}" if event_types else "")
        self._queue: asyncio.Queue[Event | BaseException | None] = asyncio.Queue()
        self._live = asyncio.get_running_loop().create_future()
        self._pump = asyncio.get_running_loop().create_task(self._run())

    async def _read(self, after: int | None) -> dict[str, Any]:
        uri = self._uri if after is None else f"{self._uri}{'&' if '?' in self._uri else '?'}after={after}"
        result = await self._client.read_resource(uri)
        body: dict[str, Any] = json.loads(result.contents[0].text)  # type: ignore[union-attr]
        return body

    async def _drain(self, cursor: int) -> int:
        """Reads every event after `cursor` into the queue; returns the new cursor."""
        while True:
            body = await self._read(cursor)
            for item in body["events"]:
                payload = item["payload"]
                assert isinstance(payload, dict), item
                self._queue.put_nowait(Event(item["event_type"], payload, item["source"], item["timestamp"]))
            cursor = body["cursor"]
            if not body["more"]:
                return cursor

    async def _run(self) -> None:
        try:
            async with self._client.listen(resource_subscriptions=[EVENTS_URI]) as sub:
                cursor = (await self._read(None))["cursor"]
                self._live.set_result(None)
                async for _ in sub:
                    cursor = await self._drain(cursor)
            # The server ended the stream: what came before its end and was not yet announced (in
            # process, the end can overtake the last announcement) is read once more.
            await self._drain(cursor)
        except MCPError as error:
            if not self._live.done():
                self._live.set_exception(error)
                return
            self._queue.put_nowait(error)
            return
        except (AssertionError, ValueError, RuntimeError) as error:
            if not self._live.done():
                self._live.set_exception(error)
            self._queue.put_nowait(error)
            return
        self._queue.put_nowait(None)  # the server ended the listen stream gracefully

    async def live(self) -> None:
        await asyncio.wait_for(asyncio.shield(self._live), WAIT_S)

    async def _get(self, deadline: float) -> Event | None:
        remaining = deadline - asyncio.get_running_loop().time()
        item = await asyncio.wait_for(self._queue.get(), max(remaining, 0))
        if isinstance(item, BaseException):
            raise AssertionError(f"the stream failed: {item!r}")
        return item

    async def next(self, event_type: str | None = None, *, within: float = WAIT_S) -> Event:
        deadline = asyncio.get_running_loop().time() + within
        while True:
            try:
                event = await self._get(deadline)
            except asyncio.TimeoutError:
                raise AssertionError(f"no {event_type or 'event'} came within {within} s") from None
            if event is None:
                self._queue.put_nowait(None)
                raise StreamEnded(f"the stream ended before a {event_type or 'any'} event")
            if event_type is None or event.event_type == event_type:
                return event

    async def ended(self, *, within: float = WAIT_S) -> bool:
        deadline = asyncio.get_running_loop().time() + within
        try:
            while await self._get(deadline) is not None:
                pass
        except asyncio.TimeoutError:
            return False
        self._queue.put_nowait(None)
        return True

    async def close(self) -> None:
        self._pump.cancel()
        await asyncio.gather(self._pump, return_exceptions=True)


def _split(error: str) -> tuple[str, str]:
    code, sep, message = error.partition(": ")
    assert sep and code.isupper(), error
    return code, message


class McpFrontEnd:
    kind = "mcp"

    def __init__(self, app: App, face: McpFace) -> None:
        self.app = app
        self.face = face
        self._clients: dict[str, McpClient] = {}
        self._streams: list[McpStream] = []
        self._stopped = False

    @classmethod
    async def start(
        cls,
        settings: Settings,
        *,
        device: Device | None,
        policies: Sequence[Policy],
        components: Sequence[Component],
    ) -> McpFrontEnd:
        app = await build_app(settings, token=TOKEN, device=device, policies=policies, components=components)
        # As McpHttpServer.start builds it over the runtime, with the principal of the calling client.
        return cls(
            app, McpFace(LocalBackend(app.runtime), principal_of=principal_of, render_spec=render_spec)
        )

    def untyped(self, name: str, params: Mapping[str, str], *, query: bool = False) -> list[str]:
        """The params whose text reads as no JSON value of its field's type (frontend.wire_text_only)."""
        registry = self.app.runtime.registry
        table = ToolTable.of(registry, self.app.runtime.device.capabilities)
        tool = table.tools.get(f"query_{name.lower()}" if query else name.lower())
        if tool is None:
            return []
        props = tool.input_schema.get("properties", {})
        defs = tool.input_schema.get("$defs", {})
        return [
            key
            for key, value in params.items()
            if key in props
            and isinstance(typed(props[key], defs, value), str)
            and _types_of(props[key], defs)
            and not {"string", "array", "object"} & (_types_of(props[key], defs) or set())
        ]

    async def _client(self, principal: str) -> McpClient:
        # This task's requests (and the tasks it starts: a stream's pump) are the principal's; the
        # in-process connection runs the server's handler under the caller's context.
        PRINCIPAL.set(principal)
        if principal not in self._clients:
            self._clients[principal] = McpClient(self.face, principal)
        await self._clients[principal].ready()
        return self._clients[principal]

    async def execute(
        self,
        action_type: str,
        params: Mapping[str, str] | None = None,
        *,
        request_id: str | None = None,
        timeout_ms: int = 10_000,
        app_target: str | None = None,
        principal: str = "agent",
    ) -> Answer:
        mcp = await self._client(principal)
        assert mcp.client is not None
        tool = action_type.lower()
        arguments = mcp.arguments(tool, params or {})
        arguments["request_id"] = uuid.uuid4().hex if request_id is None else request_id
        arguments["timeout_ms"] = timeout_ms
        if app_target is not None:
            arguments["app_target"] = app_target
        try:
            result = await mcp.client.call_tool(
                tool, arguments, read_timeout_seconds=max(timeout_ms, 0) / 1000 + WAIT_S
            )
        except MCPError as error:
            assert error.error.code == INVALID_PARAMS, error.error
            code, message = _split(error.error.message)
            if code == "BAD_REQUEST":
                raise Refused(code, message) from None
            assert code in ("INVALID_PARAMS", "UNKNOWN_ACTION"), error.error.message
            return Answer.parse(
                request_id=arguments["request_id"],
                success=False,
                result_json="{}",
                error=error.error.message,
                duration_ms=0,
            )
        meta = result.meta or {}
        structured = dict(result.structured_content or {})
        if not result.is_error:
            for block in result.content:  # SCREENSHOT's image, as the other wires carry it
                if block.type == "image":
                    structured["image_base64"] = block.data
        return Answer.parse(
            request_id=str(meta.get("phoneuse/request_id", arguments["request_id"])),
            success=not result.is_error,
            result_json=json.dumps(structured),
            error=result.content[0].text if result.is_error else "",  # type: ignore[union-attr]
            duration_ms=int(meta.get("phoneuse/duration_ms", 0)),
        )

    async def query(
        self,
        query_type: str,
        filters: Mapping[str, str] | None = None,
        limit: int = 0,
        *,
        timeout_ms: int | None = None,
        principal: str = "agent",
    ) -> Page:
        mcp = await self._client(principal)
        assert mcp.client is not None
        tool = f"query_{query_type.lower()}"
        arguments = mcp.arguments(tool, filters or {})
        arguments["limit"] = limit
        if timeout_ms is not None:
            arguments["timeout_ms"] = timeout_ms
        try:
            result = await mcp.client.call_tool(tool, arguments, read_timeout_seconds=60)
        except MCPError as error:
            assert error.error.code == INVALID_PARAMS, error.error
            raise Refused(*_split(error.error.message)) from None
        if result.is_error:
            raise Refused(*_split(result.content[0].text))  # type: ignore[union-attr]
        page = result.structured_content or {}
        assert all(isinstance(r, dict) for r in page["results"])
        return Page(page["results"], page["total_count"], page["has_more"])

    async def subscribe(
        self, event_types: tuple[str, ...] = (), subscriber_id: str = "", *, principal: str = "agent"
    ) -> McpStream:
        mcp = await self._client(principal)
        assert mcp.client is not None
        stream = McpStream(mcp.client, event_types)
        try:
            await stream.live()
        except MCPError as error:
            await stream.close()
            raise Refused(*_split(error.error.message)) from None
        self._streams.append(stream)
        return stream

    async def stop(self) -> None:
        if not self._stopped:
            self._stopped = True
            await self.face.close()  # first, as McpHttpServer.stop: its listen streams end cleanly
            await self.app.stop(grace_s=0)

    async def close(self) -> None:
        for stream in self._streams:
            await stream.close()
        for client in self._clients.values():
            await client.close()
        await self.stop()
