"""`phoneuse-runtime mcp config` (issue 28 item 4) through the CLI as a subprocess, its snippets used
as a client would use them with the official SDK's client; and a standalone `mcp` that cannot serve,
which answers the client's handshake with the reason instead of closing."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from ..fakes import adb_server as adb_fixtures
from ..fakes.adb_server import AdbServer
from ..serving import EXE, ServeProcess, cli_env, start_serve
from .helpers import connect, subprocess_env

adb_server = adb_fixtures.adb_server  # the session's isolated adb server: no phone on it
SCRIPT = Path(sys.executable).parent / "phoneuse-runtime"  # the console script of this install


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    s = start_serve(tmp_path_factory.mktemp("config") / "data", "--mcp-listen", "127.0.0.1:0")
    yield s
    s.proc.terminate()
    s.proc.wait(timeout=30)


def run(command: list[str], data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    argv = [*command, "mcp", "config", *args]
    return subprocess.run(argv, capture_output=True, text=True, env=subprocess_env(data_dir), timeout=60)


def outside(tmp_path: Path) -> dict[str, str]:
    """The environment of a client started outside the venv: a bare PATH, no PYTHONPATH. Only the
    ports are the test's own (never the defaults: tests run side by side)."""
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "PHONEUSE_GRPC_LISTEN": "127.0.0.1:0",
        "PHONEUSE_GATEWAY_LISTEN": "127.0.0.1:0",
    }


@pytest.mark.skipif(not SCRIPT.is_file(), reason=f"no console script {SCRIPT} (the package is not installed)")
async def test_the_desktop_snippet_runs_from_outside_the_venv(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    done = run([str(SCRIPT)], data_dir, "claude-desktop", "--device", "sim")
    assert done.returncode == 0, done.stderr
    server = json.loads(done.stdout)["mcpServers"]["phone"]
    assert server["command"] == str(SCRIPT)  # absolute: a client's PATH lacks the venv
    assert server["args"] == ["mcp", "--data-dir", str(data_dir), "--device", "sim"]
    assert "claude_desktop_config.json" in done.stderr
    params = StdioServerParameters(
        command=server["command"], args=server["args"], env=outside(tmp_path), cwd=str(tmp_path)
    )
    async with Client(params) as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
    assert {"tap", "dump_ui", "query_contacts"} <= tools


def test_run_as_a_module_the_snippet_names_this_python(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    done = run(EXE, data_dir, "claude-code")
    assert done.returncode == 0, done.stderr
    words = shlex.split(done.stdout)
    assert words[:5] == ["claude", "mcp", "add", "phone", "--"]
    assert words[5:] == [sys.executable, "-m", "phoneuse_runtime", "mcp", "--data-dir", str(data_dir)]
    cursor = json.loads(run(EXE, data_dir, "cursor", "--name", "pixel").stdout)
    assert cursor["mcpServers"]["pixel"]["command"] == sys.executable


async def test_the_http_form_names_where_the_token_is_and_shows_it_only_when_asked(
    served: ServeProcess,
) -> None:
    url = served.record["mcp"]
    assert isinstance(url, str)
    token_file = served.data_dir / "token"
    hidden = run(EXE, served.data_dir, "cursor")  # the running server serves HTTP: that form
    assert hidden.returncode == 0, hidden.stderr
    entry = json.loads(hidden.stdout)["mcpServers"]["phone"]
    assert entry["url"] == url
    assert entry["headers"]["Authorization"] == f"Bearer <the token in {token_file}>"
    assert served.token not in hidden.stdout + hidden.stderr
    assert str(token_file) in hidden.stderr and "--show-token" in hidden.stderr
    shown = run(EXE, served.data_dir, "cursor", "--show-token")
    header = json.loads(shown.stdout)["mcpServers"]["phone"]["headers"]["Authorization"]
    assert header == f"Bearer {served.token}"
    async with connect(url, token=header.removeprefix("Bearer ")) as client:  # the snippet works
        assert "dump_ui" in {tool.name for tool in (await client.list_tools()).tools}
    code = shlex.split(run(EXE, served.data_dir, "claude-code", "--show-token").stdout)
    assert code[:6] == ["claude", "mcp", "add", "--transport", "http", "phone"]
    assert code[6:] == [url, "--header", f"Authorization: Bearer {served.token}"]
    stdio = json.loads(run(EXE, served.data_dir, "cursor", "--stdio").stdout)["mcpServers"]["phone"]
    assert stdio["args"][:3] == ["-m", "phoneuse_runtime", "mcp"]
    desktop = run(EXE, served.data_dir, "claude-desktop")  # its config file takes stdio servers only
    assert "command" in json.loads(desktop.stdout)["mcpServers"]["phone"]
    assert "only stdio servers" in desktop.stderr


def test_asked_for_http_with_no_server_serving_it_says_how(tmp_path: Path) -> None:
    done = run(EXE, tmp_path / "data", "cursor", "--http")
    assert done.returncode == 2
    assert done.stdout == ""
    assert "serve --mcp-listen 127.0.0.1:8766" in done.stderr


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_standalone_mcp_that_cannot_serve_answers_the_handshake_with_why(
    adb_server: AdbServer, tmp_path: Path, mode: str
) -> None:
    """No server to attach to and no phone (the adb server lists none): the client's initialize
    (after the 2026-07-28 discover, in auto) is answered with the reason, not a closed pipe."""
    env = cli_env(tmp_path / "data")
    env["PHONEUSE_ADB_SERVER"] = f"127.0.0.1:{adb_server.port}"
    params = StdioServerParameters(command=EXE[0], args=[*EXE[1:], "mcp", "--device", "adb"], env=env)
    with pytest.raises(BaseException) as raised:  # the SDK's task group wraps the MCPError
        async with Client(params, mode=mode):
            pass
    messages = [e.error.message for e in leaves(raised.value) if isinstance(e, MCPError)]
    assert messages, raised.value
    assert messages[0].startswith("phoneuse-runtime cannot serve: adb lists no ready device"), messages


def leaves(error: BaseException) -> Iterator[BaseException]:
    inner = getattr(error, "exceptions", None)  # an exception group's
    if inner is None:
        yield error
        return
    for each in inner:
        yield from leaves(each)
