"""TYPE_TEXT's device round trips on adb: the streams the fake adbd opened for one TYPE_TEXT
into the focused field, with uiautomator2's input method installed and without it (uiautomator2
3.x installs it only on its first send_keys; typing then pastes, the owner's clipboard put back),
for ASCII, Unicode with emoji and shell metacharacters with a newline, each twice on one
connection; each read back checked, and the owner's clipboard.

The runtime is built in-process by the production factory against the fake adbd behind the
isolated real adb server. The first stream of every UI action is the owner's-controls read of
what is in front (runtime._front); the rest is the typing.

    python bench/bench_typing.py [--tree /work/main]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import uuid
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
TOKEN = "bench-typing-token"
AUTH = (("authorization", f"Bearer {TOKEN}"),)
KEEP_FIELD = "com.google.android.keep:id/edit_note_text"
TEXTS = {
    "hello world": "hello world",
    "Olá 你好 🚲": "Olá 你好 🚲",
    "`'\"$;&|` + newline": 'it\'s "q" $HOME; a & b | c\nline two',
}


OWNERS_CLIP = "the owner's copied text"


async def run(*, keyboard: bool) -> list[list[str]]:
    import grpc
    from _fake_adb import adb_app

    from phoneuse_runtime.rpc import protocol_pb2 as pb
    from phoneuse_runtime.rpc import protocol_pb2_grpc as pb_grpc
    from tests.fakes import seed
    from tests.fakes.phone import FakePhone

    try:  # a tree with settling (issue 17): count the typing's own streams, not settling's looks
        import phoneuse_runtime.screen.settle  # noqa: F401

        own: dict[str, str] = {"settle_ms": "0"}
    except ImportError:
        own = {}
    state = seed.default_state()
    if keyboard:
        u2 = seed.u2_app_package()
        state.packages[u2.name] = u2
    state.clipboard = OWNERS_CLIP
    rows = []
    async with adb_app(
        "bench-typing",
        token=TOKEN,
        phone=FakePhone(state),
        gateway=False,
        memory_ingest=False,  # its reads would interleave with the streams counted
    ) as rig:
        adbd = rig.adbd
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{rig.app.port}")
        stub = pb_grpc.AndroidRuntimeStub(channel)

        async def execute(action: str, params: dict[str, str]) -> dict[str, Any]:
            request = pb.ActionRequest(
                action_type=action, params=params, request_id=uuid.uuid4().hex, timeout_ms=20_000
            )
            response = await stub.Execute(request, metadata=AUTH)
            assert response.success, response.error
            result: dict[str, Any] = json.loads(response.result_json)
            return result

        await execute("OPEN_APP", {"package": seed.KEEP})
        await execute("TAP", {"resource_id": KEEP_FIELD})
        texts = [*TEXTS.items(), *TEXTS.items()]  # each twice on the connection
        for n, (label, text) in enumerate(texts, 1):
            before = len(adbd.opened)
            typed = await execute("TYPE_TEXT", {"text": text, **own})
            streams = adbd.opened[before:]
            front = 1 if streams and streams[0].endswith("dumpsys window windows") else 0
            rows.append(
                [
                    "yes" if keyboard else "no",
                    f"{n}. {label}",
                    str(len(streams)),
                    str(len(streams) - front),
                    str(typed.get("read_back") == text),
                    str(state.clipboard == OWNERS_CLIP),
                ]
            )
        await channel.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, default=REPO, help="the checkout whose runtime runs")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))  # the fakes: this tree's
    sys.path.insert(0, str(args.tree.resolve()))  # the runtime: --tree's
    sys.path.insert(0, str(REPO / "bench"))
    from _common import machine, table

    import phoneuse_runtime

    rows = [*asyncio.run(run(keyboard=True)), *asyncio.run(run(keyboard=False))]
    print(f"runtime from {Path(phoneuse_runtime.__file__).parent.parent}; {machine()}")
    header = ["keyboard", "text", "streams", "after a front read", "read back exactly", "clipboard kept"]
    print(table(header, rows))


if __name__ == "__main__":
    main()
