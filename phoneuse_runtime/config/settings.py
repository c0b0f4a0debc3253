"""Server settings: command-line flags over PHONEUSE_* environment over a TOML file over defaults."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from phoneuse_runtime.config.owner import DEFAULT_OWNER_APPS

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

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
    """Everything the server is configured with. Built by `load_settings`; immutable afterwards."""

    device: str = "sim"
    grpc_listen: str = DEFAULT_GRPC_LISTEN
    data_dir: Path = field(default_factory=default_data_dir)
    token: str | None = None
    allow_shell: bool = False
    # Action types: when allow_actions is non-empty only those run; deny_actions always refuse.
    allow_actions: frozenset[str] = frozenset()
    deny_actions: frozenset[str] = frozenset()
    url_schemes: frozenset[str] = frozenset({"http", "https"})
    sim_state: Path | None = None
    # How long a finished request_id keeps its response for replay, and how many are kept.
    idempotency_ttl_s: float = 600.0
    idempotency_max_entries: int = 10_000
    event_queue_size: int = 1024
    query_max_limit: int = 200
    shutdown_grace_s: float = 5.0
    wait_poll_ms: int = 100
    # The adb backend: its adb server (HOST:PORT, or PORT on this host), and how often it polls
    # the phone for events while someone subscribes to them.
    adb_server: str = field(default_factory=default_adb_server)
    poll_ms: int = 1000
    # The termux backend's way to the phone's own adb (wireless debugging): auto, off, PORT or
    # HOST:PORT (device/termux/selfadb.py says how auto finds it).
    self_adb: str = "auto"
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
    pairing_ttl_days: int = 30  # a pairing's lifetime unless made permanent
    ntfy_url: str = ""  # where wake-ups for offline app devices with an ntfy topic go; "" = none
    # Approvals by the paired app's owner (gateway/agent/): "always", "paired" (once any app
    # device is paired) or "off"; and the actions held for an approval.
    approvals: str = "paired"
    approval_actions: frozenset[str] = frozenset({"SEND_MESSAGE", "MAKE_CALL", "SHELL", "START_INTENT"})
    # Packages in front of which every UI action (TAP, TYPE_TEXT, ...) is held for the owner's
    # approval, e.g. ["com.whatsapp"]; empty: none.
    approve_ui_in: frozenset[str] = frozenset()
    # The owner's own controls, which no agent drives, opens, closes or sends intents to
    # (owner_controls.py): the Iris app, Termux, Settings, the permission controller, the
    # package installer and the system UI (the notification shade, the lock screen).
    owner_apps: frozenset[str] = field(default_factory=lambda: DEFAULT_OWNER_APPS)
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
    # The event sink's buffer while NATS is unreachable, in events; past it the oldest are
    # dropped, counted and announced (nats/sink.py).
    nats_buffer_events: int = 10_000
    # ... kept on disk too (DATA_DIR/nats-spool.jsonl) while NATS is unreachable, so that a
    # runtime killed meanwhile publishes it at its next start (nats/spool.py).
    nats_spool: bool = True

    @property
    def resolved_device_name(self) -> str:
        """`device_name`, else the serial of `adb:SERIAL` made a name, else the device kind."""
        if self.device_name:
            return self.device_name
        from phoneuse_runtime.util.device_names import device_name

        kind, _, serial = self.device.partition(":")
        return device_name(serial or kind)


class ConfigError(Exception):
    """A setting has a value the server cannot use."""


def positive_group(settings: Settings, prefix: str, names: list[str]) -> dict[str, Any]:
    """The settings `prefix + name` by name, for a component's limits; ConfigError naming every
    one that is not greater than 0."""
    values = {name: getattr(settings, prefix + name) for name in names}
    bad = [prefix + name for name, value in values.items() if value <= 0]
    if bad:
        raise ConfigError(f"{', '.join(bad)} must be greater than 0")
    return values


def coerce_bool(value: Any) -> bool:
    """A switch as a config file, a flag or the environment spells it."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off", ""):
        return False
    raise ValueError(f"expected true or false, got {value!r}")


def _coerce(name: str, value: Any, current: Any) -> Any:
    if isinstance(current, bool):
        return coerce_bool(value)
    if isinstance(current, frozenset):
        items = value.split(",") if isinstance(value, str) else value
        return frozenset(str(v).strip() for v in items if str(v).strip())
    if isinstance(current, Path) or name in ("sim_state", "data_dir", "tokens_file"):
        return Path(str(value)).expanduser() if value not in (None, "") else None
    if isinstance(current, int):
        return int(value)
    if isinstance(current, float):
        return float(value)
    return None if value is None else str(value)


def _apply(
    settings: Settings,
    values: dict[str, Any],
    where: str,
    origins: dict[str, str],
    problems: list[str],
) -> Settings:
    """`values` over `settings`; each name given is recorded in `origins` as from `where`, and
    each unknown name or unreadable value is added to `problems` (never raised here: the loader
    reports every problem at once)."""
    known = {f.name for f in fields(Settings)}
    changes: dict[str, Any] = {}
    for name, value in values.items():
        if name not in known:
            problems.append(f"{where}: unknown setting {name!r}; known: {', '.join(sorted(known))}")
            continue
        if value is None:
            continue
        try:
            changes[name] = _coerce(name, value, getattr(settings, name))
        except (TypeError, ValueError) as exc:
            problems.append(f"{name} ({where}): bad value: {exc}")
            continue
        origins[name] = where
    return replace(settings, **changes)


