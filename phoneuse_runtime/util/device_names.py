"""A device's name in a fleet: the serial made safe for NATS subjects, KV keys and the
`x-phoneuse-device` header, by one rule (issue 20): every character outside `[A-Za-z0-9_-]`
becomes `_`, so `192.168.1.5:5555` is `192_168_1_5_5555`.

A name is at most NAME_MAX characters: a longer one keeps its first characters and ends in `-`
and 8 hex digits of the serial's SHA-256, so two long serials sharing a beginning stay apart. A
serial is at most SERIAL_MAX characters (adb's own mDNS form,
`adb-28231FDH200XYZ-AbCdEf._adb-tls-connect._tcp`, is 47): a longer one is refused
(`serial_problem`). Two names are the same name without regard to case (`SIM-2` is `sim-2`):
the door's nginx matches the header so, and so does a case-insensitive file system."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
NAME_MAX = 64
SERIAL_MAX = 128
_HASH_HEX = 8
_NAME = re.compile(rf"[A-Za-z0-9_-]{{1,{NAME_MAX}}}")


class NameCollision(ValueError):
    """Two serials that the rule makes the same name."""


def device_name(serial: str) -> str:
    """The name of the device with this serial."""
    name = _UNSAFE.sub("_", serial)
    if len(name) <= NAME_MAX:
        return name
    digest = hashlib.sha256(serial.encode("utf-8", "surrogatepass")).hexdigest()[:_HASH_HEX]
    return f"{name[: NAME_MAX - _HASH_HEX - 1]}-{digest}"


def name_key(name: str) -> str:
    """What two names are compared by: the same key is the same device to the door."""
    return name.lower()


def serial_problem(serial: str) -> str | None:
    """Why a device with this serial cannot join a fleet, or None."""
    if not serial:
        return "a device with an empty serial cannot be named"
    if len(serial) > SERIAL_MAX:
        return f"its serial has {len(serial)} characters; at most {SERIAL_MAX} are routed"
    return None


def collision(serial: str, name: str, other_serial: str, other_name: str) -> str:
    """The words for two serials whose names are the same name."""
    same = repr(name) if name == other_name else f"{name!r} and {other_name!r} (one name in any case)"
    return f"serials {serial!r} and {other_serial!r} would both be named {same}"


def is_device_name(name: str) -> bool:
    """Whether `name` is already a device name (what `serve --device-name` accepts)."""
    return _NAME.fullmatch(name) is not None


def device_names(serials: Iterable[str]) -> dict[str, str]:
    """Each serial's name; two serials with one name (without regard to case) are refused,
    naming both."""
    names: dict[str, tuple[str, str]] = {}  # name_key -> (serial, name)
    for serial in serials:
        name = device_name(serial)
        other = names.get(name_key(name))
        if other is not None and other[0] != serial:
            raise NameCollision(collision(other[0], other[1], serial, name))
        names[name_key(name)] = (serial, name)
    return {serial: name for serial, name in names.values()}
