"""What the MCP face calls: the runtime in this process, or the running server over gRPC.

`LocalBackend` is the runtime itself (`serve --mcp-listen`, and `phoneuse-runtime mcp` when no
server runs): calls carry `Caller("mcp", principal)`. `GrpcBackend` is `phoneuse-runtime mcp`
attached to the server of its data dir, over that server's Unix socket (else its TCP address)
with the server's token and, on every call, `x-phoneuse-frontend: mcp` (rpc/frontends.py; the
wire contract has no field for it): there too the server's caller is `Caller("mcp", principal)`,
the token's principal.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from phoneuse_runtime.kernel.callers import Caller
from phoneuse_runtime.kernel.errors import FAILURES, Internal, RuntimeFailure
from phoneuse_runtime.kernel.events import Event
from phoneuse_runtime.kernel.registry import Registry
from phoneuse_runtime.kernel.runtime import ActionCall, ActionOutcome, QueryCall, QueryPage, Runtime
from phoneuse_runtime.mcp.holds import FaceHolds, RuntimeHolds, StoreHolds
from phoneuse_runtime.owner.paths import FILES_DIR

log = logging.getLogger(__name__)

FRONTEND = "mcp"
READY_TIMEOUT_S = 10.0
_BY_CODE = {failure.code: failure for failure in FAILURES}


class Backend(Protocol):
    """The runtime as the MCP face sees it."""

    registry: Registry
    capabilities: frozenset[str]
    device: str
    files_dir: Path | None  # the runtime's DATA_DIR/files, its phoneuse://files/ resources
    holds: FaceHolds | None  # the held calls the face may ask its client's user about (holds.py)

    async def execute(self, principal: str, call: ActionCall) -> ActionOutcome:
        """Raises RuntimeFailure (BAD_REQUEST) for a malformed call; other failures are the outcome's."""
        ...

    async def query(self, principal: str, call: QueryCall) -> QueryPage:
        """Raises RuntimeFailure for any failure."""
        ...

    def events(self, principal: str) -> EventSource:
        """Every event of the phone from now on, as a gRPC subscriber with no filter gets them."""
        ...


class EventSource(Protocol):
    def __aiter__(self) -> AsyncIterator[Event]: ...

    async def ready(self) -> None:
        """Returns once every event published from now on will come."""
        ...

    async def close(self) -> None: ...


@dataclass
class LocalBackend:
    runtime: Runtime
    device: str = ""

    def __post_init__(self) -> None:
        self.holds: FaceHolds | None = RuntimeHolds(self.runtime.approvals)
        self.registry = self.runtime.registry
        self.capabilities = self.runtime.device.capabilities
        self.device = self.device or self.runtime.settings.device
        self.files_dir: Path | None = self.runtime.settings.data_dir / FILES_DIR

    async def execute(self, principal: str, call: ActionCall) -> ActionOutcome:
        return await self.runtime.execute(Caller(FRONTEND, principal), call)

    async def query(self, principal: str, call: QueryCall) -> QueryPage:
        return await self.runtime.query(Caller(FRONTEND, principal), call)

    def events(self, principal: str) -> EventSource:
        sub = self.runtime.subscribe(Caller(FRONTEND, principal), f"mcp-events-{uuid.uuid4().hex}", ())
        runtime = self.runtime

        class _Source:
            def __aiter__(self) -> AsyncIterator[Event]:
                return sub.__aiter__()

            async def ready(self) -> None:  # the bus's subscription is live at once
                return

            async def close(self) -> None:
                runtime.unsubscribe(sub)

        return _Source()


def failure_of(details: str) -> RuntimeFailure:
    """A gRPC status's `CODE: message` details as the runtime's failure of that code."""
    code, sep, message = details.partition(": ")
    kind = _BY_CODE.get(code) if sep else None
    if kind is None:
        return Internal(details or "the server gave no reason")
    return kind(message)


