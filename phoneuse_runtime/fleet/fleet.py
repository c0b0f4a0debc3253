"""`phoneuse-runtime fleet`: one runtime per phone behind one front door.

The fleet finds its devices (N simulated phones, the devices the adb server lists as they come
and go, and phones whose runtime runs elsewhere, by address, from the config file), names them
(util/device_names.py: two serials with one name, in any case, are refused; a device that cannot
join is refused on its own), runs and supervises one `serve` per local device (members.py), runs
nats-server for their events unless given a NATS url, and runs nginx as the door (door.py),
rewritten and reloaded whenever a device comes, goes, or its runtime restarts on a new port.
`fleet.json` in the fleet data dir records the door's address and the devices, for people and
tests.

    FLEET_DIR/fleet.toml        the config (settings.py), re-read on SIGHUP
    FLEET_DIR/tokens.json       the fleet's token hashes (tokens.py), read by every member
    FLEET_DIR/fleet.json        what runs now: the door, the NATS url, the devices
    FLEET_DIR/members/NAME/     each member's data dir (its own token, memory, server.json)
    FLEET_DIR/nginx/            the door's prefix: nginx.conf, nginx.pid, logs/, temp/
    FLEET_DIR/nats/             nats-server's JetStream store (when the fleet runs it)
    FLEET_DIR/nats-users/       the passwords of its users (fleet/nats_users.py): the fleet's,
                                the reader's (for `events`), one per member, each 0600
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from phoneuse_runtime.auth.tokens_file import TOKENS_FILE
from phoneuse_runtime.config.settings import Settings
from phoneuse_runtime.fleet.door import DoorError, Nginx, Route, bind_listener, known_devices
from phoneuse_runtime.fleet.members import Member, MemberOptions, MemberSpec, exit_reason, summary
from phoneuse_runtime.fleet.nats_users import FleetNatsUsers
from phoneuse_runtime.fleet.settings import FleetConfigError, FleetSettings, RemotePhone, reload_file
from phoneuse_runtime.nats.users import READER
from phoneuse_runtime.util.device_names import (
    NameCollision,
    collision,
    device_name,
    device_names,
    name_key,
    serial_problem,
)
from phoneuse_runtime.util.display import printable
from phoneuse_runtime.util.extras import nats_py_problem
from phoneuse_runtime.util.files import append_private, atomic_write_text, private_dir

if TYPE_CHECKING:
    from phoneuse_runtime.nats.server_process import NatsServer

log = logging.getLogger(__name__)

WITHOUT_NATS_PY = (
    "nats-py is not installed: the fleet runs without NATS (each runtime keeps its leases in "
    "its own memory; no fleet-wide events); for them, pip install '.[nats]' from a checkout "
    "(or pip install nats-py), or run with --no-nats to say so"
)

RECORD_FILE = "fleet.json"
NGINX_BACKOFF_MAX_S = 30.0
SERIAL_SHOWN = 80  # characters of a refused serial the log quotes
REFUSED_MAX = 256  # refused serials remembered, so that each is logged once


def _lock(data_dir: Path) -> IO[bytes]:
    """An exclusive lock on the fleet's data dir, held while the returned file is open."""
    import fcntl

    handle = append_private(data_dir / "fleet.lock")  # held for the fleet's life
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        raise FleetConfigError(
            f"another fleet is running for {data_dir}; stop it first, or give this one another --data-dir"
        ) from None
    return handle


def sim_serials(count: int) -> list[str]:
    return [f"sim-{i}" for i in range(1, count + 1)]


