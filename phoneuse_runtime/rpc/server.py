"""The gRPC front end as a component: the AndroidRuntime servicer (which checks tokens),
health and reflection (open to all, see decoding.py), on one or more listening addresses, within
the limits of `GrpcLimits`."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import resource
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2_grpc

from phoneuse_runtime.config.sections import GrpcSettings
from phoneuse_runtime.config.settings import Settings
from phoneuse_runtime.kernel.registry import Contribution
from phoneuse_runtime.kernel.runtime import Runtime
from phoneuse_runtime.rpc import protocol_pb2 as pb
from phoneuse_runtime.rpc.auth import REVOKED, TOKENS_RECHECK_S, BearerAuth
from phoneuse_runtime.rpc.decoding import DecodingRegistrar
from phoneuse_runtime.rpc.servicer import AndroidRuntimeServicer

log = logging.getLogger(__name__)

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["AndroidRuntime"].full_name
REGISTERED = ("Execute",)
GRPC_LISTEN_HINT = "choose another with `serve --grpc-listen HOST:PORT` (grpc_listen)"
# Open files the connection cap leaves to everything else (the data files, the listeners, grpc's own).
RESERVED_FILES = 64


@dataclass(frozen=True)
class GrpcLimits:
    """What callers may hold of the server; the settings `grpc_*`, documented in the spec.

    Sized for a phone, where every app can reach the port and an agent needs tens of calls at
    once: generous for a burst from one client (thousands of streams on one connection), small
    for what a silent or hostile connection can keep (seconds, a bounded share of open files)."""

    max_receive_bytes: int  # the largest request; the largest action params fit with room to spare
    max_concurrent_calls: int  # open calls in all (streams stay open); past it, RESOURCE_EXHAUSTED
    max_concurrent_streams: int  # open calls per connection; a client queues the ones past it
    # Calls that arrived but that the application has not picked up yet. Past this, gRPC core
    # cancels new ones without a word; below, a burst just waits its turn.
    max_pending_calls: int
    max_connections: int  # also held under the open-file limit, less RESERVED_FILES
    handshake_timeout_s: float  # a connection that has not spoken HTTP/2 by then is closed
    idle_timeout_s: float  # a connection without calls for this long is sent GOAWAY
    keepalive_s: float  # a connection with calls is pinged after this long without traffic,
    keepalive_timeout_s: float  # and closed if the ping is not answered in time (a frozen app)

    @classmethod
    def from_settings(cls, grpc: GrpcSettings) -> GrpcLimits:
        """The limits of the `grpc` section (checked by load_settings)."""
        return cls(**{f.name: getattr(grpc, f.name) for f in fields(cls)})

    def within_open_files(self) -> GrpcLimits:
        """These limits with the connection cap lowered, if need be, so that connections can
        never take the open files the server needs for anything else."""
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft == resource.RLIM_INFINITY or self.max_connections <= soft - RESERVED_FILES:
            return self
        capped = max(1, soft - RESERVED_FILES)
        log.info("at most %d connections: the open-file limit is %d", capped, soft)
        return replace(self, max_connections=capped)

    def options(self) -> list[tuple[str, int]]:
        """The gRPC core channel arguments for these limits."""
        return [
            ("grpc.max_receive_message_length", self.max_receive_bytes),
            # Keep each call's receive window at HTTP/2's 64 KiB rather than let bandwidth probes
            # widen it to megabytes: the server holds what a client sends ahead, and it reads
            # nothing of a caller without a token. Uploads on loopback are as fast either way.
            ("grpc.http2.bdp_probe", 0),
            ("grpc.max_concurrent_streams", self.max_concurrent_streams),
            # Count open streams as the client does: by default gRPC core also counts streams
            # that ended but are not freed yet, and refuses (UNAVAILABLE) calls that a client
            # sent because it saw a free slot.
            ("grpc.http.overload_protection", 0),
            # Equal limits: no random early shedding between a soft and a hard one.
            ("grpc.server.max_pending_requests", self.max_pending_calls),
            ("grpc.server.max_pending_requests_hard_limit", self.max_pending_calls),
            ("grpc.max_allowed_incoming_connections", self.max_connections),
            ("grpc.server_handshake_timeout_ms", _ms(self.handshake_timeout_s)),
            ("grpc.max_connection_idle_ms", _ms(self.idle_timeout_s)),
            ("grpc.keepalive_time_ms", _ms(self.keepalive_s)),
            ("grpc.keepalive_timeout_ms", _ms(self.keepalive_timeout_s)),
            ("grpc.http2.ping_timeout_ms", _ms(self.keepalive_timeout_s)),  # else 60 s for any ping
            # Keep pinging a quiet stream: by default gRPC core stops after two pings without data,
            # so an app frozen after that would hold its stream for good.
            ("grpc.http2.max_pings_without_data", 0),
        ]


def _ms(seconds: float) -> int:
    return max(1, round(seconds * 1000))


class GrpcServer:
    """Serves AndroidRuntime on `address` ("HOST:PORT"; port 0 picks a free one, see `port`).

    `also` lists further addresses served alike, e.g. "unix:/abs/path" (`serve`'s private socket).
    `tokens` maps each principal to its token; `serve` has one, the agent's. `tokens_file` is a
    fleet's tokens file, whose hashes name principals too (see BearerAuth)."""

    name = "grpc"

    def __init__(
        self,
        address: str,
        *,
        tokens: Mapping[str, str],
        name: str = "grpc",
        limits: GrpcLimits | None = None,
        also: Sequence[str] = (),
        tokens_file: Path | None = None,
    ) -> None:
        self.name = name
        self.address = address
        self.also = tuple(also)
        self.auth = BearerAuth(tokens, tokens_file=tokens_file)  # keeps only the tokens' hashes
        self.limits = limits or GrpcLimits.from_settings(Settings().grpc)
        self.port = 0
        self._server: grpc.aio.Server | None = None
        self._recheck: asyncio.Task[None] | None = None

    def contribution(self) -> Contribution:
        return Contribution()

    async def start(self, runtime: Runtime) -> None:
        from phoneuse_runtime.util.listen import bind_problem

        server = grpc.aio.server(
            options=[*self.limits.within_open_files().options(), ("grpc.so_reuseport", 0)],
            maximum_concurrent_rpcs=self.limits.max_concurrent_calls,
        )
        handlers = AndroidRuntimeServicer(runtime, self.auth).method_handlers()
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE_NAME, handlers),))
        # Only Execute, the method called most, is also registered with gRPC core (matched there
        # by its path rather than looked up per call): grpc.aio's server waits on one future per
        # registered method, and every call of any method pays for all of them.
        server.add_registered_method_handlers(SERVICE_NAME, {name: handlers[name] for name in REGISTERED})
        health_servicer = health.aio.HealthServicer()
        open_to_all = DecodingRegistrar(server)  # no token needed: garbage must not cost a traceback
        health_pb2_grpc.add_HealthServicer_to_server(health_servicer, open_to_all)
        reflection_pb2_grpc.add_ServerReflectionServicer_to_server(LazyReflection(), open_to_all)
        # Asked first, so that a port in use is said once, with the flag that changes it, and not
        # also in a line of gRPC core's own log.
        problem = bind_problem(self.address) if not self.address.startswith("unix:") else None
        if problem:
            raise OSError(f"cannot listen on {self.address}: {problem}; {GRPC_LISTEN_HINT}")
        try:
            port = server.add_insecure_port(self.address)
        except RuntimeError as exc:  # grpc's way of saying the bind failed
            raise OSError(
                f"cannot listen on {self.address}: the address is in use or not available; {GRPC_LISTEN_HINT}"
            ) from exc
        if port == 0:
            raise OSError(f"cannot listen on {self.address}")
        for address in self.also:
            try:
                server.add_insecure_port(address)
            except RuntimeError as exc:
                raise OSError(f"cannot listen on {address}") from exc
        await server.start()
        await health_servicer.set("", health_pb2.HealthCheckResponse.SERVING)
        # AndroidRuntime serves while its phone answers; the server itself stays SERVING.
        link = runtime.device.link
        await health_servicer.set(SERVICE_NAME, _status(link.up))
        loop = asyncio.get_running_loop()
        link.watch(lambda up: _follow(loop.create_task(health_servicer.set(SERVICE_NAME, _status(up)))))
        self._server, self.port = server, port
        self.auth.on_revoked = lambda principals: runtime.end_streams(principals, REVOKED)
        if self.auth.watches_file:
            self._recheck = asyncio.create_task(self._recheck_tokens(), name="tokens file recheck")

    async def _recheck_tokens(self) -> None:
        """Re-reads the fleet's tokens file between calls, so that a revoked principal's open
        streams end though it calls nothing more (BearerAuth.refresh tells on_revoked)."""
        while True:
            await asyncio.sleep(TOKENS_RECHECK_S)  # a stat of one file; a read when it changed
            try:
                self.auth.refresh()
            except Exception:  # never the end of the checks: the next round tries again
                log.exception("re-reading the fleet's tokens file failed")

    async def stop(self, *, grace_s: float) -> None:
        if self._recheck is not None:
            self._recheck.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._recheck
            self._recheck = None
        if self._server is not None:
            await self._server.stop(grace_s)


class LazyReflection:
    """Server reflection, loaded on its first call: grpc_reflection brings all of protobuf's
    descriptor messages (half a megabyte resident), which most servers never need."""

    def __init__(self) -> None:
        self._servicer: Any = None

    async def ServerReflectionInfo(
        self, requests: AsyncIterator[Any], context: grpc.aio.ServicerContext
    ) -> AsyncIterator[Any]:
        if self._servicer is None:
            from grpc_reflection.v1alpha import reflection

            self._servicer = reflection.aio.ReflectionServicer(
                (SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME)
            )
        async for response in self._servicer.ServerReflectionInfo(requests, context):
            yield response


def _status(up: bool) -> int:
    status: int = health_pb2.HealthCheckResponse.SERVING if up else health_pb2.HealthCheckResponse.NOT_SERVING
    return status


_health_updates: set[asyncio.Task[None]] = set()


def _follow(task: asyncio.Task[None]) -> None:
    """Keeps a health update alive until it is done (the loop holds tasks only weakly)."""
    _health_updates.add(task)
    task.add_done_callback(_health_updates.discard)
