"""The MCP Inspector's CLI (npm @modelcontextprotocol/inspector, installed by .ci/run) spawns
`phoneuse-runtime mcp`, lists its tools and calls one: a client that is not the Python SDK's."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .helpers import subprocess_env

DEFAULT = (
    Path.home()
    / ".cache/phoneuse-ci/inspector-0.15.0/node_modules/@modelcontextprotocol/inspector/cli/build/cli.js"
)


def inspector() -> list[str]:
    """The command that runs the Inspector's CLI; skips where it is not installed, except in CI
    (.ci/run names it in PHONEUSE_MCP_INSPECTOR), where its absence fails the test."""
    named = os.environ.get("PHONEUSE_MCP_INSPECTOR")
    script = Path(named) if named else DEFAULT
    node = shutil.which("node")
    if node is None or not script.is_file():
        if named:
            raise AssertionError(f"PHONEUSE_MCP_INSPECTOR names {script}, but node or it is missing")
        pytest.skip("the MCP Inspector is not installed (.ci/run installs it with npm)")
    return [node, str(script), "--cli"]


def run_inspector(data_dir: Path, *method: str) -> dict[str, object]:
    env = subprocess_env(data_dir)
    server_env = [
        f"{key}={env[key]}"
        for key in ("PYTHONPATH", "PHONEUSE_DATA_DIR", "PHONEUSE_GATEWAY_LISTEN")
        if key in env
    ]
    server_env.append("PHONEUSE_GRPC_LISTEN=127.0.0.1:0")
    flags = [part for pair in server_env for part in ("-e", pair)]
    done = subprocess.run(
        [*inspector(), *flags, sys.executable, "-m", "phoneuse_runtime", "mcp", *method],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    answer: dict[str, object] = json.loads(done.stdout)
    return answer


def test_the_inspector_lists_the_tools_and_calls_one(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    listed = run_inspector(data_dir, "--method", "tools/list")
    tools = listed["tools"]
    assert isinstance(tools, list)
    names = {tool["name"] for tool in tools}
    assert {"tap", "send_message", "dump_ui", "query_contacts"} <= names
    alarm = next(tool for tool in tools if tool["name"] == "set_alarm")
    assert alarm["inputSchema"]["properties"]["hour"]["type"] == "integer"
    called = run_inspector(
        data_dir, "--method", "tools/call", "--tool-name", "set_alarm", "--tool-arg", "hour=7", "minute=5"
    )
    assert called["isError"] is False
    structured = called["structuredContent"]
    assert isinstance(structured, dict)
    assert (structured["hour"], structured["minute"], structured["verified"]) == (7, 5, True)
