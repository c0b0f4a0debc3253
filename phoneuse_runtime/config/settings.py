"""Server settings: command-line flags over PHONEUSE_* environment over a TOML file over defaults,
read by the one loader (config/layers.py) and checked, every value, by the sections."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from phoneuse_runtime.config.errors import ConfigError
from phoneuse_runtime.config.layers import FileProblem, flatten, load_layers, read_table
from phoneuse_runtime.config.owner import DEFAULT_OWNER_APPS
from phoneuse_runtime.config.sections import (
    SECTIONS,
    DeviceSettings,
    GatewaySettings,
    GrpcSettings,
    McpSettings,
    MemorySettings,
    NatsSettings,
    OwnerSettings,
    number_problem,
)

__all__ = ["ConfigError", "Settings", "load_settings"]

DEFAULT_GRPC_LISTEN = "127.0.0.1:50051"
DEFAULT_GATEWAY_LISTEN = "127.0.0.1:8765"
TOKEN_FILE = "token"  # noqa: S105 (a file name, not a secret)
CONFIG_FILE = "config.toml"


DEFAULT_ADB_SERVER = "127.0.0.1:5037"


def default_adb_server() -> str:
    """The adb server the adb backend talks to: adb's own $ANDROID_ADB_SERVER_PORT (on this
    host) when set, as the adb command line would use, else adb's default."""
    port = os.environ.get("ANDROID_ADB_SERVER_PORT", "").strip()
    return f"127.0.0.1:{port}" if port else DEFAULT_ADB_SERVER


def data_dir_from_env(variable: str, name: str) -> Path:
    """$variable when set, else `name` in the XDG data home (~/.local/share)."""
    env = os.environ.get(variable)
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(xdg) / name


def default_data_dir() -> Path:
    return data_dir_from_env("PHONEUSE_DATA_DIR", "phoneuse-runtime")


