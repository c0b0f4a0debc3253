"""Media over real sockets: uploads (size checked up front, sha256 verified, one at a time),
pulls, and media the server produces."""

from __future__ import annotations

import hashlib

import pytest

from phoneuse_runtime.gateway.chat import chat_part
from phoneuse_runtime.gateway.chat.part import MEDIA_DIR

from ..conftest import GatewayFactory, GatewayServer, IrisClient
from .conftest import Owner, eventually, pull, upload

PICTURE = bytes(range(256)) * 40  # 10 240 bytes


def _media_files(server: GatewayServer) -> list[str]:
    return sorted(p.name for p in (server.data_dir / MEDIA_DIR).iterdir())


async def test_an_upload_is_offered_back_and_pulled_byte_for_byte(owner: Owner) -> None:
    offer = await upload(owner.phone, "ref-1", PICTURE, chunk=3000, filename="p.png")
    assert offer["type"] == "media.offer" and offer["id"] == owner.phone.next_id - 1
    media = offer["payload"]
    assert media["media_id"].startswith("med_") and media["media_ref"] == "ref-1"
    assert (media["kind"], media["mime"], media["size"], media["filename"]) == (
        "image",
        "image/png",
        len(PICTURE),
        "p.png",
    )
    assert _media_files(owner.server) == [media["media_id"]]
    # Any device of the owner can pull it.
    end, data = await pull(owner.tablet, media["media_id"])
    assert end["type"] == "media.pull.end" and end["payload"]["ok"] is True
    assert data == PICTURE


async def test_a_pull_streams_in_frames_no_bigger_than_the_limit(make_gateway: GatewayFactory) -> None:
    server = await make_gateway(gateway_max_frame_bytes=4096)
    client = await server.connect()
    offer = await upload(client, "big", PICTURE, chunk=4096)
    end, data = await pull(client, offer["payload"]["media_id"])
    assert end["payload"]["ok"] and data == PICTURE
    client.binary.clear()
    await pull(client, offer["payload"]["media_id"])
    assert max(len(b) for b in client.binary) <= 4096


async def test_an_empty_file_uploads(iris: IrisClient) -> None:
    offer = await upload(iris, "empty", b"")
    assert offer["type"] == "media.offer" and offer["payload"]["size"] == 0
    end, data = await pull(iris, offer["payload"]["media_id"])
    assert end["payload"]["ok"] and data == b""


async def test_too_large_is_refused_before_any_byte_moves(make_gateway: GatewayFactory) -> None:
    server = await make_gateway(gateway_max_media_bytes=1000)
    client = await server.connect()
    error = await client.request("media.upload.start", {"media_ref": "r", "size": 1001})
    assert error["type"] == "error" and error["payload"]["code"] == "media_too_large"
    assert "max_media_bytes (1000)" in error["payload"]["message"]
    await client.send_raw(b"x" * 10)  # no upload is open, so bytes are refused
    assert (await client.next("error"))["payload"]["code"] == "unsupported"
    assert _media_files(server) == []
    ok = await upload(client, "r", b"y" * 1000)
    assert ok["type"] == "media.offer"


async def test_a_sha256_mismatch_drops_the_upload_and_says_why(owner: Owner) -> None:
    await owner.phone.send_frame("media.upload.start", {"media_ref": "bad", "size": 4})
    await owner.phone.send_raw(b"abcd")
    wrong = hashlib.sha256(b"abce").hexdigest()
    error = await owner.phone.request("media.upload.end", {"media_ref": "bad", "sha256": wrong})
    assert error["type"] == "error" and error["payload"]["code"] == "unsupported"
    assert "sha256 mismatch" in error["payload"]["message"]
    assert _media_files(owner.server) == []
    again = await owner.phone.request("media.upload.end", {"media_ref": "bad", "sha256": wrong})
    assert again["payload"]["code"] == "not_found"
    refused = await owner.phone.request("message.send", {"text": "x", "media_refs": ["bad"]})
    assert refused["payload"]["code"] == "not_found"
    # The ref is free for a good upload.
    assert (await upload(owner.phone, "bad", b"abcd"))["type"] == "media.offer"


async def test_fewer_bytes_than_declared_is_refused(iris: IrisClient) -> None:
    await iris.send_frame("media.upload.start", {"media_ref": "short", "size": 10})
    await iris.send_raw(b"12345")
    error = await iris.request(
        "media.upload.end", {"media_ref": "short", "sha256": hashlib.sha256(b"12345").hexdigest()}
    )
    assert (
        error["payload"]["code"] == "unsupported"
        and "5 bytes arrived of the 10" in error["payload"]["message"]
    )


