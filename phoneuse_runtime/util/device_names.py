"""A device's name in a fleet: the serial made safe for NATS subjects, KV keys and the
`x-phoneuse-device` header, by one rule (issue 20): every character outside `[A-Za-z0-9_-]`
becomes `_`, so `192.168.1.5:5555` is `192_168_1_5_5555`."""

from __future__ import annotations

import re
from collections.abc import Iterable

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


class NameCollision(ValueError):
    """Two serials that the rule makes the same name."""


def device_name(serial: str) -> str:
    """The name of the device with this serial."""
    return _UNSAFE.sub("_", serial)


def is_device_name(name: str) -> bool:
    """Whether `name` is already a device name (what `serve --device-name` accepts)."""
    return _NAME.fullmatch(name) is not None


def device_names(serials: Iterable[str]) -> dict[str, str]:
    """Each serial's name; two serials with one name are refused, naming both."""
    names: dict[str, str] = {}
    for serial in serials:
        name = device_name(serial)
        other = names.get(name)
        if other is not None and other != serial:
            raise NameCollision(f"serials {other!r} and {serial!r} would both be named {name!r}")
        names[name] = serial
    return {serial: name for name, serial in names.items()}
