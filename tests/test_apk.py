"""util/apk.py: an APK's binary manifest read in Python, on APKs the tests encode (tests/fakes/apk.py),
in both string pool encodings, with the attribute names blanked as shrinkers leave them, and every
way an APK can be malformed: each an ApkError saying what is wrong."""

from __future__ import annotations

import io
import struct
import zipfile

import pytest

from phoneuse_runtime.util.apk import ApkError, Manifest, parse_manifest, read_apk_file
from tests.fakes.apk import build_apk, manifest_xml

P = "android.permission."


def _zip(entries: dict[str, bytes]) -> io.BytesIO:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in entries.items():
            z.writestr(name, data)
    out.seek(0)
    return out


@pytest.mark.parametrize("utf8", [False, True], ids=["utf16", "utf8"])
@pytest.mark.parametrize("blank_names", [False, True], ids=["names", "blank-names"])
def test_package_version_and_permissions(utf8: bool, blank_names: bool) -> None:
    data = manifest_xml(
        "com.example.notes",
        version_name="2.1",
        version_code=21,
        permissions=(P + "CAMERA", P + "INTERNET", P + "CAMERA"),
        utf8=utf8,
        blank_names=blank_names,
    )
    assert parse_manifest(data) == Manifest("com.example.notes", "2.1", 21, (P + "CAMERA", P + "INTERNET"))


def test_read_from_the_zip() -> None:
    apk = build_apk("org.example.app", version_name="1.0-beta", version_code=7, permissions=(P + "READ_SMS",))
    assert read_apk_file(io.BytesIO(apk)) == Manifest("org.example.app", "1.0-beta", 7, (P + "READ_SMS",))


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (b"not a zip", "not a zip"),
        (_zip({"classes.dex": b"dex"}).getvalue(), "without AndroidManifest.xml"),
        (_zip({"AndroidManifest.xml": b'<manifest package="a.b"/>'}).getvalue(), "not Android's binary XML"),
        (_zip({"AndroidManifest.xml": manifest_xml("a.b.c")[:60]}).getvalue(), "bad size"),
        (_zip({"AndroidManifest.xml": manifest_xml("not-a-package")}).getvalue(), "no valid package"),
    ],
    ids=["not-zip", "no-manifest", "text-manifest", "cut", "bad-package"],
)
def test_malformed_apks_say_what_is_wrong(data: bytes, said: str) -> None:
    with pytest.raises(ApkError, match=said):
        read_apk_file(io.BytesIO(data))


def test_a_manifest_past_the_bound_is_not_inflated() -> None:
    apk = _zip({"AndroidManifest.xml": b"\0" * 100_000})  # deflates to little: a small bomb
    with pytest.raises(ApkError, match="past the 4096"):
        read_apk_file(apk, max_bytes=4096)


def test_a_string_pool_that_lies_about_its_count_is_refused() -> None:
    data = bytearray(manifest_xml("a.b.c"))
    struct.pack_into("<I", data, 8 + 8, 0x7FFFFFFF)  # the pool's stringCount
    with pytest.raises(ApkError):
        parse_manifest(bytes(data))


def test_no_manifest_element() -> None:
    data = bytearray(manifest_xml("a.b.c"))
    # Rename the element: its name's string index points at "package" instead of "manifest".
    start = data.find(struct.pack("<HH", 0x0102, 16))
    struct.pack_into("<I", data, start + 16 + 4, 6)
    with pytest.raises(ApkError, match="no <manifest>"):
        parse_manifest(bytes(data))
