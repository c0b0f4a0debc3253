"""The servicer's mapping from outcomes to gRPC statuses, and its token check, in process with
grpcio-testing: no socket, no HTTP/2, each call a few milliseconds. The real-socket tests
(tests/contract/, test_auth.py, redteam/test_unauthenticated.py) stay the contract's proof; these pin
the table and the check where a failure names the one line that broke.

grpc_testing drives synchronous servicers, one thread per call; ours is grpc.aio's. `_OnLoop`
runs each of its methods on the app's event loop (in a thread of its own) and gives it a
grpc.aio-shaped view of grpc_testing's context: `read()` takes the next request grpc_testing
was sent (serialized, as the wire would give it), `abort` and `send_initial_metadata` forward.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

import grpc
import grpc_testing
import pytest
from google.protobuf.message import Message

from phoneuse_runtime.app import App, build_app
from phoneuse_runtime.config.settings import Settings
from phoneuse_runtime.kernel.errors import FAILURES
from phoneuse_runtime.rpc import protocol_pb2 as pb
from phoneuse_runtime.rpc.auth import BearerAuth
from phoneuse_runtime.rpc.servicer import STATUS, AndroidRuntimeServicer

from .conftest import AUTH, TOKEN

SERVICE = pb.DESCRIPTOR.services_by_name["AndroidRuntime"]
T = TypeVar("T")


class _AioContext:
    """What the servicer uses of grpc.aio.ServicerContext, over grpc_testing's context."""

    def __init__(self, context: grpc.ServicerContext, requests: Iterator[object]) -> None:
        self._context = context
        self._requests = requests

    def invocation_metadata(self) -> Any:
        return self._context.invocation_metadata()

    def time_remaining(self) -> float | None:
        return self._context.time_remaining()  # type: ignore[no-any-return]

    async def read(self) -> object:
        # grpc_testing's iterator blocks its thread until the test sends or closes: not the loop's.
        request = await asyncio.to_thread(next, self._requests, grpc.aio.EOF)
        return request.SerializeToString() if isinstance(request, Message) else request

    async def abort(self, code: grpc.StatusCode, details: str) -> None:
        self._context.abort(code, details)  # ends the call, then raises

    async def send_initial_metadata(self, metadata: Any) -> None:
        self._context.send_initial_metadata(metadata)


class _OnLoop:
    """The aio servicer's methods, as the synchronous ones grpc_testing calls."""

    def __init__(self, servicer: AndroidRuntimeServicer, run: Callable[[Any], Any]) -> None:
        self._servicer, self._run = servicer, run

    def _unary(self, method: str, requests: Iterator[object], context: grpc.ServicerContext) -> Any:
        try:
            return self._run(getattr(self._servicer, method)(None, _AioContext(context, requests)))
        except Exception:
            if context.is_active():  # not the abort's own raise: a real failure
                raise
            return None

    def Execute(self, requests: Iterator[object], context: grpc.ServicerContext) -> Any:
        return self._unary("Execute", requests, context)

    def Query(self, requests: Iterator[object], context: grpc.ServicerContext) -> Any:
        return self._unary("Query", requests, context)

    def Subscribe(self, requests: Iterator[object], context: grpc.ServicerContext) -> Iterator[Any]:
        stream = self._servicer.Subscribe(None, _AioContext(context, requests))
        while True:
            try:
                yield self._run(stream.__anext__())
            except StopAsyncIteration:
                return
            except Exception:
                if context.is_active():
                    raise
                return


@pytest.fixture
def on_loop() -> Iterator[Callable[[Coroutine[Any, Any, T]], T]]:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()

    def run(coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, loop).result(timeout=60)

    yield run
    loop.call_soon_threadsafe(loop.stop)
    thread.join(timeout=60)
    loop.close()


@pytest.fixture
def serve_in_process(
    tmp_path: Path, on_loop: Callable[[Coroutine[Any, Any, Any]], Any]
) -> Iterator[Callable[..., grpc_testing.Server]]:
    """`serve_in_process(**settings)`: the app from the production factory with no front end
    (nothing listens), its servicer behind grpc_testing's in-process server."""
    apps: list[App] = []

    def start(**overrides: Any) -> grpc_testing.Server:
        base = Settings(data_dir=tmp_path / f"data{len(apps)}", gateway=False, memory_ingest=False)
        app: App = on_loop(build_app(replace(base, **overrides), token=TOKEN, components=[]))
        apps.append(app)
        servicer = AndroidRuntimeServicer(app.runtime, BearerAuth({"agent": TOKEN}))
        return grpc_testing.server_from_dictionary(
            {SERVICE: _OnLoop(servicer, on_loop)}, grpc_testing.strict_real_time()
        )

    yield start
    for app in apps:
        on_loop(app.stop(grace_s=0))


def _call(
    server: grpc_testing.Server, method: str, request: object | None, metadata: Any = AUTH
) -> tuple[Any, grpc.StatusCode, str]:
    rpc = server.invoke_stream_unary(SERVICE.methods_by_name[method], metadata, 30)
    if request is not None:
        rpc.send_request(request)
        rpc.requests_closed()
    response, _, code, details = rpc.termination()
    return response, code, details


def _execute(action: str, timeout_ms: int = 5000, **params: str) -> pb.ActionRequest:
    return pb.ActionRequest(
        action_type=action, params=params, request_id=f"r-{action}", timeout_ms=timeout_ms
    )


