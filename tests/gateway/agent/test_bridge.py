"""The chat bridge: the owner's messages reach the agent's Subscribe, and its CHAT_* actions
reach every paired device, through the real servers."""

from __future__ import annotations

import asyncio
import json

import pytest

from phoneuse_runtime.gateway.agent import AgentPart
from phoneuse_runtime.gateway.agent.base import agent_of
from phoneuse_runtime.gateway.chat.channels import DEFAULT_CHAT_ID

from ..conftest import GatewayFactory, GatewayServer, IrisClient
from .conftest import Agent, send_text, subscribe, system_message


async def test_a_user_message_reaches_the_agent_as_chat_message(
    server: GatewayServer, app: IrisClient, agent: Agent
) -> None:
    reply = await send_text(app, "what's on my screen?", thread_id="t1")
    event = await agent.event("CHAT_MESSAGE")
    assert event == {
        "chat_id": DEFAULT_CHAT_ID,
        "thread_id": "t1",
        "message_id": reply["payload"]["message_id"],
        "text": "what's on my screen?",
        "media": [],
        "device_id": "test-device",
    }


async def test_a_subscriber_of_every_event_counts_as_an_agent(server: GatewayServer, app: IrisClient) -> None:
    everything = await subscribe(server.grpc)
    try:
        await send_text(app, "hi")
        event = await everything.event("CHAT_MESSAGE")
        assert event["text"] == "hi"
    finally:
        everything.close()


async def test_with_no_agent_the_owner_is_told_so(server: GatewayServer, app: IrisClient) -> None:
    # A subscriber of other events is no agent: nobody would read the message.
    other = await subscribe(server.grpc, "TASK_COMPLETED")
    try:
        await send_text(app, "anyone there?")
        text = await system_message(app)
        assert "No agent is connected" in text
    finally:
        other.close()


async def test_an_agent_that_went_away_is_no_longer_connected(server: GatewayServer, app: IrisClient) -> None:
    gone = await subscribe(server.grpc, "CHAT_MESSAGE")
    gone.close()
    bus = server.app.runtime.bus
    for _ in range(500):  # the server ends the stream when grpc tells it the client cancelled
        if not bus.interested("CHAT_MESSAGE"):
            break
        await asyncio.sleep(0.01)
    await send_text(app, "hello?")
    assert "No agent is connected" in await system_message(app)


async def test_chat_reply_is_an_assistant_message_on_every_device(
    server: GatewayServer, app: IrisClient, agent: Agent
) -> None:
    other = await server.connect()
    asked = (await send_text(app, "hi"))["payload"]["message_id"]
    await other.next("message")  # the owner's own message, on their other device
    result = await server.grpc.ok(
        "CHAT_REPLY",
        {"text": "Hello!", "reply_to": asked, "reasoning": "greet", "model": "m", "tokens": "12"},
    )
    assert result["chat_id"] == DEFAULT_CHAT_ID
    for device in (app, other):
        frame = await device.next("message")
        assert frame["chat_id"] == DEFAULT_CHAT_ID
        payload = frame["payload"]
        assert payload["role"] == "assistant"
        assert payload["message_id"] == result["message_id"]
        assert (payload["text"], payload["reply_to"], payload["reasoning"]) == ("Hello!", asked, "greet")
        assert (payload["model"], payload["tokens"]) == ("m", 12)


async def test_chat_actions_refuse_an_unknown_chat_and_send_nothing(
    server: GatewayServer, app: IrisClient
) -> None:
    code = await server.grpc.fail("CHAT_REPLY", {"text": "x", "chat_id": "android:nope"})
    assert code == "INVALID_PARAMS"
    assert await server.grpc.fail("CHAT_REPLY", {"text": ""}) == "INVALID_PARAMS"
    assert await server.grpc.fail("CHAT_TYPING", {"on": "maybe"}) == "INVALID_PARAMS"
    assert await server.grpc.fail("CHAT_STATUS", {"state": "asleep"}) == "INVALID_PARAMS"
    pong = await app.request("ping")
    assert pong["type"] == "pong"
    assert not [f for f in app.frames if f["type"] == "message"]


