"""The content providers' data as rows (sms, contacts' raw_contacts/data/contacts views,
calendars/events/attendees, call log), with the columns and derived values the real providers expose
(a contact's display name from its name, email or phone row; events only with their calendar).
The `content` command that queries them is in content.py; per-URI behaviour in provider_tables.py.
"""

from __future__ import annotations

from .intents import CommandError, illegal
from .state import (
    MIME_EMAIL,
    MIME_NAME,
    MIME_PHONE,
    DataRow,
    Event,
    PhoneState,
    RawContact,
)

Row = dict[str, object]
FRAMES = (
    "\tat android.os.Parcel.createExceptionOrNull(Parcel.java:3023)\n"
    "\tat android.os.Parcel.createException(Parcel.java:3007)\n"
    "\tat android.os.Parcel.readException(Parcel.java:2990)\n"
    "\tat android.database.DatabaseUtils.readExceptionFromParcel(DatabaseUtils.java:190)\n"
    "\tat android.database.DatabaseUtils.readExceptionFromParcel(DatabaseUtils.java:142)\n"
    "\tat android.content.ContentProviderProxy.{op}(ContentProviderNative.java:472)\n"
    "\tat com.android.commands.content.Content${cmd}Command.onExecute(Content.java:655)\n"
    "\tat com.android.commands.content.Content$Command.execute(Content.java:522)\n"
    "\tat com.android.commands.content.Content.main(Content.java:735)\n"
    "\tat com.android.internal.os.RuntimeInit.nativeFinishInit(Native Method)\n"
    "\tat com.android.internal.os.RuntimeInit.main(RuntimeInit.java:355)\n"
)
PROVIDERS = {
    "sms": ("com.android.providers.telephony.SmsProvider", "SMS"),
    "com.android.contacts": ("com.android.providers.contacts.ContactsProvider2", "CONTACTS"),
    "com.android.calendar": ("com.android.providers.calendar.CalendarProvider2", "CALENDAR"),
    "call_log": ("com.android.providers.contacts.CallLogProvider", "CALL_LOG"),
    "settings": ("com.android.providers.settings.SettingsProvider", "SETTINGS"),
}

SMS_COLUMNS = [
    "_id",
    "thread_id",
    "address",
    "person",
    "date",
    "date_sent",
    "protocol",
    "read",
    "status",
    "type",
    "reply_path_present",
    "subject",
    "body",
    "service_center",
    "locked",
    "sub_id",
    "error_code",
    "creator",
    "seen",
]
DATA_COLUMNS = ["data" + str(i) for i in range(1, 16)]
TABLE_COLUMNS = {
    "raw_contacts": [
        "_id",
        "contact_id",
        "account_name",
        "account_type",
        "deleted",
        "starred",
        "display_name",
        "version",
    ],
    "view_data": [
        "_id",
        "raw_contact_id",
        "contact_id",
        "mimetype",
        *DATA_COLUMNS,
        "is_primary",
        "is_super_primary",
        "display_name",
        "account_type",
        "starred",
        "account_name",
        "in_visible_group",
    ],
    "view_contacts": [
        "_id",
        "display_name",
        "display_name_alt",
        "has_phone_number",
        "starred",
        "lookup",
        "photo_id",
        "times_contacted",
        "last_time_contacted",
        "in_visible_group",
    ],
    "Calendars": [
        "_id",
        "account_name",
        "account_type",
        "name",
        "calendar_displayName",
        "calendar_access_level",
        "visible",
        "isPrimary",
        "ownerAccount",
        "calendar_timezone",
        "sync_events",
        "calendar_color",
        "deleted",
    ],
    "view_events": [
        "_id",
        "calendar_id",
        "title",
        "description",
        "eventLocation",
        "dtstart",
        "dtend",
        "duration",
        "eventTimezone",
        "allDay",
        "rrule",
        "deleted",
        "hasAlarm",
        "calendar_displayName",
        "calendar_access_level",
        "account_name",
        "account_type",
        "ownerAccount",
        "visible",
    ],
    # CalendarProvider2's attendees query: the Attendees table joined with its event (whose
    # columns it also offers; the ones a caller filters on are here).
    "Attendees": [
        "_id",
        "event_id",
        "attendeeName",
        "attendeeEmail",
        "attendeeStatus",
        "attendeeRelationship",
        "attendeeType",
        "attendeeIdentity",
        "attendeeIdNamespace",
        "calendar_id",
        "title",
        "dtstart",
        "deleted",
    ],
    "calls": [
        "_id",
        "number",
        "date",
        "duration",
        "type",
        "new",
        "name",
        "countryiso",
        "is_read",
        "presentation",
        "subscription_id",
    ],
}


