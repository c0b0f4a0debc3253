"""The adb backend's per-action cost: the runtime (gRPC Execute on `--device adb:SERIAL`) against
the bare adbutils/uiautomator2 calls that do the same thing, on the same fake phone, in one run.

Everything is real but the phone: the isolated real adb server, adbutils, uiautomator2's client
(for the bare side), and the runtime's production factory and gRPC server; the phone is
tests/fakes (the fake adbd and fake phone). Device round trips are counted on the phone's side:
streams the daemon opened (shell, sync, tcp:9008) and uiautomator2 JSON-RPC calls.

    python bench/bench_adb.py [--repeat 20]

The bare side of each row:
- TAP point: d.click(x, y)
- TAP selector: d(resourceId=...).click()  (waitForExists + objInfo + click)
- TYPE_TEXT: d(resourceId=field).click(); d.clear_text(); d.send_keys(text); d.dump_hierarchy()
  (focus, empty, type, read back: what TYPE_TEXT does)
- DUMP_UI: d.dump_hierarchy()
- SEND_MESSAGE: am start SENDTO + d(description="Send SMS").click() + a sent-box content query
- APP_STATE: adbutils' app_current() (dumpsys window windows)

The runtime's connections to the adb server set TCP_NODELAY (connection.py); adbutils' do not,
and on a request written in two parts Nagle then waits for the peer's delayed ACK (~40 ms a
round trip on Linux). So the bare side is measured twice: as shipped, and with TCP_NODELAY set
on its connections too; the target (<= 1.2x) is judged against the latter.

The UI actions run with `settle_ms=0`: the bare side does not look at the screen after it acts,
and settling's looks (issue 17) are the agent's saving, measured by bench_tasks.py.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from statistics import median
from typing import Any

import grpc

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from _common import machine, ratio, table  # noqa: E402
from _fake_adb import adb_app  # noqa: E402

from phoneuse_runtime.rpc import protocol_pb2 as pb  # noqa: E402
from phoneuse_runtime.rpc import protocol_pb2_grpc as pb_grpc  # noqa: E402
from tests.fakes.adb_server import AdbServer, BackgroundAdbd  # noqa: E402
from tests.fakes.phone import FakePhone  # noqa: E402

TOKEN = "bench-adb-token"
UNSETTLED = {"settle_ms": "0"}  # the same device work as the bare side (see the docstring)
AUTH = (("authorization", f"Bearer {TOKEN}"),)
TARGET = 1.2
# A launcher element: the system UI's (the status bar) are the owner's controls, never tapped.
WORKSPACE = "com.google.android.apps.nexuslauncher:id/workspace"
KEEP_FIELD = "com.google.android.keep:id/edit_note_text"


class _NoDelay:
    """Whether the bare side's adb connections set TCP_NODELAY too (the runtime's always do):
    the third column, so the ratio shows what is the runtime's design and what is that option."""

    on = False


def _patch_adbutils() -> None:
    import socket

    import adbutils

    original = adbutils.AdbConnection._create_socket

    def create_socket(self: Any) -> Any:
        sock = original(self)
        if _NoDelay.on:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock

    adbutils.AdbConnection._create_socket = create_socket


@dataclass
class Sample:
    ms: float
    streams: int
    rpcs: int


@dataclass
class Row:
    name: str
    ours: list[Sample]
    bare: list[Sample]
    bare_nodelay: list[Sample]


class Bench:
    def __init__(self, phone: FakePhone, adbd: BackgroundAdbd) -> None:
        self.phone = phone
        self.adbd = adbd

    def counts(self) -> tuple[int, int]:
        return len(self.adbd.opened), len(self.phone.state.log.rpc)

    async def measure(self, op: Callable[[], Awaitable[Any]], reset: Callable[[], Awaitable[Any]]) -> Sample:
        await reset()
        streams, rpcs = self.counts()
        started = time.perf_counter()
        await op()
        elapsed = (time.perf_counter() - started) * 1000
        after_streams, after_rpcs = self.counts()
        return Sample(elapsed, after_streams - streams, after_rpcs - rpcs)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    _patch_adbutils()
    async with adb_app("bench-adb", token=TOKEN) as rig:
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{rig.app.port}")
        stub = pb_grpc.AndroidRuntimeStub(channel)
        rows = await run(Bench(rig.phone, rig.adbd), stub, rig.server, rig.adbd.serial, args.repeat)
        await channel.close()
    report(rows, args.repeat)


