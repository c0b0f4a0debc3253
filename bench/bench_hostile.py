"""What a hostile or buggy app on the phone can make the server spend: attacks over loopback.

Each attack gets a fresh `phoneuse-runtime serve` (device sim, `--token`), and reports what its
calls got back, the real calls' outcomes where there are any, the server's RSS before the attack,
at its peak (sampled every 20 ms) and after it (median of five samples over a second, once it is
over), and the lines the server wrote to its log from the attack's start until the refusal log's
interval (10 s) has passed.

- unauth-4mb: 300 Executes of 4 MB (4,000,000 bytes of text) without a token, --concurrency at once;
- unauth-1mb: the same just under the receive limit (1 MiB less 1 KiB);
- log-flood: 15,000 small Executes without a token, 500 at once;
- mixed: 5,000 Executes without a token and 50 real ones shuffled among them, all at once,
  the attacker and the agent on connections of their own;
- garbage: 100 calls of bytes that decode to no message, without a token, to each method and to
  health's Check and Watch and reflection's ServerReflectionInfo;
- burst: 2,000 Subscribe calls at once on one channel: how many got their headers;
- idle: 1,000 TCP connections that send nothing; a real call made while they are held (with and
  without wait_for_ready), and how long the server keeps them. `--open-files 1024` runs the
  server under that RLIMIT_NOFILE and opens 100 more connections than that.

The Iris gateway's door (issue 16), on a serve with one paired app token:

- hello-lockout: hostile apps say hello with unknown tokens without pause (4 at once, from
  127.0.0.1 and from other 127/8 addresses, re-arming the failed-hello budget all along) while
  the paired app reconnects `--reconnects` times: its hellos' outcomes, p50 and p99 (connect,
  upgrade, hello to hello.ack), against the same reconnects on the idle gateway first;
- pending-flood: the real app's `message.send` p50 on the idle gateway; then 58 hellos with 1 MB
  names, `--pending` (10,000) pending-request attempts (fresh token and device_id each, 8 at once,
  64-character names), and the real app's `message.send` p50 again; the store's size, and
  `pair list` (the CLI, as a subprocess) time and output size. `--auth-failures 1000000` lifts
  the guess budget, so that every attempt reaches the store (as a patient attacker's would).

    python bench/bench_hostile.py [--only burst idle] [--open-files 1024]
    python bench/bench_hostile.py --only hello-lockout pending-flood
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import re
import resource
import secrets
import select
import socket
import statistics
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import psutil
from _common import AUTH, EXECUTE, SERVICE, SUBSCRIBE, ServeProcess, child_env, machine, percentile
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from phoneuse_runtime.config.settings import Settings
from phoneuse_runtime.gateway.db import connect as db_connect
from phoneuse_runtime.gateway.db import db_path
from phoneuse_runtime.gateway.pairing import PairingStore
from phoneuse_runtime.rpc import protocol_pb2 as pb
from phoneuse_runtime.rpc.auth import REFUSAL_LOG_INTERVAL_S

MIB = 1024 * 1024
BAD = (("authorization", "Bearer not-the-token"),)
GARBAGE = b"\xff\xff\xff\xff\x0f"  # field number 0: no message decodes from it
OPEN_TO_ALL = (  # no token needed
    "/grpc.health.v1.Health/Check",
    "/grpc.health.v1.Health/Watch",
    "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
)
# Connections of their own: grpc shares one between channels to the same address otherwise.
OWN_CONNECTION = (("grpc.use_local_subchannel_pool", 1),)


@dataclass
class Outcome:
    answers: Counter[str] = field(default_factory=Counter)  # the attacker's calls, by status
    real: Counter[str] = field(default_factory=Counter)  # the real calls, by status
    notes: list[str] = field(default_factory=list)


def status(exc: grpc.aio.AioRpcError) -> str:
    return str(exc.code().name)


class Peak:
    """Samples a process's RSS every 20 ms on a thread, keeping the highest."""

    def __init__(self, pid: int) -> None:
        self._proc = psutil.Process(pid)
        self.rss = self._proc.memory_info().rss
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.02):
            with contextlib.suppress(psutil.Error):
                self.rss = max(self.rss, self._proc.memory_info().rss)

    def __enter__(self) -> Peak:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def settled_rss(pid: int) -> int:
    samples = []
    for _ in range(5):
        time.sleep(0.25)
        samples.append(psutil.Process(pid).memory_info().rss)
    return int(statistics.median(samples))