# --- views of the state as rows --------------------------------------------------------------


def sms_rows(state: PhoneState) -> list[Row]:
    state.sms_box("all")
    return [
        {
            "_id": r.id,
            "thread_id": r.thread_id,
            "address": r.address,
            "person": None,
            "date": r.date,
            "date_sent": r.date_sent,
            "protocol": 0 if r.type == 1 else None,
            "read": r.read,
            "status": r.status,
            "type": r.type,
            "reply_path_present": 0 if r.type == 1 else None,
            "subject": None,
            "body": r.body,
            "service_center": None,
            "locked": 0,
            "sub_id": 1,
            "error_code": 0 if r.type != 5 else 1,
            "creator": r.creator,
            "seen": r.seen,
        }
        for r in state.sms
    ]


def _display_name(state: PhoneState, raw: RawContact) -> str | None:
    mine = [d for d in state.data if d.raw_contact_id == raw.id]
    for mime in (MIME_NAME, MIME_EMAIL, MIME_PHONE):
        for d in mine:
            if d.mimetype == mime and d.values.get("data1"):
                return str(d.values["data1"])
    return None


def raw_contact_rows(state: PhoneState) -> list[Row]:
    return [
        {
            "_id": r.id,
            "contact_id": None if r.deleted else r.id,
            "account_name": r.account_name,
            "account_type": r.account_type,
            "deleted": r.deleted,
            "starred": r.starred,
            "display_name": _display_name(state, r),
            "version": 1,
        }
        for r in state.raw_contacts
    ]


def data_rows(state: PhoneState, mimetype: str | None = None) -> list[Row]:
    raws = {r.id: r for r in state.raw_contacts if not r.deleted}
    out: list[Row] = []
    for d in state.data:
        raw = raws.get(d.raw_contact_id)
        if raw is None or (mimetype and d.mimetype != mimetype):
            continue
        row: Row = {
            "_id": d.id,
            "raw_contact_id": d.raw_contact_id,
            "contact_id": raw.id,
            "mimetype": d.mimetype,
        }
        row.update({c: d.values.get(c) for c in DATA_COLUMNS})
        row.update(is_primary=d.is_primary, is_super_primary=d.is_super_primary)
        row.update(display_name=_display_name(state, raw), account_type=raw.account_type, starred=raw.starred)
        row.update(account_name=raw.account_name, in_visible_group=1)
        out.append(row)
    return out


def contact_rows(state: PhoneState) -> list[Row]:
    out: list[Row] = []
    for raw in state.raw_contacts:
        if raw.deleted:
            continue
        has_phone = any(d.raw_contact_id == raw.id and d.mimetype == MIME_PHONE for d in state.data)
        name = _display_name(state, raw)
        out.append(
            {
                "_id": raw.id,
                "display_name": name,
                "display_name_alt": name,
                "has_phone_number": int(has_phone),
                "starred": raw.starred,
                "lookup": f"0r{raw.id}-{abs(hash(name)) % 10**6}",
                "photo_id": None,
                "times_contacted": 0,
                "last_time_contacted": 0,
                "in_visible_group": 1,
            }
        )
    return out


def _digits(number: str) -> str:
    return "".join(c for c in number if c.isdigit())


def contact_name(state: PhoneState, number: str) -> str | None:
    """PhoneNumberUtils.compare, roughly: the last 7 digits match."""
    want = _digits(number)[-7:]
    for row in data_rows(state, MIME_PHONE):
        if want and _digits(str(row.get("data1") or ""))[-7:] == want:
            return str(row["display_name"]) if row["display_name"] else None
    return None


def calendar_rows(state: PhoneState) -> list[Row]:
    return [
        {
            "_id": c.id,
            "account_name": c.account_name,
            "account_type": c.account_type,
            "name": c.name,
            "calendar_displayName": c.display_name,
            "calendar_access_level": c.access_level,
            "visible": c.visible,
            "isPrimary": c.is_primary,
            "ownerAccount": c.owner_account,
            "calendar_timezone": c.timezone,
            "sync_events": c.sync_events,
            "calendar_color": c.color,
            "deleted": 0,
        }
        for c in state.calendars
    ]


