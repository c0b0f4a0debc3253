"""The JetStream event sink through the real server: events published by a runtime's Executes
land in a real nats-server's file-backed stream, in order, once each, and a runtime that cannot
reach NATS keeps serving and catches up when it is back, within its documented buffer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nats
import pytest

from phoneuse_runtime.config.settings import ConfigError
from phoneuse_runtime.nats.server_process import NatsServer
from phoneuse_runtime.nats.sink import STREAM, JetStreamSink
from phoneuse_runtime.nats.spool import SPOOL_FILE, Pending, Spool

from .conftest import Runtime, RuntimeFactory, eventually


async def stream_messages(url: str) -> list[tuple[int, str, dict[str, str], dict[str, Any]]]:
    """Every message of the events stream: (seq, subject, headers, body)."""
    from nats.js.errors import NotFoundError

    nc = await nats.connect(url)
    try:
        js = nc.jetstream()
        try:
            info = await js.stream_info(STREAM)
        except NotFoundError:
            return []
        out: list[tuple[int, str, dict[str, str], dict[str, Any]]] = []
        if not info.state.messages:  # made by the sink, nothing in it yet: there is no seq 0 to get
            return out
        for seq in range(info.state.first_seq, info.state.last_seq + 1):
            msg = await js.get_msg(STREAM, seq)
            out.append((seq, msg.subject or "", dict(msg.headers or {}), json.loads(msg.data or b"{}")))
        return out
    finally:
        await nc.close()


def sink_of(runtime: Runtime) -> JetStreamSink:
    sink = runtime.app.components["nats-events"]
    assert isinstance(sink, JetStreamSink)
    return sink


async def sms(runtime: Runtime, n: int, *, start: int = 0) -> None:
    for i in range(start, start + n):
        await runtime.ok("agent", "SIM_RECEIVE_SMS", {"from": "+15550100", "body": f"m{i}"})


def bodies(messages: list[tuple[int, str, dict[str, str], dict[str, Any]]], event_type: str) -> list[str]:
    return [b["payload"]["body"] for _, _, _, b in messages if b["event_type"] == event_type]


async def test_every_event_lands_in_the_stream_under_its_subject_with_a_dedup_id(
    nats_srv: NatsServer, make_runtime: RuntimeFactory
) -> None:
    phone = await make_runtime(device_name="p1", nats_url=nats_srv.url)
    await sms(phone, 5)
    sink = sink_of(phone)

    async def acked() -> bool:
        return sink.accepted > 0 and sink.buffered == 0

    await eventually(acked, what="the sink's events acked")
    messages = await stream_messages(nats_srv.url)
    assert len(messages) == sink.accepted == sink.acked
    assert bodies(messages, "MESSAGE_RECEIVED") == [f"m{i}" for i in range(5)]
    for _, subject, headers, body in messages:
        assert subject == f"phoneuse.p1.{body['event_type']}"
        assert headers["Nats-Msg-Id"] == body["id"] and body["device"] == "p1"
        assert isinstance(body["payload"], dict) and body["timestamp"] > 0 and body["source"]
    ids = [int(body["id"].rsplit(".", 1)[1]) for *_, body in messages]
    assert ids == list(range(1, len(ids) + 1))  # in the order accepted, none twice
    types = {body["event_type"] for *_, body in messages}
    assert {"TASK_STARTED", "TASK_COMPLETED", "MESSAGE_RECEIVED"} <= types
    nc = await nats.connect(nats_srv.url)
    info = await nc.jetstream().stream_info(STREAM)
    await nc.close()
    assert (
        info.config.subjects == ["phoneuse.>"]
        and str(getattr(info.config.storage, "value", info.config.storage)) == "file"
    )


async def test_a_runtime_without_nats_keeps_serving_and_catches_up_in_order(
    tmp_path: Path, make_runtime: RuntimeFactory
) -> None:
    server = NatsServer(tmp_path / "nats")
    url = await server.start()
    await server.stop()  # not running when the runtime starts
    phone = await make_runtime(device_name="p1", nats_url=url)
    await sms(phone, 10)  # Execute works meanwhile
    sink = sink_of(phone)
    assert sink.acked == 0 and sink.buffered == sink.accepted > 0
    await server.start()  # the same port and store
    try:

        async def caught_up() -> bool:
            return sink.buffered == 0

        await eventually(caught_up, timeout_s=15, what="the buffered events published")
        messages = await stream_messages(url)
        assert bodies(messages, "MESSAGE_RECEIVED") == [f"m{i}" for i in range(10)]
        assert len(messages) == sink.accepted and sink.dropped == 0
        assert not (phone.settings.data_dir / SPOOL_FILE).exists()  # the spool went once all was acked
    finally:
        await server.stop()


async def test_events_during_a_nats_restart_appear_once_in_order(
    nats_srv: NatsServer, make_runtime: RuntimeFactory
) -> None:
    phone = await make_runtime(device_name="p1", nats_url=nats_srv.url)
    sink = sink_of(phone)
    await sms(phone, 3)

    async def drained() -> bool:
        return sink.buffered == 0

    await eventually(drained, what="the first events acked")
    await nats_srv.stop()
    await sms(phone, 4, start=3)
    await nats_srv.start()
    await eventually(drained, timeout_s=15, what="the events of the outage acked")
    await sms(phone, 2, start=7)
    await eventually(drained, what="the last events acked")
    messages = await stream_messages(nats_srv.url)
    assert bodies(messages, "MESSAGE_RECEIVED") == [f"m{i}" for i in range(9)]
    ids = [body["id"] for *_, body in messages]
    assert len(ids) == len(set(ids)) == sink.accepted  # a re-publish is stored once


async def test_past_the_buffer_the_oldest_are_dropped_counted_and_announced(
    tmp_path: Path, make_runtime: RuntimeFactory
) -> None:
    server = NatsServer(tmp_path / "nats")
    url = await server.start()
    await server.stop()
    phone = await make_runtime(device_name="p1", nats_url=url, nats_buffer_events=6)
    await sms(phone, 10)  # 3 events each: 30 events, 6 kept
    sink = sink_of(phone)
    assert sink.buffered == 6 and sink.dropped == sink.accepted - 6
    dropped, accepted = sink.dropped, sink.accepted
    await server.start()
    try:

        async def announced() -> bool:
            messages = await stream_messages(url)
            return any(b["payload"].get("code") == "EVENTS_DROPPED" for *_, b in messages)

        await eventually(announced, timeout_s=15, what="the drop announced in the stream")
        messages = await stream_messages(url)
        kept = [b for *_, b in messages[:6]]
        assert [int(b["id"].rsplit(".", 1)[1]) for b in kept] == list(
            range(accepted - 5, accepted + 1)
        )  # the newest
        notice = next(b for *_, b in messages if b["payload"].get("code") == "EVENTS_DROPPED")
        assert notice["event_type"] == "ERROR" and notice["payload"]["message"].startswith(
            f"{dropped} event(s)"
        )
    finally:
        await server.stop()


@pytest.mark.parametrize("size", ["0", "-1"])
def test_a_buffer_of_no_events_is_a_config_error(tmp_path: Path, size: str) -> None:
    from phoneuse_runtime.config.settings import ConfigError, load_settings

    with pytest.raises(ConfigError, match=r"nats_buffer_events \(flag\): must be greater than 0"):
        load_settings({"data_dir": tmp_path, "nats_buffer_events": size})


async def test_without_the_spool_nothing_is_written(tmp_path: Path, make_runtime: RuntimeFactory) -> None:
    server = NatsServer(tmp_path / "nats")
    url = await server.start()
    await server.stop()
    phone = await make_runtime(device_name="p1", nats_url=url, nats_spool=False)
    await sms(phone, 2)
    assert sink_of(phone).buffered > 0
    assert not (phone.settings.data_dir / SPOOL_FILE).exists()


def test_a_spool_cut_short_by_a_kill_gives_what_it_holds_after_the_last_ack(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "s" / SPOOL_FILE, bound=3)
    items = [Pending(f"p1.r.{n}", "phoneuse.p1.X", b'{"n":%d}' % n) for n in range(1, 7)]
    spool.begin(items[:2])
    spool.acked("p1.r.2")
    spool.append(items[2:])
    spool.close()
    with open(spool.path, "ab") as f:
        f.write(b'{"id": "p1.r.7", "subj')  # a kill mid-write
    assert [p.msg_id for p in spool.load()] == ["p1.r.4", "p1.r.5", "p1.r.6"]  # the newest 3 (its bound)
    assert (spool.path.stat().st_mode & 0o777, spool.path.parent.stat().st_mode & 0o777) == (0o600, 0o700)
    spool.clear()
    assert not spool.path.exists() and spool.load() == []


def test_a_spool_that_cannot_be_written_says_so_once_and_keeps_nothing_back(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocked = tmp_path / "not-a-dir"
    blocked.write_text("a file where the spool's directory would be")
    spool = Spool(blocked / SPOOL_FILE, bound=3)
    item = Pending("p1.r.1", "phoneuse.p1.X", b"{}")
    spool.begin([item])
    spool.append([item])
    spool.begin([item])
    assert spool.broken and not spool.active
    said = [r.getMessage() for r in caplog.records if "cannot write the event spool" in r.getMessage()]
    assert len(said) == 1 and said[0].endswith("events are buffered in memory only"), said
    assert str(spool.path) in said[0]


async def test_a_backlog_past_the_bound_is_spooled_with_nats_up_and_the_spool_goes_when_drained(
    nats_srv: NatsServer, make_runtime: RuntimeFactory, caplog: pytest.LogCaptureFixture
) -> None:
    from phoneuse_runtime.kernel.events import MessageReceived
    from phoneuse_runtime.nats.sink import SPOOL_PAST

    phone = await make_runtime(device_name="p1", nats_url=nats_srv.url)
    sink = sink_of(phone)

    async def up() -> bool:
        return sink.link.connected

    await eventually(up, what="the sink connected")
    spool = phone.settings.data_dir / SPOOL_FILE
    burst = SPOOL_PAST + 100  # more than the bound arrive in one turn: NATS cannot have acked them
    for i in range(burst):
        event = MessageReceived(from_="+15550100", body=f"b{i}", app="sms", thread_id="1", message_id=str(i))
        phone.app.runtime.bus.publish(event.to_event("sim"))

    async def drained() -> bool:
        return sink.accepted >= burst and sink.buffered == 0 and not spool.exists()

    caplog.set_level("INFO", logger="phoneuse_runtime.nats.sink")
    await eventually(drained, what="the backlog acked and the spool removed")
    said = [r.getMessage() for r in caplog.records if "spooling them to" in r.getMessage()]
    assert said == [f"NATS is behind, {SPOOL_PAST + 1} event(s) unacked: spooling them to {spool}"]
    assert bodies(await stream_messages(nats_srv.url), "MESSAGE_RECEIVED") == [f"b{i}" for i in range(burst)]


async def test_a_stream_made_without_bounds_gets_them_and_one_with_bounds_keeps_its_own(
    nats_srv: NatsServer,
) -> None:
    from nats.js.api import StreamConfig

    from phoneuse_runtime.nats.sink import StreamBounds, ensure_stream

    nc = await nats.connect(nats_srv.url)
    try:
        js = nc.jetstream()
        await js.add_stream(StreamConfig(name=STREAM, subjects=["phoneuse.>"]))  # an earlier version's
        await ensure_stream(js, StreamBounds(max_age_s=600, max_bytes=2 << 20))
        config = (await js.stream_info(STREAM)).config
        assert (config.max_age, config.max_bytes) == (600, 2 << 20)
        await ensure_stream(js, StreamBounds(max_age_s=1200, max_bytes=4 << 20))
        config = (await js.stream_info(STREAM)).config
        assert (config.max_age, config.max_bytes) == (600, 2 << 20)
    finally:
        await nc.close()


@pytest.mark.parametrize(
    ("name", "value", "says"),
    [
        ("nats_stream_max_bytes", 1000, "must be at least 1048576"),
        ("nats_stream_max_age_s", 60, "must be at least 120 .the stream's duplicate window"),
    ],
)
def test_a_stream_bound_too_small_to_keep_an_event_is_refused_at_load(
    name: str, value: int, says: str
) -> None:
    from phoneuse_runtime.config.settings import load_settings

    with pytest.raises(ConfigError, match=rf"{name} \(flag\): {says}"):
        load_settings({name: value})
