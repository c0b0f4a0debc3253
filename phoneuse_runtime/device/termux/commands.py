"""Running the `termux-*` commands of Termux:API, and the one place where what they report
becomes the runtime's failures.

Every command runs as its own process group with a timeout: the commands talk to the
Termux:API app through a broadcast, and when the app is missing (or, for
`termux-notification-list`, lacks notification access) nothing ever answers and the command
waits forever. A command that runs out of time is killed with its children (the script and
the `termux-api` binary it starts) before the call returns, so nothing is left running.

What the commands print (Termux:API's JsonWriter, indented by two spaces) is JSON, except
`termux-clipboard-get` (the text itself) and the commands that print nothing (`termux-sms-send`,
`termux-telephony-call`, `termux-clipboard-set`, `termux-toast`). A permission the app lacks
comes back as `{"error": "Please grant the following permission(s) to use this command:
android.permission.A ,android.permission.B"}` with exit status 0 (TermuxApiPermissionActivity).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import signal
import time
from dataclasses import dataclass

from phoneuse_runtime.device.base import deadline
from phoneuse_runtime.kernel.errors import (
    DeviceUnavailable,
    PermissionDenied,
    RuntimeFailure,
    Timeout,
    Unsupported,
)

log = logging.getLogger(__name__)

# A command's own cap, outside a call's deadline too (the pollers, doctor): a healthy
# Termux:API answers in well under a second; one that has not answered by then never will.
COMMAND_TIMEOUT_S = 10.0
# The largest output read from a command (a contact list of a big address book is ~1 MB).
MAX_OUTPUT_BYTES = 32 * 1024 * 1024

_PERMISSION = re.compile(r"android\.permission\.[A-Z_]+")
# The Settings page that grants each permission to Termux:API, as Android names it there.
PERMISSION_GROUPS = {
    "android.permission.READ_SMS": "SMS",
    "android.permission.SEND_SMS": "SMS",
    "android.permission.READ_CONTACTS": "Contacts",
    "android.permission.READ_CALL_LOG": "Call logs",
    "android.permission.CALL_PHONE": "Phone",
    "android.permission.READ_PHONE_STATE": "Phone",
}
# What each hang most likely means, said in the failure.
HANG_HINTS = {
    "termux-notification-list": (
        "grant Termux:API notification access (Settings > Notifications > Device & app "
        "notifications > Termux:API), or install the Termux:API app"
    ),
}
DEFAULT_HANG_HINT = (
    "is the Termux:API app installed, from the same source as Termux (F-Droid or GitHub), and "
    "allowed to run in the background?"
)


@dataclass(frozen=True)
class Output:
    """What a command printed, and how it ended."""

    command: str
    stdout: str
    stderr: str
    exit_code: int


def grant_fix(permissions: list[str]) -> str:
    groups = sorted({PERMISSION_GROUPS.get(p, p.rsplit(".", 1)[-1]) for p in permissions})
    return (
        f"Android Settings > Apps > Termux:API > Permissions > {', '.join(groups)} > Allow "
        "(or run the command once in Termux and accept the prompt)"
    )


def permission_failure(command: str, message: str) -> PermissionDenied:
    permissions = _PERMISSION.findall(message)
    named = ", ".join(permissions) or "a permission"
    return PermissionDenied(f"{command}: Termux:API lacks {named}; grant it: {grant_fix(permissions)}")


# Termux:API's Google Play build has no SMS: its termux-sms-* answer e.g. {"error": "Reading SMS is
# no longer permitted by Google"} (termux-app issue 1324). Permanent on that build: UNSUPPORTED.
_REMOVED_BY_PLATFORM = re.compile(r"no longer permitted", re.IGNORECASE)
PLAY_BUILD_FIX = (
    "the Google Play build of Termux:API cannot use SMS; install Termux and Termux:API from F-Droid "
    "or GitHub releases instead (both from the same source)"
)


def parse_json(out: Output) -> object:
    """The JSON a command printed; its `{"error": ...}` answer raised as the failure it is."""
    text = out.stdout.strip()
    if not text:
        raise DeviceUnavailable(f"{out.command} printed nothing (exit status {out.exit_code})")
    try:
        value: object = json.loads(text)
    except json.JSONDecodeError as exc:
        first = text.splitlines()[0][:200]
        raise DeviceUnavailable(f"{out.command} printed something that is not JSON: {first!r}") from exc
    if isinstance(value, dict) and "error" in value:
        message = str(value["error"])
        if _REMOVED_BY_PLATFORM.search(message):
            raise Unsupported(f"{out.command}: Termux:API said: {message}; {PLAY_BUILD_FIX}")
        if "permission" in message.lower():
            raise permission_failure(out.command, message)
        raise DeviceUnavailable(f"{out.command}: Termux:API said: {message}")
    return value


def _budget(cap_s: float) -> tuple[float, bool]:
    """Seconds the command may take, and whether the call's deadline (not the cap) sets it."""
    when = deadline()
    if when is None:
        return cap_s, False
    left = when - time.monotonic()
    return (left, True) if left < cap_s else (cap_s, False)


