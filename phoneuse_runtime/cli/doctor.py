"""`phoneuse-runtime doctor`: what the chosen device and the data dir need, checked one by one,
each failure with the command or step that fixes it.

The checks common to every device (the data dir, the token) live here; a backend adds its own
through its row in the table of backends (`device/backends.py`; the adb backend: the adb binary,
its server, the device's state, the uiautomator2 server and its input method). A check that the
chosen device needs and fails makes `doctor` exit non-zero; a warning does not.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import asdict

from phoneuse_runtime.auth.tokens import read_token_file, token_path
from phoneuse_runtime.config.settings import Settings
from phoneuse_runtime.device.backends import backend_for
from phoneuse_runtime.util.checks import Check
from phoneuse_runtime.util.files import StateFileError


def data_dir_checks(settings: Settings) -> list[Check]:
    """The data dir is ours alone (it holds the token and the phone's state), and the token file
    is private."""
    found: list[Check] = []
    data_dir = settings.data_dir
    if not data_dir.exists():
        detail = f"{data_dir} does not exist yet; `serve` creates it (mode 0700)"
        found.append(Check("data dir", "ok", detail))
    elif not data_dir.is_dir():
        fix = f"move it away: mv {data_dir} {data_dir}.bak"
        found.append(Check("data dir", "fail", f"{data_dir} is not a directory", fix))
        return found
    else:
        info = data_dir.stat()
        problems = []
        if info.st_uid != os.getuid():
            problems.append(f"owned by uid {info.st_uid}, not you ({os.getuid()})")
        if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            problems.append(f"writable by others (mode {stat.S_IMODE(info.st_mode):04o})")
        if not os.access(data_dir, os.W_OK | os.X_OK):
            problems.append("not writable by you")
        if problems:
            detail = f"{data_dir}: " + "; ".join(problems)
            found.append(Check("data dir", "fail", detail, f"chmod 700 {data_dir}"))
        else:
            found.append(Check("data dir", "ok", f"{data_dir} (mode {stat.S_IMODE(info.st_mode):04o})"))
    found.append(_token_check(settings))
    return found


def _token_check(settings: Settings) -> Check:
    if settings.token:
        return Check("token", "ok", "given by --token or $PHONEUSE_TOKEN (not stored)")
    path = token_path(settings.data_dir)
    try:
        token = read_token_file(settings.data_dir)
    except StateFileError as exc:
        return Check("token", "fail", str(exc), f"rm {path}; `serve` then writes a new one")
    if token is None:
        if path.exists():
            return Check("token", "fail", f"{path} exists but cannot be read", f"chmod 600 {path}")
        return Check("token", "ok", f"{path} does not exist yet; `serve` generates it (mode 0600)")
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        return Check("token", "fail", f"{path} is readable by others (mode {mode:04o})", f"chmod 600 {path}")
    return Check("token", "ok", f"{path} (mode {mode:04o})")


def approvals_check(settings: Settings) -> Check:
    """What approvals hold now: with approvals = "paired", a warning when no pairing works
    (the last one expired or was revoked): nothing is held any more."""
    listed = ", ".join(sorted(settings.approval_actions)) or "nothing"
    if settings.approvals == "off":
        return Check(
            "approvals", "warn", 'approvals = "off": nothing is held for the owner', 'approvals = "paired"'
        )
    owners = ", ".join(sorted(settings.owner_actions)) or "nothing"
    if not settings.gateway:  # the terminal holds the owner_actions itself (approval_store.py)
        return Check(
            "approvals",
            "ok",
            f"approvals = {settings.approvals!r} without the Iris gateway: {owners} wait for the owner, "
            "who answers with `phoneuse-runtime approvals`",
        )
    if settings.approvals == "always":
        return Check(
            "approvals", "ok", f"approvals = {settings.approvals!r}: {listed}, {owners} wait for the owner"
        )
    import sqlite3

    from phoneuse_runtime.gateway.agent.approvals import UNPAIRED_FIX, unpaired_note
    from phoneuse_runtime.gateway.db import connect, db_path
    from phoneuse_runtime.gateway.pairing import Pairing, PairingStore
    from phoneuse_runtime.kernel.events import now_ms

    path = db_path(settings.data_dir)
    pairings: list[Pairing] = []
    if path.exists():
        try:
            conn = connect(path)
            try:
                PairingStore.create_tables(conn)
                pairings = PairingStore(conn).pairings()
            finally:
                conn.close()
        except sqlite3.Error as exc:
            return Check("approvals", "fail", f"the pairing store {path} cannot be read: {exc}")
    note = unpaired_note(pairings, now_ms())
    if note is not None:  # a warning once something was paired: what was held is not any more
        note += f" but the owner_actions ({owners}), which the terminal's `approvals` answers"
        return Check("approvals", "warn" if pairings else "ok", note, UNPAIRED_FIX)
    return Check(
        "approvals", "ok", f'approvals = "paired", an app is paired: {listed}, {owners} wait for the owner'
    )


def embeddings_checks(settings: Settings) -> list[Check]:
    """A loopback embeddings endpoint is a warning: any app on the phone can take its port."""
    url = settings.memory_embeddings_url
    if not url:
        return []
    from phoneuse_runtime.memory.embeddings import LOOPBACK_WARNING, squattable

    if squattable(url):
        fix = 'run the embeddings server off the phone (an https URL), or set memory.embeddings.url = ""'
        return [Check("embeddings", "warn", LOOPBACK_WARNING % url, fix)]
    return [Check("embeddings", "ok", f"{url} (not on loopback)")]


def listen_checks(settings: Settings) -> list[Check]:
    """Whether `serve` could listen where it is told to: the gRPC port and the gateway's. A
    server already running for this data dir holds them itself, which is no problem."""
    from phoneuse_runtime.util.endpoint import NoServer, find_server
    from phoneuse_runtime.util.listen import bind_problem

    try:
        running = find_server(settings.data_dir)
    except NoServer:
        running = None
    if running is not None:
        detail = f"a server already serves this data dir ({running}); `serve` would refuse a second one"
        return [Check("listen", "ok", detail)]
    wanted = [("grpc", settings.grpc_listen, "serve --grpc-listen HOST:PORT")]
    if settings.gateway:
        fix_gateway = "serve --gateway-listen HOST:PORT, or --no-gateway"
        wanted.append(("gateway", settings.gateway_listen, fix_gateway))
    found: list[Check] = []
    for name, address, fix in wanted:
        problem = bind_problem(address)
        if problem:
            found.append(Check(f"listen ({name})", "fail", f"cannot listen on {address}: {problem}", fix))
        else:
            found.append(Check(f"listen ({name})", "ok", f"{address} is free"))
    return found


async def run_checks(settings: Settings) -> list[Check]:
    found = data_dir_checks(settings) + embeddings_checks(settings) + listen_checks(settings)
    found.append(approvals_check(settings))
    backend = backend_for(settings.device)
    if backend.checks is not None:
        found.extend(await backend.checks(settings.device_section))
    return found


def failed(checks: list[Check]) -> bool:
    return any(c.status == "fail" for c in checks)


def render_text(checks: list[Check], *, device: str) -> str:
    marks = {"ok": "ok  ", "warn": "warn", "fail": "FAIL"}
    lines = [f"phoneuse-runtime doctor (device {device})"]
    for check in checks:
        lines.append(f"  [{marks[check.status]}] {check.name}: {check.detail}")
        if check.status != "ok" and check.fix:
            lines.append(f"         fix: {check.fix}")
    lines.append("  all needed checks passed" if not failed(checks) else "  some needed checks failed")
    return "\n".join(lines)


def render_json(checks: list[Check], *, device: str) -> str:
    return json.dumps(
        {"device": device, "ok": not failed(checks), "checks": [asdict(c) for c in checks]},
        indent=2,
        ensure_ascii=False,
    )
