"""The apps installed on the simulated phone: real package names, labels, activities and uids."""

from __future__ import annotations

from dataclasses import dataclass

from phoneuse_runtime.device.base import AppInfo

LAUNCHER = "com.google.android.apps.nexuslauncher"
MESSAGES = "com.google.android.apps.messaging"
DIALER = "com.google.android.dialer"
CONTACTS = "com.google.android.contacts"
CALENDAR = "com.google.android.calendar"
CLOCK = "com.google.android.deskclock"
CHROME = "com.android.chrome"
SETTINGS = "com.android.settings"
WHATSAPP = "com.whatsapp"
SYSTEMUI = "com.android.systemui"


@dataclass(frozen=True)
class App:
    package: str
    label: str
    launch_activity: str  # full class name; "" when the app has no launcher entry
    uid: int
    system: bool = True
    version_name: str = "14"  # the system image's, for the system apps
    version_code: int = 34


APPS: tuple[App, ...] = (
    App(LAUNCHER, "Pixel Launcher", "com.google.android.apps.nexuslauncher.NexusLauncherActivity", 10090),
    App(MESSAGES, "Messages", "com.google.android.apps.messaging.ui.ConversationListActivity", 10120),
    App(DIALER, "Phone", "com.google.android.dialer.extensions.GoogleDialtactsActivity", 10110),
    App(CONTACTS, "Contacts", "com.android.contacts.activities.PeopleActivity", 10105),
    App(CALENDAR, "Calendar", "com.android.calendar.AllInOneActivity", 10115),
    App(CLOCK, "Clock", "com.android.deskclock.DeskClock", 10100),
    App(CHROME, "Chrome", "com.google.android.apps.chrome.Main", 10130),
    App(SETTINGS, "Settings", "com.android.settings.Settings", 1000),
    App(WHATSAPP, "WhatsApp", "com.whatsapp.HomeActivity", 10160, False, "2.24.25.78", 242578007),
    App(SYSTEMUI, "System UI", "", 10080),
    App("com.android.phone", "Phone Services", "", 1001),
    App("com.android.providers.contacts", "Contacts Storage", "", 10010),
    App("com.android.providers.telephony", "Phone and Messaging Storage", "", 1001),
    App("android", "Android System", "", 1000),
)

BY_PACKAGE: dict[str, App] = {app.package: app for app in APPS}

# The home screen shows these, in this order.
HOME_APPS: tuple[str, ...] = (MESSAGES, DIALER, CONTACTS, CALENDAR, CLOCK, CHROME, SETTINGS, WHATSAPP)


def is_installed(package: str) -> bool:
    return package in BY_PACKAGE


def app_info(app: App) -> AppInfo:
    return AppInfo(
        app.package, app.label, app.launch_activity, app.system, app.version_code, app.version_name
    )


def label_of(package: str) -> str:
    app = BY_PACKAGE.get(package)
    return app.label if app else package


def short_component(package: str, activity: str) -> str:
    """`ComponentName.flattenToShortString`: `pkg/.Rest` when the class lives under the package."""
    if activity.startswith(package + "."):
        return f"{package}/{activity[len(package) :]}"
    return f"{package}/{activity}"


def full_class(package: str, activity: str) -> str:
    """Expands `.Rest` to `pkg.Rest`, as `am start -n pkg/.Rest` does."""
    return package + activity if activity.startswith(".") else activity