def request(size: int = 0) -> pb.ActionRequest:
    text = "x" * size
    return pb.ActionRequest(
        action_type="SET_CLIPBOARD", params={"text": text}, request_id=uuid.uuid4().hex, timeout_ms=10_000
    )


async def real_call(channel: grpc.aio.Channel, *, wait_for_ready: bool = False, timeout: float = 30) -> str:
    call = channel.unary_unary(
        EXECUTE,
        request_serializer=pb.ActionRequest.SerializeToString,
        response_deserializer=pb.ActionResponse.FromString,
    )
    try:
        response = await call(request(1), metadata=AUTH, timeout=timeout, wait_for_ready=wait_for_ready)
    except grpc.aio.AioRpcError as exc:
        return status(exc)
    return "OK" if response.success else response.error.split(":", 1)[0]


async def raw_calls(
    channel: grpc.aio.Channel, payload: bytes, count: int, concurrency: int, metadata: object = BAD
) -> Counter[str]:
    """`count` Execute calls of `payload` as it is, at most `concurrency` at once."""
    call = channel.unary_unary(EXECUTE)
    answers: Counter[str] = Counter()
    gate = asyncio.Semaphore(concurrency)

    async def one() -> None:
        async with gate:
            try:
                await call(payload, metadata=metadata, timeout=120)
                answers["OK"] += 1
            except grpc.aio.AioRpcError as exc:
                answers[status(exc)] += 1

    await asyncio.gather(*(one() for _ in range(count)))
    return answers


async def unauth_large(port: int, size: int, count: int, concurrency: int) -> Outcome:
    payload = request(size).SerializeToString()
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        answers = await raw_calls(channel, payload, count, concurrency)
        real = Counter([await real_call(channel)])
    return Outcome(answers, real, [f"{count} x {len(payload) / MIB:.2f} MiB, {concurrency} at once"])


async def log_flood(port: int, count: int) -> Outcome:
    started = time.monotonic()
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        answers = await raw_calls(channel, request().SerializeToString(), count, 500)
    return Outcome(answers, notes=[f"{count} calls in {time.monotonic() - started:.1f} s"])


async def mixed(port: int, bad: int, real: int) -> Outcome:
    target = f"127.0.0.1:{port}"
    async with (
        grpc.aio.insecure_channel(target, options=OWN_CONNECTION) as attacker,
        grpc.aio.insecure_channel(target, options=OWN_CONNECTION) as agent,
    ):
        call = attacker.unary_unary(EXECUTE)
        payload = request().SerializeToString()

        async def bad_call() -> tuple[str, str]:
            try:
                await call(payload, metadata=BAD, timeout=120)
            except grpc.aio.AioRpcError as exc:
                return "bad", status(exc)
            return "bad", "OK"

        async def real_one() -> tuple[str, str]:
            return "real", await real_call(agent, timeout=120)

        calls = [bad_call() for _ in range(bad)] + [real_one() for _ in range(real)]
        random.Random(6).shuffle(calls)
        started = time.monotonic()
        results = await asyncio.gather(*calls)
    outcome = Outcome(notes=[f"{bad} bad + {real} real in {time.monotonic() - started:.1f} s"])
    for kind, answer in results:
        (outcome.answers if kind == "bad" else outcome.real)[answer] += 1
    return outcome


async def garbage(port: int, count: int) -> Outcome:
    outcome = Outcome()
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        for path in (*(f"/{SERVICE}/{m}" for m in ("Execute", "Query", "Subscribe")), *OPEN_TO_ALL):
            call = channel.unary_stream(path)
            method = path.rsplit("/", 1)[1]
            for _ in range(count):
                try:
                    async for _ in call(GARBAGE, metadata=BAD, timeout=10):
                        pass
                    outcome.answers[f"{method} OK"] += 1
                except grpc.aio.AioRpcError as exc:
                    outcome.answers[f"{method} {status(exc)}"] += 1
    return outcome


