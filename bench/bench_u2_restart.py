"""From uiautomator2's server dying to the next successful DUMP_UI, on the fake phone behind the
real adb server (goal: at most 5 s): for each way a real server dies (its process killed, so
the port refuses; "UiAutomation not connected!"; killed halfway through an answer), N deaths,
each followed by one DUMP_UI that meets it (restart, then the read sent again). Beside them, a
DUMP_UI with the server alive, and the restart alone (the UI_SERVER_RESTARTED event's took_ms).

The restarts' limiter (3 a minute) is renewed before each death, so every one is restarted.

    python bench/bench_u2_restart.py [N]
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TOKEN = "bench-u2-restart-token"
AUTH = (("authorization", f"Bearer {TOKEN}"),)
GOAL_S = 5.0


async def run(n: int) -> list[list[str]]:
    import grpc
    from _common import percentile
    from _fake_adb import adb_app

    from phoneuse_runtime.device.adb.errors import SERVER
    from phoneuse_runtime.device.ui_server import RestartLimiter
    from phoneuse_runtime.rpc import protocol_pb2 as pb
    from phoneuse_runtime.rpc import protocol_pb2_grpc as pb_grpc
    from tests.fakes.state import PhoneState
    from tests.fakes.u2server import kill_server

    def not_connected(state: PhoneState) -> None:
        state.faults.u2_not_connected = True

    def cut(state: PhoneState) -> None:
        state.faults.u2_die_mid_answer = True

    deaths = {
        "killed (port refuses)": kill_server,
        "UiAutomation not connected": not_connected,
        "killed mid-answer": cut,
    }
    rows = []
    async with adb_app("bench-u2-restart", token=TOKEN, gateway=False, memory_ingest=False) as rig:
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{rig.app.port}")
        stub = pb_grpc.AndroidRuntimeStub(channel)
        took: list[int] = []
        sub = rig.app.runtime.bus.subscribe("bench", ["ERROR"], outside=False)

        async def dump() -> float:
            started = time.monotonic()
            request = pb.ActionRequest(
                action_type="DUMP_UI", params={}, request_id=uuid.uuid4().hex, timeout_ms=30_000
            )
            response = await stub.Execute(request, metadata=AUTH)
            assert response.success, response.error
            return time.monotonic() - started

        async def restarts() -> None:
            async for event in sub:
                payload = json.loads(event.payload_json)
                if payload.get("code") == "UI_SERVER_RESTARTED":
                    took.append(int(payload["took_ms"]))

        reader = asyncio.ensure_future(restarts())
        await dump()
        alive = sorted([await dump() for _ in range(n)])
        rows.append(
            [
                "server alive (no death)",
                str(n),
                f"{percentile(alive, 50) * 1000:.0f}",
                f"{alive[-1] * 1000:.0f}",
                "-",
                "-",
            ]
        )
        for label, die in deaths.items():
            spans: list[float] = []
            first = len(took)
            for _ in range(n):
                device = rig.app.runtime.device
                device.u2.limiter = RestartLimiter(SERVER)
                died = time.monotonic()
                die(rig.phone.state)
                await dump()
                spans.append(time.monotonic() - died)
            while len(took) < first + n:
                await asyncio.sleep(0.01)  # the last event's way through the bus (a bench, not a test)
            spans.sort()
            mine = sorted(took[first : first + n])
            worst = spans[-1]
            rows.append(
                [
                    label,
                    str(n),
                    f"{percentile(spans, 50) * 1000:.0f}",
                    f"{worst * 1000:.0f}",
                    f"{percentile([float(t) for t in mine], 50):.0f}",
                    "meets" if worst <= GOAL_S else "MISSES",
                ]
            )
        reader.cancel()
        await channel.close()
    return rows


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    sys.path.insert(0, str(REPO))
    sys.path.insert(0, str(REPO / "bench"))
    from _common import machine, table

    logging.getLogger("phoneuse_runtime").setLevel(logging.ERROR)  # each restart's warning
    rows = asyncio.run(run(n))
    print(machine())
    headers = [
        "death",
        "n",
        "death to DUMP_UI p50 ms",
        "max ms",
        "restart (took_ms) p50",
        f"goal <= {GOAL_S:.0f} s",
    ]
    print(table(headers, rows))


if __name__ == "__main__":
    main()
