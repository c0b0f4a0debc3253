"""PULL_FILE and PUSH_FILE on adb (issue 27): a file moved whole by name (adb's sync, streamed into
DATA_DIR/files) against the same file in base64 chunks through the call (dd at an offset over
exec:, or sync and cat for a push), at each chunk size. Prints each way's time and its ratio to
the whole-file way, from one run:

    python bench/bench_files.py [--mib 16]

The runtime is built in-process by the production factory against the fake adbd behind the
isolated real adb server (bench/_fake_adb.py): the fake phone answers from memory, so the
figures are the runtime's and adb's own costs, and the ratios are what to read.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import sys
import time
import uuid
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
TOKEN = "bench-files-token"
AUTH = (("authorization", f"Bearer {TOKEN}"),)
SHARED = "/storage/emulated/0"


async def run(mib: int) -> list[tuple[str, float]]:
    import grpc
    from _fake_adb import adb_app

    from phoneuse_runtime.rpc import protocol_pb2 as pb
    from phoneuse_runtime.rpc import protocol_pb2_grpc as pb_grpc
    from tests.fakes.phone import FakePhone

    phone = FakePhone()
    data = os.urandom(mib * 1024 * 1024)
    phone.state.files.write(f"{SHARED}/Movies/big.mp4", data)
    out: list[tuple[str, float]] = []
    async with adb_app("bench-files", token=TOKEN, phone=phone, gateway=False, memory_ingest=False) as rig:
        channel = grpc.aio.insecure_channel(
            f"127.0.0.1:{rig.app.port}", options=[("grpc.max_receive_message_length", 8 << 20)]
        )
        stub = pb_grpc.AndroidRuntimeStub(channel)

        async def call(action: str, params: dict[str, str]) -> dict[str, Any]:
            request = pb.ActionRequest(
                action_type=action, params=params, request_id=uuid.uuid4().hex, timeout_ms=600_000
            )
            response = await stub.Execute(request, metadata=AUTH)
            assert response.success, response.error
            result: dict[str, Any] = json.loads(response.result_json)
            return result

        started = time.perf_counter()
        whole = await call("PULL_FILE", {"path": "/sdcard/Movies/big.mp4", "name": "big.mp4"})
        out.append(("pull whole by name (sync)", time.perf_counter() - started))
        assert whole["verified"]
        for chunk in (256 * 1024, 1024 * 1024, 2 * 1024 * 1024):
            started, offset, got = time.perf_counter(), 0, bytearray()
            while True:
                r = await call(
                    "PULL_FILE",
                    {"path": "/sdcard/Movies/big.mp4", "offset": str(offset), "max_bytes": str(chunk)},
                )
                got += base64.b64decode(r["data_base64"])
                offset = r["next_offset"]
                if r["eof"]:
                    break
            out.append((f"pull in {chunk // 1024} KiB chunks (dd)", time.perf_counter() - started))
            assert bytes(got) == data
        started = time.perf_counter()
        pushed = await call("PUSH_FILE", {"path": "/sdcard/Movies/copy.mp4", "name": "big.mp4"})
        out.append(("push whole by name (sync)", time.perf_counter() - started))
        assert pushed["verified"]
        chunk = 768 * 1024
        started = time.perf_counter()
        for offset in range(0, len(data), chunk):
            part = base64.b64encode(data[offset : offset + chunk]).decode()
            r = await call(
                "PUSH_FILE",
                {
                    "path": "/sdcard/Movies/copy2.mp4",
                    "data_base64": part,
                    "offset": str(offset),
                    "size": str(len(data)),
                },
            )
        out.append(("push in 768 KiB chunks (sync + cat)", time.perf_counter() - started))
        assert r["verified"]
        await channel.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=16, help="the file's size in MiB")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    sys.path.insert(0, str(REPO / "bench"))
    from _common import machine

    results = asyncio.run(run(args.mib))
    print(f"a {args.mib} MiB file on the fake phone over adb; {machine()}")
    base = {"pull": results[0][1], "push": next(t for name, t in results if name.startswith("push"))}
    for name, seconds in results:
        ratio = seconds / base[name.split()[0]]
        print(f"  {name:40} {seconds * 1000:8.0f} ms  {args.mib / seconds:7.1f} MiB/s  x{ratio:.2f}")


if __name__ == "__main__":
    main()
