"""DEVICE_STATUS and the installed apps on adb, in streams and time: one shell stream against the
same reads one stream each, and the app list against reading each package's `dumpsys package`
(the only place its versionName and resource label are). Against the fake phone behind the
isolated real adb server (bench/_fake_adb.py), so the times are a local link's round trips, not
a phone's: read the ratios.

    python bench/bench_status.py [--rounds 20]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
TOKEN = "bench-status-token"


async def _timed(rounds: int, work: Callable[[], Awaitable[Any]]) -> float:
    took = []
    for _ in range(rounds):
        start = time.perf_counter()
        await work()
        took.append(time.perf_counter() - start)
    return statistics.median(took) * 1000


async def run(rounds: int) -> list[list[str]]:
    from _fake_adb import adb_app

    from phoneuse_runtime.device.adb import apps, status
    from phoneuse_runtime.device.adb.device import AdbDevice

    rows: list[list[str]] = []
    async with adb_app("bench-status", token=TOKEN, gateway=False, memory_ingest=False) as rig:
        device = rig.app.runtime.device
        assert isinstance(device, AdbDevice)
        opened = rig.adbd.opened

        async def one_script() -> None:
            await device.status()

        async def stream_each() -> None:
            for _, command in status.PARTS:
                await device.shell(command, timeout_s=10)

        async def app_list() -> None:
            device._apps = None  # the cache would answer
            await device.installed_apps()

        async def list_each() -> None:
            for _, command in apps.LIST_PARTS:
                await device.shell(command, timeout_s=10)

        async def dumpsys_each() -> None:
            for package in rig.phone.state.packages:
                await device.shell(f"dumpsys package {package}", timeout_s=10)

        for label, work in (
            ("DEVICE_STATUS, one script", one_script),
            (f"the same {len(status.PARTS)} reads, a stream each", stream_each),
            (f"installed apps ({len(apps.LIST_PARTS)} reads in one script)", app_list),
            (f"the same {len(apps.LIST_PARTS)} reads, a stream each (before)", list_each),
            (f"dumpsys package for each of {len(rig.phone.state.packages)} packages", dumpsys_each),
        ):
            before = len(opened)
            await work()
            streams = len(opened) - before
            rows.append([label, str(streams), f"{await _timed(rounds, work):.1f}"])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    sys.path.insert(0, str(REPO / "bench"))
    from _common import machine, table

    rows = asyncio.run(run(args.rounds))
    print(machine())
    print(table(["read (adb, fake phone, local link)", "streams", "median ms"], rows))
    one, each = float(rows[0][2]), float(rows[1][2])
    lst, dumps = float(rows[2][2]), float(rows[4][2])
    print(f"one script / a stream each: {one / each:.2f}; app list / dumpsys each: {lst / dumps:.2f}")


if __name__ == "__main__":
    main()
