"""Ours against mobile-mcp on what the phone pays and where the taps land, in one run, on the same
fake phone behind the real adb server: the rows of issue 17's table that bench_screen_tokens and
bench_tasks do not give.

- **tap "X"**: for up to 40 labelled elements of five screens (the home screen, Settings,
  Contacts, Messages, Calendar), the agent's calls to tap it and whether the tap landed inside its
  bounds. Ours: `TAP text=X` (or `description=X`), one call (settle_ms=0). mobile-mcp:
  `mobile_list_elements_on_screen`, then `mobile_click_on_screen_at_coordinates` with the ref of
  the line naming X, two calls. The screen is put back on the phone before each.
- **type**: the device round trips (streams at the fake adbd) of typing into the focused note, and
  what reached the field. Ours: TYPE_TEXT (settle_ms=0); mobile-mcp: `mobile_type_keys`.
- **screenshot**: streams, the image's format, size and bytes. Ours: SCREENSHOT (defaults);
  mobile-mcp: `mobile_take_screenshot`.
- **idle**: the device commands (streams) in `--idle-s` with the server up and no call (ours:
  default settings but the gateway; bench_idle measures ours over longer).

mobile-mcp is installed with npm into a temporary directory (or --mobile-mcp DIR holding
node_modules) and driven through its MCP stdio interface with the official `mcp` SDK client.

    python3 bench/bench_peer.py [--mobile-mcp DIR] [--idle-s 10]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import re
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import _common  # noqa: F401 (this checkout on sys.path first)
import grpc
from _common import machine, table
from _fake_adb import adb_app
from _mobile_mcp import McpRig, install_mobile_mcp, mobile_mcp, version

from phoneuse_runtime.config.settings import Settings
from phoneuse_runtime.rpc import protocol_pb2 as pb
from phoneuse_runtime.rpc import protocol_pb2_grpc as pb_grpc
from phoneuse_runtime.screen.ui import parse_hierarchy
from tests.fakes import apps, seed
from tests.fakes.phone import FakePhone
from tests.fakes.state import PhoneState

TOKEN = "bench-peer-token-0123456789abcdef"
AUTH = (("authorization", f"Bearer {TOKEN}"),)
SCREENS = (None, seed.SETTINGS, seed.CONTACTS, seed.MESSAGES, seed.CALENDAR)  # None: home
MAX_TARGETS = 40
NOTE = f"{seed.KEEP}:id/edit_note_text"
TEXTS = ("hello world", "Olá 你好 🚲")
_REF = re.compile(r"^(@e\d+) ")

Target = tuple[str | None, str, str, tuple[int, int, int, int]]  # screen, field, label, bounds


def phone_state() -> PhoneState:
    state = seed.default_state()
    u2 = seed.u2_app_package()
    state.packages[u2.name] = u2
    for name, number in (
        ("Alice Johnson", "+15550101"),
        ("Bob Lee", "+15550102"),
        ("Frank Okafor", "+15550103"),
    ):
        seed.add_contact(state, name, [number])
    state.receive_sms("+15550101", "Are you coming tonight?")
    state.receive_sms("+15550102", "Lunch?")
    return state


def show(state: PhoneState, screen: str | None) -> None:
    """Puts `screen` in front on the fake phone (no agent call)."""
    apps.go_home(state)
    if screen is not None:
        apps.force_stop(state, screen)  # its first screen, not the one a tap opened
        apps.launch_package(state, screen, source="bench")


def targets(state: PhoneState) -> list[Target]:
    """Labelled, clickable-or-text elements of the app windows, named alone by their label."""
    found: list[Target] = []
    for screen in SCREENS:
        show(state, screen)
        from tests.fakes.ui import dump_u2

        root = parse_hierarchy(dump_u2(apps.windows(state), rotation=state.rotation, compressed=False))
        nodes = [n for n in root.walk() if n.package != "com.android.systemui"]
        for node in nodes:
            for field, label in (("text", node.text), ("description", node.description)):
                if not label or len([n for n in nodes if getattr(n, field) == label]) != 1:
                    continue
                if node.bounds[2] - node.bounds[0] < 2 or node.bounds[3] - node.bounds[1] < 2:
                    continue
                found.append((screen, field, label, node.bounds))
                break
    return found[:MAX_TARGETS]


def landed(state: PhoneState, taps_before: int, bounds: tuple[int, int, int, int]) -> bool:
    if len(state.log.taps) <= taps_before:
        return False
    tap = state.log.taps[taps_before]
    left, top, right, bottom = bounds
    return left <= tap.x < right and top <= tap.y < bottom


# --- ours -----------------------------------------------------------------------------------------
async def ours(idle_s: float) -> dict[str, Any]:
    phone = FakePhone(phone_state())
    state = phone.state
    out: dict[str, Any] = {}

    def settings(**where: Any) -> Settings:  # Settings is among the targets: not the owner's here
        return Settings(grpc_listen="127.0.0.1:0", gateway=False, owner_apps=frozenset(), **where)

    async with adb_app("bench-peer", token=TOKEN, phone=phone, make_settings=settings) as rig:
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{rig.app.port}")
        stub = pb_grpc.AndroidRuntimeStub(channel)

        async def execute(action: str, params: dict[str, str]) -> tuple[bool, dict[str, Any], str]:
            request = pb.ActionRequest(
                action_type=action, params=params, request_id=uuid.uuid4().hex, timeout_ms=20_000
            )
            response = await stub.Execute(request, metadata=AUTH, timeout=60)
            return response.success, json.loads(response.result_json or "{}"), response.error

        # idle first: the server up, nobody calling
        await asyncio.sleep(2.0)  # start-up reads done
        before = len(rig.adbd.opened)
        await asyncio.sleep(idle_s)
        out["idle"] = len(rig.adbd.opened) - before
        hits = calls = 0
        for screen, field, label, bounds in targets(state):
            show(state, screen)
            taps = len(state.log.taps)
            ok, _, error = await execute("TAP", {field: label, "settle_ms": "0"})
            calls += 1
            hit = ok and landed(state, taps, bounds)
            hits += hit
            if not hit:
                out.setdefault("missed", []).append(f"{label!r} ({error or 'tapped outside'})")
        out["taps"] = (calls, hits)
        show(state, seed.KEEP)
        await execute("TAP", {"resource_id": NOTE, "settle_ms": "0"})
        for text in TEXTS:
            before = len(rig.adbd.opened)
            await execute("TYPE_TEXT", {"text": text, "settle_ms": "0"})
            typed = state.foreground().fields.get(NOTE, "")
            out[f"type {text}"] = (len(rig.adbd.opened) - before, "exact" if typed == text else repr(typed))
        before = len(rig.adbd.opened)
        _, shot, _ = await execute("SCREENSHOT", {})
        size = f"{shot.get('format')} {shot.get('width')}x{shot.get('height')}"
        out["screenshot"] = (len(rig.adbd.opened) - before, f"{size}, {shot.get('size_bytes', 0):,} bytes")
        await channel.close()
    return out


# --- mobile-mcp -------------------------------------------------------------------------------------
async def theirs(modules: Path, idle_s: float) -> dict[str, Any]:
    phone = FakePhone(phone_state())
    state = phone.state
    out: dict[str, Any] = {}
    async with mobile_mcp(modules, phone) as rig:
        await asyncio.sleep(2.0)
        before = len(rig.adbd.opened)
        await asyncio.sleep(idle_s)
        out["idle"] = len(rig.adbd.opened) - before
        hits = calls = 0
        for screen, _field, label, bounds in targets(state):
            show(state, screen)
            taps = len(state.log.taps)
            listed, _ = await rig.tool("mobile_list_elements_on_screen", {})
            calls += 1
            quoted = json.dumps(label, ensure_ascii=False)
            line = next((ln for ln in listed.splitlines() if quoted in ln), None)
            match = _REF.match(line or "")
            if match is None:
                out.setdefault("missed", []).append(f"{label!r} (not listed)")
                continue
            await rig.tool("mobile_click_on_screen_at_coordinates", {"ref": match.group(1)})
            calls += 1
            hit = landed(state, taps, bounds)
            hits += hit
            if not hit:
                out.setdefault("missed", []).append(f"{label!r} (tapped outside)")
        out["taps"] = (calls, hits)
        await _type(rig, state, out)
        before = len(rig.adbd.opened)
        result = await rig.call("mobile_take_screenshot", {})
        image = next((c for c in result.content if getattr(c, "type", "") == "image"), None)
        if image is None:
            out["screenshot"] = (len(rig.adbd.opened) - before, "no image")
        else:
            data = base64.b64decode(image.data)
            import io

            from PIL import Image

            with Image.open(io.BytesIO(data)) as img:
                size = f"{img.format.lower() if img.format else '?'} {img.width}x{img.height}"
            out["screenshot"] = (len(rig.adbd.opened) - before, f"{size}, {len(data):,} bytes")
    return out


async def _type(rig: McpRig, state: PhoneState, out: dict[str, Any]) -> None:
    show(state, seed.KEEP)
    listed, _ = await rig.tool("mobile_list_elements_on_screen", {})
    line = next((ln for ln in listed.splitlines() if "edit_note_text" in ln), "")
    match = _REF.match(line)
    if match is not None:
        await rig.tool("mobile_click_on_screen_at_coordinates", {"ref": match.group(1)})
    for text in TEXTS:
        state.foreground().fields[NOTE] = ""
        before = len(rig.adbd.opened)
        _, failed = await rig.tool("mobile_type_keys", {"text": text, "submit": False})
        typed = state.foreground().fields.get(NOTE, "")
        what = "exact" if typed == text else ("nothing typed" if not typed else repr(typed))
        out[f"type {text}"] = (len(rig.adbd.opened) - before, what + (" (the tool failed)" if failed else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mobile-mcp", type=Path, default=None, help="a node_modules dir holding it")
    parser.add_argument("--idle-s", type=float, default=10.0)
    args = parser.parse_args()

    async def run() -> tuple[dict[str, Any], dict[str, Any] | None]:
        with tempfile.TemporaryDirectory() as scratch:
            modules = install_mobile_mcp(args.mobile_mcp, Path(scratch))
            mine = await ours(args.idle_s)
            if modules is None:
                return mine, None
            print(f"mobile-mcp {version(modules)}, adb mode, over MCP stdio (the mcp SDK client)")
            return mine, await theirs(modules, args.idle_s)

    mine, peer = asyncio.run(run())
    print(machine())
    rows: list[list[str]] = []
    fmt: Callable[[Any], str] = lambda v: "-" if v is None else str(v)  # noqa: E731
    c, h = mine["taps"]
    pc, ph = peer["taps"] if peer else (None, None)
    n = len(targets(phone_state()))
    rows.append(
        [
            f"tap X ({n} elements): agent calls per tap",
            f"{c / n:.1f}",
            fmt(pc / n if pc is not None else None),
        ]
    )
    rows.append(["tap X: taps that landed inside X", f"{h} of {n}", f"{ph} of {n}" if peer else "-"])
    for text in TEXTS:
        trips, what = mine[f"type {text}"]
        row = [f"type {text!r}: device round trips, result", f"{trips}, {what}"]
        row.append(f"{peer[f'type {text}'][0]}, {peer[f'type {text}'][1]}" if peer else "-")
        rows.append(row)
    rows.append(
        [
            "screenshot: device round trips, image",
            f"{mine['screenshot'][0]}, {mine['screenshot'][1]}",
            f"{peer['screenshot'][0]}, {peer['screenshot'][1]}" if peer else "-",
        ]
    )
    rows.append(
        [f"device commands in {args.idle_s:g} s idle", str(mine["idle"]), fmt(peer["idle"] if peer else None)]
    )
    print(table(["row", "ours", "mobile-mcp"], rows))
    for side, got in (("ours", mine), ("mobile-mcp", peer or {})):
        for missed in got.get("missed", []):
            print(f"- {side} missed {missed}")


if __name__ == "__main__":
    main()
