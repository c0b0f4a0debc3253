"""CONTACTS: one view of the people the phone knows: its contacts, merged with the people the
memory knows by name (from REMEMBER or calendars), each with when they were last in touch."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field

from phoneuse_runtime.device.base import Contact, ContactFilter
from phoneuse_runtime.kernel.capabilities import CONTACTS
from phoneuse_runtime.kernel.params import Params
from phoneuse_runtime.kernel.registry import QueryContext, QueryResult, QuerySpec
from phoneuse_runtime.memory import Memory
from phoneuse_runtime.memory.people import Person, people
from phoneuse_runtime.memory.resolve import e164, email_key, fold, phone_key
from phoneuse_runtime.util.numbers import digits, same_number

# A person the memory knows only from these (an SMS short code, a caller) is not a contact.
NAMED_SOURCES = frozenset({"contacts", "agent", "calendar"})


class ContactFilters(Params):
    name: str | None = Field(default=None, description="part of the name or an alias, any case or accents")
    phone: str | None = Field(
        default=None,
        description="a number in any format (+1 (555) 000-1111, 5550001111, +15550001111 are one), "
        "or digits that appear in one of a contact's numbers",
    )
    email: str | None = Field(default=None, description="an email, any case")
    q: str | None = Field(default=None, description="matches name, alias, number or email")
    id: str | None = Field(default=None, description="the phone's contact id")


class ContactResult(QueryResult):
    id: str = Field(description="the phone's contact id; empty for a person only the memory knows")
    name: str
    phones: list[str] = Field(description="as displayed (as stored on the phone)")
    phones_e164: list[str] = Field(description="the same numbers in E.164, where they are numbers")
    emails: list[str]
    starred: bool
    sources: list[str] = Field(description="contacts, sms, calls, calendar, agent, ...")
    last_contacted: int | None = Field(description="epoch ms of the newest message or call with them")
    memory_id: str | None = Field(description="their node in MEMORY")
    relevance: float = Field(description="how well the name or q matched (0 without them)")


def _name_score(wanted: str, names: Sequence[str]) -> float:
    """3 for the whole name, 2 for its start, 1.5 for a word's start, 1 for a part of it."""
    best = 0.0
    for name in names:
        folded = fold(name)
        if folded == wanted:
            return 3.0
        if folded.startswith(wanted):
            best = max(best, 2.0)
        elif any(word.startswith(wanted) for word in folded.split()):
            best = max(best, 1.5)
        elif wanted in folded:
            best = max(best, 1.0)
    return best


def _has_digits(numbers: Sequence[str], wanted: str) -> bool:
    """Part of a number (a search: "000-1111" finds "+1 (555) 000-1111")."""
    needle = digits(wanted)
    return bool(needle) and any(needle in digits(n) for n in numbers)


def _has_number(numbers: Sequence[str], wanted: str) -> bool:
    """The number itself, by the one rule SEND_MESSAGE and the devices use (`same_number`), or
    part of one."""
    return any(same_number(n, wanted) for n in numbers) or _has_digits(numbers, wanted)


def _device_matches(c: Contact, f: ContactFilters) -> bool:
    if f.id is not None and c.id != f.id:
        return False
    if f.name and _name_score(fold(f.name), [c.name]) == 0:
        return False
    if f.phone and not _has_number(c.phones, f.phone):
        return False
    emails = {k for e in c.emails if (k := email_key(e))}
    if f.email and (email_key(f.email) or "") not in emails:
        return False
    if f.q:
        q = fold(f.q)
        if not (
            q in fold(c.name)
            or any(q in fold(e) for e in c.emails)
            or _has_number(c.phones, f.q)
            or (email_key(f.q) or "") in emails
        ):
            return False
    return True


async def contacts(ctx: QueryContext, f: ContactFilters) -> Sequence[ContactResult]:
    memory = ctx.component(Memory)
    await memory.catch_up()  # the latest SMS and calls, for each person's last contact
    region = memory.region
    wanted_keys = {
        k
        for k in (phone_key(f.phone, region) if f.phone else None, email_key(f.email) if f.email else None)
        if k
    }
    q_keys = [k for k in ((phone_key(f.q, region), email_key(f.q)) if f.q else ()) if k]
    # The phone narrows by id itself; the rest (accents, any number format) is matched here.
    rows = await ctx.device.contacts(ContactFilter(id=f.id))
    # Which of the phone's contacts are wanted is judged as SEND_MESSAGE and the phone judge a
    # number (util/numbers.same_number); the E.164 keys only find the memory's people.
    device = [c for c in rows if _device_matches(c, f)]
    keys = sorted(wanted_keys)
    known: list[Person] = await memory.read(
        lambda g: people(
            g,
            keys=keys,
            name=f.name,
            q=f.q,
            q_keys=q_keys,
            everyone=not (f.name or f.phone or f.email or f.q),
            also=[f"contact:{c.id}" for c in device],
        )
    )
    by_key = {k: p for p in known for k in p.keys}
    out: list[ContactResult] = []
    used: set[str] = set()
    name_wanted = fold(f.name or f.q or "")
    for c in device:
        person = by_key.get(f"contact:{c.id}") or next(
            (by_key[k] for p in c.phones if (k := phone_key(p, region) or "") in by_key), None
        )
        if person is not None:
            used.add(person.memory_id)
        out.append(
            ContactResult(
                id=c.id,
                name=c.name,
                phones=list(c.phones),
                phones_e164=[n for p in c.phones if (n := e164(p, region))],
                emails=list(c.emails),
                starred=c.starred,
                sources=person.sources if person else ["contacts"],
                last_contacted=person.last_contacted if person else None,
                memory_id=person.memory_id if person else None,
                relevance=_name_score(name_wanted, [c.name, *(person.aliases if person else [])])
                if name_wanted
                else 0.0,
            )
        )
    if f.id is None:
        for person in known:
            if (
                person.memory_id in used
                or not NAMED_SOURCES & set(person.sources)
                or "contacts" in person.sources
            ):
                continue  # on the phone (listed above, or deleted there since), or never named
            attrs = person.attrs
            phones = [str(p) for p in attrs.get("phones", [])]
            out.append(
                ContactResult(
                    id="",
                    name=person.name,
                    phones=phones,
                    phones_e164=[n for p in phones if (n := e164(p, region))],
                    emails=[str(e) for e in attrs.get("emails", [])],
                    starred=False,
                    sources=person.sources,
                    last_contacted=person.last_contacted,
                    memory_id=person.memory_id,
                    relevance=_name_score(name_wanted, [person.name, *person.aliases])
                    if name_wanted
                    else 0.0,
                )
            )
    out.sort(key=lambda r: (-r.relevance, -(r.last_contacted or 0), fold(r.name)))
    return out


QUERIES = (
    QuerySpec(
        "CONTACTS",
        ContactFilters,
        contacts,
        ContactResult,
        "The phone's contacts merged with the people the memory knows; best match, then last contacted",
        requires=frozenset({CONTACTS}),
    ),
)