async def burst(port: int, count: int) -> Outcome:
    outcome = Outcome()
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        subscribe = channel.unary_stream(
            SUBSCRIBE,
            request_serializer=pb.SubscribeRequest.SerializeToString,
            response_deserializer=pb.Event.FromString,
        )
        requests = [pb.SubscribeRequest(subscriber_id=f"b{i}") for i in range(count)]
        streams = [subscribe(r, metadata=AUTH, timeout=60) for r in requests]
        started = time.monotonic()
        headers = await asyncio.gather(*(s.initial_metadata() for s in streams), return_exceptions=True)
        took = time.monotonic() - started
        for stream, got in zip(streams, headers, strict=True):
            if isinstance(got, BaseException):
                outcome.answers[f"no headers: {type(got).__name__}"] += 1
            elif stream.done():
                outcome.answers[f"ended: {(await stream.code()).name}"] += 1
            elif dict(got).get("x-subscriber-id"):
                outcome.answers["live"] += 1
            else:
                outcome.answers["headers without x-subscriber-id"] += 1
        outcome.notes.append(f"{count} streams, all headers in {took:.2f} s")
        for stream in streams:
            stream.cancel()
    return outcome


def raise_own_open_files(needed: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < needed:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, needed), hard))


async def idle(port: int, count: int, wait_s: float) -> Outcome:
    raise_own_open_files(count + 256)
    socks = []
    for _ in range(count):
        sock = socket.socket()
        sock.setblocking(False)
        with contextlib.suppress(BlockingIOError):
            sock.connect(("127.0.0.1", port))
        socks.append(sock)
    opened = time.monotonic()
    watching = asyncio.ensure_future(asyncio.to_thread(closed_by_server, socks, opened + wait_s))
    outcome = Outcome()
    for wait_for_ready in (False, True):
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}", options=OWN_CONNECTION) as channel:
            started = time.monotonic()
            answer = await real_call(channel, wait_for_ready=wait_for_ready, timeout=10)
            label = "with wait_for_ready" if wait_for_ready else "plain"
            outcome.real[f"{label}: {answer} in {time.monotonic() - started:.1f} s"] += 1
    closed = await watching
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}", options=OWN_CONNECTION) as channel:
        started = time.monotonic()
        answer = await real_call(channel, timeout=10)
        outcome.real[f"once they are closed: {answer} in {time.monotonic() - started:.1f} s"] += 1
    times = sorted(t - opened for t in closed.values())
    if times:
        outcome.notes.append(
            f"server closed {len(times)} of {count}: the first after {times[0]:.1f} s, "
            f"the last after {times[-1]:.1f} s"
        )
    if len(times) < count:
        outcome.notes.append(f"{count - len(times)} still open after {wait_s:.0f} s")
    outcome.answers["closed by the server"] = len(times)
    for sock in socks:
        sock.close()
    return outcome


def closed_by_server(socks: list[socket.socket], deadline: float) -> dict[int, float]:
    """When the server closed each connection (EOF or reset), until `deadline`."""
    poller = select.epoll()
    live = {s.fileno(): s for s in socks}
    for fd in live:
        poller.register(fd, select.EPOLLIN | select.EPOLLRDHUP)
    closed: dict[int, float] = {}
    try:
        while live and time.monotonic() < deadline:
            for fd, _ in poller.poll(0.2):
                try:
                    data = live[fd].recv(1 << 16)
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError:
                    data = b""
                if not data:  # what the server sent before (its settings) is read and dropped
                    closed[fd] = time.monotonic()
                    poller.unregister(fd)
                    del live[fd]
    finally:
        poller.close()
    return closed


def log_lines(text: str) -> tuple[int, int, int]:
    return text.count("\n"), len(text.encode()), text.count("Traceback")


