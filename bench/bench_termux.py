"""What polling costs on `--device termux`: `phoneuse-runtime serve --device termux` (self-adb off)
with the fake Termux:API commands of tests/fakes/termux on PATH, idle with nobody subscribed, then
with one subscriber to the polled events (MESSAGE_RECEIVED, NOTIFICATION_POSTED,
CALL_STATE_CHANGED) at --poll-ms, then with that subscriber gone (polling must stop).

For each phase it prints the server process's CPU time, its reaped children's (the termux-*
commands it ran), RSS at the end, and how many commands ran; then the ratio subscribed/idle. The
fake commands are Python scripts (~40 ms of CPU each); the real ones are a shell script and a
small C binary, with the work done in the Termux:API app, which this cannot measure.

    python bench/bench_termux.py [--seconds 60] [--poll-ms 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import grpc
import psutil
from _common import AUTH, REPO, SUBSCRIBE, ServeProcess, machine, ratio, table

from phoneuse_runtime.rpc import protocol_pb2 as pb
from tests.fakes.termux.state import BIN, ENV, FakeTermux

MIB = 1024 * 1024
POLLED = ["MESSAGE_RECEIVED", "NOTIFICATION_POSTED", "CALL_STATE_CHANGED"]


@dataclass(frozen=True)
class Phase:
    name: str
    seconds: float
    cpu_s: float
    children_cpu_s: float
    rss: int
    runs: int


def _runs(state: Path) -> int:
    return len(json.loads(state.read_text(encoding="utf-8"))["runs"])


async def measure(name: str, pid: int, state: Path, seconds: float) -> Phase:
    proc = psutil.Process(pid)
    before, runs = proc.cpu_times(), _runs(state)
    started = time.monotonic()
    await asyncio.sleep(seconds)  # the measured window
    after = proc.cpu_times()
    return Phase(
        name,
        time.monotonic() - started,
        after.user + after.system - before.user - before.system,
        after.children_user + after.children_system - before.children_user - before.children_system,
        int(proc.memory_info().rss),
        _runs(state) - runs,
    )


async def run(seconds: float, poll_ms: int) -> list[Phase]:
    with tempfile.TemporaryDirectory(prefix="phoneuse-termux-bench-") as tmp:
        state = Path(tmp) / "termux.json"
        FakeTermux(state)
        env = {
            "PHONEUSE_DEVICE": "termux",
            "PHONEUSE_SELF_ADB": "off",
            "PHONEUSE_POLL_MS": str(poll_ms),
            ENV: str(state),
            "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
            "PYTHONPATH": str(REPO),
        }
        with ServeProcess(env=env) as server:
            await asyncio.sleep(3)  # start-up settles (getprop, the first log lines)
            phases = [await measure("nobody subscribed", server.pid, state, seconds)]
            async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as channel:
                subscribe = channel.unary_stream(
                    SUBSCRIBE,
                    request_serializer=pb.SubscribeRequest.SerializeToString,
                    response_deserializer=pb.Event.FromString,
                )
                stream = subscribe(
                    pb.SubscribeRequest(event_types=POLLED, subscriber_id="bench"), metadata=AUTH
                )
                await stream.initial_metadata()
                phases.append(await measure("one subscriber, polling", server.pid, state, seconds))
                stream.cancel()
            await asyncio.sleep(poll_ms / 1000 * 3)  # the last poll under way ends
            phases.append(await measure("subscriber gone", server.pid, state, seconds / 3))
    return phases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--poll-ms", type=int, default=1000)
    args = parser.parse_args()
    phases = asyncio.run(run(args.seconds, args.poll_ms))
    print(f"serve --device termux, fake Termux:API, --poll-ms {args.poll_ms}; {machine()}")
    rows = [
        [
            p.name,
            f"{p.seconds:.0f}",
            f"{p.cpu_s:.2f} ({p.cpu_s / p.seconds * 100:.2f} %)",
            f"{max(p.children_cpu_s, 0.0):.2f}",
            f"{p.rss / MIB:.1f}",
            str(p.runs),
        ]
        for p in phases
    ]
    print(table(["phase", "s", "server CPU s (%)", "commands' CPU s", "RSS MiB", "commands run"], rows))
    idle, polling = phases[0], phases[1]
    print(
        f"subscribed/idle: server CPU {ratio(polling.cpu_s, max(idle.cpu_s, 1e-9))}, "
        f"RSS {ratio(polling.rss, idle.rss)}; commands run after the subscriber left: {phases[2].runs}"
    )


if __name__ == "__main__":
    main()
