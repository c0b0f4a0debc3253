"""Twenty simulated phones behind the fleet's nginx door, on one machine: a real `fleet --sim 20`
process (real `serve` members, Debian's nginx), called through the door with grpcio."""

from __future__ import annotations

import functools
import json
import os
import signal
import stat
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from phoneuse_runtime.rpc import protocol_pb2 as pb
from phoneuse_runtime.rpc import protocol_pb2_grpc as pb_grpc

from ..serving import serve
from .running import RunningFleet, execute, fleet, metadata, names, needs, new_token, poll, rpc_error, stub

pytestmark = needs(nats=True)

SIMS = 20
SERVICE = "ai.lemon.phoneuse.mcpserver.protocol.AndroidRuntime"


@pytest.fixture(scope="module")
def farm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningFleet]:
    data_dir = tmp_path_factory.mktemp("fleet") / "fleet"
    data_dir.mkdir()
    # The phones that join by address come from this file, re-read on SIGHUP.
    (data_dir / "fleet.toml").write_text("phones = []\n")
    with fleet(data_dir, "--sim", str(SIMS), ready=SIMS) as running:
        yield running


@pytest.fixture(scope="module")
def alice(farm: RunningFleet) -> str:
    return new_token(farm.data_dir, "alice")


@pytest.fixture(scope="module")
def bob(farm: RunningFleet) -> str:
    return new_token(farm.data_dir, "bob")


@pytest.fixture(scope="module")
def door(farm: RunningFleet) -> Iterator[pb_grpc.AndroidRuntimeStub]:
    channel, runtime = stub(farm.door)
    yield runtime
    channel.close()


def _clipboard(farm: RunningFleet, name: str) -> str | None:
    try:
        state = json.loads((farm.data_dir / "members" / name / "sim-state.json").read_text())
    except (OSError, ValueError):
        return None
    clip = state.get("clipboard")
    return str(clip) if isinstance(clip, str) else None


def _holds(farm: RunningFleet, name: str, text: str) -> bool:
    return _clipboard(farm, name) == text


def test_every_call_reaches_the_phone_its_header_names_by_serial_or_name(
    farm: RunningFleet, door: pb_grpc.AndroidRuntimeStub, alice: str
) -> None:
    record = farm.record()
    assert sorted(names(record["devices"])) == sorted(f"sim-{i}" for i in range(1, SIMS + 1))
    assert record["nats_url"].startswith("nats://127.0.0.1:")
    texts = {f"sim-{i}": f"clip of sim-{i} {uuid.uuid4().hex}" for i in range(1, SIMS + 1)}
    for name, text in texts.items():
        response = execute(door, "SET_CLIPBOARD", {"text": text}, token=alice, device=name)
        assert response.success, response.error
    for name, text in texts.items():  # each phone's own state holds its own text, and no other's
        poll(f"{name}'s clipboard", functools.partial(_holds, farm, name, text), timeout_s=20)
    # The header takes the name or the serial; nginx matches it without regard to case.
    response = execute(door, "SET_CLIPBOARD", {"text": "by another spelling"}, token=alice, device="SIM-7")
    assert response.success, response.error
    poll("sim-7's clipboard", lambda: _clipboard(farm, "sim-7") == "by another spelling", timeout_s=20)
    assert _clipboard(farm, "sim-8") == texts["sim-8"]


def test_no_header_or_an_unknown_device_gets_not_found_naming_the_devices_at_once(
    farm: RunningFleet, door: pb_grpc.AndroidRuntimeStub, alice: str
) -> None:
    for device, says in (
        (None, "no x-phoneuse-device metadata"),
        ("sim-99", "names no device of this fleet"),
    ):
        started = time.monotonic()
        error = rpc_error(
            functools.partial(execute, door, "SET_CLIPBOARD", {"text": "x"}, token=alice, device=device)
        )
        assert time.monotonic() - started < 2.0
        assert error.code() == grpc.StatusCode.NOT_FOUND, error
        details = error.details() or ""
        assert says in details
        assert all(f"sim-{i}" in details for i in range(1, SIMS + 1)), details
    # Query and Subscribe too: the door answers before any method's own code.
    error = rpc_error(
        lambda: door.Query(
            pb.QueryRequest(query_type=pb.QueryType.Value("APP_STATE")),
            metadata=metadata(alice, "nope"),
            timeout=5,
        )
    )
    assert error.code() == grpc.StatusCode.NOT_FOUND


