"""The settings' sections: a frozen view per part of the server, each checking its own values.

A section's field `x` is the flat setting `PREFIX + x` (`GrpcSettings.listen` is `grpc_listen`)
unless its RENAMED names another (`GatewaySettings.enabled` is `gateway`); `of(settings)` builds
the view from the loaded `Settings`, and `problems()` lists (setting, what is wrong) for every
value the part cannot use, named as the config file and the PHONEUSE_* variables name it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from phoneuse_runtime.config.addresses import listen_problem, parse_self_adb, server_address
from phoneuse_runtime.config.errors import ConfigError

S = TypeVar("S", bound="Section")

# Numbers that may be 0 (what 0 means in Settings' comments); every other number must be above 0.
ZERO_ALLOWED = frozenset(
    {
        "gateway_chat_retention_days",  # no age limit
        "memory_retention_days",  # keep everything
        "memory_catch_up_s",  # no timer
        "idempotency_ttl_s",  # no replay
        "shutdown_grace_s",  # stop at once
    }
)
MIN_POLL_MS = 50  # a poll of the phone (adb shell, Termux:API calls) takes tens of milliseconds
MAX_MCP_SESSIONS = 256  # each MCP session costs the phone memory and a share of every event's fan-out
MAX_MCP_IDLE_S = 24 * 3600.0  # an idle MCP session is closed within a day at the latest
ERROR_DIALOG_ANSWERS = ("report", "wait", "close")  # owner/error_dialogs.py
APPROVAL_MODES = ("always", "paired", "off")  # how the owner's approvals apply (gateway/agent/)
MIN_STREAM_BYTES = 1 << 20  # nats_stream_max_bytes: the events stream keeps at least one event
NATS_USER = re.compile(r"[A-Za-z0-9_-]{1,80}")  # nats_user (nats/users.py names them so)
MIN_STREAM_AGE_S = 120  # nats_stream_max_age_s: the stream's duplicate window (nats/sink.py)


def number_problem(name: str, value: Any) -> str | None:
    """Why the number `value` of setting `name` cannot be used (0 only where ZERO_ALLOWED says)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if name in ZERO_ALLOWED:
        return f"must be 0 or more, got {value}" if value < 0 else None
    return f"must be greater than 0, got {value}" if value <= 0 else None


@dataclass(frozen=True)
class Section:
    """A part's settings; subclasses set PREFIX and add their own checks in `checks`."""

    PREFIX: ClassVar[str] = ""
    RENAMED: ClassVar[Mapping[str, str]] = {}  # field: the flat setting, where not PREFIX + field

    @classmethod
    def setting(cls, name: str) -> str:
        """The flat setting (config file, PHONEUSE_*) that field `name` reads."""
        return cls.RENAMED.get(name, cls.PREFIX + name)

    @classmethod
    def settings_read(cls) -> list[str]:
        return [cls.setting(f.name) for f in fields(cls)]

    @classmethod
    def of(cls: type[S], settings: Any) -> S:
        """The view of the flat `settings` (a config.settings.Settings)."""
        return cls(**{f.name: getattr(settings, cls.setting(f.name)) for f in fields(cls)})

    def problems(self) -> list[tuple[str, str]]:
        """(setting, what is wrong) for every value of this section the server cannot use."""
        found: list[tuple[str, str]] = []
        for f in fields(self):
            name = self.setting(f.name)
            problem = number_problem(name, getattr(self, f.name))
            if problem:
                found.append((name, problem))
        return found + self.checks()

    def checks(self) -> list[tuple[str, str]]:
        return []


@dataclass(frozen=True)
class GrpcSettings(Section):
    """The gRPC server: where it listens and what callers may hold of it (rpc/server.py)."""

    PREFIX: ClassVar[str] = "grpc_"
    listen: str
    max_receive_bytes: int
    max_concurrent_calls: int
    max_concurrent_streams: int
    max_pending_calls: int
    max_connections: int
    handshake_timeout_s: float
    idle_timeout_s: float
    keepalive_s: float
    keepalive_timeout_s: float

    def checks(self) -> list[tuple[str, str]]:
        problem = listen_problem(self.listen)
        return [("grpc_listen", problem)] if problem else []


