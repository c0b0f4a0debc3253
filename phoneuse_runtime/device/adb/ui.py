"""The screen, through the uiautomator2 server on the phone: finding elements, the hierarchy,
gestures, keys, typing, the clipboard and screenshots.

uiautomator2 supplies the server (its `u2.jar`, started with the command `launch_uiautomator`
runs, on a shell stream read here (`LaunchShell`), then `GET /ping` until "pong") and its
selector encoding. The JSON-RPC
calls themselves are made here, one adb `tcp:9008` stream per request as uiautomator2 makes
them, for three reasons: each socket wait is bounded by the call's own deadline (uiautomator2
leaves adb's 600 s default on the stream); a dead server is restarted in the open (an ERROR
event, a log line, at most 3 a minute: device/ui_server.py) and only a call that reads is sent
again (uiautomator2's `jsonrpc_call` silently restarts and resends whatever it was, a tap
included); and uiautomator2's high-level
helpers sleep and retry inside (`dump_hierarchy`, `send_keys`), which the runtime must not.

Everything here runs on the device's worker thread, with the call's `Budget`.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import http.client
import io
import json
import logging
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import adbutils
import uiautomator2
import uiautomator2.core

from phoneuse_runtime.device.adb.dumpsys import (
    SYSTEM_DIALOG_TITLES,
    SYSTEM_UI,
    parse_window_focus,
)
from phoneuse_runtime.device.adb.errors import SERVER, RpcError, U2Dead, U2Died, U2Unreachable, rpc_failure
from phoneuse_runtime.device.adb.shell import command
from phoneuse_runtime.device.adb.worker import Budget
from phoneuse_runtime.device.base import Foreground, ShellResult
from phoneuse_runtime.device.ui_server import RestartLimiter, restarted_event
from phoneuse_runtime.kernel.errors import ElementNotFound, Unsupported
from phoneuse_runtime.kernel.events import Event
from phoneuse_runtime.owner.front_guard import FrontGuard, FrontRefused
from phoneuse_runtime.screen.dialogs import SYSTEM_SERVER
from phoneuse_runtime.screen.selector import Selector
from phoneuse_runtime.screen.stale import SeenScreen, stale
from phoneuse_runtime.screen.ui import UiNode

log = logging.getLogger(__name__)

PORT = uiautomator2.core.DEFAULT_SERVER_PORT  # 9008, where u2.jar's server listens on the phone
JAR_REMOTE = "/data/local/tmp/u2.jar"
# The server's readiness is polled at this interval after a launch, up to LAUNCH_S.
READY_POLL_S = 0.05
LAUNCH_S = 30.0
STOP_S = 5.0
MAIN_CLASS = "com.wetest.uia2.Main"  # the server's class in u2.jar, as uiautomator2 launches it
# uiautomator2.core.launch_uiautomator's command; its MockAdbProcess keeps the stream private.
LAUNCH_COMMAND = f"CLASSPATH={JAR_REMOTE} app_process / {MAIN_CLASS} -p {PORT}"
# uiautomator2's input method (from its app-uiautomator.apk; `python -m uiautomator2 init`).
IME_ID = "com.github.uiautomator/.AdbKeyboard"
# Its package: the only receiver the typed text is broadcast to. `am broadcast -a
# ADB_KEYBOARD_INPUT_TEXT` without `-p` (as uiautomator2 itself sends it) reaches every app that
# registered a receiver for the action, passwords included.
IME_PACKAGE = IME_ID.split("/", 1)[0]
# The input methods installed, one id a line (read at connect, with `wm size`: `ime_listed`).
IME_LIST = "ime list -s -a 2>/dev/null"
# After switching to it, its broadcast receiver may take a moment to register: the broadcast is
# sent again at this interval (it is only received, and only types, once the IME is up).
IME_READY_POLL_S = 0.1
IME_READY_S = 3.0
CLIP_LABEL = "phoneuse"
# A find that waits holds the phone's worker at most this long at a time (its caller looks again
# while it has time left), so the calls queued behind it (the TAP a WAIT_FOR waits on) get turns.
FIND_WAIT_CHUNK_MS = 1000
# The JSON-RPC methods that only read: a call (or batch) made of these alone is sent again after
# the server died under it and was restarted; any other acts, and is never sent twice.
READS = frozenset(
    {
        "dumpWindowHierarchy",
        "objInfo",
        "objInfos",
        "count",
        "exist",
        "waitForExists",
        "waitUntilGone",
        "takeScreenshot",
        "deviceInfo",
        "getClipboard",
        "getLastToast",
    }
)
# The processes that hold UiAutomation when uiautomator2's server cannot (by their `ps -A`
# name), named in the failure: Appium's UiAutomator2 server (an instrumentation), uiautomator2's
# own old instrumentation (app-uiautomator-test), the `uiautomator` command (a dump, an old test).
HOLDERS = {
    "io.appium.uiautomator2.server": "Appium's UiAutomator2 server (io.appium.uiautomator2.server)",
    "io.appium.uiautomator2.server.test": "Appium's UiAutomator2 server (io.appium.uiautomator2.server)",
    "com.github.uiautomator": "uiautomator2's old instrumentation (com.github.uiautomator)",
    "com.github.uiautomator.test": "uiautomator2's old instrumentation (com.github.uiautomator)",
    "uiautomator": "a `uiautomator` command (a dump or an old uiautomator test)",
}

ShellRunner = Callable[[Budget, str], ShellResult]
T = TypeVar("T")


# --- selectors and nodes ----------------------------------------------------
def _literal(text: str) -> str:
    """A Java regex that matches `text` literally."""
    return "\\Q" + text.replace("\\E", "\\E\\\\E\\Q") + "\\E"


def u2_selector(selector: Selector) -> dict[str, Any]:
    """The UiSelector (as uiautomator2 encodes it) that picks what `selector` picks: the same
    exact text and description, a resource id with or without its `package:id/` prefix, a class
    by full or simple name, and `index` as UiSelector's instance."""
    fields: dict[str, Any] = {}
    if selector.text is not None:
        fields["text"] = selector.text
    if selector.description is not None:
        fields["description"] = selector.description
    if selector.resource_id is not None:
        if ":id/" in selector.resource_id:
            fields["resourceId"] = selector.resource_id
        else:
            fields["resourceIdMatches"] = f"^(?:.*:id/)?{_literal(selector.resource_id)}$"
    if selector.class_name is not None:
        if "." in selector.class_name:
            fields["className"] = selector.class_name
        else:
            fields["classNameMatches"] = f"^(?:.*\\.)?{_literal(selector.class_name)}$"
    if selector.package is not None:
        fields["packageName"] = selector.package
    if selector.index:
        fields["instance"] = selector.index
    return dict(uiautomator2.Selector(**fields))


