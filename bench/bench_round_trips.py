"""Device round trips per UI action on adb: the streams the fake adbd opened for each action, with
the owner's-controls check on (an agent's call) and settling off (settle_ms=0: the action's own
work), then settled actions after a DUMP_UI. Run it against this tree and, for "before", against
another checkout's runtime with this tree's fakes:

    python bench/bench_round_trips.py [--tree /work/main]

The runtime is built in-process by the production factory against the fake adbd behind the
isolated real adb server (bench/_fake_adb.py), with uiautomator2's input method installed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import uuid
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
TOKEN = "bench-round-trips-token"
AUTH = (("authorization", f"Bearer {TOKEN}"),)
KEEP_FIELD = "com.google.android.keep:id/edit_note_text"
NO_SETTLE = {"settle_ms": "0"}


async def run() -> list[list[str]]:
    import grpc
    from _fake_adb import adb_app

    from phoneuse_runtime.rpc import protocol_pb2 as pb
    from phoneuse_runtime.rpc import protocol_pb2_grpc as pb_grpc
    from tests.fakes import apps, seed
    from tests.fakes.phone import FakePhone

    state = seed.default_state()
    u2 = seed.u2_app_package()
    state.packages[u2.name] = u2
    rows: list[list[str]] = []
    async with adb_app(
        "bench-round-trips", token=TOKEN, phone=FakePhone(state), gateway=False, memory_ingest=False
    ) as rig:
        adbd = rig.adbd
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{rig.app.port}")
        stub = pb_grpc.AndroidRuntimeStub(channel)

        async def execute(action: str, params: dict[str, str]) -> dict[str, Any]:
            request = pb.ActionRequest(
                action_type=action, params=params, request_id=uuid.uuid4().hex, timeout_ms=20_000
            )
            response = await stub.Execute(request, metadata=AUTH)
            assert response.success, (action, params, response.error)
            result: dict[str, Any] = json.loads(response.result_json)
            return result

        async def count(label: str, action: str, params: dict[str, str]) -> None:
            before = len(adbd.opened)
            await execute(action, params)
            rows.append([label, str(len(adbd.opened) - before)])

        def ref_of(screen: str, needle: str) -> str:
            return next(line.split()[0] for line in screen.splitlines() if needle in line)

        home = (await execute("DUMP_UI", {}))["screen"]
        await count("TAP x,y", "TAP", {"x": "20", "y": "700", **NO_SETTLE})
        await execute("PRESS_KEY", {"key": "HOME"})
        await count("TAP text", "TAP", {"text": "Keep Notes", **NO_SETTLE})
        await execute("PRESS_KEY", {"key": "HOME"})
        home = (await execute("DUMP_UI", {}))["screen"]
        await count("TAP ref", "TAP", {"ref": ref_of(home, '"Keep Notes"'), **NO_SETTLE})
        await execute("PRESS_KEY", {"key": "HOME"})
        await count("LONG_PRESS text", "LONG_PRESS", {"text": "Chrome", **NO_SETTLE})
        home = (await execute("DUMP_UI", {}))["screen"]
        await count("LONG_PRESS ref", "LONG_PRESS", {"ref": ref_of(home, '"Chrome"'), **NO_SETTLE})
        await count("SWIPE direction", "SWIPE", {"direction": "up", **NO_SETTLE})
        await execute("PRESS_KEY", {"key": "HOME"})
        await count("PRESS_KEY ENTER", "PRESS_KEY", {"key": "ENTER", **NO_SETTLE})
        await execute("OPEN_APP", {"package": seed.KEEP})
        await execute("TAP", {"resource_id": KEEP_FIELD})
        await count("TYPE_TEXT focused", "TYPE_TEXT", {"text": "Olá 你好 🚲", **NO_SETTLE})
        await count(
            "TYPE_TEXT resource_id", "TYPE_TEXT", {"text": "hello", "resource_id": KEEP_FIELD, **NO_SETTLE}
        )
        await count("CLEAR_TEXT resource_id", "CLEAR_TEXT", {"resource_id": KEEP_FIELD, **NO_SETTLE})
        await count("WAIT_FOR (there)", "WAIT_FOR", {"resource_id": KEEP_FIELD})

        async def leave_later() -> None:
            await asyncio.sleep(0.3)
            apps.launch_package(rig.phone.state, seed.LAUNCHER, source="bench")

        leaver = asyncio.create_task(leave_later())
        await count("WAIT_FOR gone (goes in 0.3 s)", "WAIT_FOR", {"resource_id": KEEP_FIELD, "gone": "true"})
        await leaver
        home = (await execute("DUMP_UI", {}))["screen"]
        await count("settled TAP ref (after DUMP_UI)", "TAP", {"ref": ref_of(home, '"Keep Notes"')})
        await count("settled PRESS_KEY BACK", "PRESS_KEY", {"key": "BACK"})
        await count("settled TAP text", "TAP", {"text": "Keep Notes"})
        await channel.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, default=REPO, help="the checkout whose runtime runs")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))  # the fakes: this tree's
    sys.path.insert(0, str(args.tree.resolve()))  # the runtime: --tree's
    sys.path.insert(0, str(REPO / "bench"))
    from _common import machine, table

    import phoneuse_runtime

    rows = asyncio.run(run())
    print(f"runtime from {Path(phoneuse_runtime.__file__).parent.parent}; {machine()}")
    print(table(["action (adb, an agent's call)", "device round trips (streams)"], rows))


if __name__ == "__main__":
    main()