class Fleet:
    """The running fleet. `run` returns when `stop` is set; `reload` (SIGHUP) re-reads the
    config file's phones."""

    def __init__(self, settings: FleetSettings, *, max_receive_bytes: int | None = None) -> None:
        self.settings = settings
        self.dir = settings.data_dir
        self.max_receive_bytes = max_receive_bytes or Settings().grpc_max_receive_bytes
        self.members: dict[str, Member] = {}  # by serial
        self.remote: dict[str, RemotePhone] = {}  # by serial
        self.names: dict[str, str] = {}  # serial -> name, of every device
        self.nats_url = settings.nats_url or None
        token_file = settings.nats_token_file
        self.nats_token_file = Path(token_file).expanduser() if token_file else None
        self.nats_users: FleetNatsUsers | None = None  # with the fleet's own nats-server
        self._nats: NatsServer | None = None
        self.door: Nginx | None = None
        self._changed = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._options: MemberOptions | None = None
        self._leaving: set[asyncio.Future[None]] = set()  # members being stopped
        self._routed: list[Route] = []  # the routes of the door's last reload
        self._refused: dict[str, str] = {}  # serial -> why, of devices refused (said once each)

    # --- devices ---------------------------------------------------------------------------
    def _name_of(self, serial: str) -> str | None:
        """A new device's name, or None (logged, once per serial) when it cannot join: its
        serial is too long, or its name is another's (without regard to case, as the door
        matches it). The other devices are routed as before."""
        problem = serial_problem(serial)
        name = device_name(serial)
        if problem is None:
            for other, taken in self.names.items():
                if name_key(taken) == name_key(name) and other != serial:
                    problem = collision(other, taken, serial, name)
                    break
        if problem is None:
            self._refused.pop(serial, None)
            return name
        if serial not in self._refused:
            if len(self._refused) >= REFUSED_MAX:  # the oldest is forgotten (said again if it comes again)
                del self._refused[next(iter(self._refused))]
            self._refused[serial] = problem
            shown = serial if len(serial) <= SERIAL_SHOWN else serial[:SERIAL_SHOWN] + "..."
            log.error("refusing device %s: %s", printable(repr(shown)), printable(problem))
        return None

    def _add_member(self, serial: str, device: str) -> None:
        if serial in self.members or serial in self.remote:
            return
        name = self._name_of(serial)
        if name is None:
            return
        assert self._options is not None
        self.names[serial] = name
        self._nats_user(name, joins=True)
        member = Member(MemberSpec(serial, name, device), self._options, self._changed.set)
        self.members[serial] = member
        member.start()
        log.info("device %s joins (%s)", name, device)
        self._changed.set()

    def _nats_user(self, name: str, *, joins: bool) -> None:
        """A member's NATS user, given before it starts and taken when it leaves (the fleet's
        own nats-server re-reads its users: the member's runtime retries until it is in)."""
        if self.nats_users is None or self._nats is None:
            return
        if joins:
            self.nats_users.add(name)
        else:
            self.nats_users.remove(name)
        self._nats.set_users(self.nats_users.users())

    def _set_remote(self, phones: Iterable[RemotePhone]) -> None:
        wanted = {p.serial: p for p in phones}
        for serial in list(self.remote):
            if serial not in wanted or wanted[serial] != self.remote[serial]:
                del self.remote[serial]
                self.names.pop(serial, None)
                log.info("phone %s leaves the fleet", device_name(serial))
        for serial, phone in wanted.items():
            if serial in self.remote or serial in self.members:
                continue
            name = self._name_of(serial)
            if name is None:
                continue
            self.names[serial] = name
            self.remote[serial] = phone
            log.info("phone %s joins at %s", name, phone.address)
        self._changed.set()

    def _set_sims(self, count: int) -> None:
        """As many simulated phones as `count` (the config file's `sim`, re-read): the highest
        numbers leave, new ones join."""
        wanted = set(sim_serials(count))
        for serial in sim_serials(count):
            self._add_member(serial, "sim")
        for serial, member in list(self.members.items()):
            if member.spec.device == "sim" and serial not in wanted:
                self._leave(serial)

    def _leave(self, serial: str) -> None:
        """Takes the device out of the door at once; its runtime stops in the background."""
        member = self.members.pop(serial, None)
        if member is None:
            return
        self.names.pop(serial, None)
        self._nats_user(member.spec.name, joins=False)
        log.info("device %s leaves", member.spec.name)
        self._changed.set()
        task = asyncio.ensure_future(member.stop())
        self._leaving.add(task)
        task.add_done_callback(self._leaving.discard)

    def _adb_changed(self, ready: frozenset[str]) -> None:  # on the event loop
        for serial in sorted(ready):
            self._add_member(serial, f"adb:{serial}")
        for serial, member in list(self.members.items()):
            if member.spec.device.startswith("adb:") and serial not in ready:
                self._leave(serial)

    def routes(self) -> list[Route]:
        routes = [Route(m.spec.name, m.spec.serial, m.address) for m in self.members.values()]
        routes += [Route(self.names[s], s, p.address) for s, p in self.remote.items()]
        return sorted(routes, key=lambda r: r.name)

    # --- the record ------------------------------------------------------------------------
    def record(self, routed: Sequence[Route] = ()) -> dict[str, Any]:
        """What fleet.json says: each device's address as the door routes to it (`routed`, the
        routes of its last reload), so that a device named there with an address answers."""
        devices: list[dict[str, Any]] = summary(list(self.members.values()))
        devices += [
            {"name": self.names[s], "serial": s, "device": "remote", "address": p.address}
            for s, p in self.remote.items()
        ]
        addresses = {r.name: r.address for r in routed}
        for device in devices:
            device["address"] = addresses.get(device["name"])
        return {
            "pid": os.getpid(),
            "door": self.door.listen if self.door else None,
            "nats_url": self.nats_url,
            "nats_token_file": str(self.nats_token_file) if self.nats_token_file else None,
            # For the `events` command: --nats-user reader --nats-token-file PASSWORD_FILE.
            "nats_reader": (
                {"user": READER, "password_file": str(self.nats_users.password_file(READER))}
                if self.nats_users is not None
                else None
            ),
            "tokens_file": str(self.dir / TOKENS_FILE),
            "devices": sorted(devices, key=lambda d: str(d["name"])),
        }

    def _write_record(self, routed: Sequence[Route] = ()) -> None:
        atomic_write_text(self.dir / RECORD_FILE, json.dumps(self.record(routed), indent=2) + "\n")

    # --- running ---------------------------------------------------------------------------
    async def run(self, *, stop: asyncio.Event, reload: asyncio.Event | None = None) -> int:
        s = self.settings
        private_dir(self.dir)
        self._loop = asyncio.get_running_loop()
        sims = sim_serials(s.sim)
        try:  # collisions among the devices known at start are refused, naming both serials
            device_names([*sims, *(p.serial for p in s.phones)])
        except NameCollision as exc:
            raise FleetConfigError(str(exc)) from None
        lock = _lock(self.dir)  # one fleet per data dir: a second would fight the first for it
        try:
            sock = bind_listener(s.listen)  # before anything starts: a port in use is said at once
        except DoorError:
            lock.close()
            raise
        self._options = MemberOptions(
            root=private_dir(self.dir / "members"),
            tokens_file=self.dir / TOKENS_FILE,
            adb_server=s.adb_server or None,
            gateway=s.gateway,
            nats_url=self.nats_url,
            nats_token_file=self.nats_token_file,
        )
        door = Nginx(
            prefix=private_dir(self.dir / "nginx"), sock=sock, max_receive_bytes=self.max_receive_bytes
        )
        self.door = door
        watch = None
        nats = None
        try:
            if self.nats_url is None and s.nats:
                nats = await self._own_nats()
            door.write([])
            await door.check()
            await door.start([])
            for serial in sims:
                self._add_member(serial, "sim")
            self._set_remote(s.phones)
            if s.adb:
                from phoneuse_runtime.fleet.adb_watch import AdbWatch

                loop = self._loop

                def adb_changed(ready: frozenset[str]) -> None:  # on the watch's thread
                    loop.call_soon_threadsafe(self._adb_changed, ready)

                watch = AdbWatch(s.adb_server or Settings().adb_server, adb_changed)
                watch.start()
            self._write_record()
            log.info("the fleet's door is %s; %d device(s) starting", door.listen, len(self.names))
            await self._serve(door, stop, reload)
        finally:
            if watch is not None:
                await asyncio.to_thread(watch.stop)
            await asyncio.gather(*(m.stop() for m in self.members.values()), *self._leaving)
            await door.stop()
            sock.close()
            if nats is not None:
                await nats.stop()
            (self.dir / RECORD_FILE).unlink(missing_ok=True)
            lock.close()
            log.info("the fleet stopped")
        return 0

    async def _own_nats(self) -> NatsServer | None:
        """The fleet's own nats-server, started; None on the plain install (no nats-py), whose
        phones serve all the same, said once."""
        if nats_py_problem() is not None:
            log.warning(WITHOUT_NATS_PY)
            return None
        return await self._start_nats()

    async def _start_nats(self) -> NatsServer:
        # Part B's launcher (phoneuse_runtime/nats/server_process.py); imported here so that a
        # fleet without it (or without nats-server, --no-nats) runs the rest.
        from phoneuse_runtime.nats.server_process import NatsServer, NatsServerError

        # A user per party even on loopback (nats/users.py): the reader reads, each member writes
        # only its own subjects and lease, the fleet administers.
        users = FleetNatsUsers(self.dir)
        self.nats_users = users
        server = NatsServer(self.dir / "nats", users=users.users(), dies_with_parent=True)
        try:
            self.nats_url = await server.start()
            await self._administer(self.nats_url, users)
        except NatsServerError as exc:
            await server.stop()
            raise FleetConfigError(f"{exc} (or run the fleet with --no-nats, or give --nats-url)") from None
        self._nats = server
        assert self._options is not None
        self._options = replace(self._options, nats_url=self.nats_url, nats_users_dir=users.dir)
        return server

    async def _administer(self, url: str, users: FleetNatsUsers) -> None:
        """As the fleet's own user: the events stream (bounded as the settings say) and the
        leases' bucket, which the members may use but not make."""
        import nats

        from phoneuse_runtime.nats.leases import ensure_bucket
        from phoneuse_runtime.nats.link import connect_options
        from phoneuse_runtime.nats.server_process import NatsServerError
        from phoneuse_runtime.nats.sink import StreamBounds, ensure_stream
        from phoneuse_runtime.nats.users import ADMIN

        s = self.settings
        options = connect_options(ADMIN, str(users.admin.password_file))
        try:
            nc = await nats.connect(url, name="phoneuse-runtime fleet", connect_timeout=5, **options)
        except Exception as exc:  # nats-py's connection errors, OSError, timeouts
            raise NatsServerError(f"cannot reach the fleet's nats-server at {url}: {exc}") from None
        try:
            js = nc.jetstream()
            await ensure_stream(
                js, StreamBounds(max_age_s=s.nats_stream_max_age_s, max_bytes=s.nats_stream_max_bytes)
            )
            await ensure_bucket(js)
        finally:
            await nc.close()

    async def _serve(self, door: Nginx, stop: asyncio.Event, reload: asyncio.Event | None) -> None:
        waits: dict[str, Callable[[], Any]] = {
            "stop": stop.wait,
            "changed": self._changed.wait,
            "door": self._door_wait,
        }
        if reload is not None:
            waits["reload"] = reload.wait
        backoff = 0.5
        while not stop.is_set():
            tasks = {asyncio.ensure_future(fn()): key for key, fn in waits.items()}
            done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in pending:
                task.cancel()
            fired = {tasks[t] for t in done}
            if "stop" in fired:
                return
            if "reload" in fired and reload is not None:
                reload.clear()
                try:
                    reloaded = reload_file(self.settings)
                except FleetConfigError as exc:
                    log.error("kept the phones as they were: %s", exc)
                else:
                    self._set_remote(reloaded.phones)
                    if reloaded.sim is not None:
                        self._set_sims(reloaded.sim)
                    log.info("re-read %s", self.settings.config_file)
            if "door" in fired:
                assert door.proc is not None
                code = door.proc.returncode
                log.error(
                    "the door (nginx) stopped (%s): %s; restarting it in %.1f s",
                    exit_reason(code if code is not None else 0),
                    door.error_log_tail(3) or "(its log says nothing)",
                    backoff,
                )
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), backoff)
                backoff = min(backoff * 2, NGINX_BACKOFF_MAX_S)
                if stop.is_set():
                    return
                await door.start(self.routes())
            self._changed.clear()
            routes = self.routes()
            try:
                await door.update(routes)
                self._routed = routes
            except DoorError as exc:
                log.error("the door keeps its routes: %s", exc)
            self._write_record(self._routed)

    async def _door_wait(self) -> None:
        assert self.door is not None and self.door.proc is not None
        await self.door.proc.wait()


def describe(record: dict[str, Any]) -> str:
    routes = [Route(d["name"], d["serial"], d.get("address")) for d in record.get("devices", [])]
    return f"door {record.get('door')}: {known_devices(routes)}"


async def run_fleet(settings: FleetSettings) -> int:
    """Runs the fleet until SIGINT/SIGTERM; SIGHUP re-reads the config file's phones."""
    stop, reload = asyncio.Event(), asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    loop.add_signal_handler(signal.SIGHUP, reload.set)
    started = time.monotonic()
    fleet = Fleet(settings)
    code = await fleet.run(stop=stop, reload=reload)
    log.debug("the fleet ran %.0f s", time.monotonic() - started)
    return code
