"""The settings that are addresses, read without any device library: where to listen, the adb
server (`adb_server`), and the termux backend's own adb (`self_adb`)."""

from __future__ import annotations

from phoneuse_runtime.config.errors import ConfigError

LOOPBACK = "127.0.0.1"


def listen_problem(value: str) -> str | None:
    """Why `value` is not a HOST:PORT to listen on, or None."""
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        return f"must be HOST:PORT (a port 0 to 65535), got {value!r}"
    return None


def server_address(setting: str) -> tuple[str, int]:
    """The adb server from the `adb_server` setting: HOST:PORT, or a PORT on this host."""
    text = setting.strip()
    host, sep, port = text.rpartition(":")
    if not sep:
        host, port = LOOPBACK, text
    host = host.strip("[]") or LOOPBACK
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigError(f"adb_server must be HOST:PORT or PORT, got {setting!r}")
    return host, int(port)


def parse_self_adb(value: str) -> str | None:
    """`auto`, `off`, or the HOST:PORT a `PORT` / `HOST:PORT` setting names; ConfigError otherwise."""
    text = value.strip().lower()
    if text in ("auto", "off"):
        return text
    host, sep, port = value.strip().rpartition(":")
    if not sep:
        host, port = LOOPBACK, value.strip()
    if not port.isdigit() or not 0 < int(port) < 65536 or not host:
        raise ConfigError(f"self_adb must be auto, off, PORT or HOST:PORT, got {value!r}")
    return f"{host}:{int(port)}"
