"""What action handlers share: selector params, screen reads, bounded polling, contact lookup.

Third-party handlers may use these too; they depend only on the `Device` primitives.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, Field

from .device.base import Contact, ContactFilter, Device
from .errors import InvalidParams
from .names import match_name
from .params import Params
from .ui import Selector, UiNode, element_dict, parse_hierarchy

T = TypeVar("T")

_PHONE = re.compile(r"^\+?[\d\s().\-]{3,}$")


class SelectorFields(Params):
    """The fields that pick an on-screen element besides its text, and the one way to build a
    `Selector` from params; `index` chooses among several matches (0-based)."""

    resource_id: str | None = None
    description: str | None = None
    class_name: str | None = None
    index: int | None = Field(default=None, ge=0)
    ref: str | None = Field(
        default=None,
        pattern=r"^[a-z][a-z0-9]{3}$",
        description="an element's ref from DUMP_UI's compact form; resolved on a fresh read of the "
        "screen, ELEMENT_NOT_FOUND when that element is gone",
    )

    def selector_text(self) -> str | None:
        """The text the element shows, from whichever field a subclass keeps it in."""
        return None

    def selector(self) -> Selector:
        return Selector(
            text=self.selector_text(),
            resource_id=self.resource_id,
            description=self.description,
            class_name=self.class_name,
            index=self.index,
            ref=self.ref,
        )


class SelectorParams(SelectorFields):
    """Picks an on-screen element by its text or the other selector fields."""

    text: str | None = None
    wait_ms: int = Field(default=0, ge=0, description="keep looking this long for the element before failing")

    def selector_text(self) -> str | None:
        return self.text


async def screen(device: Device) -> UiNode:
    return parse_hierarchy(await device.dump_hierarchy())


async def poll(
    check: Callable[[], Awaitable[T | None]], *, interval_ms: int, within_ms: int | None
) -> T | None:
    """Calls `check` until it returns a value, every `interval_ms`; gives up after `within_ms`
    (None: until cancelled by the call's deadline)."""
    loop = asyncio.get_running_loop()
    give_up = None if within_ms is None else loop.time() + within_ms / 1000
    while True:
        found = await check()
        if found is not None:
            return found
        pause = interval_ms / 1000
        if give_up is not None:
            if loop.time() >= give_up:
                return None
            pause = min(pause, give_up - loop.time())  # the last look starts by `within_ms`, not after
        await asyncio.sleep(pause)


async def find_element(
    device: Device, selector: Selector, *, wait_ms: int, interval_ms: int | None = None
) -> UiNode:
    """The element, looked for up to `wait_ms` by the device itself (`Device.find`: one round trip
    where the backend resolves selectors on the phone); ElementNotFound after that, with the
    precise reason read from one last dump. `interval_ms` is no longer used: a device that must
    poll does so at its own `find_poll_ms` (the server's wait_poll_ms)."""
    if selector.is_empty():
        raise InvalidParams("give a selector: ref, text, resource_id, description or class_name")
    node = await device.find(selector, timeout_ms=wait_ms)
    if node is None:
        # Raises with the reason ("N matched, index out of range"), or finds what just appeared.
        node = selector.require(await screen(device))
    return node


def looks_like_number(text: str) -> bool:
    return bool(_PHONE.match(text.strip())) and any(c.isdigit() for c in text)


def match_contact(contacts: list[Contact], name: str) -> Contact:
    """By display name, as `names.match_name` picks: exact, else a unique prefix, ignoring case."""
    return match_name(
        contacts,
        name,
        name_of=lambda c: c.name,
        kind="contact",
        candidate=lambda c: {"id": c.id, "name": c.name, "phones": c.phones},
        hint="give a phone number or an existing contact's name",
    )


async def resolve_recipient(device: Device, to: str) -> tuple[str, Contact | None]:
    """A number as given, or a contact's first number. Returns (number, contact)."""
    if looks_like_number(to):
        return to.strip(), None
    # Only contacts whose name contains it can match it (exactly or by prefix), so those are read;
    # all of them only when none matches, for the error's suggestions.
    wanted = to.strip()
    candidates = await device.contacts(ContactFilter(name=wanted))
    if not any(c.name.casefold().startswith(wanted.casefold()) for c in candidates):
        candidates = await device.contacts()
    contact = match_contact(candidates, to)
    if not contact.phones:
        raise InvalidParams(f"contact {contact.name!r} has no phone number")
    return contact.phones[0], contact


class Element(BaseModel):
    """An on-screen element; `bounds` is [left, top, right, bottom] in screen pixels."""

    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True, defer_build=True)
    text: str
    resource_id: str
    description: str
    class_: str = Field(alias="class")
    package: str
    bounds: list[int]
    clickable: bool
    focused: bool
    enabled: bool
    checked: bool
    scrollable: bool

    @classmethod
    def of(cls, node: UiNode) -> Element:
        return cls.model_validate(element_dict(node))
