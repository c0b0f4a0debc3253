"""PUSH_FILE and PULL_FILE on the sim, through the real server: whole files between shared storage
and DATA_DIR/files, chunks in the call, each read back from the phone."""

from __future__ import annotations

import base64
import hashlib
import os
import stat
from pathlib import Path

from phoneuse_runtime.device.sim.device import SimDevice
from phoneuse_runtime.device.sim.files import SHARED

from ..conftest import Client


def sim(client: Client) -> SimDevice:
    device = client.app.runtime.device
    assert isinstance(device, SimDevice)
    return device


def files_of(client: Client) -> Path:
    return client.app.runtime.settings.data_dir / "files"


async def test_a_chunk_comes_with_the_whole_files_size_and_sha256(client: Client) -> None:
    notes = sim(client).files.files[f"{SHARED}/Download/notes.txt"]
    first = await client.ok("PULL_FILE", {"path": "/sdcard/Download/notes.txt", "max_bytes": "10"})
    assert first["path"] == f"{SHARED}/Download/notes.txt"
    assert base64.b64decode(first["data_base64"]) == notes[:10]
    assert (first["size"], first["bytes"], first["next_offset"], first["eof"]) == (len(notes), 10, 10, False)
    assert first["sha256"] == hashlib.sha256(notes).hexdigest() and first["verified"]
    rest = await client.ok("PULL_FILE", {"path": "/sdcard/Download/notes.txt", "offset": "10"})
    assert base64.b64decode(rest["data_base64"]) == notes[10:]
    assert rest["eof"] and rest["sha256"] == first["sha256"] and rest["verified"]


async def test_a_file_pulled_by_name_lands_whole_in_the_files_directory(client: Client) -> None:
    photo = sim(client).files.files[f"{SHARED}/DCIM/Camera/IMG_20240601_101500.jpg"]
    result = await client.ok(
        "PULL_FILE", {"path": "/storage/emulated/0/DCIM/Camera/IMG_20240601_101500.jpg", "name": "photo.jpg"}
    )
    assert result["name"] == "photo.jpg" and result["data_base64"] is None
    assert result["verified"] and result["size"] == len(photo)
    saved = files_of(client) / "photo.jpg"
    assert saved.read_bytes() == photo
    assert stat.S_IMODE(os.stat(files_of(client)).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(saved).st_mode) == 0o600
    assert [p.name for p in files_of(client).iterdir()] == ["photo.jpg"]  # no partial file left


async def test_a_push_in_chunks_is_read_back_from_the_phone(client: Client) -> None:
    data = os.urandom(3000)
    whole = hashlib.sha256(data).hexdigest()
    path = "/sdcard/Documents/new/report.bin"
    offset = 0
    for start in range(0, len(data), 1024):
        chunk = data[start : start + 1024]
        params = {"path": path, "data_base64": base64.b64encode(chunk).decode(), "offset": str(offset)}
        result = await client.ok("PUSH_FILE", {**params, "size": str(len(data)), "sha256": whole})
        offset = result["next_offset"]
    assert result["size"] == len(data) and result["sha256"] == whole and result["verified"]
    assert sim(client).files.files[f"{SHARED}/Documents/new/report.bin"] == data
    # A chunk out of order is refused, saying where the next one goes.
    late = {"path": path, "data_base64": "AA==", "offset": "5"}
    assert await client.fail("PUSH_FILE", late) == "INVALID_PARAMS"


async def test_a_named_file_is_pushed_whole_and_checked_by_sha256(client: Client) -> None:
    await client.ok("PULL_FILE", {"path": "/sdcard/Download/notes.txt", "name": "notes.txt"})
    result = await client.ok("PUSH_FILE", {"path": "/sdcard/Documents/notes-copy.txt", "name": "notes.txt"})
    original = sim(client).files.files[f"{SHARED}/Download/notes.txt"]
    assert result["verified"] and result["sha256"] == hashlib.sha256(original).hexdigest()
    assert sim(client).files.files[f"{SHARED}/Documents/notes-copy.txt"] == original


async def test_bad_calls_get_their_codes(client: Client) -> None:
    assert await client.fail("PULL_FILE", {"path": "/sdcard/Download/none.txt"}) == "INVALID_PARAMS"
    assert await client.fail("PULL_FILE", {"path": "/sdcard/Download"}) == "INVALID_PARAMS"
    assert (
        await client.fail("PUSH_FILE", {"path": "/sdcard/x", "data_base64": "not base64!"})
        == "INVALID_PARAMS"
    )
    both = {"path": "/sdcard/x", "data_base64": "AA==", "name": "a"}
    assert await client.fail("PUSH_FILE", both) == "INVALID_PARAMS"
    assert await client.fail("PUSH_FILE", {"path": "/sdcard/x", "name": "missing.bin"}) == "INVALID_PARAMS"
    too_big = {"path": "/sdcard/Download/notes.txt", "max_bytes": str(2 * 1024 * 1024 + 1)}
    assert await client.fail("PULL_FILE", too_big) == "INVALID_PARAMS"


async def test_the_actions_are_listed_and_need_the_files_capability(client: Client) -> None:
    from phoneuse_runtime.kernel.capabilities import FILES

    registry = client.app.runtime.registry
    for name in ("PUSH_FILE", "PULL_FILE"):
        assert registry.action(name).requires == frozenset({FILES})
