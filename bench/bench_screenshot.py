"""SCREENSHOT on a large panel (1440x3200) on adb: what the agent is answered, on uiautomator2's path
and on the screencap fallback, and what a secure window's picture costs. Run it against this
tree, and with --before against another checkout's runtime (this tree's fakes), to print the
ratios after/before from one run:

    python bench/bench_screenshot.py [--before /work/main] [--calls 10]

The runtime is built in-process by the production factory against the fake adbd behind the
isolated real adb server (bench/_fake_adb.py). The fake phone draws flat boxes and text, which
compress far better than a real screen's photos and gradients: the bytes are the fake's, the
ratios are what to read.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
TOKEN = "bench-screenshot-token"
AUTH = (("authorization", f"Bearer {TOKEN}"),)
PANEL = (1440, 3200)


async def run(calls: int) -> dict[str, dict[str, Any]]:
    import grpc
    from _fake_adb import adb_app

    from phoneuse_runtime.rpc import protocol_pb2 as pb
    from phoneuse_runtime.rpc import protocol_pb2_grpc as pb_grpc
    from tests.fakes import seed
    from tests.fakes.phone import FakePhone

    phone = FakePhone()
    phone.state.screen_size = PANEL
    out: dict[str, dict[str, Any]] = {}
    async with adb_app(
        "bench-screenshot", token=TOKEN, phone=phone, gateway=False, memory_ingest=False
    ) as rig:
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{rig.app.port}")
        stub = pb_grpc.AndroidRuntimeStub(channel)

        async def shot() -> tuple[dict[str, Any], int, float]:
            request = pb.ActionRequest(
                action_type="SCREENSHOT", request_id=uuid.uuid4().hex, timeout_ms=30_000
            )
            started = time.perf_counter()
            response = await stub.Execute(request, metadata=AUTH)
            elapsed = (time.perf_counter() - started) * 1000
            assert response.success, response.error
            return json.loads(response.result_json), response.ByteSize(), elapsed

        cases = (("uiautomator2", False), ("screencap", False), ("uiautomator2 secure", True))
        for name, secure in cases:
            rig.phone.state.faults.u2_screenshot_null = name == "screencap"
            rig.phone.state.secure_packages = {seed.LAUNCHER} if secure else set()
            await shot()  # warm up
            times: list[float] = []
            for _ in range(calls):
                result, wire, ms = await shot()
                times.append(ms)
            out[name] = {
                "size": f"{result['width']}x{result['height']}",
                "format": result["format"],
                "bytes": result["size_bytes"],
                "wire": wire,
                "scale": result.get("scale", "-"),
                "secure": result.get("secure", "-"),
                "ms": statistics.median(times),
            }
        await channel.close()
    return out


def _use_tree(tree: Path) -> None:
    """Imports the runtime from `tree`, with its actions/ and queries/ as phoneuse_runtime's
    subpackages (setup.py maps them so; the editable install maps this checkout's)."""
    import importlib.util

    sys.path.insert(0, str(tree))
    import phoneuse_runtime  # noqa: F401

    for sub in ("actions", "queries"):
        spec = importlib.util.spec_from_file_location(
            f"phoneuse_runtime.{sub}",
            tree / sub / "__init__.py",
            submodule_search_locations=[str(tree / sub)],
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)


def _child(tree: Path, calls: int) -> dict[str, dict[str, Any]]:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")  # nothing written into the other tree
    argv = [sys.executable, __file__, "--tree", str(tree), "--calls", str(calls), "--json"]
    done = subprocess.run(argv, env=env, check=True, capture_output=True, text=True)
    result: dict[str, dict[str, Any]] = json.loads(done.stdout.splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, default=REPO, help="the checkout whose runtime runs")
    parser.add_argument("--before", type=Path, help="another checkout to compare with (its runtime)")
    parser.add_argument("--calls", type=int, default=10, help="measured SCREENSHOT calls per case")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    _use_tree(args.tree.resolve())  # the runtime: --tree's, imported before...
    sys.path.insert(0, str(REPO))  # ...this tree goes first, for the fakes (tests/)
    sys.path.insert(0, str(REPO / "bench"))
    if args.json:
        print(json.dumps(asyncio.run(run(args.calls))))
        return
    from _common import machine, table

    trees = [("after", args.tree.resolve())]
    if args.before:
        trees.insert(0, ("before", args.before.resolve()))
    results = {label: _child(tree, args.calls) for label, tree in trees}
    print(f"{PANEL[0]}x{PANEL[1]} fake phone on adb; {args.calls} calls per case; {machine()}")
    headers = [
        "case",
        "tree",
        "image",
        "format",
        "image bytes",
        "response bytes",
        "scale",
        "secure",
        "ms p50",
    ]
    rows: list[list[str]] = []
    for case in results["after"]:
        for label, _ in trees:
            r = results[label][case]
            rows.append(
                [case, label, r["size"], r["format"], str(r["bytes"]), str(r["wire"]), str(r["scale"]),
                 str(r["secure"]), f"{r['ms']:.0f}"]
            )  # fmt: skip
        if args.before:
            b, a = results["before"][case], results["after"][case]
            rows.append(
                [case, "after/before", "", "", f"{a['bytes'] / b['bytes']:.3f}",
                 f"{a['wire'] / b['wire']:.3f}", "", "", f"{a['ms'] / b['ms']:.2f}"]
            )  # fmt: skip
    print(table(headers, rows, left=4))


if __name__ == "__main__":
    main()