@dataclass(frozen=True)
class Settings:
    """Everything the server is configured with, flat, as config.toml and the PHONEUSE_*
    variables name it. Built by `load_settings`; immutable afterwards. Each part reads its
    frozen section (`grpc`, `gateway_section`, `mcp`, `memory`, `nats`, `device_section`,
    `owner`: config/sections.py); the kernel keeps the whole record."""

    device: str = "sim"
    grpc_listen: str = DEFAULT_GRPC_LISTEN
    data_dir: Path = field(default_factory=default_data_dir)
    token: str | None = None
    allow_shell: bool = False
    # Action types: when allow_actions is non-empty only those run; deny_actions always refuse.
    allow_actions: frozenset[str] = frozenset()
    deny_actions: frozenset[str] = frozenset()
    url_schemes: frozenset[str] = frozenset({"http", "https"})
    # What the runtime does about an "isn't responding" or "keeps stopping" dialog
    # (owner/error_dialogs.py): "report" (SYSTEM_DIALOG only), "wait" or "close" (answers it).
    error_dialogs: str = "report"
    sim_state: Path | None = None
    # How long a finished request_id keeps its response for replay, how many are kept, and how
    # many bytes of them (results and errors, as held in memory), the oldest going first.
    idempotency_ttl_s: float = 600.0
    idempotency_max_entries: int = 10_000
    idempotency_max_bytes: int = 8 * 1024 * 1024
    # Each subscriber's queue (a Subscribe stream, a connected app): at most this many events and
    # this many bytes of them; past either the oldest are dropped (EVENTS_DROPPED).
    event_queue_size: int = 1024
    event_queue_bytes: int = 4 * 1024 * 1024
    query_max_limit: int = 200
    # The runtime's files directory (DATA_DIR/files, PUSH_FILE's and PULL_FILE's side): at most
    # this many bytes in all, so no agent fills the runtime's disk; and one push's bytes at most.
    files_max_bytes: int = 1024 * 1024 * 1024
    files_max_push_bytes: int = 256 * 1024 * 1024
    shutdown_grace_s: float = 5.0
    wait_poll_ms: int = 100
    # The adb backend: its adb server (HOST:PORT, or PORT on this host), and how often it polls
    # the phone for events while someone subscribes to them.
    adb_server: str = field(default_factory=default_adb_server)
    poll_ms: int = 1000
    # The termux backend's way to the phone's own adb (wireless debugging): auto, off, PORT or
    # HOST:PORT (device/termux/selfadb.py says how auto finds it).
    self_adb: str = "auto"
    # Issue 27: keep the screen on while the server runs (adb, termux's own adb: `svc power stayon
    # true`, on while on any charger), the phone's own setting put back when it stops.
    keep_awake: bool = False
    # The gRPC server's limits, sized for a phone (why: rpc/server.py's GrpcLimits; the spec).
    grpc_max_receive_bytes: int = 2 * 1024 * 1024  # the largest params (limits.py) fit, with room
    grpc_max_concurrent_calls: int = 4096
    grpc_max_concurrent_streams: int = 4096
    grpc_max_pending_calls: int = 8192
    grpc_max_connections: int = 1024
    grpc_handshake_timeout_s: float = 3.0
    grpc_idle_timeout_s: float = 60.0
    grpc_keepalive_s: float = 300.0
    grpc_keepalive_timeout_s: float = 20.0
    # The Iris gateway (gateway/): the chat app's WebSocket server, beside the gRPC one.
    gateway: bool = True
    gateway_listen: str = DEFAULT_GATEWAY_LISTEN
    # Advertised in hello.ack: a text frame past max_frame_bytes gets an error (one past four
    # times it closes the connection), an upload past max_media_bytes gets media_too_large, and
    # frames past max_frames_per_second from one connection get rate_limited.
    gateway_max_frame_bytes: int = 256 * 1024
    gateway_max_media_bytes: int = 32 * 1024 * 1024
    gateway_max_frames_per_second: int = 50
    # A connection whose unwritten frames pass this is closed: the app cannot keep up, and syncs.
    gateway_send_queue_bytes: int = 4 * 1024 * 1024
    # Each device's outbox keeps never-dropped frames this long, and at most this many of them.
    gateway_outbox_retention_s: float = 7 * 24 * 3600.0
    gateway_outbox_max_frames: int = 10_000
    # ... and at most this many bytes of them (UTF-8), the oldest going first.
    gateway_outbox_max_bytes: int = 8 * 1024 * 1024
    # The chat's stored messages: at most this many bytes of text (UTF-8: text, reasoning and
    # media references), and none older than this many days (0: no age limit); the oldest go
    # first, with their full-text index rows. A new message is always kept.
    gateway_chat_max_bytes: int = 32 * 1024 * 1024
    gateway_chat_retention_days: int = 365
    # Failed hellos (a token that opens nothing) on the whole gateway, past this many within the
    # window, are refused before any pairing request is made; a paired token always gets in.
    gateway_auth_failures: int = 30
    gateway_auth_window_s: float = 60.0
    # Pairing requests (apps' own tokens) waiting for the owner at once; past it, new ones are
    # refused (rate_limited) and those waiting are kept.
    gateway_max_pending_requests: int = 32
    # Origins a WebSocket upgrade may carry (a browser page's); native apps send none. An upgrade
    # with any other Origin is refused with HTTP 403.
    gateway_allowed_origins: frozenset[str] = frozenset()
    gateway_hello_timeout_s: float = 10.0  # a connection that has not said hello by then is closed
    # The MCP front end over Streamable HTTP (mcp/): HOST:PORT to serve /mcp on; "" = off. Origins a
    # request may carry (a browser page's); native clients send none. Any other Origin gets 403.
    mcp_listen: str = ""
    mcp_allowed_origins: frozenset[str] = frozenset()
    # The MCP client is the agent: its user is asked to approve held calls (elicitation) only
    # when the owner says that user is the owner (e.g. on a laptop where the owner runs the agent
    # themselves). On, the agent's client can approve the agent's own calls: see docs/mcp.md.
    mcp_client_is_owner: bool = False
    # Streamable HTTP sessions open at once (past it a new one is refused with 503), and the
    # seconds one may stay idle before it is closed: sized for a phone, not the SDK's 10,000/30 min.
    mcp_max_sessions: int = 16
    mcp_session_idle_s: float = 300.0
    pairing_ttl_days: int = 30  # a pairing's lifetime unless made permanent
    ntfy_url: str = ""  # where wake-ups for offline app devices with an ntfy topic go; "" = none
    # Approvals by the paired app's owner (gateway/agent/): "always", "paired" (once any app
    # device is paired) or "off"; and the actions held for an approval.
    approvals: str = "paired"
    approval_actions: frozenset[str] = frozenset({"SEND_MESSAGE", "MAKE_CALL", "SHELL", "START_INTENT"})
    # The actions that are the owner's to decide (issue 27: installing, uninstalling, permissions):
    # held under "paired" even while nothing is paired (the terminal's `approvals` answers), as
    # under "always"; never under "off".
    owner_actions: frozenset[str] = frozenset(
        {"INSTALL_APP", "UNINSTALL_APP", "GRANT_PERMISSION", "REVOKE_PERMISSION"}
    )
    # Packages in front of which every UI action (TAP, TYPE_TEXT, ...) is held for the owner's
    # approval, e.g. ["com.whatsapp"]; empty: none.
    approve_ui_in: frozenset[str] = frozenset()
    # The owner's own controls, which no agent drives, opens, closes or sends intents to
    # (owner_controls.py): the Iris app, Termux, Settings, the permission controller, the
    # package installer and the system UI (the notification shade, the lock screen).
    owner_apps: frozenset[str] = field(default_factory=lambda: DEFAULT_OWNER_APPS)
    # Whether SET_WIFI and SET_AIRPLANE_MODE may cut the runtime's own link to the phone (adb over
    # Wi-Fi, Termux's wireless debugging, an Iris app connected over the network): off, they are
    # refused (PERMISSION_DENIED) naming the link (kernel/links.py).
    allow_cutting_link: bool = False
    # The phone's memory ([memory] in config.toml, PHONEUSE_MEMORY_* in the environment): the
    # region numbers without a country code are read in when the SIM does not say, how many
    # days messages and calls are kept (0: no limit), and whether the runtime feeds it.
    memory_default_region: str = "US"
    memory_retention_days: int = 365
    memory_ingest: bool = True
    # Seconds between the memory's own catch-ups with the phone (new SMS and calls, only the
    # rows above its marks) when nothing else made it look; 0: never on a timer. The memory
    # also catches up when asked (MEMORY, CONTACTS) and after an action wrote to a provider,
    # and makes the phone be polled for events only while someone subscribes from outside.
    memory_catch_up_s: int = 300
    # [memory.embeddings]: an OpenAI-compatible embeddings endpoint (the full URL, e.g. a local
    # llama.cpp's http://127.0.0.1:8080/v1/embeddings) and the model to ask it for; "" = none.
    memory_embeddings_url: str = ""
    memory_embeddings_model: str = ""
    # A fleet's tokens file (fleet/tokens.py): SHA-256 hashes of the fleet's tokens, each naming
    # a principal, accepted beside the runtime's own token and re-read when it changes; None: none.
    tokens_file: Path | None = None
    # NATS (issue 20, phoneuse_runtime/nats/): where the JetStream event sink and the leases go
    # ("" = off: no sink, leases held in this runtime alone), and this phone's name in subjects
    # and keys ("" = device_names.device_name of the serial, or of the device kind for sim/termux).
    nats_url: str = ""
    device_name: str = ""
    # A file holding the token the NATS server wants ("" = none): never in the url, never logged.
    nats_token_file: str = ""
    # The NATS user to connect as ("" = none): nats_token_file then holds its password, and its
    # replies come on its own inbox prefix, _INBOX_<user> (nats/users.py: the fleet's users).
    nats_user: str = ""
    # The event sink's buffer while NATS is unreachable, in events; past it the oldest are
    # dropped, counted and announced (nats/sink.py).
    nats_buffer_events: int = 10_000
    # ... kept on disk too (DATA_DIR/nats-spool.jsonl) while NATS is unreachable, so that a
    # runtime killed meanwhile publishes it at its next start (nats/spool.py).
    nats_spool: bool = True
    # The events stream's bounds (nats/sink.py): events older than this many seconds, and the
    # oldest past this many bytes, leave it; a stream made without bounds gets these.
    nats_stream_max_age_s: int = 7 * 86_400
    nats_stream_max_bytes: int = 1 << 30

    @cached_property
    def resolved_device_name(self) -> str:
        """`device_name`, else the serial of `adb:SERIAL` made a name, else the device kind."""
        if self.device_name:
            return self.device_name
        from phoneuse_runtime.util.device_names import device_name

        kind, _, serial = self.device.partition(":")
        return device_name(serial or kind)

    # The sections (config/sections.py): each part's frozen view, which checks its own values;
    # `gateway` and `device` being settings themselves, their sections are `*_section`.
    @cached_property
    def grpc(self) -> GrpcSettings:
        return GrpcSettings.of(self)

    @cached_property
    def gateway_section(self) -> GatewaySettings:
        return GatewaySettings.of(self)

    @cached_property
    def mcp(self) -> McpSettings:
        return McpSettings.of(self)

    @cached_property
    def memory(self) -> MemorySettings:
        return MemorySettings.of(self)

    @cached_property
    def nats(self) -> NatsSettings:
        return NatsSettings.of(self)

    @cached_property
    def device_section(self) -> DeviceSettings:
        return DeviceSettings.of(self)

    @cached_property
    def owner(self) -> OwnerSettings:
        return OwnerSettings.of(self)


