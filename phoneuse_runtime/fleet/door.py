"""The fleet's front door: nginx's configuration for the fleet's members, and nginx itself as a
child process of the fleet (its own prefix, pid file, temp dirs and log in the fleet data dir;
no root, nothing in /etc).

One gRPC port for every phone. Each call is routed by its `x-phoneuse-device` metadata header,
the device's serial or its name (util/device_names.py), to that device's runtime (`grpc_pass`). A call
with no header, or one naming no device of the fleet, is answered by nginx itself, at once, with
a Trailers-Only gRPC response: NOT_FOUND and a message naming the fleet's devices. A call for a
device whose runtime does not answer (it is restarting) gets UNAVAILABLE, which clients retry.

Written for Debian's nginx 1.22: `listen ... http2` (1.25's `http2 on` is unknown there).
"""

from __future__ import annotations

import asyncio
import contextlib
import grp
import logging
import os
import pwd
import re
import signal
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from phoneuse_runtime.auth.client import PHONE_HEADER
from phoneuse_runtime.util.children import die_with_parent
from phoneuse_runtime.util.files import PRIVATE_UMASK, append_private, atomic_write_text, private_dir

log = logging.getLogger(__name__)

HEADER = PHONE_HEADER  # what the client commands send: `--phone`
NGINX_VAR = "$http_x_phoneuse_device"
# A Subscribe stream may stay quiet this long between two events (and a long Execute, e.g. a
# WAIT_FOR, may take this long) before nginx gives up on it. The runtime pings its connections
# every grpc_keepalive_s (300 s), but a stream's quiet spell is not to depend on whether nginx
# counts a ping as a read: one day covers any an agent expects.
STREAM_TIMEOUT_S = 24 * 3600
# Bytes of gRPC framing in front of a message (a flag and a length): a request the runtime
# accepts (up to its receive limit) must pass the door.
GRPC_FRAME_BYTES = 5
RELOAD_GRACE_S = 600
START_TIMEOUT_S = 10.0
UPSTREAM_IDLE_S = 30
UPSTREAM_KEEPALIVE = 64
MAP_HASH_BUCKET = 256  # bytes: a bucket holds a 128-character key (see render_config)
MAP_HASH_MAX_MIN = 2048  # nginx's default; more with many devices
MESSAGE_MAX = 1500  # the known devices listed in grpc-message, at most this many characters

# What nginx may be asked to put in its configuration, quoted: anything else (quotes, `$`, `;`,
# braces, spaces, control characters) is refused, as a serial or an address never holds it.
_SAFE = re.compile(r"[A-Za-z0-9_.:@+/\[\]-]{1,128}")

STATUS_NOT_FOUND = 5
STATUS_RESOURCE_EXHAUSTED = 8
STATUS_UNAVAILABLE = 14


class DoorError(Exception):
    """The door cannot be configured or run as asked."""


def nginx_binary() -> str | None:
    """nginx on PATH, else Debian's /usr/sbin/nginx (a user's PATH often lacks /usr/sbin)."""
    import shutil

    found = shutil.which("nginx")
    if found:
        return found
    return "/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else None


@dataclass(frozen=True)
class Route:
    """A device the door routes to: its name, its serial and its runtime's HOST:PORT (None while
    it has none, e.g. while it restarts: its calls then get UNAVAILABLE)."""

    name: str
    serial: str
    address: str | None


def grpc_message(text: str) -> str:
    """`text` percent-encoded as the gRPC spec asks of grpc-message: bytes outside 0x20-0x7E,
    and `%`, as %XX (of its UTF-8)."""
    out = []
    for byte in text.encode("utf-8"):
        if 0x20 <= byte <= 0x7E and byte != 0x25:
            out.append(chr(byte))
        else:
            out.append(f"%{byte:02X}")
    return "".join(out)


def known_devices(routes: Sequence[Route]) -> str:
    """The fleet's devices as the door's errors name them: `name (serial)`, or the name alone."""
    parts = [
        r.name if r.name == r.serial or not _SAFE.fullmatch(r.serial) else f"{r.name} ({r.serial})"
        for r in routes
    ]
    text = ", ".join(parts) if parts else "none"
    if len(text) > MESSAGE_MAX:
        text = text[:MESSAGE_MAX].rsplit(", ", 1)[0] + f", ... ({len(parts)} in all)"
    return text


def address_problem(address: str) -> str | None:
    """Why nginx cannot be given `address` (HOST:PORT) to route to, or None."""
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536 or not _SAFE.fullmatch(address):
        return f"{address!r} is not an address to route to (HOST:PORT)"
    return None


