"""Who a message or a call goes to: a number as given, or a contact picked by name.

Read through the `Device`'s contacts, so every backend resolves a recipient the same way.
"""

from __future__ import annotations

import re

from phoneuse_runtime.device.base import Contact, ContactFilter, Device
from phoneuse_runtime.kernel.errors import InvalidParams
from phoneuse_runtime.util.names import match_name

_PHONE = re.compile(r"^\+?[\d\s().\-]{3,}$")


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