async def test_chat_stream_is_start_update_stop(server: GatewayServer, app: IrisClient) -> None:
    started = await server.grpc.ok("CHAT_STREAM", {"op": "start"})
    message_id = started["message_id"]
    await server.grpc.ok("CHAT_STREAM", {"op": "update", "message_id": message_id, "text": "Hel"})
    await server.grpc.ok("CHAT_STREAM", {"op": "update", "message_id": message_id, "text": "Hello"})
    await server.grpc.ok(
        "CHAT_STREAM", {"op": "stop", "message_id": message_id, "reasoning": "why", "tokens": "3"}
    )
    start = await app.next("message.start")
    assert start["payload"] == {"message_id": message_id, "role": "assistant"}
    stop = await app.next("message.stop")
    assert stop["payload"] == {
        "message_id": message_id,
        "final_text": "Hello",
        "reasoning": "why",
        "tokens": 3,
    }
    updates = [f["payload"]["text"] for f in app.received if f["type"] == "message.update"]
    assert updates and updates[-1] == "Hello"
    # The trailing update came before the stop.
    order = [f["type"] for f in app.received]
    assert order.index("message.stop") > max(i for i, t in enumerate(order) if t == "message.update")


async def test_a_stream_must_be_open_to_update_or_stop(server: GatewayServer) -> None:
    assert await server.grpc.fail("CHAT_STREAM", {"op": "update", "message_id": "m-x", "text": "a"}) == (
        "INVALID_PARAMS"
    )
    started = await server.grpc.ok("CHAT_STREAM", {"op": "start"})
    again = {"op": "start", "message_id": started["message_id"]}
    assert await server.grpc.fail("CHAT_STREAM", again) == "INVALID_PARAMS"
    await server.grpc.ok("CHAT_STREAM", {"op": "stop", "message_id": started["message_id"], "text": "x"})
    stop_again = {"op": "stop", "message_id": started["message_id"]}
    assert await server.grpc.fail("CHAT_STREAM", stop_again) == "INVALID_PARAMS"
    assert await server.grpc.fail("CHAT_STREAM", {"op": "pause"}) == "INVALID_PARAMS"


async def test_status_typing_and_commentary(server: GatewayServer, app: IrisClient) -> None:
    await server.grpc.ok("CHAT_STATUS", {"state": "busy", "reason": "tool"})
    assert (await app.next("agent.busy"))["payload"] == {"reason": "tool"}
    await server.grpc.ok("CHAT_STATUS", {"state": "idle"})
    assert (await app.next("agent.idle"))["payload"] == {}
    await server.grpc.ok("CHAT_TYPING", {"on": "true"})
    assert (await app.next("typing"))["payload"] == {"on": True}
    await server.grpc.ok("CHAT_COMMENTARY", {"message_id": "m-1", "text": "looking at the screen"})
    assert (await app.next("commentary"))["payload"] == {"message_id": "m-1", "text": "looking at the screen"}


async def test_chat_actions_are_not_mirrored_as_tools(server: GatewayServer, app: IrisClient) -> None:
    await server.grpc.ok("CHAT_TYPING", {"on": "true"})
    await server.grpc.ok("DUMP_UI")
    end = await app.next("tool.end")
    assert end["payload"]["name"] == "DUMP_UI"
    assert [f["payload"]["name"] for f in app.received if f["type"].startswith("tool.")] == [
        "DUMP_UI",
        "DUMP_UI",
    ]


async def test_chat_actions_never_wait_behind_the_phone(server: GatewayServer, app: IrisClient) -> None:
    # A tap that waits for an element that never appears holds the phone's turn meanwhile.
    tap = asyncio.ensure_future(
        server.grpc.execute("TAP", {"text": "No such button", "wait_ms": "3000"}, timeout_ms=20_000)
    )
    await app.next("tool.start")  # the tap has the phone
    await server.grpc.ok("CHAT_REPLY", {"text": "still here"}, timeout_ms=20_000)
    assert not tap.done()
    assert (await tap).error.startswith("ELEMENT_NOT_FOUND")


