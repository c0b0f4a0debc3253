"""The gRPC server's limits: bursts get through, oversized requests and idle connections do not.

Loads here are bounded (a few thousand calls on loopback); the figures under heavier attacks are
bench/bench_hostile.py's, printed for a person to read.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import socket
import sys
import uuid
from collections.abc import Iterator
from dataclasses import fields
from pathlib import Path

import grpc
import pytest

from phoneuse_runtime.app import served_spec
from phoneuse_runtime.config.settings import ConfigError, Settings, load_settings
from phoneuse_runtime.kernel.limits import MAX_BULK_CHARS, MAX_PARAM_CHARS
from phoneuse_runtime.rpc import protocol_pb2 as pb
from phoneuse_runtime.rpc import protocol_pb2_grpc as pb_grpc
from phoneuse_runtime.rpc.server import GrpcLimits

from .conftest import AUTH, Client, ServerFactory
from .serving import serve

MiB = 1024 * 1024


async def test_a_burst_of_2000_subscribes_all_get_their_headers(client: Client) -> None:
    """gRPC core cancelled some of them, unlogged, past 1,000 calls waiting for the application."""
    streams = [
        client.stub.Subscribe(pb.SubscribeRequest(subscriber_id=f"burst-{i}"), metadata=AUTH, timeout=60)
        for i in range(2000)
    ]
    headers = await asyncio.gather(*(s.initial_metadata() for s in streams))
    ids = [dict(h).get("x-subscriber-id") for h in headers]
    cancelled = [i for i, s in enumerate(streams) if s.done()]
    for stream in streams:
        stream.cancel()
    # The server ends the cancelled streams in this test's loop: gRPC would report what is left
    # to a closed loop during the next test.
    while client.app.runtime.bus.subscriber_count:
        await asyncio.sleep(0)
    assert not cancelled, f"{len(cancelled)} of 2000 streams ended"
    assert ids == [f"burst-{i}" for i in range(2000)]


def _clipboard(size: int) -> pb.ActionRequest:
    return pb.ActionRequest(
        action_type="SET_CLIPBOARD", params={"text": "x" * size}, request_id=uuid.uuid4().hex, timeout_ms=5000
    )


async def test_a_request_over_the_default_receive_limit_is_resource_exhausted(client: Client) -> None:
    assert Settings().grpc_max_receive_bytes == 2 * MiB
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await client.stub.Execute(_clipboard(2 * MiB + 1), metadata=AUTH, timeout=30)
    assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    # The largest param value the limits allow fits, even as 4-byte UTF-8 (refused by the limit,
    # not by the transport); so does SIM_SET_SCREEN's largest xml.
    request = _clipboard(0)
    request.params["text"] = "🚲" * MAX_PARAM_CHARS
    assert request.ByteSize() < 2 * MiB
    answer = await client.stub.Execute(request, metadata=AUTH, timeout=30)
    assert answer.error.startswith("INVALID_PARAMS: text") or answer.success
    screen = pb.ActionRequest(
        action_type="SIM_SET_SCREEN",
        params={"xml": "x" * MAX_BULK_CHARS},
        request_id="big-xml",
        timeout_ms=5000,
    )
    assert screen.ByteSize() < 2 * MiB
    refused = await client.stub.Execute(screen, metadata=AUTH, timeout=30)
    assert refused.error.startswith("INVALID_PARAMS: ")  # not a hierarchy: it reached the runtime


async def test_the_receive_limit_is_a_setting(
    make_client: ServerFactory, caplog: pytest.LogCaptureFixture
) -> None:
    client = await make_client(grpc_max_receive_bytes=20_000)
    assert (await client.stub.Execute(_clipboard(19_000), metadata=AUTH, timeout=30)).success
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await client.stub.Execute(_clipboard(20_001), metadata=AUTH, timeout=30)
    assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.text


async def _closed_by_peer(reader: asyncio.StreamReader, within_s: float) -> bool:
    """True when the server closes the connection (EOF or reset) within `within_s`; what it
    sends before (its HTTP/2 settings) is read and dropped."""
    try:
        await asyncio.wait_for(reader.read(), within_s)
    except ConnectionError:
        return True
    except (TimeoutError, asyncio.TimeoutError):  # the same class from 3.11 on
        return False
    return True


async def test_a_connection_that_sends_nothing_is_closed_within_seconds(make_client: ServerFactory) -> None:
    """Such connections used to be held for over a minute, each an open file."""
    assert Settings().grpc_handshake_timeout_s <= 5
    client = await make_client(grpc_handshake_timeout_s=0.3)
    reader, writer = await asyncio.open_connection("127.0.0.1", client.app.port)
    try:
        assert await _closed_by_peer(reader, 5.0)
    finally:
        writer.close()
    response = await client.execute("SET_CLIPBOARD", {"text": "still here"})
    assert response.success


async def test_connections_past_the_cap_are_closed_at_once(make_client: ServerFactory) -> None:
    client = await make_client(grpc_max_connections=4, grpc_handshake_timeout_s=30)
    opened = [await asyncio.open_connection("127.0.0.1", client.app.port) for _ in range(10)]
    try:
        closed = await asyncio.gather(*(_closed_by_peer(reader, 1.0) for reader, _ in opened))
    finally:
        for _, writer in opened:
            writer.close()
    assert sum(closed) == 6


async def test_an_idle_connection_is_let_go_and_the_client_reconnects(make_client: ServerFactory) -> None:
    client = await make_client(grpc_idle_timeout_s=0.2)
    assert (await client.execute("SET_CLIPBOARD", {"text": "1"})).success
    state = client.channel.get_state()
    assert state == grpc.ChannelConnectivity.READY
    # The server's GOAWAY sends the channel back to IDLE; the next call connects again.
    await asyncio.wait_for(client.channel.wait_for_state_change(state), 10)
    assert client.channel.get_state() == grpc.ChannelConnectivity.IDLE
    assert (await client.execute("SET_CLIPBOARD", {"text": "2"})).success


async def test_calls_past_the_call_limit_are_resource_exhausted(make_client: ServerFactory) -> None:
    client = await make_client(grpc_max_concurrent_calls=10)
    streams = [client.stub.Subscribe(pb.SubscribeRequest(), metadata=AUTH, timeout=30) for _ in range(10)]
    await asyncio.gather(*(s.initial_metadata() for s in streams))
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await client.execute("SET_CLIPBOARD", {"text": "one too many"})
    assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    for stream in streams:
        stream.cancel()


async def test_calls_past_a_connections_stream_limit_wait_their_turn(make_client: ServerFactory) -> None:
    """The client queues them; none is refused because the server counts a stream that has
    ended but is not freed yet."""
    client = await make_client(grpc_max_concurrent_streams=20)
    responses = await asyncio.gather(
        *(client.execute("SET_CLIPBOARD", {"text": str(i)}) for i in range(1000)), return_exceptions=True
    )
    failed = [r for r in responses if not isinstance(r, pb.ActionResponse) or not r.success]
    assert not failed, failed[:3]


FROZEN_CLIENT = """
import sys
import grpc
from phoneuse_runtime.rpc import protocol_pb2 as pb, protocol_pb2_grpc as pb_grpc
channel = grpc.insecure_channel(sys.argv[1])
stub = pb_grpc.AndroidRuntimeStub(channel)
stream = stub.Subscribe(pb.SubscribeRequest(subscriber_id="frozen"), metadata=[tuple(sys.argv[2:4])])
stream.initial_metadata()
print("live", flush=True)
sys.stdin.read()
"""


async def test_a_frozen_subscriber_is_let_go(make_client: ServerFactory) -> None:
    """A stopped app (Android freezes cached apps) answers no keepalive ping: its stream ends."""
    client = await make_client(grpc_keepalive_s=0.2, grpc_keepalive_timeout_s=0.3)
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        FROZEN_CLIENT,
        f"127.0.0.1:{client.app.port}",
        *AUTH[0],
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        assert await asyncio.wait_for(proc.stdout.readline(), 30) == b"live\n"
        assert client.app.runtime.bus.subscriber_count == 1
        proc.send_signal(signal.SIGSTOP)

        async def let_go() -> None:
            while client.app.runtime.bus.subscriber_count:
                await asyncio.sleep(0)

        await asyncio.wait_for(let_go(), 10)
    finally:
        proc.send_signal(signal.SIGCONT)
        proc.kill()
        await proc.wait()


def test_limits_become_grpc_core_options() -> None:
    limits = GrpcLimits.from_settings(
        Settings(
            grpc_max_receive_bytes=1000,
            grpc_max_concurrent_calls=5,
            grpc_max_concurrent_streams=10,
            grpc_max_pending_calls=20,
            grpc_max_connections=30,
            grpc_handshake_timeout_s=1.5,
            grpc_idle_timeout_s=40,
            grpc_keepalive_s=50,
            grpc_keepalive_timeout_s=6,
        ).grpc
    )
    expected = {
        "grpc.max_receive_message_length": 1000,
        "grpc.http2.bdp_probe": 0,
        "grpc.http.overload_protection": 0,
        "grpc.max_concurrent_streams": 10,
        "grpc.server.max_pending_requests": 20,
        "grpc.server.max_pending_requests_hard_limit": 20,
        "grpc.max_allowed_incoming_connections": 30,
        "grpc.server_handshake_timeout_ms": 1500,
        "grpc.max_connection_idle_ms": 40_000,
        "grpc.keepalive_time_ms": 50_000,
        "grpc.keepalive_timeout_ms": 6000,
        "grpc.http2.ping_timeout_ms": 6000,
        "grpc.http2.max_pings_without_data": 0,
    }
    assert dict(limits.options()).items() >= expected.items()


def test_defaults_fit_a_burst_on_one_connection() -> None:
    """Calls waiting for the application are never shed while one connection's streams fit."""
    defaults = Settings()
    assert defaults.grpc_max_concurrent_calls >= 2000
    assert defaults.grpc_max_concurrent_streams >= 2000
    assert defaults.grpc_max_pending_calls >= defaults.grpc_max_concurrent_streams


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("grpc_max_receive_bytes", "0"),
        ("grpc_max_concurrent_calls", "0"),
        ("grpc_max_concurrent_streams", "-1"),
        ("grpc_max_pending_calls", "0"),
        ("grpc_max_connections", "0"),
        ("grpc_handshake_timeout_s", "0"),
        ("grpc_idle_timeout_s", "-5"),
        ("grpc_keepalive_s", "0"),
        ("grpc_keepalive_timeout_s", "0"),
    ],
)
def test_limits_must_be_positive(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> None:
    monkeypatch.setenv(f"PHONEUSE_{name.upper()}", value)
    with pytest.raises(ConfigError, match=name):
        GrpcLimits.from_settings(load_settings({"data_dir": tmp_path}).grpc)


def test_limits_come_from_the_environment_and_toml(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "config.toml").write_text("grpc_max_connections = 64\ngrpc_idle_timeout_s = 90.5\n")
    monkeypatch.setenv("PHONEUSE_GRPC_MAX_RECEIVE_BYTES", "65536")
    settings = load_settings({"data_dir": tmp_path})
    assert (settings.grpc_max_connections, settings.grpc_idle_timeout_s) == (64, 90.5)
    assert settings.grpc_max_receive_bytes == 65536


def test_the_spec_documents_every_limit() -> None:
    spec = served_spec()
    names = [f.name for f in fields(Settings) if f.name.startswith("grpc_") and f.name != "grpc_listen"]
    assert len(names) == len(fields(GrpcLimits))
    for name in names:
        assert f"| `{name}` |" in spec


# A real `serve` under a phone-like limit on open files.

NOFILE = 256


@pytest.fixture
def small_serve(tmp_path: Path) -> Iterator[int]:
    """`phoneuse-runtime serve` with at most NOFILE open files and a 0.5 s handshake timeout."""
    with serve(tmp_path, env={"PHONEUSE_GRPC_HANDSHAKE_TIMEOUT_S": "0.5"}, open_files=NOFILE) as served:
        yield served.port


async def test_a_real_call_gets_through_past_more_idle_connections_than_open_files(
    small_serve: int,
) -> None:
    """More silent connections than the server may have open files: the phone's 1,124 of 1,024."""
    idle = []
    for _ in range(NOFILE + 100):
        sock = socket.socket()
        sock.setblocking(False)
        with contextlib.suppress(BlockingIOError):
            sock.connect(("127.0.0.1", small_serve))
        idle.append(sock)
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{small_serve}") as channel:
            stub = pb_grpc.AndroidRuntimeStub(channel)
            response = await stub.Execute(_clipboard(10), metadata=AUTH, timeout=15, wait_for_ready=True)
            assert response.success
    finally:
        for sock in idle:
            sock.close()
