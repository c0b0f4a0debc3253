"""What an APK says it is: its package, version and the permissions it asks for, read in Python.

An APK is a zip whose `AndroidManifest.xml` is not text but Android's binary XML (AXML, the
format of `frameworks/base/libs/androidfw/include/androidfw/ResourceTypes.h`): a chunk
`RES_XML_TYPE` (0x0003) holding a string pool (`RES_STRING_POOL_TYPE`, 0x0001: UTF-16 or, with
the UTF8 flag, UTF-8 strings, each behind its length), a resource map (0x0180: the attribute
names' resource ids, by string index) and the tree's nodes: namespaces (0x0100/0x0101),
elements' starts (0x0102, with their attributes: namespace, name, raw value, typed value) and
ends (0x0103). Every chunk starts with its type (u16), header size (u16) and whole size (u32),
little-endian. Only what the owner reads before an install is taken: `<manifest package=...
android:versionName=... android:versionCode=...>` and each `<uses-permission android:name=...>`
(and `uses-permission-sdk-23`). An attribute is known by its resource id where the map gives one
(`android:name` is 0x01010003 whatever its string says: shrinkers blank the names), else by name.

Everything is bounded: the manifest's uncompressed size (a zip bomb is refused before it is
inflated), the strings and the permissions kept. Whatever is not an APK this can read is
`ApkError`, saying what is wrong.
"""

from __future__ import annotations

import hashlib
import re
import struct
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO

MANIFEST = "AndroidManifest.xml"
MAX_MANIFEST_BYTES = 4 * 1024 * 1024  # real manifests are tens of KB; a bigger one is not read
MAX_PERMISSIONS = 512  # the framework defines a few hundred; past it the APK is not a real one
MAX_STRING_CHARS = 1024

XML = 0x0003
STRING_POOL = 0x0001
RESOURCE_MAP = 0x0180
START_ELEMENT = 0x0102
UTF8_FLAG = 0x100
NO_INDEX = 0xFFFFFFFF
TYPE_STRING = 0x03
TYPE_INT_DEC = 0x10
TYPE_INT_HEX = 0x11

# android:name, android:versionCode, android:versionName (frameworks/base/core/res/res/values/public.xml)
ATTR_IDS = {0x01010003: "name", 0x0101021B: "versionCode", 0x0101021C: "versionName"}
PERMISSION_TAGS = ("uses-permission", "uses-permission-sdk-23", "uses-permission-sdk-m")
# What Android accepts as a package name and how permission names are written (PackageParser).
PACKAGE_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)+$")
PERMISSION_NAME = re.compile(r"^[A-Za-z][\w]*(\.[\w]+)+$")


class ApkError(ValueError):
    """Not an APK whose manifest this can read: the message says what is wrong."""


@dataclass(frozen=True)
class Manifest:
    package: str
    version_name: str
    version_code: int | None
    permissions: tuple[str, ...]  # as the manifest lists them, each once


def file_sha256(path: Path) -> str:
    """The hex SHA-256 of a file, read a MiB at a time (an APK may be large)."""
    digest = hashlib.sha256()
    with path.open("rb") as file:
        while chunk := file.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def read_apk(path: Path, *, max_bytes: int = MAX_MANIFEST_BYTES) -> Manifest:
    """The manifest of the APK at `path` on this machine."""
    try:
        with path.open("rb") as file:
            return read_apk_file(file, max_bytes=max_bytes)
    except OSError as exc:
        raise ApkError(f"cannot read {path.name}: {exc.strerror or exc}") from exc


def read_apk_file(file: IO[bytes], *, max_bytes: int = MAX_MANIFEST_BYTES) -> Manifest:
    try:
        with zipfile.ZipFile(file) as apk:
            try:
                info = apk.getinfo(MANIFEST)
            except KeyError:
                raise ApkError(f"a zip without {MANIFEST}: not an APK") from None
            if info.file_size > max_bytes:
                raise ApkError(f"its {MANIFEST} is {info.file_size} bytes, past the {max_bytes} read")
            with apk.open(info) as entry:
                data = entry.read(max_bytes + 1)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, EOFError) as exc:
        raise ApkError(f"not a zip an APK is made of ({exc})") from exc
    if len(data) > max_bytes:
        raise ApkError(f"its {MANIFEST} inflates past the {max_bytes} bytes read")
    return parse_manifest(data)


def _u16(data: bytes, at: int) -> int:
    return int(struct.unpack_from("<H", data, at)[0])


def _u32(data: bytes, at: int) -> int:
    return int(struct.unpack_from("<I", data, at)[0])


