"""A plausible phone to start from: an Android 13 emulator image with Google apps (Play Store
build), 720x1280 at 320 dpi so screenshots stay small and fast.

Activity names are the ones these apps use on real phones where known; where not, plausible ones.
"""

from __future__ import annotations

from collections.abc import Sequence

from .state import (
    MIME_EMAIL,
    MIME_NAME,
    MIME_PHONE,
    ActivityRecord,
    AttendeeRow,
    Calendar,
    DataRow,
    Event,
    Package,
    PhoneState,
    RawContact,
    Task,
)

LAUNCHER = "com.google.android.apps.nexuslauncher"
MESSAGES = "com.google.android.apps.messaging"
DIALER = "com.google.android.dialer"
CONTACTS = "com.google.android.contacts"
CALENDAR = "com.google.android.calendar"
CLOCK = "com.google.android.deskclock"
CHROME = "com.android.chrome"
KEEP = "com.google.android.keep"
SETTINGS = "com.android.settings"
SYSTEMUI = "com.android.systemui"
GBOARD = "com.google.android.inputmethod.latin"
U2_APP = "com.github.uiautomator"

LATIN_IME = f"{GBOARD}/com.android.inputmethod.latin.LatinIME"
U2_IME = f"{U2_APP}/.AdbKeyboard"

# Activity classes the apps' behaviour refers to.
HOME_ACT = f"{LAUNCHER}.NexusLauncherActivity"
MSG_LIST = f"{MESSAGES}.ui.ConversationListActivity"
MSG_CONV = f"{MESSAGES}.ui.conversation.ConversationActivity"
DIAL_MAIN = f"{DIALER}.extensions.GoogleDialtactsActivity"
IN_CALL = "com.android.incallui.InCallActivity"
CONTACTS_MAIN = "com.android.contacts.activities.PeopleActivity"
CAL_MAIN = "com.android.calendar.AllInOneActivity"
CAL_EDIT = "com.google.android.calendar.event.EditEventActivity"
CLOCK_MAIN = "com.android.deskclock.DeskClock"
CHROME_MAIN = "com.google.android.apps.chrome.Main"
KEEP_MAIN = f"{KEEP}.activities.BrowseActivity"
SETTINGS_MAIN = f"{SETTINGS}.Settings"
RESOLVER = "com.android.internal.app.ResolverActivity"


def _packages() -> list[Package]:
    def app(name: str, label: str, launcher: str | None, *others: str, system: bool = True) -> Package:
        acts = ([launcher] if launcher else []) + list(others)
        return Package(name=name, label=label, activities=acts, launcher=launcher, system=system)

    pkgs = [
        app("android", "Android System", None, RESOLVER),
        app(SYSTEMUI, "System UI", None),
        app("com.android.shell", "Shell", None),
        app("com.android.providers.telephony", "Phone and Messaging Storage", None),
        app("com.android.providers.contacts", "Contacts Storage", None),
        app("com.android.providers.calendar", "Calendar Storage", None),
        app("com.android.providers.settings", "Settings Storage", None),
        app(LAUNCHER, "Pixel Launcher", HOME_ACT),
        app(SETTINGS, "Settings", SETTINGS_MAIN),
        app(MESSAGES, "Messages", MSG_LIST, MSG_CONV),
        app(DIALER, "Phone", DIAL_MAIN, IN_CALL),
        app(CONTACTS, "Contacts", CONTACTS_MAIN),
        app(CALENDAR, "Calendar", CAL_MAIN, CAL_EDIT),
        app(CLOCK, "Clock", CLOCK_MAIN, "com.android.deskclock.HandleApiCalls"),
        app(CHROME, "Chrome", CHROME_MAIN),
        app(KEEP, "Keep Notes", KEEP_MAIN),
        app(GBOARD, "Gboard", None),
        app("com.whatsapp", "WhatsApp", "com.whatsapp.Main", system=False),
        app("com.spotify.music", "Spotify", "com.spotify.music.MainActivity", system=False),
    ]
    pkgs[-1].version_name, pkgs[-1].version_code = "8.8.96.364", 111900000
    pkgs[-2].version_name, pkgs[-2].version_code = "2.23.25.83", 232583000
    for uid, pkg in enumerate(pkgs, start=10100):
        pkg.uid = 1000 if pkg.name == "android" else uid
    pkgs[[p.name for p in pkgs].index(GBOARD)].ime = "com.android.inputmethod.latin.LatinIME"
    return pkgs


def u2_app_package() -> Package:
    """What installing uiautomator2's app-uiautomator.apk adds: the AdbKeyboard input method."""
    return Package(
        name=U2_APP,
        label="ATX",
        activities=[f"{U2_APP}.MainActivity"],
        launcher=f"{U2_APP}.MainActivity",
        system=False,
        version_name="2.4.0",
        version_code=20400,
        uid=10190,
        ime=".AdbKeyboard",
    )


