"""Small APKs built for the tests: a zip with a real binary AndroidManifest.xml (AXML).

The encoder writes what aapt2 writes for a manifest (ResourceTypes.h): the XML chunk, its string
pool (UTF-16 by default, UTF-8 on request), the resource map of the attribute names, the android
namespace, and the elements `<manifest package versionCode versionName>` and one
`<uses-permission android:name>` per permission. `blank_names` writes the attribute names as
empty strings, as resource shrinkers do, so only the resource map says which is which.
"""

from __future__ import annotations

import hashlib
import io
import struct
import zipfile

from .state import Package, PhoneState

ANDROID_NS = "http://schemas.android.com/apk/res/android"
NAME, VERSION_CODE, VERSION_NAME = 0x01010003, 0x0101021B, 0x0101021C
TYPE_STRING, TYPE_INT_DEC = 0x03, 0x10
NONE = 0xFFFFFFFF


def _chunk(kind: int, header: bytes, body: bytes) -> bytes:
    return struct.pack("<HHI", kind, 8 + len(header), 8 + len(header) + len(body)) + header + body


def _pool(strings: list[str], *, utf8: bool) -> bytes:
    data = b""
    offsets = []
    for text in strings:
        offsets.append(len(data))
        if utf8:
            raw = text.encode()
            assert len(text) < 0x80 and len(raw) < 0x80
            data += bytes([len(text), len(raw)]) + raw + b"\0"
        else:
            data += struct.pack("<H", len(text)) + text.encode("utf-16-le") + b"\0\0"
    data += b"\0" * (-len(data) % 4)
    header_rest = struct.pack("<IIIII", len(strings), 0, 0x100 if utf8 else 0, 28 + 4 * len(strings), 0)
    return _chunk(0x0001, header_rest, struct.pack(f"<{len(strings)}I", *offsets) + data)


def manifest_xml(
    package: str,
    *,
    version_name: str = "1.0",
    version_code: int = 1,
    permissions: tuple[str, ...] = (),
    utf8: bool = False,
    blank_names: bool = False,
) -> bytes:
    """A binary AndroidManifest.xml declaring `package` and asking for `permissions`."""
    attr_names = ["" if blank_names else "name", "" if blank_names else "versionCode"]
    attr_names.append("" if blank_names else "versionName")
    strings = [*attr_names, "android", ANDROID_NS, "manifest", "package", "uses-permission"]
    strings += [package, version_name, *permissions]
    index = {s: i for i, s in reversed(list(enumerate(strings)))}
    ns = index[ANDROID_NS]

    def attr(ns_i: int, name_i: int, kind: int, value: int, raw: int) -> bytes:
        return struct.pack("<IIIHBBI", ns_i, name_i, raw, 8, 0, kind, value)

    def start(tag: str, attrs: list[bytes]) -> bytes:
        ext = struct.pack("<IIHHHHHH", NONE, index[tag], 20, 20, len(attrs), 0, 0, 0) + b"".join(attrs)
        return _chunk(0x0102, struct.pack("<II", 1, NONE), ext)

    def end(tag: str) -> bytes:
        return _chunk(0x0103, struct.pack("<II", 1, NONE), struct.pack("<II", NONE, index[tag]))

    pkg_i, vname_i = strings.index(package, 8), strings.index(version_name, 9)
    nodes = _chunk(0x0100, struct.pack("<II", 1, NONE), struct.pack("<II", index["android"], ns))
    nodes += start(
        "manifest",
        [
            attr(ns, 1, TYPE_INT_DEC, version_code, NONE),
            attr(ns, 2, TYPE_STRING, vname_i, vname_i),
            attr(NONE, index["package"], TYPE_STRING, pkg_i, pkg_i),
        ],
    )
    for perm in permissions:
        perm_i = strings.index(perm, 10)
        nodes += start("uses-permission", [attr(ns, 0, TYPE_STRING, perm_i, perm_i)])
        nodes += end("uses-permission")
    nodes += end("manifest")
    nodes += _chunk(0x0101, struct.pack("<II", 1, NONE), struct.pack("<II", index["android"], ns))
    resmap = _chunk(0x0180, b"", struct.pack("<III", NAME, VERSION_CODE, VERSION_NAME))
    return _chunk(0x0003, b"", _pool(strings, utf8=utf8) + resmap + nodes)


def build_apk(package: str, **manifest: object) -> bytes:
    """An APK-like zip: the binary manifest, a classes.dex stub and resources.arsc stub."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as apk:
        apk.writestr("AndroidManifest.xml", manifest_xml(package, **manifest))  # type: ignore[arg-type]
        apk.writestr("classes.dex", b"dex\n035\0" + package.encode())
        apk.writestr("resources.arsc", b"\x02\x00\x0c\x00")
    return out.getvalue()


def catalog_apk(
    state: PhoneState,
    package: str,
    *,
    version_name: str = "1.0",
    version_code: int = 1,
    permissions: tuple[str, ...] = (),
    label: str = "",
) -> bytes:
    """An APK the fake phone's `pm install` knows (by its md5, as it knows uiautomator2's): the
    package it installs is the one its manifest declares, asking for the same permissions."""
    data = build_apk(package, version_name=version_name, version_code=version_code, permissions=permissions)
    state.apk_catalog[hashlib.md5(data).hexdigest()] = Package(
        name=package,
        label=label or package.rsplit(".", 1)[-1].title(),
        system=False,
        version_name=version_name,
        version_code=version_code,
        uid=10300 + len(state.apk_catalog),
        requested=list(permissions),
    )
    return data
