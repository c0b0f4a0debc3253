"""`exec` of a call the owner must answer, as a user runs it against `serve` (issue 28 §7): it
says once on stderr what it waits for (the approval's id, how to answer it, the time left), and
goes on once answered from the terminal."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from .serving import EXE, ServeProcess, cli_env, run, start_serve


@pytest.fixture
def asking(tmp_path: Path) -> Iterator[ServeProcess]:
    """A `serve` that holds every SEND_MESSAGE for the owner (`approvals = "always"`)."""
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    (data_dir / "config.toml").write_text('approvals = "always"\n')
    served = start_serve(data_dir)
    yield served
    served.proc.kill()
    served.proc.wait()


def test_a_held_exec_says_once_what_it_waits_for_and_goes_on_when_approved(asking: ServeProcess) -> None:
    with subprocess.Popen(
        [*EXE, "exec", "SEND_MESSAGE", "to=+15551234", "body=on my way", "--timeout-ms", "60000"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(asking.data_dir),
    ) as call:
        assert call.stderr is not None and call.stdout is not None
        line = call.stderr.readline()
        found = re.search(r"approval ([0-9a-f]{32})", line)
        assert found, line
        approval_id = found.group(1)
        assert line.startswith(
            f"phoneuse-runtime: SEND_MESSAGE is held for the owner's answer (approval {approval_id}"
        )
        assert f"phoneuse-runtime approvals approve {approval_id}" in line
        left = re.search(r"(\d+) s left", line)
        assert left and 40 <= int(left.group(1)) <= 60, line
        answered = run(asking, "approvals", "approve", approval_id)
        assert answered.returncode == 0, answered.stderr
        out, err = call.communicate(timeout=60)
    assert call.returncode == 0, err
    assert '"success": true' in out
    assert "held for the owner" not in err  # said once


def test_exec_help_shows_the_default_timeout() -> None:
    shown = subprocess.run([*EXE, "exec", "--help"], capture_output=True, text=True, check=True)
    assert "default: 30000" in shown.stdout, shown.stdout
