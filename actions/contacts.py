"""Contacts."""

from __future__ import annotations

from pydantic import Field, model_validator

from phoneuse_runtime.capabilities import CONTACTS
from phoneuse_runtime.kit import looks_like_number
from phoneuse_runtime.params import Params
from phoneuse_runtime.registry import ActionContext, ActionResult, ActionSpec


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
    contact = await ctx.device.add_contact(p.name, phones, emails)
    verified = any(c.id == contact.id and c.name == p.name for c in await ctx.device.contacts())
    return AddContactResult(contact_id=contact.id, name=contact.name, verified=verified, via=ctx.device.via)


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
