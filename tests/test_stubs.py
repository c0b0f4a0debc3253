"""The shipped stubs are exactly what grpcio-tools makes of proto/protocol.proto, which is the contract."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from google.protobuf import descriptor_pb2

from phoneuse_runtime.rpc import protocol_pb2

ROOT = Path(__file__).resolve().parent.parent
SHARED_PROTO = ROOT.parent / "shared" / "spec" / "protocol.proto"


def _load_generator() -> object:
    spec = importlib.util.spec_from_file_location("gen_stubs", ROOT / "scripts" / "gen_stubs.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_shipped_stubs_match_a_fresh_generation(tmp_path: Path) -> None:
    pytest.importorskip("grpc_tools")
    gen = _load_generator()
    gen.generate(tmp_path)  # type: ignore[attr-defined]
    shipped = ROOT / "phoneuse_runtime" / "rpc"
    for name in ("protocol_pb2.py", "protocol_pb2.pyi", "protocol_pb2_grpc.py", "protocol_pb2_grpc.pyi"):
        assert (tmp_path / name).read_text() == (shipped / name).read_text(), (
            f"{name} is stale: run scripts/gen_stubs.py"
        )


def _descriptor_of(proto: Path, tmp_path: Path) -> descriptor_pb2.FileDescriptorProto:
    import grpc_tools
    from grpc_tools import protoc

    out = tmp_path / f"{proto.parent.name}.pb"
    include = Path(grpc_tools.__file__).parent / "_proto"
    assert (
        protoc.main(
            ["protoc", f"-I{proto.parent}", f"-I{include}", f"--descriptor_set_out={out}", str(proto)]
        )
        == 0
    )
    file_set = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())
    return file_set.file[0]


def _without_json_names(proto: descriptor_pb2.FileDescriptorProto) -> descriptor_pb2.FileDescriptorProto:
    """protoc fills json_name in descriptor sets; the embedded descriptor leaves it implied."""
    copy = descriptor_pb2.FileDescriptorProto()
    copy.CopyFrom(proto)
    messages = list(copy.message_type)
    while messages:
        message = messages.pop()
        messages.extend(message.nested_type)
        for field in message.field:
            field.ClearField("json_name")
    return copy


def test_proto_is_the_shared_contract_on_the_wire(tmp_path: Path) -> None:
    """Only comments may differ from ../shared/spec/protocol.proto."""
    pytest.importorskip("grpc_tools")
    if not SHARED_PROTO.exists():
        pytest.skip("shared/spec is not beside this checkout")
    ours = _descriptor_of(ROOT / "proto" / "protocol.proto", tmp_path)
    theirs = _descriptor_of(SHARED_PROTO, tmp_path)
    assert ours == theirs


def test_runtime_descriptor_matches_the_proto(tmp_path: Path) -> None:
    """What the installed package puts on the wire is the .proto's descriptor."""
    pytest.importorskip("grpc_tools")
    shipped = descriptor_pb2.FileDescriptorProto()
    protocol_pb2.DESCRIPTOR.CopyToProto(shipped)
    assert shipped == _without_json_names(_descriptor_of(ROOT / "proto" / "protocol.proto", tmp_path))


def test_stubs_import_without_grpc_tools() -> None:
    """Termux has no grpcio-tools: importing the package must not need it."""
    import subprocess

    code = (
        "import sys; sys.modules['grpc_tools'] = None\n"
        "import phoneuse_runtime.rpc.server, phoneuse_runtime.app, phoneuse_runtime.cli.main\n"
        "assert 'grpc_tools' not in [m for m in sys.modules if sys.modules[m] is not None]\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
