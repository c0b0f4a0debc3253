"""Capabilities: what a device lacks answers UNSUPPORTED, with the way to get it, before params are
looked at or a handler runs; for actions and queries alike."""

from __future__ import annotations

from phoneuse_runtime.device.sim.device import SimDevice
from phoneuse_runtime.kernel.capabilities import CAPABILITIES, EVERYTHING

from .frontend import FrontEnd, FrontEndFactory, ok, refused


def lacking(*capabilities: str) -> SimDevice:
    device = SimDevice()
    device.capabilities = EVERYTHING - set(capabilities)
    return device


def hint(capability: str) -> str:
    return f"this device (sim) lacks the {capability!r} capability: {CAPABILITIES[capability][1]}"


async def test_an_action_the_device_cannot_do_is_unsupported_with_a_hint(
    make_frontend: FrontEndFactory,
) -> None:
    frontend: FrontEnd = await make_frontend(device=lacking("sim", "ui"))  # a phone reached without adb, say
    answer = await frontend.execute("SIM_RECEIVE_SMS", {"from": "+14155550101", "body": "hi"})
    assert answer.error == (
        "UNSUPPORTED: SIM_RECEIVE_SMS: this device (sim) lacks the 'sim' capability: use --device sim"
    )
    tap = await frontend.execute("TAP", {"x": "1", "y": "2"})
    assert tap.error == f"UNSUPPORTED: TAP: {hint('ui')}"
    assert "wireless debugging" in tap.error
    # Checked before the params: even a bad call learns first that it cannot run here.
    assert (await frontend.execute("TAP", {"bogus": "1"})).error == tap.error
    assert (await frontend.execute("SET_CLIPBOARD", {"text": "still fine"})).success


async def test_a_query_the_device_cannot_answer_is_unsupported_with_a_hint(
    make_frontend: FrontEndFactory,
) -> None:
    frontend = await make_frontend(device=lacking("contacts", "ui"))
    refusal = await refused(frontend.query("CONTACTS", {"name": "bob"}))
    assert refusal.error == f"UNSUPPORTED: CONTACTS: {hint('contacts')}"
    assert (await refused(frontend.query("CONTACTS", {"colour": "red"}))).error == refusal.error
    # A need that depends on the filters is the handler's to check.
    with_ui = await refused(frontend.query("APP_STATE", {"include_ui": "true"}))
    assert with_ui.error == f"UNSUPPORTED: APP_STATE: {hint('ui')}"
    unknown = await refused(frontend.query("APP_STATE", {"include_ui": "true", "package": "com.nowhere"}))
    assert unknown.error == with_ui.error  # checked before the filters narrow anything
    [front] = (await frontend.query("APP_STATE", limit=1)).results
    assert front["foreground"] is True and front["ui_fingerprint"] is None  # no UI, no fingerprint
    added = await frontend.execute("ADD_CONTACT", {"name": "x"})
    assert added.error == f"UNSUPPORTED: ADD_CONTACT: {hint('contacts')}"
    assert (await ok(frontend, "REMEMBER", {"name": "needs nothing"}))["via"] == "memory"
