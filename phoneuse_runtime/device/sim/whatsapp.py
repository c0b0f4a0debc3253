"""WhatsApp: the chats list, a chat, and the contact picker. Its messages are not SMS rows."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from phoneuse_runtime.device.sim.catalog import WHATSAPP
from phoneuse_runtime.device.sim.messages import when
from phoneuse_runtime.device.sim.state import Chat
from phoneuse_runtime.device.sim.widgets import (
    FRAME,
    HEIGHT,
    IMAGE_BUTTON,
    LINEAR,
    WIDTH,
    Builder,
    Screen,
    bubble_height,
)
from phoneuse_runtime.screen.ui import Bounds, UiNode

if TYPE_CHECKING:
    from phoneuse_runtime.device.sim.phone import SimPhone

W = WHATSAPP + ":id/"
ENTRY_TOP = HEIGHT - 200

Row = tuple[int, Callable[[Bounds], UiNode]]


class ChatsScreen(Screen):
    package = WHATSAPP
    activity = "com.whatsapp.HomeActivity"

    def build(self, b: Builder, phone: SimPhone) -> None:
        top = b.toolbar("WhatsApp", title_rid=W + "toolbar_title")
        chats = sorted((c for c in phone.state.chats if c.messages), key=lambda c: -c.messages[-1].date_ms)
        rows: list[Row] = []
        for chat in chats:
            last = chat.messages[-1]
            unread = sum(1 for m in chat.messages if not m.read)

            def row(
                bounds: Bounds,
                chat: Chat = chat,
                snippet: str = last.body,
                stamp: str = when(last.date_ms),
                unread: int = unread,
            ) -> UiNode:
                left, top_, right, _bottom = bounds
                node = b.add(
                    None,
                    LINEAR,
                    bounds,
                    rid=W + "contact_row_container",
                    on_tap=lambda: phone.open_chat(chat),
                )
                b.text(
                    node,
                    (left + 200, top_ + 30, right - 220, top_ + 100),
                    chat.name,
                    rid=W + "conversations_row_contact_name",
                )
                b.text(
                    node,
                    (right - 200, top_ + 30, right - 40, top_ + 90),
                    stamp,
                    rid=W + "conversations_row_date",
                )
                b.text(
                    node, (left + 200, top_ + 110, right - 140, top_ + 170), snippet, rid=W + "single_msg_tv"
                )
                if unread:
                    b.text(
                        node,
                        (right - 120, top_ + 110, right - 40, top_ + 170),
                        str(unread),
                        rid=W + "conversations_row_message_count",
                    )
                return node

            rows.append((210, row))
        b.scroll_list(b.content, (0, top, WIDTH, HEIGHT), rows, key="chats", rid="android:id/list")
        b.add(
            b.content,
            IMAGE_BUTTON,
            (860, HEIGHT - 300, 1040, HEIGHT - 120),
            rid=W + "fab",
            desc="New chat",
            on_tap=lambda: phone.open(ContactPickerScreen()),
        )


class ContactPickerScreen(Screen):
    package = WHATSAPP
    activity = "com.whatsapp.contact.picker.ContactPicker"

    def __init__(self, *, text: str = "") -> None:
        super().__init__()
        self.text = text  # what a share intent asked to send

    def build(self, b: Builder, phone: SimPhone) -> None:
        top = b.toolbar("Select contact", back=phone.back)
        rows: list[Row] = []
        for contact in sorted(phone.state.contacts, key=lambda c: c.name.casefold()):
            if not contact.phones:
                continue

            def row(bounds: Bounds, name: str = contact.name, number: str = contact.phones[0]) -> UiNode:
                return b.row(
                    bounds,
                    [(name, W + "contactpicker_row_name"), (number, W + "contactpicker_row_status")],
                    rid=W + "contactpicker_row",
                    on_tap=lambda: self.pick(phone, number),
                )

            rows.append((200, row))
        b.scroll_list(b.content, (0, top, WIDTH, HEIGHT), rows, key="contacts", rid="android:id/list")

    def pick(self, phone: SimPhone, number: str) -> None:
        chat = phone.state.chat_for(number, create=True)
        if chat is not None:
            phone.close(self)
            phone.open_chat(chat, text=self.text)


class ChatScreen(Screen):
    package = WHATSAPP
    activity = "com.whatsapp.Conversation"

    def __init__(self, jid: str) -> None:
        super().__init__()
        self.jid = jid

    def same_as(self, other: Screen) -> bool:
        return isinstance(other, ChatScreen) and other.jid == self.jid

    def chat(self, phone: SimPhone) -> Chat:
        chat = next((c for c in phone.state.chats if c.jid == self.jid), None)
        if chat is None:  # a state reload dropped it; start it again, as WhatsApp would
            chat = phone.state.chat_for(self.jid.split("@")[0], create=True)
            assert chat is not None
        return chat

    def build(self, b: Builder, phone: SimPhone) -> None:
        chat = self.chat(phone)
        top = b.toolbar(
            chat.name,
            title_rid=W + "conversation_contact_name",
            back=phone.back,
            actions=[("Voice call", lambda: None), ("Video call", lambda: None)],
        )
        rows: list[Row] = []
        for message in chat.messages:

            def row(bounds: Bounds, body: str = message.body, mine: bool = message.from_me) -> UiNode:
                left, top_, right, bottom = bounds
                holder = b.add(None, FRAME, bounds, rid=W + "main_layout")
                x0, x1 = (300, right - 32) if mine else (left + 32, 780)
                bubble = b.add(holder, LINEAR, (x0, top_ + 10, x1, bottom - 10))
                b.text(bubble, (x0 + 28, top_ + 34, x1 - 28, bottom - 34), body, rid=W + "message_text")
                return holder

            rows.append((bubble_height(message.body), row))
        b.scroll_list(
            b.content,
            (0, top, WIDTH, ENTRY_TOP),
            rows,
            key="messages",
            rid="android:id/list",
            stick_to_end=True,
        )
        bar = b.add(b.content, LINEAR, (0, ENTRY_TOP, WIDTH, HEIGHT), rid=W + "input_layout")
        b.field(bar, (32, ENTRY_TOP + 30, 880, HEIGHT - 30), "entry", rid=W + "entry", hint="Message")
        if self.value("entry"):
            b.add(
                bar,
                IMAGE_BUTTON,
                (900, ENTRY_TOP + 30, 1048, HEIGHT - 30),
                rid=W + "send",
                desc="Send",
                on_tap=lambda: self.send(phone),
            )
        else:
            b.add(
                bar,
                IMAGE_BUTTON,
                (900, ENTRY_TOP + 30, 1048, HEIGHT - 30),
                rid=W + "voice_note_btn",
                desc="Voice message",
                on_tap=lambda: None,
            )

    def send(self, phone: SimPhone) -> None:
        body = self.value("entry")
        if body.strip():
            phone.send_chat(self.chat(phone), body)
            self.fields["entry"] = ""
            self.scroll.pop("messages", None)

    def submit(self, phone: SimPhone, key: str) -> None:
        self.edit(lambda value: value + "\n")
