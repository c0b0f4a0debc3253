"""The runtime's one connection to NATS, shared by the event sink and the leases.

It connects in the background and keeps trying (a runtime that cannot reach NATS keeps
serving): `connected` tells whether it is up now, `wait_connected` waits for it within a bound.
nats-py is imported only here and only when a url is configured; without it `require_nats`
says in one line how to get it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from phoneuse_runtime.config.settings import ConfigError
from phoneuse_runtime.util.extras import nats_py_problem

if TYPE_CHECKING:
    from nats.aio.client import Client
    from nats.js import JetStreamContext

log = logging.getLogger(__name__)

RETRY_MIN_S = 0.1
RETRY_MAX_S = 2.0


TOKEN_CHARS = re.compile(r"[A-Za-z0-9._~+/=-]{16,512}")


def read_nats_token(path: str) -> str:
    """The NATS token stored in `path` (one line: 16 to 512 of A-Z a-z 0-9 . _ ~ + / = -);
    ConfigError saying what is wrong, never what the file holds."""
    try:
        text = Path(path).expanduser().read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"nats_token_file {path}: cannot be read ({type(exc).__name__})") from None
    if not TOKEN_CHARS.fullmatch(text):
        raise ConfigError(
            f"nats_token_file {path}: not a token (one line of 16 to 512 of A-Z a-z 0-9 . _ ~ + / = -)"
        )
    return text


def inbox_prefix(user: str) -> str:
    """The inbox prefix of a client connecting as `user`: the subjects its replies come on, which
    its permissions let it alone subscribe to (nats/users.py)."""
    return f"_INBOX_{user}"


def connect_options(user: str, secret_file: str) -> dict[str, Any]:
    """nats-py's `connect` options for the `nats` section's `user` and `token_file`: a user, its
    password (the file) and its own inbox prefix; or the file's token alone; or nothing.
    ConfigError (never the file's content) when the file is bad."""
    secret = read_nats_token(secret_file) if secret_file else None
    if user:
        return {"user": user, "password": secret, "inbox_prefix": inbox_prefix(user)}
    return {"token": secret} if secret else {}


def require_nats() -> None:
    """ConfigError (one line: how to get it) unless nats-py can be imported."""
    problem = nats_py_problem()
    if problem:
        raise ConfigError(problem)


class NatsLink:
    """One nats-py connection, (re)made in the background. `acquire` / `release` by each user:
    the first starts it, the last closes it (the app stops its components all at once)."""

    def __init__(self, url: str, *, name: str, options: dict[str, Any] | None = None) -> None:
        self.url = url
        self.name = name
        self._options = options or {}  # connect_options: the credentials
        self.nc: Client | None = None
        self.js: JetStreamContext | None = None
        self._users = 0
        self._task: asyncio.Task[None] | None = None
        self._up = asyncio.Event()
        self._closed = False
        self._warned = False

    @property
    def connected(self) -> bool:
        return self.nc is not None and self.nc.is_connected

    async def wait_connected(self, timeout_s: float) -> bool:
        """Whether the link is up within `timeout_s`."""
        if self.connected:
            return True
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._up.wait(), timeout=timeout_s)
        return self.connected

    def acquire(self) -> None:
        self._users += 1
        if self._task is None:
            self._task = asyncio.create_task(self._connect(), name="nats-connect")

    async def release(self) -> None:
        self._users -= 1
        if self._users > 0:
            return
        self._closed = True
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self.nc is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.nc.close(), timeout=2.0)
        self.nc = self.js = None

    async def _connect(self) -> None:
        """Connects, retrying with a bounded back-off until it works; nats-py then reconnects
        by itself for as long as the runtime runs."""
        import nats

        wait = RETRY_MIN_S
        while not self._closed:
            try:
                nc = await nats.connect(
                    self.url,
                    name=self.name,
                    connect_timeout=2,
                    **self._options,
                    allow_reconnect=True,
                    max_reconnect_attempts=-1,
                    reconnect_time_wait=0.25,
                    disconnected_cb=self._disconnected,
                    reconnected_cb=self._reconnected,
                    error_cb=self._error,
                )
            except Exception as exc:  # nats-py raises OSError, its own errors, timeouts
                await self._error(exc)
                await asyncio.sleep(wait)  # the connect back-off
                wait = min(wait * 2, RETRY_MAX_S)
                continue
            self.nc, self.js = nc, nc.jetstream()
            self._up.set()
            log.info("connected to NATS at %s", self.url)
            return

    async def _disconnected(self) -> None:
        self._up.clear()
        if not self._closed:
            log.warning("lost NATS at %s; reconnecting", self.url)

    async def _reconnected(self) -> None:
        self._up.set()
        log.info("reconnected to NATS at %s", self.url)

    async def _error(self, exc: Any) -> None:
        if self.nc is None and not self._warned:  # still trying to get in: said once
            self._warned = True
            log.warning("NATS at %s is not reachable (%s); retrying in the background", self.url, exc)
        else:
            log.debug("NATS: %s", exc)