def _kill(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def _not_found(command: str) -> str:
    """What to do about a command that is not on PATH: Termux:API's come from `pkg`, Android's
    own (getprop, am, ...) live in /system/bin, which Termux's PATH normally includes."""
    if command.startswith("termux-"):
        return f"{command} is not installed: pkg install termux-api (and install the Termux:API app)"
    return (
        f"{command} is not on PATH: it is Android's own, /system/bin/{command}; "
        "add /system/bin to PATH (Termux's own shell has it; a service's environment may not)"
    )


async def run(command: str, *args: str, stdin: str | None = None, cap_s: float = COMMAND_TIMEOUT_S) -> Output:
    """Runs one command under the call's deadline (at most `cap_s`), killing it and its children
    when time runs out or the caller gives up. A non-zero exit status is a failure."""
    wait_s, by_deadline = _budget(cap_s)
    if wait_s <= 0:
        raise Timeout(f"{command}: the call's deadline passed before it could run")
    try:
        proc = await asyncio.create_subprocess_exec(
            command,
            *args,
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,  # its own process group: a timeout kills the script's children too
            limit=MAX_OUTPUT_BYTES,
        )
    except FileNotFoundError as exc:
        raise Unsupported(_not_found(command)) from exc
    except PermissionError as exc:
        raise DeviceUnavailable(f"{command} cannot be run: {exc.strerror}") from exc
    try:
        stdout, stderr = await asyncio.wait_for(
            proc.communicate(stdin.encode() if stdin is not None else None), timeout=wait_s
        )
    except asyncio.TimeoutError:
        _kill(proc)
        await proc.wait()
        if by_deadline:
            raise Timeout(f"{command} did not answer before the call's deadline") from None
        hint = HANG_HINTS.get(command, DEFAULT_HANG_HINT)
        raise DeviceUnavailable(f"{command} did not answer within {cap_s:g} s: {hint}") from None
    except BaseException:  # cancelled: the caller gave up; leave nothing running
        _kill(proc)
        with contextlib.suppress(BaseException):
            await asyncio.shield(proc.wait())
        raise
    code = proc.returncode if proc.returncode is not None else -1
    out = Output(command, stdout.decode(errors="replace"), stderr.decode(errors="replace"), code)
    if code != 0:
        said = (out.stderr or out.stdout).strip().splitlines()
        raise DeviceUnavailable(f"{command} failed (exit status {code}): {said[0] if said else 'no message'}")
    return out


async def run_quiet(command: str, *args: str, stdin: str | None = None) -> None:
    """A command that prints nothing when it works; what it does print is Termux:API's error
    object (a permission not granted), raised as the failure it is."""
    out = await run(command, *args, stdin=stdin)
    if out.stdout.strip().startswith("{"):
        parse_json(out)


async def run_json(command: str, *args: str, cap_s: float = COMMAND_TIMEOUT_S) -> object:
    return parse_json(await run(command, *args, cap_s=cap_s))


def is_link_failure(failure: RuntimeFailure) -> bool:
    """Whether a failure says Termux:API itself is not answering (not just one permission)."""
    return isinstance(failure, DeviceUnavailable)
