"""A property test: random and malformed frames never close the connection nor change what is
stored; the server still answers `ping` afterwards."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from phoneuse_runtime.gateway.db import db_path

from .conftest import SCHEMA, GatewayFactory, GatewayServer, IrisClient

APP_TYPES: dict[str, Any] = SCHEMA["frame_types"]["app_to_server"]
SERVER_TYPES = sorted(SCHEMA["frame_types"]["server_to_app"])
VOLATILE = {"last_seen_ms"}  # a hello moves it; nothing a frame may

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
not_objects = json_values.filter(lambda v: not isinstance(v, dict))


def _wrong_value(spec: dict[str, Any]) -> st.SearchStrategy[Any]:
    """A value of another type than the schema's property `spec` allows."""
    kind = spec.get("type")
    kinds = set(kind) if isinstance(kind, list) else {kind}
    choices: list[st.SearchStrategy[Any]] = []
    if not kinds & {"string"}:
        choices.append(st.text(max_size=10))
    if not kinds & {"integer", "number"}:
        choices.append(st.integers())
    if "boolean" not in kinds:
        choices.append(st.booleans().map(lambda b: [b]))
    if "object" not in kinds:
        choices.append(st.just({"nested": ["x"]}))
    return st.one_of(choices)


@st.composite
def wrong_payload(draw: st.DrawFn) -> dict[str, Any]:
    """An app frame of a known type whose payload has at least one field of the wrong type."""
    frame_type = draw(st.sampled_from(sorted(t for t, s in APP_TYPES.items() if s.get("payload"))))
    props: dict[str, Any] = APP_TYPES[frame_type]["payload"]
    broken = draw(st.sampled_from(sorted(props)))
    payload = {broken: draw(_wrong_value(props[broken]))}
    return {"v": 1, "id": draw(st.integers(0, 2**31)), "type": frame_type, "payload": payload}


def envelope(**fields: st.SearchStrategy[Any]) -> st.SearchStrategy[str]:
    return st.fixed_dictionaries(fields).map(json.dumps)


known_types = st.sampled_from(sorted(APP_TYPES) + SERVER_TYPES)
frames = st.one_of(
    st.text(max_size=60),  # mostly not JSON at all
    st.binary(max_size=60),
    not_objects.map(json.dumps),
    envelope(v=json_values.filter(lambda v: v != 1 or isinstance(v, bool)), type=known_types),
    envelope(v=st.just(1), type=known_types, payload=not_objects),
    envelope(v=st.just(1), type=st.text(max_size=15).filter(lambda t: t not in APP_TYPES)),
    envelope(v=st.just(1), type=known_types, id=json_values.filter(lambda v: not isinstance(v, int))),
    envelope(v=st.just(1), type=known_types, chat_id=json_values.filter(lambda v: not isinstance(v, str))),
    wrong_payload().map(json.dumps),
)


def stored(server: GatewayServer) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every gateway table, less the columns a hello updates."""
    conn = sqlite3.connect(db_path(server.data_dir))
    try:
        tables = [
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
        ]
        out: dict[str, list[tuple[Any, ...]]] = {}
        for table in sorted(tables):
            cursor = conn.execute(f'SELECT * FROM "{table}"')
            keep = [i for i, d in enumerate(cursor.description) if d[0] not in VOLATILE]
            out[table] = sorted((tuple(row[i] for i in keep) for row in cursor), key=repr)
        return out
    finally:
        conn.close()


@dataclass
class Target:
    server: GatewayServer
    client: IrisClient
    before: dict[str, list[tuple[Any, ...]]]


@pytest.fixture
async def target(make_gateway: GatewayFactory) -> Target:
    """One server and one connection for all the examples (a connection that survives them all
    is the point), with something already stored."""
    server = await make_gateway(gateway_max_frames_per_second=100_000)
    client = await server.connect()
    await server.gateway.broadcast("notification", {"kind": "generic", "title": "kept", "body": "", "ts": 1})
    await client.next("notification")
    return Target(server, client, stored(server))


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(batch=st.lists(frames, min_size=1, max_size=8))
async def test_random_and_malformed_frames_change_nothing(target: Target, batch: list[str | bytes]) -> None:
    client = target.client
    for frame in batch:
        await client.send_raw(frame)
    pong = await client.request("ping")
    assert pong["type"] == "pong"
    answers = [f for f in client.frames if f["type"] != "notification"]
    assert all(f["type"] == "error" for f in answers), answers
    assert all(f["payload"]["code"] in ("unsupported", "not_found") for f in answers), answers
    client.frames.clear()
    assert client.ws.close_code is None
    assert stored(target.server) == target.before
