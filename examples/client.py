"""A minimal agent-side client of phoneuse-runtime's gRPC API, with the shipped stubs.

    python3 examples/client.py            # against the server `phoneuse-runtime serve` runs
    python3 examples/client.py --sim      # on the simulated phone: also makes an SMS arrive

It shows the three calls and the habits each needs:

- Execute with a `request_id` of your own and a `timeout_ms` > 0 (protobuf's default, 0, is
  refused: `INVALID_ARGUMENT: BAD_REQUEST: timeout_ms must be > 0, got 0`). When the answer does
  not come (gRPC UNAVAILABLE or DEADLINE_EXCEEDED), send the SAME request again, same
  `request_id`: the server runs an action once per id and answers a retry with the stored
  response, so a retry never sends a second SMS. An answer with `success=false` is final for
  that id (`error` is "CODE: message"); to try again, use a new id.
- Query pages with the `offset` filter, while `has_more` says there are more.
- Subscribe names event types (none means all); an unknown one is INVALID_ARGUMENT. Wait for
  the response headers before acting: from then on no event is missed.

Where the server is and its token: $PHONEUSE_SERVER and $PHONEUSE_TOKEN, else what `serve` wrote
in the data dir ($PHONEUSE_DATA_DIR, else ~/.local/share/phoneuse-runtime).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import grpc

from phoneuse_runtime.auth.tokens import read_token_file
from phoneuse_runtime.config.settings import default_data_dir
from phoneuse_runtime.rpc import protocol_pb2 as pb
from phoneuse_runtime.rpc import protocol_pb2_grpc as pb_grpc
from phoneuse_runtime.util.endpoint import NoEndpoint, find_server

RETRY_ON = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)


def connect(data_dir: Path) -> tuple[grpc.Channel, tuple[tuple[str, str], ...]]:
    """A channel to the server and the metadata that every call carries."""
    try:
        address = os.environ.get("PHONEUSE_SERVER") or find_server(data_dir)  # never guessed
    except NoEndpoint as exc:  # no live server recorded there: say so at once, and how to start one
        print(f"client.py: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    token = os.environ.get("PHONEUSE_TOKEN") or read_token_file(data_dir)
    if not token:
        raise SystemExit(f"no token: set PHONEUSE_TOKEN, or run `phoneuse-runtime serve` once ({data_dir})")
    return grpc.insecure_channel(address), (("authorization", f"Bearer {token}"),)


def execute(
    stub: pb_grpc.AndroidRuntimeStub,
    auth: tuple[tuple[str, str], ...],
    action_type: str,
    params: dict[str, str],
    *,
    timeout_ms: int = 15_000,
    attempts: int = 3,
) -> pb.ActionResponse:
    """Runs one action, retrying a lost answer with the same request_id (so at most once)."""
    request = pb.ActionRequest(
        action_type=action_type,
        params=params,
        request_id=str(uuid.uuid4()),  # one id for every attempt of this one action
        timeout_ms=timeout_ms,  # required: 0 (the default) is refused
    )
    for attempt in range(1, attempts + 1):
        try:
            # The RPC's own deadline a little past timeout_ms: the server answers TIMEOUT first.
            answer: pb.ActionResponse = stub.Execute(request, metadata=auth, timeout=timeout_ms / 1000 + 5)
            return answer
        except grpc.RpcError as exc:
            if exc.code() not in RETRY_ON or attempt == attempts:
                raise
            time.sleep(0.5 * attempt)  # a backoff before the retry, not a synchronisation
    raise AssertionError("unreachable")


def query_all(
    stub: pb_grpc.AndroidRuntimeStub,
    auth: tuple[tuple[str, str], ...],
    query_type: str,
    filters: dict[str, str],
    *,
    page: int = 20,
) -> Iterator[dict[str, object]]:
    """Every result of a query, a page at a time."""
    offset = 0
    while True:
        answer = stub.Query(
            pb.QueryRequest(
                query_type=pb.QueryType.Value(query_type),
                filters={**filters, "offset": str(offset)},
                limit=page,
            ),
            metadata=auth,
            timeout=30,
        )
        print(
            "PAGE",
            json.dumps({"offset": offset, "total_count": answer.total_count, "has_more": answer.has_more}),
        )
        for raw in answer.results_json:
            yield json.loads(raw)
        if not answer.has_more:
            return
        offset += len(answer.results_json)  # a page may end early (size): count what came


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--sim", action="store_true", help="make an SMS arrive on the simulated phone")
    parser.add_argument("--wait-s", type=float, default=30.0, help="how long to wait for an event")
    args = parser.parse_args()
    channel, auth = connect(args.data_dir or default_data_dir())
    with channel:
        stub = pb_grpc.AndroidRuntimeStub(channel)

        opened = execute(stub, auth, "OPEN_APP", {"name": "Messages"})
        print("OPEN_APP", json.dumps({"success": opened.success, "error": opened.error}))
        if opened.success:
            print("  result", opened.result_json)

        for contact in query_all(stub, auth, "CONTACTS", {"name": "bob"}, page=1):
            print("CONTACT", json.dumps({"id": contact["id"], "name": contact["name"]}, ensure_ascii=False))

        events = pb.SubscribeRequest(
            event_types=["MESSAGE_RECEIVED", "CHAT_MESSAGE", "AGENT_STOP"], subscriber_id="example"
        )
        stream = stub.Subscribe(events, metadata=auth, timeout=args.wait_s)
        stream.initial_metadata()  # the subscription is live: nothing after this is missed
        waits_for = " or ".join([", ".join(events.event_types[:-1]), events.event_types[-1]])
        print(
            f"waiting up to {args.wait_s:g} s for {waits_for}"
            + ("" if args.sim else " (send the phone an SMS, or run with --sim to make one arrive)"),
            file=sys.stderr,
            flush=True,
        )
        if args.sim:
            # Another thread, as the outside world would: this one reads the stream.
            threading.Thread(
                target=execute,
                args=(stub, auth, "SIM_RECEIVE_SMS", {"from": "+14155550101", "body": "See you at 6?"}),
                daemon=True,
            ).start()
        try:
            for event in stream:
                print("EVENT", event.event_type, event.payload_json)
                if event.event_type == "MESSAGE_RECEIVED":
                    stream.cancel()
                    break
        except grpc.RpcError as exc:
            if exc.code() != grpc.StatusCode.DEADLINE_EXCEEDED:  # --wait-s passed: not an error
                raise
            print(f"no event came within {args.wait_s:g} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
