"""The fleet's door and its principals, attacked: a device whose serial stops nginx's
configuration, a revoked token's open streams, the fleet's inner files under a loose umask, and
principal names that pass for the agent itself. Real `fleet` processes (real nginx and
nats-server, real `serve` members), real grpcio clients."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import threading
from pathlib import Path

import grpc
import pytest

from phoneuse_runtime.rpc import protocol_pb2 as pb
from phoneuse_runtime.rpc import protocol_pb2_grpc as pb_grpc
from phoneuse_runtime.util.device_names import device_name
from tests.fleet.running import (
    EXE,
    RunningFleet,
    cli,
    env,
    execute,
    fleet,
    metadata,
    needs,
    new_token,
    poll,
    stub,
)
from tests.serving import serve


def test_a_fleet_token_named_like_the_agent_in_another_case_is_refused(tmp_path: Path) -> None:
    """An owner's helper makes a fleet token `Agent` or `AGENT`, whose calls then read as the
    agent's own ("Agent asks to ..."): refused, and the tokens file is left as it was."""
    new_token(tmp_path, "alice")
    before = (tmp_path / "tokens.json").read_bytes()
    for name in ("Agent", "AGENT", "aGeNt", " agent"):
        done = cli(tmp_path, "token", "new", name)
        assert done.returncode == 2, done
        assert "is reserved" in done.stderr or "bad principal name" in done.stderr, done.stderr
        assert "Traceback" not in done.stderr
    assert (tmp_path / "tokens.json").read_bytes() == before


def test_a_tokens_file_naming_agent_in_another_case_grants_nothing(tmp_path: Path) -> None:
    """A tokens file edited by hand to give a token to `AGENT`: a runtime refuses the file whole
    (the token is UNAUTHENTICATED), never takes it for a second `agent`."""
    from phoneuse_runtime.auth.tokens import generate_token, hash_token

    token = generate_token()
    path = tmp_path / "tokens.json"
    entry = {"sha256": hash_token(token).hex(), "created": ""}
    path.write_text(json.dumps({"version": 1, "tokens": {"AGENT": entry}}))
    environ = {"PHONEUSE_TOKENS_FILE": str(path), "PHONEUSE_GATEWAY": "false"}
    with serve(tmp_path / "phone", env=environ) as phone:
        channel, runtime = stub(f"127.0.0.1:{phone.port}")
        with pytest.raises(grpc.RpcError) as refused:
            execute(runtime, "SET_CLIPBOARD", {"text": "x"}, token=token, device=None)
        assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
        channel.close()


def test_a_pairing_named_like_the_agent_is_refused(tmp_path: Path) -> None:
    """`pair new --name Agent`: the owner's prompts would name a device that passes for the
    agent. Refused, and nothing is paired."""
    environ = env() | {"PHONEUSE_DATA_DIR": str(tmp_path / "data")}
    for name in ("agent", "Agent", "AGENT", "device:x"):
        done = subprocess.run(
            [*EXE, "pair", "new", "--name", name], capture_output=True, text=True, env=environ, timeout=60
        )
        assert done.returncode == 2, done
        assert "is reserved" in done.stderr and "Traceback" not in done.stderr, done.stderr
        assert done.stdout == ""
    listed = subprocess.run(
        [*EXE, "pair", "list", "--json"], capture_output=True, text=True, env=environ, timeout=60, check=True
    )
    assert json.loads(listed.stdout) == []


def _loose(data_dir: Path) -> dict[str, str]:
    """Every entry under the fleet's data dir (itself included) that is not private: path -> mode."""
    wrong = {}
    for path in [data_dir, *data_dir.rglob("*")]:
        try:
            info = path.lstat()
        except FileNotFoundError:  # a running part's temporary file, renamed into place meanwhile
            continue
        want = 0o700 if stat.S_ISDIR(info.st_mode) else 0o600
        if stat.S_IMODE(info.st_mode) != want:
            wrong[str(path.relative_to(data_dir))] = f"{stat.S_IMODE(info.st_mode):04o}"
    return wrong