Attack = Callable[[int], Coroutine[Any, Any, Outcome]]


def run(name: str, attack: Attack, *, open_files: int | None = None) -> list[str]:
    with ServeProcess(open_files=open_files) as server:
        asyncio.run(warm_up(server.port))
        before = settled_rss(server.pid)
        log_before = server.log_path.read_text()
        started = time.monotonic()
        with Peak(server.pid) as peak:
            outcome = asyncio.run(attack(server.port))
        after = settled_rss(server.pid)
        # The refusal log's last count comes at the end of its interval: wait for it.
        time.sleep(max(0.0, started + REFUSAL_LOG_INTERVAL_S + 0.5 - time.monotonic()))
        written = server.log_path.read_text()[len(log_before) :]
    lines, size, tracebacks = log_lines(written)
    print(f"\n== {name}: {'; '.join(outcome.notes)}")
    print(f"   calls got:      {dict(outcome.answers)}")
    if outcome.real:
        print(f"   real calls got: {dict(outcome.real)}")
    print(
        f"   server RSS: {before / MIB:.1f} MiB before, {peak.rss / MIB:.1f} at peak, {after / MIB:.1f} after"
    )
    print(f"   log: {lines} lines, {size} bytes, {tracebacks} tracebacks")
    for line in written.splitlines()[:3]:
        print(f"     | {line[:150]}")
    return [
        name,
        f"{before / MIB:.0f}/{peak.rss / MIB:.0f}/{after / MIB:.0f}",
        str(lines),
        ", ".join(f"{k} {v}" for k, v in outcome.real.items()) or "-",
    ]


async def warm_up(port: int) -> None:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        for _ in range(20):
            await real_call(channel)


# The Iris gateway's door.

GATEWAY_LINE = re.compile(r"serving the Iris gateway on ws://[^:]+:(\d+)/ws")


