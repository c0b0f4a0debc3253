"""Every command of the README and of docs/*.md, as a reader types it (issue 28 item 9).

Each command of a ```sh block, and each `$ ` line of a ```console block, is one of:

- a **placeholder** command: it holds a `<WORD>` the reader fills in, and its page says once that
  words in <angle brackets> are placeholders;
- **run here**: COMMANDS names the test of this module that runs it, verbatim, through `bash -c`
  with the console script on PATH, against a `serve` or a fleet of its own (port 0, a temporary
  data dir, given through the environment as a user would) and checks what the docs show it
  print; a long-running server is started, asked, and stopped;
- **run elsewhere**: COMMANDS names the test (or the CI script) that runs it, and the meta-test
  below checks that this test exists and holds the command's words;
- an **install**: pip, venv and build steps need the network (never in the tests): each is checked
  for what it installs (this checkout or a wheel of this version, with extras that exist), and CI
  runs the installs (`.ci/run`, `scripts/check_wheel.sh`).

A command added to the docs fails `test_every_documented_command_is_accounted_for` until COMMANDS
says how it is run.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from phoneuse_runtime import __version__
from phoneuse_runtime.config.layers import read_table
from phoneuse_runtime.util.extras import WHEEL
from tests.fakes.adb_server import FakeDeviceFactory, adb_server, fake_device_factory, find_adb
from tests.fakes.phone import FakePhone
from tests.fleet.running import RunningFleet, needs, poll

__all__ = ["adb_server", "fake_device_factory"]  # the fixtures, used by name

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PLACEHOLDER = re.compile(r"<[A-Z][A-Z0-9_]*(?::[A-Z][A-Z0-9_]*)?>")
PLACEHOLDER_NOTE = "Words in `<angle brackets>` are placeholders"
LANGUAGES = {"sh", "console", "text", "toml", "json", "python"}
CONSOLE_SCRIPT = Path(sys.executable).parent / "phoneuse-runtime"  # this install's, where it has one
FENCE = re.compile(r"^([ \t]*)```([\w-]*)[ \t]*\n(.*?)^\1```[ \t]*$", re.S | re.M)


# --- what the docs hold -----------------------------------------------------------------------


@dataclass(frozen=True)
class Block:
    page: str
    language: str
    body: str


def blocks(page: Path) -> list[Block]:
    found = []
    for match in FENCE.finditer(page.read_text(encoding="utf-8")):
        indent = match.group(1)
        lines = [line.removeprefix(indent) for line in match.group(3).split("\n")]
        found.append(Block(page.name, match.group(2), "\n".join(lines)))
    return found


def commands_of(block: Block) -> list[str]:
    """The commands a reader would type: one per line (a `\\` line goes on), comments cut."""
    if block.language == "sh":
        lines = [line for line in block.body.split("\n") if line.strip() and not line.strip().startswith("#")]
    elif block.language == "console":
        lines = [line[2:] for line in block.body.split("\n") if line.startswith("$ ")]
    else:
        return []
    commands, pending = [], ""
    for line in lines:
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1].strip() + " "
            continue
        command = re.sub(r"\s+#\s.*$", "", pending + line.strip())
        commands.append(re.sub(r"\s+", " ", command).strip())
        pending = ""
    return commands


def documented() -> dict[str, list[str]]:
    """Every command of the docs, with the pages that show it."""
    found: dict[str, list[str]] = {}
    for page in PAGES:
        for block in blocks(page):
            for command in commands_of(block):
                found.setdefault(command, []).append(page.name)
    return found


DOCUMENTED = documented()


# --- how each is run ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Elsewhere:
    """Run by another test (`path::test`) or a CI script (`path`), which holds `words`: the
    command itself for a script, the command's arguments as the test writes them for a test."""

    where: str
    words: str


INSTALLABLE = r"(\.|dist/(?P<wheel>[\w.-]+\.whl)|build)(\[(?P<extras>[\w,]+)\])?"  # checkout, wheel, tool
INSTALL = "install"  # checked by test_installs_install_this_checkout_or_its_wheel

