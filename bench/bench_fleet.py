"""The fleet's door: what nginx adds to an Execute, against a direct call to the same runtime in
the same run.

Starts `phoneuse-runtime fleet --sim 1 --no-nats --no-adb` (one member `serve`, nginx as the
door), makes a fleet token, and sends SET_CLIPBOARD {"text": "x"} with a fresh request_id, the
same token and the same metadata (`x-phoneuse-device: sim-1`) both ways: to the member's own
port (direct) and to the door. Batches alternate between the two so that drift on the machine
falls on both alike. Goal: the door at most 1.3x the direct call's latency (p50 and mean).

    python bench/bench_fleet.py [--requests 2000] [--batch 200] [--concurrency 1 16]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import grpc
from _common import EXECUTE, REPO, child_env, machine, percentile, ratio, table

from phoneuse_runtime.rpc import protocol_pb2 as pb

GOAL = 1.3
EXE = [sys.executable, "-m", "phoneuse_runtime"]


def start_fleet(data_dir: Path) -> tuple[subprocess.Popen[bytes], dict[str, object]]:
    proc = subprocess.Popen(
        [
            *EXE,
            "fleet",
            "--data-dir",
            str(data_dir),
            "--sim",
            "1",
            "--no-nats",
            "--no-adb",
            "--listen",
            "127.0.0.1:0",
        ],
        stderr=subprocess.DEVNULL,
        env=child_env(),
        cwd=REPO,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            record = json.loads((data_dir / "fleet.json").read_text())
            if record["devices"] and record["devices"][0]["address"] and door_answers(record["door"]):
                return proc, record
        except (OSError, ValueError, KeyError, IndexError):
            pass
        if proc.poll() is not None:
            raise SystemExit(f"the fleet exited with {proc.returncode}")
        time.sleep(0.05)
    raise SystemExit("the fleet did not start within 120 s")


def door_answers(door: str) -> bool:
    """Whether the door routes to sim-1 yet (it is reloaded once the member has its port)."""
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    with grpc.insecure_channel(door) as channel:
        try:
            health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(), metadata=(("x-phoneuse-device", "sim-1"),), timeout=5
            )
        except grpc.RpcError:
            return False
    return True


async def batch(address: str, token: str, *, requests: int, concurrency: int, out: list[float]) -> int:
    metadata = (("authorization", f"Bearer {token}"), ("x-phoneuse-device", "sim-1"))
    failures = 0
    async with grpc.aio.insecure_channel(address) as channel:
        call = channel.unary_unary(
            EXECUTE,
            request_serializer=pb.ActionRequest.SerializeToString,
            response_deserializer=pb.ActionResponse.FromString,
        )
        queue = iter(range(requests))

        async def worker() -> None:
            nonlocal failures
            for _ in queue:
                request = pb.ActionRequest(
                    action_type="SET_CLIPBOARD",
                    params={"text": "x"},
                    request_id=uuid.uuid4().hex,
                    timeout_ms=10_000,
                )
                started = time.perf_counter()
                response = await call(request, metadata=metadata, timeout=30)
                out.append((time.perf_counter() - started) * 1000)
                failures += not response.success

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return failures


async def measure(
    direct: str, door: str, token: str, args: argparse.Namespace, concurrency: int
) -> list[str]:
    times: dict[str, list[float]] = {"direct": [], "door": []}
    failures = 0
    for address in (direct, door):  # warm-up, both ways
        for attempt in range(50):
            try:
                await batch(address, token, requests=args.batch, concurrency=concurrency, out=[])
                break
            except grpc.RpcError as exc:
                # nginx's old workers may take a new connection for a few ms after a reload (the
                # member's port came after the door's first configuration): they say UNAVAILABLE.
                if exc.code() != grpc.StatusCode.UNAVAILABLE or attempt == 49:
                    raise
    done = 0
    elapsed = {"direct": 0.0, "door": 0.0}
    while done < args.requests:
        for name, address in (("direct", direct), ("door", door)):
            started = time.perf_counter()
            failures += await batch(
                address, token, requests=args.batch, concurrency=concurrency, out=times[name]
            )
            elapsed[name] += time.perf_counter() - started
        done += args.batch
    if failures:
        raise SystemExit(f"{failures} calls failed")
    direct_ms, door_ms = sorted(times["direct"]), sorted(times["door"])
    mean = {k: sum(v) / len(v) for k, v in times.items()}
    p50 = ratio(percentile(door_ms, 50), percentile(direct_ms, 50))
    goal = "meets" if percentile(door_ms, 50) <= GOAL * percentile(direct_ms, 50) else "MISSES"
    return [
        str(concurrency),
        f"{percentile(direct_ms, 50):.3f}",
        f"{percentile(door_ms, 50):.3f}",
        p50,
        f"{percentile(direct_ms, 99):.3f}",
        f"{percentile(door_ms, 99):.3f}",
        ratio(percentile(door_ms, 99), percentile(direct_ms, 99)),
        ratio(mean["door"], mean["direct"]),
        f"{done / elapsed['direct']:.0f}",
        f"{done / elapsed['door']:.0f}",
        f"{goal} ({GOAL}x)",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=2000, help="calls each way, per concurrency")
    parser.add_argument("--batch", type=int, default=200)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 16])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-fleet-") as tmp:
        data_dir = Path(tmp) / "fleet"
        data_dir.mkdir()
        made = subprocess.run(
            [*EXE, "fleet", "--data-dir", str(data_dir), "token", "new", "bench", "--json"],
            capture_output=True,
            text=True,
            env=child_env(),
            check=True,
        )
        token = json.loads(made.stdout)["token"]
        proc, record = start_fleet(data_dir)
        try:
            devices = record["devices"]
            assert isinstance(devices, list)
            direct, door = str(devices[0]["address"]), str(record["door"])
            rows = [asyncio.run(measure(direct, door, token, args, c)) for c in args.concurrency]
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=60)
    print(
        f"Execute SET_CLIPBOARD through the fleet's door (nginx) vs direct to the same runtime; {machine()}"
    )
    print(f"{args.requests} calls each way per row, alternating batches of {args.batch}; latencies in ms")
    headers = [
        "conc",
        "direct p50",
        "door p50",
        "door/direct p50",
        "direct p99",
        "door p99",
        "door/direct p99",
        "door/direct mean",
        "direct rps",
        "door rps",
        "goal p50",
    ]
    print(table(headers, rows))


if __name__ == "__main__":
    main()
