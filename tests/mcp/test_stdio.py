"""`phoneuse-runtime mcp` (stdio) spawned by the official SDK's client, attached to a running
`serve` and standalone; `serve --mcp-listen` as a real process; and both without the SDK."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from phoneuse_runtime.mcp import EVENTS_URI, INSTALL_HINT

from ..serving import EXE, ServeProcess, start_serve
from .helpers import connect, subprocess_env


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    s = start_serve(tmp_path_factory.mktemp("stdio") / "data", "--mcp-listen", "127.0.0.1:0")
    yield s
    s.proc.terminate()
    s.proc.wait(timeout=30)


def stdio(data_dir: Path, *extra: str) -> StdioServerParameters:
    env = subprocess_env(data_dir)
    env["PHONEUSE_GRPC_LISTEN"] = "127.0.0.1:0"  # when it serves the phone itself
    return StdioServerParameters(
        command=sys.executable, args=["-m", "phoneuse_runtime", "mcp", *extra], env=env
    )


@asynccontextmanager
async def spawned(data_dir: Path, *extra: str, mode: str = "auto") -> AsyncIterator[Client]:
    async with Client(stdio(data_dir, *extra), mode=mode) as client:
        yield client


def listed_names(data_dir: Path) -> set[str]:
    """What `phoneuse-runtime actions --json` names, as MCP tools name them."""
    done = subprocess.run(
        [*EXE, "actions", "--json"], capture_output=True, text=True, env=subprocess_env(data_dir), timeout=60
    )
    assert done.returncode == 0, done.stderr
    listed = json.loads(done.stdout)
    return {a.lower() for a in listed["actions"]} | {f"query_{q.lower()}" for q in listed["queries"]}


def test_serve_records_and_logs_its_mcp_url(served: ServeProcess) -> None:
    url = served.record["mcp"]
    assert isinstance(url, str) and url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
    assert f"serving MCP (Streamable HTTP) on {url}" in served.stderr_head
    assert served.token not in served.stderr_head


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_stdio_attaches_to_the_running_server(served: ServeProcess, mode: str) -> None:
    async with spawned(served.data_dir, mode=mode) as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        assert tools == listed_names(served.data_dir)  # `actions` and MCP name the same things
        assert "chat_reply" in tools  # the gateway's actions: what the server serves
        saved = await client.call_tool("remember", {"name": f"Attached {mode}", "tags": ["mcp"]})
        assert not saved.is_error, saved.content
        # What the server pulled into its DATA_DIR/files is this face's resource too (issue 27).
        pulled = await client.call_tool(
            "pull_file", {"path": "/sdcard/Download/notes.txt", "name": f"{mode}.txt"}
        )
        assert not pulled.is_error, pulled.content
        notes = (await client.read_resource(f"phoneuse://files/{mode}.txt")).contents[0]
        assert notes.text.startswith("Buy milk")  # type: ignore[union-attr]
    # The server itself did it: its HTTP face finds what the stdio one stored.
    assert isinstance(served.record["mcp"], str)
    async with connect(served.record["mcp"], token=served.token) as http:
        found = await http.call_tool("query_memory", {"name": f"Attached {mode}"})
        assert found.structured_content is not None
        assert [r["name"] for r in found.structured_content["results"]] == [f"Attached {mode}"]


async def test_an_attached_stdio_client_gets_the_server_s_events(served: ServeProcess) -> None:
    """Attached, the events come from the server's own stream (gRPC Subscribe): an SMS the phone
    receives, and the task events of the calls (which name the `mcp` caller: test_relayed_frontend.py)."""
    async with spawned(served.data_dir) as client, client.listen(resource_subscriptions=[EVENTS_URI]) as sub:
        updates: asyncio.Queue[None] = asyncio.Queue()

        async def pump() -> None:
            async for _ in sub:
                updates.put_nowait(None)

        task = asyncio.get_running_loop().create_task(pump())
        cursor = json.loads((await client.read_resource(EVENTS_URI)).contents[0].text)["cursor"]  # type: ignore[union-attr]
        sms = await client.call_tool("sim_receive_sms", {"from": "+14155550199", "body": "attached ✓"})
        assert not sms.is_error, sms.content
        seen: list[dict[str, object]] = []
        while "MESSAGE_RECEIVED" not in {e["event_type"] for e in seen}:
            await asyncio.wait_for(updates.get(), 10)
            body = json.loads(
                (await client.read_resource(f"{EVENTS_URI}?after={cursor}")).contents[0].text  # type: ignore[union-attr]
            )
            seen += body["events"]
            cursor = body["cursor"]
        task.cancel()
    message = next(e for e in seen if e["event_type"] == "MESSAGE_RECEIVED")
    assert message["payload"]["body"] == "attached ✓"  # type: ignore[index]


@pytest.mark.parametrize("attached", [False, True], ids=["standalone", "attached"])
async def test_a_listen_before_any_read_gets_the_updates(
    served: ServeProcess, tmp_path: Path, attached: bool
) -> None:
    """2026-07-28 (issue 28 item 5): subscriptions/listen to the events, with no read of the
    resource before it, starts the events as a read does: the SMS's update arrives."""
    data_dir = served.data_dir if attached else tmp_path / "data"
    extra = () if attached else ("--device", "sim")
    async with spawned(data_dir, *extra) as client, client.listen(resource_subscriptions=[EVENTS_URI]) as sub:
        assert client.protocol_version == "2026-07-28"
        updates: asyncio.Queue[str] = asyncio.Queue()

        async def pump() -> None:
            async for event in sub:
                updates.put_nowait(getattr(event, "uri", ""))

        task = asyncio.get_running_loop().create_task(pump())
        sms = await client.call_tool("sim_receive_sms", {"from": "+14155550123", "body": "listen first"})
        assert not sms.is_error, sms.content
        assert await asyncio.wait_for(updates.get(), 10) == EVENTS_URI
        body = json.loads((await client.read_resource(f"{EVENTS_URI}?after=0")).contents[0].text)  # type: ignore[union-attr]
        task.cancel()
    bodies = [e["payload"].get("body") for e in body["events"] if e["event_type"] == "MESSAGE_RECEIVED"]
    assert "listen first" in bodies, body


