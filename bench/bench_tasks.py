"""What an agent pays to do a few tasks through the UI: its calls and the tokens it reads, ours and
mobile-mcp's, in one run, on the same fake phone behind the real adb server.

Four scripted tasks (open Contacts and find a contact; reply to an SMS through Messages; create an
event through Calendar's editor; toggle Wi-Fi in Settings), each run on a fresh fake phone
(tests/fakes, seeded alike: contacts, an SMS thread, uiautomator2's input method) behind an
isolated real adb server (bench/_fake_adb.py), three ways:

- **ours, settled** (issue 17): the production app (`build_app`, `--device adb:SERIAL`) through
  gRPC; one DUMP_UI to see the first screen, then only the actions, with selectors an agent reads
  off DUMP_UI and the actions' `changes` (each action settles and says what changed);
- **ours, dump after each**: `settle_ms=0` and a DUMP_UI after every action (how an agent learnt
  what its action did before settling);
- **mobile-mcp** (npm `@mobilenext/mobile-mcp`, its adb mode, installed with npm into a temporary
  directory, or --mobile-mcp DIR holding node_modules), driven through its MCP stdio interface
  with the official `mcp` SDK client: `mobile_list_elements_on_screen` to see the first screen and
  after each navigation (its tool description's advice), `mobile_launch_app`,
  `mobile_click_on_screen_at_coordinates` by the refs it listed (a field clicked to focus it),
  `mobile_type_keys`, and one last list to see the outcome (ours' last result says it).

Tokens are cl100k (`bpe-openai`, which bundles the encoding), counted over every request an agent
sends (the action or tool name and its arguments, as JSON) and every result it reads (result_json;
the tool's text content). Each task's outcome is checked on the fake phone (the SMS sent, the
event saved, Wi-Fi toggled). A fifth row types `Olá 你好 🚲` into a note and says what reached
the field (mobile-mcp's non-ASCII path needs its own device server, which the fake phone cannot
start: see bench/README.md). Without node or npm the mobile-mcp columns are skipped, saying so.
Run by hand:

    python3 bench/bench_tasks.py [--mobile-mcp DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import tempfile
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import _common  # noqa: F401 (this checkout on sys.path first)
import grpc
from _fake_adb import adb_app
from _mobile_mcp import install_mobile_mcp, mobile_mcp, version

from phoneuse_runtime.config.settings import Settings
from phoneuse_runtime.rpc import protocol_pb2 as pb
from phoneuse_runtime.rpc import protocol_pb2_grpc as pb_grpc
from tests.fakes import seed
from tests.fakes.phone import FakePhone
from tests.fakes.state import PhoneState

TOKEN = "bench-tasks-token-0123456789abcdef"
AUTH = (("authorization", f"Bearer {TOKEN}"),)
UNICODE = "Olá 你好 🚲"
ALICE, FRANK = "+15550101", "+15550103"

Step = tuple[str, dict[str, str]]
Count = Callable[[str], int]

# Ours: what an agent does once it has read the screen, with selectors it read off DUMP_UI or `changes`.
OURS: dict[str, list[Step]] = {
    "find a contact": [
        ("OPEN_APP", {"package": seed.CONTACTS}),
        ("TAP", {"text": "Frank Okafor"}),
    ],
    "reply to an SMS": [
        ("OPEN_APP", {"package": seed.MESSAGES}),
        ("TAP", {"text": "Alice Johnson"}),
        ("TYPE_TEXT", {"resource_id": "compose_message_text", "text": "On my way"}),
        ("TAP", {"description": "Send SMS"}),
    ],
    "create an event": [
        ("OPEN_APP", {"package": seed.CALENDAR}),
        ("TAP", {"description": "Create new event"}),
        ("TYPE_TEXT", {"resource_id": "title", "text": "Lunch with Bob"}),
        ("TAP", {"text": "Save"}),
    ],
    "toggle a setting": [
        ("OPEN_APP", {"package": seed.SETTINGS}),
        ("TAP", {"resource_id": "switch_widget"}),
    ],
    f"type {UNICODE} (a note)": [
        ("OPEN_APP", {"package": seed.KEEP}),
        ("TYPE_TEXT", {"resource_id": "edit_note_text", "text": UNICODE}),
    ],
}

# mobile-mcp: ("list",) lists the elements; ("launch", pkg); ("click", what) clicks the ref whose
# line holds `what` in the last list; ("type", text).
MCP: dict[str, list[tuple[str, ...]]] = {
    "find a contact": [("launch", seed.CONTACTS), ("list",), ("click", '"Frank Okafor"')],
    "reply to an SMS": [
        ("launch", seed.MESSAGES),
        ("list",),
        ("click", '"Alice Johnson"'),
        ("list",),
        ("click", "compose_message_text"),
        ("type", "On my way"),
        ("click", '"Send SMS"'),
    ],
    "create an event": [
        ("launch", seed.CALENDAR),
        ("list",),
        ("click", '"Create new event"'),
        ("list",),
        ("click", ":id/title"),
        ("type", "Lunch with Bob"),
        ("click", '"Save"'),
    ],
    "toggle a setting": [("launch", seed.SETTINGS), ("list",), ("click", "switch_widget")],
    f"type {UNICODE} (a note)": [
        ("launch", seed.KEEP),
        ("list",),
        ("click", "edit_note_text"),
        ("type", UNICODE),
    ],
}


def phone_state() -> PhoneState:
    """The phone every run starts from: contacts, a thread with Alice, uiautomator2's input method."""
    state = seed.default_state()
    u2 = seed.u2_app_package()
    state.packages[u2.name] = u2
    seed.add_contact(state, "Alice Johnson", [ALICE])
    seed.add_contact(state, "Bob Lee", ["+15550102"])
    seed.add_contact(state, "Frank Okafor", [FRANK])
    state.receive_sms(ALICE, "Are you coming tonight?")
    return state