COMMANDS: dict[str, str | Elsewhere] = {
    # The quick start (tests/test_readme.py pins its three blocks).
    "python3 -m venv .venv && . .venv/bin/activate": INSTALL,
    "python3 -m pip install . && phoneuse-runtime serve": INSTALL,
    "python3 -m pip install -q -e '.[dev]' && python3 -m pytest -q": Elsewhere(
        ".ci/run", "python3 -m pip install -q -e '.[dev]' && python3 -m pytest -q"
    ),
    # A session, on the simulated phone.
    "phoneuse-runtime serve": "test_a_session_on_the_simulated_phone",
    "phoneuse-runtime subscribe &": "test_a_session_on_the_simulated_phone",
    "phoneuse-runtime exec OPEN_APP name=Messages": "test_a_session_on_the_simulated_phone",
    'phoneuse-runtime exec SEND_MESSAGE to=alice "body=On my way 🚲"': (
        "test_a_session_on_the_simulated_phone"
    ),
    'phoneuse-runtime exec SIM_RECEIVE_SMS from=+14155550101 body="See you!"': (
        "test_a_session_on_the_simulated_phone"
    ),
    "phoneuse-runtime query CONTACTS name=bob --limit 5": "test_a_session_on_the_simulated_phone",
    'phoneuse-runtime exec TAP text=Nowhere; echo "exit $?"': "test_a_session_on_the_simulated_phone",
    "phoneuse-runtime exec LEASE_ACQUIRE ttl_s=300": "test_a_session_on_the_simulated_phone",
    "phoneuse-runtime doctor": "test_doctor_actions_and_the_spec",
    "phoneuse-runtime actions": "test_doctor_actions_and_the_spec",
    "phoneuse-runtime spec --output docs/protocol_spec.md": "test_doctor_actions_and_the_spec",
    # MCP.
    "python3 -m pip install '.[mcp]'": INSTALL,
    "phoneuse-runtime mcp config claude-desktop": "test_mcp_config_prints_each_clients_snippet",
    "phoneuse-runtime mcp config claude-code": "test_mcp_config_prints_each_clients_snippet",
    "phoneuse-runtime mcp config cursor --device adb": "test_mcp_config_prints_each_clients_snippet",
    "phoneuse-runtime mcp config claude-code --http --show-token": Elsewhere(
        "tests/mcp/test_config.py::test_the_http_form_names_where_the_token_is_and_shows_it_only_when_asked",
        '"claude-code", "--show-token"',
    ),
    # The fleet.
    "phoneuse-runtime fleet --sim 3": "test_a_fleet_of_simulated_phones",
    "phoneuse-runtime fleet token new alice": "test_a_fleet_of_simulated_phones",
    "phoneuse-runtime exec --phone sim-2 DUMP_UI": "test_a_fleet_of_simulated_phones",
    "PHONEUSE_PHONE=sim-1 phoneuse-runtime query CONTACTS name=Bob": "test_a_fleet_of_simulated_phones",
    "phoneuse-runtime fleet": Elsewhere(
        "tests/fleet/test_fleet_parts.py::test_the_adb_servers_devices_join_and_leave_as_adb_lists_them",
        "adb=True",
    ),
    # A real phone over adb: the fake phone behind the real adb server.
    "adb devices": "test_a_phone_over_adb_step_by_step",
    "python -m uiautomator2 init": "test_a_phone_over_adb_step_by_step",
    "phoneuse-runtime doctor --device adb": "test_a_phone_over_adb_step_by_step",
    "phoneuse-runtime serve --device adb": "test_a_phone_over_adb_step_by_step",
    # Termux: the fake Termux:API commands and a fake $PREFIX.
    "sh termux/install.sh": Elsewhere(
        "tests/device/termux/test_scripts.py::test_install_takes_grpcio_from_pkg_then_pip_installs_and_sets_up_the_service",
        'termux_env.sh(TERMUX / "install.sh")',
    ),
    "phoneuse-runtime doctor --device termux": Elsewhere(
        "tests/device/termux/test_e2e_doctor.py::test_a_ready_phone_passes_with_the_unknowns_said",
        '"doctor", "--device", "termux"',
    ),
    # The Iris app's pairing, the approvals, the memory.
    'phoneuse-runtime pair new --name "my phone"': "test_pairing_from_the_terminal",
    "phoneuse-runtime pair new --name tablet --json --permanent": "test_pairing_from_the_terminal",
    "phoneuse-runtime pair new --name laptop --url ws://100.101.102.103:8765/ws": (
        "test_pairing_from_the_terminal"
    ),
    "phoneuse-runtime pair list": "test_pairing_from_the_terminal",
    "phoneuse-runtime approvals list": Elsewhere(
        "tests/gateway/agent/test_terminal_approvals.py::test_the_owner_approves_from_the_terminal",
        '"approvals", "list"',
    ),
    "phoneuse-runtime memory stats": "test_the_memory_moves",
    "phoneuse-runtime memory export memory.jsonl": "test_the_memory_moves",
    "phoneuse-runtime memory import memory.jsonl": "test_the_memory_moves",
    # A client of your own.
    "python3 examples/client.py --sim": Elsewhere(
        "tests/test_example_client.py::test_the_example_client_runs_against_a_real_server", '"--sim"'
    ),
    "python3 examples/client.py --wait-s 5": Elsewhere(
        "tests/test_example_client.py::test_without_sim_the_example_says_what_it_waits_for_and_when_it_gave_up",
        '"--wait-s"',
    ),
    # Installing.
    "python3 -m pip install .": INSTALL,
    "python3 -m pip install '.[nats]'": INSTALL,
    "python3 -m pip install -q -e '.[dev]'": Elsewhere(".ci/run", "python3 -m pip install -q -e '.[dev]'"),
    "python3 -m pip install build": INSTALL,
    "python3 -m build": Elsewhere("scripts/check_wheel.sh", "python3 -m build"),
    "python3 -m venv ~/phoneuse": INSTALL,
    "~/phoneuse/bin/pip install 'dist/phoneuse_runtime-0.1.0-py3-none-any.whl[mcp,nats]'": INSTALL,
    "~/phoneuse/bin/phoneuse-runtime --version": Elsewhere("scripts/check_wheel.sh", '"$exe" --version'),
    # Development: what CI runs.
    "python3 -m pytest -q": Elsewhere(".ci/run", "python3 -m pytest -q"),
    "python3 -m ruff check .": Elsewhere(".ci/run", "python3 -m ruff check ."),
    "python3 -m ruff format --check .": Elsewhere(".ci/run", "python3 -m ruff format --check ."),
    "python3 -m mypy": Elsewhere(".ci/run", "python3 -m mypy"),
    "bash scripts/check_wheel.sh": Elsewhere(".ci/run", "bash scripts/check_wheel.sh"),
}


