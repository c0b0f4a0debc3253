"""Where the running server can be reached: what `serve` records, and what the client commands
check before they send the token.

Every app on a phone shares the loopback, so a TCP port proves nothing about who listens on it:
once the server is gone, any app may take its port and collect `Bearer <token>` from the next
client. So `serve` also listens on a Unix socket inside the data dir, which on the phone only the
Termux app can reach, and records its addresses and its pid in `server.json`. A client sends the
token only to a server that this record names and whose process is alive, over the socket when
the record has one; it never guesses an address.

The record also holds the Iris gateway's address as bound (its real port when the settings say
port 0), which `pair new` puts in the QR code for the app to dial.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import socket
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from phoneuse_runtime.util.files import atomic_write_text

log = logging.getLogger(__name__)

SERVER_FILE = "server.json"  # the record serve writes in its data dir
SOCKET_FILE = "server.sock"
# sockaddr_un.sun_path holds 108 bytes on Linux (104 on the BSDs), the terminating NUL included.
SUN_PATH_MAX = 107


class NoEndpoint(Exception):
    """A client cannot make its call: no server to call, or no token to call it with. The message
    says why, and what to do."""


class NoServer(NoEndpoint):
    """No live server is recorded in the data dir; the message says why, and what to do."""


def _process_state(pid: int) -> tuple[str, int] | None:
    """The state letter and start time (clock ticks after boot) of a process, from Linux's
    procfs (Android's too); None where there is none."""
    try:
        line = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    fields = line.rpartition(")")[2].split()  # the name, in parentheses, may hold spaces
    try:
        return fields[0], int(fields[19])
    except (IndexError, ValueError):
        return None


@dataclass(frozen=True)
class Record:
    """What `server.json` holds: the server's pid (and its start time, which tells it from a later
    process given the same pid), its TCP address, its socket (if any) and the gateway's
    HOST:PORT as bound (if it serves one)."""

    pid: int
    address: str
    unix: str | None  # "unix:/abs/path", the address the client commands prefer
    started: int | None = None
    gateway: str | None = None
    # The MCP front end's URL as bound (`serve --mcp-listen`), the device it serves and the names
    # of every action and query it serves (what `phoneuse-runtime mcp` attached to it lists).
    mcp: str | None = None
    device: str | None = None
    served: list[str] | None = None

    @classmethod
    def of_this_process(cls, address: str, unix: str | None, *, gateway: str | None = None) -> Record:
        state = _process_state(os.getpid())
        return cls(os.getpid(), address, unix, state[1] if state else None, gateway)

    def to_json(self) -> str:
        return json.dumps(
            {
                "pid": self.pid,
                "started": self.started,
                "address": self.address,
                "unix": self.unix,
                "gateway": self.gateway,
                **({"mcp": self.mcp} if self.mcp else {}),
                **({"device": self.device} if self.device else {}),
                **({"served": self.served} if self.served is not None else {}),
            }
        )


def write_record(data_dir: Path, record: Record) -> Path:
    path = data_dir / SERVER_FILE
    atomic_write_text(path, record.to_json())  # a 0600 file, whole or not at all
    return path


def socket_path(data_dir: Path) -> Path | None:
    """Where `serve` puts its socket: in the data dir, else (when that path is too long for a
    socket) in a private directory of the temp dir; None when neither will do."""
    preferred = data_dir.absolute() / SOCKET_FILE
    if len(os.fsencode(preferred)) <= SUN_PATH_MAX:
        return preferred
    # One name per data dir, so that a second server for it finds the first one's socket.
    digest = hashlib.sha256(os.fsencode(data_dir.absolute())).hexdigest()[:16]
    private = Path(tempfile.gettempdir()).absolute() / f"phoneuse-runtime-{os.geteuid()}"
    fallback = private / f"{digest}.sock"
    if len(os.fsencode(fallback)) > SUN_PATH_MAX:
        log.warning(
            "%s is too long for a Unix socket (%d bytes at most) and so is %s: serving on TCP only",
            preferred,
            SUN_PATH_MAX,
            fallback,
        )
        return None
    try:
        private.mkdir(mode=0o700, exist_ok=True)
        info = private.lstat()
    except OSError as exc:
        log.warning("cannot make the private directory %s (%s): serving on TCP only", private, exc)
        return None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or stat.S_IMODE(info.st_mode) & 0o077:
        log.warning(
            "%s is not a directory private to this user: serving on TCP only (remove it to fix this)",
            private,
        )
        return None
    log.warning(
        "%s is too long for a Unix socket (%d bytes at most): the socket is %s instead",
        preferred,
        SUN_PATH_MAX,
        fallback,
    )
    return fallback


def _answers(path: Path) -> bool:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(5.0)
        try:
            probe.connect(str(path))
        except OSError:  # refused (nobody listens), gone, or not a socket
            return False
    return True


def claim_socket(path: Path, data_dir: Path) -> None:
    """Makes way for the server's socket at `path`. A socket that a server answers on means
    another server runs for this data dir: that is an error (binding would take its socket from
    it). One that nobody answers on is what a killed server left, and is removed."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(info.st_mode):
        raise OSError(f"{path} is in the way of the server's socket and is not a socket; remove it")
    if _answers(path):
        raise OSError(
            f"another server is already serving for {data_dir} (it answers on {path}); "
            "stop it first, or give this one another --data-dir"
        )
    path.unlink(missing_ok=True)
    log.info("removed %s, a socket left by a server that did not stop cleanly", path)


def warn_if_shared(path: Path) -> None:
    """Logs a warning when other users may read `path` (a file) or enter it (a directory)."""
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        return
    if mode & 0o077:
        private = "700" if path.is_dir() else "600"
        log.warning(
            "%s is open to other users (mode %03o), and it holds or guards the token: chmod %s %s",
            path,
            mode,
            private,
            path,
        )


def _alive(pid: int, started: object) -> bool:
    """Whether the recorded process still runs, as this user (another user's is no server of ours).
    A killed server is a zombie until its parent reaps it, and its pid may come back later."""
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    state = _process_state(pid)
    if state is None:  # no procfs: the signal's answer is all there is
        return True
    letter, now_started = state
    return letter not in ("Z", "X") and (not isinstance(started, int) or started == now_started)


def _socket_problem(path: Path) -> str | None:
    """Why the recorded socket is not to be trusted with the token, or None if it is."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return f"its socket {path} is gone (the server is stopping)"
    except OSError as exc:
        return f"its socket {path} cannot be checked ({exc.strerror})"
    if not stat.S_ISSOCK(info.st_mode) or info.st_uid != os.geteuid():
        return f"{path} is not a socket of this user's"
    return None


ADVICE = "start one with `phoneuse-runtime serve`, or name one with --server or PHONEUSE_SERVER"


def _live_record(data_dir: Path, advice: str) -> dict[str, object]:
    """The record of the live server in `data_dir`; raises NoServer, saying why, when there is none."""
    path = data_dir / SERVER_FILE
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise NoServer(f"no server is running for {data_dir} (there is no {path}); {advice}") from None
    except (OSError, ValueError) as exc:
        raise NoServer(f"cannot read {path} ({exc}); {advice}") from None
    pid = raw.get("pid") if isinstance(raw, dict) else None
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        raise NoServer(f"{path} names no server process; {advice}")
    if not _alive(pid, raw.get("started")):
        raise NoServer(
            f"no server is running for {data_dir}: the one recorded in {path} (pid {pid}) "
            f"is gone, so its addresses are not trusted with the token; {advice}"
        )
    assert isinstance(raw, dict)
    return raw


def find_server(data_dir: Path) -> str:
    """The address of the live server recorded in `data_dir`: its Unix socket when it has one,
    else its TCP address. Raises NoServer, saying why, rather than fall back to an address."""
    path = data_dir / SERVER_FILE
    raw = _live_record(data_dir, ADVICE)
    pid = raw["pid"]
    unix = raw.get("unix")
    if unix is not None:
        if not isinstance(unix, str) or not unix.startswith("unix:/"):
            raise NoServer(f"{path} names a socket that is no absolute unix: address; {ADVICE}")
        problem = _socket_problem(Path(unix.removeprefix("unix:")))
        if problem:
            raise NoServer(f"the server recorded in {path} (pid {pid}) cannot be reached: {problem}")
        return unix
    address = raw.get("address")
    if not isinstance(address, str) or not address:
        raise NoServer(f"{path} names no address; {ADVICE}")
    return address


def find_gateway(data_dir: Path) -> str | None:
    """The HOST:PORT the live server's Iris gateway listens on, as bound; None when that server
    serves no gateway. Raises NoServer when no live server is recorded in `data_dir`."""
    raw = _live_record(data_dir, "start one with `phoneuse-runtime serve`")
    gateway = raw.get("gateway")
    if gateway is None:
        return None
    if not isinstance(gateway, str) or ":" not in gateway:
        raise NoServer(f"{data_dir / SERVER_FILE} names no gateway address HOST:PORT")
    return gateway


def find_mcp_url(data_dir: Path) -> str | None:
    """The URL the live server serves MCP (Streamable HTTP) at, as bound; None when it serves none
    (`serve` without --mcp-listen). Raises NoServer when no live server is recorded in `data_dir`."""
    raw = _live_record(data_dir, "start one with `phoneuse-runtime serve --mcp-listen 127.0.0.1:8766`")
    url = raw.get("mcp")
    if url is None:
        return None
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise NoServer(f"{data_dir / SERVER_FILE} names no MCP URL")
    return url


def served_by_live_server(data_dir: Path) -> tuple[str | None, list[str] | None]:
    """The device the live server in `data_dir` serves and the names of its actions and queries,
    as it recorded them (None where its record does not say). Raises NoServer as find_server does."""
    raw = _live_record(data_dir, ADVICE)
    device, served = raw.get("device"), raw.get("served")
    return (
        device if isinstance(device, str) else None,
        [n for n in served if isinstance(n, str)] if isinstance(served, list) else None,
    )
