"""One `phoneuse-runtime serve` per device, supervised: started with its own data dir under the
fleet's, its port learnt from the `server.json` it records (endpoint.py), and restarted when it
exits, after a back-off that grows while it keeps failing; the log says why it exited (its exit
code or signal, and the last line it wrote to stderr)."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import logging
import os
import signal
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from phoneuse_runtime.util.children import die_with_parent
from phoneuse_runtime.util.display import printable
from phoneuse_runtime.util.endpoint import SERVER_FILE

log = logging.getLogger(__name__)

BACKOFF_FIRST_S = 0.5
BACKOFF_MAX_S = 30.0
# A runtime that ran this long before it exited was healthy: the back-off starts again.
HEALTHY_AFTER_S = 60.0
READY_TIMEOUT_S = 120.0  # twenty runtimes starting at once on a small machine take a while
STOP_GRACE_S = 10.0
# What a member's environment must not bring from the fleet's: each member has its own token,
# data dir and listening address, given as flags.
_PRIVATE_ENV = ("PHONEUSE_TOKEN", "PHONEUSE_DATA_DIR", "PHONEUSE_GRPC_LISTEN", "PHONEUSE_SIM_STATE")


@dataclass(frozen=True)
class MemberSpec:
    """A device the fleet runs a runtime for: its serial, its name, and the `--device` to serve."""

    serial: str
    name: str
    device: str  # "sim" or "adb:SERIAL"


@dataclass(frozen=True)
class MemberOptions:
    """What every member `serve` gets beside its device."""

    root: Path  # members' data dirs: root/NAME
    tokens_file: Path
    adb_server: str | None = None
    gateway: bool = False
    extra_args: tuple[str, ...] = ()  # e.g. --nats-url URL (then --device-name NAME is added)
    nats_url: str | None = None
    nats_token_file: Path | None = None
    # The fleet's own nats-server: each member is its own user, `runtime-NAME`, whose password
    # is the file of that name here (fleet/nats_users.py); else nats_token_file, if any.
    nats_users_dir: Path | None = None
    executable: tuple[str, ...] = (sys.executable, "-m", "phoneuse_runtime")


def exit_reason(returncode: int) -> str:
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exit code {returncode}"


@dataclass
class Member:
    """A device's supervised runtime. `address` is its HOST:PORT while it serves, else None;
    `on_change` is called whenever that changes."""

    spec: MemberSpec
    options: MemberOptions
    on_change: Callable[[], None]
    address: str | None = None
    pid: int | None = None
    restarts: int = 0
    last_exit: str = ""
    _proc: asyncio.subprocess.Process | None = None
    _task: asyncio.Task[None] | None = None
    _stopping: asyncio.Event = field(default_factory=asyncio.Event)
    _tail: collections.deque[str] = field(default_factory=lambda: collections.deque(maxlen=20))

    @property
    def data_dir(self) -> Path:
        return self.options.root / self.spec.name

    def argv(self) -> list[str]:
        o = self.options
        argv = [
            *o.executable,
            "serve",
            "--device",
            self.spec.device,
            "--data-dir",
            str(self.data_dir),
            "--grpc-listen",
            "127.0.0.1:0",
            "--tokens-file",
            str(o.tokens_file),
        ]
        if self.spec.device == "sim":
            argv += ["--sim-state", str(self.data_dir / "sim-state.json")]
        if o.adb_server and self.spec.device.startswith("adb"):
            argv += ["--adb-server", o.adb_server]
        argv += ["--gateway-listen", "127.0.0.1:0"] if o.gateway else ["--no-gateway"]
        if o.nats_url:
            argv += ["--nats-url", o.nats_url, "--device-name", self.spec.name]
            if o.nats_users_dir is not None:
                from phoneuse_runtime.nats.users import runtime_user

                user = runtime_user(self.spec.name)
                argv += ["--nats-user", user, "--nats-token-file", str(o.nats_users_dir / user)]
            elif o.nats_token_file is not None:
                argv += ["--nats-token-file", str(o.nats_token_file)]
        return [*argv, *o.extra_args]

    def start(self) -> None:
        self._task = asyncio.create_task(self._supervise(), name=f"member {self.spec.name}")

    async def stop(self) -> None:
        """Stops the runtime (SIGTERM: it stops cleanly; SIGKILL past the grace) and its supervision."""
        self._stopping.set()
        proc = self._proc
        if proc is not None and proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.terminate()
            try:
                await asyncio.wait_for(proc.wait(), STOP_GRACE_S)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                await proc.wait()
        if self._task is not None:
            await self._task

    def _set(self, address: str | None, pid: int | None) -> None:
        if (address, pid) != (self.address, self.pid):
            self.address, self.pid = address, pid
            self.on_change()

    async def _supervise(self) -> None:
        backoff = BACKOFF_FIRST_S
        while not self._stopping.is_set():
            started = time.monotonic()
            try:
                returncode = await self._run_once()
            except OSError as exc:
                returncode, self.last_exit = None, f"could not start: {exc}"
            self._set(None, None)
            if self._stopping.is_set():
                return
            if returncode is not None:
                last = self._tail[-1] if self._tail else "(nothing)"
                self.last_exit = f"{exit_reason(returncode)}; its last words: {last}"
            if time.monotonic() - started >= HEALTHY_AFTER_S:
                backoff = BACKOFF_FIRST_S
            self.restarts += 1
            log.warning(
                "%s's runtime stopped (%s); restarting it in %.1f s",
                self.spec.name,
                printable(self.last_exit),
                backoff,
            )
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), backoff)
            backoff = min(backoff * 2, BACKOFF_MAX_S)

    async def _run_once(self) -> int:
        from phoneuse_runtime.util.files import private_dir

        private_dir(self.data_dir)
        env = {k: v for k, v in os.environ.items() if k not in _PRIVATE_ENV}
        env.setdefault("GRPC_VERBOSITY", "ERROR")
        self._tail.clear()
        proc = await asyncio.create_subprocess_exec(
            *self.argv(),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
            env=env,
            start_new_session=True,  # a Ctrl-C at the terminal reaches the fleet, which stops them
            preexec_fn=die_with_parent,
        )
        self._proc = proc
        reader = asyncio.create_task(self._read_stderr(proc))
        ready = asyncio.create_task(self._wait_ready(proc.pid))
        waited = asyncio.create_task(proc.wait())
        await asyncio.wait({ready, waited}, return_when=asyncio.FIRST_COMPLETED)
        if ready.done() and ready.exception() is None and ready.result():
            self._set(ready.result(), proc.pid)
            log.info("%s serves on %s (pid %d)", self.spec.name, self.address, proc.pid)
        elif ready.done() and proc.returncode is None:  # no record within the bound
            log.warning(
                "%s's runtime recorded no address in %.0f s: stopping it", self.spec.name, READY_TIMEOUT_S
            )
            proc.kill()
        ready.cancel()
        returncode = await waited
        await reader
        return returncode

    async def _read_stderr(self, proc: asyncio.subprocess.Process) -> None:
        assert proc.stderr is not None
        async for raw in proc.stderr:
            line = raw.decode("utf-8", "replace").rstrip()
            if not line:
                continue
            self._tail.append(line)
            if " ERROR " in line or " WARNING " in line:
                log.info("%s: %s", self.spec.name, printable(line))
            else:
                log.debug("%s: %s", self.spec.name, printable(line))

    async def _wait_ready(self, pid: int) -> str | None:
        """The runtime's TCP address once its own record (pid and all) is written; None past the bound."""
        path = self.data_dir / SERVER_FILE
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            try:
                raw = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                raw = None
            if isinstance(raw, dict) and raw.get("pid") == pid and isinstance(raw.get("address"), str):
                return str(raw["address"])
            await asyncio.sleep(0.05)  # polling a file, bounded by the deadline
        return None


def summary(members: Sequence[Member]) -> list[dict[str, object]]:
    return [
        {
            "name": m.spec.name,
            "serial": m.spec.serial,
            "device": m.spec.device,
            "address": m.address,
            "pid": m.pid,
            "restarts": m.restarts,
            "last_exit": m.last_exit,
        }
        for m in members
    ]
