"""Intent resolution, as the package manager would do it for the simulated phone's apps.

Activity intents nothing handles fail the way `am start` reports it:
"Error: Activity not started, unable to resolve Intent { act=... dat=... }", with the
data shown through `Uri.toSafeString` (phone numbers masked, web paths elided).
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable

from phoneuse_runtime.device.base import Alarm, ExtraValue, Intent, IntentResult
from phoneuse_runtime.device.sim.agenda import AlarmsScreen, EditEventScreen
from phoneuse_runtime.device.sim.apps import ACTIVITIES, ROOTS
from phoneuse_runtime.device.sim.browser import BrowserScreen
from phoneuse_runtime.device.sim.catalog import (
    BY_PACKAGE,
    CALENDAR,
    CHROME,
    CLOCK,
    CONTACTS,
    DIALER,
    LAUNCHER,
    MESSAGES,
    SETTINGS,
    WHATSAPP,
    full_class,
    is_installed,
    short_component,
)
from phoneuse_runtime.device.sim.dialer import ContactDetailScreen, ContactEditorScreen, DialpadScreen
from phoneuse_runtime.device.sim.messages import NewConversationScreen
from phoneuse_runtime.device.sim.phone import SimPhone
from phoneuse_runtime.device.sim.settings import ACTIONS as SETTINGS_ACTIONS
from phoneuse_runtime.device.sim.settings import SectionScreen, SettingsScreen
from phoneuse_runtime.device.sim.whatsapp import ContactPickerScreen
from phoneuse_runtime.kernel.errors import InvalidParams, Unsupported
from phoneuse_runtime.kernel.limits import clip

VIEW, MAIN = "android.intent.action.VIEW", "android.intent.action.MAIN"
DAYS = {1: "SUN", 2: "MON", 3: "TUE", 4: "WED", 5: "THU", 6: "FRI", 7: "SAT"}  # java.util.Calendar


def safe_uri(uri: str) -> str:
    """`android.net.Uri.toSafeString`: what `am` prints for `dat=`."""
    scheme, sep, ssp = uri.partition(":")
    if not sep:
        return uri
    low = scheme.lower()
    if low in ("tel", "sip", "sms", "smsto", "mailto", "nfc"):
        return scheme + ":" + "".join(c if c in "-@." else "x" for c in ssp)
    if low in ("http", "https", "ftp", "rtsp"):
        parts = urllib.parse.urlsplit(uri)
        port = f":{parts.port}" if parts.port else ""
        return f"{scheme}://{parts.hostname or ''}{port}/..."
    return scheme + ":" + ssp.split("?")[0].split("#")[0]


def describe(intent: Intent) -> str:
    """`Intent.toShortString` as `am start` prints it."""
    parts = []
    if intent.action:
        parts.append(f"act={intent.action}")
    if intent.categories:
        parts.append("cat=[" + ",".join(intent.categories) + "]")
    if intent.data:
        parts.append(f"dat={safe_uri(intent.data)}")
    if intent.mime:
        parts.append(f"typ={intent.mime}")
    if intent.package:
        parts.append(f"pkg={intent.package}")
    if intent.component:
        parts.append(f"cmp={intent.component}")
    if intent.extras:
        parts.append("(has extras)")
    return "Intent { " + " ".join(parts) + " }"


def unresolved(intent: Intent) -> Unsupported:
    return Unsupported(f"Error: Activity not started, unable to resolve {describe(intent)}")


def _extra_str(intent: Intent, key: str) -> str:
    value = intent.extras.get(key)
    if value is None:
        return ""
    return ",".join(value) if isinstance(value, list) else str(value)


def _extra_int(intent: Intent, key: str) -> int | None:
    value: ExtraValue | None = intent.extras.get(key)
    if value is None or isinstance(value, list):
        return None
    try:
        return int(value)
    except ValueError as exc:
        raise InvalidParams(f"extra {key} must be an integer, got {clip(str(value))}") from exc


def _extra_bool(intent: Intent, key: str) -> bool:
    value = intent.extras.get(key)
    return value is True or str(value).lower() == "true"


def _result(phone: SimPhone, handler: str = "") -> IntentResult:
    top = phone.top()
    return IntentResult(handled_by=handler or short_component(top.package, top.activity), via="sim")


def _for(intent: Intent, package: str) -> bool:
    return intent.package in ("", package)


def _scheme(intent: Intent) -> str:
    return intent.data.partition(":")[0].lower() if ":" in intent.data else ""


def _explicit(phone: SimPhone, intent: Intent) -> IntentResult:
    package, sep, cls = intent.component.partition("/")
    if not sep or not package or not cls:
        raise InvalidParams(f"Error: Bad component name: {intent.component}")
    name = full_class(package, cls)
    factory = ACTIVITIES.get(f"{package}/{name}")
    if factory is None or not is_installed(package):
        raise Unsupported(f"Error type 3\nError: Activity class {{{package}/{name}}} does not exist.")
    if package == LAUNCHER:
        phone.home()
    elif BY_PACKAGE[package].launch_activity == name:
        phone.launch(package)
    else:
        phone.open(factory())
    return _result(phone)


def _launch(phone: SimPhone, intent: Intent) -> IntentResult | None:
    if intent.data or intent.action not in ("", MAIN):
        return None
    if "android.intent.category.HOME" in intent.categories and _for(intent, LAUNCHER):
        phone.home()
        return _result(phone)
    if intent.package and intent.package in ROOTS:
        phone.launch(intent.package)
        return _result(phone)
    return None


def _web(phone: SimPhone, intent: Intent) -> IntentResult | None:
    scheme = _scheme(intent)
    if intent.action not in ("", VIEW) or scheme not in ("http", "https", "whatsapp"):
        return None
    parts = urllib.parse.urlsplit(intent.data)
    query = urllib.parse.parse_qs(parts.query)
    is_wa = scheme == "whatsapp" or (parts.hostname or "") in ("wa.me", "api.whatsapp.com")
    if is_wa and _for(intent, WHATSAPP):
        number = parts.path.strip("/") if parts.hostname == "wa.me" else query.get("phone", [""])[0]
        text = query.get("text", [""])[0]
        chat = phone.state.chat_for(number, create=True) if any(c.isdigit() for c in number) else None
        if chat is None:
            phone.open(ContactPickerScreen(text=text))
        else:
            phone.open_chat(chat, text=text)
        return _result(phone, short_component(WHATSAPP, "com.whatsapp.deeplink.DeepLinkActivity"))
    if scheme in ("http", "https") and _for(intent, CHROME):
        phone.launch(CHROME)
        top = phone.top()
        if not isinstance(top, BrowserScreen):
            top = BrowserScreen()
            phone.open(top)
        top.navigate(intent.data)
        return _result(phone)
    return None


def _tel(phone: SimPhone, intent: Intent) -> IntentResult | None:
    dial, call = "android.intent.action.DIAL", "android.intent.action.CALL"
    if not _for(intent, DIALER) or intent.action not in (dial, call, VIEW):
        return None
    if intent.data and _scheme(intent) != "tel":
        return None
    if not intent.data and intent.action != dial:
        return None
    number = urllib.parse.unquote(intent.data.partition(":")[2])
    if intent.action == call:
        phone.place_call(number)
    else:
        phone.open(DialpadScreen(number))
    return _result(phone)


def _sms(phone: SimPhone, intent: Intent) -> IntentResult | None:
    actions = ("android.intent.action.SENDTO", VIEW, "android.intent.action.SEND")
    if not _for(intent, MESSAGES) or intent.action not in actions:
        return None
    if _scheme(intent) not in ("sms", "smsto", "mms", "mmsto"):
        return None
    ssp = intent.data.partition(":")[2]
    address_part, _, query = ssp.partition("?")
    address = urllib.parse.unquote(address_part).split(",")[0].split(";")[0].strip()
    body = _extra_str(intent, "sms_body") or urllib.parse.parse_qs(query).get("body", [""])[0]
    if any(c.isdigit() for c in address):
        phone.open_thread(address, body=body)
    else:
        phone.open(NewConversationScreen())
    return _result(phone)


def _clock(phone: SimPhone, intent: Intent) -> IntentResult | None:
    prefix = "android.intent.extra.alarm."
    if not _for(intent, CLOCK) or intent.action not in (
        "android.intent.action.SET_ALARM",
        "android.intent.action.SHOW_ALARMS",
    ):
        return None
    hour = _extra_int(intent, prefix + "HOUR")
    if intent.action.endswith("SET_ALARM") and hour is not None:
        raw_days = intent.extras.get(prefix + "DAYS", [])
        values = raw_days if isinstance(raw_days, list) else str(raw_days).split(",")
        try:
            days = [DAYS[int(v)] for v in values if str(v).strip()]
        except (KeyError, ValueError) as exc:
            raise InvalidParams(
                f"extra {prefix}DAYS takes Calendar day numbers 1-7, got {raw_days!r}"
            ) from exc
        minutes = _extra_int(intent, prefix + "MINUTES") or 0
        phone.state.add_alarm(Alarm("", hour, minutes, _extra_str(intent, prefix + "MESSAGE"), days))
        if _extra_bool(intent, prefix + "SKIP_UI"):
            return IntentResult(
                handled_by=short_component(CLOCK, "com.android.deskclock.HandleApiCalls"), via="sim"
            )
    phone.launch(CLOCK)
    if not isinstance(phone.top(), AlarmsScreen):
        phone.open(AlarmsScreen())
    return _result(phone, short_component(CLOCK, "com.android.deskclock.HandleApiCalls"))


def _calendar(phone: SimPhone, intent: Intent) -> IntentResult | None:
    is_event = intent.mime in ("vnd.android.cursor.dir/event", "vnd.android.cursor.item/event") or (
        intent.data.startswith("content://com.android.calendar/events")
    )
    if not _for(intent, CALENDAR) or not is_event:
        return None
    if intent.action not in ("android.intent.action.INSERT", "android.intent.action.EDIT"):
        return None
    phone.open(
        EditEventScreen(
            title=_extra_str(intent, "title"),
            start_ms=_extra_int(intent, "beginTime") or 0,
            end_ms=_extra_int(intent, "endTime") or 0,
            all_day=_extra_bool(intent, "allDay"),
            location=_extra_str(intent, "eventLocation"),
            description=_extra_str(intent, "description"),
        )
    )
    return _result(phone)


def _contacts(phone: SimPhone, intent: Intent) -> IntentResult | None:
    if not _for(intent, CONTACTS):
        return None
    insert = intent.action == "android.intent.action.INSERT" and intent.mime in (
        "vnd.android.cursor.dir/contact",
        "vnd.android.cursor.dir/raw_contact",
    )
    if insert:
        phone.open(
            ContactEditorScreen(
                name=_extra_str(intent, "name"),
                number=_extra_str(intent, "phone"),
                email=_extra_str(intent, "email"),
            )
        )
        return _result(phone)
    prefix = "content://com.android.contacts/contacts/"
    if intent.action == VIEW and intent.data.startswith(prefix):
        phone.open(ContactDetailScreen(intent.data[len(prefix) :].split("/")[0]))
        return _result(phone)
    return None


def _settings(phone: SimPhone, intent: Intent) -> IntentResult | None:
    if not _for(intent, SETTINGS) or not intent.action.startswith("android.settings."):
        return None
    section = SETTINGS_ACTIONS.get(intent.action)
    phone.open(SectionScreen(section) if section else SettingsScreen())
    return _result(phone)


HANDLERS: tuple[Callable[[SimPhone, Intent], IntentResult | None], ...] = (
    _launch,
    _web,
    _tel,
    _sms,
    _clock,
    _calendar,
    _contacts,
    _settings,
)


def _deliver(intent: Intent) -> IntentResult:
    """Broadcasts and services: the simulator models no receivers, only whether the target exists."""
    package = intent.package or intent.component.partition("/")[0]
    if package and not is_installed(package):
        if intent.kind == "service":
            raise Unsupported(f"Error: Not found; no service started. ({package} is not installed)")
        raise Unsupported(f"no receiver for {describe(intent)}: {package} is not installed")
    return IntentResult(handled_by=intent.component or package or "android", via="sim")


def start_intent(phone: SimPhone, intent: Intent) -> IntentResult:
    if intent.kind != "activity":
        return _deliver(intent)
    if intent.component:
        return _explicit(phone, intent)
    if intent.package and not is_installed(intent.package):
        raise unresolved(intent)
    for handler in HANDLERS:
        result = handler(phone, intent)
        if result is not None:
            return result
    raise unresolved(intent)
