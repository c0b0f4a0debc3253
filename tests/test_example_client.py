"""examples/client.py, as a reader runs it, against a real `serve` (port 0) on the simulated phone:
Execute (with its request_id and timeout_ms), Query paged by offset, Subscribe."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.serving import cli_env, start_serve

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "client.py"


def _beside_serve(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The example as a reader runs it, beside a `serve` of its own."""
    served = start_serve(tmp_path / "data")
    try:
        return subprocess.run(
            [sys.executable, str(EXAMPLE), *args],
            capture_output=True,
            text=True,
            env=cli_env(served.data_dir),
            timeout=90,
        )
    finally:
        served.proc.kill()
        served.proc.wait()


def test_the_example_client_runs_against_a_real_server(tmp_path: Path) -> None:
    done = _beside_serve(tmp_path, "--sim")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    opened = json.loads(lines[0].removeprefix("OPEN_APP "))
    assert opened == {"success": True, "error": ""}
    contacts = [json.loads(line.removeprefix("CONTACT ")) for line in lines if line.startswith("CONTACT ")]
    assert [c["name"] for c in contacts] == ["Bob Smith", "Bobby Tables"]
    pages = [json.loads(line.removeprefix("PAGE ")) for line in lines if line.startswith("PAGE ")]
    assert pages == [  # a page of one each: offset moves by what came, has_more says when to stop
        {"offset": 0, "total_count": 2, "has_more": True},
        {"offset": 1, "total_count": 2, "has_more": False},
    ]
    event = next(line for line in lines if line.startswith("EVENT MESSAGE_RECEIVED "))
    payload = json.loads(event.split(" ", 2)[2])
    assert payload["body"] == "See you at 6?"


def test_without_sim_the_example_says_what_it_waits_for_and_when_it_gave_up(tmp_path: Path) -> None:
    """It waited --wait-s (30 s) in silence for an event nobody sent (issue 28 §10)."""
    done = _beside_serve(tmp_path, "--wait-s", "1")
    assert done.returncode == 0, done.stderr
    assert "waiting up to 1 s for MESSAGE_RECEIVED, CHAT_MESSAGE or AGENT_STOP" in done.stderr, done.stderr
    assert "--sim" in done.stderr
    assert "no event came within 1 s" in done.stderr, done.stderr


def test_with_no_server_the_example_fails_at_once_saying_how_to_start_one(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE)],
        capture_output=True,
        text=True,
        env=cli_env(tmp_path / "empty"),
        timeout=90,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("client.py: "), done.stderr
    assert "phoneuse-runtime serve" in done.stderr and "Traceback" not in done.stderr, done.stderr