def test_every_failure_code_has_its_own_status() -> None:
    """A code missing from the table would fall back to INTERNAL, and a client would retry a
    refusal or give up on a phone that is only away."""
    assert {f.code for f in FAILURES} | {"BAD_REQUEST"} == set(STATUS)
    assert [code for code, status in STATUS.items() if status == grpc.StatusCode.INTERNAL] == ["INTERNAL"]


def test_a_failed_action_is_answered_in_band_a_malformed_request_is_invalid_argument(
    serve_in_process: Callable[..., grpc_testing.Server],
) -> None:
    server = serve_in_process()
    response, code, _ = _call(server, "Execute", _execute("TAP", text="Nowhere"))
    assert code == grpc.StatusCode.OK
    assert (response.success, response.error.split(":")[0]) == (False, "ELEMENT_NOT_FOUND")
    _, code, details = _call(server, "Execute", _execute("TAP", timeout_ms=0, text="x"))
    assert (code, details) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_REQUEST: timeout_ms must be > 0, got 0")
    _, code, details = _call(server, "Execute", b"\xff\xff not protobuf")
    assert (code, details) == (grpc.StatusCode.INVALID_ARGUMENT, "not a valid ActionRequest message")


@pytest.mark.parametrize(
    ("filters", "query_type", "status", "wire_code"),
    [
        ({}, pb.QUERY_TYPE_UNSPECIFIED, grpc.StatusCode.INVALID_ARGUMENT, "BAD_REQUEST"),
        ({"colour": "red"}, pb.CONTACTS, grpc.StatusCode.INVALID_ARGUMENT, "INVALID_PARAMS"),
        ({"offset": "-1"}, pb.CONTACTS, grpc.StatusCode.INVALID_ARGUMENT, "BAD_REQUEST"),
    ],
)
def test_a_malformed_query_is_invalid_argument(
    serve_in_process: Callable[..., grpc_testing.Server],
    filters: dict[str, str],
    query_type: int,
    status: grpc.StatusCode,
    wire_code: str,
) -> None:
    request = pb.QueryRequest(query_type=query_type, filters=filters)  # type: ignore[arg-type]
    _, code, details = _call(serve_in_process(), "Query", request)
    assert code == status
    assert details.startswith(f"{wire_code}: ")


def test_query_failures_map_to_their_statuses(serve_in_process: Callable[..., grpc_testing.Server]) -> None:
    denied = serve_in_process(deny_actions=frozenset({"CONTACTS"}))
    _, code, details = _call(denied, "Query", pb.QueryRequest(query_type=pb.CONTACTS))
    assert (code, details.split(":")[0]) == (grpc.StatusCode.PERMISSION_DENIED, "DENIED")

    away = serve_in_process()
    response, code, _ = _call(away, "Execute", _execute("SIM_SET_CONNECTED", connected="false"))
    assert code == grpc.StatusCode.OK and response.success, response.error
    _, code, details = _call(away, "Query", pb.QueryRequest(query_type=pb.APP_STATE))
    assert (code, details.split(":")[0]) == (grpc.StatusCode.UNAVAILABLE, "DEVICE_UNAVAILABLE")
    response, code, _ = _call(away, "Query", pb.QueryRequest(query_type=pb.MEMORY))  # needs no phone
    assert code == grpc.StatusCode.OK


def test_subscribe_refuses_an_unknown_event_type(
    serve_in_process: Callable[..., grpc_testing.Server],
) -> None:
    server = serve_in_process()
    rpc = server.invoke_stream_stream(SERVICE.methods_by_name["Subscribe"], AUTH, 30)
    rpc.send_request(pb.SubscribeRequest(event_types=["MESAGE_RECEIVED"]))
    rpc.requests_closed()
    _, code, details = rpc.termination()
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert "no event type 'MESAGE_RECEIVED'; did you mean MESSAGE_RECEIVED?" in details


@pytest.mark.parametrize(
    ("metadata", "problem"),
    [
        ((), "missing authorization metadata (expected 'Bearer <token>')"),
        ((("authorization", "Bearer not-the-token"),), "invalid token"),
        ((("authorization", TOKEN),), "invalid token"),  # no scheme
        ((("authorization", f"Basic {TOKEN}"),), "invalid token"),
    ],
)
@pytest.mark.parametrize("method", ["Execute", "Query", "Subscribe"])
def test_a_call_without_the_token_is_refused_before_its_request_is_read(
    serve_in_process: Callable[..., grpc_testing.Server], method: str, metadata: Any, problem: str
) -> None:
    """The request is never sent, nor the stream closed: a servicer that read before it checked
    would wait for it, and the call would never end."""
    server = serve_in_process()
    descriptor = SERVICE.methods_by_name[method]
    if method == "Subscribe":
        rpc: Any = server.invoke_stream_stream(descriptor, metadata, 30)
        _, code, details = rpc.termination()
    else:
        _, _, code, details = server.invoke_stream_unary(descriptor, metadata, 30).termination()
    assert (code, details) == (grpc.StatusCode.UNAUTHENTICATED, problem)


def test_the_bearer_scheme_is_any_case(serve_in_process: Callable[..., grpc_testing.Server]) -> None:
    any_case = (("authorization", f"bEaReR {TOKEN}"),)
    request = _execute("SIM_SET_CONNECTED", connected="true")
    response, code, _ = _call(serve_in_process(), "Execute", request, any_case)
    assert (code, response.success, response.error) == (grpc.StatusCode.OK, True, "")