@needs(nats=True)
def test_under_umask_000_every_file_of_the_fleet_is_the_owners_alone(tmp_path: Path) -> None:
    """Another user on the fleet's host reads what the fleet started under `umask 000` keeps
    (nginx's logs, nats-server's log and JetStream's files, with every event in them, the lock):
    every file is 0600 and every directory 0700, as a serve data dir is."""
    data_dir = tmp_path / "fleet"
    token = new_token(data_dir, "alice")
    with fleet(data_dir, "--sim", "1", ready=1, umask=0) as running:
        channel, runtime = stub(running.door)
        assert execute(runtime, "SET_CLIPBOARD", {"text": "owner's"}, token=token, device="sim-1").success
        channel.close()
        names = {p.name for p in data_dir.rglob("*")}
        for expected in ("nats-server.log", "fleet.lock", "error.log", "nats-users", "jetstream"):
            assert expected in names, sorted(names)
        assert _loose(data_dir) == {}


MDNS_SERIAL = "adb-28231FDH200XYZ-AbCdEf._adb-tls-connect._tcp"  # adb's own form, 47 characters


def _phone(serial: str, port: int) -> str:
    return f'[[phones]]\nserial = "{serial}"\naddress = "127.0.0.1:{port}"\n'


def _answers(runtime: pb_grpc.AndroidRuntimeStub, token: str, device: str, text: str) -> bool:
    try:
        return execute(runtime, "SET_CLIPBOARD", {"text": text}, token=token, device=device).success
    except grpc.RpcError as exc:
        assert exc.code() in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.UNAVAILABLE), exc
        return False


def _clipboard(running: RunningFleet, name: str) -> object:
    """The sim's clipboard as its state file says; None until the file is written."""
    try:
        state = json.loads((running.data_dir / "members" / name / "sim-state.json").read_text())
    except (OSError, ValueError):
        return None
    return state.get("clipboard") if isinstance(state, dict) else None


@needs(nats=False)
def test_a_phone_with_adbs_47_character_mdns_serial_does_not_close_the_door(tmp_path: Path) -> None:
    """A phone on wireless debugging joins with adb's mDNS serial (47 characters, past nginx's
    default map bucket): every phone is still routed, the owner's and that one."""
    data_dir = tmp_path / "fleet"
    token = new_token(data_dir, "alice")
    environ = {"PHONEUSE_TOKENS_FILE": str(data_dir / "tokens.json"), "PHONEUSE_GATEWAY": "false"}
    with serve(tmp_path / "phone", env=environ) as phone:
        (data_dir / "fleet.toml").write_text(_phone(MDNS_SERIAL, phone.port))
        with fleet(data_dir, "--sim", "1", "--no-nats", ready=2) as running:
            channel, runtime = stub(running.door)
            assert poll(
                "sim-1 routed",
                lambda: _answers(runtime, token, "sim-1", "owner's"),
                timeout_s=30,
                detail=running.diagnosis,
            )
            assert _answers(runtime, token, MDNS_SERIAL, "by serial")
            assert _answers(runtime, token, device_name(MDNS_SERIAL), "by name")
            # The owner's phone kept its own (its state file is written shortly after the call).
            poll("sim-1's clipboard", lambda: _clipboard(running, "sim-1") == "owner's", timeout_s=10)
            assert "the door keeps its routes" not in running.log_text()
            channel.close()


