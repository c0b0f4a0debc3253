"""The phone's content providers through the `content` tool: SMS, contacts, calendar, call log.

Filters become `--where` clauses and `--sort` orders, so a poll reads only new rows. Free-text
columns come last in each projection (see shell.parse_rows). `content` prints its failures and
still exits 0, so every answer is checked for them (`checked`): a SecurityException is
PERMISSION_DENIED, anything else the provider said is DEVICE_UNAVAILABLE.

Limits: `content query` has no limit option. A read with a `limit` asks the provider for
`--sort "... LIMIT n"`, which SQLite-backed providers accept; one that refuses it (a strict
grammar) is remembered in `SortLimits`, logged once, and read without it from then on, the limit
then applied here.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from phoneuse_runtime.device.adb.shell import (
    RowFormatError,
    bind,
    command,
    is_security_failure,
    parse_rows,
    projection_arg,
    provider_failure,
    sql_like,
    sql_text,
    where,
)
from phoneuse_runtime.device.adb.worker import Budget
from phoneuse_runtime.device.base import (
    Attendee,
    AttendeeStatus,
    CalendarEvent,
    CallFilter,
    CallRecord,
    Contact,
    ContactFilter,
    EventFilter,
    SmsBox,
    SmsFilter,
    SmsMessage,
)
from phoneuse_runtime.kernel.errors import DeviceUnavailable, PermissionDenied
from phoneuse_runtime.util.numbers import digits, same_number

log = logging.getLogger(__name__)

Run = Callable[[Budget, str], str]  # runs a shell command, returns its output (stdout + stderr)

SMS_URI = "content://sms"
CONTACTS_DATA_URI = "content://com.android.contacts/data"
RAW_CONTACTS_URI = "content://com.android.contacts/raw_contacts"
CALENDARS_URI = "content://com.android.calendar/calendars"
EVENTS_URI = "content://com.android.calendar/events"
ATTENDEES_URI = "content://com.android.calendar/attendees"
CALLS_URI = "content://call_log/calls"

# Telephony.TextBasedSmsColumns.TYPE
SMS_BOX_TYPES: dict[SmsBox, int] = {"inbox": 1, "sent": 2, "draft": 3, "outbox": 4, "failed": 5}
_BOX_OF_TYPE: dict[int, SmsBox] = {v: k for k, v in SMS_BOX_TYPES.items()}
_BOX_OF_TYPE[6] = "outbox"  # queued

CallKind = Literal["incoming", "outgoing", "missed", "rejected", "blocked", "voicemail"]
# CallLog.Calls.TYPE
_CALL_KINDS: dict[int, CallKind] = {
    1: "incoming",
    2: "outgoing",
    3: "missed",
    4: "voicemail",
    5: "rejected",
    6: "blocked",
}

MIME_NAME = "vnd.android.cursor.item/name"
MIME_PHONE = "vnd.android.cursor.item/phone_v2"
MIME_EMAIL = "vnd.android.cursor.item/email_v2"

# CalendarContract.Attendees.ATTENDEE_STATUS and the RELATIONSHIP_ORGANIZER of ATTENDEE_RELATIONSHIP.
_ATTENDEE_STATUSES: dict[int, AttendeeStatus] = {
    0: "none",
    1: "accepted",
    2: "declined",
    3: "invited",
    4: "tentative",
}
RELATIONSHIP_ORGANIZER = 2
# Up to this many events, their attendees are asked for by id (`event_id IN (...)`); past it, by
# the range of their ids, filtered here, so that the command stays short for old adbd's 4 KiB.
ATTENDEE_IDS_LISTED = 200

# CalendarContract.Calendars.CAL_ACCESS_CONTRIBUTOR: from here up, a calendar takes new events.
WRITABLE_ACCESS_LEVEL = 500


def checked(output: str, doing: str) -> str:
    """`output` unless `content` reported a failure in it."""
    failure = provider_failure(output)
    if failure is None:
        return output
    if is_security_failure(output):
        raise PermissionDenied(f"{doing}: the phone refused adb's shell access ({failure})")
    raise DeviceUnavailable(f"{doing}: the provider failed ({failure})")


class SortLimits:
    """The providers (by URI) that refused `LIMIT n` in a sort order, on this phone."""

    def __init__(self) -> None:
        self.refused: set[str] = set()


def query(
    run: Run,
    budget: Budget,
    uri: str,
    projection: Sequence[str],
    *,
    where_clause: str = "",
    sort: str = "",
    limit: int | None = None,
    limits: SortLimits | None = None,
    doing: str,
) -> list[dict[str, str]]:
    """Rows of the projection; at most `limit` of them (in `sort` order) when one is given."""
    args = ["content", "query", "--uri", uri, "--projection", projection_arg(projection)]
    if where_clause:
        args += ["--where", where_clause]
    if limit is not None and sort and limits is not None and uri not in limits.refused:
        output = run(budget, command(*args, "--sort", f"{sort} LIMIT {max(0, int(limit))}"))
        if provider_failure(output) is None or is_security_failure(output):
            return _rows(checked(output, doing), projection, doing)[:limit]
        log.info("%s refuses LIMIT in its sort order (%s); reading it without", uri, provider_failure(output))
        limits.refused.add(uri)
    if sort:
        args += ["--sort", sort]
    rows = _rows(checked(run(budget, command(*args)), doing), projection, doing)
    return rows[:limit] if limit is not None else rows


def _rows(output: str, projection: Sequence[str], doing: str) -> list[dict[str, str]]:
    try:
        return parse_rows(output, projection)
    except RowFormatError as exc:
        raise DeviceUnavailable(f"{doing}: unexpected answer from the provider ({exc})") from exc


def _int(text: str, default: int = 0) -> int:
    try:
        return int(text)
    except ValueError:
        return default


# --- SMS ------------------------------------------------------------------------
SMS_COLUMNS = ("_id", "thread_id", "type", "date", "read", "address", "body")


def sms_where(f: SmsFilter) -> str:
    return where(
        f"type={SMS_BOX_TYPES[f.box]}" if f.box is not None else None,
        f"_id>{int(f.above_id)}" if f.above_id is not None else None,
        f"date>={int(f.since_ms)}" if f.since_ms is not None else None,
        f"address={sql_text(f.address)}" if f.address is not None else None,
    )


def sms_messages(run: Run, budget: Budget, f: SmsFilter, limits: SortLimits) -> list[SmsMessage]:
    """Newest first."""
    rows = query(
        run,
        budget,
        SMS_URI,
        SMS_COLUMNS,
        where_clause=sms_where(f),
        sort="_id DESC",
        limit=f.limit,
        limits=limits,
        doing="reading SMS",
    )
    messages = [
        SmsMessage(
            id=r["_id"],
            thread_id=r["thread_id"],
            address=r["address"],
            body=r["body"],
            date_ms=_int(r["date"]),
            box=_BOX_OF_TYPE.get(_int(r["type"]), "inbox"),
            read=r["read"] == "1",
        )
        for r in rows
    ]
    messages.sort(key=lambda m: _int(m.id), reverse=True)  # numerically, whatever the provider did
    return messages[: f.limit] if f.limit is not None else messages


def highest_sms_id(run: Run, budget: Budget, limits: SortLimits) -> int:
    """The SMS table's highest _id (0 when empty): the high-water mark for MESSAGE_RECEIVED."""
    rows = query(
        run, budget, SMS_URI, ("_id",), sort="_id DESC", limit=1, limits=limits, doing="reading SMS ids"
    )
    return max((_int(r["_id"]) for r in rows), default=0)


