"""Chrome: an omnibox (url_bar) and a page per URL, with history for BACK."""

from __future__ import annotations

import re
import urllib.parse
from typing import TYPE_CHECKING

from phoneuse_runtime.device.sim.catalog import CHROME
from phoneuse_runtime.device.sim.widgets import (
    FRAME,
    HEIGHT,
    IMAGE_BUTTON,
    LINEAR,
    STATUS_BAR,
    WIDTH,
    Builder,
    Screen,
)

if TYPE_CHECKING:
    from phoneuse_runtime.device.sim.phone import SimPhone

R = CHROME + ":id/"
WEBVIEW = "android.webkit.WebView"
KNOWN_PAGES = {
    "example.com": ("Example Domain", "This domain is for use in illustrative examples in documents."),
    "www.example.com": ("Example Domain", "This domain is for use in illustrative examples in documents."),
    "www.google.com": ("Google", "Search the simulated web."),
}


def to_url(typed: str) -> str:
    """What the omnibox makes of input: a URL as typed, a bare host made https, anything else a search."""
    text = typed.strip()
    if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*://", text) or text.startswith(("about:", "chrome:", "data:")):
        return text
    if " " not in text and re.search(r"\.[a-zA-Z]{2,}(?:[:/?#]|$)", text):
        return "https://" + text
    return "https://www.google.com/search?q=" + urllib.parse.quote_plus(text)


def page_of(url: str) -> tuple[str, str]:
    parts = urllib.parse.urlsplit(url)
    if parts.netloc == "www.google.com" and parts.path == "/search":
        query = urllib.parse.parse_qs(parts.query).get("q", [""])[0]
        return f"{query} - Google Search", f"Results for “{query}” (the simulator has no network)."
    title, body = KNOWN_PAGES.get(parts.netloc, (parts.netloc or url, ""))
    return title, body or f"A simulated page for {url}"


class BrowserScreen(Screen):
    package = CHROME
    activity = "com.google.android.apps.chrome.Main"

    def __init__(self) -> None:
        super().__init__()
        self.history: list[str] = []

    @property
    def url(self) -> str:
        return self.history[-1] if self.history else ""

    def navigate(self, typed: str) -> None:
        if not typed.strip():
            return
        self.history.append(to_url(typed))
        self.fields["url"] = self.url
        self.focus = None
        self.keyboard = False
        self.scroll.clear()

    def build(self, b: Builder, phone: SimPhone) -> None:
        bar = b.add(b.content, LINEAR, (0, STATUS_BAR, WIDTH, STATUS_BAR + 160), rid=R + "toolbar")
        b.add(
            bar,
            IMAGE_BUTTON,
            (16, STATUS_BAR + 20, 136, STATUS_BAR + 140),
            rid=R + "home_button",
            desc="Home",
            on_tap=lambda: self.navigate("chrome://newtab/") if self.url else None,
        )
        b.field(
            bar,
            (150, STATUS_BAR + 20, 800, STATUS_BAR + 140),
            "url",
            rid=R + "url_bar",
            hint="Search or type URL",
        )
        b.add(
            bar,
            IMAGE_BUTTON,
            (820, STATUS_BAR + 20, 940, STATUS_BAR + 140),
            rid=R + "tab_switcher_button",
            desc="Switch or close tabs",
            on_tap=lambda: None,
        )
        b.add(
            bar,
            IMAGE_BUTTON,
            (950, STATUS_BAR + 20, 1070, STATUS_BAR + 140),
            rid=R + "menu_button",
            desc="Customize and control Google Chrome",
            on_tap=lambda: None,
        )
        area = (0, STATUS_BAR + 160, WIDTH, HEIGHT)
        holder = b.add(b.content, FRAME, area, rid=R + "compositor_view_holder")
        if not self.url or self.url.startswith("chrome://newtab"):
            b.text(holder, (0, 700, WIDTH, 820), "Google", rid=R + "search_provider_logo")
            return
        title, body = page_of(self.url)
        page = b.add(holder, WEBVIEW, area, text=title)
        b.add(page, "android.view.View", (60, area[1] + 80, WIDTH - 60, area[1] + 200), text=title)
        b.add(page, "android.view.View", (60, area[1] + 240, WIDTH - 60, area[1] + 400), text=body)

    def submit(self, phone: SimPhone, key: str) -> None:
        self.navigate(self.value("url"))

    def back(self, phone: SimPhone) -> bool:
        if self.focus is not None:
            self.focus = None  # after the keyboard, BACK leaves the omnibox, restoring the page's URL
            self.fields["url"] = self.url
            return True
        if len(self.history) > 1:
            self.history.pop()
            self.fields["url"] = self.url
            return True
        return False