def event_rows(state: PhoneState) -> list[Row]:
    calendars = {c.id: c for c in state.calendars}
    out: list[Row] = []
    for e in state.events:
        cal = calendars.get(e.calendar_id)
        if cal is None:  # the Events view joins Calendars: an orphan event is invisible
            continue
        out.append(
            {
                "_id": e.id,
                "calendar_id": e.calendar_id,
                "title": e.title,
                "description": e.description,
                "eventLocation": e.event_location,
                "dtstart": e.dtstart,
                "dtend": e.dtend,
                "duration": e.duration,
                "eventTimezone": e.event_timezone,
                "allDay": e.all_day,
                "rrule": e.rrule,
                "deleted": e.deleted,
                "hasAlarm": e.has_alarm,
                "calendar_displayName": cal.display_name,
                "calendar_access_level": cal.access_level,
                "account_name": cal.account_name,
                "account_type": cal.account_type,
                "ownerAccount": cal.owner_account,
                "visible": cal.visible,
            }
        )
    return out


def attendee_rows(state: PhoneState) -> list[Row]:
    """Each guest with its event's columns; guests of an event the Events view hides (orphaned,
    or deleted and awaiting its sync adapter) are hidden too, as the provider's join does."""
    events = {int(str(r["_id"])): r for r in event_rows(state) if not r["deleted"]}
    return [
        {
            "_id": a.id,
            "event_id": a.event_id,
            "attendeeName": a.name,
            "attendeeEmail": a.email,
            "attendeeStatus": a.status,
            "attendeeRelationship": a.relationship,
            "attendeeType": a.type,
            "attendeeIdentity": None,
            "attendeeIdNamespace": None,
            "calendar_id": events[a.event_id]["calendar_id"],
            "title": events[a.event_id]["title"],
            "dtstart": events[a.event_id]["dtstart"],
            "deleted": 0,
        }
        for a in state.attendees
        if a.event_id in events
    ]


def call_rows(state: PhoneState) -> list[Row]:
    return [
        {
            "_id": c.id,
            "number": c.number,
            "date": c.date,
            "duration": c.duration,
            "type": c.type,
            "new": c.new,
            "name": c.name or contact_name(state, c.number),
            "countryiso": "US",
            "is_read": 0 if c.type == 3 else 1,
            "presentation": 1,
            "subscription_id": "1",
        }
        for c in state.call_log
    ]


def new_data(state: PhoneState, values: dict[str, object]) -> DataRow:
    raw_id = values.get("raw_contact_id")
    if raw_id is None:
        raise illegal("raw_contact_id is required")
    mimetype = values.get("mimetype")
    if not mimetype:
        raise illegal("mimetype is required")
    kept = {k: v for k, v in values.items() if k in DATA_COLUMNS}
    return DataRow(state.next_id("data"), int(str(raw_id)), str(mimetype), kept)


def new_event(state: PhoneState, values: dict[str, object]) -> Event:
    """CalendarProvider2.validateEventData, then the row."""
    if values.get("calendar_id") in (None, ""):
        raise illegal("Event values must include a calendar_id")
    if values.get("eventTimezone") in (None, ""):
        raise illegal("Event values must include an eventTimezone")
    has_end, has_duration = values.get("dtend") is not None, bool(values.get("duration"))
    if values.get("dtstart") is None:
        raise illegal("DTSTART cannot be empty.")
    if not has_end and not has_duration:
        raise illegal("DTEND and DURATION cannot both be null for an event.")
    if has_end and has_duration:
        raise illegal("Cannot have both DTEND and DURATION in an event")

    def opt(name: str) -> str | None:
        return None if values.get(name) is None else str(values[name])

    try:
        start, end = int(str(values["dtstart"])), (int(str(values["dtend"])) if has_end else None)
        calendar_id = int(str(values["calendar_id"]))
    except ValueError:
        raise CommandError("java.lang.NumberFormatException", "For input string") from None
    return Event(
        id=state.next_id("event"),
        calendar_id=calendar_id,
        title=opt("title"),
        dtstart=start,
        dtend=end,
        duration=opt("duration"),
        event_timezone=opt("eventTimezone"),
        all_day=int(str(values.get("allDay") or 0) in ("1", "True")),
        event_location=opt("eventLocation"),
        description=opt("description"),
        rrule=opt("rrule"),
        has_alarm=int(str(values.get("hasAlarm") or 0) in ("1", "True")),
    )