def problems(settings: Settings) -> list[tuple[str, str]]:
    """(setting, what is wrong) for every value of `settings` the server cannot use: each
    section's own, then the numbers of the kernel's settings, which belong to no section."""
    found: list[tuple[str, str]] = []
    read: set[str] = set()
    for section in SECTIONS:
        found += section.of(settings).problems()
        read.update(section.settings_read())
    for f in fields(Settings):
        problem = None if f.name in read else number_problem(f.name, getattr(settings, f.name))
        if problem:
            found.append((f.name, problem))
    return found


def load_settings(flags: dict[str, Any], *, config_file: Path | None = None) -> Settings:
    """Flags (None = not given) over PHONEUSE_<NAME> environment over the TOML file over defaults,
    by the one layered loader (config/layers.py).

    Every value is checked here (`problems`), so that a bad one stops `serve` and shows in
    `doctor` before anything starts: one ConfigError lists every problem, each with the setting,
    where its value came from (flag, environment, the file, or the default) and what is wrong."""
    base = Settings()
    data_dir_flag = flags.get("data_dir")
    if data_dir_flag:
        base = replace(base, data_dir=Path(data_dir_flag).expanduser())
    path = config_file or base.data_dir / CONFIG_FILE
    file = None
    if path.is_file():
        try:
            file = (str(path), flatten(read_table(path)))
        except FileProblem as exc:
            raise ConfigError(str(exc)) from exc
    elif config_file is not None:
        raise ConfigError(f"config file {config_file} does not exist")
    loaded = load_layers(
        Settings,
        base=base,
        prefix="PHONEUSE_",
        flags={k: v for k, v in flags.items() if k != "data_dir"},
        file=file,
        not_from_env=("data_dir",),  # PHONEUSE_DATA_DIR is the default's (default_data_dir)
    )
    loaded.raise_problems(problems(loaded.value), ConfigError, "settings")
    return loaded.value
