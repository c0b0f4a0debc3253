"""Server processes the benchmarks talk to; started by `_common.ServerProcess`, never by hand.

    python bench/_servers.py bare-echo        # bare grpc.aio: Execute answers a fixed ActionResponse
    python bench/_servers.py bare-fanout      # bare grpc.aio: Execute puts an Event on every stream's queue
    python bench/_servers.py ours --token T   # the composition root `build_app` on the sim device

Each prints `PORT <n>` on stdout once it serves, and stops cleanly on SIGTERM or SIGINT.
`--profile FILE` profiles the server between SIGUSR1 and SIGUSR2 and writes the stats there on exit.

The bare servers import only grpc and the generated messages, so that their memory and
per-call cost are the floor ours is compared against.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc

from phoneuse_runtime.rpc import protocol_pb2 as pb

# Also in _common.py; not imported from there so that the bare servers load nothing extra.
SERVICE = "ai.lemon.phoneuse.mcpserver.protocol.AndroidRuntime"

# About the size of ours' SET_CLIPBOARD answer, so both put the same bytes on the wire.
FIXED_RESPONSE = pb.ActionResponse(
    request_id="0" * 32, success=True, result_json='{"via":"sim","length":1,"verified":true}', duration_ms=0
)


class Fanout:
    """The least a server can do to fan an event out: one asyncio.Queue per open stream."""

    def __init__(self) -> None:
        self.queues: set[asyncio.Queue[pb.Event]] = set()

    async def execute(self, request: pb.ActionRequest, context: Any) -> pb.ActionResponse:
        payload = {
            "package": request.params.get("package", ""),
            "title": request.params.get("title", ""),
            "text": request.params.get("text", ""),
            "key": request.request_id,
        }
        event = pb.Event(
            event_type="NOTIFICATION_POSTED",
            payload_json=json.dumps(payload),
            timestamp=time.time_ns() // 1_000_000,
            source="bare",
        )
        for queue in self.queues:
            queue.put_nowait(event)
        return FIXED_RESPONSE

    async def subscribe(self, request: pb.SubscribeRequest, context: Any) -> AsyncIterator[pb.Event]:
        queue: asyncio.Queue[pb.Event] = asyncio.Queue()
        self.queues.add(queue)
        try:
            await context.send_initial_metadata((("x-subscriber-id", request.subscriber_id),))
            while True:
                yield await queue.get()
        finally:
            self.queues.discard(queue)


async def echo(request: pb.ActionRequest, context: Any) -> pb.ActionResponse:
    return FIXED_RESPONSE


def _bare_server(kind: str) -> Any:
    handlers: dict[str, Any]
    if kind == "bare-echo":
        handlers = {
            "Execute": grpc.unary_unary_rpc_method_handler(
                echo,
                request_deserializer=pb.ActionRequest.FromString,
                response_serializer=pb.ActionResponse.SerializeToString,
            )
        }
    else:
        fanout = Fanout()
        handlers = {
            "Execute": grpc.unary_unary_rpc_method_handler(
                fanout.execute,
                request_deserializer=pb.ActionRequest.FromString,
                response_serializer=pb.ActionResponse.SerializeToString,
            ),
            "Subscribe": grpc.unary_stream_rpc_method_handler(
                fanout.subscribe,
                request_deserializer=pb.SubscribeRequest.FromString,
                response_serializer=pb.Event.SerializeToString,
            ),
        }
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, handlers),))
    return server


async def _wait_for_signal() -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()


def _announce(port: int) -> None:
    sys.stdout.write(f"PORT {port}\n")
    sys.stdout.flush()


async def run_bare(kind: str, listen: str) -> None:
    server = _bare_server(kind)
    port = server.add_insecure_port(listen)
    await server.start()
    _announce(port)
    await _wait_for_signal()
    await server.stop(0)


async def run_ours(listen: str, token: str, data_dir: Path) -> None:
    from phoneuse_runtime.app import build_app
    from phoneuse_runtime.config.settings import Settings

    settings = Settings(device="sim", grpc_listen=listen, data_dir=data_dir, token=token)
    app = await build_app(settings, token=token)
    _announce(app.port)
    await _wait_for_signal()
    await app.stop(grace_s=0)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("kind", choices=["bare-echo", "bare-fanout", "ours"])
    parser.add_argument("--listen", default="127.0.0.1:0")
    parser.add_argument("--token", default="bench-token")
    parser.add_argument("--data-dir", type=Path, help="ours only; default: a fresh temporary directory")
    parser.add_argument(
        "--profile",
        type=Path,
        help="cProfile between SIGUSR1 (start) and SIGUSR2 (stop); stats written here on exit",
    )
    args = parser.parse_args()

    if args.profile is not None:
        import cProfile

        profiler = cProfile.Profile()
        # Signal handlers run between bytecodes of the main thread, which is the loop's thread.
        signal.signal(signal.SIGUSR1, lambda *_: profiler.enable())
        signal.signal(signal.SIGUSR2, lambda *_: profiler.disable())
    if args.kind == "ours":
        with tempfile.TemporaryDirectory(prefix="phoneuse-bench-") as tmp:
            asyncio.run(run_ours(args.listen, args.token, args.data_dir or Path(tmp)))
    else:
        asyncio.run(run_bare(args.kind, args.listen))
    if args.profile is not None:
        profiler.disable()
        profiler.dump_stats(str(args.profile))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
