"""The Phone app (dial pad, in-call screen) and the Contacts app (list, details, editor)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from phoneuse_runtime.device.base import Contact
from phoneuse_runtime.device.sim.catalog import CONTACTS, DIALER
from phoneuse_runtime.device.sim.widgets import (
    BUTTON,
    FRAME,
    HEIGHT,
    IMAGE_BUTTON,
    LINEAR,
    WIDTH,
    Action,
    Builder,
    Screen,
)
from phoneuse_runtime.screen.ui import Bounds, UiNode

if TYPE_CHECKING:
    from phoneuse_runtime.device.sim.phone import SimPhone

D = DIALER + ":id/"
C = CONTACTS + ":id/"
KEYS = (
    ("1", "one"),
    ("2", "two"),
    ("3", "three"),
    ("4", "four"),
    ("5", "five"),
    ("6", "six"),
    ("7", "seven"),
    ("8", "eight"),
    ("9", "nine"),
    ("*", "star"),
    ("0", "zero"),
    ("#", "pound"),
)
Row = tuple[int, Callable[[Bounds], UiNode]]


class DialpadScreen(Screen):
    package = DIALER
    activity = "com.google.android.dialer.extensions.GoogleDialtactsActivity"

    def __init__(self, number: str = "") -> None:
        super().__init__()
        self.fields["digits"] = number
        self.focus = "digits"

    def build(self, b: Builder, phone: SimPhone) -> None:
        top = b.toolbar("Phone")
        b.field(b.content, (60, top + 100, 900, top + 300), "digits", rid=D + "digits", hint="")
        b.add(
            b.content,
            IMAGE_BUTTON,
            (920, top + 140, 1040, top + 260),
            rid=D + "deleteButton",
            desc="backspace",
            on_tap=lambda: self.edit(lambda v: v[:-1]),
        )
        pad = b.add(b.content, LINEAR, (0, 1000, WIDTH, 2000), rid=D + "dialpad_view")
        for i, (char, name) in enumerate(KEYS):
            left, top_ = 90 + (i % 3) * 300, 1000 + (i // 3) * 250
            b.add(
                pad,
                FRAME,
                (left, top_, left + 300, top_ + 250),
                text=char,
                rid=D + name,
                desc=char,
                on_tap=self._typer(char),
            )
        b.add(
            b.content,
            IMAGE_BUTTON,
            (440, 2060, 640, 2260),
            rid=D + "dialpad_floating_action_button",
            desc="dial",
            on_tap=lambda: self.dial(phone),
        )

    def _typer(self, char: str) -> Action:
        def type_char() -> None:
            self.fields["digits"] = self.value("digits") + char

        return type_char

    def dial(self, phone: SimPhone) -> None:
        if self.value("digits").strip():
            phone.place_call(self.value("digits"))


class InCallScreen(Screen):
    package = DIALER
    activity = "com.android.incallui.InCallActivity"

    @property
    def title(self) -> str:
        return "Call"

    def build(self, b: Builder, phone: SimPhone) -> None:
        call = phone.call
        name = phone.state.display_name(call.number) if call.number else ""
        status = {"ringing": "Incoming call", "offhook": "On call", "idle": "Call ended"}[call.state]
        b.text(b.content, (60, 500, WIDTH - 60, 620), name, rid=D + "contactgrid_contact_name")
        if name != call.number:
            b.text(b.content, (60, 640, WIDTH - 60, 720), call.number, rid=D + "contactgrid_location")
        b.text(b.content, (60, 380, WIDTH - 60, 460), status, rid=D + "contactgrid_status_text")
        if call.state == "ringing":
            b.add(
                b.content,
                BUTTON,
                (120, 1900, 420, 2100),
                text="Decline",
                desc="Decline",
                rid=D + "incoming_call_decline",
                on_tap=phone.end_call_action,
            )
            b.add(
                b.content,
                BUTTON,
                (660, 1900, 960, 2100),
                text="Answer",
                desc="Answer",
                rid=D + "incoming_call_answer",
                on_tap=phone.answer,
            )
        elif call.state == "offhook":
            b.add(
                b.content,
                IMAGE_BUTTON,
                (440, 2000, 640, 2200),
                rid=D + "incall_end_call",
                desc="End call",
                on_tap=phone.end_call_action,
            )

    def back(self, phone: SimPhone) -> bool:
        return phone.call.state == "ringing"  # an incoming call cannot be backed out of


class PeopleScreen(Screen):
    package = CONTACTS
    activity = "com.android.contacts.activities.PeopleActivity"

    def build(self, b: Builder, phone: SimPhone) -> None:
        top = b.toolbar("Contacts")
        rows: list[Row] = []
        for contact in sorted(phone.state.contacts, key=lambda c: c.name.casefold()):

            def row(bounds: Bounds, contact: Contact = contact) -> UiNode:
                left, top_, right, bottom = bounds
                node = b.add(
                    None,
                    LINEAR,
                    bounds,
                    rid=C + "cliv_container",
                    desc=contact.name,
                    on_tap=lambda: phone.open(ContactDetailScreen(contact.id)),
                )
                b.text(
                    node,
                    (left + 200, top_ + 40, right - 48, bottom - 40),
                    contact.name,
                    rid=C + "cliv_name_textview",
                )
                return node

            rows.append((180, row))
        b.scroll_list(b.content, (0, top, WIDTH, HEIGHT), rows, key="list", rid=C + "contact_list")
        b.add(
            b.content,
            IMAGE_BUTTON,
            (860, HEIGHT - 300, 1040, HEIGHT - 120),
            rid=C + "floating_action_button",
            desc="Create contact",
            on_tap=lambda: phone.open(ContactEditorScreen()),
        )


class ContactDetailScreen(Screen):
    package = CONTACTS
    activity = "com.android.contacts.quickcontact.QuickContactActivity"

    def __init__(self, contact_id: str) -> None:
        super().__init__()
        self.contact_id = contact_id

    def build(self, b: Builder, phone: SimPhone) -> None:
        contact = next((c for c in phone.state.contacts if c.id == self.contact_id), None)
        top = b.toolbar("", back=phone.back)
        if contact is None:
            b.text(b.content, (60, top, WIDTH - 60, top + 120), "Contact not found")
            return
        b.text(b.content, (60, top + 40, WIDTH - 60, top + 180), contact.name, rid=C + "large_title")
        rows: list[Row] = []
        for number in contact.phones:

            def phone_row(bounds: Bounds, number: str = number) -> UiNode:
                left, top_, right, bottom = bounds
                node = b.row(
                    (left, top_, right - 200, bottom),
                    [(number, C + "header"), ("Mobile", C + "sub_header")],
                    rid=C + "card_entry",
                    on_tap=lambda: phone.place_call(number),
                )
                holder = b.add(None, FRAME, bounds)
                holder.children.append(node)
                b.add(
                    holder,
                    IMAGE_BUTTON,
                    (right - 180, top_ + 30, right - 40, bottom - 30),
                    desc=f"Text {number}",
                    rid=C + "icon_alternate",
                    on_tap=lambda: phone.open_thread(number),
                )
                return holder

            rows.append((200, phone_row))
        for email in contact.emails:

            def email_row(bounds: Bounds, email: str = email) -> UiNode:
                return b.row(
                    bounds, [(email, C + "header"), ("Email", C + "sub_header")], rid=C + "card_entry"
                )

            rows.append((200, email_row))
        b.scroll_list(
            b.content, (0, top + 220, WIDTH, HEIGHT), rows, key="details", rid=C + "communication_card"
        )


class ContactEditorScreen(Screen):
    package = CONTACTS
    activity = "com.android.contacts.activities.ContactEditorActivity"

    def __init__(self, *, name: str = "", number: str = "", email: str = "") -> None:
        super().__init__()
        self.fields.update(name=name, phone=number, email=email)

    def build(self, b: Builder, phone: SimPhone) -> None:
        top = b.toolbar("Create contact", back=phone.back)
        b.add(
            b.content,
            BUTTON,
            (820, 140, 1060, 280),
            text="Save",
            rid=C + "editor_menu_save_button",
            on_tap=lambda: self.save(phone),
        )
        for i, (key, hint) in enumerate((("name", "Name"), ("phone", "Phone"), ("email", "Email"))):
            y = top + 60 + i * 200
            b.field(b.content, (60, y, WIDTH - 60, y + 150), key, rid=C + "editor_" + key, hint=hint)

    def save(self, phone: SimPhone) -> None:
        name, number, email = (self.value(k).strip() for k in ("name", "phone", "email"))
        if not (name or number or email):
            return
        contact = phone.state.add_contact(
            name or number or email, [number] if number else [], [email] if email else []
        )
        phone.replace(self, ContactDetailScreen(contact.id))