# --- contacts -----------------------------------------------------------------
CONTACT_COLUMNS = ("contact_id", "starred", "mimetype", "display_name", "data1")


def contacts(run: Run, budget: Budget, f: ContactFilter) -> list[Contact]:
    """One query over the data table: each contact's name, numbers and addresses, by name."""
    mimes = ",".join(sql_text(m) for m in (MIME_NAME, MIME_PHONE, MIME_EMAIL))
    if f.id is not None and not f.id.isdigit():
        return []
    clause = where(
        f"mimetype IN ({mimes})",
        f"contact_id={int(f.id)}" if f.id is not None else None,
        f"display_name LIKE {sql_like(f.name)}" if f.name else None,
    )
    rows = query(
        run, budget, CONTACTS_DATA_URI, CONTACT_COLUMNS, where_clause=clause, doing="reading contacts"
    )
    by_id: dict[str, Contact] = {}
    for r in rows:
        contact = by_id.get(r["contact_id"])
        if contact is None:
            contact = by_id[r["contact_id"]] = Contact(
                id=r["contact_id"], name=r["display_name"], starred=r["starred"] == "1"
            )
        if r["mimetype"] == MIME_PHONE and r["data1"] and r["data1"] not in contact.phones:
            contact.phones.append(r["data1"])
        elif r["mimetype"] == MIME_EMAIL and r["data1"] and r["data1"] not in contact.emails:
            contact.emails.append(r["data1"])
    found = sorted(by_id.values(), key=lambda c: (c.name.casefold(), _int(c.id)))
    if f.phone is not None:
        if not digits(f.phone):
            return []
        found = [c for c in found if any(same_number(p, f.phone) for p in c.phones)]
    return found[: f.limit] if f.limit is not None else found


