"""Each provider's URIs: which rows a URI names and what insert/update/delete do to the state.

Mirrors the providers' documented behaviour where it matters to a caller: the shell's SMS writes
are silently dropped by AppOps; raw contacts and synced events are only marked deleted; events
need calendar_id, eventTimezone, dtstart and dtend-or-duration; calendars can only be created by
a sync adapter; contacts are aggregated from raw contacts and cannot be inserted directly.
"""

from __future__ import annotations

from .content import Request, print_rows, select
from .intents import CommandError, illegal
from .providers import (
    SMS_COLUMNS,
    Row,
    attendee_rows,
    calendar_rows,
    call_rows,
    contact_rows,
    data_rows,
    event_rows,
    new_data,
    new_event,
    raw_contact_rows,
    sms_rows,
)
from .state import MIME_EMAIL, MIME_PHONE, SMS_TYPES, CallLogRow, PhoneState, RawContact, SmsRow

EVENT_FIELDS = {
    "title": "title",
    "description": "description",
    "eventLocation": "event_location",
    "dtstart": "dtstart",
    "dtend": "dtend",
    "duration": "duration",
    "eventTimezone": "event_timezone",
    "allDay": "all_day",
    "rrule": "rrule",
    "calendar_id": "calendar_id",
    "hasAlarm": "has_alarm",
}


def _ids(table: str, rows: list[Row], wheres: list[str]) -> set[int]:
    _, found = select(table, rows, ["_id"], wheres, None)
    return {int(str(r[0])) for r in found}


def _id_where(rest: list[str]) -> str:
    if rest and rest[-1].isdigit():
        return f"_id={int(rest[-1])}"
    return ""


def dispatch(
    state: PhoneState, req: Request, authority: str, path: list[str], params: dict[str, list[str]]
) -> str:
    handler = {
        "sms": _sms,
        "com.android.contacts": _contacts,
        "com.android.calendar": _calendar,
        "call_log": _calls,
        "settings": _settings,
    }[authority]
    return handler(state, req, path, params)


def _query(
    table: str, rows: list[Row], req: Request, base: str, sort: str | None, columns: list[str] | None = None
) -> str:
    names, found = select(table, rows, req.projection, [base, req.where or ""], req.sort or sort, columns)
    return print_rows(names, found)


def _unknown(req: Request) -> CommandError:
    return illegal(f"Unknown URL {req.uri}")


# --- sms -----------------------------------------------------------------------------------------


def _sms(state: PhoneState, req: Request, path: list[str], params: dict[str, list[str]]) -> str:
    box = path[0] if path and path[0] in SMS_TYPES else "all"
    rest = path[1:] if path and path[0] in SMS_TYPES else path
    if rest and not rest[-1].isdigit():
        return "No result found.\n" if req.op == "query" else ""  # SmsProvider logs and returns null
    conds = [f"type={SMS_TYPES[box]}"] if box != "all" else []
    conds += [w for w in [_id_where(rest)] if w]
    base = " AND ".join(conds)
    rows = sms_rows(state)
    if req.op == "query":
        return _query("sms", rows, req, base, "date DESC", SMS_COLUMNS)
    if not state.faults.shell_can_write_sms:
        return ""  # AppOps OP_WRITE_SMS is "ignore" for all but the default SMS app
    if req.op == "insert":
        v = req.values
        address = str(v.get("address", ""))
        kind = SMS_TYPES[box] if box != "all" else int(str(v.get("type", 1)))
        row = SmsRow(
            state.next_id("sms"),
            state.thread_for(address),
            address,
            str(v.get("body", "")),
            int(str(v.get("date", state.now_ms()))),
            kind,
            read=int(str(v.get("read", 0))),
            creator="com.android.shell",
        )
        state.sms.append(row)
        return ""
    ids = _ids("sms", rows, [base, req.where or ""])
    if req.op == "delete":
        state.sms = [r for r in state.sms if r.id not in ids]
    elif req.op == "update":
        for r in state.sms:
            if r.id in ids:
                for name in ("body", "address"):
                    if name in req.values:
                        setattr(r, name, str(req.values[name]))
                for name in ("read", "seen", "type", "date"):
                    if name in req.values:
                        setattr(r, name, int(str(req.values[name])))
    return ""


