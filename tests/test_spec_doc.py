"""docs/protocol_spec.md is generated from the models and must not go stale."""

from __future__ import annotations

from pathlib import Path

from phoneuse_runtime.app import served_spec
from phoneuse_runtime.kernel.capabilities import CAPABILITIES
from phoneuse_runtime.kernel.errors import FAILURES
from phoneuse_runtime.kernel.registry import build_registry

DOC = Path(__file__).resolve().parent.parent / "docs" / "protocol_spec.md"


def test_spec_is_up_to_date() -> None:
    assert DOC.read_text(encoding="utf-8") == served_spec(), (
        "docs/protocol_spec.md is stale: run `phoneuse-runtime spec --output docs/protocol_spec.md`"
    )


def test_spec_documents_everything() -> None:
    text = served_spec()
    registry = build_registry()
    for name in registry.actions:
        assert f"### {name}\n" in text
    for name in registry.queries:
        assert f"### {name}\n" in text
    for event_type in registry.events:
        assert f"### {event_type}\n" in text
    for name in ("TASK_STARTED", "APPROVAL_REQUESTED", "APPROVAL_RESOLVED"):
        assert name in registry.events
    for capability in CAPABILITIES:
        assert f"| `{capability}` |" in text
    for failure in FAILURES:
        assert f"| `{failure.code}` |" in text
    assert "EVENTS_DROPPED" in text
    assert "Requires: `ui`." in text


def test_spec_documents_what_serve_serves_and_promises_nothing_that_is_there() -> None:
    """Every action and event type of serve's registry (the gateway's CHAT_*, CHAT_MESSAGE,
    AGENT_STOP, AGENT_STEER), and no "later" for the gateway or paired devices, which exist."""
    from phoneuse_runtime.app import served_registry
    from phoneuse_runtime.config.settings import Settings

    text = served_spec()
    registry = served_registry(Settings())
    for name in [*registry.actions, *registry.events]:
        assert f"### {name}\n" in text
    served = {*registry.actions, *registry.events}
    assert {"CHAT_REPLY", "CHAT_MESSAGE", "AGENT_STOP", "AGENT_STEER"} <= served
    for stale in ("the Iris gateway later", "a paired app device later"):
        assert stale not in text
    assert "`device:PAIRING_ID` for a paired app device" in text