def not_one_of(packages: frozenset[str]) -> str:
    """A Java regex that matches any package name but those in `packages`."""
    names = "|".join(_literal(p) for p in sorted(packages))
    return f"^(?!(?:{names})$).*$" if names else "^.*$"


def guarded(selector: dict[str, Any], refused: frozenset[str]) -> dict[str, Any]:
    """`selector` (u2's encoding) made to match only in the active window, and only an element
    of a package not in `refused`: so the phone finds nothing while a refused app has the focus.

    An `instance` in the selector makes the server resolve it as a UiObject (UiSelector), not a
    UiObject2 (android-uiautomator-server's Selector.checkBySelectorNull): UiAutomator's
    QueryController searches a UiSelector from `getRootInActiveWindow()`, the window that has
    the focus, whose nodes are that app's package."""
    fields = {
        k: v for k, v in selector.items() if k not in ("mask", "childOrSibling", "childOrSiblingSelector")
    }
    fields["packageNameMatches"] = not_one_of(refused)
    fields.setdefault("instance", 0)
    return dict(uiautomator2.Selector(**fields))


FOCUSED: dict[str, Any] = dict(uiautomator2.Selector(focused=True))


def _rect(value: Any) -> tuple[int, int, int, int] | None:
    if not isinstance(value, dict):
        return None
    try:
        return int(value["left"]), int(value["top"]), int(value["right"]), int(value["bottom"])
    except (KeyError, TypeError, ValueError):
        return None


def node_from_info(info: dict[str, Any]) -> UiNode:
    """An `objInfo` answer as a UiNode. Its bounds are the visible part when the server reports
    one (as uiautomator2's own click uses), so a tap at the centre lands on the element."""
    bounds = _rect(info.get("bounds")) or (0, 0, 0, 0)
    visible = _rect(info.get("visibleBounds"))
    if visible is not None and visible[2] > visible[0] and visible[3] > visible[1]:
        bounds = visible
    return UiNode(
        text=str(info.get("text") or ""),
        resource_id=str(info.get("resourceName") or ""),
        class_name=str(info.get("className") or ""),
        package=str(info.get("packageName") or ""),
        description=str(info.get("contentDescription") or ""),
        bounds=bounds,
        clickable=bool(info.get("clickable")),
        long_clickable=bool(info.get("longClickable")),
        focusable=bool(info.get("focusable")),
        focused=bool(info.get("focused")),
        enabled=bool(info.get("enabled", True)),
        checkable=bool(info.get("checkable")),
        checked=bool(info.get("checked")),
        scrollable=bool(info.get("scrollable")),
        selected=bool(info.get("selected")),
    )


# --- the server ---------------------------------------------------------------
class _StreamHttp(http.client.HTTPConnection):
    """HTTP over an adb stream already connected to the server's port on the phone."""

    def __init__(self, sock: Any, timeout: float) -> None:
        super().__init__("127.0.0.1", PORT, timeout=timeout)
        self.sock = sock

    def connect(self) -> None:  # the stream is the connection
        return None


@dataclass
class RpcStats:
    """What the server was asked, for benchmarks and tests: JSON-RPC calls by method."""

    calls: dict[str, int]

    def count(self, method: str) -> None:
        self.calls[method] = self.calls.get(method, 0) + 1


