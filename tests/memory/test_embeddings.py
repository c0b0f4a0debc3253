"""Semantic search through a local fake of an OpenAI-compatible embeddings endpoint: vectors made
in the background, `q` fused with them by reciprocal-rank fusion, and lexical search as before
when the endpoint fails or is not configured."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from phoneuse_runtime.config.settings import load_settings
from phoneuse_runtime.memory import Memory
from phoneuse_runtime.rpc import protocol_pb2 as pb

from ..conftest import Client, ServerFactory

# Each dimension is a concept; a text's vector counts the words of each concept it holds.
CONCEPTS = [
    {"pizza", "sushi", "dinner", "restaurant", "food", "hungry", "lunch"},
    {"dentist", "doctor", "teeth", "clinic", "health"},
    {"flight", "airport", "travel", "trip", "hotel"},
]


def vector(text: str) -> list[float]:
    words = {w.strip(".,?!").lower() for w in text.split()}
    return [0.01 + len(words & concept) for concept in CONCEPTS]


class FakeEmbeddings:
    """An embeddings endpoint on 127.0.0.1:0 that records what it was asked."""

    def __init__(self) -> None:
        self.inputs: list[str] = []
        self.failing = False
        self.padding = 0  # numbers added to every vector (another model, or a squatter's)
        self.junk = 0  # bytes of whitespace after the JSON: an answer that never ends
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if fake.failing or self.path != "/v1/embeddings":
                    self.send_response(500)
                    self.end_headers()
                    return
                fake.inputs += body["input"]
                data = [
                    {"index": i, "embedding": vector(t) + [0.0] * fake.padding}
                    for i, t in enumerate(body["input"])
                ]
                answer = json.dumps({"object": "list", "data": data, "model": body["model"]}).encode()
                answer += b" " * fake.junk
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *_args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1/embeddings"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake_embeddings() -> Iterator[FakeEmbeddings]:
    fake = FakeEmbeddings()
    yield fake
    fake.close()


def memory_of(client: Client) -> Memory:
    memory = client.app.component("memory")
    assert isinstance(memory, Memory)
    return memory


async def names(client: Client, filters: dict[str, str]) -> list[str]:
    found, _, _ = await client.query(pb.MEMORY, filters)
    return [r["name"] for r in found]


async def test_q_finds_by_meaning_through_the_endpoint(
    make_client: ServerFactory, fake_embeddings: FakeEmbeddings
) -> None:
    client = await make_client(memory_embeddings_url=fake_embeddings.url, memory_embeddings_model="fake-1")
    await client.ok("REMEMBER", {"name": "Pizza tonight?", "text": "the usual place"})
    await client.ok("REMEMBER", {"name": "Dentist on Tuesday", "kind": "event"})
    await client.ok("REMEMBER", {"name": "Flight to Lisbon", "tags": "trip"})
    await memory_of(client).vectorized()
    assert sorted(fake_embeddings.inputs) == sorted(
        ["Pizza tonight?\nthe usual place", "Dentist on Tuesday\n", "Flight to Lisbon\n"]
    )
    # No word in common, the same meaning: the vectors find it.
    assert (await names(client, {"q": "restaurant"}))[0] == "Pizza tonight?"
    assert (await names(client, {"q": "teeth clinic"}))[0] == "Dentist on Tuesday"
    # Both lists agree: first; the other filters still apply to what the vectors bring.
    assert (await names(client, {"q": "dentist"}))[0] == "Dentist on Tuesday"
    assert await names(client, {"q": "restaurant", "kind": "event"}) == []
    assert await names(client, {"q": "airport hotel", "tag": "trip"}) == ["Flight to Lisbon"]
    assert await names(client, {"q": "airport hotel", "kind": "event"}) == []
    found, total, _ = await client.query(pb.MEMORY, {"q": "restaurant"})
    assert (total, [r["name"] for r in found]) == (1, ["Pizza tonight?"])  # the others are not near
    # A changed node is embedded again; a forgotten one leaves its vector with it.
    before = len(fake_embeddings.inputs)
    pizza = (await client.query(pb.MEMORY, {"q": "pizza"}))[0][0]
    await client.ok("FORGET", {"id": pizza["id"]})
    await memory_of(client).vectorized()
    assert len(fake_embeddings.inputs) == before + 1  # the query "pizza" only; nothing re-embedded
    assert "Pizza tonight?" not in await names(client, {"q": "restaurant"})

    def vectors(graph: Any) -> int:
        return int(graph.conn.execute("SELECT count(*) FROM vectors").fetchone()[0])

    assert await memory_of(client).read(vectors) == 2


async def test_a_failing_endpoint_leaves_search_lexical(
    make_client: ServerFactory, fake_embeddings: FakeEmbeddings
) -> None:
    fake_embeddings.failing = True
    client = await make_client(memory_embeddings_url=fake_embeddings.url)
    await client.ok("REMEMBER", {"name": "Pizza tonight?"})
    await memory_of(client).vectorized()
    assert memory_of(client).vector_failures >= 1
    assert await names(client, {"q": "pizza"}) == ["Pizza tonight?"]
    assert await names(client, {"q": "restaurant"}) == []
    fake_embeddings.failing = False  # back: the next change embeds what was missing
    await client.ok("REMEMBER", {"name": "Sushi friday"})
    await memory_of(client).vectorized()
    assert set(await names(client, {"q": "restaurant"})) == {"Pizza tonight?", "Sushi friday"}


async def test_without_an_endpoint_nothing_is_embedded(client: Client) -> None:
    await client.ok("REMEMBER", {"name": "Pizza tonight?"})
    assert memory_of(client)._vectorizer is None
    assert await names(client, {"q": "restaurant"}) == []


def test_the_endpoint_is_a_setting(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text(
        '[memory.embeddings]\nurl = "http://127.0.0.1:8080/v1/embeddings"\nmodel = "m"\n'
    )
    settings = load_settings({"data_dir": tmp_path})
    assert (settings.memory_embeddings_url, settings.memory_embeddings_model) == (
        "http://127.0.0.1:8080/v1/embeddings",
        "m",
    )


async def vector_count(client: Client) -> int:
    def count(graph: Any) -> int:
        return int(graph.conn.execute("SELECT count(*) FROM vectors").fetchone()[0])

    return await memory_of(client).read(count)


async def test_a_loopback_endpoint_is_warned_about(
    tmp_path: Path, make_client: ServerFactory, caplog: pytest.LogCaptureFixture
) -> None:
    url = "http://127.0.0.1:9/v1/embeddings"  # nothing listens there; nothing is sent in this test
    with caplog.at_level(logging.WARNING, logger="phoneuse_runtime.memory.component"):
        await make_client(memory_embeddings_url=url, memory_ingest=False)
    assert any("every app can reach it" in r.getMessage() for r in caplog.records)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PHONEUSE_")}
    env.update(PHONEUSE_MEMORY_EMBEDDINGS_URL=url)
    doctor = subprocess.run(
        [sys.executable, "-m", "phoneuse_runtime", "doctor", "--data-dir", str(tmp_path / "d")],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert "[warn] embeddings: the embeddings endpoint http://127.0.0.1:9/v1/embeddings is on loopback" in (
        doctor.stdout
    ), doctor.stdout
    assert "every app can reach it" in doctor.stdout
    env.update(PHONEUSE_MEMORY_EMBEDDINGS_URL="https://embed.example.org/v1/embeddings")
    doctor = subprocess.run(
        [sys.executable, "-m", "phoneuse_runtime", "doctor", "--data-dir", str(tmp_path / "d")],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert "[ok  ] embeddings: https://embed.example.org/v1/embeddings (not on loopback)" in doctor.stdout