def outcome(task: str, state: PhoneState) -> str:
    """Whether the task's effect is on the phone."""
    if task == "find a contact":
        ok = state.foreground().package == seed.CONTACTS
    elif task == "reply to an SMS":
        ok = any(r.address == ALICE and r.body == "On my way" and r.type != 1 for r in state.sms)
    elif task == "create an event":
        ok = any(e.title == "Lunch with Bob" and not e.deleted for e in state.events)
    elif task == "toggle a setting":
        ok = state.setting("global", "wifi_on") == "0"
    else:
        typed = state.foreground().fields.get(f"{seed.KEEP}:id/edit_note_text", "")
        return "exact" if typed == UNICODE else f"field holds {typed!r}"
    return "done" if ok else "NOT done"


@dataclass
class Tally:
    calls: int = 0
    tokens: int = 0
    outcome: str = ""
    notes: list[str] = field(default_factory=list)


# --- ours ---------------------------------------------------------------------------------------
async def run_ours(task: str, steps: list[Step], *, settled: bool, count: Count) -> Tally:
    phone = FakePhone(phone_state())
    tally = Tally()

    def settings(**where: Any) -> Settings:  # Settings is the owner's by default: not in this bench
        return Settings(
            grpc_listen="127.0.0.1:0", gateway=False, memory_ingest=False, owner_apps=frozenset(), **where
        )

    async with adb_app("bench-tasks", token=TOKEN, phone=phone, make_settings=settings) as rig:
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{rig.app.port}")
        stub = pb_grpc.AndroidRuntimeStub(channel)

        async def call(action: str, params: dict[str, str]) -> None:
            request = pb.ActionRequest(
                action_type=action, params=params, request_id=uuid.uuid4().hex, timeout_ms=20_000
            )
            response = await stub.Execute(request, metadata=AUTH, timeout=60)
            tally.calls += 1
            tally.tokens += count(json.dumps({"action": action, "params": params}, ensure_ascii=False))
            tally.tokens += count(response.result_json if response.success else response.error)
            if not response.success:
                tally.notes.append(f"{action}: {response.error}")

        try:
            await call("DUMP_UI", {})  # the first screen
            for action, params in steps:
                if settled:
                    await call(action, params)
                else:
                    await call(action, {**params, "settle_ms": "0"})
                    await call("DUMP_UI", {})
        finally:
            await channel.close()
        tally.outcome = outcome(task, phone.state)
    return tally


