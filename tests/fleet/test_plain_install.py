"""A fleet from the plain install (`pip install .`, no nats-py), and the CLI through its door: a
real `fleet --sim 2` whose Python cannot import `nats` (a package of that name on PYTHONPATH that
refuses to load, as a missing one does), and `exec`, `query` and `subscribe` as a user runs them,
naming the phone with `--phone` or PHONEUSE_PHONE (issue 28 §2, §3)."""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from phoneuse_runtime.fleet.fleet import WITHOUT_NATS_PY

from .running import EXE, RunningFleet, env, fleet, needs, new_token

NATS_URL = "nats://127.0.0.1:9"

pytestmark = needs(nats=True)  # nats-server is there: the fleet would run it, were nats-py there


def _without_nats_py(root: Path) -> Path:
    """A directory for PYTHONPATH on which `import nats` fails as it does where nats-py is not
    installed."""
    blocked = root / "nats"
    blocked.mkdir(parents=True)
    (blocked / "__init__.py").write_text("raise ImportError('No module named nats (blocked by the test)')\n")
    return root


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningFleet]:
    root = tmp_path_factory.mktemp("plain")
    blocker = _without_nats_py(root / "site")
    with fleet(root / "fleet", "--sim", "2", ready=2, extra_env={"PYTHONPATH": str(blocker)}) as running:
        yield running


@pytest.fixture(scope="module")
def alice(plain: RunningFleet) -> str:
    return new_token(plain.data_dir, "alice")


def _cli(
    plain: RunningFleet, token: str, *args: str, phone: str | None = None
) -> subprocess.CompletedProcess[str]:
    environ = env() | {"PHONEUSE_SERVER": plain.door, "PHONEUSE_TOKEN": token}
    if phone is not None:
        environ["PHONEUSE_PHONE"] = phone
    return subprocess.run([*EXE, *args], capture_output=True, text=True, env=environ, timeout=60, check=False)


def _clipboard(plain: RunningFleet, name: str) -> object:
    """The sim's clipboard as its state file holds it (None before its first change)."""
    path = plain.data_dir / "members" / name / "sim-state.json"
    return json.loads(path.read_text()).get("clipboard") if path.exists() else None


def test_a_fleet_from_the_plain_install_serves_without_nats_and_says_so_once(
    plain: RunningFleet, alice: str
) -> None:
    log = plain.log_text()
    assert log.count(WITHOUT_NATS_PY) == 1, log
    assert "needs nats-py" not in log and "restart" not in log, log
    assert plain.record()["nats_url"] is None
    # Leases in each runtime's memory: taken and refused through the door as with NATS.
    taken = _cli(plain, alice, "exec", "LEASE_ACQUIRE", "ttl_s=30", "--phone", "sim-1")
    assert taken.returncode == 0, taken.stderr
    assert json.loads(taken.stdout)["success"] is True


def test_exec_query_and_subscribe_name_a_fleets_phone(plain: RunningFleet, alice: str) -> None:
    text = f"for sim-2 {uuid.uuid4().hex[:8]}"
    done = _cli(plain, alice, "exec", "--phone", "sim-2", "SET_CLIPBOARD", f"text={text}")
    assert done.returncode == 0, done.stderr
    assert _clipboard(plain, "sim-2") == text
    assert _clipboard(plain, "sim-1") != text
    # The variable, by serial or name (a sim's serial is its name).
    found = _cli(plain, alice, "query", "CONTACTS", "name=Bob Smith", phone="SIM-1")
    assert found.returncode == 0, found.stderr
    assert [r["name"] for r in json.loads(found.stdout)["results"]] == ["Bob Smith"]

    environ = env() | {"PHONEUSE_SERVER": plain.door, "PHONEUSE_TOKEN": alice}
    with subprocess.Popen(
        [*EXE, "subscribe", "--phone", "sim-1", "TASK_COMPLETED"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environ,
    ) as stream:
        try:
            assert stream.stderr is not None and stream.stdout is not None
            assert "subscribed to TASK_COMPLETED" in stream.stderr.readline()
            request_id = uuid.uuid4().hex
            sent = _cli(
                plain, alice, "exec", "SET_CLIPBOARD", "text=x", "--request-id", request_id, phone="sim-1"
            )
            assert sent.returncode == 0, sent.stderr
            event = json.loads(stream.stdout.readline())
            assert event["event_type"] == "TASK_COMPLETED"
            assert event["payload"]["request_id"] == request_id
        finally:
            stream.terminate()


def test_without_a_phone_the_door_answers_not_found_naming_the_phones(
    plain: RunningFleet, alice: str
) -> None:
    done = _cli(plain, alice, "exec", "SET_CLIPBOARD", "text=x")
    assert done.returncode == 2
    assert "NOT_FOUND" in done.stderr and "sim-1" in done.stderr and "sim-2" in done.stderr, done.stderr


@pytest.mark.parametrize("phone", ["sim 1", "x" * 129, "sim-\u00e9"])
def test_a_phone_no_header_can_carry_is_refused_before_any_call(
    plain: RunningFleet, alice: str, phone: str
) -> None:
    done = _cli(plain, alice, "exec", "--phone", phone, "SET_CLIPBOARD", "text=x")
    assert done.returncode == 2
    assert done.stderr.startswith("phoneuse-runtime: --phone / PHONEUSE_PHONE: a phone's serial or name"), (
        done.stderr
    )


def test_fleet_from_a_named_nats_without_nats_py_stops_at_once_naming_the_install(tmp_path: Path) -> None:
    blocker = _without_nats_py(tmp_path / "site")
    # Nothing listens there: the fleet must stop before it would try.
    done = subprocess.run(
        [*EXE, "fleet", "--data-dir", str(tmp_path / "fleet"), "--sim", "1", "--nats-url", NATS_URL],
        capture_output=True,
        text=True,
        env=env() | {"PYTHONPATH": str(blocker)},
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "nats_url" in done.stderr and "nats-py" in done.stderr, done.stderr
    assert not (tmp_path / "fleet" / "members").exists()