class GrpcBackend:
    """The running server, over gRPC: one channel, the server's token on every call."""

    def __init__(
        self,
        address: str,
        token: str,
        *,
        registry: Registry,
        capabilities: frozenset[str],
        device: str,
        files_dir: Path | None = None,
        data_dir: Path | None = None,
    ):
        import grpc

        from phoneuse_runtime.rpc import protocol_pb2_grpc as pb_grpc

        self.registry = registry
        self.capabilities = capabilities
        self.device = device
        self.files_dir = files_dir  # the live server's of this host's data dir (cli/mcp.py)
        self._grpc = grpc
        self._channel = grpc.aio.insecure_channel(address)
        self._stub = pb_grpc.AndroidRuntimeStub(self._channel)
        from phoneuse_runtime.rpc.frontends import FRONTEND_KEY

        self._metadata = (("authorization", f"Bearer {token}"), (FRONTEND_KEY, FRONTEND))
        # The server's holds of this face's calls, answered through the data dir's approval store
        # as the terminal's `approvals` answers them (holds.py).
        self.holds: FaceHolds | None = (
            None if data_dir is None else StoreHolds(self._stub, self._metadata, data_dir)
        )

    async def execute(self, principal: str, call: ActionCall) -> ActionOutcome:
        from phoneuse_runtime.rpc import protocol_pb2 as pb

        request = pb.ActionRequest(
            action_type=call.action_type,
            params=dict(call.params),
            request_id=call.request_id,
            timeout_ms=call.timeout_ms,
        )
        if call.app_target is not None:
            request.app_target = call.app_target
        try:
            # The RPC's deadline stays clear of the action's own: only the runtime times out.
            response = await self._stub.Execute(
                request, metadata=self._metadata, timeout=max(call.timeout_ms, 0) / 1000 + 10
            )
        except self._grpc.aio.AioRpcError as error:
            raise self._failure(error) from None
        return ActionOutcome(
            response.request_id, response.success, response.result_json, response.error, response.duration_ms
        )

    async def query(self, principal: str, call: QueryCall) -> QueryPage:
        from phoneuse_runtime.rpc import protocol_pb2 as pb

        try:
            query_type = pb.QueryType.Value(call.query_type)
        except ValueError:
            raise failure_of(f"BAD_REQUEST: query_type {call.query_type} is not served") from None
        request = pb.QueryRequest(query_type=query_type, filters=dict(call.filters), limit=call.limit)
        try:
            response = await self._stub.Query(request, metadata=self._metadata, timeout=call.timeout_s + 1)
        except self._grpc.aio.AioRpcError as error:
            raise self._failure(error) from None
        return QueryPage(list(response.results_json), response.total_count, response.has_more)

    def _failure(self, error: object) -> RuntimeFailure:
        grpc = self._grpc
        assert isinstance(error, grpc.aio.AioRpcError)
        if error.code() == grpc.StatusCode.UNAVAILABLE:
            return failure_of(f"DEVICE_UNAVAILABLE: the server is not reachable ({error.details()})")
        if error.code() == grpc.StatusCode.UNAUTHENTICATED:
            return failure_of(f"PERMISSION_DENIED: the server refused the token ({error.details()})")
        if error.code() == grpc.StatusCode.DEADLINE_EXCEEDED and error.details() == "Deadline Exceeded":
            return failure_of("TIMEOUT: the server did not answer in time")
        return failure_of(error.details() or "")

    def events(self, principal: str) -> EventSource:
        from phoneuse_runtime.rpc import protocol_pb2 as pb

        call = self._stub.Subscribe(pb.SubscribeRequest(), metadata=self._metadata)
        grpc = self._grpc

        class _Source:
            async def _read(self) -> AsyncIterator[Event]:
                try:
                    async for message in call:
                        yield Event(
                            message.event_type, message.payload_json, message.source, message.timestamp
                        )
                except grpc.aio.AioRpcError as error:
                    if error.code() != grpc.StatusCode.CANCELLED:
                        log.warning("the server's event stream ended: %s", error.code().name)

            def __aiter__(self) -> AsyncIterator[Event]:
                return self._read()

            async def ready(self) -> None:
                # The server sends the headers once the subscription exists (rpc/servicer.py).
                try:
                    await asyncio.wait_for(call.initial_metadata(), READY_TIMEOUT_S)
                except (asyncio.TimeoutError, grpc.aio.AioRpcError) as exc:
                    log.warning("the server's event stream did not open: %s", type(exc).__name__)

            async def close(self) -> None:
                call.cancel()

        return _Source()

    async def close(self) -> None:
        if self.holds is not None:
            await self.holds.close()
        await self._channel.close()


def event_json(seq: int, event: Event) -> dict[str, object]:
    try:
        payload = json.loads(event.payload_json or "{}")
    except ValueError:
        payload = {}
    return {
        "seq": seq,
        "event_type": event.event_type,
        "payload": payload,
        "timestamp": event.timestamp,
        "source": event.source,
    }


def known_types(registry: Registry, types: Iterable[str]) -> str | None:
    """Why these event types cannot be asked for, or None."""
    for event_type in types:
        if event_type not in registry.events:
            return registry.unknown_event(event_type)
    return None
