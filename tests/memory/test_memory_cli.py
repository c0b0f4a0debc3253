"""`phoneuse-runtime memory export | import | stats`, run beside a live server on its data dir."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import grpc

from phoneuse_runtime.rpc import protocol_pb2 as pb
from phoneuse_runtime.rpc import protocol_pb2_grpc as pb_grpc

from ..conftest import AUTH
from ..serving import serve


def cli(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("PHONEUSE_")}
    return subprocess.run(
        [sys.executable, "-m", "phoneuse_runtime", "memory", "--data-dir", str(data_dir), *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=environ,
    )


def remember(stub: pb_grpc.AndroidRuntimeStub, params: dict[str, str]) -> str:
    request = pb.ActionRequest(
        action_type="REMEMBER", params=params, request_id=uuid.uuid4().hex, timeout_ms=10_000
    )
    response = stub.Execute(request, metadata=AUTH, timeout=20)
    assert response.success, response.error
    result: str = json.loads(response.result_json)["id"]
    return result


def memory(stub: pb_grpc.AndroidRuntimeStub, filters: dict[str, str]) -> list[dict[str, object]]:
    response = stub.Query(
        pb.QueryRequest(query_type=pb.MEMORY, filters=filters, limit=200), metadata=AUTH, timeout=20
    )
    return [json.loads(r) for r in response.results_json]


def test_export_stats_and_import_while_servers_run(tmp_path: Path) -> None:
    source, target = tmp_path / "source", tmp_path / "target"
    with serve(source) as served, grpc.insecure_channel(f"127.0.0.1:{served.port}") as channel:
        stub = pb_grpc.AndroidRuntimeStub(channel)
        ann = remember(stub, {"kind": "person", "name": "Ann Example", "emails": "Ann@Example.org"})
        remember(stub, {"kind": "note", "name": "Ann's dog", "text": "called Biscuit", "related_to": ann})
        exported = cli(source, "export")
        assert exported.returncode == 0, exported.stderr
        records = [json.loads(line) for line in exported.stdout.splitlines()]
        stats = cli(source, "stats", "--json")
        assert stats.returncode == 0, stats.stderr
        counts = json.loads(stats.stdout)
        remember(stub, {"name": "after the export"})  # the server writes on while the CLI reads
    nodes = [r for r in records if r["type"] == "node"]
    edges = [r for r in records if r["type"] == "edge"]
    assert counts["nodes"] == len(nodes) and counts["edges"] == len(edges) >= 1
    assert counts["sources"]["agent"] == 2 and counts["kinds"]["note"] == 1
    assert {"contacts", "sms"} <= set(counts["sources"])  # the seed phone, ingested by the server
    person = next(n for n in nodes if n["name"] == "Ann Example")
    assert "email:ann@example.org" in person["keys"]
    assert not any("482913" in json.dumps(n) for n in nodes)  # the seed's one-time code, masked
    (tmp_path / "export.jsonl").write_text(exported.stdout, encoding="utf-8")
    with (
        serve(target, env={"PHONEUSE_MEMORY_INGEST": "false"}) as served,
        grpc.insecure_channel(f"127.0.0.1:{served.port}") as channel,
    ):
        stub = pb_grpc.AndroidRuntimeStub(channel)
        imported = cli(target, "import", str(tmp_path / "export.jsonl"))
        assert imported.returncode == 0, imported.stderr
        assert f"imported {len(nodes)} node(s) and {len(edges)} edge(s)" in imported.stderr
        [dog] = memory(stub, {"q": "biscuit"})
        [owner] = memory(stub, {"q": "ann example", "kind": "person"})
        assert dog["related_to"] == [owner["id"]]
        # The same export again: people it knows by their keys are not duplicated.
        again = cli(target, "import", str(tmp_path / "export.jsonl"))
        assert again.returncode == 0, again.stderr
        assert len(memory(stub, {"q": "ann example", "kind": "person"})) == 1


def test_a_bad_import_changes_nothing(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    lines = [
        json.dumps({"type": "node", "id": "mem-1", "kind": "fact", "name": "fine", "keys": []}),
        json.dumps({"type": "edge", "relation": "related_to", "from": "mem-1", "to": "mem-7"}),
    ]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = cli(data_dir, "import", str(bad))
    assert done.returncode == 2, done
    assert done.stderr.strip() == (
        f"phoneuse-runtime: {bad}: line 2: an edge between nodes not in the file before it; "
        "nothing was imported"
    )
    for content, message in (
        ("{not json", "line 1: not JSON"),
        ("[1, 2]", "line 1: not a JSON object"),
        ('{"type": "vertex"}', "line 1: unknown record type 'vertex' (node or edge)"),
        ('{"type": "node", "id": "x", "kind": 3, "name": "n"}', "line 1: 'kind' must be a string"),
    ):
        bad.write_text(content, encoding="utf-8")
        done = cli(data_dir, "import", str(bad))
        assert (done.returncode, message in done.stderr) == (2, True), done.stderr
    stats = json.loads(cli(data_dir, "stats", "--json").stdout)
    assert (stats["nodes"], stats["edges"]) == (0, 0)


def test_export_and_stats_need_a_memory(tmp_path: Path) -> None:
    done = cli(tmp_path / "nothing", "stats")
    assert done.returncode == 2, done
    assert "no memory database here" in done.stderr and "Traceback" not in done.stderr
