"""A mixed agent workload on the fake phone behind the real adb server, for at least 10,000
actions, while faults are injected on a schedule: the uiautomator2 server killed, the adb
connection dropped, an "isn't responding" dialog shown, a secure (FLAG_SECURE) window shown.

The agent does what an agent does: it reads the screen (DUMP_UI), taps icons by text and at the
coordinates it read, swipes, takes screenshots and goes home. It reacts as the answers tell it
to: STALE_SCREEN or a DEVICE_UNAVAILABLE, read the screen again; a dialog on the screen, tap its
Wait. Reported: success per action type, every failure by code, the restarts and their times,
the secure screenshots seen, and the gestures that landed on a window the agent had not seen
(the goal: none). An action "could succeed" unless a fault made the runtime refuse it on
purpose (STALE_SCREEN, DEVICE_UNAVAILABLE while the server or the link was down); the goal is
that at least 99.5 % of those do, and that every failure carries a code.

    python bench/bench_faults.py [ACTIONS]      (default 10000; about 10 minutes on 2 cores)
"""

from __future__ import annotations

import asyncio
import collections
import json
import logging
import random
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
TOKEN = "bench-faults-token"
AUTH = (("authorization", f"Bearer {TOKEN}"),)
FAULT_EVERY = 50  # actions between two faults
SECURE_FOR = 12  # actions a secure window stays in front
GOAL = 0.995
EXPECTED = {"STALE_SCREEN", "DEVICE_UNAVAILABLE"}  # refusals a fault makes on purpose
ICONS = ("Chrome", "Keep Notes", "Messages")


@dataclass
class Tally:
    ok: collections.Counter[str] = field(default_factory=collections.Counter)
    failed: collections.Counter[tuple[str, str]] = field(default_factory=collections.Counter)
    expected: collections.Counter[tuple[str, str]] = field(default_factory=collections.Counter)
    uncoded: list[str] = field(default_factory=list)
    faults: collections.Counter[str] = field(default_factory=collections.Counter)
    restarts: list[int] = field(default_factory=list)
    secure_seen: int = 0
    unseen_landings: int = 0
    coordinate_gestures: int = 0
    samples: dict[str, str] = field(default_factory=dict)
    outages: list[float] = field(default_factory=list)


def blip(rig: Any) -> None:
    """The cable blips: every connection to the phone is cut, and it is back at once (the adb
    server told to connect again, as it redials an `adb connect` device by itself, only sooner)."""
    from tests.fakes.adb_server import AdbHarnessError

    rig.adbd.drop()
    rig.adbd.resume()
    for _ in range(20):  # the server's own redial may collide with ours: it drops the newer one
        rig.server.disconnect(rig.adbd.serial)
        try:
            rig.server.connect(rig.adbd.serial, 2.0)
            return
        except AdbHarnessError:
            continue
    raise SystemExit("the fake phone could not be connected again")