def _quoted(text: str) -> str:
    """A string for nginx's configuration, between double quotes. nginx has no escape for `$`
    (it would read a variable) nor for control characters: those are refused, and only ever
    come from a serial (which is then left out) or a bug."""
    if "$" in text or any(ord(c) < 0x20 or ord(c) == 0x7F for c in text):
        raise DoorError(f"{text!r} cannot be put in nginx's configuration")
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _upstream(name: str) -> str:
    return f"phoneuse_{name}"


def render_config(
    *,
    prefix: Path,
    listen: str,
    routes: Sequence[Route],
    max_receive_bytes: int,
    stream_timeout_s: int = STREAM_TIMEOUT_S,
) -> str:
    """nginx.conf for the door at `listen` (HOST:PORT) to `routes`. DoorError when a serial
    cannot be put in the configuration (it is routed by its name only: logged) or two devices'
    keys are the same to nginx, which matches them without regard to case."""
    keys: dict[str, Route] = {}
    for route in routes:
        candidates = [route.name]
        if route.serial != route.name:
            if _SAFE.fullmatch(route.serial):
                candidates.append(route.serial)
            else:
                log.warning("the serial %r is routed by its name %s only", route.serial, route.name)
        for key in candidates:
            other = keys.get(key.lower())
            if other is not None and other.name != route.name:
                raise DoorError(
                    f"devices {other.serial!r} and {route.serial!r} would both be routed by {key.lower()!r} "
                    "(nginx matches the header without regard to case)"
                )
            keys[key.lower()] = route
    known = known_devices(routes)
    # Each map key costs nginx its length (rounded up to 8) and 8 bytes in a bucket: the default
    # bucket (64 on x86-64) holds no key of 47 characters or more, and nginx then refuses the
    # whole configuration. A key is at most 128 characters (_SAFE, and names are at most 64).
    hash_max = max(MAP_HASH_MAX_MIN, 1 << (2 * len(keys)).bit_length())
    no_header = grpc_message(
        f"no {HEADER} metadata: name the phone by its serial or name; known devices: {known}"
    )
    unknown = grpc_message(f"the {HEADER} metadata names no device of this fleet; known devices: {known}")
    down = grpc_message(
        "that device's runtime is not answering (it is starting or restarting); retry shortly"
    )
    too_large = grpc_message(
        f"the request is larger than the runtime's receive limit ({max_receive_bytes} bytes)"
    )
    user = ""
    if os.geteuid() == 0:  # nginx would run its workers as nobody, who cannot read the prefix
        user = f"user {pwd.getpwuid(os.geteuid()).pw_name} {grp.getgrgid(os.getegid()).gr_name};\n"
    temp = prefix / "temp"
    lines = [
        "# Generated by `phoneuse-runtime fleet`; rewritten whenever devices come and go.",
        user.rstrip("\n"),
        "worker_processes 1;",
        # A reload leaves the old worker running while calls it holds are open; a Subscribe
        # stream could hold it for a day. Past this, the old worker ends them (the client sees
        # the stream end, and subscribes again: its subscriber_id's stream takes over).
        f"worker_shutdown_timeout {RELOAD_GRACE_S}s;",
        f"pid {prefix / 'nginx.pid'};",
        f"error_log {prefix / 'logs' / 'error.log'} warn;",
        "events { worker_connections 4096; }",
        "http {",
        "    access_log off;",
        f"    client_body_temp_path {temp / 'client_body'};",
        f"    proxy_temp_path {temp / 'proxy'};",
        f"    fastcgi_temp_path {temp / 'fastcgi'};",
        f"    uwsgi_temp_path {temp / 'uwsgi'};",
        f"    scgi_temp_path {temp / 'scgi'};",
        f"    map_hash_bucket_size {MAP_HASH_BUCKET};",
        f"    map_hash_max_size {hash_max};",
        f"    map {NGINX_VAR} $phoneuse_upstream {{",
        '        default "";',
    ]
    for key, route in sorted(keys.items()):
        if route.address is not None:
            lines.append(f"        {_quoted(key)} {_upstream(route.name)};")
        else:
            lines.append(f"        {_quoted(key)} down;")
    lines.append("    }")
    for route in routes:
        if route.address is not None:
            problem = address_problem(route.address)
            if problem:  # the settings refuse it first (fleet/settings.py)
                raise DoorError(f"{route.name}'s address: {problem}")
            lines += [
                f"    upstream {_upstream(route.name)} {{",
                f"        server {route.address};",
                # nginx sends one call at a time on an upstream connection (no multiplexing):
                # idle ones are kept for the next calls, enough for an agent's burst, so that a
                # call seldom pays for a new HTTP/2 connection to the runtime.
                f"        keepalive {UPSTREAM_KEEPALIVE};",
                # Below the runtime's grpc_idle_timeout_s (60 s), after which it sends an idle
                # connection GOAWAY: nginx lets go first, and never sends a call into a closing one.
                f"        keepalive_timeout {UPSTREAM_IDLE_S}s;",
                "    }",
            ]
    body = max_receive_bytes + GRPC_FRAME_BYTES
    lines += [
        "    server {",
        f"        listen {listen} http2;",
        f"        client_max_body_size {body};",
        "        http2_max_concurrent_streams 1024;",
        f"        grpc_read_timeout {stream_timeout_s}s;",
        f"        grpc_send_timeout {stream_timeout_s}s;",
        f"        client_body_timeout {stream_timeout_s}s;",
        f"        keepalive_timeout {stream_timeout_s}s;",
        "        grpc_socket_keepalive on;",
        "        location / {",
        "            error_page 418 = @no_header;",
        "            error_page 419 = @unknown;",
        "            error_page 502 503 504 = @down;",
        f'            if ({NGINX_VAR} = "") {{ return 418; }}',
        '            if ($phoneuse_upstream = "") { return 419; }',
        '            if ($phoneuse_upstream = "down") { return 503; }',
        "            grpc_pass grpc://$phoneuse_upstream;",
        "        }",
        _trailers_only("@no_header", STATUS_NOT_FOUND, no_header),
        _trailers_only("@unknown", STATUS_NOT_FOUND, unknown),
        _trailers_only("@down", STATUS_UNAVAILABLE, down),
        _trailers_only("@too_large", STATUS_RESOURCE_EXHAUSTED, too_large),
        "    }",
        "}",
    ]
    return "\n".join(line for line in lines if line) + "\n"


