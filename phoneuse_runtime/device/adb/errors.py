"""The one place where what adbutils, uiautomator2's server and the phone's tools report becomes
the runtime's failures (ElementNotFound, Timeout, DeviceUnavailable, PermissionDenied,
Unsupported).

Exceptions are told apart by class. The uiautomator2 server is the exception: over JSON-RPC it
reports only a Java exception's text, so `rpc_failure` reads that text, here and nowhere else.
"""

from __future__ import annotations

import http.client
import logging
import socket
from typing import Literal

import adbutils

from phoneuse_runtime.device.base import deadline
from phoneuse_runtime.device.ui_server import died_during
from phoneuse_runtime.kernel.errors import (
    DeviceUnavailable,
    ElementNotFound,
    PermissionDenied,
    RuntimeFailure,
    Timeout,
    Unsupported,
)

log = logging.getLogger(__name__)

SERVER = "uiautomator2 server"  # what the messages call it
RpcKind = Literal["not_found", "dead", "inject_permission", "failed"]


class RpcError(Exception):
    """A JSON-RPC error answer from the uiautomator2 server."""

    def __init__(self, method: str, kind: RpcKind, message: str) -> None:
        super().__init__(f"{method}: {message}")
        self.method = method
        self.kind = kind
        self.message = message


class U2Dead(Exception):
    """The uiautomator2 server is not serving: nothing listens on its port, its UiAutomation is
    gone ("UiAutomation not connected"), another UiAutomation holds the accessibility service
    ("already registered"), or the connection to it dropped before its answer. The backend
    restarts it, visibly (device/ui_server.py). `may_have_run`: whether the request had reached
    a server that may have done it (a dropped answer, an HTTP 5xx), not one that refused it."""

    def __init__(self, message: str, *, may_have_run: bool = False) -> None:
        super().__init__(message)
        self.may_have_run = may_have_run


class U2Unreachable(Exception):
    """The uiautomator2 server could not be started or restarted; the message says why."""


class U2Died(Exception):
    """A call that acts met the server's death: it is not sent again (it may have run). `after`
    says what became of the server (restarted in N ms, or why not)."""

    def __init__(self, *, cause: str, may_have_run: bool, after: str) -> None:
        super().__init__(after)
        self.cause = cause
        self.may_have_run = may_have_run
        self.after = after


# Java exception texts the uiautomator2 server sends, by what they mean for the call.
_DEAD_SIGNS = (
    "UiAutomation not connected",
    "already registered",
    "android.os.DeadObjectException",
    "android.os.DeadSystemRuntimeException",
)
_NOT_FOUND_SIGNS = ("UiObjectNotFoundException", "UiObjectNotFoundError")
_INJECT_SIGNS = ("INJECT_EVENTS permission", "SecurityException: Injecting")


def rpc_failure(method: str, message: str, data: str) -> RpcError:
    """Classifies a JSON-RPC error answer by the Java exception it names."""
    text = f"{message}\n{data}"
    kind: RpcKind = "failed"
    if any(sign in text for sign in _DEAD_SIGNS):
        kind = "dead"
    elif any(sign in text for sign in _NOT_FOUND_SIGNS):
        kind = "not_found"
    elif any(sign in text for sign in _INJECT_SIGNS):
        kind = "inject_permission"
    first = message.strip().splitlines()[0] if message.strip() else "(no message)"
    return RpcError(method, kind, first)


def _timed_out(doing: str, exc: BaseException) -> RuntimeFailure:
    # A wait bounded by the call's own deadline ran out: that is the call's TIMEOUT. Outside a
    # call (the pollers, the link monitor) it only says the phone did not answer.
    if deadline() is not None:
        return Timeout(f"{doing}: the phone did not answer before the call's deadline")
    return DeviceUnavailable(f"{doing}: the phone did not answer ({type(exc).__name__})")


def translate(exc: BaseException, doing: str) -> RuntimeFailure:
    """The runtime failure for what a blocking call on the phone raised."""
    if isinstance(exc, RuntimeFailure):
        return exc
    if isinstance(exc, RpcError):
        if exc.kind == "not_found":
            return ElementNotFound(f"{doing}: no element matches ({exc.message})")
        if exc.kind == "inject_permission":
            return PermissionDenied(
                f"{doing}: the phone does not let adb inject input ({exc.message}); on Xiaomi/MIUI "
                "enable 'USB debugging (Security settings)' in the developer options"
            )
        if exc.kind == "dead":
            return DeviceUnavailable(f"{doing}: the uiautomator2 server is not serving ({exc.message})")
        return DeviceUnavailable(f"{doing}: the uiautomator2 server failed: {exc.message}")
    if isinstance(exc, U2Dead):
        return DeviceUnavailable(f"{doing}: the uiautomator2 server is not serving ({exc})")
    if isinstance(exc, U2Died):
        return died_during(doing, SERVER, cause=exc.cause, may_have_run=exc.may_have_run, after=exc.after)
    if isinstance(exc, U2Unreachable):
        return DeviceUnavailable(f"{doing}: {exc}")
    if isinstance(exc, (adbutils.AdbTimeout, socket.timeout, TimeoutError)):
        return _timed_out(doing, exc)
    if isinstance(exc, adbutils.AdbError):
        # The adb server's FAIL texts: "device offline", "device 'X' not found", "closed", ...
        return DeviceUnavailable(f"{doing}: adb: {_first_line(exc)}")
    if isinstance(exc, (EOFError, ConnectionError, http.client.HTTPException)):
        return DeviceUnavailable(f"{doing}: the connection to the phone broke ({type(exc).__name__})")
    if isinstance(exc, OSError):
        return DeviceUnavailable(f"{doing}: talking to the phone failed ({exc.strerror or exc})")
    if isinstance(exc, NotImplementedError):
        return Unsupported(f"{doing}: {exc}")
    log.error("%s failed unexpectedly", doing, exc_info=exc)
    from phoneuse_runtime.kernel.errors import Internal

    return Internal(f"{doing} failed unexpectedly; see the server log")


def _first_line(exc: BaseException) -> str:
    text = " ".join(str(a) for a in exc.args) if exc.args else type(exc).__name__
    return text.strip().splitlines()[0] if text.strip() else type(exc).__name__


def is_link_failure(failure: RuntimeFailure) -> bool:
    """Whether a failure suggests the phone itself is gone (so the link is checked at once)."""
    return isinstance(failure, DeviceUnavailable)