async def test_stdio_runs_the_runtime_itself_when_no_server_runs(tmp_path: Path) -> None:
    """One runtime per phone: the first `mcp` serves the data dir, the next one attaches to it."""
    data_dir = tmp_path / "data"
    async with spawned(data_dir, "--device", "sim", "--log-level", "INFO") as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        assert {"tap", "dump_ui", "query_contacts"} <= tools
        assert tools == listed_names(data_dir)
        screen = await client.call_tool("dump_ui", {})
        assert not screen.is_error
        assert screen.structured_content is not None and screen.structured_content["via"] == "sim"
        refused = await client.call_tool("tap", {"text": "Nothing like this"})
        assert refused.is_error
        assert (await client.call_tool("set_clipboard", {"text": "from the first"})).structured_content
        record = json.loads((data_dir / "server.json").read_text())
        assert record["device"] == "sim"
        async with spawned(data_dir) as second:  # attached to the first one's runtime
            assert {tool.name for tool in (await second.list_tools()).tools} == tools
            alarm = await second.call_tool("set_alarm", {"hour": 5, "minute": 55, "request_id": "shared-1"})
            assert not alarm.is_error
        # The same request_id from the first one's side is a retry of the same call (one principal).
        again = await client.call_tool("set_alarm", {"hour": 5, "minute": 55, "request_id": "shared-1"})
        assert again.structured_content == alarm.structured_content
    assert not (data_dir / "server.json").exists()  # it is gone with its process


def test_standalone_mcp_serves_as_serve_does(tmp_path: Path) -> None:
    """The standalone `mcp` runs serve's own lifecycle: the shared-directory warning, the record
    with the gateway's address and the MCP URL, and a clean stop on SIGTERM."""
    data_dir = tmp_path / "data"
    data_dir.mkdir(mode=0o755)
    data_dir.chmod(0o755)  # open to other users: the owner is told
    env = subprocess_env(data_dir)
    env["PHONEUSE_GRPC_LISTEN"] = "127.0.0.1:0"
    env["PHONEUSE_MCP_LISTEN"] = "127.0.0.1:0"
    proc = subprocess.Popen(
        [*EXE, "mcp", "--standalone", "--log-level", "INFO"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stderr is not None
    lines = []
    for line in proc.stderr:
        lines.append(line)
        if "in this process" in line:  # logged once the record is written
            break
    head = "".join(lines)
    assert "in this process" in head, head
    record = json.loads((data_dir / "server.json").read_text())
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 0, proc.stderr.read()
    assert f"{data_dir} is open to other users (mode 755)" in head
    assert isinstance(record["gateway"], str) and record["gateway"].startswith("127.0.0.1:")
    assert isinstance(record["mcp"], str) and record["mcp"].startswith("http://127.0.0.1:")
    assert record["mcp"].endswith("/mcp")
    assert f"serving MCP (Streamable HTTP) on {record['mcp']}" in head
    assert not (data_dir / "server.json").exists()  # SIGTERM stopped it cleanly


def test_attaching_with_an_unusable_token_file_says_so_without_a_traceback(tmp_path: Path) -> None:
    served = start_serve(tmp_path / "data")
    try:
        (served.data_dir / "token").write_text("not\x01a token\n")
        done = subprocess.run(
            [*EXE, "mcp"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            env=subprocess_env(served.data_dir),
            timeout=60,
        )
    finally:
        served.proc.terminate()
        served.proc.wait(timeout=30)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "not a token" in done.stderr


def _without_sdk(*argv: str, data_dir: Path) -> subprocess.CompletedProcess[str]:
    code = (
        "import sys\n"
        "sys.modules['mcp'] = None  # as if the extra were not installed\n"
        "from phoneuse_runtime.cli.main import main\n"
        f"sys.exit(main({list(argv)!r}))\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code],
        stdin=subprocess.DEVNULL,  # `mcp` answers a client on stdin with the hint too
        capture_output=True,
        text=True,
        env=subprocess_env(data_dir),
        timeout=60,
    )


def test_without_the_sdk_mcp_and_mcp_listen_say_how_to_get_it(tmp_path: Path) -> None:
    for argv in (["mcp"], ["serve", "--grpc-listen", "127.0.0.1:0", "--mcp-listen", "127.0.0.1:0"]):
        done = _without_sdk(*argv, data_dir=tmp_path / "data")
        assert done.returncode == 2, done
        assert done.stderr == f"phoneuse-runtime: {INSTALL_HINT}\n"
        assert "pip install '.[mcp]'" in done.stderr  # what works from a checkout (issue 28 item 1)
        assert "-py3-none-any.whl[mcp]'" in done.stderr  # and from a wheel: not PyPI's name
    # and everything else runs without it
    listed = _without_sdk("actions", data_dir=tmp_path / "data")
    assert listed.returncode == 0, listed.stderr