@dataclass(frozen=True)
class GatewaySettings(Section):
    """The Iris gateway (gateway/): on or off, where, its limits, pairings and wake-ups."""

    PREFIX: ClassVar[str] = "gateway_"
    RENAMED: ClassVar[Mapping[str, str]] = {
        "enabled": "gateway",
        "pairing_ttl_days": "pairing_ttl_days",
        "ntfy_url": "ntfy_url",
    }
    enabled: bool
    listen: str
    max_frame_bytes: int
    max_media_bytes: int
    max_frames_per_second: int
    send_queue_bytes: int
    outbox_retention_s: float
    outbox_max_frames: int
    outbox_max_bytes: int
    chat_max_bytes: int
    chat_retention_days: int
    auth_failures: int
    auth_window_s: float
    max_pending_requests: int
    allowed_origins: frozenset[str]
    hello_timeout_s: float
    pairing_ttl_days: int
    ntfy_url: str

    def checks(self) -> list[tuple[str, str]]:
        found: list[tuple[str, str]] = []
        problem = listen_problem(self.listen) if self.enabled else None
        if problem:
            found.append(("gateway_listen", problem))
        if self.ntfy_url and not self.ntfy_url.startswith(("http://", "https://")):
            found.append(("ntfy_url", f"must be an http:// or https:// URL, got {self.ntfy_url!r}"))
        return found


@dataclass(frozen=True)
class McpSettings(Section):
    """The MCP front end over Streamable HTTP (mcp/http.py): "" = off."""

    PREFIX: ClassVar[str] = "mcp_"
    listen: str
    allowed_origins: frozenset[str]
    client_is_owner: bool
    max_sessions: int
    session_idle_s: float

    def checks(self) -> list[tuple[str, str]]:
        found = []
        problem = listen_problem(self.listen) if self.listen else None
        if problem:
            found.append(("mcp_listen", problem))
        if self.max_sessions > MAX_MCP_SESSIONS:
            found.append(("mcp_max_sessions", f"must be at most {MAX_MCP_SESSIONS}, got {self.max_sessions}"))
        if self.session_idle_s > MAX_MCP_IDLE_S:
            found.append(
                ("mcp_session_idle_s", f"must be at most {MAX_MCP_IDLE_S:g}, got {self.session_idle_s:g}")
            )
        return found


@dataclass(frozen=True)
class MemorySettings(Section):
    """The phone's memory (memory/): `[memory]` in config.toml, PHONEUSE_MEMORY_*."""

    PREFIX: ClassVar[str] = "memory_"
    default_region: str
    retention_days: int
    ingest: bool
    catch_up_s: int
    embeddings_url: str
    embeddings_model: str

    def checks(self) -> list[tuple[str, str]]:
        from phoneuse_runtime.util.numbers import valid_region

        if valid_region(self.default_region):
            return []
        what = f"must be a two-letter region such as US, GB or FR, got {self.default_region!r}"
        return [("memory_default_region", what)]


def stream_bound_problems(max_age_s: int, max_bytes: int) -> list[tuple[str, str]]:
    """The events stream's bounds (nats_stream_max_age_s, nats_stream_max_bytes; serve's and the
    fleet's) too small to keep an event; 0 or less is number_problem's."""
    found: list[tuple[str, str]] = []
    if 0 < max_age_s < MIN_STREAM_AGE_S:
        what = f"must be at least {MIN_STREAM_AGE_S} (the stream's duplicate window), got {max_age_s}"
        found.append(("nats_stream_max_age_s", what))
    if 0 < max_bytes < MIN_STREAM_BYTES:
        what = f"must be at least {MIN_STREAM_BYTES} (1 MiB: an event must fit), got {max_bytes}"
        found.append(("nats_stream_max_bytes", what))
    return found


