"""`phoneuse-runtime serve --nats-url` as a process: killed (SIGKILL) while events flow, it has
lost no event it logged as acked by JetStream; and the runtime without nats-py."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import grpc

from phoneuse_runtime.nats.server_process import NatsServer
from phoneuse_runtime.rpc import protocol_pb2 as pb
from phoneuse_runtime.rpc import protocol_pb2_grpc as pb_grpc

from .test_sink import stream_messages

EXE = [sys.executable, "-m", "phoneuse_runtime"]
ACKED = re.compile(r"JetStream acked \d+ event\(s\) through (\S+)\.(\w+)\.(\d+) ")


def _env(data_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PHONEUSE_")}
    env.update(PHONEUSE_DATA_DIR=str(data_dir), PHONEUSE_GATEWAY_LISTEN="127.0.0.1:0", **extra)
    return env


def _serve(
    data_dir: Path, *extra: str, env: dict[str, str] | None = None
) -> tuple[subprocess.Popen[str], list[str]]:
    """A `serve` process and the lines of its log, read as they come (a thread)."""
    proc = subprocess.Popen(
        [*EXE, "serve", "--grpc-listen", "127.0.0.1:0", "--no-gateway", "--log-level", "DEBUG", *extra],
        stderr=subprocess.PIPE,
        text=True,
        env=env or _env(data_dir),
    )
    lines: list[str] = []
    ready = threading.Event()

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            if "serving AndroidRuntime on" in line:
                ready.set()
        ready.set()

    threading.Thread(target=read, daemon=True).start()
    assert ready.wait(60) and proc.poll() is None, "".join(lines)
    return proc, lines


async def test_a_killed_runtime_lost_no_event_it_had_acked(tmp_path: Path) -> None:
    server = NatsServer(tmp_path / "nats")
    url = await server.start()
    data = tmp_path / "data"
    proc, lines = _serve(data, "--nats-url", url, "--device-name", "p1")
    try:
        address = json.loads((data / "server.json").read_text())["address"]
        token = (data / "token").read_text().strip()
        stop = threading.Event()
        sent: list[int] = []

        def flood() -> None:  # SIM_RECEIVE_SMS in a loop, until the kill ends it
            with grpc.insecure_channel(address) as channel:
                stub = pb_grpc.AndroidRuntimeStub(channel)
                i = 0
                while not stop.is_set() and i < 5000:
                    request = pb.ActionRequest(
                        action_type="SIM_RECEIVE_SMS",
                        params={"from": "+15550100", "body": f"m{i}"},
                        request_id=f"r{i}",
                        timeout_ms=5000,
                    )
                    try:
                        stub.Execute(request, metadata=(("authorization", f"Bearer {token}"),), timeout=10)
                    except grpc.RpcError:
                        return  # the server is gone
                    sent.append(i)
                    i += 1

        flooder = threading.Thread(target=flood, daemon=True)
        flooder.start()
        deadline = time.monotonic() + 60
        while sum(1 for line in lines if ACKED.search(line)) < 5:  # a few batches acked, more in flight
            assert time.monotonic() < deadline and proc.poll() is None, "".join(lines[-20:])
            await asyncio.sleep(0.02)  # polling the log, bounded
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        stop.set()
        flooder.join(timeout=30)
        acked = [ACKED.search(line) for line in lines]
        last = max((m for m in acked if m), key=lambda m: int(m.group(3)))
        run, through = last.group(2), int(last.group(3))
        messages = await stream_messages(url)
        ids = [body["id"] for *_, body in messages]
        assert len(ids) == len(set(ids))
        expected = [f"p1.{run}.{n}" for n in range(1, through + 1)]
        assert ids[:through] == expected  # every acked event, in order, none twice
        assert len(sent) > 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        await server.stop()


def _receive_sms(data: Path, n: int) -> None:
    """SIM_RECEIVE_SMS n times (request ids r0, r1, ...) on the `serve` of `data`, each a success."""
    address = json.loads((data / "server.json").read_text())["address"]
    token = (data / "token").read_text().strip()
    with grpc.insecure_channel(address) as channel:
        stub = pb_grpc.AndroidRuntimeStub(channel)
        for i in range(n):
            request = pb.ActionRequest(
                action_type="SIM_RECEIVE_SMS",
                params={"from": "+15550100", "body": f"m{i}"},
                request_id=f"r{i}",
                timeout_ms=5000,
            )
            response = stub.Execute(request, metadata=(("authorization", f"Bearer {token}"),), timeout=10)
            assert response.success, response.error


async def test_a_stopped_runtime_publishes_its_last_events_first(tmp_path: Path) -> None:
    server = NatsServer(tmp_path / "nats")
    url = await server.start()
    data = tmp_path / "data"
    proc, lines = _serve(data, "--nats-url", url, "--device-name", "p1")
    try:
        _receive_sms(data, 5)
        proc.send_signal(signal.SIGTERM)  # at once: the last events may not be acked yet
        assert proc.wait(timeout=30) == 0, "".join(lines)
        messages = await stream_messages(url)
        done = [b["payload"]["request_id"] for *_, b in messages if b["event_type"] == "TASK_COMPLETED"]
        assert done == [f"r{i}" for i in range(5)]
        assert not any("not acked by JetStream" in line for line in lines)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        await server.stop()


async def test_a_runtime_killed_during_an_outage_publishes_what_it_accepted_at_its_next_start(
    tmp_path: Path,
) -> None:
    server = NatsServer(tmp_path / "nats")
    url = await server.start()
    await server.stop()  # NATS is away while the first run works
    data = tmp_path / "data"
    proc, lines = _serve(data, "--nats-url", url, "--device-name", "p1")
    try:
        _receive_sms(data, 5)  # Execute works without NATS
        spool = data / "nats-spool.jsonl"

        def spooled() -> list[str]:
            types = []
            for line in spool.read_text().splitlines():
                try:
                    types.append(json.loads(json.loads(line)["data"])["event_type"])
                except ValueError:  # the line being written
                    continue
            return types

        # Accepted: the sink has taken the last event from the bus (a turn of the loop after it
        # was published), and with NATS away it is on disk.
        deadline = time.monotonic() + 10
        while not (spool.exists() and spooled().count("TASK_COMPLETED") == 5):
            assert time.monotonic() < deadline, "".join(lines)
            await asyncio.sleep(0.02)  # polling the spool, bounded
        assert spool.stat().st_mode & 0o777 == 0o600
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    await server.start()  # NATS is back, on the same port
    again, lines = _serve(data, "--nats-url", url, "--device-name", "p1")
    try:
        deadline = time.monotonic() + 30
        while True:
            messages = await stream_messages(url)
            got = [b["payload"]["body"] for *_, b in messages if b["event_type"] == "MESSAGE_RECEIVED"]
            if len(got) >= 5 or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.05)  # polling the stream, bounded
        assert got == [f"m{i}" for i in range(5)], "".join(lines)
        ids = [b["id"] for *_, b in messages]
        assert len(ids) == len(set(ids))
        first_run = {i.split(".")[1] for i in ids[:5]}
        assert len(first_run) == 1  # the killed run's own ids, published first
        while spool.exists() and time.monotonic() < deadline:
            await asyncio.sleep(0.05)  # the spool goes once all is acked
        assert not spool.exists()
    finally:
        again.send_signal(signal.SIGTERM)
        again.wait(timeout=30)
        await server.stop()


def _without_nats_py(tmp_path: Path) -> dict[str, str]:
    """An environment in which `import nats` fails, as on a machine without the nats extra."""
    blocker = tmp_path / "blocker" / "nats"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError(\"No module named 'nats'\")\n")
    env = _env(tmp_path / "data")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(blocker.parent), env.get("PYTHONPATH", "")) if p)
    return env


def test_nats_url_without_nats_py_says_in_one_line_how_to_get_it(tmp_path: Path) -> None:
    env = _without_nats_py(tmp_path)
    done = subprocess.run(
        [
            *EXE,
            "serve",
            "--grpc-listen",
            "127.0.0.1:0",
            "--no-gateway",
            "--nats-url",
            "nats://127.0.0.1:4222",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 2, done
    assert done.stderr.strip().count("\n") == 0, done.stderr
    assert (
        "pip install '.[nats]'" in done.stderr and "phoneuse-runtime[nats]" not in done.stderr
    )  # not on PyPI


def test_the_runtime_serves_without_nats_py(tmp_path: Path) -> None:
    env = _without_nats_py(tmp_path)
    proc, lines = _serve(tmp_path / "data", env=env)
    try:
        actions = subprocess.run(
            [*EXE, "actions", "--json"], capture_output=True, text=True, env=env, timeout=60
        )
        assert actions.returncode == 0, actions.stderr
        assert "LEASE_ACQUIRE" in actions.stdout  # the leases, in memory, need no NATS
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0, "".join(lines)
