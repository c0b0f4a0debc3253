"""AndroidRuntime servicer: turns protobuf messages into Runtime calls and back."""

from __future__ import annotations

import functools
import logging
from collections.abc import AsyncIterator

import grpc

from ..errors import BadRequest, RuntimeFailure
from ..events import Event
from ..runtime import ActionCall, Runtime
from . import protocol_pb2 as pb
from . import protocol_pb2_grpc as pb_grpc
from .auth import BearerAuth

log = logging.getLogger(__name__)

# How a failed Query's code maps onto gRPC status codes (Execute reports failures in-band).
QUERY_STATUS: dict[str, grpc.StatusCode] = {
    "INVALID_PARAMS": grpc.StatusCode.INVALID_ARGUMENT,
    "TIMEOUT": grpc.StatusCode.DEADLINE_EXCEEDED,
    "DEVICE_UNAVAILABLE": grpc.StatusCode.UNAVAILABLE,
    "ELEMENT_NOT_FOUND": grpc.StatusCode.NOT_FOUND,
    "PERMISSION_DENIED": grpc.StatusCode.PERMISSION_DENIED,
    "UNSUPPORTED": grpc.StatusCode.UNIMPLEMENTED,
    "DENIED": grpc.StatusCode.PERMISSION_DENIED,
}
DEFAULT_QUERY_TIMEOUT_S = 30.0


@functools.lru_cache(maxsize=64)
def _to_pb(event: Event) -> pb.Event:
    """One protobuf message per bus event, shared by all the streams it fans out to."""
    return pb.Event(
        event_type=event.event_type,
        payload_json=event.payload_json,
        timestamp=event.timestamp,
        source=event.source,
    )


class AndroidRuntimeServicer(pb_grpc.AndroidRuntimeServicer):
    """Every method first checks the caller's bearer token."""

    def __init__(self, runtime: Runtime, auth: BearerAuth) -> None:
        self.runtime = runtime
        self.auth = auth

    async def Execute(
        self, request: pb.ActionRequest, context: grpc.aio.ServicerContext
    ) -> pb.ActionResponse:
        await self.auth.require(context, "Execute")
        call = ActionCall(
            action_type=request.action_type,
            params=dict(request.params),
            request_id=request.request_id,
            timeout_ms=request.timeout_ms,
            app_target=request.app_target if request.HasField("app_target") else None,
        )
        try:
            outcome = await self.runtime.execute(call)
        except BadRequest as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        return pb.ActionResponse(
            request_id=outcome.request_id,
            success=outcome.success,
            result_json=outcome.result_json,
            error=outcome.error,
            duration_ms=outcome.duration_ms,
        )

    async def Query(self, request: pb.QueryRequest, context: grpc.aio.ServicerContext) -> pb.QueryResponse:
        await self.auth.require(context, "Query")
        try:
            name = pb.QueryType.Name(request.query_type) if request.query_type else ""
        except ValueError:
            name = ""
        remaining = context.time_remaining()
        timeout_s = DEFAULT_QUERY_TIMEOUT_S if remaining is None else max(0.0, remaining)
        try:
            page = await self.runtime.query(name, request.filters, request.limit, timeout_s=timeout_s)
        except BadRequest as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        except RuntimeFailure as exc:
            await context.abort(QUERY_STATUS.get(exc.code, grpc.StatusCode.INTERNAL), exc.wire())
        except Exception:
            log.exception("query %s crashed", name)
            await context.abort(
                grpc.StatusCode.INTERNAL, "INTERNAL: query failed unexpectedly; see the server log"
            )
        return pb.QueryResponse(
            results_json=page.results, total_count=page.total_count, has_more=page.has_more
        )

    async def Subscribe(
        self, request: pb.SubscribeRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.Event]:
        await self.auth.require(context, "Subscribe")
        sub = self.runtime.subscribe(request.subscriber_id, request.event_types)
        try:
            # Headers go out once the subscription exists, so a client that awaits them
            # knows no later event can be missed.
            await context.send_initial_metadata((("x-subscriber-id", sub.subscriber_id),))
            async for event in sub:
                yield _to_pb(event)
        finally:
            self.runtime.unsubscribe(sub)
