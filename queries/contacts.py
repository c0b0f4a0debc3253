"""CONTACTS: contacts on the device."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field

from phoneuse_runtime.capabilities import CONTACTS
from phoneuse_runtime.device.base import ContactFilter
from phoneuse_runtime.numbers import digits
from phoneuse_runtime.params import Params
from phoneuse_runtime.registry import QueryContext, QueryResult, QuerySpec


class ContactFilters(Params):
    name: str | None = Field(default=None, description="part of the display name, any case")
    phone: str | None = Field(default=None, description="digits that appear in one of the numbers")
    q: str | None = Field(default=None, description="matches name, number or email")
    id: str | None = None


class ContactResult(QueryResult):
    id: str
    name: str
    phones: list[str]
    emails: list[str]
    starred: bool


def _has_digits(numbers: list[str], wanted: str) -> bool:
    needle = digits(wanted)
    return bool(needle) and any(needle in digits(n) for n in numbers)


async def contacts(ctx: QueryContext, f: ContactFilters) -> Sequence[ContactResult]:
    # The phone narrows by id and name itself; `phone` (any digits within a number) and `q` are
    # looser than its filters, so they are matched here.
    rows = await ctx.device.contacts(ContactFilter(id=f.id, name=f.name or None))
    out = []
    for c in sorted(rows, key=lambda c: c.name.casefold()):
        if f.id is not None and c.id != f.id:
            continue
        if f.name and f.name.casefold() not in c.name.casefold():
            continue
        if f.phone and not _has_digits(c.phones, f.phone):
            continue
        if f.q:
            q = f.q.casefold()
            if not (
                q in c.name.casefold()
                or any(q in e.casefold() for e in c.emails)
                or _has_digits(c.phones, f.q)
            ):
                continue
        out.append(ContactResult(id=c.id, name=c.name, phones=c.phones, emails=c.emails, starred=c.starred))
    return out


QUERIES = (
    QuerySpec(
        "CONTACTS",
        ContactFilters,
        contacts,
        ContactResult,
        "Contacts, sorted by name",
        requires=frozenset({CONTACTS}),
    ),
)
