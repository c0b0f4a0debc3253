"""What an agent pays to do a few tasks through the UI: its calls and the tokens it reads.

Four scripted tasks on the sim (open Contacts and find a contact; reply to an SMS through
Messages; create an event through Calendar; toggle Wi-Fi in Settings), each run two ways
through the real gRPC server (`build_app`, port 0, grpcio stubs):

- **settled** (issue 17): one DUMP_UI to see the first screen, then only the actions; each
  action waits for the screen to settle and its result says what changed (`changes`).
- **dump after each** (before settling): `settle_ms=0`, and a DUMP_UI after every action,
  which is how an agent learned what its action did.

Tokens are cl100k (`bpe-openai`, which bundles the encoding: tiktoken downloads its file at run
time), counted over every request's params and every result an agent reads. Not a runtime
dependency: `pip install bpe-openai` to run this.

mobile-mcp is not in this run (no time in issue 17's settle part): the lead may add it.

    python3 bench/bench_tasks.py
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import uuid
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import _common  # noqa: F401 (this checkout on sys.path first)
import grpc

from phoneuse_runtime.app import build_app, default_components
from phoneuse_runtime.config import Settings
from phoneuse_runtime.rpc import protocol_pb2 as pb
from phoneuse_runtime.rpc import protocol_pb2_grpc as pb_grpc

TOKEN = "bench-token-0123456789abcdef"
AUTH = (("authorization", f"Bearer {TOKEN}"),)

CONTACTS = "com.google.android.contacts"
MESSAGES = "com.google.android.apps.messaging"
CALENDAR = "com.google.android.calendar"
SETTINGS = "com.android.settings"

Step = tuple[str, dict[str, str]]

# What an agent does, once it has read the screen: selectors it read off DUMP_UI or `changes`.
TASKS: dict[str, list[Step]] = {
    "find a contact": [
        ("OPEN_APP", {"package": CONTACTS}),
        ("TAP", {"text": "Frank Okafor"}),
    ],
    "reply to an SMS": [
        ("OPEN_APP", {"package": MESSAGES}),
        ("TAP", {"text": "Alice Johnson"}),
        ("TYPE_TEXT", {"resource_id": "compose_message_text", "text": "On my way"}),
        ("TAP", {"description": "Send SMS"}),
    ],
    "create an event": [
        ("OPEN_APP", {"package": CALENDAR}),
        ("TAP", {"description": "Create new event"}),
        ("TYPE_TEXT", {"resource_id": "title", "text": "Lunch with Bob"}),
        ("TAP", {"text": "Save"}),
    ],
    "toggle a setting": [
        ("OPEN_APP", {"package": SETTINGS}),
        ("TAP", {"resource_id": "switch_widget"}),
    ],
}


@dataclass
class Tally:
    calls: int = 0
    tokens: int = 0
    settled: int = 0


class Agent:
    """Counts what an agent sends and reads."""

    def __init__(self, stub: pb_grpc.AndroidRuntimeStub, count: Any) -> None:
        self.stub = stub
        self.count = count
        self.tally = Tally()

    async def call(self, action: str, params: dict[str, str]) -> dict[str, Any]:
        request = pb.ActionRequest(
            action_type=action, params=params, request_id=uuid.uuid4().hex, timeout_ms=10_000
        )
        response = await self.stub.Execute(request, metadata=AUTH, timeout=30)
        if not response.success:
            raise SystemExit(f"{action} {params}: {response.error}")
        self.tally.calls += 1
        self.tally.tokens += self.count(json.dumps({"action": action, "params": params}, ensure_ascii=False))
        self.tally.tokens += self.count(response.result_json)
        result: dict[str, Any] = json.loads(response.result_json)
        self.tally.settled += bool(result.get("settle", {}).get("settled"))
        return result


async def run_task(steps: list[Step], *, settled: bool, count: Any, data_dir: Path) -> Tally:
    base = Settings(data_dir=data_dir, grpc_listen="127.0.0.1:0", gateway=False, memory_ingest=False)
    settings = replace(base, owner_apps=frozenset())  # Settings is the owner's by default
    app = await build_app(settings, token=TOKEN, components=default_components(settings, token=TOKEN))
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{app.port}")
    try:
        agent = Agent(pb_grpc.AndroidRuntimeStub(channel), count)
        await agent.call("DUMP_UI", {})  # the first screen, both ways
        for action, params in steps:
            if settled:
                await agent.call(action, params)
            else:
                await agent.call(action, {**params, "settle_ms": "0"})
                await agent.call("DUMP_UI", {})
        return agent.tally
    finally:
        await channel.close()
        await app.stop(grace_s=0)


async def main() -> None:
    try:
        import bpe_openai
    except ImportError:
        raise SystemExit("needs bpe-openai (cl100k, offline): pip install bpe-openai") from None
    encoding = bpe_openai.get_encoding("cl100k_base")

    def count(text: str) -> int:
        return len(encoding.encode(text))

    rows = []
    totals = {True: Tally(), False: Tally()}
    with tempfile.TemporaryDirectory() as tmp:
        for n, (name, steps) in enumerate(TASKS.items()):
            got = {}
            for settled in (True, False):
                tally = await run_task(
                    steps, settled=settled, count=count, data_dir=Path(tmp) / f"{n}{settled}"
                )
                got[settled] = tally
                totals[settled].calls += tally.calls
                totals[settled].tokens += tally.tokens
                totals[settled].settled += tally.settled
            rows.append((name, got[True], got[False]))
    print(
        "| task | settled: calls | settled: tokens | dump after each: calls | dump after each: tokens "
        "| tokens ratio |"
    )
    print("|---|---|---|---|---|---|")
    for name, s, d in [*rows, ("total", totals[True], totals[False])]:
        print(
            f"| {name} | {s.calls} | {s.tokens:,} | {d.calls} | {d.tokens:,} | {s.tokens / d.tokens:.2f}x |"
        )
    print(f"\nsettled actions: {totals[True].settled} of {totals[True].calls - len(TASKS)}")
    print("mobile-mcp: not measured in this run (see the docstring).", file=sys.stderr)


if __name__ == "__main__":
    asyncio.run(main())