async def run(total: int, seed: int) -> Tally:
    import grpc
    from _fake_adb import adb_app

    from phoneuse_runtime.device.adb.errors import SERVER
    from phoneuse_runtime.device.ui_server import RestartLimiter
    from phoneuse_runtime.rpc import protocol_pb2 as pb
    from phoneuse_runtime.rpc import protocol_pb2_grpc as pb_grpc
    from tests.fakes import seed as phone_seed
    from tests.fakes.state import SystemDialog
    from tests.fakes.u2server import kill_server

    rnd = random.Random(seed)
    tally = Tally()
    async with adb_app("bench-faults", token=TOKEN, gateway=False, memory_ingest=False) as rig:
        state = rig.phone.state
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{rig.app.port}")
        stub = pb_grpc.AndroidRuntimeStub(channel)
        sub = rig.app.runtime.bus.subscribe("bench", ["ERROR", "DEVICE_CONNECTED"], outside=False)
        connected = asyncio.Event()

        async def restarts() -> None:
            async for event in sub:
                if event.event_type == "DEVICE_CONNECTED":
                    connected.set()
                    continue
                payload = json.loads(event.payload_json)
                if payload.get("code") == "UI_SERVER_RESTARTED":
                    tally.restarts.append(int(payload["took_ms"]))

        reader = asyncio.ensure_future(restarts())

        async def call(action: str, params: dict[str, str]) -> tuple[bool, str, dict[str, Any]]:
            request = pb.ActionRequest(
                action_type=action, params=params, request_id=uuid.uuid4().hex, timeout_ms=30_000
            )
            response = await stub.Execute(request, metadata=AUTH)
            result = json.loads(response.result_json or "{}")
            return response.success, response.error, result

        seen = {"package": ""}
        centres: dict[str, tuple[int, int]] = {}
        secure_left = 0
        anr_armed = False
        down = [False]  # record() saw the phone away: the agent waits for it before going on

        async def look() -> dict[str, Any]:
            ok, error, result = await call("DUMP_UI", {})
            record("DUMP_UI", ok, error)
            if ok:
                seen["package"] = result["package"]
                if "isn't responding" in result.get("screen", ""):
                    ok, error, _ = await call("TAP", {"text": "Wait", "settle_ms": "0"})
                    record("TAP (dialog's Wait)", ok, error)
                    return await look()
            return result

        async def back() -> None:
            """What DEVICE_UNAVAILABLE's "not reachable now" says to do: wait for DEVICE_CONNECTED."""
            began = time.monotonic()
            await asyncio.wait_for(connected.wait(), 60)
            connected.clear()
            tally.outages.append(time.monotonic() - began)

        def record(kind: str, ok: bool, error: str) -> None:
            if ok:
                tally.ok[kind] += 1
                return
            if "is not reachable now" in error:
                down[0] = True
            code = error.split(":", 1)[0]
            tally.samples.setdefault(code, error[:240])
            if not code or not code.isupper():
                tally.uncoded.append(error[:200])
            (tally.expected if code in EXPECTED else tally.failed)[(kind, code)] += 1

        # The launcher's icons where the agent read them (the layout does not move).
        await call("PRESS_KEY", {"key": "HOME"})
        _, _, laid = await call("DUMP_UI", {"format": "json"})
        for element in laid["elements"]:
            if element.get("text") in ICONS:
                left, top, right, bottom = element["bounds"]
                centres[element["text"]] = ((left + right) // 2, (top + bottom) // 2)
        done = 0
        while done < total:
            if done and done % FAULT_EVERY == 0:
                fault = ("u2 killed", "adb dropped", "ANR dialog", "secure window")[(done // FAULT_EVERY) % 4]
                tally.faults[fault] += 1
                if fault == "u2 killed":
                    rig.app.runtime.device.u2.limiter = RestartLimiter(SERVER)  # a death a minute, not 3
                    kill_server(state)
                elif fault == "adb dropped":
                    await asyncio.to_thread(blip, rig)
                elif fault == "ANR dialog":
                    anr_armed = True  # it comes up between the agent's look and its next gesture
                else:
                    state.secure_packages.add(state.foreground().package)
                    secure_left = SECURE_FOR
            if down[0]:
                down[0] = False
                await back()
            if secure_left:
                secure_left -= 1
                if not secure_left:
                    state.secure_packages.clear()
            kind = rnd.choice(("look", "tap text", "tap point", "swipe", "screenshot", "home"))
            if kind == "look":
                await look()
            elif kind == "tap text":
                await call("PRESS_KEY", {"key": "HOME"})
                ok, error, _ = await call("TAP", {"text": rnd.choice(ICONS)})
                record("TAP text=", ok, error)
            elif kind in ("tap point", "swipe"):
                await call("PRESS_KEY", {"key": "HOME"})
                await look()
                if anr_armed:
                    anr_armed = False
                    state.dialog = SystemDialog("anr", phone_seed.MESSAGES, "Messages")
                taps = len(state.log.taps)
                if kind == "tap point":
                    x, y = centres[rnd.choice(ICONS)]
                    params = {"x": str(x), "y": str(y)}
                    ok, error, _ = await call("TAP", params)
                    record("TAP x,y", ok, error)
                    if error.startswith("STALE_SCREEN"):
                        await look()  # what the answer says to do: the dialog is seen, and waited
                else:
                    params = {"x1": "360", "y1": "1100", "x2": "360", "y2": "500", "duration_ms": "100"}
                    ok, error, _ = await call("SWIPE", params)
                    record("SWIPE", ok, error)
                    if error.startswith("STALE_SCREEN"):
                        await look()
                if ok and kind == "tap point":
                    tally.coordinate_gestures += 1
                    landed = [t.package for t in state.log.taps[taps:]]
                    tally.unseen_landings += sum(1 for p in landed if p and p != seen["package"])
            elif kind == "screenshot":
                ok, error, result = await call("SCREENSHOT", {})
                record("SCREENSHOT", ok, error)
                tally.secure_seen += bool(ok and result.get("secure"))
            else:
                ok, error, _ = await call("PRESS_KEY", {"key": "HOME"})
                record("PRESS_KEY HOME", ok, error)
            done += 1
        reader.cancel()
        await channel.close()
    return tally


def main() -> None:
    total = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    sys.path.insert(0, str(REPO))
    sys.path.insert(0, str(REPO / "bench"))
    from _common import machine, percentile, table

    logging.getLogger("phoneuse_runtime").setLevel(logging.ERROR)  # each restart's warning
    started = time.monotonic()
    tally = asyncio.run(run(total, seed=26))
    took = time.monotonic() - started
    print(machine())
    print(f"{total} actions in {took:.0f} s; faults: {dict(tally.faults)}")
    kinds = sorted(set(tally.ok) | {k for k, _ in tally.failed} | {k for k, _ in tally.expected})
    rows = []
    could, succeeded = 0, 0
    for kind in kinds:
        ok = tally.ok[kind]
        bad = sum(n for (k, _), n in tally.failed.items() if k == kind)
        meant = sum(n for (k, _), n in tally.expected.items() if k == kind)
        could += ok + bad
        succeeded += ok
        share = f"{ok / max(1, ok + bad):.4f}"
        rows.append([kind, str(ok + bad + meant), str(ok), str(meant), str(bad), share])
    print(table(["action", "calls", "ok", "refused on purpose", "failed", "ok / could succeed"], rows))
    codes = collections.Counter[str]()
    for (_, code), n in [*tally.failed.items(), *tally.expected.items()]:
        codes[code] += n
    print("failures by code:", dict(codes.most_common()))
    for sample in tally.samples.values():
        print(f"  e.g. {sample}")
    restarts = sorted(float(t) for t in tally.restarts)
    if restarts:
        print(
            f"uiautomator2 restarts: {len(restarts)}, took_ms p50 {percentile(restarts, 50):.0f}, "
            f"max {restarts[-1]:.0f}"
        )
    outages = sorted(tally.outages)
    if outages:
        print(
            f"adb drops waited out (DEVICE_UNAVAILABLE to DEVICE_CONNECTED): {len(outages)}, p50 "
            f"{percentile(outages, 50):.2f} s, max {outages[-1]:.2f} s"
        )
    print(f"secure screenshots answered secure: {tally.secure_seen}")
    print(
        f"coordinate taps that landed on a window the agent had not seen: {tally.unseen_landings} of "
        f"{tally.coordinate_gestures} (goal 0)"
    )
    rate = succeeded / max(1, could)
    verdict = "meets" if rate >= GOAL else "MISSES"
    print(f"actions that could succeed and did: {rate:.4%} (goal >= {GOAL:.1%}: {verdict})")
    print(f"failures without a code: {len(tally.uncoded)} {tally.uncoded[:3]}")


if __name__ == "__main__":
    main()
