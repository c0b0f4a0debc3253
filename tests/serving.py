"""Real `phoneuse-runtime serve` processes for the tests that need one of their own, configured
through PHONEUSE_* like a user's: `start_serve` (and the `served` fixture) as a user starts it,
with `run` for the client commands beside it; `serve` with the tests' token, for its memory, its
open-file limit or its umask."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from phoneuse_runtime.owner import approval_store as store
from phoneuse_runtime.owner.approval_store import Pending

from .conftest import TOKEN

EXE = [sys.executable, "-m", "phoneuse_runtime"]


@dataclass
class ServeProcess:
    """A `serve` the test started as a user would, with what it printed until it served."""

    proc: subprocess.Popen[str]
    data_dir: Path
    address: str
    startup_s: float
    stderr_head: str  # stderr until "serving AndroidRuntime on" (and "serving MCP", when asked)

    @property
    def record(self) -> dict[str, object]:
        """Its server.json, as it wrote it once serving."""
        record: dict[str, object] = json.loads((self.data_dir / "server.json").read_text())
        return record

    @property
    def token(self) -> str:
        return (self.data_dir / "token").read_text().strip()


def cli_env(data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PHONEUSE_")}
    env["PHONEUSE_DATA_DIR"] = str(data_dir)
    env["PHONEUSE_GATEWAY_LISTEN"] = "127.0.0.1:0"  # never the default port: tests run side by side
    return env


def start_serve(data_dir: Path, *extra: str) -> ServeProcess:
    """`python -m phoneuse_runtime serve` on 127.0.0.1:0 (DEBUG log), once it serves."""
    started = time.monotonic()
    proc = subprocess.Popen(
        [*EXE, "serve", "--grpc-listen", "127.0.0.1:0", "--log-level", "DEBUG", *extra],
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(data_dir),
    )
    assert proc.stderr is not None
    lines = []
    for line in proc.stderr:
        lines.append(line)
        if "serving AndroidRuntime on" in line:
            break
    else:
        raise AssertionError("server did not start:\n" + "".join(lines))
    if "--mcp-listen" in extra:  # the MCP front end's line follows at once
        for line in proc.stderr:
            lines.append(line)
            if "serving MCP" in line:
                break
    record = json.loads((data_dir / "server.json").read_text())
    return ServeProcess(proc, data_dir, record["address"], time.monotonic() - started, "".join(lines))


@pytest.fixture
def served(tmp_path: Path) -> Iterator[ServeProcess]:
    """A `serve` of the test's own (start_serve), killed at the end if still running."""
    s = start_serve(tmp_path / "data")
    yield s
    if s.proc.poll() is None:
        s.proc.kill()
        s.proc.wait()


def run(served: ServeProcess, *args: str, check: bool = False) -> subprocess.CompletedProcess[str]:
    """A client command (`exec`, `query`, ...) run as a user would, against `served`'s data dir."""
    return subprocess.run(
        [*EXE, *args], capture_output=True, text=True, env=cli_env(served.data_dir), timeout=60, check=check
    )


@dataclass(frozen=True)
class Served:
    pid: int
    port: int

    def rss_kib(self, field: str = "VmRSS") -> int:
        """The server's resident memory now (VmRSS) or at its peak (VmHWM), from /proc."""
        status = Path(f"/proc/{self.pid}/status").read_text()
        return int(status.split(f"{field}:")[1].split()[0])

    def reset_peak(self) -> None:
        Path(f"/proc/{self.pid}/clear_refs").write_text("5")  # VmHWM starts again from VmRSS


@contextmanager
def serve(
    data_dir: Path,
    *,
    env: Mapping[str, str] | None = None,
    open_files: int | None = None,
    umask: int | None = None,
) -> Iterator[Served]:
    """`serve` on 127.0.0.1:0 with the tests' token; `open_files` caps its RLIMIT_NOFILE, `umask`
    sets its umask."""
    environ = cli_env(data_dir)
    environ.update(PHONEUSE_TOKEN=TOKEN, GRPC_VERBOSITY="ERROR")
    environ.update(env or {})
    code = "import resource, sys\n"
    if open_files is not None:
        code += f"resource.setrlimit(resource.RLIMIT_NOFILE, ({open_files}, {open_files}))\n"
    if umask is not None:
        code += f"import os\nos.umask({umask})\n"
    code += "from phoneuse_runtime.cli.main import main\n"
    code += "sys.exit(main(['serve', '--grpc-listen', '127.0.0.1:0']))\n"
    proc = subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE, text=True, env=environ)
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            if "serving AndroidRuntime on" in line:
                break
        else:
            raise AssertionError(f"serve exited with {proc.wait()}")
        address = json.loads((data_dir / "server.json").read_text())["address"]
        yield Served(proc.pid, int(address.rsplit(":", 1)[1]))
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def start_holding_serve(data_dir: Path) -> ServeProcess:
    """A `serve` that holds SEND_MESSAGE for the owner with nothing paired (`approvals = "always"`
    in the data dir's config.toml, which an attached `mcp` reads too): only the terminal answers."""
    data_dir.mkdir(mode=0o700, parents=True)
    (data_dir / "config.toml").write_text('approvals = "always"\n')
    return start_serve(data_dir)


def held_in_store(data_dir: Path) -> list[Pending]:
    """What the owner's terminal shows held: the approval store `approvals list` reads."""
    path = store.store_path(data_dir)
    if not path.exists():
        return []
    conn = store.connect(path)
    try:
        return store.pending(conn)
    finally:
        conn.close()
