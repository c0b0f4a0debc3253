"""Contacts."""

from __future__ import annotations

from pydantic import Field, model_validator

from phoneuse_runtime.device.base import ContactFilter
from phoneuse_runtime.device.recipients import looks_like_number
from phoneuse_runtime.kernel.capabilities import CONTACTS
from phoneuse_runtime.kernel.params import Params
from phoneuse_runtime.kernel.registry import ActionContext, ActionResult, ActionSpec


class AddContactParams(Params):
    name: str = Field(min_length=1)
    phone: str = ""
    email: str = ""

    @model_validator(mode="after")
    def _valid(self) -> AddContactParams:
        if self.phone and not looks_like_number(self.phone):
            raise ValueError(f"phone {self.phone!r} is not a phone number")
        if self.email and "@" not in self.email:
            raise ValueError(f"email {self.email!r} is not an email address")
        return self


class AddContactResult(ActionResult):
    contact_id: str
    name: str
    verified: bool = Field(description="the contact was read back from the contacts store")


async def add_contact(ctx: ActionContext, p: AddContactParams) -> AddContactResult:
    phones = [p.phone] if p.phone else []
    emails = [p.email] if p.email else []
    saved = await ctx.device.add_contact(p.name, phones, emails)
    if saved.id:
        rows = await ctx.device.contacts(ContactFilter(id=saved.id))
        stored = next((c for c in rows if c.id == saved.id), None)
    else:  # the phone did not tell its id: the newest contact of that name
        rows = await ctx.device.contacts(ContactFilter(name=p.name.strip()))
        named = [c for c in rows if c.name == p.name.strip()]
        stored = max(named, key=lambda c: int(c.id) if c.id.isdigit() else 0, default=None)
    verified = stored is not None and stored.name == p.name
    return AddContactResult(
        contact_id=saved.id or (stored.id if stored else ""),
        name=stored.name if stored else p.name.strip(),
        verified=verified,
        via=saved.via,
    )


ACTIONS = (
    ActionSpec(
        "ADD_CONTACT",
        AddContactParams,
        add_contact,
        AddContactResult,
        "Create a contact",
        requires=frozenset({CONTACTS}),
    ),
)
