"""Which screen each app starts on, and the activities `am start -n` can name."""

from __future__ import annotations

from collections.abc import Callable

from ...errors import Unsupported
from .agenda import AgendaScreen, AlarmsScreen, EditEventScreen
from .browser import BrowserScreen
from .catalog import CALENDAR, CHROME, CLOCK, CONTACTS, DIALER, LAUNCHER, MESSAGES, SETTINGS, WHATSAPP
from .dialer import ContactEditorScreen, DialpadScreen, PeopleScreen
from .home import HomeScreen
from .messages import ConversationListScreen, NewConversationScreen
from .settings import SettingsScreen
from .whatsapp import ChatsScreen, ContactPickerScreen
from .widgets import Screen

ROOTS: dict[str, Callable[[], Screen]] = {
    LAUNCHER: HomeScreen,
    MESSAGES: ConversationListScreen,
    DIALER: DialpadScreen,
    CONTACTS: PeopleScreen,
    CALENDAR: AgendaScreen,
    CLOCK: AlarmsScreen,
    CHROME: BrowserScreen,
    SETTINGS: SettingsScreen,
    WHATSAPP: ChatsScreen,
}

# Activities that start without extras, by full class name.
ACTIVITIES: dict[str, Callable[[], Screen]] = {
    cls.package + "/" + cls.activity: cls
    for cls in (
        HomeScreen,
        ConversationListScreen,
        NewConversationScreen,
        DialpadScreen,
        PeopleScreen,
        ContactEditorScreen,
        AgendaScreen,
        EditEventScreen,
        AlarmsScreen,
        BrowserScreen,
        SettingsScreen,
        ChatsScreen,
        ContactPickerScreen,
    )
}


def root_screen(package: str) -> Screen:
    factory = ROOTS.get(package)
    if factory is None:
        raise Unsupported(f"{package} has no launchable activity")
    return factory()