# --- the meta-tests: every command is accounted for ---------------------------------------------


def test_every_block_says_its_language_so_no_command_hides_in_one() -> None:
    for page in PAGES:
        for block in blocks(page):
            language = block.language or "no"
            assert block.language in LANGUAGES, f"{page.name}: a ``` block of {language} language"


def test_every_documented_command_is_accounted_for() -> None:
    unaccounted = [
        f"{', '.join(pages)}: {command}"
        for command, pages in DOCUMENTED.items()
        if not PLACEHOLDER.search(command) and command not in COMMANDS
    ]
    assert unaccounted == [], "say in COMMANDS how each is run, or write it with a <PLACEHOLDER>"
    stale = [command for command in COMMANDS if command not in DOCUMENTED]
    assert stale == [], "COMMANDS lists commands the docs no longer show"


def test_placeholders_are_in_the_one_form_and_their_pages_say_so() -> None:
    for command, pages in DOCUMENTED.items():
        assert not re.search(r"[<>]", PLACEHOLDER.sub("", command)), f"{pages}: {command}"
        if PLACEHOLDER.search(command):
            for name in pages:
                page = next(p for p in PAGES if p.name == name)
                text = re.sub(r"\s+", " ", page.read_text(encoding="utf-8"))
                assert text.count(PLACEHOLDER_NOTE) == 1, f"{name} shows placeholders: say it once"


def _test_source(module: Path, name: str) -> tuple[str, set[str]]:
    """A module's source and the string constants of its function `name` (f-strings' parts
    included), which must exist."""
    source = module.read_text(encoding="utf-8")
    tree = ast.parse(source)
    functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    found = [f for f in functions if f.name == name]
    assert found, f"{module.relative_to(ROOT)} has no test {name}"
    constants = [n for n in ast.walk(found[0]) if isinstance(n, ast.Constant)]
    return source, {n.value for n in constants if isinstance(n.value, str)}