def _flatten(table: dict[str, Any]) -> dict[str, Any]:
    """`[memory] retention_days = 30` as `memory_retention_days`: a table's keys are settings
    named with the table's name in front, as the PHONEUSE_MEMORY_* variables name them."""
    flat: dict[str, Any] = {}
    for key, value in table.items():
        if isinstance(value, dict):  # [memory.embeddings] url: memory_embeddings_url
            flat.update({f"{key}_{inner}": v for inner, v in _flatten(value).items()})
        else:
            flat[key] = value
    return flat


def load_settings(flags: dict[str, Any], *, config_file: Path | None = None) -> Settings:
    """Flags (None = not given) over PHONEUSE_<NAME> environment over the TOML file over defaults.

    Every value is checked here (`problems`), so that a bad one stops `serve` and shows in
    `doctor` before anything starts: one ConfigError lists every problem, each with the setting,
    where its value came from (flag, environment, the file, or the default) and what is wrong."""
    settings = Settings()
    origins: dict[str, str] = {}
    found: list[str] = []
    data_dir_flag = flags.get("data_dir")
    if data_dir_flag:
        settings = replace(settings, data_dir=Path(data_dir_flag).expanduser())
    path = config_file or settings.data_dir / CONFIG_FILE
    if path.is_file():
        try:
            table = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path}: {exc}") from exc
        settings = _apply(settings, _flatten(table), str(path), origins, found)
    elif config_file is not None:
        raise ConfigError(f"config file {config_file} does not exist")
    env = {
        f.name: os.environ[f"PHONEUSE_{f.name.upper()}"]
        for f in fields(Settings)
        if f"PHONEUSE_{f.name.upper()}" in os.environ and f.name != "data_dir"
    }
    settings = _apply(settings, env, "environment", origins, found)
    settings = _apply(settings, {k: v for k, v in flags.items() if k != "data_dir"}, "flag", origins, found)
    bad = {name for name in origins if any(p.startswith(f"{name} (") for p in found)}
    for name, what in problems(settings):
        if name not in bad:
            found.append(f"{name} ({origins.get(name, 'default')}): {what}")
    if found:
        if len(found) == 1:
            raise ConfigError(found[0])
        raise ConfigError(f"{len(found)} settings are bad:\n" + "\n".join(f"  {p}" for p in found))
    return settings


# How the owner's approvals apply (gateway/agent/approvals.py).
APPROVAL_MODES = ("always", "paired", "off")
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
TERMUX_MIN_POLL_MS = 50  # Termux:API calls take tens of milliseconds each


def listen_problem(value: str) -> str | None:
    """Why `value` is not a HOST:PORT to listen on, or None."""
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        return f"must be HOST:PORT (a port 0 to 65535), got {value!r}"
    return None


def problems(settings: Settings) -> list[tuple[str, str]]:
    """(setting, what is wrong) for every value of `settings` the server cannot use."""
    found: list[tuple[str, str]] = []
    for f in fields(Settings):
        value = getattr(settings, f.name)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        if f.name in ZERO_ALLOWED and value < 0:
            found.append((f.name, f"must be 0 or more, got {value}"))
        elif f.name not in ZERO_ALLOWED and value <= 0:
            found.append((f.name, f"must be greater than 0, got {value}"))
    if settings.device.partition(":")[0] == "termux" and 0 < settings.poll_ms < TERMUX_MIN_POLL_MS:
        found.append(("poll_ms", f"must be at least {TERMUX_MIN_POLL_MS} on termux, got {settings.poll_ms}"))
    listens = [("grpc_listen", settings.grpc_listen)]
    if settings.gateway:
        listens.append(("gateway_listen", settings.gateway_listen))
    if settings.mcp_listen:
        listens.append(("mcp_listen", settings.mcp_listen))
    for name, listen in listens:
        problem = listen_problem(listen)
        if problem:
            found.append((name, problem))
    if settings.ntfy_url and not settings.ntfy_url.startswith(("http://", "https://")):
        found.append(("ntfy_url", f"must be an http:// or https:// URL, got {settings.ntfy_url!r}"))
    if settings.approvals not in APPROVAL_MODES:
        found.append(("approvals", f"must be one of {', '.join(APPROVAL_MODES)}, got {settings.approvals!r}"))
    found.extend(nats_problems(settings))
    return found


def nats_problems(settings: Settings) -> list[tuple[str, str]]:
    """(setting, what is wrong) for `device_name` and `nats_url`."""
    from phoneuse_runtime.util.device_names import is_device_name

    found: list[tuple[str, str]] = []
    if settings.device_name and not is_device_name(settings.device_name):
        found.append(
            (
                "device_name",
                f"{settings.device_name!r} is not a device name: 1 to 64 of A-Z, a-z, 0-9, _ and -",
            )
        )
    url = settings.nats_url
    if url:
        scheme, sep, rest = url.partition("://")
        if not sep or scheme not in ("nats", "tls") or not rest or "@" in rest:
            # Credentials never ride in a url (ps, logs): a NATS server that wants them is not
            # supported yet.
            found.append(
                ("nats_url", f"must be nats://HOST:PORT or tls://HOST:PORT, without credentials; got {url!r}")
            )
        else:
            from phoneuse_runtime.util.extras import nats_py_problem

            problem = nats_py_problem()  # before `serve` makes a token: how to get nats-py
            if problem:
                found.append(("nats_url", problem))
    return found