async def test_more_bytes_than_declared_drop_the_upload(gateway_server: GatewayServer) -> None:
    client = await gateway_server.connect()
    await client.send_frame("media.upload.start", {"media_ref": "long", "size": 3})
    await client.send_raw(b"12")
    await client.send_raw(b"34")
    error = await client.next("error")
    assert (
        error["payload"]["code"] == "unsupported" and "more than the 3 bytes" in error["payload"]["message"]
    )
    gone = await client.request("media.upload.end", {"media_ref": "long", "sha256": "0" * 64})
    assert gone["payload"]["code"] == "not_found"
    assert _media_files(gateway_server) == []


async def test_one_upload_at_a_time_and_a_ref_once(iris: IrisClient) -> None:
    await iris.send_frame("media.upload.start", {"media_ref": "a", "size": 1})
    busy = await iris.request("media.upload.start", {"media_ref": "b", "size": 1})
    assert busy["payload"]["code"] == "unsupported" and "'a'" in busy["payload"]["message"]
    await iris.send_raw(b"z")
    done = await iris.request(
        "media.upload.end", {"media_ref": "a", "sha256": hashlib.sha256(b"z").hexdigest()}
    )
    assert done["type"] == "media.offer"
    twice = await iris.request("media.upload.start", {"media_ref": "a", "size": 1})
    assert (
        twice["payload"]["code"] == "unsupported"
        and done["payload"]["media_id"] in twice["payload"]["message"]
    )


async def test_end_of_an_upload_that_is_not_open_is_not_found(iris: IrisClient) -> None:
    error = await iris.request("media.upload.end", {"media_ref": "nope", "sha256": "0" * 64})
    assert error["payload"]["code"] == "not_found"


async def test_bad_upload_starts_are_unsupported(iris: IrisClient) -> None:
    for payload in (
        {"media_ref": "r"},
        {"media_ref": "", "size": 1},
        {"media_ref": "r", "size": -1},
        {"media_ref": "r", "size": 1, "kind": "hologram"},
        {"media_ref": "r", "size": "1"},
    ):
        error = await iris.request("media.upload.start", payload)
        assert error["payload"]["code"] == "unsupported", (payload, error)
    await iris.send_raw(b"x")
    assert (await iris.next("error"))["payload"]["code"] == "unsupported"


async def test_pulling_unknown_media_is_not_found(iris: IrisClient) -> None:
    error = await iris.request("media.pull", {"media_id": "med_nope"})
    assert error["type"] == "error" and error["payload"]["code"] == "not_found"
    assert iris.binary == []


async def test_a_connection_closed_mid_upload_leaves_nothing(gateway_server: GatewayServer) -> None:
    token = gateway_server.pair().token
    client = await gateway_server.connect(token)
    await client.send_frame("media.upload.start", {"media_ref": "cut", "size": 100})
    await client.send_raw(b"x" * 50)
    await client.request("ping")
    assert [p.suffix for p in (gateway_server.data_dir / MEDIA_DIR).iterdir()] == [".part"]
    await client.close()
    await eventually(lambda: _media_files(gateway_server) == [])
    again = await gateway_server.connect(token)
    error = await again.request("media.upload.end", {"media_ref": "cut", "sha256": "0" * 64})
    assert error["payload"]["code"] == "not_found"


async def test_server_media_is_offered_to_every_device_and_pulled(owner: Owner) -> None:
    chat = chat_part(owner.server.gateway)
    media = await chat.store_media(PICTURE, kind="image", mime="image/png", filename="screen.png")
    assert media["size"] == len(PICTURE) and media["filename"] == "screen.png"
    with pytest.raises(ValueError, match="kind"):
        await chat.store_media(PICTURE, kind="hologram", mime="x/y")
    await chat.offer_media(media)
    for client in (owner.phone, owner.tablet):
        offer = await client.next("media.offer")
        assert offer["payload"] == media and offer["chat_id"] == "android:default"
    end, data = await pull(owner.tablet, media["media_id"])
    assert end["payload"]["ok"] and data == PICTURE


async def test_media_survives_a_restart(make_gateway: GatewayFactory) -> None:
    server = await make_gateway()
    token = server.pair().token
    client = await server.connect(token)
    media_id = (await upload(client, "keep", PICTURE))["payload"]["media_id"]
    await server.stop()
    again = await make_gateway(data_dir=server.data_dir)
    client = await again.connect(token)
    end, data = await pull(client, media_id)
    assert end["payload"]["ok"] and data == PICTURE
    sent = await client.request("message.send", {"text": "still", "media_refs": ["keep"]})
    assert sent["payload"]["media"][0]["media_id"] == media_id


async def test_a_missing_file_ends_the_pull_not_ok(gateway_server: GatewayServer) -> None:
    client = await gateway_server.connect()
    media_id = (await upload(client, "lost", PICTURE))["payload"]["media_id"]
    (gateway_server.data_dir / MEDIA_DIR / media_id).unlink()
    end, data = await pull(client, media_id)
    assert end["type"] == "media.pull.end" and end["payload"]["ok"] is False and data == b""
