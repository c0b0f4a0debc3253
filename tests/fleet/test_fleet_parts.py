"""The fleet's parts with their real engines: the token commands, the door's configuration as
nginx itself checks it, `serve --tokens-file` re-reading its file, a member that keeps failing
(restarted with a growing back-off, the log saying why), the adb server's devices followed as
they come and go, and bad settings refused."""

from __future__ import annotations

import asyncio
import json
import signal
import socket
import stat
import subprocess
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from phoneuse_runtime.auth.tokens import hash_token
from phoneuse_runtime.auth.tokens_file import read_tokens
from phoneuse_runtime.fleet.door import DoorError, Nginx, Route, grpc_message, render_config
from tests.fakes.adb_server import FakeDeviceFactory, adb_server, fake_device_factory
from tests.fakes.phone import FakePhone

from ..serving import serve
from .running import EXE, cli, env, execute, fleet, needs, new_token, poll, rpc_error, stub

__all__ = ["adb_server", "fake_device_factory"]

needs_nginx = needs(nats=False)


def test_a_token_is_printed_once_and_stored_hashed(tmp_path: Path) -> None:
    done = cli(tmp_path, "token", "new", "alice")
    assert done.returncode == 0, done.stderr
    token = done.stdout.strip()
    assert len(token) >= 32 and "shown this once" in done.stderr
    path = tmp_path / "tokens.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert token not in path.read_text()
    assert read_tokens(path)["alice"].sha256 == hash_token(token).hex()
    listed = cli(tmp_path, "token", "list", "--json")
    assert [t["name"] for t in json.loads(listed.stdout)] == ["alice"]
    assert token not in listed.stdout
    after = subprocess.run(  # --data-dir after the token command, too
        [*EXE, "fleet", "token", "list", "--data-dir", str(tmp_path), "--json"],
        capture_output=True,
        text=True,
        env=env(),
        timeout=60,
        check=True,
    )
    assert after.stdout == listed.stdout


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("new", "alice"), "'alice' has a token already"),
        (
            ("new", "agent"),
            "'agent' is reserved: 'agent' (in any case) is each runtime's own token's principal",
        ),
        (("new", "Agent"), "'Agent' is reserved"),
        (("new", "AGENT"), "'AGENT' is reserved"),
        (("new", "no spaces"), "bad principal name 'no spaces'"),
        (("new", "device:x"), "bad principal name"),
        (("revoke", "zed"), "no token named 'zed' (tokens: alice)"),
    ],
)
def test_bad_token_commands_are_refused_and_change_nothing(
    tmp_path: Path, args: tuple[str, ...], says: str
) -> None:
    new_token(tmp_path, "alice")
    before = (tmp_path / "tokens.json").read_bytes()
    done = cli(tmp_path, "token", *args)
    assert done.returncode == 2, done
    assert says in done.stderr
    assert (tmp_path / "tokens.json").read_bytes() == before


def test_a_broken_tokens_file_is_refused_by_the_commands(tmp_path: Path) -> None:
    (tmp_path / "tokens.json").write_text("{not json")
    done = cli(tmp_path, "token", "list")
    assert done.returncode == 2 and "tokens.json: not JSON" in done.stderr, done


def test_serve_takes_the_fleet_tokens_and_rereads_the_file(tmp_path: Path) -> None:
    """A file that turns bad holds no tokens (a revocation is never undone by an error)."""
    fleet_dir = tmp_path / "fleet"
    fleet_dir.mkdir()
    token = new_token(fleet_dir, "alice")
    tokens_file = fleet_dir / "tokens.json"
    good = tokens_file.read_text()
    with serve(tmp_path / "data", env={"PHONEUSE_TOKENS_FILE": str(tokens_file)}) as served:
        channel, runtime = stub(f"127.0.0.1:{served.port}")
        assert execute(runtime, "SET_CLIPBOARD", {"text": "a"}, token=token, device=None).success
        tokens_file.write_text("{broken")
        error = rpc_error(lambda: execute(runtime, "SET_CLIPBOARD", {"text": "a"}, token=token, device=None))
        assert error.code() == grpc.StatusCode.UNAUTHENTICATED
        tokens_file.write_text(good)
        assert execute(runtime, "SET_CLIPBOARD", {"text": "a"}, token=token, device=None).success
        tokens_file.unlink()
        error = rpc_error(lambda: execute(runtime, "SET_CLIPBOARD", {"text": "a"}, token=token, device=None))
        assert error.code() == grpc.StatusCode.UNAUTHENTICATED
        channel.close()


def test_grpc_message_is_percent_encoded_as_the_spec_says() -> None:
    assert grpc_message("a b: c") == "a b: c"
    assert grpc_message("100%") == "100%25"
    assert grpc_message("é\n") == "%C3%A9%0A"


