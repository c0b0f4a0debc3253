"""A real `phoneuse-runtime fleet` process for the fleet's tests, and grpcio calls through its door."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import grpc
import pytest

from phoneuse_runtime.rpc import protocol_pb2 as pb
from phoneuse_runtime.rpc import protocol_pb2_grpc as pb_grpc

EXE = [sys.executable, "-m", "phoneuse_runtime"]


def needs(*, nats: bool = True) -> pytest.MarkDecorator:
    """Skips a test without nginx (and nats-server), saying so; in CI (PHONEUSE_REQUIRE_NGINX=1)
    the test runs and fails instead, as `.ci/run` installs them."""
    from phoneuse_runtime.fleet.door import nginx_binary

    missing = [
        name
        for name, there in (
            ("nginx", nginx_binary()),
            ("nats-server", shutil.which("nats-server") or not nats),
        )
        if not there
    ]
    required = os.environ.get("PHONEUSE_REQUIRE_NGINX") == "1"
    return pytest.mark.skipif(
        bool(missing) and not required,
        reason=f"{' and '.join(missing)} not installed (apt-get install nginx nats-server)",
    )


T = TypeVar("T")


def env() -> dict[str, str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("PHONEUSE_")}
    environ["GRPC_VERBOSITY"] = "ERROR"
    return environ


def poll(
    what: str,
    fn: Callable[[], T | None],
    *,
    timeout_s: float = 60.0,
    every_s: float = 0.05,
    detail: Callable[[], str] | None = None,
) -> T:
    """`fn()` once it is truthy; AssertionError naming `what` (and `detail()`) past the bound."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = fn()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(
                f"{what}: not within {timeout_s:.0f} s" + (f"\n{detail()}" if detail else "")
            )
        time.sleep(every_s)  # polling, bounded by the deadline


def cli(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*EXE, "fleet", "--data-dir", str(data_dir), *args],
        capture_output=True,
        text=True,
        env=env(),
        timeout=60,
        check=False,
    )


def new_token(data_dir: Path, name: str) -> str:
    done = cli(data_dir, "token", "new", name, "--json")
    assert done.returncode == 0, done.stderr
    token: str = json.loads(done.stdout)["token"]
    return token


@dataclass
class RunningFleet:
    proc: subprocess.Popen[str]
    data_dir: Path
    log: Path

    def record(self) -> dict[str, Any]:
        try:
            raw: dict[str, Any] = json.loads((self.data_dir / "fleet.json").read_text())
        except (OSError, ValueError):
            return {}
        return raw

    @property
    def door(self) -> str:
        return str(self.record()["door"])

    def device(self, name: str) -> dict[str, Any]:
        return next(d for d in self.record()["devices"] if d["name"] == name)

    def diagnosis(self) -> str:
        """The ends of the fleet's log and of nginx's, for a failure's message."""
        tail = "\n".join(self.log_text().splitlines()[-30:])
        try:
            nginx = (self.data_dir / "nginx" / "logs" / "error.log").read_text(errors="replace")
        except OSError as exc:
            nginx = f"(no nginx log: {exc})"
        return f"--- the fleet's log ---\n{tail}\n--- nginx's ---\n" + "\n".join(nginx.splitlines()[-15:])

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")

    def door_routes_all(self) -> bool:
        """Whether the door answers health for every device, twice over on fresh connections:
        after a reload nginx's old workers may take a new connection for a few ms, with the
        routes of before (a device still starting: UNAVAILABLE)."""
        from grpc_health.v1 import health_pb2, health_pb2_grpc

        for _ in range(2):
            for device in self.record().get("devices", []):
                with grpc.insecure_channel(self.door) as channel:
                    try:
                        health_pb2_grpc.HealthStub(channel).Check(
                            health_pb2.HealthCheckRequest(),
                            metadata=(("x-phoneuse-device", device["name"]),),
                            timeout=5,
                        )
                    except grpc.RpcError:
                        return False
        return True

    def all_serving(self, count: int) -> bool:
        record = self.record()
        devices = record.get("devices", [])
        return bool(record.get("door")) and len(devices) == count and all(d.get("address") for d in devices)


@contextmanager
def fleet(
    data_dir: Path,
    *args: str,
    ready: int | None = None,
    extra_env: dict[str, str] | None = None,
    adb: bool = False,
    umask: int | None = None,
) -> Iterator[RunningFleet]:
    """`fleet --data-dir DATA_DIR --listen 127.0.0.1:0 [--no-adb] ARGS`; waits until `ready`
    devices serve (when given); `umask` sets the fleet's umask."""
    data_dir.mkdir(parents=True, exist_ok=True)
    log = data_dir.parent / f"{data_dir.name}.log"
    environ = env() | (extra_env or {})
    with open(log, "w") as out:
        proc = subprocess.Popen(
            [
                *EXE,
                "fleet",
                "--data-dir",
                str(data_dir),
                "--listen",
                "127.0.0.1:0",
                *([] if adb else ["--no-adb"]),
                *args,
            ],
            stdout=subprocess.DEVNULL,
            stderr=out,
            text=True,
            env=environ,
            umask=-1 if umask is None else umask,
        )
    running = RunningFleet(proc, data_dir, log)
    try:
        if ready is not None:
            poll(
                f"{ready} devices serving",
                lambda: proc.poll() is None and running.all_serving(ready),
                timeout_s=180,
            )
            poll("the door routes to every device", running.door_routes_all, timeout_s=30)
        yield running
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def stub(address: str) -> tuple[grpc.Channel, pb_grpc.AndroidRuntimeStub]:
    channel = grpc.insecure_channel(address)
    return channel, pb_grpc.AndroidRuntimeStub(channel)


def metadata(token: str, device: str | None) -> tuple[tuple[str, str], ...]:
    md: tuple[tuple[str, str], ...] = (("authorization", f"Bearer {token}"),)
    return md + ((("x-phoneuse-device", device),) if device is not None else ())


def execute(
    runtime: pb_grpc.AndroidRuntimeStub,
    action: str,
    params: dict[str, str],
    *,
    token: str,
    device: str | None,
    request_id: str | None = None,
) -> pb.ActionResponse:
    response: pb.ActionResponse = runtime.Execute(
        pb.ActionRequest(
            action_type=action, params=params, request_id=request_id or uuid.uuid4().hex, timeout_ms=20_000
        ),
        metadata=metadata(token, device),
        timeout=30,
    )
    return response


def rpc_error(call: Callable[[], object]) -> grpc.RpcError:
    try:
        call()
    except grpc.RpcError as exc:
        return exc
    raise AssertionError("the call succeeded")


def names(devices: Sequence[dict[str, Any]]) -> list[str]:
    return [str(d["name"]) for d in devices]
