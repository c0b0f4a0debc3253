"""adbutils offers no public way to make its connection to the adb server, so `_Connection`
overrides two of its private methods (device/adb/connection.py): without `adb start-server` on a
failed connect, and with TCP_NODELAY. pyproject.toml pins adbutils below 3; these tests fail,
saying what changed, if an adbutils release renames or reshapes them."""

from __future__ import annotations

import inspect
import socket

import adbutils
import adbutils.errors
import pytest

from phoneuse_runtime.device.adb.connection import _Connection


@pytest.mark.parametrize("name", ["_safe_connect", "_create_socket"])
def test_adbutils_still_has_the_private_method_we_override(name: str) -> None:
    method = getattr(adbutils.AdbConnection, name, None)
    assert method is not None, (
        f"adbutils {adbutils.__version__} has no AdbConnection.{name}: see connection.py"
    )
    assert list(inspect.signature(method).parameters) == ["self"], (
        f"adbutils {adbutils.__version__} changed AdbConnection.{name}'s signature: see connection.py"
    )


def test_adbutils_connects_through_our_override() -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        host, port = listener.getsockname()[:2]
        conn = _Connection(host, port)
        try:
            nodelay = conn.conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
        finally:
            conn.close()
    assert nodelay, "AdbConnection.__init__ no longer calls _safe_connect: see connection.py"


def test_a_dead_server_is_an_error_not_a_start_server() -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        host, port = listener.getsockname()[:2]
    # Nothing listens on the port now: the base class would run `adb start-server` and retry.
    with pytest.raises(adbutils.errors.AdbConnectionError, match="connect to adb server failed"):
        _Connection(host, port)


def test_adbutils_sync_still_prepares_through_the_method_timed_sync_overrides() -> None:
    """device/adb/files.py's TimedSync overrides Sync._prepare_sync(path, cmd), a context manager
    every transfer (stat, push, iter_content) goes through."""
    method = getattr(adbutils.Sync, "_prepare_sync", None)
    assert method is not None, f"adbutils {adbutils.__version__} has no Sync._prepare_sync: see files.py"
    assert list(inspect.signature(method).parameters) == ["self", "path", "cmd"], (
        f"adbutils {adbutils.__version__} changed Sync._prepare_sync's signature: see files.py"
    )
    source = inspect.getsource(adbutils.Sync)
    for use in (
        'self._prepare_sync(path, "STAT")',
        'self._prepare_sync(path, "SEND")',
        'self._prepare_sync(path, "RECV")',
    ):
        assert use in source, f"adbutils {adbutils.__version__}'s Sync no longer does {use}: see files.py"
