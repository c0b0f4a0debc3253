"""A real `phoneuse-runtime serve` process for the tests that need one of their own (its memory,
its open-file limit), configured through PHONEUSE_* like a user's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from .conftest import TOKEN


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
    environ = {k: v for k, v in os.environ.items() if not k.startswith("PHONEUSE_")}
    environ.update(PHONEUSE_DATA_DIR=str(data_dir), PHONEUSE_TOKEN=TOKEN, GRPC_VERBOSITY="ERROR")
    environ.update(PHONEUSE_GATEWAY_LISTEN="127.0.0.1:0")
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
