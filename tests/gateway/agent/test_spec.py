"""The generated spec documents what the agent part contributes."""

from __future__ import annotations

from phoneuse_runtime.app import served_spec
from phoneuse_runtime.gateway.agent.actions import CHAT_ACTIONS
from phoneuse_runtime.gateway.agent.events import EVENTS


def test_the_spec_documents_the_chat_actions_events_and_the_approval_policy() -> None:
    text = served_spec()
    for name in CHAT_ACTIONS:
        assert f"### {name}\n" in text
    for event in EVENTS:
        assert f"### {event.model_fields['event_type'].default}\n" in text
    assert "### owner-approval\n" in text
    assert "### SIM_SET_CONNECTED\n" in text