@needs(nats=False)
def test_a_device_named_like_another_in_another_case_is_refused_on_its_own(tmp_path: Path) -> None:
    """A phone joins as `SIM-2` beside the fleet's `sim-2` (one name to nginx): it is refused on
    its own, and the door goes on following the other phones (a restarted runtime is routed
    again on its new port, not left UNAVAILABLE)."""
    data_dir = tmp_path / "fleet"
    token = new_token(data_dir, "alice")
    config = data_dir / "fleet.toml"
    config.write_text("phones = []\n")
    with fleet(data_dir, "--sim", "2", "--no-nats", ready=2) as running:
        channel, runtime = stub(running.door)
        assert _answers(runtime, token, "sim-2", "owner's")
        config.write_text(_phone("SIM-2", 1))
        running.proc.send_signal(signal.SIGHUP)
        poll(
            "SIM-2 refused",
            lambda: "refusing device 'SIM-2'" in running.log_text(),
            timeout_s=30,
            detail=running.diagnosis,
        )
        assert "one name in any case" in running.log_text()
        before = running.device("sim-1")
        os.kill(before["pid"], signal.SIGKILL)
        poll(
            "sim-1 routed again",
            lambda: _answers(runtime, token, "sim-1", "back"),
            timeout_s=30,
            every_s=0.2,
            detail=running.diagnosis,
        )
        assert [d["name"] for d in running.record()["devices"]] == ["sim-1", "sim-2"]
        assert "the door keeps its routes" not in running.log_text()
        channel.close()


@pytest.mark.parametrize(
    ("when", "serial", "address", "says"),
    [
        ("start", "L" * 300, "127.0.0.1:1", "its serial has 300 characters; at most 128 are routed"),
        ("reload", "L" * 300, "127.0.0.1:1", "its serial has 300 characters"),
        ("start", "p", "127.0.0.1:1;x", "'127.0.0.1:1;x' is not an address to route to (HOST:PORT)"),
        ("reload", "p", "127.0.0.1:99999", "'127.0.0.1:99999' is not an address to route to"),
    ],
)
@needs(nats=False)
def test_a_phone_nginx_cannot_route_is_refused_not_crash_looped(
    tmp_path: Path, when: str, serial: str, address: str, says: str
) -> None:
    """A phone whose serial has 300 characters, or whose address nginx cannot take: refused with
    a clear error naming the rule, at start (the fleet does not start) or on a reload (the phones
    are kept as they were, and routed)."""
    data_dir = tmp_path / "fleet"
    data_dir.mkdir()
    config = data_dir / "fleet.toml"
    phone = f'[[phones]]\nserial = "{serial}"\naddress = "{address}"\n'
    if when == "start":
        config.write_text(phone)
        done = subprocess.run(
            [*EXE, "fleet", "--data-dir", str(data_dir), "--no-adb", "--no-nats", "--listen", "127.0.0.1:0"],
            capture_output=True,
            text=True,
            env=env(),
            timeout=60,
            check=False,
        )
        assert done.returncode == 2, done
        assert says in done.stderr
        assert "Traceback" not in done.stderr
        return
    config.write_text("phones = []\n")
    with fleet(data_dir, "--sim", "1", "--no-nats", ready=1) as running:
        config.write_text(phone)
        running.proc.send_signal(signal.SIGHUP)
        poll("the refusal logged", lambda: "kept the phones as they were" in running.log_text(), timeout_s=30)
        assert says in running.log_text()
        assert running.door_routes_all()
        assert [d["name"] for d in running.record()["devices"]] == ["sim-1"]