# --- contacts --------------------------------------------------------------------------------------


def _contacts(state: PhoneState, req: Request, path: list[str], params: dict[str, list[str]]) -> str:
    kind = path[0] if path else ""
    base = _id_where(path[1:])
    if kind == "raw_contacts":
        rows = raw_contact_rows(state)
        if req.op == "query":
            return _query("raw_contacts", rows, req, base, None)
        if req.op == "insert":
            raw = RawContact(state.next_id("raw_contact"))
            raw.account_name = (
                None if req.values.get("account_name") is None else str(req.values["account_name"])
            )
            raw.account_type = (
                None if req.values.get("account_type") is None else str(req.values["account_type"])
            )
            raw.starred = int(str(req.values.get("starred", 0)) in ("1", "True"))
            state.raw_contacts.append(raw)
            return ""
        ids = _ids("raw_contacts", rows, [base, req.where or ""])
        for raw in state.raw_contacts:
            if raw.id in ids:
                if req.op == "delete":
                    raw.deleted = 1  # sync adapters purge it later
                elif "starred" in req.values:
                    raw.starred = int(str(req.values["starred"]) in ("1", "True"))
        return ""
    if kind == "data":
        sub = path[1] if len(path) > 1 and not path[1].isdigit() else ""
        mime = {"phones": MIME_PHONE, "emails": MIME_EMAIL}.get(sub)
        if sub and mime is None:
            raise _unknown(req)
        rows = data_rows(state, mime)
        base = _id_where(path[2:] if sub else path[1:])
        if req.op == "query":
            return _query("view_data", rows, req, base, None)
        if req.op == "insert":
            if sub:
                raise _unknown(req)
            state.data.append(new_data(state, req.values))
            return ""
        ids = _ids("view_data", rows, [base, req.where or ""])
        if req.op == "delete":
            state.data = [d for d in state.data if d.id not in ids]
        else:
            for d in state.data:
                if d.id in ids:
                    d.values.update({k: v for k, v in req.values.items() if k.startswith("data")})
        return ""
    if kind == "contacts":
        rows = contact_rows(state)
        if req.op == "query":
            return _query("view_contacts", rows, req, base, None)
        if req.op == "insert":
            raise CommandError(
                "java.lang.UnsupportedOperationException", "Aggregate contacts are created automatically"
            )
        ids = _ids("view_contacts", rows, [base, req.where or ""])
        for raw in state.raw_contacts:
            if raw.id in ids and req.op == "delete":
                raw.deleted = 1
        return ""
    if kind == "phone_lookup" and len(path) > 1 and req.op == "query":
        from .providers import _digits

        want = _digits(path[1])[-7:]
        rows = [
            {
                "_id": r["contact_id"],
                "display_name": r["display_name"],
                "number": r["data1"],
                "type": r["data2"],
                "label": r["data3"],
                "lookup": f"0r{r['contact_id']}",
            }
            for r in data_rows(state, MIME_PHONE)
            if want and _digits(str(r["data1"] or ""))[-7:] == want
        ]
        return _query(
            "phone_lookup", rows, req, "", None, ["_id", "display_name", "number", "type", "label", "lookup"]
        )
    raise _unknown(req)


# --- calendar --------------------------------------------------------------------------------------