def test_devices_that_nginx_would_not_tell_apart_are_refused_naming_both(tmp_path: Path) -> None:
    routes = [Route("Pixel", "Pixel", "127.0.0.1:1"), Route("pixel", "pixel", "127.0.0.1:2")]
    with pytest.raises(DoorError, match="devices 'Pixel' and 'pixel' would both be routed by 'pixel'"):
        render_config(prefix=tmp_path, listen="127.0.0.1:1", routes=routes, max_receive_bytes=1024)


@needs_nginx
def test_nginx_accepts_the_configuration_and_odd_serials_route_by_name_only(tmp_path: Path) -> None:
    routes = [
        Route("sim-1", "sim-1", "127.0.0.1:1000"),
        Route("192_168_1_5_5555", "192.168.1.5:5555", None),  # down: UNAVAILABLE
        Route("a_b__c_", 'a"b;$c}', "127.0.0.1:1001"),  # nothing of it reaches nginx's file
        # adb's mDNS serial (47) and the longest serial routed (128): past nginx's default bucket.
        Route(
            "adb-28231FDH200XYZ-AbCdEf__adb-tls-connect__tcp",
            "adb-28231FDH200XYZ-AbCdEf._adb-tls-connect._tcp",
            "127.0.0.1:1002",
        ),
        Route("s" * 55 + "-0123abcd", "s" * 128, "127.0.0.1:1003"),
    ]
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    door = Nginx(prefix=tmp_path, sock=sock, max_receive_bytes=2 * 1024 * 1024)
    door.write(routes)
    text = door.conf.read_text()
    assert "listen 127.0.0.1:" in text and " http2;" in text and "http2 on" not in text
    assert '"192.168.1.5:5555" down;' in text and 'a"b' not in text
    assert f"client_max_body_size {2 * 1024 * 1024 + 5};" in text
    asyncio.run(door.check())  # nginx -t
    sock.close()


