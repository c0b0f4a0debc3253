"""Callers without the token: refused before their message is read, cheaply, and quietly.

Every app on the phone can reach the port, so a caller without the token must cost the server
neither memory (its message is never read), nor a traceback, nor a log line per call, nor the
place of a real call in the queue.
"""

from __future__ import annotations

import asyncio
import logging
import random
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest

from phoneuse_runtime.rpc import protocol_pb2 as pb

from ..conftest import AUTH, Client
from ..serving import serve

SERVICE = pb.DESCRIPTOR.services_by_name["AndroidRuntime"]
BAD = (("authorization", "Bearer not-the-token"),)
GARBAGE = b"\xff\xff\xff\xff\x0f"  # a field number 0: no message decodes from it


def _path(method: str) -> str:
    return f"/{SERVICE.full_name}/{method}"


@pytest.mark.parametrize("method", [m.name for m in SERVICE.methods])
async def test_the_token_is_checked_before_the_message_is_read(client: Client, method: str) -> None:
    """Another app without the token holds a call open without sending its message.

    A caller that never sends its message is refused at once: nothing waits for its bytes."""

    async def nothing() -> AsyncIterator[bytes]:
        await asyncio.Event().wait()  # never sends, never half-closes
        yield b""  # pragma: no cover

    call = client.channel.stream_stream(_path(method))(nothing(), metadata=BAD, timeout=10)
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await asyncio.wait_for(call.read(), 5)
    assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED


def _errors(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]


@pytest.mark.parametrize("method", [m.name for m in SERVICE.methods])
async def test_garbage_without_a_token_is_unauthenticated_without_a_traceback(
    client: Client, caplog: pytest.LogCaptureFixture, method: str
) -> None:
    """Another app without the token sends garbage, for tracebacks."""
    caplog.set_level(logging.DEBUG)
    call = client.channel.unary_stream(_path(method))(GARBAGE, metadata=BAD, timeout=10)
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await call.read()
    assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert not _errors(caplog), caplog.text
    assert "Traceback" not in caplog.text


@pytest.mark.parametrize("method", [m.name for m in SERVICE.methods])
async def test_garbage_with_the_token_is_invalid_argument_without_a_traceback(
    client: Client, caplog: pytest.LogCaptureFixture, method: str
) -> None:
    """Hostile input with the token: garbage messages, for tracebacks."""
    caplog.set_level(logging.DEBUG)
    call = client.channel.unary_stream(_path(method))(GARBAGE, metadata=AUTH, timeout=10)
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await call.read()
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert info.value.details() == f"not a valid {SERVICE.methods_by_name[method].input_type.name} message"
    assert not _errors(caplog), caplog.text


@pytest.mark.parametrize(
    "path",
    [
        "/grpc.health.v1.Health/Check",
        "/grpc.health.v1.Health/Watch",
        "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
    ],
)
async def test_garbage_to_the_services_open_to_all_is_invalid_argument_without_a_traceback(
    client: Client, caplog: pytest.LogCaptureFixture, path: str
) -> None:
    """Another app sends garbage to the services open to all (health, reflection)."""
    caplog.set_level(logging.DEBUG)
    call = client.channel.unary_stream(path)(GARBAGE, timeout=10)
    with pytest.raises(grpc.aio.AioRpcError) as info:
        async for _ in call:
            pass
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert not _errors(caplog), caplog.text


async def test_a_large_message_without_a_token_is_refused_unread(client: Client) -> None:
    """Another app without the token sends a large message, to have it read."""
    request = pb.ActionRequest(
        action_type="SET_CLIPBOARD", params={"text": "x" * 900_000}, request_id="r", timeout_ms=1000
    )
    for _ in range(3):
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await client.stub.Execute(request, metadata=BAD, timeout=10)
        assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert (await client.execute("SET_CLIPBOARD", {"text": "after"})).success


async def test_callers_without_a_token_cost_little_memory(tmp_path: Path) -> None:
    """Another app without the token sends many 4 MB calls to grow the server's memory.

    300 such Executes of 4 MB took the server from 81 to 302 MiB: their messages were decoded
    before the token was checked, and HTTP/2 let each send megabytes ahead that the server held."""
    request = pb.ActionRequest(
        action_type="SET_CLIPBOARD", params={"text": "x" * 900_000}, request_id="r", timeout_ms=1000
    )
    payload = request.SerializeToString()
    with serve(tmp_path) as server:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as channel:
            execute = channel.unary_unary(_path("Execute"))
            server.reset_peak()
            before = server.rss_kib()

            async def refused() -> grpc.StatusCode:
                with pytest.raises(grpc.aio.AioRpcError) as info:
                    await execute(payload, metadata=BAD, timeout=60)
                return info.value.code()

            codes = await asyncio.gather(*(refused() for _ in range(100)))
            grown_mib = (server.rss_kib("VmHWM") - before) / 1024
    assert set(codes) == {grpc.StatusCode.UNAUTHENTICATED}
    # About 3 MiB now; 20-55 MiB when HTTP/2 windows grew, over 120 MiB when messages were decoded.
    assert grown_mib < 12, f"100 refused calls of 0.9 MB took {grown_mib:.0f} MiB at the peak"


async def test_refusals_are_logged_once_per_interval(
    client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    """Another app without the token floods refusals to fill the log.

    15,000 refusals used to write 1.7 MB of warnings in 5 s."""
    caplog.set_level(logging.DEBUG, logger="phoneuse_runtime.rpc.auth")
    request = pb.ActionRequest(action_type="DUMP_UI", request_id="r", timeout_ms=1000)
    for _ in range(200):
        with pytest.raises(grpc.aio.AioRpcError):
            await client.stub.Execute(request, metadata=BAD, timeout=10)
    lines = [r.getMessage() for r in caplog.records if r.name == "phoneuse_runtime.rpc.auth"]
    assert lines == ["rejected a call to Execute: invalid token"]


async def test_an_unauthenticated_flood_does_not_cancel_real_calls(client: Client) -> None:
    """Another app without the token floods calls to have the real ones cancelled.

    5,000 refused calls used to get 16-23 of 50 real calls among them cancelled."""
    request = pb.ActionRequest(action_type="DUMP_UI", request_id="r", timeout_ms=1000)

    async def bad() -> str:
        try:
            await client.stub.Execute(request, metadata=BAD, timeout=60)
        except grpc.aio.AioRpcError as exc:
            return f"bad {exc.code().name}"
        return "bad OK"  # pragma: no cover

    async def real() -> str:
        try:
            response = await client.execute("SET_CLIPBOARD", {"text": "x"}, request_id=uuid.uuid4().hex)
        except grpc.aio.AioRpcError as exc:
            return f"real {exc.code().name}"
        return f"real {'OK' if response.success else response.error}"

    calls = [bad() for _ in range(3000)] + [real() for _ in range(50)]
    random.Random(6).shuffle(calls)
    outcomes = Counter(await asyncio.gather(*calls))
    assert outcomes == {"bad UNAUTHENTICATED": 3000, "real OK": 50}
