"""Push: `fcm.register` stores a device's push details, and an offline device with an ntfy
topic is woken by an empty POST to the ntfy server (a local HTTP server here)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from phoneuse_runtime.config.settings import ConfigError, load_settings

from .conftest import WAIT_S, GatewayFactory, GatewayServer


@dataclass
class Ntfy:
    url: str
    posts: list[tuple[str, str, bytes]] = field(default_factory=list)  # method, path, body
    arrived: threading.Event = field(default_factory=threading.Event)

    async def wait(self) -> tuple[str, str, bytes]:
        assert await asyncio.to_thread(self.arrived.wait, WAIT_S), "no wake-up arrived"
        return self.posts[0]


@pytest.fixture
def ntfy() -> Iterator[Ntfy]:
    record = Ntfy("")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            record.posts.append((self.command, self.path, body))
            self.send_response(200)
            self.end_headers()
            record.arrived.set()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    record.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield record
    server.shutdown()
    server.server_close()


def note(title: str) -> dict[str, object]:
    return {"kind": "generic", "title": title, "body": "", "ts": 1}


async def test_an_offline_device_with_a_topic_gets_an_empty_wake_up(
    make_gateway: GatewayFactory, ntfy: Ntfy
) -> None:
    server = await make_gateway(ntfy_url=ntfy.url + "/")
    token = server.pair().token
    client = await server.connect(token)
    await client.send_frame("fcm.register", {"fcm_token": "fcm-1", "ntfy_topic": "iris_wake-1"}, id=5)
    assert (await client.request("ping"))["type"] == "pong"  # fcm.register succeeded silently
    assert not [f for f in client.received if f.get("id") == 5]
    await server.gateway.broadcast("notification", note("while online"))  # no wake-up: it is online
    await client.next("notification")
    await client.close()
    await server.gateway.broadcast("notification", note("while offline"))
    await server.gateway.broadcast("notification", note("and again"))  # one wake-up is enough
    method, path, body = await ntfy.wait()
    assert (method, path, body) == ("POST", "/iris_wake-1", b"")
    assert server.gateway.waker is not None
    assert server.gateway.waker.started == 1


async def test_hello_can_carry_the_topic(make_gateway: GatewayFactory, ntfy: Ntfy) -> None:
    server = await make_gateway(ntfy_url=ntfy.url)
    client = await server.connect(ntfy_topic="from-hello")
    await client.close()
    await server.gateway.broadcast("typing", {"on": True})  # droppable: never wakes anyone
    await server.gateway.broadcast("notification", note("x"))
    assert (await ntfy.wait())[1] == "/from-hello"
    assert len(ntfy.posts) == 1


async def test_without_a_topic_or_an_ntfy_server_nothing_is_posted(
    make_gateway: GatewayFactory, ntfy: Ntfy
) -> None:
    server = await make_gateway(ntfy_url=ntfy.url)
    client = await server.connect()
    await client.close()
    await server.gateway.broadcast("notification", note("x"))
    assert server.gateway.waker is not None
    assert server.gateway.waker.started == 0


@pytest.mark.parametrize(
    "payload",
    [
        {},
        {"ntfy_topic": "has a space"},
        {"ntfy_topic": "x" * 65},
        {"ntfy_topic": "../../admin"},
        {"fcm_token": 7},
        {"fcm_token": "f" * 5000},
    ],
)
async def test_bad_push_details_are_unsupported(
    gateway_server: GatewayServer, payload: dict[str, object]
) -> None:
    client = await gateway_server.connect()
    error = await client.request("fcm.register", payload)
    assert error["payload"]["code"] == "unsupported"
    assert (await client.request("ping"))["type"] == "pong"


async def test_a_bad_topic_in_hello_is_refused(gateway_server: GatewayServer) -> None:
    client = await gateway_server.open()
    answer = await client.hello(gateway_server.pair().token, ntfy_topic="no/slashes")
    assert answer["payload"]["code"] == "auth"


def test_an_ntfy_url_must_be_http(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('ntfy_url = "file:///etc/passwd"\n')
    with pytest.raises(ConfigError, match=r"ntfy_url \(.*config\.toml\): must be an http:// or https:// URL"):
        load_settings({"data_dir": tmp_path})
