"""Google Messages: the conversation list, a conversation, and the new-conversation picker."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from phoneuse_runtime.device.sim.catalog import MESSAGES
from phoneuse_runtime.device.sim.widgets import (
    BUTTON,
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
from phoneuse_runtime.util.numbers import digits

if TYPE_CHECKING:
    from phoneuse_runtime.device.sim.phone import SimPhone

M = MESSAGES + ":id/"
COMPOSE_TOP = HEIGHT - 220


def when(date_ms: int) -> str:
    """A conversation-list timestamp: the time today, else the date."""
    moment = time.localtime(date_ms / 1000)
    if time.strftime("%Y%m%d", moment) == time.strftime("%Y%m%d"):
        return time.strftime("%H:%M", moment)
    return time.strftime("%b %d", moment)


class ConversationListScreen(Screen):
    package = MESSAGES
    activity = "com.google.android.apps.messaging.ui.ConversationListActivity"

    def build(self, b: Builder, phone: SimPhone) -> None:
        state = phone.state
        top = b.toolbar("Messages", title_rid=M + "toolbar_title")
        threads = sorted(
            ((tid, state.thread_messages(tid)) for tid in state.threads),
            key=lambda item: -(item[1][-1].date_ms if item[1] else 0),
        )

        rows: list[tuple[int, Callable[[Bounds], UiNode]]] = []
        for thread_id, messages in threads:
            if not messages:
                continue
            address, last = state.threads[thread_id], messages[-1]
            snippet = ("You: " if last.box == "sent" else "") + last.body
            name = state.display_name(address)
            unread = ", Unread" if any(not m.read for m in messages) else ""
            desc = f"{name}, {snippet}, {when(last.date_ms)}{unread}"

            def row(
                bounds: Bounds,
                address: str = address,
                name: str = name,
                snippet: str = snippet,
                desc: str = desc,
            ) -> UiNode:
                return b.row(
                    bounds,
                    [(name, M + "conversation_name"), (snippet, M + "conversation_snippet")],
                    rid=M + "swipeableContainer",
                    desc=desc,
                    on_tap=lambda: phone.open_thread(address),
                )

            rows.append((220, row))
        b.scroll_list(b.content, (0, top, WIDTH, HEIGHT), rows, key="list", rid=M + "conversation_list")
        b.add(
            b.content,
            BUTTON,
            (620, HEIGHT - 300, 1040, HEIGHT - 140),
            text="Start chat",
            desc="Start chat",
            rid=M + "start_chat_fab",
            on_tap=lambda: phone.open(NewConversationScreen()),
        )


class NewConversationScreen(Screen):
    package = MESSAGES
    activity = "com.google.android.apps.messaging.ui.contact.ContactPickerActivity"

    def __init__(self) -> None:
        super().__init__()
        self.focus = "to"
        self.keyboard = True

    def build(self, b: Builder, phone: SimPhone) -> None:
        state = phone.state
        top = b.toolbar("New conversation", back=phone.back)
        b.text(b.content, (40, top, 140, top + 140), "To")
        b.field(
            b.content,
            (140, top, WIDTH - 40, top + 140),
            "to",
            rid=M + "recipient_text_view",
            hint="Type names, phone numbers, or emails",
        )
        query = self.value("to").strip()
        everyone = sorted(state.contacts, key=lambda c: c.name.casefold())
        wanted = digits(query)
        if wanted and wanted == query.replace(" ", "").lstrip("+"):
            contacts = [c for c in everyone if any(wanted in digits(p) for p in c.phones)]
        else:
            contacts = state.find_contacts(query) if query else everyone
        rows: list[tuple[int, Callable[[Bounds], UiNode]]] = []
        for contact in contacts:
            for number in contact.phones:

                def row(bounds: Bounds, name: str = contact.name, number: str = number) -> UiNode:
                    return b.row(
                        bounds,
                        [(name, M + "contact_name"), (number, M + "contact_details")],
                        rid=M + "contact_picker_row",
                        on_tap=lambda: self.pick(phone, number),
                    )

                rows.append((200, row))
        b.scroll_list(b.content, (0, top + 160, WIDTH, HEIGHT), rows, key="contacts", rid=M + "contact_list")

    def pick(self, phone: SimPhone, address: str) -> None:
        phone.close(self)
        phone.open_thread(address)

    def submit(self, phone: SimPhone, key: str) -> None:
        address = phone.state.resolve_recipient(self.value("to"))
        if address is not None:
            self.pick(phone, address)


class ConversationScreen(Screen):
    package = MESSAGES
    activity = "com.google.android.apps.messaging.ui.conversation.ConversationActivity"

    def __init__(self, thread_id: str, address: str) -> None:
        super().__init__()
        self.thread_id = thread_id
        self.address = address

    @property
    def title(self) -> str:
        return "Messages"

    def same_as(self, other: Screen) -> bool:
        return isinstance(other, ConversationScreen) and other.thread_id == self.thread_id

    def build(self, b: Builder, phone: SimPhone) -> None:
        state = phone.state
        name = state.display_name(self.address)
        top = b.toolbar(
            name,
            title_rid=M + "conversation_title",
            back=phone.back,
            actions=[("Call", lambda: phone.place_call(self.address))],
        )
        rows: list[tuple[int, Callable[[Bounds], UiNode]]] = []
        for message in state.thread_messages(self.thread_id):
            mine = message.box != "inbox"

            def row(bounds: Bounds, body: str = message.body, mine: bool = mine) -> UiNode:
                left, top_, right, bottom = bounds
                holder = b.add(None, FRAME, bounds, rid=M + "message_content")
                x0, x1 = (300, right - 40) if mine else (left + 40, 780)
                bubble = b.add(holder, LINEAR, (x0, top_ + 12, x1, bottom - 12), rid=M + "message_bubble")
                b.text(bubble, (x0 + 32, top_ + 36, x1 - 32, bottom - 36), body, rid=M + "message_text")
                return holder

            rows.append((bubble_height(message.body), row))
        b.scroll_list(
            b.content,
            (0, top, WIDTH, COMPOSE_TOP),
            rows,
            key="messages",
            rid=M + "messages_list",
            stick_to_end=True,
        )
        compose = b.add(b.content, LINEAR, (0, COMPOSE_TOP, WIDTH, HEIGHT), rid=M + "compose_container")
        b.field(
            compose,
            (40, COMPOSE_TOP + 40, 900, HEIGHT - 40),
            "compose",
            rid=M + "compose_message_text",
            hint="Text message",
        )
        b.add(
            compose,
            IMAGE_BUTTON,
            (920, COMPOSE_TOP + 40, 1060, HEIGHT - 40),
            rid=M + "send_message_button_icon",
            desc="Send SMS",
            on_tap=lambda: self.send(phone),
        )

    def send(self, phone: SimPhone) -> None:
        body = self.value("compose")
        if body.strip():
            phone.send_sms(self.address, body)
            self.fields["compose"] = ""
            self.scroll.pop("messages", None)  # sending jumps to the newest message

    def submit(self, phone: SimPhone, key: str) -> None:
        self.edit(lambda value: value + "\n")  # Enter is a new line unless "Enter is send" is on
