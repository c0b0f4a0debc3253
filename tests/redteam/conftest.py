"""The red team's fixtures are the house's own, imported from where they live (never copied):
tests/conftest.py's gRPC `client` and `make_client` reach here as a parent's; the gateway's
(`make_gateway`, `gateway_server`, `iris`) and the agent part's (`server`, `app`: a paired Iris
app beside the agent's gRPC client) are brought in below, and so are the memory's fake
embeddings endpoint (`fake_embeddings`) and the fake adb phone behind the real adb server
(`serve_adb`, with the session's `adb_server` and `fake_device_factory`)."""

from __future__ import annotations

from ..device.adb.conftest import adb_server, fake_device_factory, serve_adb
from ..gateway.agent.conftest import app, server
from ..gateway.conftest import gateway_server, grpc_client, iris, make_gateway
from ..memory.test_embeddings import fake_embeddings

__all__ = [
    "adb_server",
    "app",
    "fake_device_factory",
    "fake_embeddings",
    "gateway_server",
    "grpc_client",
    "iris",
    "make_gateway",
    "serve_adb",
    "server",
]
