"""The handler table: one handler per frame type, across the gateway's core and its parts."""

from __future__ import annotations

import pytest

from phoneuse_runtime.gateway import core
from phoneuse_runtime.gateway.dispatch import Empty, Handlers
from phoneuse_runtime.gateway.protocol import Request, never_dropped
from phoneuse_runtime.gateway.server import default_parts
from phoneuse_runtime.gateway.session import Session


async def _nothing(session: Session, request: Request, payload: Empty) -> None:
    return None


def test_a_frame_type_handled_twice_is_refused() -> None:
    table = Handlers()
    table.on("x.y", Empty)(_nothing)
    with pytest.raises(ValueError, match="two handlers"):
        table.on("x.y", Empty)(_nothing)
    other = Handlers()
    other.on("x.y", Empty)(_nothing)
    with pytest.raises(ValueError, match="two handlers"):
        Handlers.merged([table, other])


def test_the_served_tables_merge_without_clashes() -> None:
    merged = Handlers.merged([core.HANDLERS, *(p.handlers for p in default_parts())])
    assert {"hello", "ping", "sync", "fcm.register"} <= set(merged.frames)


@pytest.mark.parametrize(
    ("frame_type", "kept"),
    [
        ("message", True),
        ("message.stop", True),
        ("picker.approval", True),
        ("channel.created", True),
        ("tool.end", True),
        ("message.update", False),
        ("tool.progress", False),
        ("typing", False),
        ("pong", False),
    ],
)
def test_never_dropped_follows_the_schema(frame_type: str, kept: bool) -> None:
    assert never_dropped(frame_type) is kept


def test_never_dropped_is_exactly_the_schemas_list() -> None:
    from .conftest import SCHEMA

    listed = SCHEMA["reliability"]["never_dropped"]
    for frame_type in SCHEMA["frame_types"]["server_to_app"]:
        expected = any(
            frame_type == entry or (entry.endswith(".*") and frame_type.startswith(entry[:-1]))
            for entry in listed
        )
        assert never_dropped(frame_type) is expected, frame_type
