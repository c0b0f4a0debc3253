"""The simulated phone's behaviour: the task stack, input dispatch, messaging and calls.

Everything here is synchronous and in memory; `SimDevice` wraps it with the async
`Device` API, counts in-flight operations and persists the data stores.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass
from typing import TYPE_CHECKING

from phoneuse_runtime.device.base import SYSTEM_SOURCE, CallState, Foreground, Notification, SmsMessage
from phoneuse_runtime.device.sim.catalog import BY_PACKAGE, LAUNCHER, MESSAGES, SYSTEMUI, WHATSAPP
from phoneuse_runtime.device.sim.state import (
    SCREENS_XML_MAX,
    CallKind,
    Chat,
    ChatMessage,
    SimState,
    require_number,
)
from phoneuse_runtime.device.sim.widgets import HEIGHT, STATUS_BAR, WIDTH, Screen, View, status_bar
from phoneuse_runtime.kernel.errors import InvalidParams, Unsupported
from phoneuse_runtime.kernel.events import (
    AppStateChanged,
    CallStateChanged,
    EventSink,
    MessageReceived,
    NotificationPosted,
    now_ms,
)
from phoneuse_runtime.kernel.limits import clip
from phoneuse_runtime.screen.ui import UiNode

if TYPE_CHECKING:
    from phoneuse_runtime.device.sim.home import CustomScreen

TELECOM_SOURCE = "com.android.server.telecom"


def _ignore(_event: object) -> None:
    return None


def monkey_abort(package: str) -> Unsupported:
    return Unsupported(f"cannot launch {package}: ** No activities found to run, monkey aborted.")


@dataclass
class Task:
    """An app's back stack; overlays (recents, the notification shade) sit above every task."""

    package: str
    screens: list[Screen]
    overlay: bool = False


def path_at(root: UiNode, x: int, y: int) -> list[UiNode]:
    """Root-to-leaf path to the deepest, last-drawn node containing the point."""
    path: list[UiNode] = []
    children = root.children if root.class_name == "hierarchy" else [root]
    while True:
        hit = next((c for c in reversed(children) if c.contains(x, y)), None)
        if hit is None:
            return path
        path.append(hit)
        children = hit.children