async def test_chat_ask_choice_is_answered_by_the_first_device(
    server: GatewayServer, app: IrisClient
) -> None:
    other = await server.connect()
    choices = json.dumps([{"value": "a", "label": "Alpha"}, {"value": "b", "label": "Beta"}])
    asking = asyncio.ensure_future(
        server.grpc.ok("CHAT_ASK", {"kind": "choice", "question": "Which?", "choices": choices})
    )
    picker = await app.next("picker.choice")
    assert (await other.next("picker.choice"))["payload"] == picker["payload"]
    assert picker["payload"]["title"] == "Which?"
    assert picker["payload"]["choices"] == [{"value": "a", "label": "Alpha"}, {"value": "b", "label": "Beta"}]
    picker_id = picker["payload"]["picker_id"]
    wrong = await app.request("picker.select", {"picker_id": picker_id, "value": "c"})
    assert wrong["type"] == "error" and wrong["payload"]["code"] == "unsupported"
    await other.send_frame("picker.select", {"picker_id": picker_id, "value": "b"}, id=99)
    assert await asking == {"value": "b", "via": "iris"}
    late = await app.request("picker.select", {"picker_id": picker_id, "value": "a"})
    assert late["type"] == "error" and late["payload"]["code"] == "not_found"


@pytest.mark.parametrize(
    ("kind", "frame_type"), [("clarify", "picker.clarify"), ("confirm", "picker.confirm")]
)
async def test_chat_ask_clarify_and_confirm(
    server: GatewayServer, app: IrisClient, kind: str, frame_type: str
) -> None:
    asking = asyncio.ensure_future(server.grpc.ok("CHAT_ASK", {"kind": kind, "question": "Which city?"}))
    picker = await app.next(frame_type)
    assert "Which city?" in json.dumps(picker["payload"])
    await app.send_frame("picker.select", {"picker_id": picker["payload"]["picker_id"], "value": "Lyon"})
    assert (await asking)["value"] == "Lyon"


async def test_chat_ask_without_an_answer_times_out(server: GatewayServer, app: IrisClient) -> None:
    response = await server.grpc.execute("CHAT_ASK", {"kind": "clarify", "question": "?"}, timeout_ms=300)
    assert response.error.startswith("TIMEOUT")
    picker = await app.next("picker.clarify")
    late = await app.request("picker.select", {"picker_id": picker["payload"]["picker_id"], "value": "x"})
    assert late["payload"]["code"] == "not_found"


async def test_chat_ask_refuses_bad_choices(server: GatewayServer) -> None:
    assert await server.grpc.fail("CHAT_ASK", {"kind": "choice", "question": "?"}) == "INVALID_PARAMS"
    twice = json.dumps([{"value": "a", "label": "A"}, {"value": "a", "label": "B"}])
    assert await server.grpc.fail("CHAT_ASK", {"kind": "choice", "question": "?", "choices": twice}) == (
        "INVALID_PARAMS"
    )
    assert await server.grpc.fail("CHAT_ASK", {"kind": "choice", "question": "?", "choices": "[1"}) == (
        "INVALID_PARAMS"
    )


async def test_picker_select_of_nothing_is_not_found(app: IrisClient) -> None:
    answer = await app.request("picker.select", {"picker_id": "nope", "value": "a"})
    assert answer["payload"]["code"] == "not_found"
    shapeless = await app.request("picker.select", {"picker_id": 5})
    assert shapeless["payload"]["code"] == "unsupported"


