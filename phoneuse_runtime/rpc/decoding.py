"""Request decoding for the services that need no token (health, reflection).

grpc.aio decodes a request before the handler runs and logs a traceback, at ERROR, for bytes that
decode to no message. Any app on the phone can call these services, so each such call would
cost a traceback in the log. Registered through `DecodingRegistrar`, their handlers receive the
raw bytes and decode them first: a request that does not decode is INVALID_ARGUMENT, quietly.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any

import grpc
from google.protobuf.message import DecodeError

Decode = Callable[[bytes], Any]

_FACTORIES = {
    (False, False): grpc.unary_unary_rpc_method_handler,
    (False, True): grpc.unary_stream_rpc_method_handler,
    (True, False): grpc.stream_unary_rpc_method_handler,
    (True, True): grpc.stream_stream_rpc_method_handler,
}


async def _decoded(raw: bytes, decode: Decode, context: grpc.aio.ServicerContext) -> Any:
    try:
        return decode(raw)
    except DecodeError:
        await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "not a valid request message")


def decoding(handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
    """The same method, decoding its requests itself; handlers that are not async stay as they are."""
    decode = handler.request_deserializer
    behaviour = handler.unary_unary or handler.unary_stream or handler.stream_unary or handler.stream_stream
    streams = inspect.isasyncgenfunction(behaviour)
    if decode is None or not (streams or inspect.iscoroutinefunction(behaviour)):
        return handler

    async def requests(raws: AsyncIterator[bytes], context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
        async for raw in raws:
            yield await _decoded(raw, decode, context)

    async def request_of(received: Any, context: grpc.aio.ServicerContext) -> Any:
        if handler.request_streaming:
            return requests(received, context)
        return await _decoded(received, decode, context)

    async def respond(received: Any, context: grpc.aio.ServicerContext) -> Any:
        return await behaviour(await request_of(received, context), context)

    async def respond_each(received: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
        async for response in behaviour(await request_of(received, context), context):
            yield response

    factory = _FACTORIES[(handler.request_streaming, handler.response_streaming)]
    return factory(respond_each if streams else respond, response_serializer=handler.response_serializer)


class _DecodingGeneric(grpc.GenericRpcHandler):  # type: ignore[misc]
    def __init__(self, inner: grpc.GenericRpcHandler) -> None:
        self._inner = inner

    def service(self, handler_call_details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler | None:
        handler = self._inner.service(handler_call_details)
        return None if handler is None else decoding(handler)


class DecodingRegistrar:
    """Stands in for a grpc.aio server when a generated `add_*Servicer_to_server` registers a
    service on it, and registers the service's methods on the server with `decoding`."""

    def __init__(self, server: grpc.aio.Server) -> None:
        self._server = server

    def add_generic_rpc_handlers(self, generic_handlers: Sequence[grpc.GenericRpcHandler]) -> None:
        self._server.add_generic_rpc_handlers(tuple(_DecodingGeneric(h) for h in generic_handlers))

    def add_registered_method_handlers(
        self, service: str, method_handlers: Mapping[str, grpc.RpcMethodHandler]
    ) -> None:
        """Registers nothing: the generated code registers each service's methods generically
        too, which serves them alike. grpc.aio's server waits on one future per registered
        method, and every call of any method (Execute's too) would pay for these."""
