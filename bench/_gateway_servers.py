"""Servers for bench_gateway.py; started by it, never by hand.

    python bench/_gateway_servers.py bare                 # grpc.aio Execute + a bare websockets broadcast
    python bench/_gateway_servers.py ours --data-dir DIR  # build_app: gRPC and the Iris gateway, sim phone

Each prints `PORTS <grpc> <ws>` on stdout once it serves, and stops cleanly on SIGTERM.

The bare server is the least that does the same job: a generic grpc.aio Execute handler that,
for CHAT_STREAM, encodes one JSON frame (message.start / update / stop) and hands it to
`websockets.broadcast` for every connection; for any other action it broadcasts a `tool.start`
before answering and a `tool.end` after. Its connections say hello and get a hello.ack, with no
token check, no runtime, no outbox, no per-connection queue.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

import grpc
from _servers import SERVICE, _wait_for_signal
from websockets.asyncio.server import ServerConnection, broadcast, serve

from phoneuse_runtime.rpc import protocol_pb2 as pb


def _frame(frame_type: str, payload: dict[str, Any]) -> str:
    return json.dumps({"v": 1, "type": frame_type, "payload": payload}, separators=(",", ":"))


class Bare:
    def __init__(self) -> None:
        self.connections: set[ServerConnection] = set()
        self.index = 0

    async def connection(self, ws: ServerConnection) -> None:
        hello = json.loads(await ws.recv())
        await ws.send(json.dumps({"v": 1, "id": hello.get("id"), "type": "hello.ack", "payload": {}}))
        self.connections.add(ws)
        try:
            async for _ in ws:
                pass
        finally:
            self.connections.discard(ws)

    async def execute(self, request: pb.ActionRequest, context: Any) -> pb.ActionResponse:
        params = request.params
        if request.action_type == "CHAT_STREAM":
            op = params["op"]
            message_id = params.get("message_id") or "m-bare"
            if op == "start":
                text = _frame("message.start", {"message_id": message_id, "role": "assistant"})
            elif op == "update":
                text = _frame("message.update", {"message_id": message_id, "text": params["text"]})
            else:
                text = _frame(
                    "message.stop", {"message_id": message_id, "final_text": params.get("text", "")}
                )
            broadcast(self.connections, text)
            return pb.ActionResponse(
                request_id=request.request_id,
                success=True,
                result_json=json.dumps({"message_id": message_id}),
            )
        self.index += 1
        started = time.perf_counter()
        args = dict(params)
        start = {
            "index": self.index,
            "name": request.action_type,
            "args": args,
            "preview": request.action_type,
        }
        broadcast(self.connections, _frame("tool.start", start))
        end = {
            "index": self.index,
            "name": request.action_type,
            "ok": True,
            "duration": time.perf_counter() - started,
        }
        broadcast(self.connections, _frame("tool.end", end))
        return pb.ActionResponse(request_id=request.request_id, success=True, result_json='{"via":"bare"}')


def _announce(grpc_port: int, ws_port: int) -> None:
    sys.stdout.write(f"PORTS {grpc_port} {ws_port}\n")
    sys.stdout.flush()


async def run_bare() -> None:
    bare = Bare()
    handlers = {
        "Execute": grpc.unary_unary_rpc_method_handler(
            bare.execute,
            request_deserializer=pb.ActionRequest.FromString,
            response_serializer=pb.ActionResponse.SerializeToString,
        )
    }
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, handlers),))
    grpc_port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    async with serve(bare.connection, "127.0.0.1", 0, max_size=None) as ws_server:
        _announce(grpc_port, ws_server.sockets[0].getsockname()[1])
        await _wait_for_signal()
    await server.stop(0)


async def run_ours(data_dir: Path, token: str) -> None:
    from phoneuse_runtime.app import build_app
    from phoneuse_runtime.config.settings import Settings
    from phoneuse_runtime.gateway.server import Gateway

    settings = Settings(
        device="sim",
        grpc_listen="127.0.0.1:0",
        gateway_listen="127.0.0.1:0",
        data_dir=data_dir,
        token=token,
        gateway_max_frames_per_second=10_000,
    )
    app = await build_app(settings, token=token)
    gateway = app.component("gateway")
    assert isinstance(gateway, Gateway)
    _announce(app.port, gateway.port)
    await _wait_for_signal()
    await app.stop(grace_s=0)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("kind", choices=["bare", "ours"])
    parser.add_argument("--data-dir", type=Path)
    parser.add_argument("--token", default="bench-token")
    args = parser.parse_args()
    if args.kind == "ours":
        asyncio.run(run_ours(args.data_dir, args.token))
    else:
        asyncio.run(run_bare())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
