"""Semantic search, when `memory.embeddings.url` names an OpenAI-compatible embeddings endpoint
(a local llama.cpp or Ollama server, say `http://127.0.0.1:8080/v1/embeddings`).

Vectors live in the `vectors` table beside the nodes, computed in the background after every
change (component.py), each with a digest of the name and text it was made from, so a vector
made from text that changed meanwhile is never stored. A query embeds `q` and scans the vectors
of the SCAN most recently stored nodes (cosine on unit vectors, at least MIN_COSINE); MEMORY
fuses that list with the lexical one by reciprocal-rank fusion (search.py). Without a URL
nothing here runs, and nothing is ever downloaded: the endpoint is the user's own.

The endpoint is trusted with what it is sent, not with what it answers: an endpoint on the
phone's loopback can be taken by any app while the real one is down (a port is anyone's to
bind), so the log and `doctor` warn about one (`squattable`). An answer is read up to
MAX_ANSWER_BYTES and no further; a vector has at most MAX_DIMENSIONS numbers; and the first
vectors stored fix the dimension (kept in the file's meta table): a vector of another dimension
later is refused, with a log line saying what to do if the model really changed.
"""

from __future__ import annotations

import hashlib
import json
import math
import sqlite3
from array import array

BATCH = 32  # texts per request
# The largest vectors of common models are 3072 (OpenAI's text-embedding-3-large) to 4096 numbers;
# a float in JSON takes about 20 bytes, so a batch of the largest takes about 2.6 MB.
MAX_DIMENSIONS = 8192
MAX_ANSWER_BYTES = 8 * 1024 * 1024
DIMENSIONS_KEY = "embeddings_dimensions"  # the meta table's record of the fixed dimension
SCAN = 20_000  # vectors a query compares, newest first
TIMEOUT_S = 30.0
QUERY_TIMEOUT_S = 5.0
# Below this cosine a node is not near `q` at all: without a floor every query would "match"
# every node with a vector, and total_count would say so.
MIN_COSINE = 0.5


class EmbeddingsError(Exception):
    """The endpoint did not answer with embeddings."""


def embed(url: str, model: str, texts: list[str], *, timeout_s: float = TIMEOUT_S) -> list[list[float]]:
    """POSTs `{"model", "input"}` and returns the `data[].embedding`s in input order."""
    import urllib.request  # here: half a megabyte resident, for servers that set an endpoint

    body = json.dumps({"model": model, "input": texts}).encode()
    request = urllib.request.Request(  # noqa: S310 (the user's own endpoint, http or https)
        url, data=body, headers={"Content-Type": "application/json"}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:  # noqa: S310
            data = response.read(MAX_ANSWER_BYTES + 1)
        if len(data) > MAX_ANSWER_BYTES:
            raise EmbeddingsError(f"{url}: the answer passes {MAX_ANSWER_BYTES} bytes; it is not read")
        answer = json.loads(data)
        rows = sorted(answer["data"], key=lambda row: row["index"])
        for row in rows:
            if len(row["embedding"]) > MAX_DIMENSIONS:
                raise EmbeddingsError(
                    f"{url}: a vector of {len(row['embedding'])} numbers; at most {MAX_DIMENSIONS} are taken"
                )
        vectors = [[float(x) for x in row["embedding"]] for row in rows]
    except (OSError, ValueError, KeyError, TypeError) as exc:  # URLError is an OSError
        raise EmbeddingsError(f"{url}: {exc}") from exc
    if len(vectors) != len(texts):
        raise EmbeddingsError(f"{url}: {len(vectors)} embeddings for {len(texts)} inputs")
    return vectors


def squattable(url: str) -> bool:
    """Whether `url` names a loopback address: on a phone, any app can listen there while the
    real endpoint is down, and would then receive every text the memory embeds."""
    import ipaddress
    from urllib.parse import urlsplit

    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


LOOPBACK_WARNING = (
    "the embeddings endpoint %s is on loopback: on a phone every app can reach it, and any app "
    "can listen on its port while it is down and receive every contact, message and query the "
    "memory embeds; prefer an endpoint off the phone (https), or leave memory.embeddings.url empty"
)


def digest(name: str, text: str) -> str:
    return hashlib.sha256(f"{name}\x00{text}".encode()).hexdigest()[:16]


def pack(vector: list[float]) -> bytes:
    """The vector scaled to unit length, as float32 bytes."""
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return array("f", [x / norm for x in vector]).tobytes()


def nearest(conn: sqlite3.Connection, query: list[float], *, limit: int) -> list[tuple[int, float]]:
    """The `limit` nodes whose vectors are closest to `query`, closest first, with the cosine."""
    unit = array("f")
    unit.frombytes(pack(query))
    scored: list[tuple[float, int]] = []
    for node, blob in conn.execute("SELECT node, vec FROM vectors ORDER BY node DESC LIMIT ?", (SCAN,)):
        vector = array("f")
        vector.frombytes(blob)
        if len(vector) == len(unit):
            cosine = sum(a * b for a, b in zip(unit, vector, strict=True))
            if cosine >= MIN_COSINE:
                scored.append((cosine, node))
    scored.sort(reverse=True)
    return [(node, score) for score, node in scored[:limit]]