def _length(data: bytes, at: int, *, utf8: bool) -> tuple[int, int]:
    """A string pool length (1 or 2 units, the high bit saying two) and where it ends."""
    if utf8:
        first = data[at]
        if first & 0x80:
            return ((first & 0x7F) << 8) | data[at + 1], at + 2
        return first, at + 1
    first = _u16(data, at)
    if first & 0x8000:
        return ((first & 0x7FFF) << 16) | _u16(data, at + 2), at + 4
    return first, at + 2


def _strings(data: bytes, start: int, end: int) -> list[str]:
    header_size = _u16(data, start + 2)
    count, _styles, flags, strings_start = struct.unpack_from("<IIII", data, start + 8)
    utf8 = bool(flags & UTF8_FLAG)
    if count > (end - start) // 4:
        raise ApkError("its manifest's string pool counts more strings than it holds")
    offsets = struct.unpack_from(f"<{count}I", data, start + header_size)
    base = start + strings_start
    found = []
    for offset in offsets:
        at = base + offset
        if utf8:
            _chars, at = _length(data, at, utf8=True)
            size, at = _length(data, at, utf8=True)
            raw = data[at : at + size]
            if at + size > end:
                raise ApkError("a string of its manifest runs past its string pool")
            text = raw.decode("utf-8", errors="replace")
        else:
            size, at = _length(data, at, utf8=False)
            if at + 2 * size > end:
                raise ApkError("a string of its manifest runs past its string pool")
            text = data[at : at + 2 * size].decode("utf-16-le", errors="replace")
        found.append(text[:MAX_STRING_CHARS])
    return found


def _attributes(data: bytes, at: int, strings: list[str], ids: list[int]) -> tuple[str, dict[str, str | int]]:
    """An element's name and its attributes by name (known ids first), strings or integers."""
    name_index = _u32(data, at + 4)
    attr_start, attr_size, count = struct.unpack_from("<HHH", data, at + 8)
    tag = strings[name_index] if name_index < len(strings) else ""
    attrs: dict[str, str | int] = {}
    for i in range(count):
        base = at + attr_start + i * attr_size
        name_i, raw_i = _u32(data, base + 4), _u32(data, base + 8)
        kind, value = data[base + 15], _u32(data, base + 16)
        name = ATTR_IDS.get(ids[name_i], "") if name_i < len(ids) else ""
        if not name and name_i < len(strings):
            name = strings[name_i]
        if kind == TYPE_STRING or (raw_i != NO_INDEX and raw_i < len(strings)):
            index = value if kind == TYPE_STRING else raw_i
            if index < len(strings):
                attrs[name] = strings[index]
        elif kind in (TYPE_INT_DEC, TYPE_INT_HEX):
            attrs[name] = value
    return tag, attrs


def parse_manifest(data: bytes) -> Manifest:
    """`Manifest` from a binary AndroidManifest.xml; ApkError where it is not one."""
    try:
        return _parse(data)
    except (struct.error, IndexError) as exc:
        raise ApkError(f"its {MANIFEST} is cut short or malformed ({exc})") from exc


def _parse(data: bytes) -> Manifest:
    if len(data) < 8 or _u16(data, 0) != XML:
        raise ApkError(f"its {MANIFEST} is not Android's binary XML (a plain-text one is not built)")
    end = min(_u32(data, 4), len(data))
    at = _u16(data, 2)
    strings: list[str] = []
    ids: list[int] = []
    package, version_name, version_code = "", "", None
    permissions: dict[str, None] = {}
    seen_manifest = False
    while at + 8 <= end:
        kind, size = _u16(data, at), _u32(data, at + 4)
        if size < 8 or at + size > end:
            raise ApkError(f"a chunk of its {MANIFEST} at byte {at} has a bad size ({size})")
        if kind == STRING_POOL:
            strings = _strings(data, at, at + size)
        elif kind == RESOURCE_MAP:
            ids = list(struct.unpack_from(f"<{(size - 8) // 4}I", data, at + 8))
        elif kind == START_ELEMENT:
            tag, attrs = _attributes(data, at + _u16(data, at + 2), strings, ids)
            if tag == "manifest" and not seen_manifest:
                seen_manifest = True
                package = str(attrs.get("package", ""))
                version_name = str(attrs.get("versionName", ""))
                code = attrs.get("versionCode")
                version_code = code if isinstance(code, int) else None
            elif tag in PERMISSION_TAGS and isinstance(attrs.get("name"), str):
                permissions[str(attrs["name"])] = None
                if len(permissions) > MAX_PERMISSIONS:
                    raise ApkError(f"its manifest asks for more than {MAX_PERMISSIONS} permissions")
        at += size
    if not seen_manifest:
        raise ApkError(f"its {MANIFEST} has no <manifest> element")
    if not PACKAGE_NAME.match(package):
        raise ApkError(f"its manifest names no valid package ({package[:80]!r})")
    return Manifest(package, version_name, version_code, tuple(permissions))
