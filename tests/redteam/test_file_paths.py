"""PUSH_FILE and PULL_FILE as a way out (issue 27): an agent with a valid token names paths that
climb, leave shared storage, enter another app's folder, follow a symlink out (on the phone and on
the runtime's side), carry NUL bytes or run very long; it fills the runtime's disk and sends huge
base64. Every attempt is refused naming its rule, before any hold, and nothing of the owner's, on
the phone or in the data dir, is read, written or left behind."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import grpc
import pytest

from phoneuse_runtime.device.sim.device import SimDevice
from phoneuse_runtime.device.sim.files import SHARED

from ..conftest import Client, ServerFactory
from ..device.adb.conftest import AdbServe
from ..fakes.phone import FakePhone

ESCAPES = [
    ("/sdcard/../data/data/com.whatsapp/databases/msgstore.db", "no-dotdot"),
    ("/sdcard/Download/../../../data/system/packages.xml", "no-dotdot"),
    ("/storage/emulated/0/DCIM/..", "no-dotdot"),
    ("/data/data/com.android.providers.contacts/databases/contacts2.db", "shared-storage-only"),
    ("/data/local/tmp/phoneuse-chunk", "shared-storage-only"),
    ("/system/etc/hosts", "shared-storage-only"),
    ("/storage/emulated/10/DCIM/x.jpg", "shared-storage-only"),  # another user's storage
    ("sdcard/Download/notes.txt", "shared-storage-only"),  # relative: the shell's cwd decides
    ("/sdcard", "shared-storage-only"),
    ("/sdcardx/notes.txt", "shared-storage-only"),
    ("/sdcard/Android/data/com.whatsapp/files/key", "no-app-private"),
    ("/sdcard/android/DATA/com.whatsapp/files/key", "no-app-private"),  # shared storage ignores case
    ("/storage/emulated/0/Android/obb/com.game/main.obb", "no-app-private"),
    ("/sdcard//Android/./data/com.whatsapp", "no-app-private"),
    ("/sdcard/Download/contacts/contacts2.db", "no-symlink-out"),  # the seed's link into /data/data
]
MALFORMED = [
    "/sdcard/Download/notes.txt\x00.jpg",
    "/sdcard/Download/a\nb",
    "/sdcard/" + "a" * 256,
    "/sdcard/" + "/".join(["d" * 200] * 25),
    "",
]
NAMES = [
    ("../server.json", "files-dir-only"),
    ("/etc/passwd", "files-dir-only"),
    ("sub/dir.bin", "files-dir-only"),
    ("..", "no-dotdot"),
    (".partial-0", "files-dir-only"),
    ("..\\token", "files-dir-only"),
]


def phone(client: Client) -> SimDevice:
    device = client.app.runtime.device
    assert isinstance(device, SimDevice)
    return device


def untouched(client: Client, before: dict[str, bytes]) -> None:
    assert phone(client).files.files == before
    files = client.app.runtime.settings.data_dir / "files"
    assert not files.exists() or not [p for p in files.iterdir() if not p.is_symlink()]


@pytest.mark.parametrize(("path", "rule"), ESCAPES)
async def test_a_phone_path_out_of_shared_storage_is_refused_naming_its_rule(
    make_client: ServerFactory, path: str, rule: str
) -> None:
    # Both actions held for the owner under every mode: a refusal comes first, with no hold.
    client = await make_client(approvals="always", approval_actions=frozenset({"PUSH_FILE", "PULL_FILE"}))
    before = dict(phone(client).files.files)
    for action, params in (
        ("PULL_FILE", {"path": path}),
        ("PULL_FILE", {"path": path, "name": "loot.bin"}),
        ("PUSH_FILE", {"path": path, "data_base64": base64.b64encode(b"pwned").decode()}),
    ):
        response = await client.execute(action, params, timeout_ms=3000)
        assert response.error.startswith(f"PERMISSION_DENIED: path rule {rule}: "), response.error
    assert not client.app.runtime.approvals.pending()
    untouched(client, before)


@pytest.mark.parametrize("path", MALFORMED, ids=["nul", "newline", "long-name", "long-path", "empty"])
async def test_a_path_that_is_no_path_is_invalid(client: Client, path: str) -> None:
    before = dict(phone(client).files.files)
    assert await client.fail("PULL_FILE", {"path": path}) == "INVALID_PARAMS"
    assert await client.fail("PUSH_FILE", {"path": path, "data_base64": "AA=="}) == "INVALID_PARAMS"
    untouched(client, before)


@pytest.mark.parametrize(("name", "rule"), NAMES)
async def test_a_runtime_name_out_of_the_files_directory_is_refused(
    client: Client, name: str, rule: str
) -> None:
    before = dict(phone(client).files.files)
    for action in ("PULL_FILE", "PUSH_FILE"):
        response = await client.execute(action, {"path": "/sdcard/Download/notes.txt", "name": name})
        assert response.error.startswith(f"PERMISSION_DENIED: path rule {rule}: "), response.error
    assert (
        await client.fail("PULL_FILE", {"path": "/sdcard/Download/notes.txt", "name": "a\x00b"})
        == "INVALID_PARAMS"
    )
    untouched(client, before)
    assert not (client.app.runtime.settings.data_dir / "server.json.loot").exists()


async def test_a_symlink_in_the_files_directory_leads_nowhere(client: Client, tmp_path: Path) -> None:
    """Someone left links in DATA_DIR/files: to the token, and to a file outside to overwrite."""
    data_dir = client.app.runtime.settings.data_dir
    files = data_dir / "files"
    files.mkdir(mode=0o700, exist_ok=True)
    victim = tmp_path / "victim.txt"
    victim.write_text("the owner's")
    secret = data_dir / "memory.key"  # any of the owner's files beside DATA_DIR/files
    secret.write_bytes(b"the owner's secret")
    (files / "token").symlink_to(secret)
    (files / "victim.txt").symlink_to(victim)
    before = dict(phone(client).files.files)
    push = await client.execute("PUSH_FILE", {"path": "/sdcard/Download/t", "name": "token"})
    assert push.error.startswith("PERMISSION_DENIED: path rule no-symlink-out: "), push.error
    pull = await client.execute("PULL_FILE", {"path": "/sdcard/Download/notes.txt", "name": "victim.txt"})
    assert pull.error.startswith("PERMISSION_DENIED: path rule no-symlink-out: "), pull.error
    assert victim.read_text() == "the owner's"
    assert phone(client).files.files == before


async def test_filling_the_runtimes_disk_stops_at_files_max_bytes(make_client: ServerFactory) -> None:
    client = await make_client(files_max_bytes=10_000)
    big = os.urandom(6000)
    phone(client).files.files[f"{SHARED}/Download/big.bin"] = big
    assert (await client.ok("PULL_FILE", {"path": "/sdcard/Download/big.bin", "name": "one.bin"}))["verified"]
    response = await client.execute("PULL_FILE", {"path": "/sdcard/Download/big.bin", "name": "two.bin"})
    assert response.error.startswith("PERMISSION_DENIED: ") and "files_max_bytes" in response.error
    # The same name again replaces itself, so it fits.
    assert (await client.ok("PULL_FILE", {"path": "/sdcard/Download/big.bin", "name": "one.bin"}))["verified"]
    files = client.app.runtime.settings.data_dir / "files"
    assert sorted(p.name for p in files.iterdir()) == ["one.bin"]  # no partial file left
    assert sum(p.stat().st_size for p in files.iterdir()) <= 10_000


async def test_a_push_past_files_max_push_bytes_is_refused(make_client: ServerFactory) -> None:
    client = await make_client(files_max_push_bytes=4096)
    before = dict(phone(client).files.files)
    chunk = base64.b64encode(os.urandom(3000)).decode()
    assert await client.ok("PUSH_FILE", {"path": "/sdcard/Download/p.bin", "data_base64": chunk})
    more = {"path": "/sdcard/Download/p.bin", "data_base64": chunk, "offset": "3000"}
    assert await client.fail("PUSH_FILE", more) == "PERMISSION_DENIED"
    said = {"path": "/sdcard/Download/q.bin", "data_base64": "AA==", "size": "100000000"}
    assert await client.fail("PUSH_FILE", said) == "PERMISSION_DENIED"
    assert set(phone(client).files.files) - set(before) == {f"{SHARED}/Download/p.bin"}
    assert len(phone(client).files.files[f"{SHARED}/Download/p.bin"]) == 3000


async def test_huge_base64_in_the_call_is_refused_and_the_server_goes_on(client: Client) -> None:
    over = "A" * (1024 * 1024 + 4)  # past data_base64's maximum, inside the gRPC receive limit
    assert (
        await client.fail("PUSH_FILE", {"path": "/sdcard/Download/h.bin", "data_base64": over})
        == "INVALID_PARAMS"
    )
    with pytest.raises(grpc.aio.AioRpcError) as caught:  # past the receive limit: never decoded
        await client.execute(
            "PUSH_FILE", {"path": "/sdcard/Download/h.bin", "data_base64": "A" * 3 * 1024 * 1024}
        )
    assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert f"{SHARED}/Download/h.bin" not in phone(client).files.files
    assert (await client.ok("PULL_FILE", {"path": "/sdcard/Download/notes.txt"}))["verified"]


async def test_a_link_on_a_real_phone_is_followed_there_and_refused(serve_adb: AdbServe) -> None:
    """On the fake phone behind the real adb server: links in shared storage to /data/local/tmp
    (which the shell user can write) and into an app's private files."""
    fake = FakePhone()
    fs = fake.state.files
    fs.symlink("/data/local/tmp", f"{SHARED}/Download/tmp")
    fs.symlink("/data/data/com.whatsapp/databases", f"{SHARED}/Download/wa")
    fs.write(f"{SHARED}/Android/data/com.whatsapp/files/key", b"not yours")
    fs.symlink(f"{SHARED}/Android/data/com.whatsapp/files", f"{SHARED}/Download/wa-files")
    s = await serve_adb(fake)
    before = dict(fs.nodes)
    for path, rule in (
        ("/sdcard/Download/tmp/x.sh", "no-symlink-out"),
        ("/sdcard/Download/wa/msgstore.db", "no-symlink-out"),
        ("/sdcard/Download/wa-files/key", "no-app-private"),
    ):
        for action, params in (
            ("PULL_FILE", {"path": path}),
            ("PUSH_FILE", {"path": path, "data_base64": "AA=="}),
        ):
            response = await s.client.execute(action, params)
            assert response.error.startswith(f"PERMISSION_DENIED: path rule {rule}: "), response.error
    assert fs.nodes.keys() == before.keys()