# --- mobile-mcp -----------------------------------------------------------------------------------
_REF = re.compile(r"^(@e\d+) ")


async def run_mcp(task: str, steps: list[tuple[str, ...]], *, modules: Path, count: Count) -> Tally:
    phone = FakePhone(phone_state())
    tally = Tally()
    async with mobile_mcp(modules, phone) as rig:

        async def tool(name: str, args: dict[str, Any]) -> str:
            text, failed = await rig.tool(name, args)
            tally.calls += 1
            sent = {"tool": name, "arguments": {"device": rig.serial, **args}}
            tally.tokens += count(json.dumps(sent, ensure_ascii=False)) + count(text)
            if failed:
                tally.notes.append(f"{name}: {text[:120]}")
            return text

        listed = await tool("mobile_list_elements_on_screen", {})  # the first screen
        for step in steps:
            if step[0] == "list":
                listed = await tool("mobile_list_elements_on_screen", {})
            elif step[0] == "launch":
                await tool("mobile_launch_app", {"packageName": step[1]})
            elif step[0] == "type":
                await tool("mobile_type_keys", {"text": step[1], "submit": False})
            else:
                line = next((ln for ln in listed.splitlines() if step[1] in ln), None)
                match = _REF.match(line or "")
                if match is None:
                    tally.notes.append(f"no listed element holds {step[1]}")
                    continue
                await tool("mobile_click_on_screen_at_coordinates", {"ref": match.group(1)})
        await tool("mobile_list_elements_on_screen", {})  # the outcome, which ours' results say
    tally.outcome = outcome(task, phone.state)
    return tally


# --- the run --------------------------------------------------------------------------------------
async def run(modules: Path | None) -> None:
    try:
        import bpe_openai
    except ImportError:
        raise SystemExit("needs bpe-openai (cl100k, offline): pip install bpe-openai") from None
    encoding = bpe_openai.get_encoding("cl100k_base")

    def count(text: str) -> int:
        return len(encoding.encode(text))

    with tempfile.TemporaryDirectory() as scratch:
        modules = install_mobile_mcp(modules, Path(scratch))
        if modules is not None:
            print(f"mobile-mcp {version(modules)} over MCP stdio (the mcp SDK client), adb mode")
        rows: list[list[str]] = []
        totals = {"settled": Tally(), "dump": Tally(), "mcp": Tally()}
        notes: list[str] = []
        for task, steps in OURS.items():
            got = {
                "settled": await run_ours(task, steps, settled=True, count=count),
                "dump": await run_ours(task, steps, settled=False, count=count),
            }
            if modules is not None:
                got["mcp"] = await run_mcp(task, MCP[task], modules=modules, count=count)
            for side, tally in got.items():
                notes += [f"{task}, {side}: {n}" for n in tally.notes]
                if not task.startswith("type "):
                    totals[side].calls += tally.calls
                    totals[side].tokens += tally.tokens
            rows.append(_row(task, got))
        rows.append(_row("total (the four tasks)", totals))
    headers = ["task", "ours settled: calls", "tokens", "outcome", "ours dump after each: calls", "tokens"]
    if modules is not None:
        headers += ["mobile-mcp: calls", "tokens", "outcome", "calls ours/mcp", "tokens ours/mcp"]
    print("| " + " | ".join(headers) + " |")
    print("|" + "---|" * len(headers))
    for row in rows:
        print("| " + " | ".join(row) + " |")
    for note in notes:
        print(f"- {note}")


def _row(task: str, got: dict[str, Tally]) -> list[str]:
    s, d = got["settled"], got["dump"]
    row = [task, str(s.calls), f"{s.tokens:,}", s.outcome, str(d.calls), f"{d.tokens:,}"]
    m = got.get("mcp")
    if m is not None:
        row += [
            str(m.calls),
            f"{m.tokens:,}",
            m.outcome,
            f"{s.calls / m.calls:.2f}x" if m.calls else "-",
            f"{s.tokens / m.tokens:.2f}x" if m.tokens else "-",
        ]
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mobile-mcp", type=Path, default=None, help="a node_modules dir holding it")
    args = parser.parse_args()
    asyncio.run(run(args.mobile_mcp))


if __name__ == "__main__":
    main()
