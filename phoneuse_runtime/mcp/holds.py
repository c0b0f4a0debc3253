"""The holds the MCP face may ask its client's user about, and where that user's answer goes.

The face asks only where the owner made that user an approver (`mcp_client_is_owner`), and only
about its own calls. Two sources, one shape (`FaceHold`):

- `RuntimeHolds`: the runtime in this process (`LocalBackend`). Holds come from its `Approvals`
  as they begin; only calls that came through this face count (`Caller("mcp", principal)`, not a
  gRPC client that says `x-phoneuse-frontend: mcp`); the answer is `Approvals.answer`.
- `StoreHolds`: the running server, for a `phoneuse-runtime mcp` attached to it (`GrpcBackend`).
  Holds come from the server's own `APPROVAL_REQUESTED` and `APPROVAL_RESOLVED` events (one
  Subscribe of its own, opened before the first call that may be asked about); the answer goes
  where `phoneuse-runtime approvals approve` writes it, the approval store in the data dir
  (owner/approval_store.py), bound to the digest shown. The attached process holds the data dir,
  its token and that store: it is the owner's, as the terminal is. Its calls all carry the data
  dir's token, whose principal is the runtime's own (`agent`), so only holds of `mcp:agent` are
  kept, and the face asks only about those whose request_id is a call of its own in flight (the
  server scopes request_ids by principal: one call per id).
"""

from __future__ import annotations

import asyncio
import collections
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from phoneuse_runtime.owner.approvals import Approvals, Hold, NoSuchApproval

if TYPE_CHECKING:
    from phoneuse_runtime.rpc import protocol_pb2_grpc as pb_grpc

log = logging.getLogger(__name__)

FRONTEND = "mcp"
SERVER_PRINCIPAL = "agent"  # the data dir's token's principal: every call of an attached face
REQUESTED, RESOLVED = "APPROVAL_REQUESTED", "APPROVAL_RESOLVED"
KEPT = 256  # the server's pending holds of mcp:agent an attached face keeps, newest
READY_TIMEOUT_S = 10.0
ROW_WAIT_S = 5.0  # how long an answer waits for the hold's row in the store (see answer)
ROW_POLL_S = 0.02


@dataclass(frozen=True)
class FaceHold:
    """A held call of the face's, as its user is asked about it."""

    approval_id: str
    principal: str
    request_id: str
    name: str
    params: Mapping[str, str]
    app_target: str | None
    reason: str
    digest: str  # the exact call's: the answer is bound to it


class TooLate(Exception):
    """The hold was answered elsewhere, ended, or is no longer the call shown."""


OnHold = Callable[[FaceHold, bool], None]  # (hold, began)


class FaceHolds(Protocol):
    async def ready(self) -> None:
        """Returns once every hold that begins from now on will be heard."""
        ...

    def watch(self, on_hold: OnHold) -> None: ...

    def pending(self, approval_id: str) -> FaceHold | None: ...

    async def answer(self, hold: FaceHold, *, approved: bool, by: str) -> None:
        """Raises TooLate when the answer cannot be taken."""
        ...

    async def close(self) -> None: ...


class RuntimeHolds:
    """The holds of the runtime in this process."""

    def __init__(self, approvals: Approvals) -> None:
        self.approvals = approvals
        self._watchers: list[OnHold] = []
        approvals.watch(self._changed)

    async def ready(self) -> None:  # a hold's watchers are called as it begins
        return

    def watch(self, on_hold: OnHold) -> None:
        self._watchers.append(on_hold)

    def _changed(self, hold: Hold, began: bool) -> None:
        seen = _of(hold)
        if seen is not None:
            for watcher in self._watchers:
                watcher(seen, began)

    def pending(self, approval_id: str) -> FaceHold | None:
        return next((_of(h) for h in self.approvals.pending() if h.approval_id == approval_id), None)

    async def answer(self, hold: FaceHold, *, approved: bool, by: str) -> None:
        from phoneuse_runtime.kernel.errors import RuntimeFailure

        try:
            self.approvals.answer(hold.approval_id, approved=approved, by=by, digest=hold.digest)
        except (NoSuchApproval, RuntimeFailure):
            raise TooLate(hold.approval_id) from None

    async def close(self) -> None:
        return


def _of(hold: Hold) -> FaceHold | None:
    """The hold as the face sees it, if the call came through this face (its own word, not a
    gRPC client's `x-phoneuse-frontend`)."""
    call = hold.call
    if call.caller.frontend != FRONTEND or call.caller.relayed:
        return None
    return FaceHold(
        hold.approval_id,
        call.caller.principal,
        call.request_id,
        call.name,
        dict(call.wire_params),
        call.app_target,
        hold.reason,
        hold.digest,
    )