def _calendar(state: PhoneState, req: Request, path: list[str], params: dict[str, list[str]]) -> str:
    kind = path[0] if path else ""
    sync_adapter = params.get("caller_is_syncadapter", ["false"])[0] == "true"
    base = _id_where(path[1:])
    if kind == "calendars":
        rows = calendar_rows(state)
        if req.op == "query":
            return _query("Calendars", rows, req, base, None)
        if req.op == "insert":
            if not sync_adapter:
                raise CommandError(
                    "java.lang.UnsupportedOperationException", "Only sync adapters may insert calendars"
                )
            from .state import Calendar

            v = req.values
            name = str(v.get("name") or v.get("calendar_displayName") or "Calendar")
            state.calendars.append(
                Calendar(
                    state.next_id("calendar"),
                    name,
                    str(v.get("calendar_displayName", name)),
                    params.get("account_name", [name])[0],
                    params.get("account_type", ["LOCAL"])[0],
                    access_level=int(str(v.get("calendar_access_level", 700))),
                    visible=int(str(v.get("visible", 1))),
                    owner_account=str(v.get("ownerAccount", "")),
                )
            )
            return ""
        ids = _ids("Calendars", rows, [base, req.where or ""])
        for cal in state.calendars:
            if cal.id in ids and req.op == "update" and "visible" in req.values:
                cal.visible = int(str(req.values["visible"]))
        if req.op == "delete":
            state.calendars = [c for c in state.calendars if c.id not in ids]
        return ""
    if kind == "events":
        rows = event_rows(state)
        if req.op == "query":
            return _query("view_events", rows, req, base, None)
        if req.op == "insert":
            state.events.append(new_event(state, req.values))
            return ""
        ids = _ids("view_events", rows, [base, req.where or ""])
        accounts = {c.id: c.account_type for c in state.calendars}
        for event in list(state.events):
            if event.id not in ids:
                continue
            if req.op == "delete":
                if sync_adapter or accounts.get(event.calendar_id) == "LOCAL":
                    state.events.remove(event)
                else:
                    event.deleted = 1  # left for the sync adapter, still visible with deleted=1
            else:
                for column, attr in EVENT_FIELDS.items():
                    if column in req.values:
                        setattr(event, attr, req.values[column])
        return ""
    if kind == "attendees":
        if req.op != "query":
            raise CommandError(
                "java.lang.UnsupportedOperationException", "the fake phone's attendees are read-only"
            )
        return _query("Attendees", attendee_rows(state), req, base, None)
    if kind == "instances" and len(path) >= 4 and path[1] == "when" and req.op == "query":
        begin, end = int(path[2]), int(path[3])
        rows = [
            {
                "_id": r["_id"],
                "event_id": r["_id"],
                "begin": r["dtstart"],
                "end": r["dtend"],
                "title": r["title"],
                "allDay": r["allDay"],
                "calendar_id": r["calendar_id"],
                "eventLocation": r["eventLocation"],
            }
            for r in event_rows(state)
            if not r["deleted"]
            and r["dtend"] is not None
            and int(str(r["dtstart"])) < end
            and int(str(r["dtend"])) > begin
        ]
        cols = ["_id", "event_id", "begin", "end", "title", "allDay", "calendar_id", "eventLocation"]
        return _query("Instances", rows, req, "", "begin ASC", cols)
    raise _unknown(req)


# --- call log and settings ---------------------------------------------------------------------------


def _calls(state: PhoneState, req: Request, path: list[str], params: dict[str, list[str]]) -> str:
    if not path or path[0] != "calls":
        raise _unknown(req)
    base = _id_where(path[1:])
    rows = call_rows(state)
    if req.op == "query":
        return _query("calls", rows, req, base, "date DESC")
    if req.op == "insert":
        v = req.values
        state.call_log.append(
            CallLogRow(
                state.next_id("call"),
                str(v.get("number", "")),
                int(str(v.get("date", state.now_ms()))),
                int(str(v.get("duration", 0))),
                int(str(v.get("type", 1))),
            )
        )
        return ""
    ids = _ids("calls", rows, [base, req.where or ""])
    if req.op == "delete":
        state.call_log = [c for c in state.call_log if c.id not in ids]
    return ""


def _settings(state: PhoneState, req: Request, path: list[str], params: dict[str, list[str]]) -> str:
    if not path or path[0] not in ("system", "secure", "global"):
        raise _unknown(req)
    table = state.settings.setdefault(path[0], {})
    rows: list[Row] = [{"_id": i, "name": k, "value": v} for i, (k, v) in enumerate(sorted(table.items()), 1)]
    base = f"name='{path[1]}'" if len(path) > 1 else ""
    if req.op == "query":
        return _query(path[0], rows, req, base, None, ["_id", "name", "value"])
    if req.op == "insert":
        name = req.values.get("name")
        if name is None:
            raise illegal("name must not be null")
        value = req.values.get("value")
        table[str(name)] = "null" if value is None else str(value)
        return ""
    _, found = select(path[0], rows, ["name"], [base, req.where or ""], None, ["_id", "name", "value"])
    for (name,) in found:
        if req.op == "delete":
            table.pop(str(name), None)
        elif "value" in req.values:
            table[str(name)] = str(req.values["value"])
    return ""