def add_contact(
    run: Run, budget: Budget, name: str, phones: list[str], emails: list[str], *, sdk: int
) -> str:
    """Inserts a raw contact (local, no account) and its name, numbers and addresses; returns the
    aggregated contact's id."""
    inserted = run(
        budget,
        " ; ".join(
            (
                command(
                    "content",
                    "insert",
                    "--uri",
                    RAW_CONTACTS_URI,
                    *bind("account_type", "n", "", sdk=sdk),
                    *bind("account_name", "n", "", sdk=sdk),
                ),
                command(
                    "content", "query", "--uri", RAW_CONTACTS_URI, "--projection", "_id", "--sort", "_id DESC"
                ),
            )
        ),
    )
    rows = parse_rows(checked(inserted, "adding a contact"), ("_id",))
    if not rows:
        raise DeviceUnavailable("adding a contact: the new raw contact is not in the provider")
    raw_id = rows[0]["_id"]
    inserts = [(MIME_NAME, [("data1", name)])]
    inserts += [(MIME_PHONE, [("data1", p), ("data2", "2")]) for p in phones]  # TYPE_MOBILE
    inserts += [(MIME_EMAIL, [("data1", e), ("data2", "1")]) for e in emails]  # TYPE_HOME
    commands = []
    for mime, values in inserts:
        args = ["content", "insert", "--uri", CONTACTS_DATA_URI]
        args += bind("raw_contact_id", "l", raw_id, sdk=sdk) + bind("mimetype", "s", mime, sdk=sdk)
        for column, value in values:
            args += bind(column, "i" if column == "data2" else "s", value, sdk=sdk)
        commands.append(command(*args))
    commands.append(
        command(
            "content",
            "query",
            "--uri",
            RAW_CONTACTS_URI,
            "--projection",
            "contact_id",
            "--where",
            f"_id={int(raw_id)}",
        )
    )
    out = checked(run(budget, " ; ".join(commands)), "adding a contact")
    linked = parse_rows(out, ("contact_id",))
    if not linked or not linked[0]["contact_id"]:
        raise DeviceUnavailable(f"adding a contact: raw contact {raw_id} has no contact")
    return linked[0]["contact_id"]


# --- calendar -----------------------------------------------------------------
CALENDAR_COLUMNS = ("_id", "calendar_access_level", "isPrimary", "visible", "calendar_displayName")
EVENT_COLUMNS = (
    "_id",
    "dtstart",
    "dtend",
    "allDay",
    "calendar_id",
    "calendar_displayName",
    "title",
    "eventLocation",
    "description",
)


