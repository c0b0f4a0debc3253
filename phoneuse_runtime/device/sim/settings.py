"""Settings: the home list (with a working Wi-Fi switch) and a page per section."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from phoneuse_runtime.device.sim.catalog import APPS, SETTINGS
from phoneuse_runtime.device.sim.widgets import HEIGHT, LINEAR, SWITCH, TEXT, WIDTH, Action, Builder, Screen
from phoneuse_runtime.screen.ui import Bounds, UiNode

if TYPE_CHECKING:
    from phoneuse_runtime.device.sim.phone import SimPhone
    from phoneuse_runtime.device.sim.state import SimState

S = SETTINGS + ":id/"
WIFI = "Wi\u2011Fi"  # Android writes it with a non-breaking hyphen
Row = tuple[int, Callable[[Bounds], UiNode]]
HOME_ACTIVITY = "com.android.settings.Settings"


@dataclass(frozen=True)
class Section:
    key: str
    title: str
    summary: str
    activity: str


SECTIONS: tuple[Section, ...] = (
    Section("network", "Network & internet", f"Mobile, {WIFI}, hotspot", "Settings$NetworkDashboardActivity"),
    Section(
        "connected", "Connected devices", "Bluetooth, pairing", "Settings$ConnectedDeviceDashboardActivity"
    ),
    Section("apps", "Apps", "Assistant, recent apps, default apps", "Settings$AppDashboardActivity"),
    Section(
        "notifications",
        "Notifications",
        "Notification history, conversations",
        "Settings$ConfigureNotificationSettingsActivity",
    ),
    Section("battery", "Battery", "85%", "Settings$PowerUsageSummaryActivity"),
    Section("storage", "Storage", "34% used - 84.2 GB free", "Settings$StorageDashboardActivity"),
    Section(
        "sound", "Sound & vibration", "Volume, haptics, Do Not Disturb", "Settings$SoundSettingsActivity"
    ),
    Section("display", "Display", "Dark theme, font size, brightness", "Settings$DisplaySettingsActivity"),
    Section(
        "wallpaper",
        "Wallpaper & style",
        "Colors, themed icons, app grid",
        "Settings$WallpaperSettingsActivity",
    ),
    Section(
        "accessibility",
        "Accessibility",
        "Display, interaction, audio",
        "Settings$AccessibilitySettingsActivity",
    ),
    Section(
        "security",
        "Security & privacy",
        "App security, device lock, permissions",
        "Settings$SecurityDashboardActivity",
    ),
    Section(
        "location", "Location", "On - 3 apps have access to location", "Settings$LocationSettingsActivity"
    ),
    Section(
        "accounts",
        "Passwords & accounts",
        "Saved passwords, autofill, synced accounts",
        "Settings$AccountDashboardActivity",
    ),
    Section("system", "System", "Languages, gestures, time, backup", "Settings$SystemDashboardActivity"),
    Section("about", "About phone", "Pixel 8 (simulated)", "Settings$MyDeviceInfoActivity"),
)
BY_KEY = {s.key: s for s in SECTIONS}

# android.settings.* actions and the section each opens; other android.settings.* actions open the home list.
ACTIONS: dict[str, str] = {
    "android.settings.WIFI_SETTINGS": "network",
    "android.settings.WIRELESS_SETTINGS": "network",
    "android.settings.AIRPLANE_MODE_SETTINGS": "network",
    "android.settings.DATA_ROAMING_SETTINGS": "network",
    "android.settings.BLUETOOTH_SETTINGS": "connected",
    "android.settings.APPLICATION_SETTINGS": "apps",
    "android.settings.MANAGE_APPLICATIONS_SETTINGS": "apps",
    "android.settings.APPLICATION_DETAILS_SETTINGS": "apps",
    "android.settings.NOTIFICATION_SETTINGS": "notifications",
    "android.settings.APP_NOTIFICATION_SETTINGS": "notifications",
    "android.settings.BATTERY_SAVER_SETTINGS": "battery",
    "android.intent.action.POWER_USAGE_SUMMARY": "battery",
    "android.settings.INTERNAL_STORAGE_SETTINGS": "storage",
    "android.settings.SOUND_SETTINGS": "sound",
    "android.settings.DISPLAY_SETTINGS": "display",
    "android.settings.ACCESSIBILITY_SETTINGS": "accessibility",
    "android.settings.SECURITY_SETTINGS": "security",
    "android.settings.LOCATION_SOURCE_SETTINGS": "location",
    "android.settings.SYNC_SETTINGS": "accounts",
    "android.settings.DATE_SETTINGS": "system",
    "android.settings.LOCALE_SETTINGS": "system",
    "android.settings.DEVICE_INFO_SETTINGS": "about",
}


def _toggle_wifi(phone: SimPhone) -> Action:
    def toggle() -> None:
        phone.state.wifi_enabled = not phone.state.wifi_enabled
        phone.state.dirty = True

    return toggle


def _toggle_airplane(phone: SimPhone) -> Action:
    def toggle() -> None:
        phone.state.airplane_mode = not phone.state.airplane_mode
        phone.state.dirty = True

    return toggle


def _rows(b: Builder, items: list[tuple[str, str, Action | None, bool | None]]) -> list[Row]:
    """(title, summary, on_tap, switch state or None) to list rows; a switch row toggles on tap."""
    rows: list[Row] = []
    for title, summary, action, switch in items:

        def row(
            bounds: Bounds,
            title: str = title,
            summary: str = summary,
            action: Action | None = action,
            switch: bool | None = switch,
        ) -> UiNode:
            left, top, right, _bottom = bounds
            node = b.add(None, LINEAR, bounds, on_tap=action)
            b.text(node, (left + 180, top + 36, right - 240, top + 110), title, rid="android:id/title")
            if summary:
                b.text(
                    node, (left + 180, top + 116, right - 240, top + 176), summary, rid="android:id/summary"
                )
            if switch is not None:
                b.add(
                    node,
                    SWITCH,
                    (right - 220, top + 50, right - 48, top + 160),
                    rid="android:id/switch_widget",
                    checkable=True,
                    checked=switch,
                    on_tap=action,
                )
            return node

        rows.append((220, row))
    return rows


class SettingsScreen(Screen):
    package = SETTINGS
    activity = HOME_ACTIVITY

    def build(self, b: Builder, phone: SimPhone) -> None:
        top = b.toolbar("Settings")
        b.add(
            b.content,
            TEXT,
            (48, top, WIDTH - 48, top + 140),
            text="Search Settings",
            rid=S + "search_action_bar",
            on_tap=lambda: None,
        )
        wifi = phone.state.wifi_enabled
        items: list[tuple[str, str, Action | None, bool | None]] = [
            (WIFI, "Connected to SimNet" if wifi else "Off", _toggle_wifi(phone), wifi)
        ]
        for section in SECTIONS:
            items.append((section.title, section.summary, _opener(phone, section.key), None))
        b.scroll_list(
            b.content, (0, top + 160, WIDTH, HEIGHT), _rows(b, items), key="list", rid=S + "recycler_view"
        )


def _opener(phone: SimPhone, key: str) -> Action:
    def open_section() -> None:
        phone.open(SectionScreen(key))

    return open_section


def _section_items(key: str, state: SimState) -> list[tuple[str, str, Action | None, bool | None]]:
    if key == "apps":
        return [(app.label, app.package, None, None) for app in APPS if app.launch_activity]
    if key == "about":
        return [
            ("Device name", "Pixel 8 (simulated)", None, None),
            ("Android version", "14", None, None),
            ("Build number", "UQ1A.240205.002", None, None),
        ]
    if key == "connected":
        return [("Bluetooth", "On" if state.bluetooth_enabled else "Off", None, state.bluetooth_enabled)]
    if key == "sound":
        dnd = {"off": "Off", "priority": "Priority only", "alarms": "Alarms only", "total": "Total silence"}
        return [
            *(
                (f"{stream.capitalize()} volume", str(level), None, None)
                for stream, level in state.volumes.items()
            ),
            ("Do Not Disturb", dnd.get(state.dnd, state.dnd), None, None),
        ]
    if key == "display":
        return [
            ("Brightness level", f"{round(state.brightness * 100 / 255)}%", None, None),
            ("Adaptive brightness", "", None, state.brightness_auto),
            ("Auto-rotate screen", "", None, state.auto_rotate),
        ]
    return [("Nothing to change here in the simulator", "", None, None)]


class SectionScreen(Screen):
    package = SETTINGS

    def __init__(self, key: str) -> None:
        super().__init__()
        self.section = BY_KEY[key]
        self.activity = "com.android.settings." + self.section.activity

    def build(self, b: Builder, phone: SimPhone) -> None:
        top = b.toolbar(self.section.title, back=phone.back)
        state = phone.state
        if self.section.key == "network":
            items: list[tuple[str, str, Action | None, bool | None]] = [
                (
                    "Wi\u2011Fi",
                    "SimNet" if state.wifi_enabled else "Off",
                    _toggle_wifi(phone),
                    state.wifi_enabled,
                ),
                ("Airplane mode", "", _toggle_airplane(phone), state.airplane_mode),
                ("SIMs", "Sim Mobile", None, None),
                ("Hotspot & tethering", "Off", None, None),
            ]
        else:
            items = _section_items(self.section.key, state)
        b.scroll_list(
            b.content, (0, top, WIDTH, HEIGHT), _rows(b, items), key="list", rid=S + "recycler_view"
        )