def test_each_command_run_here_is_in_its_test() -> None:
    for command, how in COMMANDS.items():
        if isinstance(how, str) and how != INSTALL:
            _, strings = _test_source(Path(__file__), how)
            assert command in strings, f"{how} does not run {command!r}"


def test_each_command_run_elsewhere_is_there() -> None:
    for command, how in COMMANDS.items():
        if not isinstance(how, Elsewhere):
            continue
        path, _, name = how.where.partition("::")
        module = ROOT / path
        assert module.is_file(), how.where
        if name:
            source, _ = _test_source(module, name)
            assert how.words in source, f"{how.where} does not hold {how.words!r} ({command})"
        else:  # a script: the command itself, as a whole command
            text = module.read_text(encoding="utf-8")
            pattern = r"(?<![\w/.-])" + re.escape(how.words) + r"(?=\s*($|[;|&)>]))"
            assert re.search(pattern, text, flags=re.M), f"{path} does not run {how.words!r}"
            if how.words != command:
                assert how.words.split()[-1] == command.split()[-1], (command, how.words)


def test_installs_install_this_checkout_or_its_wheel() -> None:
    """What each install step would install: this checkout or the wheel of this version (the
    package is not on PyPI), with extras pyproject.toml has; a venv it then activates."""
    extras = set(read_table(ROOT / "pyproject.toml")["project"]["optional-dependencies"])
    assert f"phoneuse_runtime-{__version__}-py3-none-any.whl" == WHEEL
    for command, how in COMMANDS.items():
        if how != INSTALL:
            continue
        venvs: set[str] = set()
        for part in command.split(" && "):
            words = shlex.split(part)
            if words[:3] == ["python3", "-m", "venv"]:
                venvs.add(words[3])
            elif words[0] == ".":
                assert words[1].removesuffix("/bin/activate") in venvs, command
            elif words[:4] == ["python3", "-m", "pip", "install"] or words[0].endswith("/bin/pip"):
                rest = words[4:] if words[0] == "python3" else words[2:]
                assert words[0] == "python3" or words[1] == "install", command
                (target,) = [w for w in rest if not w.startswith("-")]
                found = re.fullmatch(INSTALLABLE, target)
                assert found, f"{command}: installs {target}, which is neither the checkout nor its wheel"
                assert found["wheel"] in (None, WHEEL), f"{command}: the wheel is {WHEEL}"
                assert set((found["extras"] or "").split(",")) - {""} <= extras, command
            else:
                assert part in COMMANDS and COMMANDS[part] != INSTALL, f"{command}: {part} is run by no test"


# --- running them ------------------------------------------------------------------------------


@pytest.fixture
def shell(tmp_path: Path) -> Iterator[Shell]:
    s = Shell(tmp_path)
    yield s
    s.stop_all()


