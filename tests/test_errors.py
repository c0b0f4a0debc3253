"""One error layer: whatever a handler lets escape becomes one coded failure, for queries as for
actions, and only the call's own deadline is TIMEOUT."""

from __future__ import annotations

import asyncio
import socket

import grpc
import pytest

from phoneuse_runtime.device.base import Contact, ContactFilter
from phoneuse_runtime.device.sim.device import SimDevice
from phoneuse_runtime.kernel.errors import DeviceUnavailable, Internal, Timeout, translate
from phoneuse_runtime.rpc import protocol_pb2 as pb

from .conftest import AUTH, ServerFactory


class Escape(BaseException):
    """Not an Exception: what a careless library might raise."""


class BrokenContacts(SimDevice):
    """A phone whose contacts provider fails in the given way."""

    def __init__(self, failure: BaseException) -> None:
        super().__init__()
        self.failure = failure

    async def contacts(self, where: ContactFilter = ContactFilter()) -> list[Contact]:
        raise self.failure


@pytest.mark.parametrize(
    ("failure", "status", "details"),
    [
        (
            TimeoutError("timed out"),
            grpc.StatusCode.UNAVAILABLE,
            "DEVICE_UNAVAILABLE: CONTACTS query: the connection to the phone failed (TimeoutError)",
        ),
        (
            ConnectionResetError(104, "reset"),
            grpc.StatusCode.UNAVAILABLE,
            "DEVICE_UNAVAILABLE: CONTACTS query: the connection to the phone failed (ConnectionResetError)",
        ),
        (
            KeyError("bug"),
            grpc.StatusCode.INTERNAL,
            "INTERNAL: CONTACTS query failed unexpectedly; see the server log",
        ),
        (
            Escape(),
            grpc.StatusCode.INTERNAL,
            "INTERNAL: CONTACTS query failed unexpectedly; see the server log",
        ),
    ],
)
async def test_a_query_handlers_escape_is_translated_once(
    make_client: ServerFactory, failure: BaseException, status: grpc.StatusCode, details: str
) -> None:
    client = await make_client(device=BrokenContacts(failure))
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await client.stub.Query(pb.QueryRequest(query_type=pb.CONTACTS), metadata=AUTH, timeout=10)
    assert (info.value.code(), info.value.details()) == (status, details)
    # The server carries on.
    results, _, _ = await client.query(pb.MEMORY)
    assert results == []


def _a_real_socket_timeout() -> OSError:
    left, right = socket.socketpair()
    with left, right:
        left.settimeout(0.001)
        try:
            left.recv(1)  # nothing was sent
        except OSError as exc:
            return exc
    raise AssertionError("recv returned")


def test_translate_is_keyed_by_class() -> None:
    assert isinstance(translate(_a_real_socket_timeout(), doing="X"), DeviceUnavailable)
    assert isinstance(translate(asyncio.TimeoutError(), doing="X"), DeviceUnavailable)
    own = Timeout("the call's own")
    assert translate(own, doing="X") is own
    assert isinstance(translate(ValueError("timeout"), doing="X"), Internal)  # never by its text