@dataclass(frozen=True)
class Calendar:
    id: int
    name: str
    primary: bool
    visible: bool


def writable_calendar(run: Run, budget: Budget) -> Calendar | None:
    """The calendar new events go to: among those the phone lets us write (access level 500 and
    up), the primary visible one, else a visible one, else any; lowest id first."""
    rows = query(
        run,
        budget,
        CALENDARS_URI,
        CALENDAR_COLUMNS,
        where_clause=f"calendar_access_level>={WRITABLE_ACCESS_LEVEL}",
        doing="listing calendars",
    )
    found = [
        Calendar(_int(r["_id"]), r["calendar_displayName"], r["isPrimary"] == "1", r["visible"] == "1")
        for r in rows
        if _int(r["calendar_access_level"]) >= WRITABLE_ACCESS_LEVEL
    ]
    if not found:
        return None
    return min(found, key=lambda c: (not (c.primary and c.visible), not c.visible, c.id))


def insert_event(
    run: Run, budget: Budget, calendar: Calendar, event: CalendarEvent, *, tz: str, sdk: int
) -> str:
    """Inserts through the provider and reads the new row's _id back in the same round trip."""
    args = ["content", "insert", "--uri", EVENTS_URI]
    args += bind("calendar_id", "l", calendar.id, sdk=sdk)
    args += bind("title", "s", event.title, sdk=sdk)
    args += bind("dtstart", "l", event.start_ms, sdk=sdk) + bind("dtend", "l", event.end_ms, sdk=sdk)
    args += bind("allDay", "i", 1 if event.all_day else 0, sdk=sdk)
    args += bind("eventTimezone", "s", tz, sdk=sdk)
    if event.location:
        args += bind("eventLocation", "s", event.location, sdk=sdk)
    if event.description:
        args += bind("description", "s", event.description, sdk=sdk)
    find = command(
        "content",
        "query",
        "--uri",
        EVENTS_URI,
        "--projection",
        "_id",
        "--where",
        where(
            f"calendar_id={calendar.id}", f"dtstart={int(event.start_ms)}", f"title={sql_text(event.title)}"
        ),
        "--sort",
        "_id DESC",
    )
    out = checked(run(budget, command(*args) + " ; " + find), "adding a calendar event")
    rows = parse_rows(out, ("_id",))
    if not rows:
        raise DeviceUnavailable("adding a calendar event: the provider took it but does not list it")
    return rows[0]["_id"]


def highest_event_id(run: Run, budget: Budget, limits: SortLimits) -> int:
    rows = query(
        run,
        budget,
        EVENTS_URI,
        ("_id",),
        sort="_id DESC",
        limit=1,
        limits=limits,
        doing="reading calendar ids",
    )
    return max((_int(r["_id"]) for r in rows), default=0)


def find_new_event(run: Run, budget: Budget, above_id: int, title: str, start_ms: int) -> str | None:
    """The event an intent just saved: above the mark, with its title and start."""
    rows = query(
        run,
        budget,
        EVENTS_URI,
        ("_id",),
        where_clause=where(f"_id>{above_id}", f"title={sql_text(title)}", f"dtstart={int(start_ms)}"),
        sort="_id DESC",
        doing="reading the new calendar event",
    )
    return rows[0]["_id"] if rows else None


