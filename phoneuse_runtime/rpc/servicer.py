"""AndroidRuntime servicer: turns protobuf messages into Runtime calls and back.

Every method checks the caller's token before it reads the request. So a caller without the
token costs neither the memory nor the decoding of its message, and one that never sends it is
refused at once rather than held. That is why the methods are served as request-streaming
handlers of raw bytes (`method_handlers`; on the wire a unary request is the same stream of one
message) that read and decode their one message themselves, after the check.

The runtime reports every failure as a RuntimeFailure with a code; this module keeps only
the table from that code to a gRPC status."""

from __future__ import annotations

import functools
import logging
from collections.abc import AsyncIterator
from typing import Any, NoReturn, TypeVar

import grpc
from google.protobuf.message import DecodeError, Message

from phoneuse_runtime.kernel.callers import Caller
from phoneuse_runtime.kernel.errors import RuntimeFailure
from phoneuse_runtime.kernel.events import Event
from phoneuse_runtime.kernel.runtime import ActionCall, QueryCall, Runtime
from phoneuse_runtime.rpc import protocol_pb2 as pb
from phoneuse_runtime.rpc.auth import BearerAuth
from phoneuse_runtime.rpc.frontends import relayed_caller

log = logging.getLogger(__name__)

# How a failure's code becomes a gRPC status: for a Query, any failure; for an Execute, only a
# malformed request (BAD_REQUEST), since a failed action is answered in-band.
STATUS: dict[str, grpc.StatusCode] = {
    "BAD_REQUEST": grpc.StatusCode.INVALID_ARGUMENT,
    "UNKNOWN_ACTION": grpc.StatusCode.INVALID_ARGUMENT,
    "INVALID_PARAMS": grpc.StatusCode.INVALID_ARGUMENT,
    "TIMEOUT": grpc.StatusCode.DEADLINE_EXCEEDED,
    "DEVICE_UNAVAILABLE": grpc.StatusCode.UNAVAILABLE,
    "ELEMENT_NOT_FOUND": grpc.StatusCode.NOT_FOUND,
    "PERMISSION_DENIED": grpc.StatusCode.PERMISSION_DENIED,
    "UNSUPPORTED": grpc.StatusCode.UNIMPLEMENTED,
    "DENIED": grpc.StatusCode.PERMISSION_DENIED,
    "CONFLICT": grpc.StatusCode.ALREADY_EXISTS,
    "STALE_SCREEN": grpc.StatusCode.FAILED_PRECONDITION,
    "OWNER_MUST_UNLOCK": grpc.StatusCode.FAILED_PRECONDITION,
    "INTERNAL": grpc.StatusCode.INTERNAL,
}
DEFAULT_QUERY_TIMEOUT_S = 30.0

M = TypeVar("M", bound=Message)


def status_of(failure: RuntimeFailure) -> grpc.StatusCode:
    return STATUS.get(failure.code, grpc.StatusCode.INTERNAL)


def _decode(raw: object, message: type[M]) -> M | None:
    """The request read from the stream, or None if there is none or it does not decode."""
    if not isinstance(raw, bytes):  # grpc.aio.EOF: the client sent no message
        return None
    try:
        return message.FromString(raw)
    except DecodeError:
        return None


async def _unreadable(context: grpc.aio.ServicerContext, message: type[Message]) -> NoReturn:
    await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"not a valid {message.DESCRIPTOR.name} message")
    raise AssertionError("abort returned")  # pragma: no cover


@functools.lru_cache(maxsize=64)
def _to_pb(event: Event) -> pb.Event:
    """One protobuf message per bus event, shared by all the streams it fans out to."""
    return pb.Event(
        event_type=event.event_type,
        payload_json=event.payload_json,
        timestamp=event.timestamp,
        source=event.source,
    )