async def run(bench: Bench, stub: Any, server: AdbServer, serial: str, repeat: int) -> list[Row]:
    import uiautomator2

    dev = server.client().device(serial)
    d = await asyncio.to_thread(uiautomator2.connect, dev)  # the server the runtime started answers

    async def execute(action: str, params: dict[str, str] | None = None) -> None:
        response = await stub.Execute(
            pb.ActionRequest(
                action_type=action, params=params or {}, request_id=uuid.uuid4().hex, timeout_ms=30_000
            ),
            metadata=AUTH,
        )
        if not response.success:
            raise RuntimeError(f"{action}: {response.error}")

    async def query_app_state() -> None:
        await stub.Query(pb.QueryRequest(query_type=pb.QueryType.APP_STATE), metadata=AUTH)

    def bare(fn: Callable[[], Any]) -> Callable[[], Awaitable[Any]]:
        return lambda: asyncio.to_thread(fn)

    async def home() -> None:
        await asyncio.to_thread(dev.shell, "input keyevent HOME")

    async def keep() -> None:
        await asyncio.to_thread(
            dev.shell, "monkey -p com.google.android.keep -c android.intent.category.LAUNCHER 1"
        )

    async def nothing() -> None:
        return None

    def bare_type() -> None:
        d(resourceId=KEEP_FIELD).click()
        d.clear_text()
        d.send_keys("héllo wörld 👋")
        d.dump_hierarchy()

    def bare_send() -> None:
        dev.shell(["am", "start", "-a", "android.intent.action.SENDTO", "-d", "smsto:+15551234567",
                   "--es", "sms_body", "bench"])  # fmt: skip
        d(description="Send SMS").click(timeout=5)
        dev.shell(["content", "query", "--uri", "content://sms", "--where", "type=2"])

    cases: list[
        tuple[str, Callable[[], Awaitable[Any]], Callable[[], Awaitable[Any]], Callable[[], Awaitable[Any]]]
    ]
    cases = [
        (
            "TAP point",
            lambda: execute("TAP", {"x": "650", "y": "20", **UNSETTLED}),
            bare(lambda: d.click(650, 20)),
            nothing,
        ),
        (
            "TAP selector",
            lambda: execute("TAP", {"resource_id": WORKSPACE, **UNSETTLED}),
            bare(lambda: d(resourceId=WORKSPACE).click()),
            nothing,
        ),
        (
            "TYPE_TEXT",
            lambda: execute("TYPE_TEXT", {"text": "héllo wörld 👋", "resource_id": KEEP_FIELD, **UNSETTLED}),
            bare(bare_type),
            keep,
        ),
        ("DUMP_UI", lambda: execute("DUMP_UI"), bare(d.dump_hierarchy), nothing),
        (
            "SEND_MESSAGE",
            lambda: execute("SEND_MESSAGE", {"to": "+15551234567", "body": "bench"}),
            bare(bare_send),
            home,
        ),
        ("APP_STATE", query_app_state, bare(dev.app_current), nothing),
    ]
    rows = []
    for name, ours, theirs, reset in cases:
        row = Row(name, [], [], [])
        await bench.measure(ours, reset)  # warm-up: caches (app list, launcher) and connections
        await bench.measure(theirs, reset)
        for _ in range(repeat):  # alternated, so drift hits all alike
            row.ours.append(await bench.measure(ours, reset))
            row.bare.append(await bench.measure(theirs, reset))
            _NoDelay.on = True
            try:
                row.bare_nodelay.append(await bench.measure(theirs, reset))
            finally:
                _NoDelay.on = False
        rows.append(row)
    return rows


def report(rows: list[Row], repeat: int) -> None:
    print(f"bench_adb: runtime (gRPC Execute, --device adb) vs bare adbutils/uiautomator2; {machine()}")
    print(
        f"median of {repeat} each; round trips = adb streams the phone opened / uiautomator2 JSON-RPC calls\n"
    )
    body = []
    for row in rows:
        ours_ms = median(s.ms for s in row.ours)
        bare_ms = median(s.ms for s in row.bare)
        nodelay_ms = median(s.ms for s in row.bare_nodelay)
        ours_rt = median(s.streams for s in row.ours), median(s.rpcs for s in row.ours)
        bare_rt = median(s.streams for s in row.bare), median(s.rpcs for s in row.bare)
        body.append(
            [
                row.name,
                f"{ours_ms:.1f}",
                f"{bare_ms:.1f}",
                ratio(ours_ms, bare_ms),
                f"{nodelay_ms:.1f}",
                ratio(ours_ms, nodelay_ms),
                "yes" if ours_ms <= TARGET * nodelay_ms else "no",
                f"{ours_rt[0]:g} / {ours_rt[1]:g}",
                f"{bare_rt[0]:g} / {bare_rt[1]:g}",
            ]
        )
    headers = [
        "action",
        "ours ms",
        "bare ms",
        "ours/bare",
        "bare+nodelay ms",
        "ours/that",
        f"<= {TARGET}x",
        "ours streams/rpc",
        "bare streams/rpc",
    ]
    print(table(headers, body))


if __name__ == "__main__":
    asyncio.run(main())