def test_health_answers_per_device_through_the_door(farm: RunningFleet) -> None:
    channel = grpc.insecure_channel(farm.door)
    health = health_pb2_grpc.HealthStub(channel)
    for name in ("sim-1", "sim-20"):
        for service in ("", SERVICE):
            answer = health.Check(
                health_pb2.HealthCheckRequest(service=service),
                metadata=(("x-phoneuse-device", name),),
                timeout=5,
            )
            assert answer.status == health_pb2.HealthCheckResponse.SERVING
    error = rpc_error(lambda: health.Check(health_pb2.HealthCheckRequest(), timeout=5))
    assert error.code() == grpc.StatusCode.NOT_FOUND
    channel.close()


def test_fleet_tokens_name_their_principal_on_every_phone(farm: RunningFleet, alice: str, bob: str) -> None:
    """The principal comes from the token each runtime checks; a header saying otherwise is ignored.
    Seen in TASK_STARTED, through a Subscribe stream through the door."""
    channel, runtime = stub(farm.door)
    for device in ("sim-3", "sim-12"):
        seen: list[dict[str, object]] = []
        stream = runtime.Subscribe(
            pb.SubscribeRequest(event_types=["TASK_STARTED"], subscriber_id=f"watch-{device}"),
            metadata=metadata(alice, device),
        )
        assert any(k == "x-subscriber-id" for k, _ in stream.initial_metadata())  # the stream is live

        def read(stream: object = stream, seen: list[dict[str, object]] = seen) -> None:
            for event in stream:  # type: ignore[attr-defined]
                seen.append(json.loads(event.payload_json))
                if len(seen) == 2:
                    return

        reader = threading.Thread(target=read)
        reader.start()
        for token in (alice, bob):
            response = runtime.Execute(
                pb.ActionRequest(
                    action_type="SET_CLIPBOARD", params={"text": "p"}, request_id="same-id", timeout_ms=9000
                ),
                metadata=(*metadata(token, device), ("x-phoneuse-principal", "root")),
                timeout=20,
            )
            assert response.success, response.error  # one request_id, two principals: two calls
        reader.join(timeout=20)
        stream.cancel()
        assert [e["caller"] for e in seen] == [
            {"frontend": "grpc", "principal": "alice"},
            {"frontend": "grpc", "principal": "bob"},
        ]
    channel.close()


def test_a_revoked_token_stops_working_on_every_phone_without_a_restart(farm: RunningFleet) -> None:
    from .running import cli

    carol = new_token(farm.data_dir, "carol")
    channel, runtime = stub(farm.door)
    pids = {d["name"]: d["pid"] for d in farm.record()["devices"]}
    for device in ("sim-2", "sim-19"):  # works, and is remembered by each runtime's cache
        assert execute(runtime, "SET_CLIPBOARD", {"text": "c"}, token=carol, device=device).success
    done = cli(farm.data_dir, "token", "revoke", "carol")
    assert done.returncode == 0, done.stderr
    for device in ("sim-2", "sim-19"):
        error = rpc_error(
            functools.partial(execute, runtime, "SET_CLIPBOARD", {"text": "c"}, token=carol, device=device)
        )
        assert error.code() == grpc.StatusCode.UNAUTHENTICATED
    assert {d["name"]: d["pid"] for d in farm.record()["devices"]} == pids  # nobody restarted
    listed = json.loads(cli(farm.data_dir, "token", "list", "--json").stdout)
    assert "carol" not in [t["name"] for t in listed]
    channel.close()


