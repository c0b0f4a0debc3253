"""Leases through the real server: principals with their own tokens over gRPC, the lease in a
real nats-server's KV (and, without nats_url, in the runtime's memory, by the same rules)."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import AsyncIterator
from typing import Any

import grpc
import nats
import pytest

from phoneuse_runtime.nats.leases import BUCKET
from phoneuse_runtime.nats.server_process import NatsServer
from phoneuse_runtime.rpc import protocol_pb2 as pb

from .conftest import TOKENS, Runtime, RuntimeFactory, eventually

TAP = ("TAP", {"x": "5", "y": "5"})


@pytest.fixture(params=["nats-kv", "memory"])
async def phone(
    request: pytest.FixtureRequest, make_runtime: RuntimeFactory, tmp_path: Any
) -> AsyncIterator[Runtime]:
    """One runtime whose leases are kept in NATS KV, or (no nats_url) in its memory."""
    if request.param == "memory":
        yield await make_runtime(device_name="p1")
        return
    server = NatsServer(tmp_path / "nats")
    await server.start()
    try:
        yield await make_runtime(device_name="p1", nats_url=server.url)
    finally:
        await server.stop()


def _conflict(response: pb.ActionResponse) -> dict[str, Any]:
    assert not response.success
    assert response.error.startswith("CONFLICT: "), response.error
    details: dict[str, Any] = json.loads(response.result_json)
    return details


async def test_the_holder_drives_and_another_principal_gets_conflict_naming_holder_and_expiry(
    phone: Runtime,
) -> None:
    taken = await phone.ok("alice", "LEASE_ACQUIRE", {"ttl_s": "60"})
    assert taken["holder"] == "alice" and taken["device"] == "p1"
    assert taken["via"] == ("nats-kv" if phone.settings.nats_url else "memory")
    assert 59_000 <= taken["expires_at_ms"] - time.time() * 1000 <= 60_500

    refused = await phone.execute("bob", *TAP)
    details = _conflict(refused)
    assert "held by 'alice'" in refused.error and taken["expires_at"] in refused.error
    assert re.search(r"\(\d+ s from now\)", refused.error)
    assert details == {"holder": "alice", "expires_at_ms": taken["expires_at_ms"], "device": "p1"}
    assert "held by 'alice'" in _conflict_error(await phone.execute("bob", "LEASE_ACQUIRE", {"ttl_s": "5"}))

    assert (await phone.ok("alice", *TAP))["x"] == 5  # the holder's calls run


def _conflict_error(response: pb.ActionResponse) -> str:
    _conflict(response)
    return response.error


async def test_query_and_subscribe_stay_open_to_other_principals(phone: Runtime) -> None:
    await phone.ok("alice", "LEASE_ACQUIRE", {"ttl_s": "60"})
    bob = (("authorization", f"Bearer {TOKENS['bob']}"),)
    answer = await phone.stub.Query(pb.QueryRequest(query_type=pb.APP_STATE), metadata=bob, timeout=10)
    assert len(answer.results_json) == 1
    stream = phone.stub.Subscribe(pb.SubscribeRequest(event_types=["MESSAGE_RECEIVED"]), metadata=bob)
    assert any(k == "x-subscriber-id" for k, _ in await stream.initial_metadata())
    await phone.ok("alice", "SIM_RECEIVE_SMS", {"from": "+15550100", "body": "hi"})
    event = await asyncio.wait_for(stream.read(), timeout=10)
    assert event.event_type == "MESSAGE_RECEIVED" and json.loads(event.payload_json)["body"] == "hi"
    stream.cancel()


async def test_renew_extends_the_holders_lease_and_no_one_elses(phone: Runtime) -> None:
    first = await phone.ok("alice", "LEASE_ACQUIRE", {"ttl_s": "10"})
    renewed = await phone.ok("alice", "LEASE_RENEW", {"ttl_s": "120"})
    assert renewed["holder"] == "alice" and renewed["expires_at_ms"] > first["expires_at_ms"] + 100_000
    assert "held by 'alice'" in _conflict_error(await phone.execute("bob", "LEASE_RENEW", {"ttl_s": "10"}))
    released = await phone.ok("alice", "LEASE_RELEASE")
    assert released["released"] is True
    no_lease = _conflict_error(await phone.execute("alice", "LEASE_RENEW", {"ttl_s": "10"}))
    assert "has no lease" in no_lease and "LEASE_ACQUIRE" in no_lease


async def test_release_is_the_holders_and_frees_the_phone(phone: Runtime) -> None:
    await phone.ok("alice", "LEASE_ACQUIRE", {"ttl_s": "60"})
    assert "held by 'alice'" in _conflict_error(await phone.execute("bob", "LEASE_RELEASE"))
    assert (await phone.ok("alice", "LEASE_RELEASE"))["released"] is True
    assert (await phone.ok("bob", *TAP))["x"] == 5
    assert (await phone.ok("alice", "LEASE_RELEASE"))["released"] is False  # nothing left to give back
    assert (await phone.ok("bob", "LEASE_ACQUIRE", {"ttl_s": "30"}))["holder"] == "bob"
    assert "held by 'bob'" in _conflict_error(await phone.execute("alice", *TAP))


async def test_a_lease_its_holder_stops_renewing_expires_and_blocks_no_more(phone: Runtime) -> None:
    bob = (("authorization", f"Bearer {TOKENS['bob']}"),)
    types = ["LEASE_ACQUIRED", "LEASE_EXPIRED", "LEASE_RELEASED"]
    stream = phone.stub.Subscribe(pb.SubscribeRequest(event_types=types), metadata=bob)
    assert any(k == "x-subscriber-id" for k, _ in await stream.initial_metadata())
    taken = await phone.ok("alice", "LEASE_ACQUIRE", {"ttl_s": "1"})
    _conflict(await phone.execute("bob", *TAP))
    acquired = await asyncio.wait_for(stream.read(), timeout=10)
    assert acquired.event_type == "LEASE_ACQUIRED"
    assert json.loads(acquired.payload_json) == {
        "device": "p1",
        "holder": "alice",
        "expires_at_ms": taken["expires_at_ms"],
        "renewed": False,
    }
    expired = await asyncio.wait_for(stream.read(), timeout=10)  # no renew came
    assert expired.event_type == "LEASE_EXPIRED"
    assert json.loads(expired.payload_json) == {
        "device": "p1",
        "holder": "alice",
        "expires_at_ms": taken["expires_at_ms"],
    }
    stream.cancel()

    async def bob_runs() -> bool:
        return bool((await phone.execute("bob", *TAP)).success)

    await eventually(bob_runs, timeout_s=5, what="the expired lease stops blocking bob")
    expired = _conflict_error(await phone.execute("alice", "LEASE_RENEW", {"ttl_s": "10"}))
    assert "expired at" in expired
    assert (await phone.ok("bob", "LEASE_ACQUIRE", {"ttl_s": "30"}))["holder"] == "bob"


@pytest.mark.parametrize("ttl", ["0", "3601", "-5", "soon", ""])
async def test_a_bad_ttl_is_invalid_params_and_takes_nothing(phone: Runtime, ttl: str) -> None:
    response = await phone.execute("alice", "LEASE_ACQUIRE", {"ttl_s": ttl})
    assert not response.success and response.error.startswith("INVALID_PARAMS: "), response.error
    assert (await phone.ok("bob", *TAP))["x"] == 5  # no lease was taken
    renew = await phone.execute("alice", "LEASE_RENEW", {"ttl_s": ttl})
    assert renew.error.startswith("INVALID_PARAMS: ")


async def test_unknown_params_are_refused_and_ttl_defaults_to_a_minute(phone: Runtime) -> None:
    response = await phone.execute("alice", "LEASE_RELEASE", {"force": "true"})
    assert response.error.startswith("INVALID_PARAMS: ") and "force" in response.error
    default = await phone.ok("alice", "LEASE_ACQUIRE")  # ttl_s 60 by default, as LAMDA's Lock
    assert default["ttl_s"] == 60 and 59_000 <= default["expires_at_ms"] - time.time() * 1000 <= 60_500


async def test_two_runtimes_sharing_one_kv_keep_their_own_leases(
    nats_srv: NatsServer, make_runtime: RuntimeFactory
) -> None:
    p1 = await make_runtime(device_name="p1", nats_url=nats_srv.url)
    p2 = await make_runtime(device_name="p2", nats_url=nats_srv.url)
    await p1.ok("alice", "LEASE_ACQUIRE", {"ttl_s": "60"})
    assert (await p2.ok("bob", "LEASE_ACQUIRE", {"ttl_s": "60"}))["holder"] == "bob"
    assert (await p2.ok("bob", *TAP))["x"] == 5
    _conflict(await p2.execute("alice", *TAP))
    _conflict(await p1.execute("bob", *TAP))
    nc = await nats.connect(nats_srv.url)
    try:
        kv = await nc.jetstream().key_value(BUCKET)
        stored = {key: json.loads((await kv.get(key)).value or b"{}")["holder"] for key in ("p1", "p2")}
    finally:
        await nc.close()
    assert stored == {"p1": "alice", "p2": "bob"}


async def test_a_lease_outlives_its_runtimes_restart(
    nats_srv: NatsServer, make_runtime: RuntimeFactory
) -> None:
    first = await make_runtime(device_name="p1", nats_url=nats_srv.url)
    taken = await first.ok("alice", "LEASE_ACQUIRE", {"ttl_s": "60"})
    await first.close()
    again = await make_runtime(device_name="p1", nats_url=nats_srv.url)

    async def bob_refused() -> bool:
        response = await again.execute("bob", *TAP)
        return not response.success and str(taken["expires_at"]) in response.error

    await eventually(bob_refused, what="the restarted runtime reads alice's lease from the KV")


async def test_racing_acquires_through_one_kv_give_one_holder(
    nats_srv: NatsServer, make_runtime: RuntimeFactory
) -> None:
    """Two runtimes for one device name (a misconfiguration) contend through the KV's
    compare-and-set: exactly one principal gets the lease."""
    a = await make_runtime(device_name="same", nats_url=nats_srv.url)
    b = await make_runtime(device_name="same", nats_url=nats_srv.url)
    for _ in range(5):
        answers = await asyncio.gather(
            a.execute("alice", "LEASE_ACQUIRE", {"ttl_s": "30"}),
            b.execute("bob", "LEASE_ACQUIRE", {"ttl_s": "30"}),
        )
        winners = [r for r in answers if r.success]
        assert len(winners) == 1, [r.error for r in answers]
        loser = next(r for r in answers if not r.success)
        assert loser.error.startswith("CONFLICT: ")
        holder = json.loads(winners[0].result_json)["holder"]
        runtime = a if holder == "alice" else b
        assert (await runtime.ok(holder, "LEASE_RELEASE"))["released"] is True


async def test_lease_actions_without_nats_answer_device_unavailable_and_execute_still_runs(
    make_runtime: RuntimeFactory, tmp_path: Any
) -> None:
    server = NatsServer(tmp_path / "gone")
    url = await server.start()
    await server.stop()  # nothing listens there now
    phone = await make_runtime(device_name="p1", nats_url=url)
    response = await phone.execute("alice", "LEASE_ACQUIRE", {"ttl_s": "30"})
    assert response.error.startswith("DEVICE_UNAVAILABLE: ") and "NATS" in response.error
    assert (await phone.ok("bob", *TAP))["x"] == 5


async def test_a_wrong_token_is_unauthenticated(phone: Runtime) -> None:
    request = pb.ActionRequest(
        action_type="LEASE_ACQUIRE", params={"ttl_s": "5"}, request_id="r", timeout_ms=1000
    )
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await phone.stub.Execute(request, metadata=(("authorization", "Bearer nope"),), timeout=10)
    assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
