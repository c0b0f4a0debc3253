"""`--device termux` over gRPC, every action and query it serves through Termux:API, against the
fake `termux-*` commands (no self-adb: self_adb is off)."""

from __future__ import annotations

import asyncio
import json

import grpc
import pytest

from phoneuse_runtime.rpc import protocol_pb2 as pb
from tests.device.termux.conftest import TermuxServe
from tests.fakes.termux.state import FakeTermux
from tests.waiting import wait_until


async def test_send_message_is_sent_and_verified_in_the_sent_box(
    serve_termux: TermuxServe, termux: FakeTermux
) -> None:
    client = await serve_termux()
    result = await client.ok("SEND_MESSAGE", {"to": "alice", "body": "On my way 🚲"})
    state = termux.state()
    assert state["sent_log"] == [{"numbers": ["+14155550101"], "body": "On my way 🚲"}]
    sent = [m for m in state["sms"] if m["type"] == "sent" and m["body"] == "On my way 🚲"]
    assert result["verified"] is True and result["verify_error"] is None
    assert result["message_id"] == str(sent[0]["_id"]) and result["contact"] == "Alice Johnson"
    assert result["via"] == "termux-sms-send"


async def test_a_body_termux_api_trims_is_still_verified(
    serve_termux: TermuxServe, termux: FakeTermux
) -> None:
    client = await serve_termux()
    result = await client.ok("SEND_MESSAGE", {"to": "+14155550102", "body": "  padded\n"})
    assert result["verified"] is True
    stored = next(m for m in termux.state()["sms"] if str(m["_id"]) == result["message_id"])
    assert stored["body"] == "padded"  # WithStringInput.trimInput(): the app sends it trimmed


async def test_a_silent_send_failure_answers_unverified(
    serve_termux: TermuxServe, termux: FakeTermux
) -> None:
    termux.update(lambda s: s.update(sms_send="silent"))
    client = await serve_termux()
    result = await client.ok("SEND_MESSAGE", {"to": "+14155550102", "body": "hello"}, timeout_ms=3000)
    assert result["verified"] is False and result["message_id"] is None
    assert "no matching message reached the sent store" in result["verify_error"]
    assert termux.state()["sent_log"][0]["numbers"] == ["+14155550102"]


async def test_a_look_at_the_sent_box_that_never_ends_answers_unverified_by_the_deadline(
    serve_termux: TermuxServe, termux: FakeTermux
) -> None:
    """The verification's looks (termux-sms-list) end before the call's deadline whatever one
    costs: a look that never returns is cut, and the send answers unverified, not TIMEOUT."""
    termux.update(lambda s: s.update(sms_send="silent"))
    client = await serve_termux()
    call = asyncio.create_task(
        client.execute("SEND_MESSAGE", {"to": "+14155550102", "body": "hello"}, timeout_ms=3000)
    )
    sent = lambda: any(run[0] == "termux-sms-send" for run in termux.state()["runs"])  # noqa: E731
    await wait_until(sent, what="termux-sms-send to run")
    termux.update(lambda s: s.update(hang=["termux-sms-list"]))  # every look from now on hangs
    response = await call
    assert response.success, response.error
    result = json.loads(response.result_json)
    assert result["verified"] is False and "no matching message" in result["verify_error"], result


async def test_a_send_that_lands_in_the_failed_box_is_device_unavailable(
    serve_termux: TermuxServe, termux: FakeTermux
) -> None:
    termux.update(lambda s: s.update(sms_send="failed"))
    client = await serve_termux()
    assert await client.fail("SEND_MESSAGE", {"to": "+14155550102", "body": "hello"}) == "DEVICE_UNAVAILABLE"


async def test_contacts_query_reads_termux_contact_list(serve_termux: TermuxServe) -> None:
    client = await serve_termux()
    rows, total, more = await client.query(pb.CONTACTS, {"name": "bob"})
    assert [r["name"] for r in rows] == ["Bob Smith", "Bobby Tables"] and total == 2 and not more
    assert rows[0]["phones"] == ["+1 415 555 0102"] and rows[0]["id"].startswith("t")
    again, _, _ = await client.query(pb.CONTACTS, {"id": rows[0]["id"]})
    assert [r["name"] for r in again] == ["Bob Smith"]  # the same row has the same id every time
    by_phone, _, _ = await client.query(pb.CONTACTS, {"phone": "5550103"})
    assert [r["name"] for r in by_phone] == ["Bobby Tables"]


