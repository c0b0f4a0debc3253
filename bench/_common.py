"""Shared by the benchmarks: server subprocesses, percentiles, and table printing."""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO

import psutil

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
SERVERS = BENCH_DIR / "_servers.py"
SERVICE = "ai.lemon.phoneuse.mcpserver.protocol.AndroidRuntime"
EXECUTE = f"/{SERVICE}/Execute"
SUBSCRIBE = f"/{SERVICE}/Subscribe"
TOKEN = "bench-token-0123456789abcdef"
AUTH = (("authorization", f"Bearer {TOKEN}"),)
START_TIMEOUT_S = 60.0
READY_LINE = "serving AndroidRuntime on"

# `python bench/x.py` puts bench/ first on sys.path, not the checkout, so an editable install made
# from another checkout (a worktree's main) would be imported instead of the code beside this file.
# The benchmarks import _common before phoneuse_runtime; their servers get the same through PYTHONPATH.
if str(REPO) not in sys.path:
    sys.path.insert(1, str(REPO))


def child_env() -> dict[str, str]:
    """The environment for server processes: this checkout first on the path, grpc core quiet."""
    path = os.environ.get("PYTHONPATH")
    # grpc core logs a GOAWAY at INFO when a client hangs up on open streams; keep stderr for errors.
    return {
        "GRPC_VERBOSITY": "ERROR",
        **os.environ,
        "PYTHONPATH": f"{REPO}{os.pathsep}{path}" if path else str(REPO),
    }


class ServerProcess:
    """One `_servers.py` process: started on enter, its port read from stdout, SIGTERMed on exit."""

    def __init__(self, kind: str, *, profile: Path | None = None) -> None:
        self.kind = kind
        self.profile = profile
        self.port = 0
        self._proc: subprocess.Popen[str] | None = None

    @property
    def pid(self) -> int:
        assert self._proc is not None
        return self._proc.pid

    def __enter__(self) -> ServerProcess:
        argv = [sys.executable, str(SERVERS), self.kind, "--token", TOKEN]
        if self.profile is not None:
            argv += ["--profile", str(self.profile)]
        self._proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, env=child_env())
        try:
            self.port = _read_port(self._proc.stdout, self._proc)
        except BaseException:
            stop_process(self._proc)
            raise
        return self

    def cpu_seconds(self) -> float:
        """User plus system CPU time the server process has used so far."""
        times = psutil.Process(self.pid).cpu_times()
        return float(times.user + times.system)

    def profiling(self, on: bool) -> None:
        """Starts or stops the server's cProfile (only when started with a profile path)."""
        if self.profile is not None and self._proc is not None:
            self._proc.send_signal(signal.SIGUSR1 if on else signal.SIGUSR2)

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._proc is not None:
            stop_process(self._proc)


def _read_port(stream: IO[str] | None, proc: subprocess.Popen[str]) -> int:
    assert stream is not None
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        line = stream.readline()
        if not line:
            raise RuntimeError(f"server exited early with code {proc.wait()}")
        if line.startswith("PORT "):
            return int(line.split()[1])
    raise RuntimeError("server did not report its port in time")


def serve_command() -> list[str]:
    """`phoneuse-runtime serve`, run by this interpreter so the measured pid is Python itself."""
    script = Path(sys.executable).parent / "phoneuse-runtime"
    if not script.is_file():
        found = shutil.which("phoneuse-runtime")
        script = Path(found) if found else script
    if script.is_file() and script.read_text(errors="replace").startswith("#!"):
        return [sys.executable, str(script), "serve"]
    return [sys.executable, "-m", "phoneuse_runtime", "serve"]


class ServeProcess:
    """`phoneuse-runtime serve --device sim` on port 0 with a fresh data dir, as a user starts it.

    Ready once its stderr says `serving AndroidRuntime on`; the port comes from
    `<data-dir>/server.json`. SIGTERMed on exit, and the data dir removed. `prepare` gets the
    data dir (created) before the server starts, to put files there; `env` adds to its
    environment (settings as PHONEUSE_*); `open_files` caps its RLIMIT_NOFILE, as on a phone.
    """

    def __init__(
        self,
        *,
        prepare: Callable[[Path], None] | None = None,
        env: Mapping[str, str] | None = None,
        open_files: int | None = None,
    ) -> None:
        self.prepare = prepare
        self.env = dict(env or {})
        self.open_files = open_files
        self.port = 0
        self._proc: subprocess.Popen[str] | None = None
        self._tmp: tempfile.TemporaryDirectory[str] | None = None

    @property
    def pid(self) -> int:
        assert self._proc is not None
        return self._proc.pid

    @property
    def log_path(self) -> Path:
        assert self._tmp is not None
        return Path(self._tmp.name) / "serve.log"

    def __enter__(self) -> ServeProcess:
        self._tmp = tempfile.TemporaryDirectory(prefix="phoneuse-bench-")
        data_dir = Path(self._tmp.name) / "data"
        if self.prepare is not None:
            data_dir.mkdir(mode=0o700)
            self.prepare(data_dir)
        argv = [
            *serve_command(),
            "--grpc-listen",
            "127.0.0.1:0",
            "--data-dir",
            str(data_dir),
            "--token",
            TOKEN,
        ]
        if self.open_files is not None:  # set in a shell of Python that then execs serve
            limit = "import os, resource, sys; n = int(sys.argv[1]); "
            limit += "resource.setrlimit(resource.RLIMIT_NOFILE, (n, n)); os.execv(sys.argv[2], sys.argv[2:])"
            argv = [sys.executable, "-c", limit, str(self.open_files), *argv]
        try:
            with self.log_path.open("w") as log:
                self._proc = subprocess.Popen(
                    argv, stderr=log, stdout=subprocess.DEVNULL, text=True, env={**child_env(), **self.env}
                )
            deadline = time.monotonic() + START_TIMEOUT_S
            while READY_LINE not in self.log_path.read_text():
                if self._proc.poll() is not None:
                    raise RuntimeError(
                        f"serve exited with {self._proc.returncode}:\n{self.log_path.read_text()}"
                    )
                if time.monotonic() > deadline:
                    raise RuntimeError(f"serve did not get ready in {START_TIMEOUT_S:.0f} s")
                time.sleep(0.02)
            address = json.loads((data_dir / "server.json").read_text())["address"]
            self.port = int(str(address).rsplit(":", 1)[1])
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._proc is not None:
            stop_process(self._proc)
        if self._tmp is not None:
            self._tmp.cleanup()


def stop_process(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def percentile(sorted_values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile of an already sorted sequence."""
    if not sorted_values:
        return math.nan
    rank = max(1, math.ceil(p / 100 * len(sorted_values)))
    return sorted_values[min(rank, len(sorted_values)) - 1]


def ratio(ours: float, bare: float) -> str:
    if bare == 0 or math.isnan(ours) or math.isnan(bare):
        return "n/a"
    return f"{ours / bare:.2f}x"


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], *, left: int = 1) -> str:
    """A plain-text table; the first `left` columns are left-aligned, the rest right-aligned."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths]), *(line(r) for r in rows)])


def machine() -> str:
    import platform

    import grpc

    return (
        f"python {platform.python_version()}, grpcio {grpc.__version__}, "
        f"{os.cpu_count()} CPU(s), {platform.machine()}"
    )
