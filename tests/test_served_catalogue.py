"""`phoneuse-runtime actions` lists what a running server serves (the components' contributions
included), and Subscribe refuses an event type nobody publishes, through the console script as a
subprocess and a real gRPC client against a real `serve`."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from phoneuse_runtime.rpc import protocol_pb2 as pb
from phoneuse_runtime.rpc import protocol_pb2_grpc as pb_grpc
from tests.serving import EXE, ServeProcess, cli_env, run, start_serve


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    served = start_serve(tmp_path_factory.mktemp("catalogue") / "data")
    yield served
    served.proc.kill()
    served.proc.wait()


def _stub(
    served: ServeProcess,
) -> tuple[pb_grpc.AndroidRuntimeStub, tuple[tuple[str, str], ...], grpc.Channel]:
    token = (served.data_dir / "token").read_text().strip()
    channel = grpc.insecure_channel(served.address)
    return pb_grpc.AndroidRuntimeStub(channel), (("authorization", f"Bearer {token}"),), channel


def _listed(data_dir: Path) -> dict[str, object]:
    done = subprocess.run(
        [*EXE, "actions", "--json"], capture_output=True, text=True, env=cli_env(data_dir), timeout=60
    )
    assert done.returncode == 0, done.stderr
    listed: dict[str, object] = json.loads(done.stdout)
    return listed


def test_actions_lists_exactly_what_the_server_serves(server: ServeProcess) -> None:
    listed = _listed(server.data_dir)
    actions = listed["actions"]
    assert isinstance(actions, dict)
    head: str = server.stderr_head
    found = re.search(r"\(device sim, (\d+) actions\)", head)
    assert found, head
    assert len(actions) == int(found.group(1))  # as many as the server's registry holds
    assert {"CHAT_REPLY", "CHAT_ASK", "SIM_DISCONNECT", "SIM_REMOTE_HANG_UP"} <= set(actions)
    stub, auth, channel = _stub(server)
    with channel:
        for name in actions:  # ... and each is one it serves: its params are checked, not its name
            answer = stub.Execute(
                pb.ActionRequest(
                    action_type=name, params={"zz_no_such_key": "1"}, request_id=f"c-{name}", timeout_ms=5000
                ),
                metadata=auth,
                timeout=30,
            )
            assert answer.error.startswith("INVALID_PARAMS: "), (name, answer.error)
    events = listed["events"]
    assert isinstance(events, dict)
    assert {"CHAT_MESSAGE", "AGENT_STOP", "AGENT_STEER", "MESSAGE_RECEIVED", "ERROR"} <= set(events)


def test_subscribe_refuses_an_unknown_event_type_naming_the_known_ones(server: ServeProcess) -> None:
    stub, auth, channel = _stub(server)
    with channel:
        typo = pb.SubscribeRequest(event_types=["MESAGE_RECEIVED"])
        stream = stub.Subscribe(typo, metadata=auth, timeout=30)
        with pytest.raises(grpc.RpcError) as refused:
            next(iter(stream))
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    details = refused.value.details() or ""
    assert "no event type 'MESAGE_RECEIVED'" in details
    assert "did you mean MESSAGE_RECEIVED?" in details
    assert "CHAT_MESSAGE" in details  # the known ones, the components' included


def test_the_cli_subscribe_says_so_and_exits(server: ServeProcess) -> None:
    done = run(server, "subscribe", "MESAGE_RECEIVED")  # it used to print "subscribed" and wait forever
    assert done.returncode == 2, done
    assert "subscribed" not in done.stderr
    assert "INVALID_ARGUMENT: BAD_REQUEST: no event type 'MESAGE_RECEIVED'" in done.stderr
    assert "did you mean MESSAGE_RECEIVED?" in done.stderr


def test_known_event_types_still_subscribe(server: ServeProcess) -> None:
    stub, auth, channel = _stub(server)
    with channel:
        stream = stub.Subscribe(
            pb.SubscribeRequest(event_types=["CHAT_MESSAGE", "MESSAGE_RECEIVED"]), metadata=auth
        )
        assert dict(stream.initial_metadata())["x-subscriber-id"]
        stream.cancel()