async def test_agent_stop_is_an_event_and_answered_idle(
    server: GatewayServer, app: IrisClient, agent: Agent
) -> None:
    other = await server.connect()
    idle = await app.request("agent.stop", thread_id="t2")
    assert idle["type"] == "agent.idle"
    assert await agent.event("AGENT_STOP") == {
        "chat_id": DEFAULT_CHAT_ID,
        "thread_id": "t2",
        "device_id": "test-device",
    }
    assert (await other.next("agent.idle"))["payload"] == {}


async def test_agent_steer_is_an_event(server: GatewayServer, app: IrisClient, agent: Agent) -> None:
    await app.send_frame("agent.steer", {"text": "use the other app"})
    event = await agent.event("AGENT_STEER")
    assert (event["text"], event["chat_id"], event["thread_id"]) == ("use the other app", DEFAULT_CHAT_ID, "")


async def test_agent_steer_needs_an_agent_and_text(app: IrisClient) -> None:
    nobody = await app.request("agent.steer", {"text": "hello"})
    assert nobody["type"] == "error" and nobody["payload"]["code"] == "unsupported"
    empty = await app.request("agent.steer", {"text": "  "})
    assert empty["payload"]["code"] == "unsupported"


async def test_agent_frames_for_an_unknown_chat_are_not_found(app: IrisClient, agent: Agent) -> None:
    stop = await app.request("agent.stop", chat_id="android:nope")
    assert stop["type"] == "error" and stop["payload"]["code"] == "not_found"


async def test_a_stream_stays_in_its_chat(server: GatewayServer) -> None:
    started = await server.grpc.ok("CHAT_STREAM", {"op": "start", "thread_id": "t1"})
    elsewhere = {"op": "update", "message_id": started["message_id"], "text": "a", "chat_id": "android:other"}
    assert await server.grpc.fail("CHAT_STREAM", elsewhere) == "INVALID_PARAMS"
    other_thread = {"op": "update", "message_id": started["message_id"], "text": "a", "thread_id": "t2"}
    assert await server.grpc.fail("CHAT_STREAM", other_thread) == "INVALID_PARAMS"
    same = {"op": "update", "message_id": started["message_id"], "text": "a", "thread_id": "t1"}
    assert (await server.grpc.ok("CHAT_STREAM", same))["chat_id"] == DEFAULT_CHAT_ID


async def test_a_call_that_only_mentions_a_chat_action_is_still_a_tool(
    server: GatewayServer, app: IrisClient
) -> None:
    await server.grpc.ok("SET_CLIPBOARD", {"text": '"action_type": "CHAT_REPLY"'})
    start = await app.next("tool.start")
    assert start["payload"]["name"] == "SET_CLIPBOARD"
    assert start["payload"]["args"] == {"text": '"action_type": "CHAT_REPLY"'}


async def test_an_open_question_is_asked_again_of_a_device_that_reconnects(server: GatewayServer) -> None:
    token = server.pair().token
    first = await server.connect(token)
    asking = asyncio.ensure_future(server.grpc.ok("CHAT_ASK", {"kind": "clarify", "question": "Where to?"}))
    shown = await first.next("picker.clarify")
    await first.close()
    again = await server.connect(token)
    replayed = await again.next("picker.clarify")
    assert replayed["payload"] == shown["payload"]
    await again.send_frame("picker.select", {"picker_id": replayed["payload"]["picker_id"], "value": "home"})
    assert (await asking)["value"] == "home"


async def test_an_open_question_fails_plainly_when_the_gateway_stops(
    server: GatewayServer, app: IrisClient
) -> None:
    asking = asyncio.ensure_future(server.grpc.execute("CHAT_ASK", {"kind": "confirm", "question": "Sure?"}))
    await app.next("picker.confirm")
    await agent_of(server.gateway).stop()  # what the gateway's stop does to its parts
    response = await asking
    assert (
        response.error.startswith("DEVICE_UNAVAILABLE")
        and "stopped before the owner answered" in response.error
    )


async def test_the_agent_part_needs_the_chat_part(make_gateway: GatewayFactory) -> None:
    with pytest.raises(RuntimeError, match="needs the chat part"):
        await make_gateway(parts=[AgentPart()])
