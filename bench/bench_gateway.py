"""The Iris gateway: an agent's streamed answer fanned out to app devices, and how soon the app
sees the agent's work. Ours (`build_app` with gRPC and the gateway, sim phone) against a bare
grpc.aio Execute handler that hands each frame to `websockets.broadcast` (`_gateway_servers.py`).

Each server runs in its own process; the agent (a grpc.aio client) and the app devices
(websockets clients) run here.

The apps do not parse what they receive (a substring finds the frames waited for) and, unless
`--deflate`, do not negotiate compression: the servers' work is what is measured.

- stream: `--devices` (1 and 100) apps are connected (ours: each with its own paired token).
  The agent sends CHAT_STREAM op=start, then `--updates` op=update calls one after another (a
  streamed answer is sequential: each update carries the whole text so far, 40 characters more
  each time), then op=stop. Throughput is updates per second from the first update sent until
  every app has the `message.stop`. Ours may coalesce updates for an app that falls behind (it
  always gets the latest text before the stop); "delivered" is the share of updates each app saw.
- latency: one app; `--calls` Execute calls of SET_CLIPBOARD (bare: any action) one at a time,
  from sending the call to the app receiving its `tool.start`.

    python bench/bench_gateway.py [--devices 1 100] [--updates 500] [--calls 300] [--rounds 3] [--deflate]

Target: ours >= 0.7x bare throughput at each device count.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from _common import (
    AUTH,
    BENCH_DIR,
    EXECUTE,
    TOKEN,
    child_env,
    machine,
    percentile,
    ratio,
    stop_process,
    table,
)
from websockets.asyncio.client import ClientConnection, connect

from phoneuse_runtime.rpc import protocol_pb2 as pb

SERVERS = BENCH_DIR / "_gateway_servers.py"
TARGET = 0.7
WAIT_S = 120.0


class Server:
    """A `_gateway_servers.py` process; ours on a data dir with `devices` paired tokens."""

    def __init__(self, kind: str, devices: int) -> None:
        self.kind = kind
        self.devices = devices
        self.tokens: list[str] = []
        self.grpc_port = self.ws_port = 0
        self._tmp = tempfile.TemporaryDirectory(prefix="phoneuse-bench-gw-")
        self._proc: subprocess.Popen[str] | None = None

    def __enter__(self) -> Server:
        argv = [sys.executable, str(SERVERS), self.kind, "--token", TOKEN]
        if self.kind == "ours":
            data_dir = Path(self._tmp.name) / "data"
            self.tokens = _pair(data_dir, self.devices)
            argv += ["--data-dir", str(data_dir)]
        else:
            self.tokens = ["bare"] * self.devices
        self._proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, env=child_env())
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline()
        if not line.startswith("PORTS "):
            stop_process(self._proc)
            raise RuntimeError(f"the {self.kind} server did not start (exit {self._proc.poll()})")
        self.grpc_port, self.ws_port = (int(x) for x in line.split()[1:3])
        return self

    def __exit__(self, *exc: object) -> None:
        if self._proc is not None:
            stop_process(self._proc)
        self._tmp.cleanup()


def _pair(data_dir: Path, devices: int) -> list[str]:
    from phoneuse_runtime.gateway.db import connect as db_connect
    from phoneuse_runtime.gateway.db import db_path
    from phoneuse_runtime.gateway.outbox import create_tables
    from phoneuse_runtime.gateway.pairing import PairingStore

    conn = db_connect(db_path(data_dir))
    try:
        PairingStore.create_tables(conn)
        create_tables(conn)
        store = PairingStore(conn)
        return [store.issue(f"bench {i}", permanent=True).token for i in range(devices)]
    finally:
        conn.close()


@dataclass
class App:
    """One app device: reads every frame, parses it, and notes what the benchmark waits for."""

    ws: ClientConnection
    updates: int = 0
    stopped: asyncio.Event = field(default_factory=asyncio.Event)
    tool_starts: asyncio.Queue[float] = field(default_factory=asyncio.Queue)

    async def read(self) -> None:
        # A substring, not a parse: the apps here must cost little, so that the servers'
        # work is what is measured (both encode frames compactly: `"type":"..."`).
        async for message in self.ws:
            if isinstance(message, bytes):
                continue
            if '"type":"message.update"' in message:
                self.updates += 1
            elif '"type":"message.stop"' in message:
                self.stopped.set()
            elif '"type":"tool.start"' in message:
                self.tool_starts.put_nowait(time.perf_counter())


async def _open_apps(
    server: Server, count: int, *, deflate: bool
) -> tuple[list[App], list[asyncio.Task[None]]]:
    apps: list[App] = []
    compression = "deflate" if deflate else None
    for i, token in enumerate(server.tokens[:count]):
        url = f"ws://127.0.0.1:{server.ws_port}/ws"
        ws = await connect(url, max_size=None, max_queue=None, compression=compression)
        hello = {"token": token, "device_id": f"bench-{i}", "device_name": f"bench {i}"}
        await ws.send(json.dumps({"v": 1, "id": 1, "type": "hello", "payload": hello}))
        ack = json.loads(await asyncio.wait_for(ws.recv(), WAIT_S))
        assert ack["type"] == "hello.ack", ack
        apps.append(App(ws))
    return apps, [asyncio.ensure_future(a.read()) for a in apps]


async def _close(apps: list[App], readers: list[asyncio.Task[None]]) -> None:
    for app in apps:
        await app.ws.close()
    for reader in readers:
        reader.cancel()
    await asyncio.gather(*readers, return_exceptions=True)


async def _execute(execute: Any, action: str, params: dict[str, str]) -> dict[str, Any]:
    request = pb.ActionRequest(
        action_type=action, params=params, request_id=uuid.uuid4().hex, timeout_ms=30_000
    )
    response: pb.ActionResponse = await execute(request, metadata=AUTH, timeout=WAIT_S)
    assert response.success, response.error
    result: dict[str, Any] = json.loads(response.result_json)
    return result


@dataclass(frozen=True)
class StreamRun:
    server: str
    devices: int
    updates: int
    seconds: float
    delivered: float  # the share of updates the apps saw, on average

    @property
    def per_second(self) -> float:
        return self.updates / self.seconds


async def stream(kind: str, devices: int, updates: int, *, deflate: bool) -> StreamRun:
    with Server(kind, devices) as server:
        apps, readers = await _open_apps(server, devices, deflate=deflate)
        async with grpc.aio.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
            execute = channel.unary_unary(
                EXECUTE,
                request_serializer=pb.ActionRequest.SerializeToString,
                response_deserializer=pb.ActionResponse.FromString,
            )
            for _ in range(20):  # warm up the paths (and the server's caches)
                await _execute(execute, "SET_CLIPBOARD" if kind == "ours" else "WARM", {"text": "x"})
            started = await _execute(execute, "CHAT_STREAM", {"op": "start"})
            message_id = started["message_id"]
            text = ""
            began = time.perf_counter()
            for _ in range(updates):
                text += "The quick brown fox jumps over the dog. "
                await _execute(
                    execute, "CHAT_STREAM", {"op": "update", "message_id": message_id, "text": text}
                )
            await _execute(execute, "CHAT_STREAM", {"op": "stop", "message_id": message_id, "text": text})
            await asyncio.wait_for(asyncio.gather(*(a.stopped.wait() for a in apps)), WAIT_S)
            seconds = time.perf_counter() - began
        delivered = sum(a.updates for a in apps) / (updates * len(apps))
        await _close(apps, readers)
    return StreamRun(kind, devices, updates, seconds, delivered)


async def latency(kind: str, calls: int, *, deflate: bool) -> list[float]:
    with Server(kind, 1) as server:
        apps, readers = await _open_apps(server, 1, deflate=deflate)
        app = apps[0]
        async with grpc.aio.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
            execute = channel.unary_unary(
                EXECUTE,
                request_serializer=pb.ActionRequest.SerializeToString,
                response_deserializer=pb.ActionResponse.FromString,
            )
            times: list[float] = []
            for i in range(calls + 20):
                sent = time.perf_counter()
                await _execute(execute, "SET_CLIPBOARD", {"text": str(i)})
                arrived = await asyncio.wait_for(app.tool_starts.get(), WAIT_S)
                if i >= 20:  # the first calls warm up
                    times.append((arrived - sent) * 1000)
        await _close(apps, readers)
    return sorted(times)


async def main_async(args: argparse.Namespace) -> None:
    compression = "permessage-deflate" if args.deflate else "no compression"
    print(
        f"bench_gateway: {machine()}; {args.updates} updates, {args.calls} calls, "
        f"{args.rounds} rounds, {compression}"
    )
    rows: list[list[str]] = []
    for devices in args.devices:
        runs: dict[str, list[StreamRun]] = {"bare": [], "ours": []}
        for _ in range(args.rounds):
            for kind in ("bare", "ours"):
                runs[kind].append(await stream(kind, devices, args.updates, deflate=args.deflate))
        median = {k: sorted(v, key=lambda r: r.per_second)[len(v) // 2] for k, v in runs.items()}
        for kind in ("bare", "ours"):
            run = median[kind]
            rows.append(
                [kind, str(devices), f"{run.per_second:,.0f}", f"{run.seconds:.2f}", f"{run.delivered:.0%}"]
            )
        share = median["ours"].per_second / median["bare"].per_second
        verdict = "meets" if share >= TARGET else "MISSES"
        rows.append(
            [
                "ours/bare",
                str(devices),
                ratio(median["ours"].per_second, median["bare"].per_second),
                "",
                f"{verdict} >= {TARGET}x",
            ]
        )
    print("\nmessage.update streaming from gRPC CHAT_STREAM (sequential calls), median round")
    print(table(["server", "devices", "updates/s", "seconds", "delivered"], rows, left=2))
    lat = {kind: await latency(kind, args.calls, deflate=args.deflate) for kind in ("bare", "ours")}
    lat_rows = [
        [kind, f"{percentile(v, 50):.2f}", f"{percentile(v, 90):.2f}", f"{percentile(v, 99):.2f}"]
        for kind, v in lat.items()
    ]
    lat_rows.append(
        [
            "ours/bare",
            ratio(percentile(lat["ours"], 50), percentile(lat["bare"], 50)),
            ratio(percentile(lat["ours"], 90), percentile(lat["bare"], 90)),
            ratio(percentile(lat["ours"], 99), percentile(lat["bare"], 99)),
        ]
    )
    print("\nlatency from a gRPC Execute (sent) to the app's tool.start (received), ms")
    print(table(["server", "p50", "p90", "p99"], lat_rows))


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--devices", type=int, nargs="+", default=[1, 100])
    parser.add_argument("--updates", type=int, default=500)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--deflate",
        action="store_true",
        help="apps negotiate permessage-deflate (both servers then compress)",
    )
    asyncio.run(main_async(parser.parse_args()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