def calendar_events(run: Run, budget: Budget, f: EventFilter, limits: SortLimits) -> list[CalendarEvent]:
    if f.id is not None and not f.id.isdigit():
        return []
    clause = where(
        "deleted=0",
        f"_id={int(f.id)}" if f.id is not None else None,
        f"dtend>{int(f.starts_after_ms)}" if f.starts_after_ms is not None else None,
        f"dtstart<{int(f.starts_before_ms)}" if f.starts_before_ms is not None else None,
    )
    rows = query(
        run,
        budget,
        EVENTS_URI,
        EVENT_COLUMNS,
        where_clause=clause,
        sort="dtstart ASC, _id ASC",
        limit=f.limit,
        limits=limits,
        doing="reading events",
    )
    events = [
        CalendarEvent(
            id=r["_id"],
            title=r["title"],
            start_ms=_int(r["dtstart"]),
            end_ms=_int(r["dtend"], _int(r["dtstart"])),
            all_day=r["allDay"] == "1",
            location=r["eventLocation"],
            description=r["description"],
            calendar=r["calendar_displayName"],
        )
        for r in rows
    ]
    events.sort(key=lambda e: (e.start_ms, _int(e.id)))
    events = events[: f.limit] if f.limit is not None else events
    guests = attendees(run, budget, [e.id for e in events])
    for event in events:
        event.attendees = guests.get(event.id, [])
    return events


# Free text last: an address, then a name (see shell.parse_rows).
ATTENDEE_COLUMNS = (
    "_id",
    "event_id",
    "attendeeStatus",
    "attendeeRelationship",
    "attendeeEmail",
    "attendeeName",
)


def attendees(run: Run, budget: Budget, event_ids: Sequence[str]) -> dict[str, list[Attendee]]:
    """The guests of these events, by event id, in one query. A phone that lets the shell read
    events but not their attendees gives events without guests, not a failed read."""
    ids = sorted({int(i) for i in event_ids if i.isdigit()})
    if not ids:
        return {}
    if len(ids) <= ATTENDEE_IDS_LISTED:
        clause = f"event_id IN ({','.join(str(i) for i in ids)})"
    else:
        clause = where(f"event_id>={ids[0]}", f"event_id<={ids[-1]}")
    try:
        rows = query(
            run,
            budget,
            ATTENDEES_URI,
            ATTENDEE_COLUMNS,
            where_clause=clause,
            sort="event_id ASC, _id ASC",
            doing="reading attendees",
        )
    except PermissionDenied as exc:
        log.info("the phone lets the shell read events but not their attendees: %s", exc.message)
        return {}
    wanted = {str(i) for i in ids}
    found: dict[str, list[Attendee]] = {}
    for r in rows:
        if r["event_id"] not in wanted or not (r["attendeeName"] or r["attendeeEmail"]):
            continue
        found.setdefault(r["event_id"], []).append(
            Attendee(
                name=r["attendeeName"],
                email=r["attendeeEmail"],
                status=_ATTENDEE_STATUSES.get(_int(r["attendeeStatus"]), "none"),
                organizer=_int(r["attendeeRelationship"]) == RELATIONSHIP_ORGANIZER,
            )
        )
    return found


# --- call log -----------------------------------------------------------------
CALL_COLUMNS = ("_id", "type", "date", "duration", "number", "name")


def call_log(run: Run, budget: Budget, f: CallFilter, limits: SortLimits) -> list[CallRecord]:
    clause = where(
        f"_id>{int(f.above_id)}" if f.above_id is not None else None,
        f"date>={int(f.since_ms)}" if f.since_ms is not None else None,
    )
    rows = query(
        run,
        budget,
        CALLS_URI,
        CALL_COLUMNS,
        where_clause=clause,
        sort="_id DESC",
        # The number is compared here (digits, loosely), so a limit can only go to the phone without one.
        limit=f.limit if f.number is None else None,
        limits=limits,
        doing="reading the call log",
    )
    records = []
    for r in rows:
        records.append(
            CallRecord(
                id=r["_id"],
                number=r["number"],
                kind=_CALL_KINDS.get(_int(r["type"]), "incoming"),
                date_ms=_int(r["date"]),
                duration_s=_int(r["duration"]),
                name=r["name"],
            )
        )
    if f.number is not None:
        records = [c for c in records if same_number(c.number, f.number)]
    records.sort(key=lambda c: _int(c.id), reverse=True)
    return records[: f.limit] if f.limit is not None else records