def _trailers_only(location: str, status: int, message: str) -> str:
    """A location where nginx answers gRPC itself: HTTP 200, content-type application/grpc and
    grpc-status/grpc-message in the headers, with no body (a Trailers-Only response)."""
    return "\n".join(
        [
            f"        location {location} {{",
            "            default_type application/grpc;",
            f"            add_header grpc-status {status} always;",
            f"            add_header grpc-message {_quoted(message)} always;",
            "            return 200;",
            "        }",
        ]
    )


def _children(pid: int) -> set[int] | None:
    """The child processes of `pid` (nginx's workers), from Linux's procfs; None without it."""
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text(encoding="ascii")
    except OSError:
        return None
    return {int(p) for p in text.split()}


def _holds_socket(pid: int, inode: int) -> bool:
    """Whether process `pid` has the socket `inode` open (an nginx worker, its listener)."""
    wanted = f"socket:[{inode}]"
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False  # gone
    for fd in fds:
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") == wanted:
                return True
        except OSError:
            continue
    return False


def _read_small(path: Path) -> str:
    """A few bytes nginx wrote (its pid file); "" when there is none yet."""
    try:
        return path.read_text(encoding="ascii", errors="replace")
    except OSError:
        return ""


def bind_listener(listen: str) -> socket.socket:
    """A socket bound to `listen` (HOST:PORT; port 0 picks a free one) and listening, for nginx to
    inherit: the port is the fleet's from the start, and no other process can take it between
    choosing it and nginx's start."""
    host, _, port = listen.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, int(port)))
        sock.listen(1024)
    except (OSError, ValueError) as exc:
        sock.close()
        raise DoorError(f"cannot listen on {listen}: {exc}; choose another with --listen HOST:PORT") from exc
    sock.set_inheritable(True)
    return sock


