"""Idle resident memory: a bare grpc.aio server process vs `phoneuse-runtime serve --device sim`.

Both start as subprocesses, answer 50 Execute calls (ours: SET_CLIPBOARD with the token), then
sit idle; their RSS is then sampled with psutil. `--breakdown` also shows what importing each
layer costs, in fresh interpreters, to tell where the difference goes.

    python bench/bench_memory.py [--calls 50] [--idle 2] [--breakdown]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass

import grpc
import psutil
from _common import AUTH, EXECUTE, SERVERS, ServeProcess, ServerProcess, machine, ratio, table

from phoneuse_runtime.rpc import protocol_pb2 as pb

MIB = 1024 * 1024
RSS_TARGET = 1.4  # the seams issue (#5): idle RSS stays <= 1.4x bare

# Fresh interpreters import one more layer each; the RSS steps show what each layer costs.
LAYERS: tuple[tuple[str, str], ...] = (
    ("python -c pass", "pass"),
    ("+ asyncio, argparse", "import asyncio, argparse, json, tempfile"),
    ("+ grpc", "import grpc, grpc.aio"),
    ("+ protocol_pb2 (= bare server's imports)", "import phoneuse_runtime.rpc.protocol_pb2"),
    ("+ grpc_health, grpc_reflection", "import grpc_health.v1.health, grpc_reflection.v1alpha.reflection"),
    ("+ pydantic", "import pydantic"),
    ("+ phoneuse_runtime.app", "import phoneuse_runtime.app"),
    ("+ SimDevice", "import phoneuse_runtime.device.sim.device"),
    (
        "+ build_registry() (actions/, queries/)",
        "from phoneuse_runtime.kernel.registry import build_registry; build_registry()",
    ),
)


@dataclass(frozen=True)
class Sample:
    server: str
    started_rss: int
    idle_rss: int
    idle_uss: int


def memory(pid: int) -> tuple[int, int]:
    info = psutil.Process(pid).memory_full_info()
    return int(info.rss), int(info.uss)


async def warm_up(port: int, calls: int, *, auth: bool) -> None:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        execute = channel.unary_unary(
            EXECUTE,
            request_serializer=pb.ActionRequest.SerializeToString,
            response_deserializer=pb.ActionResponse.FromString,
        )
        for _ in range(calls):
            request = pb.ActionRequest(
                action_type="SET_CLIPBOARD",
                params={"text": "x"},
                request_id=uuid.uuid4().hex,
                timeout_ms=10_000,
            )
            response: pb.ActionResponse = await execute(request, metadata=AUTH if auth else None, timeout=30)
            if not response.success:
                raise RuntimeError(f"warm-up call failed: {response.error}")


def settle(pid: int, idle_s: float) -> tuple[int, int]:
    """Waits `idle_s`, then returns the median RSS and USS of five samples over a second."""
    time.sleep(idle_s)
    samples = []
    for _ in range(5):
        samples.append(memory(pid))
        time.sleep(0.25)
    return int(statistics.median(s[0] for s in samples)), int(statistics.median(s[1] for s in samples))


def measure_bare(calls: int, idle_s: float) -> Sample:
    with ServerProcess("bare-echo") as server:
        started, _ = memory(server.pid)
        asyncio.run(warm_up(server.port, calls, auth=False))
        rss, uss = settle(server.pid, idle_s)
    return Sample("bare", started, rss, uss)


# Ours as `serve` runs it, then without the parts later issues added to every serve: what each costs.
VARIANTS: tuple[tuple[str, dict[str, str]], ...] = (
    ("ours", {}),
    ("ours, no gateway", {"PHONEUSE_GATEWAY": "false"}),
    ("ours, no gateway, no memory ingest", {"PHONEUSE_GATEWAY": "false", "PHONEUSE_MEMORY_INGEST": "false"}),
)


def measure_ours(label: str, env: dict[str, str], calls: int, idle_s: float) -> Sample:
    with ServeProcess(env=env) as server:
        started, _ = memory(server.pid)
        asyncio.run(warm_up(server.port, calls, auth=True))
        rss, uss = settle(server.pid, idle_s)
    return Sample(label, started, rss, uss)


def breakdown() -> None:
    print("\nRSS of fresh interpreters importing one more layer each (MiB, Linux /proc):")
    rows: list[list[str]] = []
    code = ""
    previous = 0.0
    for label, statement in LAYERS:
        code = f"{code}; {statement}" if code else statement
        # VmRSS now, not ru_maxrss: Linux carries the peak across fork and exec from this process.
        probe = f"{code}; print(open('/proc/self/status').read().split('VmRSS:')[1].split()[0])"
        out = subprocess.run(
            [sys.executable, "-c", probe],
            capture_output=True,
            text=True,
            check=True,
            cwd=SERVERS.parent.parent,
        )
        mib = int(out.stdout.split()[-1]) / 1024  # VmRSS is in KiB
        rows.append([label, f"{mib:.1f}", f"{mib - previous:+.1f}" if previous else ""])
        previous = mib
    print(table(["imports", "RSS", "step"], rows))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=50, help="warm-up Execute calls before idling")
    parser.add_argument("--idle", type=float, default=2.0, help="seconds idle before sampling")
    parser.add_argument("--breakdown", action="store_true", help="also show the RSS each import layer adds")
    args = parser.parse_args()

    bare = measure_bare(args.calls, args.idle)
    variants = [measure_ours(label, env, args.calls, args.idle) for label, env in VARIANTS]
    ours = variants[0]
    rows = [
        [s.server, f"{s.started_rss / MIB:.1f}", f"{s.idle_rss / MIB:.1f}", f"{s.idle_uss / MIB:.1f}"]
        for s in (bare, *variants)
    ]
    for variant in variants:
        rows.append(
            [
                f"{variant.server} / bare",
                ratio(variant.started_rss, bare.started_rss),
                ratio(variant.idle_rss, bare.idle_rss),
                ratio(variant.idle_uss, bare.idle_uss),
            ]
        )
    print(f"Idle memory after {args.calls} Execute calls and {args.idle:.1f} s idle; {machine()}")
    print("bare = bench/_servers.py bare-echo; ours = phoneuse-runtime serve --device sim (token auth)")
    print()
    print(table(["server", "RSS at start MiB", "idle RSS MiB", "idle USS MiB"], rows))
    share = ours.idle_rss / bare.idle_rss
    verdict = "meets" if share <= RSS_TARGET else "MISSES"
    print(f"\nidle RSS {share:.2f}x of bare {verdict} the <= {RSS_TARGET}x target")
    if args.breakdown:
        breakdown()


if __name__ == "__main__":
    main()