class U2Server:
    """uiautomator2's server on one phone: pushed, launched, pinged and restarted by us."""

    def __init__(
        self,
        device: adbutils.AdbDevice,
        *,
        v2: bool = False,
        limiter: RestartLimiter | None = None,
        on_restart: Callable[[Event], None] = lambda _e: None,
    ) -> None:
        self.device = device
        self.v2 = v2  # whether the phone speaks shell_v2
        self.process: LaunchShell | None = None  # the shell that runs the server
        self.stats = RpcStats({})
        self.restarts = 0
        # The device's, so a reconnection (a new U2Server) does not forget the recent deaths.
        self.limiter = limiter or RestartLimiter(SERVER)
        self.on_restart = on_restart  # each restart's UI_SERVER_RESTARTED event (from this thread)

    # -- transport
    def _open(self, budget: Budget) -> Any:
        """A new adb stream to the server's port (adbutils' create_connection, with the call's
        timeout on every wait instead of adb's 600 s default)."""
        conn = self.device.open_transport(timeout=budget.wait_s())
        try:
            conn.send_command(f"tcp:{PORT}")
            conn.check_okay()
        except adbutils.AdbError as exc:
            conn.close()
            # adbd closes a tcp: stream at once when nothing listens on the port.
            raise U2Dead(f"nothing listens on tcp:{PORT} ({exc})") from exc
        except BaseException:
            conn.close()
            raise
        return conn.conn

    def _http(self, budget: Budget, method: str, path: str, body: bytes | None) -> bytes:
        """One request. U2Dead when nothing listens (not sent), when the stream drops before the
        whole answer came (the server died with the request in hand: it may have run) or when
        the server answers an HTTP error (a 5xx: it failed in the middle)."""
        sock = self._open(budget)
        conn = _StreamHttp(sock, budget.wait_s())
        try:
            headers = {
                "User-Agent": "phoneuse-runtime",
                "Accept-Encoding": "",
                "Content-Type": "application/json",
            }
            try:
                conn.request(method, path, body=body, headers=headers)
                response = conn.getresponse()
                content = response.read()
            except (http.client.HTTPException, ConnectionError, EOFError) as exc:
                raise U2Dead(
                    f"the connection to it dropped before its answer to {method} {path} "
                    f"({type(exc).__name__})",
                    may_have_run=True,
                ) from exc
            if response.status != 200:
                # A 5xx: it failed midway (it may have run), unless it says it could not start.
                said = content[:300].decode("utf-8", "replace")
                refused = rpc_failure(path, said, "").kind == "dead"
                raise U2Dead(
                    f"{method} {path} answered HTTP {response.status} {response.reason}"
                    + (f" ({said.strip().splitlines()[0]})" if said.strip() else ""),
                    may_have_run=response.status >= 500 and not refused,
                )
            return content
        finally:
            conn.close()

    def ping(self, budget: Budget) -> bool:
        try:
            return self._http(budget, "GET", "/ping", None).strip() == b"pong"
        except (U2Dead, http.client.HTTPException, ConnectionError, EOFError):
            return False

    def rpc(self, budget: Budget, method: str, *params: Any) -> Any:
        """One JSON-RPC call; U2Dead/RpcError as the server fails."""
        self.stats.count(method)
        payload = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": list(params)})
        raw = self._http(budget, "POST", "/jsonrpc/0", payload.encode("utf-8"))
        try:
            answer = json.loads(raw)
        except ValueError as exc:
            raise RpcError(method, "failed", f"not JSON: {raw[:100]!r}") from exc
        if not isinstance(answer, dict):
            raise RpcError(method, "failed", "the answer is not a JSON object")
        error = answer.get("error")
        if error is not None:
            if not isinstance(error, dict):
                error = {"message": str(error)}
            failure = rpc_failure(method, str(error.get("message", "")), str(error.get("data", "")))
            if failure.kind == "dead":
                raise U2Dead(failure.message) from failure
            raise failure
        return answer.get("result")

    def rpc_batch(self, budget: Budget, calls: list[tuple[str, tuple[Any, ...]]]) -> list[Any]:
        """Several JSON-RPC calls in one request (a JSON-RPC 2.0 batch, which the server's
        jsonrpc4j runs in order, each whatever the one before answered): one round trip. Each
        answer is its result, or the RpcError it failed with; U2Dead when the server is not
        serving."""
        for method, _ in calls:
            self.stats.count(method)
        payload = json.dumps(
            [
                {"jsonrpc": "2.0", "id": i + 1, "method": method, "params": list(params)}
                for i, (method, params) in enumerate(calls)
            ]
        )
        raw = self._http(budget, "POST", "/jsonrpc/0", payload.encode("utf-8"))
        try:
            answers = json.loads(raw)
        except ValueError as exc:
            raise RpcError(calls[0][0], "failed", f"not JSON: {raw[:100]!r}") from exc
        if not isinstance(answers, list):
            raise RpcError(calls[0][0], "failed", "the answer to a batch is not a JSON array")
        by_id = {a.get("id"): a for a in answers if isinstance(a, dict)}
        out: list[Any] = []
        for i, (method, _) in enumerate(calls):
            answer = by_id.get(i + 1)
            if answer is None:
                out.append(RpcError(method, "failed", "no answer in the batch"))
                continue
            error = answer.get("error")
            if error is None:
                out.append(answer.get("result"))
                continue
            if not isinstance(error, dict):
                error = {"message": str(error)}
            failure = rpc_failure(method, str(error.get("message", "")), str(error.get("data", "")))
            if failure.kind == "dead":
                # The calls before it ran (jsonrpc4j runs a batch in order): one that acts may have.
                acted = any(m not in READS for m, _ in calls[:i])
                raise U2Dead(failure.message, may_have_run=acted) from failure
            out.append(failure)
        return out

    def batch(self, budget: Budget, calls: list[tuple[str, tuple[Any, ...]]]) -> list[Any]:
        """`rpc_batch`, through `_serve`."""
        return self._serve(budget, [m for m, _ in calls], lambda: self.rpc_batch(budget, calls))

    def call(self, budget: Budget, method: str, *params: Any, idempotent: bool = False) -> Any:
        """`rpc`, through `_serve`; `idempotent`: an act that may be sent twice (setting the
        clipboard back to what it held), sent once more after a restart as a read is."""
        return self._serve(budget, [method], lambda: self.rpc(budget, method, *params), idempotent=idempotent)

    def _serve(
        self, budget: Budget, methods: list[str], send: Callable[[], T], *, idempotent: bool = False
    ) -> T:
        """`send`, and when the server is not serving: restarted (`recover`), then a request of
        READS alone sent once more; one that acts is not (U2Died: it may have run, or did not)."""
        try:
            return send()
        except U2Dead as exc:
            died = exc
        reads = idempotent or all(m in READS for m in methods)
        try:
            took_ms = self.recover(budget, str(died))
        except U2Unreachable as failed:
            if reads:
                raise
            raise U2Died(
                cause=str(died), may_have_run=died.may_have_run, after=f"not restarted: {failed}"
            ) from failed
        if not reads:
            after = f"the server was restarted in {took_ms} ms"
            raise U2Died(cause=str(died), may_have_run=died.may_have_run, after=after) from died
        try:
            return send()
        except U2Dead as again:
            raise U2Unreachable(f"the uiautomator2 server still fails after a restart: {again}") from again

    def recover(self, budget: Budget, cause: str) -> int:
        """Restarts a server that died of `cause` (unless the limiter refuses: U2Unreachable,
        saying why), publishes UI_SERVER_RESTARTED and logs it; how long it took (ms)."""
        refusal = self.limiter.refusal(cause)
        if refusal is not None:
            raise U2Unreachable(refusal)
        log.warning("uiautomator2 server is not serving (%s); restarting it once", cause)
        started = time.monotonic()
        try:
            self.restart(budget)
        except U2Unreachable as exc:
            self.limiter.restart_failed(str(exc))
            log.warning("restarting the uiautomator2 server failed: %s", exc)
            raise
        except (adbutils.AdbTimeout, TimeoutError):  # the call's deadline: its TIMEOUT
            self.limiter.restart_failed(None)
            raise
        except (adbutils.AdbError, OSError) as exc:  # the phone itself went (the link will say)
            self.limiter.restart_failed(None)
            raise U2Unreachable(f"the phone did not answer the restart (adb: {exc})") from exc
        self.limiter.restart_failed(None)
        took_ms = round((time.monotonic() - started) * 1000)
        log.warning("uiautomator2 server restarted in %d ms (it had died: %s)", took_ms, cause)
        self.on_restart(restarted_event(SERVER, cause=cause, took_ms=took_ms))
        return took_ms

    # -- lifecycle
    def ensure(self, budget: Budget) -> None:
        """Starts the server unless it already answers (left running by an earlier run, or
        started by uiautomator2 itself)."""
        if self.ping(budget):
            return
        self._launch(budget)

    def restart(self, budget: Budget) -> None:
        """Ends the server (our launch shell, and any other instance: `pkill -f` its main class),
        waits until its port stops answering, and launches a new one."""
        self.restarts += 1
        self.stop()
        self.device.shell2(command("pkill", "-f", MAIN_CLASS), timeout=budget.wait_s(), v2=self.v2)
        give_up = min(budget.until, time.monotonic() + STOP_S)
        while self.ping(Budget(min(give_up, time.monotonic() + 1.0))):
            if time.monotonic() + READY_POLL_S >= give_up:
                raise U2Unreachable(
                    f"the old uiautomator2 server still answers {STOP_S:.0f} s after it was stopped"
                )
            time.sleep(READY_POLL_S)  # the stop's poll (see READY_POLL_S)
        self._launch(budget)

    def _holder(self, budget: Budget) -> str:
        """Who holds UiAutomation, by the processes `ps -A` lists (HOLDERS), or "not named"."""
        try:
            listed = self.device.shell2("ps -A", timeout=budget.wait_s(), v2=self.v2).output
        except (adbutils.AdbError, OSError):
            return "it could not be named"
        names = {line.split()[-1] for line in listed.splitlines() if line.split()}
        found = sorted({HOLDERS[n] for n in names if n in HOLDERS})
        return ", ".join(found) if found else "the phone's processes do not name it"

    def stop(self) -> None:
        """Ends the launch shell, which ends the server with it."""
        process, self.process = self.process, None
        if process is not None:
            with contextlib.suppress(OSError):
                process.close()  # without waiting for its reader, as MockAdbProcess.kill would (3 s)

    def _push_jar(self, budget: Budget) -> None:
        with uiautomator2.utils.with_package_resource("assets/u2.jar") as jar:
            data = jar.read_bytes()
        digest = hashlib.md5(data, usedforsecurity=False).hexdigest()
        listed = self.device.shell2(command("md5sum", JAR_REMOTE), timeout=budget.wait_s(), v2=self.v2).output
        if digest in listed:
            return
        log.info("pushing uiautomator2's server (u2.jar, %d bytes) to %s", len(data), JAR_REMOTE)
        self.device.sync.push(io.BytesIO(data), JAR_REMOTE, mode=0o644)

    def _launch(self, budget: Budget) -> None:
        try:
            self._push_jar(budget)
            self.process = LaunchShell(self.device.shell(LAUNCH_COMMAND, stream=True))
        except (adbutils.AdbError, OSError) as exc:
            raise U2Unreachable(f"could not start the uiautomator2 server: {exc}") from exc
        give_up = min(budget.until, time.monotonic() + LAUNCH_S)
        while True:
            output = self.process.output.decode("utf-8", "replace")
            if "already registered" in output:
                self.stop()
                raise U2Unreachable(
                    f"another automation client holds UiAutomation ({self._holder(budget)}; the phone "
                    "says 'UiAutomationService ... already registered!'): stop it (Appium, an old "
                    "uiautomator) and retry"
                )
            if self.process.ended:
                self.process = None
                raise U2Unreachable(f"the uiautomator2 server quit at start: {output.strip()[-300:]!r}")
            if self.ping(Budget(min(give_up, time.monotonic() + 2.0))):
                log.info("uiautomator2 server is up")
                return
            if time.monotonic() + READY_POLL_S >= give_up:
                self.stop()
                raise U2Unreachable(f"the uiautomator2 server did not answer /ping within {LAUNCH_S:.0f} s")
            time.sleep(READY_POLL_S)  # the launch's readiness poll (see READY_POLL_S)


