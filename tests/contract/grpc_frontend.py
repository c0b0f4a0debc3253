"""The contract suite's gRPC front end: the production GrpcServer on port 0, grpcio aio stubs
over a real socket, one token per principal."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

import grpc

from phoneuse_runtime.app import App, build_app
from phoneuse_runtime.config.settings import Settings
from phoneuse_runtime.device.base import Device
from phoneuse_runtime.kernel.components import Component
from phoneuse_runtime.kernel.policies import Policy
from phoneuse_runtime.rpc import protocol_pb2 as pb
from phoneuse_runtime.rpc import protocol_pb2_grpc as pb_grpc
from phoneuse_runtime.rpc.auth import FRONTEND
from phoneuse_runtime.rpc.server import GrpcServer
from phoneuse_runtime.rpc.servicer import STATUS

from .frontend import PRINCIPALS, WAIT_S, Answer, Event, Page, Refused, StreamEnded

TOKENS = {principal: f"contract-{principal}-{uuid.uuid4().hex}" for principal in PRINCIPALS}
QUERY_TIMEOUT_S = 30.0


def refusal_of(error: grpc.aio.AioRpcError) -> Refused:
    """The runtime's code and message from a failed call's status details ("CODE: message"),
    after checking that the status is the one rpc/servicer.py's table gives that code."""
    details = error.details() or ""
    code, sep, message = details.partition(": ")
    if error.code() == grpc.StatusCode.DEADLINE_EXCEEDED and details == "Deadline Exceeded":
        return Refused("TIMEOUT", None)  # grpc's own: the client's deadline passed before the answer came
    assert sep and code in STATUS, (error.code(), details)
    assert error.code() == STATUS[code], (error.code(), details)
    return Refused(code, message)


class GrpcStream:
    """A Subscribe call, pumped into a queue so that a bounded wait never cancels a read."""

    def __init__(self, call: Any, subscriber_id: str) -> None:
        self.subscriber_id = subscriber_id
        self._call = call
        self._queue: asyncio.Queue[Event | BaseException | None] = asyncio.Queue()
        self._pump = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        try:
            async for message in self._call:
                payload = json.loads(message.payload_json)
                assert isinstance(payload, dict), message.payload_json
                self._queue.put_nowait(Event(message.event_type, payload, message.source, message.timestamp))
        except (grpc.aio.AioRpcError, AssertionError, ValueError) as error:
            self._queue.put_nowait(error)  # an unclean end, or a malformed event
            return
        self._queue.put_nowait(None)  # the server ended the stream with status OK

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
                self._queue.put_nowait(None)  # it stays ended
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
        self._call.cancel()
        self._pump.cancel()
        await asyncio.gather(self._pump, return_exceptions=True)


class GrpcFrontEnd:
    kind = FRONTEND

    def __init__(self, app: App) -> None:
        self.app = app
        self.channel = grpc.aio.insecure_channel(f"127.0.0.1:{app.port}")
        self.stub = pb_grpc.AndroidRuntimeStub(self.channel)
        self._streams: list[GrpcStream] = []
        self._stopped = False

    @classmethod
    async def start(
        cls,
        settings: Settings,
        *,
        device: Device | None,
        policies: Sequence[Policy],
        components: Sequence[Component],
    ) -> GrpcFrontEnd:
        """Builds the app as tests/conftest.py's make_client does, with two principals."""
        parts = [GrpcServer(settings.grpc_listen, tokens=TOKENS), *components]
        app = await build_app(
            settings, token=TOKENS["agent"], device=device, policies=policies, components=parts
        )
        return cls(app)

    @staticmethod
    def metadata(principal: str) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {TOKENS[principal]}"),)

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
        request = pb.ActionRequest(
            action_type=action_type,
            params=dict(params or {}),
            request_id=uuid.uuid4().hex if request_id is None else request_id,
            timeout_ms=timeout_ms,
        )
        if app_target is not None:
            request.app_target = app_target
        try:
            # The RPC's own deadline stays well clear of the action's: only the runtime times out.
            response = await self.stub.Execute(
                request, metadata=self.metadata(principal), timeout=max(timeout_ms, 0) / 1000 + WAIT_S
            )
        except grpc.aio.AioRpcError as error:
            raise refusal_of(error) from None
        return Answer.parse(
            request_id=response.request_id,
            success=response.success,
            result_json=response.result_json,
            error=response.error,
            duration_ms=response.duration_ms,
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
        request = pb.QueryRequest(
            query_type=pb.QueryType.Value(query_type or "QUERY_TYPE_UNSPECIFIED"),
            filters=dict(filters or {}),
            limit=limit,
        )
        # Over gRPC a query's deadline is the RPC's own.
        timeout = QUERY_TIMEOUT_S if timeout_ms is None else timeout_ms / 1000
        try:
            response = await self.stub.Query(request, metadata=self.metadata(principal), timeout=timeout)
        except grpc.aio.AioRpcError as error:
            raise refusal_of(error) from None
        results = [json.loads(r) for r in response.results_json]
        assert all(isinstance(r, dict) for r in results)
        return Page(results, response.total_count, response.has_more)

    async def subscribe(
        self, event_types: tuple[str, ...] = (), subscriber_id: str = "", *, principal: str = "agent"
    ) -> GrpcStream:
        call = self.stub.Subscribe(
            pb.SubscribeRequest(event_types=list(event_types), subscriber_id=subscriber_id),
            metadata=self.metadata(principal),
        )
        # The subscription is live once the headers arrive; a refused one ends without them.
        headers = dict(await asyncio.wait_for(call.initial_metadata(), WAIT_S))
        if "x-subscriber-id" not in headers:
            try:
                await asyncio.wait_for(call.read(), WAIT_S)
            except grpc.aio.AioRpcError as error:
                raise refusal_of(error) from None
            raise AssertionError("the stream sent an event before its headers")
        stream = GrpcStream(call, str(headers["x-subscriber-id"]))
        self._streams.append(stream)
        return stream

    async def stop(self) -> None:
        if not self._stopped:
            self._stopped = True
            await self.app.stop(grace_s=0)

    async def close(self) -> None:
        """Closes the client's streams and channel, then stops the app."""
        for stream in self._streams:
            await stream.close()
        await self.channel.close()
        await self.stop()
