"""The approval text (issue 16, finding 9): the agent pads and disguises a held call's params so
that the owner approves what they did not read; the Iris app shows the target first, uncut and
stripped of what hides it."""

from __future__ import annotations

from ..gateway.agent.test_approvals import _held
from ..gateway.conftest import GatewayServer, IrisClient


async def test_the_approval_shows_the_recipient_first_and_uncut(
    server: GatewayServer, app: IrisClient
) -> None:
    """An agent with a valid token pads and disguises a held SEND_MESSAGE's recipient.

    A padded `body` sent first no longer pushes `to` past the cut; bidi and control
    characters cannot disguise it; the whole call is in the frame. A recipient disguised with
    them is no number and no contact: refused before anyone is asked (issue 28, item 8)."""
    disguised = await server.grpc.execute("SEND_MESSAGE", {"body": "hi", "to": "+1900555\u202e0199"})
    assert disguised.error.startswith("INVALID_PARAMS: no contact named"), disguised.error
    body = "See you at 8, love you " + "x" * 400 + "\u202e\x1b[2J"
    to = "+19005550199"
    call = _held(server, {"body": body, "to": to})
    picker = (await app.next("picker.approval"))["payload"]
    assert picker["command"].startswith("SEND_MESSAGE to=+19005550199 body=See you at 8")
    assert len(picker["command"]) <= 200 and picker["command"].endswith("…")
    assert "\u202e" not in picker["command"] and "\x1b" not in picker["command"]
    assert picker["description"].startswith("agent asks to send an SMS")
    assert "to=+19005550199" in picker["description"]
    assert picker["action"] == "SEND_MESSAGE" and picker["target"] == "to=+19005550199"
    assert picker["params"] == {"to": "+19005550199", "body": "See you at 8, love you " + "x" * 400 + "[2J"}
    assert list(picker["params"]) == ["to", "body"]  # the target first
    await app.send_frame("picker.select", {"picker_id": picker["picker_id"], "value": "deny"})
    assert (await call).error.startswith("DENIED")