@needs(nats=False)
def test_a_revoked_fleet_token_loses_its_open_streams_through_the_door_and_straight(tmp_path: Path) -> None:
    """carol, whose fleet token the owner revokes, keeps Subscribe streams open (one through the
    door, one straight to a runtime) to go on reading the phones' messages: both end with
    UNAUTHENTICATED within the tokens file's re-read, and the owner's bank code that comes
    afterwards reaches neither (nor a new stream)."""
    data_dir = tmp_path / "fleet"
    alice, carol = new_token(data_dir, "alice"), new_token(data_dir, "carol")
    with fleet(data_dir, "--sim", "2", "--no-nats", ready=2) as running:
        door_channel, door = stub(running.door)
        straight_channel, straight = stub(running.device("sim-2")["address"])
        wanted = pb.SubscribeRequest(event_types=["MESSAGE_RECEIVED"])
        streams = [
            door.Subscribe(wanted, metadata=metadata(carol, "sim-1"), timeout=60),
            straight.Subscribe(wanted, metadata=metadata(carol, None), timeout=60),
        ]
        for stream in streams:
            stream.initial_metadata()  # subscribed: no later event can be missed
        sms = {"from": "+15550001", "body": "see you at 8"}
        for device in ("sim-1", "sim-2"):
            assert execute(door, "SIM_RECEIVE_SMS", sms, token=alice, device=device).success
        for stream in streams:  # carol reads the phones while her token holds
            assert "see you at 8" in next(stream).payload_json
        done = cli(data_dir, "token", "revoke", "carol")
        assert done.returncode == 0, done.stderr
        for stream in streams:  # ended by the runtimes, though carol calls nothing more
            with pytest.raises(grpc.RpcError) as ended:
                extra = next(stream)
                raise AssertionError(f"carol still reads: {extra.payload_json}")
            assert ended.value.code() == grpc.StatusCode.UNAUTHENTICATED, ended.value
            assert "revoked" in (ended.value.details() or "")
        code = {"from": "+15550002", "body": "Your verification code is 839201"}
        for device in ("sim-1", "sim-2"):
            assert execute(door, "SIM_RECEIVE_SMS", code, token=alice, device=device).success
        again = door.Subscribe(wanted, metadata=metadata(carol, "sim-1"), timeout=30)
        with pytest.raises(grpc.RpcError) as refused:
            next(again)
        assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
        door_channel.close()
        straight_channel.close()


class _TrackOnlyAdb:
    """An adb server that answers `host:track-devices` (the fleet's watch) on the real wire,
    listing the given serials as ready, and FAILs every other request."""

    def __init__(self, serials: list[str]) -> None:
        self.listing = "".join(f"{s}\tdevice\n" for s in serials).encode()
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.asked = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            try:
                size = int(conn.recv(4, socket.MSG_WAITALL), 16)
                command = conn.recv(size, socket.MSG_WAITALL).decode()
                if command != "host:track-devices":
                    conn.sendall(b"FAIL0007unknown")
                    return
                self.asked += 1
                conn.sendall(b"OKAY" + f"{len(self.listing):04x}".encode() + self.listing)
                conn.recv(1)  # until the fleet hangs up
            except (OSError, ValueError):
                return

    def close(self) -> None:
        self.sock.close()


@needs(nats=False)
def test_an_adb_device_with_a_300_character_serial_is_refused_once_not_crash_looped(tmp_path: Path) -> None:
    """The adb server lists a device whose serial has 300 characters (its name would be too
    long for a data dir, a NATS subject or the door): it is refused, said once, and no runtime
    is started for it; the owner's other phone is routed."""
    adb = _TrackOnlyAdb(["L" * 300])
    data_dir = tmp_path / "fleet"
    token = new_token(data_dir, "alice")
    try:
        with fleet(
            data_dir, "--sim", "1", "--no-nats", "--adb-server", f"127.0.0.1:{adb.port}", adb=True, ready=1
        ) as running:
            poll(
                "the refusal said",
                lambda: "refusing device 'LLLL" in running.log_text(),
                timeout_s=30,
                detail=running.diagnosis,
            )
            channel, runtime = stub(running.door)
            assert _answers(runtime, token, "sim-1", "owner's")
            channel.close()
            text = running.log_text()
            assert text.count("refusing device 'LLLL") == 1
            assert "its serial has 300 characters; at most 128 are routed" in text
            assert "runtime stopped" not in text
            assert [d["name"] for d in running.record()["devices"]] == ["sim-1"]
            assert sorted(p.name for p in (data_dir / "members").iterdir()) == ["sim-1"]
    finally:
        adb.close()
