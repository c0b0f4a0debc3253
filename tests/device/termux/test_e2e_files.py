"""PUSH_FILE and PULL_FILE on `--device termux`: the shared storage termux-setup-storage links as
~/storage/shared (here a folder of the test's), plain file I/O, each read back from the folder."""

from __future__ import annotations

import base64
import hashlib
import os
from pathlib import Path

import pytest

from .conftest import TermuxServe


@pytest.fixture
def shared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The phone's shared storage, and HOME with the link termux-setup-storage makes to it."""
    root = tmp_path / "emulated0"
    (root / "Download").mkdir(parents=True)
    (root / "Download" / "a.txt").write_bytes(b"from the phone\n")
    home = tmp_path / "home"
    (home / "storage").mkdir(parents=True)
    (home / "storage" / "shared").symlink_to(root)
    monkeypatch.setenv("HOME", str(home))
    return root


async def test_files_move_both_ways_and_are_read_back(serve_termux: TermuxServe, shared: Path) -> None:
    c = await serve_termux()
    r = await c.ok("PULL_FILE", {"path": "/sdcard/Download/a.txt"})
    assert base64.b64decode(r["data_base64"]) == b"from the phone\n" and r["verified"]
    assert r["path"] == "/storage/emulated/0/Download/a.txt" and r["via"] == "termux storage"
    saved = await c.ok("PULL_FILE", {"path": "/sdcard/Download/a.txt", "name": "a.txt"})
    assert saved["verified"]
    data = os.urandom(5000)
    for offset in (0, 2500):
        part = base64.b64encode(data[offset : offset + 2500]).decode()
        r = await c.ok(
            "PUSH_FILE", {"path": "/sdcard/Documents/x.bin", "data_base64": part, "offset": str(offset)}
        )
    assert (shared / "Documents" / "x.bin").read_bytes() == data
    assert r["sha256"] == hashlib.sha256(data).hexdigest() and r["verified"]
    whole = await c.ok("PUSH_FILE", {"path": "/sdcard/Download/b.txt", "name": "a.txt"})
    assert whole["verified"] and (shared / "Download" / "b.txt").read_bytes() == b"from the phone\n"


async def test_a_link_out_of_shared_storage_is_refused(
    serve_termux: TermuxServe, shared: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "termux-home-secrets"
    outside.mkdir()
    (outside / "token").write_text("secret")
    (shared / "Download" / "out").symlink_to(outside)
    c = await serve_termux()
    assert await c.fail("PULL_FILE", {"path": "/sdcard/Download/out/token"}) == "PERMISSION_DENIED"
    assert (
        await c.fail("PUSH_FILE", {"path": "/sdcard/Download/out/new", "data_base64": "AA=="})
        == "PERMISSION_DENIED"
    )
    assert sorted(p.name for p in outside.iterdir()) == ["token"]


async def test_without_termux_setup_storage_it_says_what_to_run(
    serve_termux: TermuxServe, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "bare-home"))
    c = await serve_termux()
    response = await c.execute("PULL_FILE", {"path": "/sdcard/Download/a.txt"})
    assert response.error.startswith("UNSUPPORTED:") and "termux-setup-storage" in response.error