class AndroidRuntimeServicer:
    """Every method first checks the caller's bearer token (and the front end it may relay for,
    frontends.py), then reads its request."""

    def __init__(self, runtime: Runtime, auth: BearerAuth) -> None:
        self.runtime = runtime
        self.auth = auth

    async def _admit(
        self, context: grpc.aio.ServicerContext, method: str, message: type[M]
    ) -> tuple[Caller, M]:
        """The caller and its request, read only once its token is right; the call is aborted
        with UNAUTHENTICATED, or INVALID_ARGUMENT for bytes that are no such message, otherwise."""
        metadata = context.invocation_metadata()
        caller = self.auth.check(metadata)
        if isinstance(caller, str):
            await self.auth.refuse(context, method, caller)
        try:
            caller = relayed_caller(caller, metadata)  # the front end it relays for, if any
        except RuntimeFailure as failure:  # one this server does not know
            await context.abort(status_of(failure), failure.wire())
        request = _decode(await context.read(), message)
        if request is None:
            await _unreadable(context, message)
        return caller, request

    def method_handlers(self) -> dict[str, grpc.RpcMethodHandler]:
        """The service's methods by name, as a server registers them."""
        return {
            "Execute": grpc.stream_unary_rpc_method_handler(
                self.Execute, response_serializer=pb.ActionResponse.SerializeToString
            ),
            "Query": grpc.stream_unary_rpc_method_handler(
                self.Query, response_serializer=pb.QueryResponse.SerializeToString
            ),
            "Subscribe": grpc.stream_stream_rpc_method_handler(
                self.Subscribe, response_serializer=pb.Event.SerializeToString
            ),
        }

    async def Execute(self, _unread: Any, context: grpc.aio.ServicerContext) -> pb.ActionResponse:
        # `_admit`, inline: the method agents call most, and every step of it counts.
        metadata = context.invocation_metadata()
        caller = self.auth.check(metadata)
        if isinstance(caller, str):
            await self.auth.refuse(context, "Execute", caller)
        try:
            caller = relayed_caller(caller, metadata)  # the front end it relays for, if any
        except RuntimeFailure as failure:  # one this server does not know
            await context.abort(status_of(failure), failure.wire())
        request = _decode(await context.read(), pb.ActionRequest)
        if request is None:
            await _unreadable(context, pb.ActionRequest)
        params = request.params
        call = ActionCall(
            request.action_type,
            {key: params[key] for key in params},  # half the cost of dict(params), a Python-level Mapping
            request.request_id,
            request.timeout_ms,
            request.app_target if request.HasField("app_target") else None,
        )
        try:
            outcome = await self.runtime.execute(caller, call)
        except RuntimeFailure as failure:  # a malformed request
            await context.abort(status_of(failure), failure.wire())
        return pb.ActionResponse(
            request_id=outcome.request_id,
            success=outcome.success,
            result_json=outcome.result_json,
            error=outcome.error,
            duration_ms=outcome.duration_ms,
        )

    async def Query(self, _unread: Any, context: grpc.aio.ServicerContext) -> pb.QueryResponse:
        caller, request = await self._admit(context, "Query", pb.QueryRequest)
        try:
            name = pb.QueryType.Name(request.query_type) if request.query_type else ""
        except ValueError:
            name = ""
        remaining = context.time_remaining()
        # The runtime's deadline comes a little before the RPC's, so that its TIMEOUT (which
        # may name the approval it waited for) reaches the client before grpc's own.
        timeout_s = (
            DEFAULT_QUERY_TIMEOUT_S if remaining is None else max(0.0, remaining - min(0.1, remaining / 10))
        )
        try:
            page = await self.runtime.query(
                caller, QueryCall(name, request.filters, request.limit, timeout_s)
            )
        except RuntimeFailure as failure:
            await context.abort(status_of(failure), failure.wire())
        return pb.QueryResponse(
            results_json=page.results, total_count=page.total_count, has_more=page.has_more
        )

    async def Subscribe(self, _unread: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[pb.Event]:
        caller, request = await self._admit(context, "Subscribe", pb.SubscribeRequest)
        try:
            sub = self.runtime.subscribe(caller, request.subscriber_id, request.event_types)
        except RuntimeFailure as failure:  # an id or event types past their limits
            await context.abort(status_of(failure), failure.wire())
        try:
            # Headers go out once the subscription exists, so a client that awaits them
            # knows no later event can be missed.
            await context.send_initial_metadata((("x-subscriber-id", sub.subscriber_id),))
            async for event in sub:
                yield _to_pb(event)
            if sub.ended is not None:  # its principal's token was revoked: said, not a plain end
                await context.abort(grpc.StatusCode.UNAUTHENTICATED, sub.ended)
        finally:
            self.runtime.unsubscribe(sub)
