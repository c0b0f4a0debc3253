"""The fleet's door and its principals, attacked: a device whose serial stops nginx's
configuration, a revoked token's open streams, the fleet's inner files under a loose umask, and
principal names that pass for the agent itself. Real `fleet` processes (real nginx and
nats-server, real `serve` members), real grpcio clients."""

from __future__ import annotations

import json
import stat
import subprocess
from pathlib import Path

from tests.fleet.running import EXE, cli, env, execute, fleet, needs, new_token, stub


def test_a_fleet_token_named_like_the_agent_in_another_case_is_refused(tmp_path: Path) -> None:
    """An owner's helper makes a fleet token `Agent` or `AGENT`, whose calls then read as the
    agent's own ("Agent asks to ..."): refused, and the tokens file is left as it was."""
    new_token(tmp_path, "alice")
    before = (tmp_path / "tokens.json").read_bytes()
    for name in ("Agent", "AGENT", "aGeNt", " agent"):
        done = cli(tmp_path, "token", "new", name)
        assert done.returncode == 2, done
        assert "is reserved" in done.stderr or "bad principal name" in done.stderr, done.stderr
        assert "Traceback" not in done.stderr
    assert (tmp_path / "tokens.json").read_bytes() == before


def test_a_tokens_file_naming_agent_in_another_case_grants_nothing(tmp_path: Path) -> None:
    """A tokens file edited by hand to hold `AGENT`: the file is refused whole (no fleet token
    is accepted from it), never read as a second `agent`."""
    from phoneuse_runtime.auth.tokens_file import TokensFile

    path = tmp_path / "tokens.json"
    path.write_text(json.dumps({"version": 1, "tokens": {"AGENT": {"sha256": "0" * 64, "created": ""}}}))
    tokens = TokensFile(path)
    assert tokens.current()
    assert tokens.hashes == {}


def test_a_pairing_named_like_the_agent_is_refused(tmp_path: Path) -> None:
    """`pair new --name Agent`: the owner's prompts would name a device that passes for the
    agent. Refused, and nothing is paired."""
    environ = env() | {"PHONEUSE_DATA_DIR": str(tmp_path / "data")}
    for name in ("agent", "Agent", "AGENT", "device:x"):
        done = subprocess.run(
            [*EXE, "pair", "new", "--name", name], capture_output=True, text=True, env=environ, timeout=60
        )
        assert done.returncode == 2, done
        assert "is reserved" in done.stderr and "Traceback" not in done.stderr, done.stderr
        assert done.stdout == ""
    listed = subprocess.run(
        [*EXE, "pair", "list", "--json"], capture_output=True, text=True, env=environ, timeout=60, check=True
    )
    assert json.loads(listed.stdout) == []


def _loose(data_dir: Path) -> dict[str, str]:
    """Every entry under the fleet's data dir (itself included) that is not private: path -> mode."""
    wrong = {}
    for path in [data_dir, *data_dir.rglob("*")]:
        info = path.lstat()
        want = 0o700 if stat.S_ISDIR(info.st_mode) else 0o600
        if stat.S_IMODE(info.st_mode) != want:
            wrong[str(path.relative_to(data_dir))] = f"{stat.S_IMODE(info.st_mode):04o}"
    return wrong


@needs(nats=True)
def test_under_umask_000_every_file_of_the_fleet_is_the_owners_alone(tmp_path: Path) -> None:
    """Another user on the fleet's host reads what the fleet started under `umask 000` keeps
    (nginx's logs, nats-server's log and JetStream's files, with every event in them, the lock):
    every file is 0600 and every directory 0700, as a serve data dir is."""
    data_dir = tmp_path / "fleet"
    token = new_token(data_dir, "alice")
    with fleet(data_dir, "--sim", "1", ready=1, umask=0) as running:
        channel, runtime = stub(running.door)
        assert execute(runtime, "SET_CLIPBOARD", {"text": "owner's"}, token=token, device="sim-1").success
        channel.close()
        names = {p.name for p in data_dir.rglob("*")}
        for expected in ("nats-server.log", "fleet.lock", "error.log", "nats-token", "jetstream"):
            assert expected in names, sorted(names)
        assert _loose(data_dir) == {}
