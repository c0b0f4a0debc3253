"""PUSH_FILE and PULL_FILE through gRPC on `--device adb:...`, the real adb server and the fake
phone (its file system: tests/fakes/fs.py; toybox's readlink/stat/dd/sha256sum:
tests/fakes/files_cmds.py), on shell v1 and v2; each read back from the fake phone's files."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import os
import time

import pytest

from tests.device.adb.conftest import AdbServe
from tests.fakes.fs import SHARED
from tests.fakes.phone import FakePhone

V1 = ("cmd",)
V2 = ("shell_v2", "cmd")
FEATURES = pytest.mark.parametrize("features", [V1, V2], ids=["shell_v1", "shell_v2"])


def phone_with_files() -> FakePhone:
    phone = FakePhone()
    fs = phone.state.files
    fs.write(f"{SHARED}/DCIM/Camera/VID_1.mp4", bytes(range(256)) * 700 + b"tail")  # 179,204 bytes
    fs.write(f"{SHARED}/Download/a.txt", b"hello\r\nworld\n")
    fs.symlink("/data/local/tmp", f"{SHARED}/Download/tmp-link")
    fs.symlink("/data/data/com.whatsapp/databases", f"{SHARED}/Download/wa")
    fs.symlink("../DCIM", f"{SHARED}/Download/photos")  # a link that stays inside
    return phone


@FEATURES
async def test_pulled_in_chunks_at_any_offset_byte_for_byte(
    serve_adb: AdbServe, features: tuple[str, ...]
) -> None:
    s = await serve_adb(phone_with_files(), features=features)
    video = s.phone.state.files.read(f"{SHARED}/DCIM/Camera/VID_1.mp4")
    got = b""
    offset, chunk = 0, 65536
    shas = []
    while True:
        r = await s.client.ok(
            "PULL_FILE",
            {"path": "/sdcard/DCIM/Camera/VID_1.mp4", "offset": str(offset), "max_bytes": str(chunk)},
        )
        got += base64.b64decode(r["data_base64"])
        shas.append(r["sha256"])
        assert r["size"] == len(video) and r["verified"]
        offset = r["next_offset"]
        if r["eof"]:
            break
    assert got == video
    assert shas[0] == shas[-1] == hashlib.sha256(video).hexdigest() and set(shas[1:-1]) == {None}
    # An odd offset and size still come out exact (dd's block falls to what divides both).
    odd = await s.client.ok(
        "PULL_FILE", {"path": "/sdcard/DCIM/Camera/VID_1.mp4", "offset": "1001", "max_bytes": "333"}
    )
    assert base64.b64decode(odd["data_base64"]) == video[1001:1334]
    text = await s.client.ok("PULL_FILE", {"path": "/sdcard/Download/a.txt"})
    assert base64.b64decode(text["data_base64"]) == b"hello\r\nworld\n"  # exec: no pty, no CRLF games


async def test_a_whole_file_goes_both_ways_by_sync(serve_adb: AdbServe) -> None:
    s = await serve_adb(phone_with_files())
    video = s.phone.state.files.read(f"{SHARED}/DCIM/Camera/VID_1.mp4")
    pulled = await s.client.ok(
        "PULL_FILE", {"path": "/sdcard/Download/photos/Camera/VID_1.mp4", "name": "v.mp4"}
    )
    assert pulled["path"] == f"{SHARED}/DCIM/Camera/VID_1.mp4"  # the link followed on the phone
    assert pulled["via"] == "adb sync and toybox"
    assert pulled["verified"] and pulled["sha256"] == hashlib.sha256(video).hexdigest()
    files = s.client.app.runtime.settings.data_dir / "files"
    assert (files / "v.mp4").read_bytes() == video
    pushed = await s.client.ok("PUSH_FILE", {"path": "/sdcard/Movies/new/copy.mp4", "name": "v.mp4"})
    assert pushed["verified"] and pushed["size"] == len(video)
    assert s.phone.state.files.read(f"{SHARED}/Movies/new/copy.mp4") == video


@FEATURES
async def test_pushed_in_chunks_and_read_back(serve_adb: AdbServe, features: tuple[str, ...]) -> None:
    s = await serve_adb(phone_with_files(), features=features)
    data = os.urandom(200_000)
    whole = hashlib.sha256(data).hexdigest()
    offset = 0
    for start in range(0, len(data), 65536):
        part = data[start : start + 65536]
        r = await s.client.ok(
            "PUSH_FILE",
            {
                "path": "/storage/emulated/0/Documents/big.bin",
                "data_base64": base64.b64encode(part).decode(),
                "offset": str(offset),
                "size": str(len(data)),
                "sha256": whole,
            },
        )
        offset = r["next_offset"]
    assert r["verified"] and r["sha256"] == whole
    assert s.phone.state.files.read(f"{SHARED}/Documents/big.bin") == data
    assert not [p for p in s.phone.state.files.nodes if "phoneuse-chunk" in p]  # the chunks cleaned up


@pytest.mark.parametrize(
    "path",
    [
        "/sdcard/Download/tmp-link/x.bin",  # a link out of shared storage, to a place the shell can write
        "/sdcard/Download/wa/msgstore.db",  # a link into another app's private files
        "/sdcard/Download/wa",
    ],
)
async def test_a_link_out_of_shared_storage_is_refused_on_the_phone(serve_adb: AdbServe, path: str) -> None:
    s = await serve_adb(phone_with_files())
    before = dict(s.phone.state.files.nodes)
    assert await s.client.fail("PUSH_FILE", {"path": path, "data_base64": "AAAA"}) == "PERMISSION_DENIED"
    assert await s.client.fail("PULL_FILE", {"path": path}) == "PERMISSION_DENIED"
    assert s.phone.state.files.nodes.keys() == before.keys()


async def test_a_phone_without_sha256sum_is_hashed_over_sync(serve_adb: AdbServe) -> None:
    """Android 7's toybox (0.7.0) has md5sum and sha1sum but no sha256sum: the hash is taken as
    the file streams by over sync, and the answer is the same."""
    phone = phone_with_files()
    phone.state.props["ro.build.version.sdk"] = "24"
    phone.commands = {k: v for k, v in phone.commands.items() if k != "sha256sum"}
    s = await serve_adb(phone)
    video = phone.state.files.read(f"{SHARED}/DCIM/Camera/VID_1.mp4")
    r = await s.client.ok("PULL_FILE", {"path": "/sdcard/DCIM/Camera/VID_1.mp4", "max_bytes": "1024"})
    assert r["sha256"] == hashlib.sha256(video).hexdigest()
    pushed = await s.client.ok("PUSH_FILE", {"path": "/sdcard/Download/b.bin", "data_base64": "aGVsbG8="})
    assert pushed["verified"] and pushed["sha256"] == hashlib.sha256(b"hello").hexdigest()
    assert ["sha256sum", f"{SHARED}/DCIM/Camera/VID_1.mp4"] in phone.state.log.commands


async def test_a_phone_frozen_mid_pull_times_out_leaves_nothing_and_recovers(serve_adb: AdbServe) -> None:
    """The phone freezes as the sync RECV of a whole-file pull arrives: the call fails at its
    deadline, no partial file stays in DATA_DIR/files, and once the phone thaws the next pull works."""
    s = await serve_adb(phone_with_files())
    daemon = s.device.adbd.daemon

    class FreezeOnRecv(list[str]):
        def append(self, request: str) -> None:
            super().append(request)
            if request.startswith("RECV "):
                daemon.hang()  # on the daemon's own thread, before it answers

    daemon.sync_requests = FreezeOnRecv()
    params = {"path": "/sdcard/DCIM/Camera/VID_1.mp4", "name": "v.mp4"}
    assert await s.client.fail("PULL_FILE", params, timeout_ms=1500) == "TIMEOUT"
    daemon.sync_requests = []
    await asyncio.to_thread(s.device.adbd.resume)
    files = s.client.app.runtime.settings.data_dir / "files"
    give_up = time.monotonic() + 20
    while True:  # the worker and the link come back in their own time
        response = await s.client.execute("PULL_FILE", params, timeout_ms=5000)
        if response.success or time.monotonic() > give_up:
            break
        await asyncio.sleep(0.2)
    assert response.success, response.error
    assert [p.name for p in files.iterdir()] == ["v.mp4"]