class SimPhone:
    def __init__(self, state: SimState, emit: EventSink = _ignore) -> None:
        from phoneuse_runtime.device.sim.home import (
            HomeScreen,  # the screen modules import this one for typing only
        )

        self.state = state
        self.emit = emit
        self.tasks: list[Task] = [Task(LAUNCHER, [HomeScreen()])]
        self.running: list[str] = [LAUNCHER]  # least recently used first
        self.call = CallState("idle")
        # The current call, for its call log row: when it began, whether this phone placed it,
        # and when it was answered (0 while it rings).
        self._call_began_ms = 0
        self._call_outgoing = False
        self._call_answered_ms = 0
        self._shown = self.foreground()
        self._shown_top = self.top()
        # The scenario screens shown (SIM_SET_SCREEN), oldest first, and their XML's characters.
        self._custom: collections.deque[CustomScreen] = collections.deque()
        self._custom_size = 0

    # --- the stack ---------------------------------------------------------
    def top(self) -> Screen:
        return self.tasks[-1].screens[-1]

    def foreground(self) -> Foreground:
        top = self.top()
        return Foreground(top.package, top.activity)

    def settle(self) -> None:
        """Emits APP_STATE_CHANGED if the foreground differs from what was last announced."""
        top = self.top()
        if top is self._shown_top:  # the same screen (most operations): the same package and activity
            return
        self._shown_top = top
        now = Foreground(top.package, top.activity)
        if now != self._shown:
            previous, self._shown = self._shown, now
            event = AppStateChanged(
                package=now.package, activity=now.activity, previous_package=previous.package
            )
            self.emit(event.to_event(SYSTEM_SOURCE))

    def _drop_overlays(self) -> None:
        self.tasks = [t for t in self.tasks if not t.overlay]

    def _touch(self, package: str) -> None:
        if package in self.running:
            self.running.remove(package)
        self.running.append(package)

    def _front(self, task: Task) -> None:
        self.tasks.remove(task)
        self.tasks.append(task)
        self._touch(task.package)

    def _task(self, package: str) -> Task | None:
        return next((t for t in self.tasks if t.package == package and not t.overlay), None)

    def open(self, screen: Screen, *, under: Screen | None = None) -> None:
        """Starts `screen` in its app's task (created with `under` beneath it when new) and brings it up."""
        self._drop_overlays()
        task = self._task(screen.package)
        if task is None:
            task = Task(screen.package, [under] if under is not None else [])
            self.tasks.append(task)
        if task.screens and task.screens[-1].same_as(screen):
            task.screens[-1] = screen  # like a singleTop activity receiving a new intent
        else:
            task.screens.append(screen)
        self._front(task)

    def show_custom(self, screen: CustomScreen) -> None:
        """Opens a scenario's screen; past SCREENS_XML_MAX characters of them in the back stacks,
        the oldest shown close (the one just opened stays, whatever its size)."""
        self.open(screen)
        shown = self._custom
        shown.append(screen)
        self._custom_size += screen.size
        while self._custom_size > SCREENS_XML_MAX and len(shown) > 1:
            oldest = shown.popleft()
            self._custom_size -= oldest.size
            self.close(oldest)

    def open_task(self, screen: Screen) -> None:
        """Starts `screen` in a task of its own, e.g. the in-call screen over whatever was open."""
        self._drop_overlays()
        self.tasks.append(Task(screen.package, [screen]))
        self._touch(screen.package)

    def switch_to(self, package: str) -> None:
        """Brings the package's task to the front (from recents); relaunches it if it has none."""
        task = self._task(package)
        self._drop_overlays()
        if task is not None:
            self._front(task)
        elif BY_PACKAGE.get(package) is not None and BY_PACKAGE[package].launch_activity:
            self.launch(package)

    def overlay(self, screen: Screen) -> None:
        self._drop_overlays()
        self.tasks.append(Task(screen.package, [screen], overlay=True))

    def replace(self, old: Screen, new: Screen) -> None:
        """`old` finishes as `new` starts, like a picker that hands over to the conversation."""
        for task in self.tasks:
            if old in task.screens and task.package == new.package:
                task.screens[task.screens.index(old)] = new
                return
        self.close(old)
        self.open(new)

    def close(self, screen: Screen) -> None:
        for task in list(self.tasks):
            if screen in task.screens:
                task.screens.remove(screen)
                if not task.screens:
                    self.tasks.remove(task)

    def launch(self, package: str) -> Foreground:
        from phoneuse_runtime.device.sim.apps import root_screen

        app = BY_PACKAGE.get(package)
        if app is None or not app.launch_activity:
            raise monkey_abort(package)
        if package == LAUNCHER:
            self.home()
            return self.foreground()
        self._drop_overlays()
        task = self._task(package)
        if task is None:
            task = Task(package, [root_screen(package)])
            self.tasks.append(task)
        self._front(task)
        return self.foreground()

    def stop(self, package: str) -> bool:
        from phoneuse_runtime.device.sim.home import HomeScreen

        was_running = package in self.running
        self.tasks = [t for t in self.tasks if t.package != package or t.overlay]
        if package == LAUNCHER:
            self.tasks.insert(0, Task(LAUNCHER, [HomeScreen()]))
            return was_running
        if package in self.running:
            self.running.remove(package)
        return was_running

    def home(self) -> None:
        self._drop_overlays()
        launcher = self._task(LAUNCHER)
        assert launcher is not None  # the launcher task is never removed
        del launcher.screens[1:]
        self._front(launcher)

    def back(self) -> None:
        top = self.top()
        if top.keyboard:
            top.keyboard = False
            return
        if top.back(self):
            return
        task = self.tasks[-1]
        if task.package == LAUNCHER and not task.overlay and len(task.screens) == 1:
            return  # BACK on the home screen does nothing
        task.screens.pop()
        if not task.screens:
            self.tasks.pop()

    def recents(self) -> None:
        from phoneuse_runtime.device.sim.home import RecentsScreen

        if self.tasks[-1].overlay and isinstance(self.top(), RecentsScreen):
            self.tasks.pop()
            return
        self.overlay(RecentsScreen())

    # --- input -------------------------------------------------------------
    def view(self) -> View:
        return self.view_of(self.top())

    def view_of(self, top: Screen) -> View:
        """`top` as the phone shows it in front, with the status bar over an app's screen."""
        view = top.render(self)
        if top.package != SYSTEMUI and top.system_bars:
            state = self.state
            bar = status_bar(
                wifi=state.wifi_enabled,
                airplane=state.airplane_mode,
                bluetooth=state.bluetooth_enabled,
                dnd=state.dnd != "off",
            )
            view.root = UiNode(
                class_name="hierarchy", bounds=(0, 0, WIDTH, HEIGHT), children=[view.root, bar]
            )
        return view

    def tap(self, x: int, y: int) -> None:
        view = self.view()
        for node in reversed(path_at(view.root, x, y)):
            action = view.taps.get(id(node))
            if action is not None:
                if node.enabled:
                    action()
                return

    def long_press(self, x: int, y: int) -> None:
        view = self.view()
        for node in reversed(path_at(view.root, x, y)):
            action = view.long_taps.get(id(node))
            if action is not None:
                if node.enabled:
                    action()
                return

    def swipe(self, x1: int, y1: int, x2: int, y2: int) -> None:
        from phoneuse_runtime.device.sim.home import ShadeScreen

        if y1 < STATUS_BAR and y2 - y1 > 200:
            self.overlay(ShadeScreen())
            return
        view = self.view()
        for node in reversed(path_at(view.root, x1, y1)):
            scroller = view.scrollers.get(id(node))
            if scroller is not None:
                offset = min(max(scroller.offset + (y1 - y2), 0), scroller.max_offset)
                self.top().scroll[scroller.key] = offset
                return

    def input_text(self, text: str) -> None:
        self.top().edit(lambda value: value + text)

    def clear_text(self) -> None:
        self.top().edit(lambda _value: "")

    def press_key(self, keycode: int) -> None:
        top = self.top()
        if keycode == 3:
            self.home()
        elif keycode == 4:
            self.back()
        elif keycode == 187:
            self.recents()
        elif keycode == 6 and self.call.state != "idle":
            self.end_call()
        elif keycode == 66 and top.focus is not None:
            top.submit(self, top.focus)
        elif keycode == 67:
            top.edit(lambda value: value[:-1])
        elif keycode == 62:
            top.edit(lambda value: value + " ")
        # Other keys (volume, power, DPAD, ...) change nothing the simulator models.

    # --- messaging ---------------------------------------------------------
    def send_sms(self, number: str, body: str) -> SmsMessage:
        if not body:
            raise InvalidParams("the SMS body is empty")
        return self.state.add_sms(require_number(number), body, "sent")

    def receive_sms(self, sender: str, body: str) -> SmsMessage:
        message = self.state.add_sms(require_number(sender), body, "inbox", read=False)
        received = MessageReceived(
            from_=message.address, body=body, app=MESSAGES, thread_id=message.thread_id, message_id=message.id
        )
        self.emit(received.to_event(MESSAGES))
        name = self.state.display_name(message.address)
        self.post_notification(MESSAGES, name, body, target=f"sms:{message.thread_id}")
        return message

    def send_chat(self, chat: Chat, body: str) -> ChatMessage:
        if not body:
            raise InvalidParams("the message is empty")
        return self.state.add_chat_message(chat, body, from_me=True)

    def receive_chat(self, app: str, sender: str, body: str) -> ChatMessage:
        if app != WHATSAPP:
            raise Unsupported(f"the simulator has no chat app {clip(app)}; it models {WHATSAPP}")
        chat = self.state.chat_for(sender, create=True)
        if chat is None:
            raise InvalidParams(f"{clip(sender)} is neither a phone number nor exactly one contact")
        message = self.state.add_chat_message(chat, body, from_me=False)
        received = MessageReceived(
            from_=chat.number, body=body, app=WHATSAPP, thread_id=chat.jid, message_id=message.id
        )
        self.emit(received.to_event(WHATSAPP))
        self.post_notification(WHATSAPP, chat.name, body, target=f"chat:{chat.jid}")
        return message

    def post_notification(self, package: str, title: str, text: str, *, target: str = "") -> Notification:
        if not package.strip():
            raise InvalidParams("a notification needs the package that posts it")
        notification = self.state.add_notification(package, title, text, target=target)
        posted = NotificationPosted(package=package, title=title, text=text, key=notification.key)
        self.emit(posted.to_event(package))
        return notification

    def open_notification(self, notification: Notification) -> None:
        """Tapping a notification: it is dismissed and opens what it is about."""
        target = self.state.notification_targets.get(notification.key, "")
        self.state.notifications = [n for n in self.state.notifications if n.key != notification.key]
        self.state.notification_targets.pop(notification.key, None)
        self.state.dirty = True
        kind, _, ref = target.partition(":")
        if kind == "sms" and ref in self.state.threads:
            self.open_thread(self.state.threads[ref])
        elif kind == "chat":
            chat = next((c for c in self.state.chats if c.jid == ref), None)
            if chat is not None:
                self.open_chat(chat)
        elif notification.package in BY_PACKAGE and BY_PACKAGE[notification.package].launch_activity:
            self.launch(notification.package)
        else:
            self._drop_overlays()

    def open_thread(self, address: str, *, body: str = "") -> None:
        from phoneuse_runtime.device.sim.apps import root_screen
        from phoneuse_runtime.device.sim.messages import ConversationScreen

        thread_id = self.state.thread_id_for(require_number(address))
        self.state.mark_thread_read(thread_id)
        self.state.cancel_notifications(f"sms:{thread_id}")
        screen = ConversationScreen(thread_id, address)
        if body:
            screen.fields["compose"] = body
        self.open(screen, under=root_screen(MESSAGES))

    def open_chat(self, chat: Chat, *, text: str = "") -> None:
        from phoneuse_runtime.device.sim.apps import root_screen
        from phoneuse_runtime.device.sim.whatsapp import ChatScreen

        for message in chat.messages:
            if not message.read:
                message.read = True
                self.state.dirty = True
        self.state.cancel_notifications(f"chat:{chat.jid}")
        screen = ChatScreen(chat.jid)
        if text:
            screen.fields["entry"] = text
        self.open(screen, under=root_screen(WHATSAPP))

    # --- calls -------------------------------------------------------------
    def _set_call(self, state: CallState) -> None:
        self.call = state
        self.emit(CallStateChanged(state=state.state, number=state.number).to_event(TELECOM_SOURCE))

    def place_call(self, number: str) -> None:
        from phoneuse_runtime.device.sim.dialer import InCallScreen

        number = require_number(number)
        if self.call.state != "idle":
            raise Unsupported(f"a call is already {self.call.state} ({self.call.number}); end it first")
        self._call_began_ms = self._call_answered_ms = now_ms()  # the simulated callee answers at once
        self._call_outgoing = True
        self._set_call(CallState("offhook", number))
        self.open_task(InCallScreen())

    def incoming_call(self, number: str) -> None:
        from phoneuse_runtime.device.sim.dialer import InCallScreen

        number = require_number(number)
        if self.call.state != "idle":
            raise Unsupported(f"a call is already {self.call.state} ({self.call.number})")
        self._call_began_ms, self._call_answered_ms = now_ms(), 0
        self._call_outgoing = False
        self._set_call(CallState("ringing", number))
        self.open_task(InCallScreen())

    def answer(self) -> None:
        if self.call.state == "ringing":
            self._call_answered_ms = now_ms()
            self._set_call(CallState("offhook", self.call.number))

    def end_call_action(self) -> None:
        self.end_call()

    def end_call(self) -> bool:
        """This phone hangs up, or declines the call that rings (logged as rejected)."""
        return self._hang_up("rejected")

    def remote_hang_up(self) -> bool:
        """The other party hangs up, or gives up ringing (logged as missed)."""
        return self._hang_up("missed")

    def _hang_up(self, unanswered: CallKind) -> bool:
        from phoneuse_runtime.device.sim.dialer import InCallScreen

        if self.call.state == "idle":
            return False
        number = self.call.number
        for task in list(self.tasks):
            for screen in list(task.screens):
                if isinstance(screen, InCallScreen):
                    self.close(screen)
        answered = self._call_answered_ms
        kind: CallKind = "outgoing" if self._call_outgoing else "incoming" if answered else unanswered
        duration_s = (now_ms() - answered) // 1000 if answered else 0
        self.state.add_call(number, kind, date_ms=self._call_began_ms, duration_s=duration_s)
        self._set_call(CallState("idle", number))
        return True