class LaunchShell:
    """The adb shell stream that runs the uiautomator2 server: what it has printed so far (read
    on a thread of its own), and whether it has ended (the server quit, or the stream closed)."""

    def __init__(self, conn: adbutils.AdbConnection) -> None:
        self._conn = conn
        self._output = bytearray()
        self._ended = threading.Event()
        threading.Thread(target=self._read, name="u2-launch-shell", daemon=True).start()

    def _read(self) -> None:
        with contextlib.suppress(OSError):
            while chunk := self._conn.conn.recv(1024):
                self._output.extend(chunk)
        self._ended.set()

    @property
    def output(self) -> bytes:
        return bytes(self._output)

    @property
    def ended(self) -> bool:
        return self._ended.is_set()

    def close(self) -> None:
        """Closes the stream, which ends the server (adbd hangs up on the shell)."""
        self._conn.close()


@dataclass
class Acted:
    """What one batch on an element found: the element before the steps ran (None: nothing
    matched, and no step ran), the element after them (when asked), and the screen after them
    (when asked)."""

    node: UiNode | None
    after: UiNode | None = None
    xml: str | None = None


@dataclass
class Typed:
    """How `input_text` typed (`via`), and the screen right after it when its last batch read
    one (the field's read back, which then costs no round trip of its own)."""

    via: str
    xml: str | None = None


