"""owner/paths.py on its own: the phone paths it lets through (in their canonical form), the rule
each refusal names, and runtime_file's confinement to the files directory on a real disk.
(The same rules through the server, on every backend: tests/redteam/test_file_paths.py.)"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from phoneuse_runtime.kernel.errors import InvalidParams, PermissionDenied
from phoneuse_runtime.owner.paths import files_dir, phone_path, resolved_phone_path, runtime_file

SHARED = "/storage/emulated/0"


@pytest.mark.parametrize(
    ("given", "canonical"),
    [
        ("/sdcard/DCIM/Camera/IMG_1.jpg", f"{SHARED}/DCIM/Camera/IMG_1.jpg"),
        ("/storage/emulated/0/Download/a.pdf", f"{SHARED}/Download/a.pdf"),
        ("/storage/self/primary/Music/x.mp3", f"{SHARED}/Music/x.mp3"),
        ("/sdcard//Download/./a.txt", f"{SHARED}/Download/a.txt"),
        (
            "/sdcard/Android/media/com.whatsapp/WhatsApp/Media/x.jpg",
            f"{SHARED}/Android/media/com.whatsapp/WhatsApp/Media/x.jpg",
        ),
        ("/sdcard/Download/..hidden", f"{SHARED}/Download/..hidden"),  # a name, not a climb
        ("/sdcard/Документы/отчёт.pdf", f"{SHARED}/Документы/отчёт.pdf"),
    ],
)
def test_shared_storage_paths_come_out_canonical(given: str, canonical: str) -> None:
    assert phone_path(given) == canonical


@pytest.mark.parametrize(
    ("given", "rule"),
    [
        ("/sdcard/../data", "no-dotdot"),
        ("/data/media/0/DCIM/x.jpg", "shared-storage-only"),  # shared storage's backing store
        ("/mnt/user/0/emulated/0/x", "shared-storage-only"),
        ("/storage/ABCD-1234/DCIM/x.jpg", "shared-storage-only"),  # an SD card: not yet
        ("/sdcard/", "shared-storage-only"),
        ("/sdcard/Android/Data/com.x/f", "no-app-private"),
        ("/sdcard/Android/obb", "no-app-private"),
    ],
)
def test_each_refusal_names_its_rule(given: str, rule: str) -> None:
    with pytest.raises(PermissionDenied) as caught:
        phone_path(given)
    assert str(caught.value).startswith(f"path rule {rule}: ")


@pytest.mark.parametrize(
    ("resolved", "outcome"),
    [
        (f"{SHARED}/DCIM/x.jpg", f"{SHARED}/DCIM/x.jpg"),
        ("/storage/emulated/legacy/DCIM/x.jpg", f"{SHARED}/DCIM/x.jpg"),  # Android 4.x's
        ("/data/data/com.whatsapp/databases", "no-symlink-out"),
        ("/storage/emulated/0", "no-symlink-out"),
        (f"{SHARED}/Android/data/com.x", "no-app-private"),
    ],
)
def test_what_the_phone_resolved_is_held_to_the_rules_again(resolved: str, outcome: str) -> None:
    if outcome.startswith("/"):
        assert resolved_phone_path(resolved, "/sdcard/link") == outcome
        return
    with pytest.raises(PermissionDenied) as caught:
        resolved_phone_path(resolved, "/sdcard/link")
    assert str(caught.value).startswith(f"path rule {outcome}: ")


@pytest.mark.parametrize("given", ["/sdcard/a\x00b", "/sdcard/a\x1bb", "", "/sdcard/" + "x" * 5000])
def test_what_is_no_path_is_invalid(given: str) -> None:
    with pytest.raises(InvalidParams):
        phone_path(given)


def test_runtime_files_stay_in_the_files_directory(tmp_path: Path) -> None:
    directory = files_dir(tmp_path / "data")
    assert stat.S_IMODE(os.stat(directory).st_mode) == 0o700
    assert runtime_file(directory, "photo.jpg") == directory.resolve() / "photo.jpg"
    (directory / "inside").symlink_to(directory / "photo.jpg")  # a link that stays in is followed
    assert runtime_file(directory, "inside") == directory.resolve() / "photo.jpg"
    (directory / "out").symlink_to(tmp_path)
    for name, rule in (("out", "no-symlink-out"), ("../x", "files-dir-only"), (".x", "files-dir-only")):
        with pytest.raises(PermissionDenied) as caught:
            runtime_file(directory, name)
        assert str(caught.value).startswith(f"path rule {rule}: ")
