"""The console script as people and shell scripts use it: a real `serve` process, real client commands."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from phoneuse_runtime.kernel.limits import SETTLE_DEFAULT_MS
from tests.serving import EXE, ServeProcess, cli_env, run, served, start_serve

__all__ = ["served"]  # the fixture, used by name


def test_serve_generates_a_private_token_and_never_prints_it(served: ServeProcess) -> None:
    token_file = served.data_dir / "token"
    token = token_file.read_text().strip()
    assert len(token) >= 32
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    head: str = served.stderr_head
    assert token not in head
    assert str(token_file) in head
    print(f"startup to serving: {served.startup_s * 1000:.0f} ms")


def test_exec_query_and_failures(served: ServeProcess) -> None:
    ok = run(served, "exec", "SET_CLIPBOARD", "text=hello world; $(rm -rf /)")
    assert ok.returncode == 0, ok.stderr
    response = json.loads(ok.stdout)
    assert response["success"] is True and response["result"]["verified"] is True
    failed = run(served, "exec", "TAP", "text=Nothing like this")
    assert failed.returncode == 1, failed
    assert json.loads(failed.stdout)["error"].startswith("ELEMENT_NOT_FOUND: ")
    query = run(served, "query", "CONTACTS", "name=alice", "--limit", "5")
    assert query.returncode == 0, query.stderr
    assert json.loads(query.stdout)["results"][0]["name"] == "Alice Johnson"
    bad = run(served, "query", "CONTACTS", "colour=red")
    assert bad.returncode == 2 and "INVALID_ARGUMENT" in bad.stderr, bad
    wrong = run(served, "exec", "DUMP_UI", "--token", "not-the-token")
    assert wrong.returncode == 2 and "UNAUTHENTICATED" in wrong.stderr, wrong


def test_server_and_token_come_from_flags_over_environment(served: ServeProcess, tmp_path: Path) -> None:
    token = (served.data_dir / "token").read_text().strip()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PHONEUSE_")}
    env.update(
        PHONEUSE_SERVER=served.address, PHONEUSE_TOKEN=token, PHONEUSE_DATA_DIR=str(tmp_path / "empty")
    )
    ok = subprocess.run([*EXE, "exec", "DUMP_UI"], capture_output=True, text=True, env=env, timeout=60)
    assert ok.returncode == 0, ok.stderr
    env.pop("PHONEUSE_SERVER")
    flagged = subprocess.run(
        [*EXE, "exec", "DUMP_UI", "--server", served.address],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert flagged.returncode == 0, flagged.stderr


def test_subscribe_prints_json_lines_and_sigterm_ends_everything_cleanly(served: ServeProcess) -> None:
    sub = subprocess.Popen(
        [*EXE, "subscribe", "TASK_COMPLETED"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(served.data_dir),
    )
    assert sub.stderr is not None and sub.stdout is not None
    assert "subscribed" in sub.stderr.readline()
    run(served, "exec", "SET_CLIPBOARD", "text=x", "--request-id", "cli-1", check=True)
    event = json.loads(sub.stdout.readline())
    assert event["event_type"] == "TASK_COMPLETED"
    assert event["payload"]["request_id"] == "cli-1"
    # An in-flight call when SIGTERM arrives still gets its answer within the grace period.
    slow = subprocess.Popen(
        [*EXE, "exec", "WAIT_FOR", "text=never", "--timeout-ms", "1500", "--request-id", "cli-slow"],
        stdout=subprocess.PIPE,
        text=True,
        env=cli_env(served.data_dir),
    )
    assert served.proc.stderr is not None
    for line in served.proc.stderr:
        if "action WAIT_FOR (request cli-slow) started" in line:
            break
    served.proc.send_signal(signal.SIGTERM)
    out, _ = slow.communicate(timeout=30)
    assert slow.returncode == 1, slow
    assert json.loads(out)["error"].startswith("TIMEOUT: ")
    assert served.proc.wait(timeout=30) == 0
    assert sub.wait(timeout=30) == 0
    assert not (served.data_dir / "server.json").exists()


def test_sigterm_as_soon_as_it_serves_stops_it_cleanly(served: ServeProcess) -> None:
    served.proc.send_signal(signal.SIGTERM)
    assert served.proc.wait(timeout=30) == 0
    assert not (served.data_dir / "server.json").exists()


def test_actions_lists_everything(tmp_path: Path) -> None:
    text = subprocess.run([*EXE, "actions"], capture_output=True, text=True, check=True, timeout=60).stdout
    for name in ("TAP", "SEND_MESSAGE", "SIM_SET_SCREEN", "CONTACTS"):
        assert name in text
    data = json.loads(
        subprocess.run([*EXE, "actions", "--json"], capture_output=True, text=True, check=True).stdout
    )
    assert "to" in data["actions"]["SEND_MESSAGE"]["params"]["properties"]
    assert set(data["queries"]) == {"APP_STATE", "CONTACTS", "MEMORY"}
    # The UI actions settle (settle.py): they take settle_ms; what only looks does not.
    assert data["actions"]["TAP"]["params"]["properties"]["settle_ms"]["default"] == SETTLE_DEFAULT_MS
    assert "settle_ms" not in data["actions"]["DUMP_UI"]["params"]["properties"]
    tap = text.splitlines().index(next(line for line in text.splitlines() if line.split()[:1] == ["TAP"]))
    assert "settle_ms?" in text.splitlines()[tap + 1]


def test_serve_refuses_an_unknown_device(tmp_path: Path) -> None:
    done = subprocess.run(
        [*EXE, "serve", "--device", "toaster", "--grpc-listen", "127.0.0.1:0"],
        capture_output=True,
        text=True,
        env=cli_env(tmp_path),
        timeout=60,
    )
    assert done.returncode == 2, done
    assert "unknown device 'toaster'" in done.stderr


def test_serve_refuses_a_deny_list_naming_nothing(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('deny_actions = ["make_call", "SHELL"]\n')
    done = subprocess.run(
        [*EXE, "serve", "--grpc-listen", "127.0.0.1:0"],
        capture_output=True,
        text=True,
        env=cli_env(tmp_path),
        timeout=60,
    )
    assert done.returncode == 2, done
    assert "Traceback" not in done.stderr
    assert done.stderr.splitlines()[-1] == (
        "phoneuse-runtime: deny_actions names no action or query: 'make_call' (did you mean MAKE_CALL?); "
        "`phoneuse-runtime actions` lists them"
    )


def test_sim_state_survives_a_restart(tmp_path: Path) -> None:
    state = tmp_path / "phone.json"
    first = start_serve(tmp_path / "data", "--sim-state", str(state))
    try:
        added = run(first, "exec", "ADD_CONTACT", "name=Persisted Pat", "phone=+1 555 0199")
        assert added.returncode == 0, added.stderr
        first.proc.send_signal(signal.SIGTERM)
        assert first.proc.wait(timeout=30) == 0
    finally:
        if first.proc.poll() is None:
            first.proc.kill()
    assert "Persisted Pat" in state.read_text(encoding="utf-8")
    second = start_serve(tmp_path / "data", "--sim-state", str(state))
    try:
        found = run(second, "query", "CONTACTS", "name=persisted")
        assert found.returncode == 0, found.stderr
        assert [c["name"] for c in json.loads(found.stdout)["results"]] == ["Persisted Pat"]
    finally:
        second.proc.kill()
        second.proc.wait()


def test_serve_reports_a_busy_port_plainly(tmp_path: Path) -> None:
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = subprocess.run(
            [*EXE, "serve", "--grpc-listen", f"127.0.0.1:{port}"],
            capture_output=True,
            text=True,
            env=cli_env(tmp_path),
            timeout=60,
        )
    assert done.returncode == 2, done
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr
    assert "Traceback" not in done.stderr


def test_actions_marks_what_a_device_cannot_do() -> None:
    from phoneuse_runtime.kernel.capabilities import EVERYTHING
    from phoneuse_runtime.kernel.registry import build_registry
    from phoneuse_runtime.spec.catalogue import catalogue, render_catalogue_text

    registry = build_registry()
    lacking = EVERYTHING - {"ui", "sim"}
    text = render_catalogue_text(registry, device="termux", capabilities=lacking).splitlines()
    tap = next(i for i, line in enumerate(text) if line.split()[:2] == ["-", "TAP"])
    assert text[tap + 2].split() == ["UNSUPPORTED", "here:", "needs", "ui"]
    assert any(line.split()[:2] == ["SET_CLIPBOARD", "Put"] for line in text)  # supported: no mark
    data = catalogue(registry, device="termux", capabilities=lacking)
    assert (data["actions"]["TAP"]["supported"], data["actions"]["TAP"]["requires"]) == (False, ["ui"])
    assert data["actions"]["REMEMBER"]["supported"] is True
    assert data["queries"]["APP_STATE"]["requires"] == ["apps"]


def _seed_state_with(**extra: object) -> bytes:
    from phoneuse_runtime.device.sim.seed import seed_state

    data = json.loads(seed_state().to_json())
    data["contacts"][0].update(extra)
    return json.dumps(data).encode()


# Each of these broke start-up with a traceback (and exit 1). What one-line error says instead.
BROKEN = {
    "null": b"null",
    "a list": b"[]",
    "empty": b"",
    "truncated": b'{"next_id": 3, "items": [{"id": "mem-1", "kind": "fa',
    "not UTF-8": b'\xff\xfe{\x00"\x00}\x00',
}
CORRUPT_FILES = [
    *[("memory.json", name, content) for name, content in BROKEN.items()],
    (
        "memory.json",
        "an unknown key in an item",
        b'{"next_id": 2, "items": [{"id": "mem-1", "kind": "fact", "name": "x", "colour": "red"}]}',
    ),
    *[("sim.json", name, content) for name, content in BROKEN.items()],
    ("sim.json", "an unknown key in a contact", _seed_state_with(colour="red")),
    ("token", "not UTF-8", b"\xff\xfe"),
    ("token", "a control character", b"abc\x01def\n"),
]


@pytest.mark.parametrize(
    ("file", "content"),
    [pytest.param(file, content, id=f"{file}: {name}") for file, name, content in CORRUPT_FILES],
)
def test_a_corrupt_state_file_stops_serve_with_one_line_and_exit_2(
    tmp_path: Path, file: str, content: bytes
) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir(mode=0o700)  # private, as serve wants it: no permission warning beside the error
    path = tmp_path / file if file == "sim.json" else data_dir / file
    path.write_bytes(content)
    path.chmod(0o600)  # as serve writes it: no permission warning beside the error
    done = subprocess.run(
        [
            *EXE,
            "serve",
            "--grpc-listen",
            "127.0.0.1:0",
            "--log-level",
            "WARNING",
            "--sim-state",
            str(tmp_path / "sim.json"),
        ],
        capture_output=True,
        text=True,
        env=cli_env(data_dir),
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith(f"phoneuse-runtime: {path}: "), line
    assert "delete it" in line, line  # and what to do about it
    assert path.read_bytes() == content  # left as it was, for a person to look at
    if file == "token":  # the client commands read it too
        client = subprocess.run(
            # An address named by hand: the client gets as far as reading the token.
            [*EXE, "exec", "DUMP_UI", "--server", "127.0.0.1:1"],
            capture_output=True,
            text=True,
            env=cli_env(data_dir),
            timeout=60,
        )
        assert client.returncode != 0, client
        assert client.stderr.splitlines() == [line]


def test_a_reader_that_stops_early_costs_no_traceback() -> None:
    """`phoneuse-runtime spec | head`: the pipe closes under the writer, which exits quietly."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first byte
    try:
        done = subprocess.run(
            [sys.executable, "-m", "phoneuse_runtime", "spec"],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            cwd=Path(__file__).resolve().parent.parent,
        )
    finally:
        os.close(write_end)
    assert done.returncode == 0, done
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr
