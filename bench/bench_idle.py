"""What a phone left alone pays: device commands per hour while the runtime is idle, with its
default settings (the memory feeding itself, --poll-ms 1000) and nobody subscribed, on both
backends; and the memory's lag, from an SMS arriving on the phone to MEMORY finding it, when it
is asked (one MEMORY query right after the arrival) and when it is not (the store looked at
every 0.2 s without a query, so only the memory's own catch-ups count).

The runtime is built by the production factory in this process (no gateway), against the fake
phones of tests/fakes: the fake adbd behind the isolated real adb server (commands counted as
the streams the daemon opened), and the fake termux-* commands on PATH (counted as the runs they
log). Counts in a measured window are extrapolated to an hour.

    python bench/bench_idle.py [--seconds 30] [--catch-up-s 20] [--tree /work/main]

--tree runs another checkout's runtime (e.g. main's, for "before") against this tree's fakes.
--catch-up-s shortens the memory's cadence (memory_catch_up_s, 300 s by default) so that the
unasked lag is measured in a short run; the default's bound is printed beside it.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
TOKEN = "bench-idle-token"
AUTH = (("authorization", f"Bearer {TOKEN}"),)
WARMUP_S = 5.0  # the start-up sync (providers, the SIM's country) ends before the window opens
LAG_GIVE_UP_S = 60.0


def _settings(settings_cls: Any, catch_up_s: int | None, **values: Any) -> Any:
    """The defaults, but for the data dir, the device, no gateway and (when given) the cadence."""
    names = {f.name for f in dataclasses.fields(settings_cls)}
    if catch_up_s is not None and "memory_catch_up_s" in names:  # absent before issue 17
        values["memory_catch_up_s"] = catch_up_s
    return settings_cls(gateway=False, grpc_listen="127.0.0.1:0", **values)


async def _lag_asked(stub: Any, pb: Any, arrive: Any, word: str) -> float | None:
    arrive(f"the {word} arrived")
    started = time.monotonic()
    response = await stub.Query(
        pb.QueryRequest(query_type=pb.QueryType.MEMORY, filters={"q": word}), metadata=AUTH
    )
    return time.monotonic() - started if response.total_count else None


async def _lag_unasked(memory: Any, arrive: Any, word: str) -> float | None:
    from phoneuse_runtime.memory import Filters

    arrive(f"the {word} arrived")
    started = time.monotonic()
    while time.monotonic() - started < LAG_GIVE_UP_S:
        found = await memory.search(Filters(q=word), lambda node, _score: node)
        if len(found):
            return time.monotonic() - started
        await asyncio.sleep(0.2)  # the bench's look at the store
    return None


async def _measure(app: Any, count: Any, arrive: Any, seconds: float) -> dict[str, Any]:
    """The idle window (when `seconds` > 0) and the lag asked; else the lag not asked alone."""
    import grpc

    from phoneuse_runtime.rpc import protocol_pb2 as pb
    from phoneuse_runtime.rpc import protocol_pb2_grpc as pb_grpc

    await asyncio.sleep(WARMUP_S)  # the start-up sync
    if seconds <= 0:
        return {"unasked": await _lag_unasked(app.component("memory"), arrive, "marmalade")}
    before = count()
    started = time.monotonic()
    await asyncio.sleep(seconds)  # the measured idle window
    elapsed = time.monotonic() - started
    commands = count() - before
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{app.port}")
    stub = pb_grpc.AndroidRuntimeStub(channel)
    asked = await _lag_asked(stub, pb, arrive, "zeppelin")
    await channel.close()
    return {"commands": commands, "seconds": elapsed, "asked": asked}


async def run_adb(seconds: float, catch_up_s: int | None) -> dict[str, Any]:
    from _fake_adb import adb_app

    from phoneuse_runtime.config.settings import Settings

    def settings(**where: Any) -> Any:
        return _settings(Settings, catch_up_s, **where)

    async with adb_app("bench-idle", token=TOKEN, make_settings=settings) as rig:
        return await _measure(
            rig.app,
            lambda: len(rig.adbd.opened),
            lambda body: rig.phone.state.receive_sms("+14155550123", body),
            seconds,
        )


async def run_termux(seconds: float, catch_up_s: int | None) -> dict[str, Any]:
    import json

    from phoneuse_runtime.app import build_app, default_components
    from phoneuse_runtime.config.settings import Settings
    from phoneuse_runtime.device.backends import make_device
    from tests.fakes.termux.state import BIN, ENV, FakeTermux

    tmp = Path(tempfile.mkdtemp(prefix="bench-idle-termux-"))
    state = tmp / "termux.json"
    phone = FakeTermux(state)
    os.environ[ENV] = str(state)
    os.environ["PATH"] = f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"
    settings = _settings(Settings, catch_up_s, device="termux", self_adb="off", data_dir=tmp / "data")
    app = await build_app(
        settings,
        token=TOKEN,
        device=make_device(settings),
        components=default_components(settings, token=TOKEN),
    )
    try:
        return await _measure(
            app,
            lambda: len(json.loads(state.read_text(encoding="utf-8"))["runs"]),
            lambda body: phone.receive_sms("+14155550123", body),
            seconds,
        )
    finally:
        await app.stop(grace_s=0)


def _lag(value: float | None, missed: str) -> str:
    return missed if value is None else f"{value:.2f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--catch-up-s", type=int, default=20)
    parser.add_argument("--tree", type=Path, default=REPO, help="the checkout whose runtime runs")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))  # the fakes: this tree's
    sys.path.insert(0, str(args.tree.resolve()))  # the runtime: --tree's
    sys.path.insert(0, str(REPO / "bench"))
    from _common import machine, table

    import phoneuse_runtime

    rows = []
    for name, runner in (("adb", run_adb), ("termux", run_termux)):
        got = asyncio.run(runner(args.seconds, None))  # the defaults
        got.update(asyncio.run(runner(0, args.catch_up_s)))  # the cadence shortened
        per_hour = got["commands"] * 3600 / got["seconds"]
        rows.append(
            [
                name,
                str(got["commands"]),
                f"{got['seconds']:.0f}",
                f"{per_hour:.0f}",
                _lag(got["asked"], "not in the answer"),
                _lag(got["unasked"], "not found in 60 s"),
            ]
        )
    print(f"runtime from {Path(phoneuse_runtime.__file__).parent.parent}; {machine()}")
    print(
        "idle window: default settings, nobody subscribed; lag not asked: memory_catch_up_s "
        f"{args.catch_up_s} (its default, 300 s, bounds it at 300 s plus one read)"
    )
    print(
        table(
            ["backend", "commands", "window s", "commands/hour", "lag asked (MEMORY)", "lag not asked"],
            rows,
        )
    )


if __name__ == "__main__":
    main()