PROPS = {
    "ro.product.model": "sdk_gphone64_x86_64",
    "ro.product.name": "sdk_gphone64_x86_64",
    "ro.product.device": "emu64xa",
    "ro.product.brand": "google",
    "ro.product.manufacturer": "Google",
    "ro.product.cpu.abi": "x86_64",
    "ro.product.locale": "en-US",
    "ro.build.version.release": "13",
    "ro.build.version.sdk": "33",
    "ro.build.version.security_patch": "2023-02-05",
    "ro.build.id": "TE1A.220922.034",
    "ro.build.type": "user",
    "ro.build.tags": "release-keys",
    "ro.build.fingerprint": "google/sdk_gphone64_x86_64/emu64xa:13/TE1A.220922.034/10940250:user/release-keys",  # noqa: E501
    "ro.build.characteristics": "emulator",
    "ro.serialno": "EMULATOR33X1X10X0",
    "ro.boot.qemu": "1",
    "ro.hardware": "ranchu",
    "ro.debuggable": "0",
    "ro.secure": "1",
    "ro.sf.lcd_density": "320",
    "ro.adb.secure": "1",
    "sys.boot_completed": "1",
    "init.svc.adbd": "running",
    "persist.sys.timezone": "America/Los_Angeles",
    "gsm.operator.alpha": "T-Mobile",
    "gsm.sim.operator.alpha": "T-Mobile",
    "gsm.sim.state": "READY",
    "net.hostname": "localhost",
    "service.adb.root": "0",
}


def _settings() -> dict[str, dict[str, str]]:
    return {
        "system": {
            "screen_brightness": "102",
            "screen_brightness_mode": "0",
            "screen_off_timeout": "60000",
            "accelerometer_rotation": "1",
            "font_scale": "1.0",
            "pointer_location": "0",
            "show_touches": "0",
            "time_12_24": "12",
        },
        "secure": {
            "android_id": "5d8a1c3e9f20b714",
            "default_input_method": LATIN_IME,
            "enabled_input_methods": LATIN_IME,
            "location_mode": "3",
            "sms_default_application": MESSAGES,
            "dialer_default_application": DIALER,
        },
        "global": {
            "adb_enabled": "1",
            "airplane_mode_on": "0",
            "bluetooth_on": "0",
            "zen_mode": "0",
            "development_settings_enabled": "1",
            "device_name": "sdk_gphone64_x86_64",
            "mobile_data": "1",
            "stay_on_while_plugged_in": "0",
            "wifi_on": "1",
            "window_animation_scale": "1.0",
            "transition_animation_scale": "1.0",
            "animator_duration_scale": "1.0",
        },
    }


def _calendars() -> list[Calendar]:
    account = "pixel.user@gmail.com"
    return [
        Calendar(1, account, account, account, access_level=700, is_primary=1, owner_account=account),
        Calendar(
            2,
            "en.usa#holiday@group.v.calendar.google.com",
            "Holidays in United States",
            account,
            access_level=200,
            owner_account="en.usa#holiday@group.v.calendar.google.com",
        ),
    ]


def default_state() -> PhoneState:
    """A booted, unlocked phone on its home screen with empty message, contact and call stores."""
    state = PhoneState(props=dict(PROPS), settings=_settings(), calendars=_calendars())
    state.packages = {pkg.name: pkg for pkg in _packages()}
    state._next.update({"calendar": 3, "task": 2, "token": 2, "pid": 3000})
    home = ActivityRecord(LAUNCHER, HOME_ACT, token=1)
    state.tasks = [Task(1, [home])]
    for name in (SYSTEMUI, LAUNCHER, GBOARD, "com.android.providers.telephony"):
        state.processes[name] = state.next_id("pid")
    return state


# --- provider rows a test adds --------------------------------------------------------------------


def add_contact(state: PhoneState, name: str, phones: Sequence[str] = (), emails: Sequence[str] = ()) -> int:
    """A local raw contact with its name, mobile numbers and home addresses; its contact id."""
    raw = RawContact(state.next_id("raw_contact"), account_type=None)
    state.raw_contacts.append(raw)
    rows: list[tuple[str, dict[str, object]]] = [(MIME_NAME, {"data1": name})]
    rows += [(MIME_PHONE, {"data1": p, "data2": 2}) for p in phones]
    rows += [(MIME_EMAIL, {"data1": e, "data2": 1}) for e in emails]
    state.data += [DataRow(state.next_id("data"), raw.id, mime, dict(values)) for mime, values in rows]
    return raw.id


def add_event(state: PhoneState, title: str, dtstart: int, dtend: int, *, calendar_id: int = 1) -> int:
    """An event in the primary calendar (as its owner's calendar app saves one); its id."""
    event = Event(state.next_id("event"), calendar_id, title, dtstart, dtend)
    state.events.append(event)
    return event.id


def add_attendee(
    state: PhoneState,
    event_id: int,
    name: str | None,
    email: str | None,
    *,
    status: int = 3,  # ATTENDEE_STATUS_INVITED
    relationship: int = 1,  # RELATIONSHIP_ATTENDEE; 2 is the organizer
) -> AttendeeRow:
    row = AttendeeRow(state.next_id("attendee"), event_id, name, email, status, relationship)
    state.attendees.append(row)
    return row