class GatewayServe:
    """`serve` with the gateway on port 0 and one paired app token (issued before it starts)."""

    def __init__(self, env: dict[str, str]) -> None:
        self.token = ""
        self.data_dir = Path()
        self.serve = ServeProcess(
            prepare=self._prepare, env={"PHONEUSE_GATEWAY_LISTEN": "127.0.0.1:0", **env}
        )
        self.url = ""

    def _prepare(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        conn = db_connect(db_path(data_dir))
        try:
            PairingStore.create_tables(conn)
            self.token = PairingStore(conn).issue("real app", permanent=True).token
        finally:
            conn.close()

    def __enter__(self) -> GatewayServe:
        self.serve.__enter__()
        found = GATEWAY_LINE.search(self.serve.log_path.read_text())
        assert found, self.serve.log_path.read_text()
        self.url = f"ws://127.0.0.1:{found.group(1)}/ws"
        return self

    def __exit__(self, *exc: object) -> None:
        self.serve.__exit__(None, None, None)


async def ws_hello(url: str, payload: dict[str, Any], **kw: Any) -> tuple[str, Any]:
    """One connection's hello: ("ack", ws) or (error code or close code, None)."""
    try:
        ws = await ws_connect(url, max_size=None, open_timeout=30, **kw)
    except InvalidStatus as exc:
        return f"HTTP {exc.response.status_code}", None
    except OSError as exc:
        return type(exc).__name__, None
    try:
        await ws.send(json.dumps({"v": 1, "id": 1, "type": "hello", "payload": payload}))
        answer = json.loads(await asyncio.wait_for(ws.recv(), 30))
    except ConnectionClosed as exc:
        return f"close {exc.rcvd.code if exc.rcvd else 1006}", None
    if answer["type"] == "hello.ack":
        return "ack", ws
    await ws.close()
    message = str(answer["payload"]["message"])
    kind = "code" if "pairing code:" in message else answer["payload"]["code"]
    return str(kind), None


async def reconnects(url: str, token: str, count: int, answers: Counter[str]) -> list[float]:
    """The paired app's hellos (connect to hello.ack), ms; their outcomes in `answers`."""
    times = []
    for _ in range(count):
        started = time.perf_counter()
        kind, ws = await ws_hello(url, {"token": token, "device_id": "real-app"})
        took = (time.perf_counter() - started) * 1000
        answers[kind] += 1
        if ws is not None:
            times.append(took)
            await ws.close()
    return sorted(times)


def ms(times: list[float]) -> str:
    return f"p50 {percentile(times, 50):.1f} ms, p99 {percentile(times, 99):.1f} ms ({len(times)} ok)"


async def hello_lockout(server: GatewayServe, count: int) -> Outcome:
    outcome = Outcome()
    idle_answers: Counter[str] = Counter()
    idle = await reconnects(server.url, server.token, count, idle_answers)
    stop = asyncio.Event()

    async def hostile(source: str) -> None:
        while not stop.is_set():
            kind, ws = await ws_hello(server.url, {"token": secrets.token_urlsafe(8)}, local_addr=(source, 0))
            outcome.answers[kind] += 1
            if ws is not None:
                await ws.close()

    attackers = [asyncio.ensure_future(hostile(f"127.0.0.{n}")) for n in (1, 1, 2, 3)]
    await asyncio.sleep(1.0)  # the budget is spent before the app comes back
    busy = await reconnects(server.url, server.token, count, outcome.real)
    stop.set()
    await asyncio.gather(*attackers)
    outcome.notes.append(f"idle gateway: {ms(idle)}")
    outcome.notes.append(f"under the hostile hellos: {ms(busy)}; goal p99 < 100 ms")
    return outcome


async def sends(url: str, token: str, count: int) -> list[float]:
    """`message.send` round trips of the paired app, ms."""
    kind, ws = await ws_hello(url, {"token": token, "device_id": "real-app"})
    assert ws is not None, kind
    times = []
    for i in range(count):
        started = time.perf_counter()
        await ws.send(
            json.dumps({"v": 1, "id": 10 + i, "type": "message.send", "payload": {"text": f"hi {i}"}})
        )
        while True:
            frame = json.loads(await asyncio.wait_for(ws.recv(), 30))
            if frame.get("id") == 10 + i:
                break
        times.append((time.perf_counter() - started) * 1000)
        await asyncio.sleep(0.01)  # the agent's answers to each message come and go meanwhile
    await ws.close()
    return sorted(times)


def store_bytes(data_dir: Path) -> int:
    return sum(p.stat().st_size for p in data_dir.glob("gateway.sqlite3*"))


async def pending_flood(server: GatewayServe, attempts: int) -> Outcome:
    outcome = Outcome()
    before = await sends(server.url, server.token, 200)
    size_before = store_bytes(server.data_dir)
    names: Counter[str] = Counter()
    for _ in range(58):
        payload = {
            "token": secrets.token_urlsafe(32),
            "device_id": uuid.uuid4().hex,
            "device_name": "n" * MIB,
        }
        kind, _ = await ws_hello(server.url, payload)
        names[kind] += 1
    gate = asyncio.Semaphore(8)
    started = time.monotonic()

    async def one() -> None:
        async with gate:
            payload = {
                "token": secrets.token_urlsafe(32),
                "device_id": uuid.uuid4().hex,
                "device_name": "n" * 64,
            }
            kind, ws = await ws_hello(server.url, payload)
            outcome.answers[kind] += 1
            if ws is not None:
                await ws.close()

    await asyncio.gather(*(one() for _ in range(attempts)))
    took = time.monotonic() - started
    after = await sends(server.url, server.token, 200)
    started = time.monotonic()
    listed = subprocess.run(
        [sys.executable, "-m", "phoneuse_runtime", "pair", "list", "--data-dir", str(server.data_dir)],
        capture_output=True,
        env=child_env(),
        check=False,
    )
    list_s = time.monotonic() - started
    ratio = percentile(after, 50) / percentile(before, 50)
    outcome.notes += [
        f"58 hellos with 1 MB names got {dict(names)}",
        f"{attempts} pending-request attempts in {took:.1f} s",
        f"store {size_before / MIB:.2f} MiB before, {store_bytes(server.data_dir) / MIB:.2f} MiB after",
        f"pair list: exit {listed.returncode}, {list_s:.2f} s, {len(listed.stdout):,} bytes, "
        f"{listed.stdout.count(b'pending')} pending rows",
        f"message.send idle {ms(before)}; after the flood {ms(after)}; p50 ratio {ratio:.2f} (goal <= 2)",
    ]
    return outcome


GatewayAttack = Callable[[GatewayServe], Coroutine[Any, Any, Outcome]]


def run_gateway(name: str, attack: GatewayAttack, env: dict[str, str]) -> list[str]:
    with GatewayServe(env) as server:
        before = settled_rss(server.serve.pid)
        with Peak(server.serve.pid) as peak:
            outcome = asyncio.run(attack(server))
        after = settled_rss(server.serve.pid)
    print(f"\n== {name}:")
    for note in outcome.notes:
        print(f"   {note}")
    print(f"   hostile hellos got: {dict(outcome.answers)}")
    if outcome.real:
        print(f"   the paired app's hellos got: {dict(outcome.real)}")
    print(
        f"   server RSS: {before / MIB:.1f} MiB before, {peak.rss / MIB:.1f} at peak, {after / MIB:.1f} after"
    )
    return [name, f"{before / MIB:.0f}/{peak.rss / MIB:.0f}/{after / MIB:.0f}", "-", outcome.notes[-1]]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    names = ["unauth-4mb", "unauth-1mb", "log-flood", "mixed", "garbage", "burst", "idle"]
    door = ["hello-lockout", "pending-flood"]
    parser.add_argument("--only", nargs="+", choices=names + door, default=names + door)
    parser.add_argument("--reconnects", type=int, default=200, help="hello-lockout: the paired app's")
    parser.add_argument("--pending", type=int, default=10_000, help="pending-flood: request attempts")
    parser.add_argument(
        "--auth-failures",
        type=int,
        help="the gateway's guess budget (default: the setting's); a large one "
        "lets every pending-flood attempt reach the store, as a patient attacker's would",
    )
    parser.add_argument("--concurrency", type=int, default=300, help="large unauthenticated calls at once")
    parser.add_argument("--idle-connections", type=int, default=1000)
    parser.add_argument("--idle-wait", type=float, default=90.0, help="how long to watch idle connections")
    parser.add_argument(
        "--open-files", type=int, help="run the server under this RLIMIT_NOFILE (idle: 100 more connections)"
    )
    args = parser.parse_args()
    limit = Settings().grpc_max_receive_bytes
    attacks: dict[str, Attack] = {
        "unauth-4mb": lambda port: unauth_large(port, 4_000_000, 300, args.concurrency),
        "unauth-1mb": lambda port: unauth_large(port, limit - 1024, 300, args.concurrency),
        "log-flood": lambda port: log_flood(port, 15_000),
        "mixed": lambda port: mixed(port, 5000, 50),
        "garbage": lambda port: garbage(port, 100),
        "burst": lambda port: burst(port, 2000),
    }
    idle_count = args.idle_connections if args.open_files is None else args.open_files + 100
    attacks["idle"] = lambda port: idle(port, idle_count, args.idle_wait)
    print(f"Hostile callers over loopback; {machine()}")
    door_attacks: dict[str, GatewayAttack] = {
        "hello-lockout": lambda server: hello_lockout(server, args.reconnects),
        "pending-flood": lambda server: pending_flood(server, args.pending),
    }
    rows = []
    for name in args.only:
        if name in door_attacks:
            env = {"PHONEUSE_GATEWAY_AUTH_FAILURES": str(args.auth_failures)} if args.auth_failures else {}
            rows.append(run_gateway(name, door_attacks[name], env))
            continue
        rows.append(run(name, attacks[name], open_files=args.open_files if name == "idle" else None))
    print("\nattack: RSS MiB before/peak/after, log lines, real calls")
    for row in rows:
        print("  " + " | ".join(row))


if __name__ == "__main__":
    main()
