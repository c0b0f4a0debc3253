"""The red team's fixtures are the house's own, imported from where they live (never copied):
tests/conftest.py's gRPC `client` and `make_client` reach here as a parent's; the gateway's
(`make_gateway`, `gateway_server`, `iris`) and the agent part's (`server`, `app`: a paired Iris
app beside the agent's gRPC client) are brought in below, and so is the memory's fake
embeddings endpoint (`fake_embeddings`)."""

from __future__ import annotations

from ..gateway.agent.conftest import app, server
from ..gateway.conftest import gateway_server, grpc_client, iris, make_gateway
from ..memory.test_embeddings import fake_embeddings

__all__ = ["app", "fake_embeddings", "gateway_server", "grpc_client", "iris", "make_gateway", "server"]