def test_a_request_up_to_the_runtimes_limit_passes_the_door_and_a_larger_one_is_refused(
    farm: RunningFleet, door: pb_grpc.AndroidRuntimeStub, alice: str
) -> None:
    # Just under 2 MiB in all: the runtime gets it, and answers for its params.
    big = "x" * (2 * 1024 * 1024 - 1024)
    response = execute(door, "SET_CLIPBOARD", {"text": big}, token=alice, device="sim-5")
    assert not response.success
    assert response.error.startswith("INVALID_PARAMS: text has 2096128 characters")
    error = rpc_error(lambda: execute(door, "SET_CLIPBOARD", {"text": big * 2}, token=alice, device="sim-5"))
    assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, error
    # The runtime says so as soon as it reads the message's length; the door would stop the body
    # past its client_max_body_size even so.
    assert "2097152" in (error.details() or "")


def test_a_killed_runtime_is_restarted_said_why_and_routed_again(farm: RunningFleet, alice: str) -> None:
    before = farm.device("sim-20")
    os.kill(before["pid"], signal.SIGKILL)
    poll(
        "sim-20 restarted",
        lambda: (d := farm.device("sim-20"))["pid"] not in (None, before["pid"]) and d["address"],
    )
    after = farm.device("sim-20")
    assert after["restarts"] == before["restarts"] + 1
    assert "killed by SIGKILL" in after["last_exit"]
    poll(
        "the log says why",
        lambda: "sim-20's runtime stopped (killed by SIGKILL" in farm.log_text(),
        timeout_s=10,
    )
    channel, runtime = stub(farm.door)

    def routed() -> bool:  # the door is reloaded with the new port shortly after the record
        try:
            return execute(runtime, "SET_CLIPBOARD", {"text": "back"}, token=alice, device="sim-20").success
        except grpc.RpcError as exc:
            assert exc.code() == grpc.StatusCode.UNAVAILABLE, exc
            return False

    poll("sim-20 routed again", routed, timeout_s=20, every_s=0.2, detail=farm.diagnosis)
    channel.close()


def test_a_phone_by_address_joins_and_leaves_when_the_config_is_reloaded(
    farm: RunningFleet, alice: str, tmp_path: Path
) -> None:
    """A runtime running elsewhere (here a `serve` standing in for Termux on a phone), listed in
    the fleet's config by address: it takes the fleet's tokens when given the tokens file."""
    serial = "192.168.1.5:5555"
    env = {"PHONEUSE_TOKENS_FILE": str(farm.data_dir / "tokens.json"), "PHONEUSE_GATEWAY": "false"}
    with serve(tmp_path / "phone", env=env) as phone:
        config = farm.data_dir / "fleet.toml"
        config.write_text(f'[[phones]]\nserial = "{serial}"\naddress = "127.0.0.1:{phone.port}"\n')
        farm.proc.send_signal(signal.SIGHUP)
        channel, runtime = stub(farm.door)

        def answers(device: str) -> bool:
            try:
                return execute(runtime, "SET_CLIPBOARD", {"text": "hi"}, token=alice, device=device).success
            except grpc.RpcError as exc:
                assert exc.code() == grpc.StatusCode.NOT_FOUND, exc
                return False

        poll(
            "the phone joined",
            lambda: answers("192_168_1_5_5555"),
            timeout_s=20,
            every_s=0.1,
            detail=farm.diagnosis,
        )
        assert answers(serial)  # by its serial too
        assert farm.device("192_168_1_5_5555")["address"] == f"127.0.0.1:{phone.port}"
        config.write_text("phones = []\n")
        farm.proc.send_signal(signal.SIGHUP)

        def gone() -> str | None:
            try:
                execute(runtime, "SET_CLIPBOARD", {"text": "hi"}, token=alice, device=serial)
            except grpc.RpcError as exc:
                if exc.code() == grpc.StatusCode.NOT_FOUND:
                    return str(exc.details())
            return None

        details = poll("the phone left", gone, timeout_s=20, every_s=0.1, detail=farm.diagnosis)
        assert "192_168_1_5_5555" not in details and "sim-1," in details
        channel.close()


def test_a_broken_config_on_reload_keeps_the_phones(farm: RunningFleet) -> None:
    config = farm.data_dir / "fleet.toml"
    config.write_text("phones = [ {serial = 'x'} ]\n")
    farm.proc.send_signal(signal.SIGHUP)
    poll("the refusal logged", lambda: "kept the phones as they were" in farm.log_text(), timeout_s=20)
    assert f"phones[0] ({config}): must have exactly serial and address" in farm.log_text()
    config.write_text("phones = []\n")
    assert farm.proc.poll() is None