def listen_address(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


class Nginx:
    """nginx as a non-daemon child: `nginx -p PREFIX -c FILE -g 'daemon off;'`, given the door's
    listening socket (nginx's own NGINX=fd; inheritance), reloaded with SIGHUP when the routes
    change, stopped with SIGQUIT (a graceful stop: open streams may finish) then SIGTERM."""

    def __init__(
        self, *, prefix: Path, sock: socket.socket, max_receive_bytes: int, binary: str | None = None
    ) -> None:
        self.prefix = prefix
        self.sock = sock
        self.listen = listen_address(sock)
        self.max_receive_bytes = max_receive_bytes
        self.binary = binary or nginx_binary() or "nginx"
        self.conf = prefix / "nginx.conf"
        self.proc: asyncio.subprocess.Process | None = None
        self._routes: tuple[Route, ...] | None = None

    def write(self, routes: Sequence[Route]) -> bool:
        """Writes the configuration for `routes`; False when it is the one already written."""
        if self._routes == tuple(routes):
            return False
        text = render_config(
            prefix=self.prefix, listen=self.listen, routes=routes, max_receive_bytes=self.max_receive_bytes
        )
        for sub in ("logs", "temp"):
            private_dir(self.prefix / sub)
        append_private(self.prefix / "logs" / "error.log").close()  # 0600, even one an older run left
        atomic_write_text(self.conf, text)
        self._routes = tuple(routes)
        return True

    async def check(self) -> None:
        """`nginx -t` on the written configuration; DoorError with nginx's own words if it fails."""
        try:
            proc = await asyncio.create_subprocess_exec(
                *self._argv(),
                "-t",
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.PIPE,
                umask=PRIVATE_UMASK,  # it opens the error log, making it if missing
            )
        except FileNotFoundError as exc:
            raise DoorError(
                f"nginx is not installed ({self.binary} not found); apt-get install nginx"
            ) from exc
        _, err = await proc.communicate()
        if proc.returncode != 0:
            raise DoorError(f"nginx refused {self.conf}: {err.decode(errors='replace').strip()}")

    def _argv(self) -> list[str]:
        return [
            self.binary,
            "-p",
            str(self.prefix),
            "-c",
            str(self.conf),
            "-e",
            str(self.prefix / "logs" / "error.log"),
        ]

    async def start(self, routes: Sequence[Route]) -> None:
        self._routes = None  # a restarted nginx reads its configuration afresh
        self.write(routes)
        pid_file = self.prefix / "nginx.pid"
        pid_file.unlink(missing_ok=True)
        env = {**os.environ, "NGINX": f"{self.sock.fileno()};"}
        try:
            self.proc = await asyncio.create_subprocess_exec(
                *self._argv(),
                "-g",
                "daemon off;",
                env=env,
                pass_fds=(self.sock.fileno(),),
                stdin=asyncio.subprocess.DEVNULL,
                start_new_session=True,  # the fleet stops it, gracefully, on a Ctrl-C
                preexec_fn=die_with_parent,
                umask=PRIVATE_UMASK,  # its logs and pid file: 0600, whatever the fleet's umask
            )
        except FileNotFoundError as exc:
            raise DoorError(
                f"nginx is not installed ({self.binary} not found); apt-get install nginx"
            ) from exc
        await self._wait_started(pid_file)
        log.info(
            "the door (nginx, pid %d) listens on %s for %d device(s)", self.proc.pid, self.listen, len(routes)
        )

    async def _wait_started(self, pid_file: Path) -> None:
        """Until nginx has written its pid file, which it does once its signal handlers are in
        place: a SIGHUP before that would kill it rather than reload it."""
        assert self.proc is not None
        deadline = asyncio.get_running_loop().time() + START_TIMEOUT_S
        while asyncio.get_running_loop().time() < deadline:
            if self.proc.returncode is not None:
                raise DoorError(f"nginx exited at start ({self.proc.returncode}): {self.error_log_tail(3)}")
            if _read_small(pid_file).strip() == str(self.proc.pid):
                return
            await asyncio.sleep(0.01)  # polling nginx's start, bounded by the deadline
        raise DoorError(f"nginx did not start within {START_TIMEOUT_S:.0f} s: {self.error_log_tail(3)}")

    async def update(self, routes: Sequence[Route]) -> None:
        """Rewrites the configuration and reloads nginx (SIGHUP) if the routes changed. A
        configuration nginx refuses is logged and the running one kept (nginx does so on SIGHUP)."""
        if not self.write(routes):
            return
        try:
            await self.check()  # said here, in the fleet's log, rather than only in nginx's
        except DoorError:
            self._routes = None  # tried again at the next change
            raise
        if self.proc is not None and self.proc.returncode is None:
            before = _children(self.proc.pid)
            self.proc.send_signal(signal.SIGHUP)
            await self._wait_reloaded(before)
            log.info("the door reloads: %d device(s): %s", len(routes), known_devices(routes))

    async def _wait_reloaded(self, before: set[int] | None) -> None:
        """Until the reload took: a new worker runs, and the old ones no longer hold the door's
        listening socket (they close it first thing on their way out). Until then a new
        connection may land in an old worker, with the routes of before. Linux's procfs tells;
        without it (or past the bound) the reload is left to take its course."""
        if before is None or self.proc is None:
            return
        inode = os.fstat(self.sock.fileno()).st_ino
        deadline = asyncio.get_running_loop().time() + START_TIMEOUT_S
        while asyncio.get_running_loop().time() < deadline and self.proc.returncode is None:
            now = _children(self.proc.pid) or set()
            if now - before and not any(_holds_socket(pid, inode) for pid in now & before):
                return
            await asyncio.sleep(0.005)  # polling nginx's reload, bounded by the deadline
        log.warning("nginx's reload did not finish within %.0f s", START_TIMEOUT_S)

    async def stop(self, *, grace_s: float = 5.0) -> None:
        proc = self.proc
        if proc is None or proc.returncode is not None:
            return
        proc.send_signal(signal.SIGQUIT)
        try:
            await asyncio.wait_for(proc.wait(), grace_s)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)
            await proc.wait()

    def error_log_tail(self, lines: int = 5) -> str:
        try:
            text = (self.prefix / "logs" / "error.log").read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])
