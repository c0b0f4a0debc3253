"""Which screen each app starts on, and the activities `am start -n` can name."""

from __future__ import annotations

from collections.abc import Callable

from phoneuse_runtime.device.sim.agenda import AgendaScreen, AlarmsScreen, EditEventScreen
from phoneuse_runtime.device.sim.browser import BrowserScreen
from phoneuse_runtime.device.sim.catalog import (
    CALENDAR,
    CHROME,
    CLOCK,
    CONTACTS,
    DIALER,
    LAUNCHER,
    MESSAGES,
    SETTINGS,
    WHATSAPP,
)
from phoneuse_runtime.device.sim.dialer import ContactEditorScreen, DialpadScreen, PeopleScreen
from phoneuse_runtime.device.sim.home import HomeScreen
from phoneuse_runtime.device.sim.messages import ConversationListScreen, NewConversationScreen
from phoneuse_runtime.device.sim.settings import SettingsScreen
from phoneuse_runtime.device.sim.whatsapp import ChatsScreen, ContactPickerScreen
from phoneuse_runtime.device.sim.widgets import Screen
from phoneuse_runtime.kernel.errors import Unsupported

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