# --- primitives ---------------------------------------------------------------
class Ui:
    """The UI primitives, over one `U2Server`; `shell` runs phone shell commands (for the input
    method)."""

    def __init__(
        self, server: U2Server, shell: ShellRunner, front: Callable[[Budget], Foreground] | None = None
    ) -> None:
        self.server = server
        self.shell = shell
        self.front = front  # reads what is in front (the device's dumpsys read), for the guard
        # Whether uiautomator2's keyboard is installed: read at connect (`ime_listed`), learnt
        # again whenever the typing script finds it missing; None: not known yet.
        self.ime_installed: bool | None = None
        # Whether the clipboard takes a text and reads it back (False: pasting is not tried again)
        self.paste_works: bool | None = None

    def check_front(self, budget: Budget, guard: FrontGuard | None, seen: SeenScreen | None = None) -> None:
        """FrontRefused when a package the guard refuses is in front now, StaleScreen when the
        window in front is none of `seen`'s (one shell round trip)."""
        if (guard is None and seen is None) or self.front is None:
            return
        front = self.front(budget)
        if guard is not None and guard.refuses(front.package):
            raise FrontRefused(front)
        if seen is not None and front.package and not seen.shows(front.package):
            raise stale(front.package, front.activity, seen)

    def look(self, budget: Budget, selector: Selector) -> UiNode | None:
        """The element now, in one round trip (`objInfo`), or None."""
        try:
            return node_from_info(self.server.call(budget, "objInfo", u2_selector(selector)))
        except RpcError as exc:
            if exc.kind == "not_found":
                return None
            raise

    def act(
        self,
        budget: Budget,
        sel: dict[str, Any],
        steps: list[tuple[str, tuple[Any, ...]]],
        *,
        after: dict[str, Any] | None = None,
        dump: bool = False,
    ) -> Acted:
        """Looks the element up (`objInfo`), runs `steps` on it and, when asked, looks at it
        again (`after`, a selector) and dumps the screen: all in one JSON-RPC batch, one round
        trip. An element that is not there fails the look and every step (the phone resolves the
        selector in each), so nothing is done to anything else."""
        calls: list[tuple[str, tuple[Any, ...]]] = [("objInfo", (sel,)), *steps]
        if after is not None:
            calls.append(("objInfo", (after,)))
        if dump:
            calls.append(("dumpWindowHierarchy", (False, 50)))
        answers = self.server.batch(budget, calls)
        first = answers[0]
        if isinstance(first, RpcError):
            if first.kind == "not_found":
                return Acted(None)
            raise first
        for answer in answers[1 : 1 + len(steps)]:
            if isinstance(answer, RpcError):
                raise answer  # gone between the look and the step: not_found is ELEMENT_NOT_FOUND
        acted = Acted(node_from_info(first))
        rest = answers[1 + len(steps) :]
        if after is not None:
            seen = rest.pop(0)
            acted.after = node_from_info(seen) if isinstance(seen, dict) else None
        if dump:
            xml = rest.pop(0)
            acted.xml = xml if isinstance(xml, str) and xml.strip() else None
        return acted

    def wait_and_look(self, budget: Budget, selector: Selector, timeout_ms: int) -> UiNode | None:
        """Waits on the phone (`waitForExists`, at most `timeout_ms` and FIND_WAIT_CHUNK_MS) and
        looks the element up (`objInfo`) in the same batch: one round trip; None when it did not
        appear."""
        wait_ms = max(0, int(min(timeout_ms, FIND_WAIT_CHUNK_MS, budget.left() * 1000)))
        sel = u2_selector(selector)
        waited, info = self.server.batch(budget, [("waitForExists", (sel, wait_ms)), ("objInfo", (sel,))])
        if isinstance(waited, RpcError):
            raise waited
        if isinstance(info, RpcError):
            if info.kind == "not_found":
                return None
            raise info
        return node_from_info(info)

    def wait_gone(self, budget: Budget, selector: Selector, timeout_ms: int) -> bool:
        """Waits on the phone (`waitUntilGone`, at most `timeout_ms` and FIND_WAIT_CHUNK_MS)
        until no element matches; whether none does."""
        wait_ms = max(0, int(min(timeout_ms, FIND_WAIT_CHUNK_MS, budget.left() * 1000)))
        return bool(self.server.call(budget, "waitUntilGone", u2_selector(selector), wait_ms))

    def dump(self, budget: Budget) -> str:
        xml = self.server.call(budget, "dumpWindowHierarchy", False, 50)
        if not isinstance(xml, str) or not xml.strip():
            return "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\" />"
        return xml

    def rotation(self, budget: Budget) -> int:
        """The display's rotation now (0..3, quarter turns from natural), from uiautomator2's
        `deviceInfo` (one round trip): what gestures computed from the screen size follow."""
        info = self.server.call(budget, "deviceInfo")
        value = info.get("displayRotation", 0) if isinstance(info, dict) else 0
        return int(value) % 4 if isinstance(value, int) else 0

    def tap(self, budget: Budget, x: int, y: int) -> None:
        self.server.call(budget, "click", x, y)

    def long_press(self, budget: Budget, x: int, y: int, duration_ms: int) -> None:
        self.server.call(budget, "click", x, y, duration_ms)

    def swipe(self, budget: Budget, x1: int, y1: int, x2: int, y2: int, *, duration_ms: int) -> None:
        # uiautomator moves one step every ~5 ms; at least 2 steps make a swipe.
        self.server.call(budget, "swipe", x1, y1, x2, y2, max(2, duration_ms // 5))

    def press_key(self, budget: Budget, keycode: int) -> None:
        self.server.call(budget, "pressKeyCode", keycode)

    def set_clipboard(self, budget: Budget, text: str | None) -> None:
        self.server.call(budget, "setClipboard", CLIP_LABEL, text, idempotent=True)

    def get_clipboard(self, budget: Budget) -> str:
        value = self.server.call(budget, "getClipboard")
        return value if isinstance(value, str) else ""

    def clear_text(self, budget: Budget, *, guard: FrontGuard | None = None) -> None:
        """Empties the focused field (`clearTextField`); under a guard, only in the active window
        of an app the guard does not refuse (FrontRefused, read only when nothing matched)."""
        try:
            self.server.call(budget, "clearTextField", guarded(FOCUSED, guard.refused) if guard else FOCUSED)
        except RpcError as exc:
            if exc.kind == "not_found":
                self.check_front(budget, guard)
                raise ElementNotFound("no text field has focus") from exc
            raise

    def screenshot_jpeg(self, budget: Budget) -> bytes | None:
        """The screen as the server encodes it (JPEG), or None when it could not take one."""
        data = self.server.call(budget, "takeScreenshot", 1, 80)
        if not isinstance(data, str) or not data:
            return None
        return base64.b64decode(data)

    # -- typing
    def guarded_input(
        self, budget: Budget, guard: FrontGuard | None, *args: str, seen: SeenScreen | None = None
    ) -> None:
        """`input ARGS` (a tap, a swipe, a key) in one shell round trip that first reads the focused
        window and injects nothing while a refused app has it (`front_check`), nor, for a gesture
        aimed at `seen`, while the window in front is none of that screen's (`fresh_check`:
        StaleScreen). For Android 11+, where `input` is `cmd input`, a binder call; before it,
        `input` starts a VM each time."""
        if self.front is None:
            raise RuntimeError("guarded_input needs the device's front reader")
        refused = guard.refused if guard is not None else frozenset()
        read, refuses = front_check(refused)
        inject = command("input", *args)
        script = (
            f'{read}if [ -z "$c$a" ]; then echo {FRONT_UNKNOWN}; '
            f"elif {refuses}; then echo {FRONT_REFUSED}; "
            f"elif {fresh_check(seen)}; then {inject} 2>&1; echo {INJECTED}=$?; else echo {FRONT_STALE}; fi"
        )
        output = self.shell(budget, script).stdout
        words = output.split()
        if FRONT_REFUSED in words:
            raise FrontRefused(refused_front(output, refused))
        if FRONT_STALE in words and seen is not None:
            front = front_found(output)
            raise stale(front.package, front.activity, seen)
        if FRONT_UNKNOWN in words:
            self.check_front(budget, guard, seen)
            output = self.shell(budget, f"{inject} 2>&1; echo {INJECTED}=$?").stdout
        code = _INJECTED.search(output)
        if code is None or code.group(1) != "0":
            said = output.split(INJECTED, 1)[0].strip().splitlines()
            raise Unsupported(f"input {' '.join(args)} failed: {said[-1] if said else 'no answer'}")

    def input_text(
        self, budget: Budget, text: str, *, replace: bool = False, guard: FrontGuard | None = None
    ) -> Typed:
        """Types at the cursor of the focused field (with `replace`, in place of what it holds);
        returns the path it took, and the screen after it when that path read one. Each path is
        tried only when the one before could not type at all, so nothing is ever typed twice:
        uiautomator2's input method (any Unicode, the user's keyboard restored afterwards: one
        shell round trip, `ime_script`), else the clipboard and a paste (the user's clipboard
        restored: two JSON-RPC batches, `_paste`), else set_text."""
        front_checked = False
        if self.ime_installed is not False:
            typed = self._type_with_ime(budget, text, replace=replace, guard=guard)
            if typed:
                return Typed("uiautomator2 ime")
            if self.ime_installed:
                log.warning("uiautomator2's input method did not take the text; pasting it instead")
            front_checked = True  # the script checked the front before it found no keyboard
        field = guarded(FOCUSED, guard.refused) if guard is not None else FOCUSED
        unchecked = None if front_checked else guard
        if self.paste_works is not False:
            try:
                xml = self._paste(budget, text, field, replace=replace, guard=unchecked)
                self.paste_works = True
                return Typed("clipboard paste", xml)
            except RpcError as exc:
                if exc.kind == "not_found":
                    raise ElementNotFound("no text field has focus") from exc
                self.paste_works = False
                log.warning("pasting failed (%s); setting the field's text instead", exc.message)
        xml = self._set_text(budget, text, field, replace=replace, guard=unchecked)
        return Typed("uiautomator2 set_text", xml)

    def _type_with_ime(self, budget: Budget, text: str, *, replace: bool, guard: FrontGuard | None) -> bool:
        """Types through uiautomator2's input method in one shell round trip (`ime_script`, which
        with a guard first checks what is in front and types nothing while a refused app is);
        whether its keyboard committed the text. Learns on the way whether it is installed."""
        tries = max(1, min(int(IME_READY_S / IME_READY_POLL_S), int(budget.left() / IME_READY_POLL_S) - 1))
        refused = guard.refused if guard is not None and self.front is not None else None
        output = self.shell(budget, ime_script(text, replace=replace, tries=tries, refused=refused)).stdout
        words = output.split()
        if FRONT_REFUSED in words:
            raise FrontRefused(refused_front(output, refused or frozenset()))
        if FRONT_UNKNOWN in words:
            # No focus line in the window dump (an old or odd Android): read the front the long
            # way (dumpsys activity), then type without the script's own check.
            self.check_front(budget, guard)
            output = self.shell(budget, ime_script(text, replace=replace, tries=tries)).stdout
        if NO_IME in output.split():
            self.ime_installed = False
            return False
        self.ime_installed = True
        result = _broadcast_result(output)
        if result == -1 and _broadcast_data(output) == INPUT_TEXT:
            # The receiver answers with the action's name when no field has an InputConnection.
            raise ElementNotFound("no text field has focus")
        if result != -1:
            log.debug("the input method did not take the text (%s)", output.strip()[-80:])
        return result == -1

    def _paste(
        self, budget: Budget, text: str, field: dict[str, Any], *, replace: bool, guard: FrontGuard | None
    ) -> str | None:
        """Pastes `text` into the focused field (`field`: FOCUSED, guarded when a guard holds) in
        two JSON-RPC batches, as uiautomator2's `send_keys` does it (set the clipboard, check that
        it took the text, `pasteClipboard`) with the user's clipboard read before and put back
        after. The first reads the clipboard, looks the field up (`objInfo`: under a guard only
        in the active window of an app the guard does not refuse, as `clear_text`), sets and
        reads back the clipboard and, with `replace`, empties the field; the second, only when
        all of that went right, pastes, puts the user's clipboard back and dumps the screen (the
        read back the caller makes next: the screen after, returned). Nothing is typed when the
        field is not found (then, under `guard`, the front is read to say why: FrontRefused) or
        the clipboard did not take the text (RpcError "failed": set_text is tried instead)."""
        first: list[tuple[str, tuple[Any, ...]]] = [
            ("getClipboard", ()),
            ("objInfo", (field,)),
            ("setClipboard", (CLIP_LABEL, text)),
            ("getClipboard", ()),
        ]
        if replace:
            first.append(("clearTextField", (field,)))
        previous, found, _set, held, *cleared = self.server.batch(budget, first)
        if isinstance(previous, RpcError):
            # Unread: what it held cannot be put back; at least the text does not stay on it.
            log.warning("the clipboard could not be read (%s); it is left empty", previous.message)
            previous = ""
        failure = next((a for a in (found, *cleared) if isinstance(a, RpcError)), None)
        if failure is None and held != text:
            failure = RpcError("setClipboard", "failed", "the clipboard did not take the text")
        if failure is not None:
            self._restore_clipboard(budget, previous)
            if failure.kind == "not_found":
                self.check_front(budget, guard)
            raise failure
        second: list[tuple[str, tuple[Any, ...]]] = [
            ("pasteClipboard", ()),
            ("setClipboard", (CLIP_LABEL, previous)),
            ("dumpWindowHierarchy", (False, 50)),
        ]
        try:
            # Never sent twice (`batch` would, after a restart): had the paste run before the
            # server stopped serving, a second would paste the owner's clipboard, put back by then.
            pasted, restored, xml = self.server.rpc_batch(budget, second)
        except U2Dead as exc:
            self._restore_clipboard(budget, previous)  # `call`: the server restarted once
            typed = "the text may have been typed" if exc.may_have_run else "the text was not typed"
            raise U2Unreachable(
                f"the uiautomator2 server stopped serving while pasting; {typed}: {exc}"
            ) from exc
        if isinstance(restored, RpcError):
            log.warning("the clipboard could not be put back (%s)", restored.message)
        if isinstance(pasted, RpcError):
            raise pasted
        return xml if isinstance(xml, str) and xml.strip() else None

    def _restore_clipboard(self, budget: Budget, previous: str | None) -> None:
        try:
            self.set_clipboard(budget, previous)
        except (RpcError, U2Unreachable) as exc:
            log.warning("the clipboard could not be put back (%s)", exc)

    def _set_text(
        self, budget: Budget, text: str, field: dict[str, Any], *, replace: bool, guard: FrontGuard | None
    ) -> str | None:
        """Sets the focused field's text (`field`, as `_paste`) to what it holds and `text`
        (only `text` with `replace`): the field's whole text, not typing at the cursor. Dumps the
        screen after it in the same batch (returned, as `_paste`)."""
        try:
            current = ""
            if not replace:
                found = self.server.call(budget, "objInfo", field)
                current = str(found.get("text") or "") if isinstance(found, dict) else ""
            done, xml = self.server.batch(
                budget, [("setText", (field, current + text)), ("dumpWindowHierarchy", (False, 50))]
            )
            if isinstance(done, RpcError):
                raise done
        except RpcError as exc:
            if exc.kind == "not_found":
                self.check_front(budget, guard)
                raise ElementNotFound("no text field has focus") from exc
            raise Unsupported(f"no way to type on this phone worked (set_text: {exc.message})") from exc
        return xml if isinstance(xml, str) and xml.strip() else None


_RESULT = re.compile(r"result=(-?\d+)")
_DATA = re.compile(r'data="([^"]*)"')
INPUT_TEXT = "ADB_KEYBOARD_INPUT_TEXT"
CLEAR_TEXT = "ADB_KEYBOARD_CLEAR_TEXT"
NO_IME = "phoneuse:no-ime"  # what the script prints when uiautomator2's input method is not installed


FRONT_REFUSED = "phoneuse:front-refused"  # the guard's check found a refused app in front: nothing typed
FRONT_STALE = "phoneuse:front-stale"  # another app's window than the gesture was aimed at: not done
FRONT_UNKNOWN = "phoneuse:front-unknown"  # the window dump had no focus line: nothing typed
FRONT_MARK = "phoneuse:focus"  # before each focus line the check printed
INJECTED = "phoneuse:input"  # `input`'s exit code, after it ran
_INJECTED = re.compile(re.escape(INJECTED) + r"=(\d+)")


def _ere(text: str) -> str:
    """`text` as a literal in a POSIX extended regex."""
    return re.sub(r"([.^$*+?()\[\]{}|\\])", r"\\\1", text)


def _windows_of(packages: frozenset[str]) -> str:
    """An ERE matching a focus line whose window is one of `packages`': by the window's title
    (`Window{hash u0 pkg/cls}`), the system UI's by its shade or status bar's, the system's
    (`android`) by its dialogs' ("Application Not Responding: pkg", which names the package the
    dialog is about, not the window's); never by a package named anywhere else in the line."""
    names = "|".join(_ere(p) for p in sorted(packages))
    alternatives = [f"Window\\{{[^ ]+ [^ ]+ ({names})[/}}]"] if names else []
    if SYSTEM_UI in packages:
        alternatives.append(r"Window\{[^ ]+ [^ ]+ (NotificationShade|StatusBar)\}")
    if SYSTEM_SERVER in packages:
        alternatives.append(r"Window\{[^ ]+ [^ ]+ (" + "|".join(SYSTEM_DIALOG_TITLES) + "): ")
    return "|".join(alternatives) or "^phoneuse:none$"


def _apps_of(packages: frozenset[str]) -> str:
    """An ERE matching an mFocusedApp line whose activity is one of `packages`'."""
    names = "|".join(_ere(p) for p in sorted(packages))
    return f"ActivityRecord\\{{[^ ]+ [^ ]+ ({names})/" if names else "^phoneuse:none$"


# A focus line whose window says whose it is (an activity's, the shade's, a system dialog's); any
# other (a popup, no line at all) is the focused app's.
_NAMED_WINDOW = (
    r"Window\{[^ ]+ [^ ]+ ([^ /}]+/|NotificationShade\}|StatusBar\}|("
    + "|".join(SYSTEM_DIALOG_TITLES)
    + "): )"
)


def fresh_check(seen: SeenScreen | None) -> str:
    """The shell condition that holds when the window in front (read by `front_check`) is one of
    the screen's the gesture was aimed at (`true` without one): the focused window's, or, for a
    window that does not say whose it is, the focused app's."""
    if seen is None:
        return "true"
    shown, apps = command(_windows_of(seen.packages)), command(_apps_of(seen.packages))
    return (
        f'{{ echo "$c" | grep -qE {shown}; }} || '
        f'{{ echo "$c" | grep -qvE {command(_NAMED_WINDOW)} && echo "$a" | grep -qE {apps}; }}'
    )


def front_check(refused: frozenset[str]) -> tuple[str, str]:
    """The shell that reads the focused window (`dumpsys window windows`, its focus lines: the last
    non-null mCurrentFocus and mFocusedApp, which are the default display's) and prints them,
    and the condition that holds when one of them names a refused package as its window's or its
    activity's (or, refusing the system UI, its shade or status bar window). Where mCurrentFocus
    and mFocusedApp differ (a dialog, the keyboard) either one refused refuses: the check errs on
    the side of doing nothing."""
    pattern = f"{_windows_of(refused)}|{_apps_of(refused)}" if refused else "^phoneuse:none$"
    read = (
        "f=$(dumpsys window windows | grep -E 'mCurrentFocus=|mFocusedApp=' | grep -v '=null'); "
        'c=$(echo "$f" | grep mCurrentFocus= | tail -n 1); a=$(echo "$f" | grep mFocusedApp= | tail -n 1); '
        f'echo "{FRONT_MARK} $c"; echo "{FRONT_MARK} $a"; '
    )
    refuses = f'echo "$c $a" | grep -qE {command(pattern)}'
    return read, refuses


def _printed_focus(output: str) -> str:
    """The focus lines the check printed."""
    return "\n".join(
        line.split(FRONT_MARK, 1)[1].strip() for line in output.splitlines() if line.startswith(FRONT_MARK)
    )


def front_found(output: str) -> Foreground:
    """What the check found in front, read by window (dumpsys.parse_window_focus)."""
    found = parse_window_focus(_printed_focus(output))
    return Foreground(package=found[0], activity=found[1]) if found else Foreground(package="", activity="")


def refused_front(output: str, refused: frozenset[str]) -> Foreground:
    """What the check found in front, from the focus lines it printed: the refused package it
    names as a window's or an activity's (the system UI's for its shade's window)."""
    lines = _printed_focus(output)
    found = parse_window_focus(lines)
    if found is not None and found[0] in refused:
        return Foreground(package=found[0], activity=found[1])
    for package in sorted(refused):
        if re.search(_windows_of(frozenset({package})) + "|" + _apps_of(frozenset({package})), lines):
            return Foreground(package=package, activity="")
    return Foreground(package=SYSTEM_UI, activity="")


def ime_script(text: str, *, replace: bool, tries: int, refused: frozenset[str] | None = None) -> str:
    """One shell script that types `text` through uiautomator2's input method: checks that it is
    installed (else prints NO_IME), remembers the user's keyboard, switches to it, and until its
    receiver (which registers a moment after the switch) answers RESULT_OK, every
    IME_READY_POLL_S and `tries` times at most: empties the field (with `replace`; the text is
    sent only once the field was emptied, so it is never added to what was there) and sends the
    text base-64 encoded. Prints the last answer and switches back to the user's keyboard. The
    text is only ever one quoted argument, so nothing in it is run; the broadcasts name the
    IME's package (`-p`): no other app's receiver sees the text."""
    encoded = base64.b64encode(text.encode("utf-8")).decode("ascii")
    send = command("am", "broadcast", "-p", IME_PACKAGE, "-a", INPUT_TEXT, "--es", "text", encoded)
    clear = command("am", "broadcast", "-p", IME_PACKAGE, "-a", CLEAR_TEXT)
    ready = f"{clear} 2>&1 | grep -q 'result=-1'" if replace else "true"
    ime = command(IME_ID)
    last = int(tries)
    typing = (
        f"if ime list -s -a | grep -qF {ime}; then "
        "p=$(settings get secure default_input_method); "
        f"ime enable {ime} >/dev/null 2>&1; ime set {ime} >/dev/null 2>&1; "
        f"n=0; r=''; while [ $n -lt {last} ]; do ok=0; "
        f"if {ready}; then r=$({send} 2>&1); if echo \"$r\" | grep -q 'result=-1'; then ok=1; fi; fi; "
        f"if [ $ok = 1 ]; then n={last}; else n=$((n+1)); sleep {IME_READY_POLL_S}; fi; done; "
        'echo "$r"; '
        f'if [ -n "$p" ] && [ "$p" != {ime} ] && [ "$p" != null ]; then ime set "$p" >/dev/null 2>&1; fi; '
        f"else echo {NO_IME}; fi"
    )
    if refused is None:
        return typing
    read, refuses = front_check(refused)
    return (
        f'{read}if [ -z "$c$a" ]; then echo {FRONT_UNKNOWN}; '
        f"elif {refuses}; then echo {FRONT_REFUSED}; else {typing}; fi"
    )


def ime_listed(output: str) -> bool:
    """Whether IME_LIST's output lists uiautomator2's keyboard."""
    return IME_ID in output.split()


def _broadcast_result(output: str) -> int | None:
    """The result code `am broadcast` printed ("Broadcast completed: result=-1")."""
    match = _RESULT.search(output)
    return int(match.group(1)) if match else None


def _broadcast_data(output: str) -> str | None:
    """The result data `am broadcast` printed (`data="..."`), if any."""
    match = _DATA.search(output)
    return match.group(1) if match else None
