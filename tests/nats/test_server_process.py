"""nats-server as a child process (phoneuse_runtime/nats/server_process.py), and the serve
settings that point a runtime at one: the real Debian nats-server, a real nats-py client."""

from __future__ import annotations

import socket
from pathlib import Path

import nats
import pytest

from phoneuse_runtime.config.settings import ConfigError, Settings, load_settings
from phoneuse_runtime.nats.server_process import NatsServer, NatsServerError, nats_server, nats_server_sync


def _refused(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return True
    return False


async def test_a_started_server_takes_jetstream_clients_on_a_random_loopback_port(tmp_path: Path) -> None:
    async with nats_server(tmp_path / "store") as srv:
        assert srv.url.startswith("nats://127.0.0.1:") and srv.port > 0
        nc = await nats.connect(srv.url)
        js = nc.jetstream()
        await js.add_stream(name="T", subjects=["t.>"])
        ack = await js.publish("t.one", b"x")
        assert ack.stream == "T" and ack.seq == 1
        await nc.close()
        port, pid = srv.port, srv.pid
    assert pid is not None and not srv.running and _refused(port)
    assert (tmp_path / "store" / "jetstream").is_dir()  # file storage under the store dir


async def test_a_restart_on_the_same_port_and_store_keeps_the_stream(tmp_path: Path) -> None:
    srv = NatsServer(tmp_path / "store")
    url = await srv.start()
    nc = await nats.connect(url)
    js = nc.jetstream()
    await js.add_stream(name="T", subjects=["t.>"])
    await js.publish("t.one", b"kept")
    await nc.close()
    await srv.stop()
    assert await srv.start() == url  # the same url: clients reconnect to it
    try:
        nc = await nats.connect(url)
        msg = await nc.jetstream().get_msg("T", 1)
        assert msg.data == b"kept"
        await nc.close()
    finally:
        await srv.stop()


def test_the_sync_variant_starts_and_stops(tmp_path: Path) -> None:
    with nats_server_sync(tmp_path / "store") as srv:
        assert srv.running
        port = srv.port
        assert not _refused(port)
    assert _refused(port)


def test_a_missing_executable_says_how_to_install(tmp_path: Path) -> None:
    with pytest.raises(NatsServerError, match="apt-get install nats-server"):
        NatsServer(tmp_path, executable="no-such-nats-server-here").start_sync()


def test_a_server_that_cannot_start_says_so_and_names_its_log(tmp_path: Path) -> None:
    failed = r"exited with status \d+ at start; see .*nats-server.log"
    with nats_server_sync(tmp_path / "a") as first, pytest.raises(NatsServerError, match=failed):
        NatsServer(tmp_path / "b", port=first.port).start_sync()  # its port is taken


def test_serve_settings_name_the_nats_url_and_the_device(tmp_path: Path) -> None:
    settings = load_settings(
        {"data_dir": tmp_path, "nats_url": "nats://127.0.0.1:4222", "device_name": "pixel-7"}
    )
    assert settings.nats_url == "nats://127.0.0.1:4222"
    assert settings.resolved_device_name == "pixel-7"
    (tmp_path / "config.toml").write_text('nats_url = "nats://127.0.0.1:1"\ndevice_name = "p_1"\n')
    from_file = load_settings({"data_dir": tmp_path})
    assert (from_file.nats_url, from_file.device_name) == ("nats://127.0.0.1:1", "p_1")


def test_the_device_name_defaults_to_the_serial_made_a_name() -> None:
    assert Settings(device="adb:192.168.1.5:5555").resolved_device_name == "192_168_1_5_5555"
    assert Settings(device="adb:emulator-5554").resolved_device_name == "emulator-5554"
    assert Settings(device="sim").resolved_device_name == "sim"
    assert Settings(device="termux").resolved_device_name == "termux"


@pytest.mark.parametrize("name", ["has space", "a.b", "x" * 65, "ü", "a>b"])
def test_a_bad_device_name_is_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(ConfigError, match="is not a device name"):
        load_settings({"data_dir": tmp_path, "device_name": name})


@pytest.mark.parametrize(
    "url", ["127.0.0.1:4222", "http://127.0.0.1:4222", "nats://", "nats://user:pw@127.0.0.1:4222"]
)
def test_a_bad_nats_url_is_refused(tmp_path: Path, url: str) -> None:
    with pytest.raises(ConfigError, match=r"nats_url \(flag\): must be nats://"):
        load_settings({"data_dir": tmp_path, "nats_url": url})


async def test_users_change_while_it_runs_and_jetstream_stays_on(tmp_path: Path) -> None:
    """A member that leaves loses its user; the reload keeps JetStream (2.9 stops it when the
    config that is re-read does not say it), and a member that joins gets in."""
    import asyncio

    from nats.errors import Error as NatsError

    from phoneuse_runtime.auth.tokens import generate_token
    from phoneuse_runtime.nats import users
    from phoneuse_runtime.nats.link import connect_options

    files = {}
    for name in ("fleet", "runtime-p1", "runtime-p2"):
        files[name] = tmp_path / name
        files[name].write_text(generate_token() + "\n")
    admin, p1, p2 = (
        users.admin(files["fleet"]),
        users.runtime("p1", files["runtime-p1"]),
        users.runtime("p2", files["runtime-p2"]),
    )
    srv = NatsServer(tmp_path / "store", users=[admin, p1])
    url = await srv.start()

    async def login(user: users.NatsUser) -> bool:
        try:
            nc = await nats.connect(
                url,
                allow_reconnect=False,
                connect_timeout=2,
                **connect_options(user.name, str(user.password_file)),
            )
        except (NatsError, OSError):
            return False
        await nc.close()
        return True

    async def until(user: users.NatsUser, allowed: bool) -> None:
        for _ in range(100):  # the reload is SIGHUP's: polled, bounded
            if await login(user) is allowed:
                return
            await asyncio.sleep(0.05)
        raise AssertionError(f"{user.name} {'still refused' if allowed else 'still let in'}")

    try:
        assert await login(p1) and not await login(p2)
        with pytest.raises(NatsError):
            await nats.connect(url, allow_reconnect=False, connect_timeout=2)  # nobody without a user
        srv.set_users([admin, p2])
        await until(p2, True)
        await until(p1, False)
        nc = await nats.connect(url, **connect_options(admin.name, str(admin.password_file)))
        js = nc.jetstream()
        await js.add_stream(name="T", subjects=["t.>"])
        assert (await js.publish("t.one", b"x")).seq == 1
        await nc.close()
    finally:
        await srv.stop()
    with pytest.raises(NatsServerError, match="a token or users"):
        NatsServer(tmp_path / "s2", token_file=files["fleet"], users=[admin])


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        ({"nats_user": "a b", "nats_token_file": "/x"}, r"nats_user \(flag\): 'a b' is not a user name"),
        ({"nats_user": "reader"}, r"nats_user \(flag\): needs nats_token_file"),
    ],
)
def test_a_bad_nats_user_is_refused_at_load(flags: dict[str, str], says: str) -> None:
    with pytest.raises(ConfigError, match=says):
        load_settings(flags)


def test_a_stop_as_asked_says_so_not_its_exit_status(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """nats-server exits 1 on SIGTERM after a clean shutdown: 'stopped (status 1)' read as a
    failure at every clean fleet stop (issue 28 §10)."""
    with (
        caplog.at_level("INFO", logger="phoneuse_runtime.nats.server_process"),
        nats_server_sync(tmp_path / "store") as srv,
    ):
        pid = srv.pid
    said = [r.getMessage() for r in caplog.records if "stopped" in r.getMessage()]
    assert said == [f"nats-server (pid {pid}) stopped cleanly on SIGTERM"]
    assert all(r.levelname == "INFO" for r in caplog.records)
