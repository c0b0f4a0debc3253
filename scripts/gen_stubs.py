"""Regenerates the shipped gRPC stubs from proto/protocol.proto.

Run after editing the proto: `python scripts/gen_stubs.py [OUT_DIR]`. The output is
never edited by hand; tests/test_stubs.py regenerates into a temporary folder and
compares. Needs grpcio-tools (a dev dependency); the installed package does not.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROTO_DIR = ROOT / "proto"
OUT_DIR = ROOT / "phoneuse_runtime" / "rpc"


def generate(out_dir: Path) -> None:
    import grpc_tools
    from grpc_tools import protoc

    include = Path(grpc_tools.__file__).parent / "_proto"
    args = [
        "protoc",
        f"-I{PROTO_DIR}",
        f"-I{include}",
        f"--python_out={out_dir}",
        f"--grpc_python_out={out_dir}",
        f"--mypy_out={out_dir}",
        f"--mypy_grpc_out={out_dir}",
        str(PROTO_DIR / "protocol.proto"),
    ]
    if protoc.main(args) != 0:
        raise SystemExit("protoc failed")
    # protoc writes a top-level import; the stubs live inside a package.
    for name in ("protocol_pb2_grpc.py", "protocol_pb2_grpc.pyi"):
        path = out_dir / name
        text = path.read_text()
        path.write_text(text.replace("\nimport protocol_pb2 as", "\nfrom . import protocol_pb2 as"))


if __name__ == "__main__":
    generate(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT_DIR)