def without_credentials(url: str) -> str:
    """`url` with whatever stands before its host's `@` (a token, a user and password) hidden:
    what a refusal may print."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        scheme, rest = "", url
    _, at, host = rest.rpartition("@")
    return f"{scheme}{sep}[hidden]@{host}" if at else url


@dataclass(frozen=True)
class NatsSettings(Section):
    """NATS (nats/): the JetStream event sink and the leases; "" url = off."""

    PREFIX: ClassVar[str] = "nats_"
    # The phone's name in subjects and keys: `device_name`, else made of the device
    # (Settings.resolved_device_name, which only a bad `device_name` can make bad).
    RENAMED: ClassVar[Mapping[str, str]] = {"device_name": "resolved_device_name"}
    url: str
    token_file: str
    user: str
    buffer_events: int
    spool: bool
    stream_max_age_s: int
    stream_max_bytes: int
    device_name: str

    def checks(self) -> list[tuple[str, str]]:
        from phoneuse_runtime.util.device_names import is_device_name

        found: list[tuple[str, str]] = []
        if self.device_name and not is_device_name(self.device_name):
            found.append(
                (
                    "device_name",
                    f"{self.device_name!r} is not a device name: 1 to 64 of A-Z, a-z, 0-9, _ and -",
                )
            )
        if self.user and not NATS_USER.fullmatch(self.user):
            found.append(
                ("nats_user", f"{self.user!r} is not a user name: 1 to 80 of A-Z, a-z, 0-9, _ and -")
            )
        if self.user and not self.token_file:
            found.append(("nats_user", "needs nats_token_file, the file holding the user's password"))
        found += stream_bound_problems(self.stream_max_age_s, self.stream_max_bytes)
        problem = self.url_problem()
        if problem:
            found.append(("nats_url", problem))
        return found

    def url_problem(self) -> str | None:
        url = self.url
        if not url:
            return None
        scheme, sep, rest = url.partition("://")
        if not sep or scheme not in ("nats", "tls") or not rest or "@" in rest:
            # Credentials never ride in a url (ps, logs): a NATS server that wants them is not
            # supported yet.
            return (
                "must be nats://HOST:PORT or tls://HOST:PORT, without credentials (a user's secret "
                f"goes in nats_token_file); got {without_credentials(url)!r}"
            )
        from phoneuse_runtime.util.extras import nats_py_problem

        return nats_py_problem()  # before `serve` makes a token: how to get nats-py


@dataclass(frozen=True)
class DeviceSettings(Section):
    """The phone's backend (device/): which, its adb server, polling, termux's own adb, sim."""

    device: str
    adb_server: str
    poll_ms: int
    self_adb: str
    sim_state: Path | None
    wait_poll_ms: int
    keep_awake: bool  # issue 27

    @property
    def kind(self) -> str:
        return self.device.partition(":")[0]

    def checks(self) -> list[tuple[str, str]]:
        found: list[tuple[str, str]] = []
        if self.kind in ("adb", "termux") and 0 < self.poll_ms < MIN_POLL_MS:
            found.append(("poll_ms", f"must be at least {MIN_POLL_MS} on {self.kind}, got {self.poll_ms}"))
        for name, parse in (("adb_server", server_address), ("self_adb", parse_self_adb)):
            try:
                parse(getattr(self, name))
            except ConfigError as exc:
                found.append((name, str(exc).removeprefix(f"{name} ")))
        return found


@dataclass(frozen=True)
class OwnerSettings(Section):
    """The owner's say (owner/, gateway/agent/): guarded apps, approvals, allowed actions."""

    owner_apps: frozenset[str]
    approvals: str
    approval_actions: frozenset[str]
    owner_actions: frozenset[str]
    approve_ui_in: frozenset[str]
    allow_actions: frozenset[str]
    deny_actions: frozenset[str]
    allow_shell: bool
    url_schemes: frozenset[str]
    error_dialogs: str
    allow_cutting_link: bool

    def checks(self) -> list[tuple[str, str]]:
        found = []
        if self.approvals not in APPROVAL_MODES:
            found.append(("approvals", f"must be one of {', '.join(APPROVAL_MODES)}, got {self.approvals!r}"))
        if self.error_dialogs not in ERROR_DIALOG_ANSWERS:
            found.append(
                (
                    "error_dialogs",
                    f"must be one of {', '.join(ERROR_DIALOG_ANSWERS)}, got {self.error_dialogs!r}",
                )
            )
        return found


SECTIONS: tuple[type[Section], ...] = (
    GrpcSettings,
    GatewaySettings,
    McpSettings,
    MemorySettings,
    NatsSettings,
    DeviceSettings,
    OwnerSettings,
)
