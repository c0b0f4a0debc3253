"""docs/protocol_spec.md is generated from the models and must not go stale."""

from __future__ import annotations

from pathlib import Path

from phoneuse_runtime.capabilities import CAPABILITIES
from phoneuse_runtime.errors import FAILURES
from phoneuse_runtime.registry import build_registry
from phoneuse_runtime.spec import render_spec

DOC = Path(__file__).resolve().parent.parent / "docs" / "protocol_spec.md"


def test_spec_is_up_to_date() -> None:
    assert DOC.read_text(encoding="utf-8") == render_spec(), (
        "docs/protocol_spec.md is stale: run `phoneuse-runtime spec --output docs/protocol_spec.md`"
    )


def test_spec_documents_everything() -> None:
    text = render_spec()
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