@needs_nginx
def test_a_member_that_keeps_failing_is_restarted_with_a_growing_back_off_and_the_log_says_why(
    tmp_path: Path,
) -> None:
    # A setting every member refuses at start (a deny list naming no action): exit code 2.
    with fleet(
        tmp_path / "f", "--sim", "1", "--no-nats", extra_env={"PHONEUSE_DENY_ACTIONS": "NOPE"}
    ) as running:
        poll("two restarts", lambda: running.log_text().count("sim-1's runtime stopped") >= 3, timeout_s=60)
        text = running.log_text()
        assert (
            "sim-1's runtime stopped (exit code 2; its last words: phoneuse-runtime: deny_actions names"
            in text
        )
        assert "restarting it in 0.5 s" in text and "restarting it in 1.0 s" in text
        assert "restarting it in 2.0 s" in text
        # Meanwhile the door says the device is there but not answering: UNAVAILABLE, which clients retry.
        channel = grpc.insecure_channel(running.door)
        health = health_pb2_grpc.HealthStub(channel)
        error = rpc_error(
            lambda: health.Check(
                health_pb2.HealthCheckRequest(), metadata=(("x-phoneuse-device", "sim-1"),), timeout=5
            )
        )
        assert error.code() == grpc.StatusCode.UNAVAILABLE
        assert "not answering" in (error.details() or "")
        channel.close()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("--sim", "-1"), "--sim must be 0 or more"),
        (("--listen", "127.0.0.1:notaport"), "cannot listen on 127.0.0.1:notaport"),
    ],
)
def test_bad_fleet_flags_are_refused(tmp_path: Path, args: tuple[str, ...], says: str) -> None:
    done = subprocess.run(
        [*EXE, "fleet", "--data-dir", str(tmp_path), "--no-adb", "--no-nats", *args],
        capture_output=True,
        text=True,
        env=env(),
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert says in done.stderr


def test_an_unknown_config_setting_is_refused_naming_the_known_ones(tmp_path: Path) -> None:
    (tmp_path / "fleet.toml").write_text("simm = 3\n")
    done = subprocess.run(
        [*EXE, "fleet", "--data-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        env=env(),
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done
    assert "simm (" in done.stderr
    assert "fleet.toml): unknown setting; known: adb, adb_server," in done.stderr
    assert ", phones, sim" in done.stderr


@needs_nginx
def test_the_adb_servers_devices_join_and_leave_as_adb_lists_them(
    tmp_path: Path, fake_device_factory: FakeDeviceFactory
) -> None:
    device = fake_device_factory(FakePhone())
    name = device.serial.replace(".", "_").replace(":", "_")
    with fleet(
        tmp_path / "f", "--adb-server", f"127.0.0.1:{device.adb_port}", "--no-nats", adb=True, ready=1
    ) as running:
        assert running.device(name)["device"] == f"adb:{device.serial}"
        channel = grpc.insecure_channel(running.door)
        health = health_pb2_grpc.HealthStub(channel)
        answer = health.Check(
            health_pb2.HealthCheckRequest(), metadata=(("x-phoneuse-device", device.serial),), timeout=10
        )
        assert answer.status == health_pb2.HealthCheckResponse.SERVING
        device.server.disconnect(device.serial)  # the phone leaves the adb server's list
        # The fleet says so when it sees it; the record may already list it again by the time a
        # poll reads it (the adb server reconnects a TCP device by itself, within milliseconds).
        poll(
            "the device left",
            lambda: f"device {name} leaves" in running.log_text(),
            timeout_s=30,
            detail=running.diagnosis,
        )
        device.server.connect(device.serial)
        poll("the device came back", lambda: running.all_serving(1), timeout_s=60, detail=running.diagnosis)
        channel.close()


def test_fleet_settings_are_flags_over_environment_over_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from phoneuse_runtime.fleet.settings import RemotePhone, load_fleet_settings

    config = tmp_path / "fleet.json"
    config.write_text(json.dumps({"sim": 3, "gateway": True, "phones": [{"serial": "p", "address": "h:1"}]}))
    monkeypatch.setenv("PHONEUSE_FLEET_SIM", "4")
    monkeypatch.setenv("PHONEUSE_FLEET_LISTEN", "127.0.0.1:7000")
    settings = load_fleet_settings(
        {"data_dir": tmp_path, "sim": None, "listen": "127.0.0.1:0"}, config_file=config
    )
    assert (settings.sim, settings.listen, settings.gateway) == (4, "127.0.0.1:0", True)
    assert settings.phones == (RemotePhone("p", "h:1"),)
    monkeypatch.setenv("PHONEUSE_FLEET_SIM", "many")
    from phoneuse_runtime.fleet.settings import FleetConfigError

    bad = r"sim \(environment\): bad value: expected a whole number, got 'many'"
    with pytest.raises(FleetConfigError, match=bad):
        load_fleet_settings({"data_dir": tmp_path}, config_file=config)


@needs_nginx
def test_simulated_phones_join_and_leave_when_the_config_is_reloaded(tmp_path: Path) -> None:
    data_dir = tmp_path / "f"
    data_dir.mkdir()
    config = data_dir / "fleet.toml"
    config.write_text("sim = 1\n")
    token = new_token(data_dir, "alice")
    with fleet(data_dir, "--no-nats", ready=1) as running:
        channel, runtime = stub(running.door)
        config.write_text("sim = 2\n")
        running.proc.send_signal(signal.SIGHUP)
        poll("sim-2 joined", lambda: running.all_serving(2), timeout_s=60, detail=running.diagnosis)
        assert execute(runtime, "SET_CLIPBOARD", {"text": "hi"}, token=token, device="sim-2").success
        config.write_text("sim = 1\n")
        running.proc.send_signal(signal.SIGHUP)

        def left() -> str | None:
            try:
                execute(runtime, "SET_CLIPBOARD", {"text": "hi"}, token=token, device="sim-2")
            except grpc.RpcError as exc:
                if exc.code() == grpc.StatusCode.NOT_FOUND:
                    return str(exc.details())
            return None

        details = poll("sim-2 left", left, timeout_s=30, every_s=0.1, detail=running.diagnosis)
        assert details.endswith("known devices: sim-1")
        assert execute(runtime, "SET_CLIPBOARD", {"text": "hi"}, token=token, device="sim-1").success
        channel.close()


def test_a_reload_leaves_what_a_flag_or_the_environment_set(tmp_path: Path) -> None:
    from phoneuse_runtime.fleet.settings import load_fleet_settings, reload_file

    config = tmp_path / "fleet.toml"
    config.write_text("sim = 1\n")
    by_file = load_fleet_settings({"data_dir": tmp_path, "sim": None})
    by_flag = load_fleet_settings({"data_dir": tmp_path, "sim": 5})
    config.write_text('sim = 3\n[[phones]]\nserial = "p"\naddress = "h:1"\n')
    assert reload_file(by_file).sim == 3
    assert reload_file(by_flag).sim is None
    assert [p.serial for p in reload_file(by_flag).phones] == ["p"]


@needs_nginx
def test_a_second_fleet_for_the_same_data_dir_is_refused(tmp_path: Path) -> None:
    with fleet(tmp_path / "f", "--no-nats", ready=0) as running:
        done = subprocess.run(
            [
                *EXE,
                "fleet",
                "--data-dir",
                str(running.data_dir),
                "--no-adb",
                "--no-nats",
                "--listen",
                "127.0.0.1:0",
            ],
            capture_output=True,
            text=True,
            env=env(),
            timeout=60,
            check=False,
        )
        assert done.returncode == 2, done
        assert "another fleet is running for" in done.stderr
        assert running.proc.poll() is None