class StoreHolds:
    """The running server's holds of the attached face, heard from its events; answers written to
    the data dir's approval store, which the server takes within `approval_store.POLL_S`."""

    def __init__(self, stub: pb_grpc.AndroidRuntimeStub, metadata: Sequence[tuple[str, str]], data_dir: Path):
        self._stub = stub
        self._metadata = tuple(metadata)
        self._data_dir = data_dir
        self._watchers: list[OnHold] = []
        self._pending: collections.OrderedDict[str, FaceHold] = collections.OrderedDict()
        self._stream: Any = None
        self._pump: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()

    def watch(self, on_hold: OnHold) -> None:
        self._watchers.append(on_hold)

    async def ready(self) -> None:
        async with self._lock:
            if self._pump is not None and not self._pump.done():
                return
            import grpc

            from phoneuse_runtime.rpc import protocol_pb2 as pb

            self._pending.clear()  # what a stream that ended said is stale
            stream = self._stub.Subscribe(
                pb.SubscribeRequest(event_types=[REQUESTED, RESOLVED]), metadata=self._metadata
            )
            self._stream = stream
            self._pump = asyncio.get_running_loop().create_task(self._read(stream))
            try:  # the server sends its headers once the subscription is live (rpc/servicer.py)
                await asyncio.wait_for(stream.initial_metadata(), READY_TIMEOUT_S)
            except (asyncio.TimeoutError, grpc.aio.AioRpcError) as exc:
                why = type(exc).__name__
                log.warning("the server's approval events did not open (%s): nobody here is asked", why)

    async def _read(self, stream: Any) -> None:
        import grpc

        try:
            async for event in stream:
                self.heard(event.event_type, event.payload_json)
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.CANCELLED:
                log.warning("the server's approval events ended: %s", error.code().name)

    def heard(self, event_type: str, payload_json: str) -> None:
        """One of the server's approval events (its payload as JSON)."""
        try:
            payload = json.loads(payload_json or "{}")
            caller = payload["caller"]
            if caller != {"frontend": FRONTEND, "principal": SERVER_PRINCIPAL}:
                return  # another caller's hold: never this face's to ask about
            approval_id = str(payload["approval_id"])
            if event_type == RESOLVED:
                ended = self._pending.pop(approval_id, None)
                if ended is not None:
                    self._tell(ended, began=False)
                return
            params = payload["params"]
            if payload.get("kind") != "action" or not isinstance(params, dict):
                return
            hold = FaceHold(
                approval_id,
                SERVER_PRINCIPAL,
                str(payload["request_id"]),
                str(payload["name"]),
                {str(k): str(v) for k, v in params.items()},
                None if payload.get("app_target") is None else str(payload["app_target"]),
                str(payload["reason"]),
                str(payload["digest"]),
            )
        except (ValueError, KeyError, TypeError):
            log.warning("an approval event of the server could not be read; it is skipped")
            return
        self._pending[approval_id] = hold
        while len(self._pending) > KEPT:
            self._pending.popitem(last=False)
        self._tell(hold, began=True)

    def _tell(self, hold: FaceHold, *, began: bool) -> None:
        for watcher in self._watchers:
            watcher(hold, began)

    def pending(self, approval_id: str) -> FaceHold | None:
        return self._pending.get(approval_id)

    async def answer(self, hold: FaceHold, *, approved: bool, by: str) -> None:
        """The server announces a hold as it queues the hold's row for the store (on a thread of
        its own), so a user who answers at once may find no row yet: the answer waits for it while
        the hold is pending, at most ROW_WAIT_S."""
        give_up = asyncio.get_running_loop().time() + ROW_WAIT_S
        while True:
            written = await asyncio.to_thread(self._write, hold, approved, by)
            if written is not None:
                if not written:
                    raise TooLate(hold.approval_id)
                return
            if self.pending(hold.approval_id) is None or asyncio.get_running_loop().time() > give_up:
                raise TooLate(hold.approval_id)
            await asyncio.sleep(ROW_POLL_S)

    def _write(self, hold: FaceHold, approved: bool, by: str) -> bool | None:
        """The answer into the store, as `approvals approve` writes it: True when written, False
        when the store holds another call under the id or the hold was answered meanwhile, None
        when the store has no row for it (yet)."""
        import sqlite3

        from phoneuse_runtime.owner import approval_store as store

        path = store.store_path(self._data_dir)
        if not path.exists():
            return None
        try:
            conn = store.connect(path)
            try:
                row = next((p for p in store.pending(conn) if p.approval_id == hold.approval_id), None)
                if row is None:
                    return False if store.still_held(conn, hold.approval_id) else None
                if row.digest != hold.digest:
                    return False
                return store.record_answer(conn, row, approved=approved, by=by)
            finally:
                conn.close()
        except (sqlite3.Error, OSError) as exc:
            log.warning("approval %s: the approval store failed: %s", hold.approval_id, exc)
            return False

    async def close(self) -> None:
        if self._stream is not None:
            self._stream.cancel()
        if self._pump is not None:
            self._pump.cancel()
            await asyncio.gather(self._pump, return_exceptions=True)