class Shell:
    """A reader's shell: the console script (`phoneuse-runtime`), `python`, `python3` and `adb` on
    PATH, a data dir and a fleet dir of its own, the ports 0 (a user's PHONEUSE_* variables)."""

    def __init__(self, tmp_path: Path) -> None:
        self.home = tmp_path
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        scripts = {
            "phoneuse-runtime": f'exec "{CONSOLE_SCRIPT}" "$@"'
            if CONSOLE_SCRIPT.is_file()
            else f'exec "{sys.executable}" -m phoneuse_runtime "$@"',
            "python": f'exec "{sys.executable}" "$@"',
            "python3": f'exec "{sys.executable}" "$@"',
        }
        adb = find_adb()
        if adb:
            scripts["adb"] = f'exec "{adb}" "$@"'
        for name, line in scripts.items():
            (bin_dir / name).write_text(f"#!/bin/sh\n{line}\n")
            (bin_dir / name).chmod(0o755)
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("PHONEUSE_")}
        self.env.update(
            PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
            PHONEUSE_DATA_DIR=str(tmp_path / "data"),
            PHONEUSE_GRPC_LISTEN="127.0.0.1:0",
            PHONEUSE_GATEWAY_LISTEN="127.0.0.1:0",
            PHONEUSE_FLEET_DIR=str(tmp_path / "fleet"),
            PHONEUSE_FLEET_LISTEN="127.0.0.1:0",
            GRPC_VERBOSITY="ERROR",
        )
        self.started: list[subprocess.Popen[str]] = []

    def run(self, command: str, *, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        """The documented command, verbatim, as bash runs it."""
        assert command in DOCUMENTED, f"not a command of the docs: {command!r}"
        return subprocess.run(
            ["bash", "-c", command],
            capture_output=True,
            text=True,
            env=self.env,
            cwd=cwd or self.home,
            timeout=90,
            check=False,
        )

    def start(self, command: str, name: str) -> Started:
        """The documented long-running command (a server, a stream), its output in files."""
        assert command in DOCUMENTED, f"not a command of the docs: {command!r}"
        out, err = self.home / f"{name}.out", self.home / f"{name}.err"
        with open(out, "w") as stdout, open(err, "w") as stderr:
            proc = subprocess.Popen(
                ["bash", "-c", "exec " + command.removesuffix("&").strip()],
                stdout=stdout,
                stderr=stderr,
                text=True,
                env=self.env,
                cwd=self.home,
            )
        self.started.append(proc)
        return Started(proc, out, err)

    def stop_all(self) -> None:
        for proc in reversed(self.started):
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


@dataclass
class Started:
    proc: subprocess.Popen[str]
    out: Path
    err: Path

    def stdout(self) -> str:
        return self.out.read_text(errors="replace")

    def stderr(self) -> str:
        return self.err.read_text(errors="replace")

    def wait_for(self, text: str, *, in_stderr: bool = True) -> None:
        def said() -> bool:
            assert self.proc.poll() is None, f"exited {self.proc.returncode}:\n{self.stderr()[-3000:]}"
            return text in (self.stderr() if in_stderr else self.stdout())

        poll(f"{text!r} said", said, timeout_s=90, detail=lambda: self.stderr()[-3000:])


def _json(done: subprocess.CompletedProcess[str]) -> Any:
    return json.loads(done.stdout)


def test_a_session_on_the_simulated_phone(shell: Shell) -> None:
    """The README's session, line by line, beside the quick start's `serve`."""
    serve = shell.start("phoneuse-runtime serve", "serve")
    serve.wait_for("serving AndroidRuntime on")
    events = shell.start("phoneuse-runtime subscribe &", "subscribe")
    events.wait_for("subscribed")

    opened = shell.run("phoneuse-runtime exec OPEN_APP name=Messages")
    assert opened.returncode == 0, opened.stderr
    response = _json(opened)
    assert response["success"] is True
    assert {k: response["result"][k] for k in ("via", "package", "label", "activity")} == {
        "via": "sim",
        "package": "com.google.android.apps.messaging",
        "label": "Messages",
        "activity": "com.google.android.apps.messaging.ui.ConversationListActivity",
    }

    sent = shell.run('phoneuse-runtime exec SEND_MESSAGE to=alice "body=On my way 🚲"')
    assert sent.returncode == 0, sent.stderr
    result = _json(sent)["result"]
    shown = ("via", "to", "contact", "app", "message_id", "verified", "verify_error")
    assert {k: result[k] for k in shown} == {
        "via": "sim",
        "to": "+1 415 555 0101",
        "contact": "Alice Johnson",
        "app": "sms",
        "message_id": "7",
        "verified": True,
        "verify_error": None,
    }

    received = shell.run('phoneuse-runtime exec SIM_RECEIVE_SMS from=+14155550101 body="See you!"')
    assert received.returncode == 0 and _json(received)["success"] is True, received.stderr

    found = shell.run("phoneuse-runtime query CONTACTS name=bob --limit 5")
    assert found.returncode == 0, found.stderr
    contacts = _json(found)
    assert [(r["id"], r["name"]) for r in contacts["results"]] == [("2", "Bob Smith"), ("3", "Bobby Tables")]
    assert contacts["total_count"] == 2 and contacts["has_more"] is False

    missed = shell.run('phoneuse-runtime exec TAP text=Nowhere; echo "exit $?"')
    body, _, last = missed.stdout.rstrip().rpartition("\n")
    assert last == "exit 1", missed.stdout
    failed = json.loads(body)
    assert failed["success"] is False
    assert failed["error"] == "ELEMENT_NOT_FOUND: no element matches text='Nowhere'"

    # The stream printed one JSON event per line, the SMS that arrived among them.
    def arrived() -> bool:
        lines = [json.loads(line) for line in events.stdout().splitlines()]
        sms = [e["payload"] for e in lines if e["event_type"] == "MESSAGE_RECEIVED"]
        return any(p["body"] == "See you!" for p in sms)

    poll("the SMS on the event stream", arrived, timeout_s=30, detail=events.stdout)

    leased = shell.run("phoneuse-runtime exec LEASE_ACQUIRE ttl_s=300")
    assert leased.returncode == 0 and _json(leased)["success"] is True, leased.stdout + leased.stderr

    serve.proc.send_signal(signal.SIGINT)  # Ctrl-C
    assert serve.proc.wait(timeout=60) == 0


def test_doctor_actions_and_the_spec(shell: Shell, tmp_path: Path) -> None:
    checked = shell.run("phoneuse-runtime doctor")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.rstrip().endswith("all needed checks passed"), checked.stdout

    listed = shell.run("phoneuse-runtime actions")
    assert listed.returncode == 0, listed.stderr
    names = {line.split()[0] for line in listed.stdout.splitlines() if line.startswith("  ") and line.split()}
    assert {"TAP", "SEND_MESSAGE", "LEASE_ACQUIRE", "CONTACTS", "MESSAGE_RECEIVED"} <= names, listed.stdout

    checkout = tmp_path / "checkout"
    (checkout / "docs").mkdir(parents=True)
    written = shell.run("phoneuse-runtime spec --output docs/protocol_spec.md", cwd=checkout)
    assert written.returncode == 0, written.stderr
    assert (checkout / "docs" / "protocol_spec.md").read_text(encoding="utf-8") == (
        ROOT / "docs" / "protocol_spec.md"
    ).read_text(encoding="utf-8"), "the documented command writes the spec the checkout holds"


def test_mcp_config_prints_each_clients_snippet(shell: Shell) -> None:
    """Each snippet names this install's executable by its absolute path (the console script; run
    as a module where the package is not installed, this Python)."""
    exe = CONSOLE_SCRIPT if CONSOLE_SCRIPT.is_file() else Path(sys.executable)
    desktop = shell.run("phoneuse-runtime mcp config claude-desktop")
    assert desktop.returncode == 0, desktop.stderr
    server = json.loads(desktop.stdout)["mcpServers"]["phone"]
    assert server["command"] == str(exe) and "mcp" in server["args"], server
    assert "claude_desktop_config.json" in desktop.stderr

    code = shell.run("phoneuse-runtime mcp config claude-code")
    assert code.returncode == 0, code.stderr
    words = shlex.split(code.stdout)
    assert words[:3] == ["claude", "mcp", "add"] and str(exe) in words, words

    cursor = shell.run("phoneuse-runtime mcp config cursor --device adb")
    assert cursor.returncode == 0, cursor.stderr
    args = json.loads(cursor.stdout)["mcpServers"]["phone"]["args"]
    assert args[-2:] == ["--device", "adb"], args
    assert ".cursor/mcp.json" in cursor.stderr


@needs(nats=True)
def test_a_fleet_of_simulated_phones(shell: Shell) -> None:
    """The front page's fleet, as printed: the door's port 0 and no adb server (a port that refuses)
    are the environment's; the token goes where the export line says."""
    with socket.socket() as refused:  # bound, never listening: adb's port on a machine without adb
        refused.bind(("127.0.0.1", 0))
        shell.env["PHONEUSE_FLEET_ADB_SERVER"] = f"127.0.0.1:{refused.getsockname()[1]}"
        started = shell.start("phoneuse-runtime fleet --sim 3", "fleet")
        running = RunningFleet(started.proc, shell.home / "fleet", started.err)
        why = running.diagnosis
        poll("3 simulated phones serving", lambda: running.all_serving(3), timeout_s=120, detail=why)
        poll("the door routes to every phone", running.door_routes_all, timeout_s=30, detail=why)
        assert [d["name"] for d in running.record()["devices"]] == ["sim-1", "sim-2", "sim-3"]

        token = shell.run("phoneuse-runtime fleet token new alice")
        assert token.returncode == 0, token.stderr
        assert "shown this once" in token.stderr
        shell.env.update(PHONEUSE_SERVER=running.door, PHONEUSE_TOKEN=token.stdout.strip())  # the export

        screen = shell.run("phoneuse-runtime exec --phone sim-2 DUMP_UI")
        assert screen.returncode == 0 and _json(screen)["success"] is True, screen.stdout + screen.stderr
        found = shell.run("PHONEUSE_PHONE=sim-1 phoneuse-runtime query CONTACTS name=Bob")
        assert found.returncode == 0, found.stderr
        assert "Bob Smith" in [r["name"] for r in _json(found)["results"]]

        started.proc.send_signal(signal.SIGINT)  # Ctrl-C
        assert started.proc.wait(timeout=60) == 0, started.stderr()[-3000:]


def test_pairing_from_the_terminal(shell: Shell) -> None:
    """Beside a running `serve`, whose gateway's address (port 0 here) the QR code holds."""
    serve = shell.start("phoneuse-runtime serve", "serve")
    serve.wait_for("serving the Iris gateway on")
    gateway = json.loads((shell.home / "data" / "server.json").read_text())["gateway"]
    first = shell.run('phoneuse-runtime pair new --name "my phone"')
    assert first.returncode == 0, first.stderr
    assert f"the app dials ws://{gateway}/ws" in first.stdout, first.stdout[:400]
    tablet = shell.run("phoneuse-runtime pair new --name tablet --json --permanent")
    assert tablet.returncode == 0, tablet.stderr
    assert set(json.loads(tablet.stdout)) == {"pairing_id", "token", "expires_at"}
    assert "\x1b[" in tablet.stderr  # the QR code, on stderr
    laptop = shell.run("phoneuse-runtime pair new --name laptop --url ws://100.101.102.103:8765/ws")
    assert laptop.returncode == 0, laptop.stderr
    assert "the app dials ws://100.101.102.103:8765/ws" in laptop.stdout + laptop.stderr
    listed = shell.run("phoneuse-runtime pair list")
    assert listed.returncode == 0, listed.stderr
    for name in ("my phone", "tablet", "laptop"):
        assert name in listed.stdout, listed.stdout


def test_the_memory_moves(shell: Shell) -> None:
    """On the data dir of a server that ran (the memory is made at its first start), beside it."""
    serve = shell.start("phoneuse-runtime serve", "serve")
    serve.wait_for("serving AndroidRuntime on")
    stats = shell.run("phoneuse-runtime memory stats")
    assert stats.returncode == 0, stats.stderr
    exported = shell.run("phoneuse-runtime memory export memory.jsonl")
    assert exported.returncode == 0, exported.stderr
    assert (shell.home / "memory.jsonl").is_file()
    imported = shell.run("phoneuse-runtime memory import memory.jsonl")
    assert imported.returncode == 0, imported.stderr


def test_a_phone_over_adb_step_by_step(shell: Shell, fake_device_factory: FakeDeviceFactory) -> None:
    """docs/adb.md's steps 4 to 6 against the fake phone behind the real adb server: adb lists it,
    uiautomator2's `init` installs its keyboard, `doctor` then passes, and `serve` serves it."""
    device = fake_device_factory(FakePhone())
    for name in ("ANDROID_ADB_SERVER_PORT", "ADBUTILS_ADB_PATH"):  # the isolated adb server's
        if name in os.environ:
            shell.env[name] = os.environ[name]
    shell.env["ANDROID_SERIAL"] = device.serial  # only ours, whatever else this adb server lists

    listed = shell.run("adb devices")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.startswith("List of devices attached"), listed.stdout
    assert f"{device.serial}\tdevice" in listed.stdout

    init = shell.run("python -m uiautomator2 init")
    assert init.returncode == 0, init.stderr

    checked = shell.run("phoneuse-runtime doctor --device adb")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert f"[ok  ] device: {device.serial} is ready" in checked.stdout, checked.stdout
    assert "[ok  ] uiautomator2 input method" in checked.stdout, checked.stdout
    assert checked.stdout.rstrip().endswith("all needed checks passed")

    serve = shell.start("phoneuse-runtime serve --device adb", "serve-adb")
    serve.wait_for("serving AndroidRuntime on")
    typed = subprocess.run(
        [sys.executable, "-m", "phoneuse_runtime", "exec", "DUMP_UI"],
        capture_output=True,
        text=True,
        env=shell.env,
        timeout=90,
        check=False,
    )
    assert typed.returncode == 0 and json.loads(typed.stdout)["success"] is True, typed.stdout + typed.stderr
