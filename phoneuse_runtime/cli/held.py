"""`exec`'s word on a held call: while the call waits for the owner, one line on stderr says
what it waits for (the approval's id, how to answer it, the time left).

The server announces every hold as an `APPROVAL_REQUESTED` event naming the call's
`request_id`; `exec` subscribes to those before it sends the call (so none is missed), and
says the first one for its own request.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from typing import IO, TYPE_CHECKING, Any

from phoneuse_runtime.owner.approvals import how_to_answer
from phoneuse_runtime.util.display import printable

if TYPE_CHECKING:
    from collections.abc import Sequence

    from phoneuse_runtime.rpc import protocol_pb2_grpc as pb_grpc

EVENT = "APPROVAL_REQUESTED"
# How long `exec` waits for the subscription to be live before it sends the call regardless (a
# server that never answers a Subscribe must not stop the call).
LIVE_WAIT_S = 5.0


def held_line(payload: dict[str, Any], *, now_ms: int) -> str:
    """The line said about a hold, from its APPROVAL_REQUESTED payload."""
    approval_id = printable(str(payload.get("approval_id", "")))
    name = printable(str(payload.get("name", "the call")))
    deadline = payload.get("deadline_ms")
    left = f", {max(0, (deadline - now_ms) // 1000)} s left" if isinstance(deadline, int) else ""
    reason = printable(str(payload.get("reason") or ""))
    why = f": {reason}" if reason else ""
    return (
        f"phoneuse-runtime: {name} is held for the owner's answer (approval {approval_id}{left}){why}. "
        + (how_to_answer(approval_id))
    )


class HoldNotice:
    """Watches the server's holds for one request while it runs; says the first one on `out`."""

    def __init__(
        self,
        stub: pb_grpc.AndroidRuntimeStub,
        metadata: Sequence[tuple[str, str]],
        request_id: str,
        *,
        out: IO[str] | None = None,
    ) -> None:
        self._stub = stub
        self._metadata = tuple(metadata)
        self._request_id = request_id
        self._out = out if out is not None else sys.stderr
        self._live = threading.Event()
        self._stream: Any = None
        self._thread = threading.Thread(target=self._watch, name="hold-notice", daemon=True)

    def __enter__(self) -> HoldNotice:
        self._thread.start()
        self._live.wait(LIVE_WAIT_S)
        return self

    def __exit__(self, *exc: object) -> None:
        stream = self._stream
        if stream is not None:
            stream.cancel()
        self._thread.join(timeout=LIVE_WAIT_S)

    def _watch(self) -> None:
        import grpc

        from phoneuse_runtime.rpc import protocol_pb2 as pb

        try:
            self._stream = stream = self._stub.Subscribe(
                pb.SubscribeRequest(event_types=[EVENT]), metadata=self._metadata
            )
            stream.initial_metadata()  # the subscription is live (or refused: then it ends)
            self._live.set()
            for event in stream:
                payload = json.loads(event.payload_json or "{}")
                if payload.get("request_id") == self._request_id:
                    line = held_line(payload, now_ms=time.time_ns() // 1_000_000)
                    print(line, file=self._out, flush=True)
                    stream.cancel()
                    return
        except (grpc.RpcError, ValueError):
            return  # no word on holds (cancelled, refused, a server without them): the call goes on
        finally:
            self._live.set()