def test_the_fleet_stops_its_members_and_the_door(tmp_path: Path) -> None:
    with fleet(tmp_path / "small", "--sim", "2", "--no-nats", ready=2) as small:
        pids = [d["pid"] for d in small.record()["devices"]]
        nginx_pid = int((small.data_dir / "nginx" / "nginx.pid").read_text())
        small.proc.send_signal(signal.SIGTERM)
        assert small.proc.wait(timeout=60) == 0
    for pid in [*pids, nginx_pid]:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    assert not (small.data_dir / "fleet.json").exists()


def _cmdline(proc: Path) -> str:
    try:
        return (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:  # gone meanwhile
        return ""


def test_nothing_outlives_a_killed_fleet(tmp_path: Path) -> None:
    with fleet(tmp_path / "small", "--sim", "1", ready=1) as small:
        pids = [d["pid"] for d in small.record()["devices"]]
        pids.append(int((small.data_dir / "nginx" / "nginx.pid").read_text()))
        # The fleet's own nats-server: the pid its log starts with ("[PID] date ...").
        first = (small.data_dir / "nats" / "nats-server.log").read_text().split("]", 1)[0]
        nats = [int(first.lstrip("["))]
        assert _cmdline(Path("/proc") / str(nats[0])).split(" ")[0].endswith("nats-server")
        pids += nats
        small.proc.kill()
        small.proc.wait()

        def gone() -> bool:
            for pid in pids:
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    continue
                # A zombie that the dead fleet never reaped is gone too (init reaps it).
                state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
                if state not in ("Z", "X"):
                    return False
            return True

        poll("the members and nginx stopped", gone, timeout_s=30)


def test_colliding_device_names_are_refused_at_start_naming_both(tmp_path: Path) -> None:
    config = tmp_path / "fleet.toml"
    phone = '[[phones]]\nserial = "{}"\naddress = "127.0.0.1:{}"\n'
    config.write_text(phone.format("a.b", 1) + phone.format("a:b", 2))
    from .running import EXE, env

    done = subprocess.run(
        [*EXE, "fleet", "--data-dir", str(tmp_path / "d"), "--config", str(config), "--no-adb", "--no-nats"],
        capture_output=True,
        text=True,
        env=env(),
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done
    assert "serials 'a.b' and 'a:b' would both be named 'a_b'" in done.stderr


def test_two_agents_contend_for_a_phones_lease_through_the_door(
    farm: RunningFleet, door: pb_grpc.AndroidRuntimeStub, alice: str, bob: str
) -> None:
    """The lease is in the fleet's NATS KV; the other principal's Execute answers CONFLICT naming
    the holder and the expiry; the holder's calls run; Query stays open; other phones are free."""
    taken = execute(door, "LEASE_ACQUIRE", {"ttl_s": "60"}, token=alice, device="sim-4")
    assert taken.success, taken.error
    try:
        refused = execute(door, "SET_CLIPBOARD", {"text": "mine"}, token=bob, device="sim-4")
        assert not refused.success
        assert refused.error.startswith("CONFLICT: ") and "held by 'alice' until 20" in refused.error
        contended = execute(door, "LEASE_ACQUIRE", {"ttl_s": "60"}, token=bob, device="sim-4")
        assert not contended.success and contended.error.startswith("CONFLICT: ")
        assert execute(door, "SET_CLIPBOARD", {"text": "alice's"}, token=alice, device="sim-4").success
        assert execute(door, "SET_CLIPBOARD", {"text": "bob's"}, token=bob, device="sim-5").success
        answer = door.Query(
            pb.QueryRequest(query_type=pb.QueryType.Value("APP_STATE")),
            metadata=metadata(bob, "sim-4"),
            timeout=10,
        )
        assert answer.total_count >= 1
        assert _kv_lease(farm, "sim-4")["holder"] == "alice"
    finally:
        released = execute(door, "LEASE_RELEASE", {}, token=alice, device="sim-4")
    assert released.success, released.error
    assert execute(door, "SET_CLIPBOARD", {"text": "free"}, token=bob, device="sim-4").success


AGENT = """
import sys, time, uuid, grpc
from phoneuse_runtime.rpc import protocol_pb2 as pb, protocol_pb2_grpc as pb_grpc
door, token = sys.argv[1], sys.argv[2]
stub = pb_grpc.AndroidRuntimeStub(grpc.insecure_channel(door))
md = (("authorization", "Bearer " + token), ("x-phoneuse-device", "sim-6"))
r = stub.Execute(pb.ActionRequest(action_type="LEASE_ACQUIRE", params={"ttl_s": "5"},
                 request_id=uuid.uuid4().hex, timeout_ms=9000), metadata=md, timeout=20)
print("held" if r.success else r.error, flush=True)
time.sleep(3600)  # an agent that hangs, and is killed: it never renews
"""


def test_a_lease_expires_when_its_holder_dies(
    farm: RunningFleet, door: pb_grpc.AndroidRuntimeStub, bob: str
) -> None:
    holder_token = new_token(farm.data_dir, "crashy")
    from .running import EXE, env

    agent = subprocess.Popen(
        [EXE[0], "-c", AGENT, farm.door, holder_token], stdout=subprocess.PIPE, text=True, env=env()
    )
    try:
        assert agent.stdout is not None
        assert agent.stdout.readline().strip() == "held"
    finally:
        agent.kill()
        agent.wait()
    refused = execute(door, "SET_CLIPBOARD", {"text": "x"}, token=bob, device="sim-6")
    assert not refused.success and "held by 'crashy'" in refused.error
    expires_at_ms = int(str(_kv_lease(farm, "sim-6")["expires_at_ms"]))
    taken = poll(
        "the dead agent's lease expired",
        lambda: execute(door, "LEASE_ACQUIRE", {"ttl_s": "30"}, token=bob, device="sim-6").success,
        timeout_s=20,
        every_s=0.2,
    )
    assert taken and time.time() * 1000 >= expires_at_ms
    assert _kv_lease(farm, "sim-6")["holder"] == "bob"
    assert execute(door, "LEASE_RELEASE", {}, token=bob, device="sim-6").success


def test_every_phones_events_reach_jetstream_under_its_own_subject(
    farm: RunningFleet, door: pb_grpc.AndroidRuntimeStub, alice: str
) -> None:
    marks = {device: uuid.uuid4().hex for device in ("sim-9", "sim-10")}
    for device, mark in marks.items():
        assert execute(door, "SET_CLIPBOARD", {"text": mark}, token=alice, device=device).success

    async def read() -> dict[str, list[str]]:
        import nats

        client = await nats.connect(farm.record()["nats_url"], **_as_fleet(farm))
        try:
            js = client.jetstream()
            found: dict[str, list[str]] = {}
            for device, mark in marks.items():
                sub = await js.subscribe(f"phoneuse.{device}.TASK_STARTED", ordered_consumer=True)
                texts: list[str] = []
                while mark not in texts:
                    message = await sub.next_msg(timeout=10)
                    texts.append(json.loads(message.data)["payload"]["params"].get("text", ""))
                found[device] = texts
                await sub.unsubscribe()
            return found
        finally:
            await client.close()

    import asyncio

    found = asyncio.run(read())
    assert marks["sim-10"] not in found["sim-9"] and marks["sim-9"] not in found["sim-10"]


def _as_fleet(farm: RunningFleet) -> dict[str, str]:
    """nats-py's options to connect as the fleet's own NATS user, which administers."""
    password = (farm.data_dir / "nats-users" / "fleet").read_text().strip()
    return {"user": "fleet", "password": password, "inbox_prefix": "_INBOX_fleet"}


def _kv_lease(farm: RunningFleet, device: str) -> dict[str, object]:
    """The lease as the fleet's NATS KV holds it (part B's bucket)."""

    async def get() -> dict[str, object]:
        import nats

        client = await nats.connect(farm.record()["nats_url"], **_as_fleet(farm))
        try:
            kv = await client.jetstream().key_value("phoneuse_leases")
            entry = await kv.get(device)
            assert entry.value is not None
            value: dict[str, object] = json.loads(entry.value)
            return value
        finally:
            await client.close()

    import asyncio

    return asyncio.run(get())


def test_a_subscribe_stream_through_the_door_outlives_a_reload(
    farm: RunningFleet, door: pb_grpc.AndroidRuntimeStub, alice: str
) -> None:
    channel, runtime = stub(farm.door)
    stream = runtime.Subscribe(
        pb.SubscribeRequest(event_types=["TASK_STARTED"], subscriber_id="through-a-reload"),
        metadata=metadata(alice, "sim-11"),
    )
    assert any(k == "x-subscriber-id" for k, _ in stream.initial_metadata())
    config = farm.data_dir / "fleet.toml"
    config.write_text('[[phones]]\nserial = "later"\naddress = "127.0.0.1:9"\n')  # nobody answers there
    farm.proc.send_signal(signal.SIGHUP)

    def reloaded() -> bool:
        error = rpc_error(lambda: execute(door, "SET_CLIPBOARD", {"text": "x"}, token=alice, device="later"))
        return bool(error.code() == grpc.StatusCode.UNAVAILABLE)  # known now, and down

    poll("the door reloaded", reloaded, timeout_s=20, every_s=0.1, detail=farm.diagnosis)
    mark = uuid.uuid4().hex
    assert execute(door, "SET_CLIPBOARD", {"text": mark}, token=alice, device="sim-11").success
    for event in stream:
        if json.loads(event.payload_json)["params"].get("text") == mark:
            break
    stream.cancel()
    channel.close()
    config.write_text("phones = []\n")
    farm.proc.send_signal(signal.SIGHUP)
    poll(
        "the phone left again",
        lambda: "later" not in [d["name"] for d in farm.record()["devices"]],
        timeout_s=20,
        detail=farm.diagnosis,
    )


def test_the_fleets_nats_server_asks_for_a_user_and_its_password(farm: RunningFleet) -> None:
    import asyncio

    import nats
    from nats.errors import Error as NatsError

    async def without_token() -> None:
        await nats.connect(
            farm.record()["nats_url"], allow_reconnect=False, max_reconnect_attempts=0, connect_timeout=5
        )

    with pytest.raises((NatsError, OSError)):
        asyncio.run(without_token())
    users = farm.data_dir / "nats-users"
    assert stat.S_IMODE(users.stat().st_mode) == 0o700
    names = {p.name for p in users.iterdir()}
    assert {"fleet", "reader"} | {f"runtime-sim-{i}" for i in range(1, SIMS + 1)} <= names
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in users.iterdir())
    reader = farm.record()["nats_reader"]
    assert reader == {"user": "reader", "password_file": str(users / "reader")}
    assert farm.record()["nats_token_file"] is None


def test_every_phones_events_come_in_order_from_the_fleets_nats_with_the_events_command(
    farm: RunningFleet, door: pb_grpc.AndroidRuntimeStub, alice: str
) -> None:
    """Part B's consumer on the NATS server the fleet runs: each phone's events in its order."""
    from .running import EXE, env

    marks = [uuid.uuid4().hex for _ in range(3)]
    for mark in marks:
        for device in ("sim-13", "sim-14"):
            assert execute(door, "SET_CLIPBOARD", {"text": mark}, token=alice, device=device).success
    record = farm.record()
    reader = record["nats_reader"]
    argv = [*EXE, "events", "--nats-url", record["nats_url"], "--nats-user", reader["user"]]
    argv += ["--nats-token-file", reader["password_file"]]

    def texts(device: str) -> list[str] | None:
        done = subprocess.run(
            [*argv, "--device", device, "--json"],
            capture_output=True,
            text=True,
            env=env(),
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        seen = [
            str(e["payload"]["params"]["text"])
            for e in lines
            if e.get("event_type") == "TASK_STARTED" and e["payload"]["params"].get("text") in marks
        ]
        return seen if len(seen) == len(marks) else None

    for device in ("sim-13", "sim-14"):
        assert (
            poll(f"{device}'s events", functools.partial(texts, device), timeout_s=30, every_s=0.5) == marks
        )