async def test_make_call_dials_through_termux_and_infers_the_state(
    serve_termux: TermuxServe, termux: FakeTermux
) -> None:
    client = await serve_termux()
    result = await client.ok("MAKE_CALL", {"to": "Bob Smith"})
    assert termux.state()["dialed"] == ["+1 415 555 0102"]
    assert result == {
        "number": "+1 415 555 0102",
        "contact": "Bob Smith",
        "state": "offhook",
        "via": "termux-telephony-call",
    }


async def test_end_call_needs_the_phones_own_adb(serve_termux: TermuxServe) -> None:
    client = await serve_termux()
    response = await client.execute("END_CALL")
    assert not response.success and response.error.startswith("UNSUPPORTED: hanging up")
    assert "wireless debugging" in response.error


async def test_clipboard_set_and_read_back(serve_termux: TermuxServe, termux: FakeTermux) -> None:
    client = await serve_termux()
    result = await client.ok("SET_CLIPBOARD", {"text": "  two\nlines ✓ "})
    assert result == {"length": 14, "verified": True, "via": "termux-clipboard-set"}
    assert termux.state()["clipboard"] == "  two\nlines ✓ "


async def test_open_url_without_adb_goes_through_termux_open_url(
    serve_termux: TermuxServe, termux: FakeTermux
) -> None:
    client = await serve_termux()
    result = await client.ok("OPEN_URL", {"url": "https://example.com/a?b=c"})
    assert result["via"] == "termux-open-url" and termux.state()["opened_urls"] == [
        "https://example.com/a?b=c"
    ]
    code = await client.fail("START_INTENT", {"action": "android.intent.action.MAIN", "package": "com.x"})
    assert code == "UNSUPPORTED"
    assert termux.state()["opened_urls"] == ["https://example.com/a?b=c"]  # nothing else was run


@pytest.mark.parametrize(
    ("action", "params"),
    [
        ("TAP", {"x": "10", "y": "10"}),
        ("SCREENSHOT", {}),
        ("DUMP_UI", {}),
        ("CREATE_EVENT", {"title": "x", "start": "2030-01-01T10:00:00Z", "end": "2030-01-01T11:00:00Z"}),
        ("SHELL", {"command": "id"}),
    ],
)
async def test_ui_and_adb_actions_are_unsupported_with_a_hint_without_self_adb(
    serve_termux: TermuxServe, termux: FakeTermux, action: str, params: dict[str, str]
) -> None:
    client = await serve_termux(allow_shell=True)
    runs_before = len(termux.state()["runs"])
    response = await client.execute(action, params)
    assert not response.success and response.error.startswith("UNSUPPORTED: ")
    assert "the phone's own adb" in response.error and "Wireless debugging" in response.error
    assert "self_adb = off turns off: set it to auto (--self-adb auto)" in response.error
    assert len(termux.state()["runs"]) == runs_before  # refused before any handler ran a command


async def test_open_app_needs_self_adb(serve_termux: TermuxServe) -> None:
    client = await serve_termux()
    response = await client.execute("OPEN_APP", {"name": "Chrome"})
    assert response.error.startswith("UNSUPPORTED: listing apps needs the phone's own adb")


async def test_add_contact_and_app_state_need_self_adb(serve_termux: TermuxServe, termux: FakeTermux) -> None:
    client = await serve_termux()
    response = await client.execute("ADD_CONTACT", {"name": "Carol", "phone": "+15550100"})
    assert response.error.startswith(
        "UNSUPPORTED: adding a contact (Termux:API cannot) needs the phone's own adb"
    )
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await client.query(pb.APP_STATE)
    assert raised.value.code() == grpc.StatusCode.UNIMPLEMENTED
    assert "listing apps needs the phone's own adb" in (raised.value.details() or "")
    assert {"Carol"} - {c["name"] for c in termux.state()["contacts"]} == {"Carol"}
