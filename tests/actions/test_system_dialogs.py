"""System dialogs on the simulated phone (SIM_SHOW_DIALOG), and STALE_SCREEN there: the runtime
over gRPC on the sim, as an agent's author tests an agent against them."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from phoneuse_runtime.owner.error_dialogs import ErrorDialogAnswers
from phoneuse_runtime.rpc import protocol_pb2 as pb
from tests.waiting import wait_until

from ..conftest import TOKEN, Client, ServerFactory
from .conftest import LAUNCHER, MESSAGES, failure, front, sim

NO_SETTLE = {"settle_ms": "0"}


async def test_a_tap_on_a_screen_a_dialog_came_over_is_stale(client: Client) -> None:
    await client.ok("OPEN_APP", {"package": MESSAGES})
    await client.ok("DUMP_UI")
    shown = await client.ok("SIM_SHOW_DIALOG", {"kind": "anr", "package": MESSAGES})
    assert (shown["package"], shown["window"]) == ("android", f"Application Not Responding: {MESSAGES}")
    for action, params in (
        ("TAP", {"x": "540", "y": "1200"}),
        ("LONG_PRESS", {"x": "540", "y": "1200"}),
        ("SWIPE", {"x1": "540", "y1": "1800", "x2": "540", "y2": "600"}),
    ):
        code, message, details = await failure(client, action, {**params, **NO_SETTLE})
        assert code == "STALE_SCREEN", (action, message)
        assert message == (
            f'a system dialog ("Application Not Responding: {MESSAGES}") is in front now, not {MESSAGES} '
            "of your last screen; read the screen again"
        )
        assert details == {"front": "android", "screen": MESSAGES}
    # Read again, the dialog is on the screen: its Wait is tapped, and the app is back.
    screen = (await client.ok("DUMP_UI"))["screen"]
    assert "Messages isn't responding" in screen
    [wait] = [line for line in screen.splitlines() if '"Wait"' in line]
    await client.ok("TAP", {"ref": wait.split()[0]})
    assert (await front(client))[0] == MESSAGES


async def test_the_check_is_per_caller_and_may_be_opted_out_of(make_client: ServerFactory) -> None:
    client = await make_client()
    await client.ok("DUMP_UI")  # the launcher
    await client.ok("SIM_SHOW_DIALOG", {"kind": "crash", "package": MESSAGES})
    code, _, _ = await failure(client, "TAP", {"x": "540", "y": "1200", **NO_SETTLE})
    assert code == "STALE_SCREEN"
    await client.ok("TAP", {"x": "5", "y": "5", "check_screen": "false", **NO_SETTLE})
    # A swipe by direction is computed from the screen's size, not from what it showed.
    await client.ok("SWIPE", {"direction": "up", **NO_SETTLE})


async def test_close_app_on_a_crash_dialog_stops_the_app(client: Client) -> None:
    await client.ok("OPEN_APP", {"package": MESSAGES})
    await client.ok("SIM_SHOW_DIALOG", {"kind": "crash", "package": MESSAGES})
    screen = (await client.ok("DUMP_UI"))["screen"]
    assert "Messages keeps stopping" in screen
    await client.ok("TAP", {"text": "Close app"})
    assert (await front(client))[0] == LAUNCHER


async def test_the_permission_prompt_is_the_owners_on_the_sim(client: Client) -> None:
    await client.ok("OPEN_APP", {"package": MESSAGES})
    await client.ok("SIM_SHOW_DIALOG", {"kind": "permission", "package": MESSAGES})
    await client.ok("DUMP_UI")
    for params in ({"text": "While using the app"}, {"x": "540", "y": "1200"}):
        code, message, _ = await failure(client, "TAP", {**params, **NO_SETTLE})
        assert code == "PERMISSION_DENIED", message
    assert (await front(client))[0] == "com.google.android.permissioncontroller"


async def test_a_dialog_is_one_event_each_time_it_comes_up(make_client: ServerFactory) -> None:
    client = await make_client()
    stream = client.stub.Subscribe(
        pb.SubscribeRequest(subscriber_id="dialogs", event_types=["SYSTEM_DIALOG"]),
        metadata=(("authorization", f"Bearer {TOKEN}"),),
    )
    got: list[dict[str, Any]] = []

    async def read() -> None:
        async for event in stream:
            got.append(json.loads(event.payload_json))
            if len(got) == 2:
                return

    reader = asyncio.ensure_future(read())
    await client.ok("OPEN_APP", {"package": MESSAGES})
    await client.ok("SIM_SHOW_DIALOG", {"kind": "anr", "package": MESSAGES})
    await client.ok("DUMP_UI")
    await client.ok("DUMP_UI")
    await client.ok("TAP", {"text": "Wait"})  # its settled screen has no dialog
    await client.ok("SIM_SHOW_DIALOG", {"kind": "anr", "package": MESSAGES})
    await client.ok("DUMP_UI")
    await asyncio.wait_for(reader, 10)
    stream.cancel()
    assert got[0] == {
        "kind": "anr",
        "package": MESSAGES,
        "label": "Messages",
        "title": "Messages isn't responding",
        "buttons": ["Close app", "Wait"],
    }
    assert got[1] == got[0]


async def test_error_dialogs_wait_answers_it_on_the_sim(make_client: ServerFactory) -> None:
    client = await make_client(error_dialogs="wait")
    await client.ok("OPEN_APP", {"package": MESSAGES})
    await client.ok("SIM_SHOW_DIALOG", {"kind": "anr", "package": MESSAGES})
    await client.ok("DUMP_UI")  # the runtime finds it there, and presses Wait in the next turn
    answers = client.app.component("error_dialogs")
    assert isinstance(answers, ErrorDialogAnswers)
    await wait_until(lambda: answers.answered == 1, what="the dialog answered with Wait")
    assert (await front(client))[0] == MESSAGES
    assert MESSAGES in await sim(client).running_packages()  # Wait, not Close app
