"""The runtime's answer to the system's "isn't responding" and "keeps stopping" dialogs.

The owner says (`error_dialogs`) what the runtime does about them: `report` (the default) only
publishes SYSTEM_DIALOG and leaves the dialog to the agent; `wait` answers an ANR dialog with
"Wait" (android:id/aerr_wait) and a crash dialog, which has nothing to wait for, with
"Close app"; `close` answers both with "Close app" (android:id/aerr_close). The dialog is
answered in the phone's turn, as an action is, by its button's id (the same on every language).
A runtime permission prompt is never answered here: the permission controller is one of the
owner's controls (owner/controls.py), for the owner to answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import TYPE_CHECKING

from phoneuse_runtime.device.base import ElementAct
from phoneuse_runtime.kernel.errors import RuntimeFailure
from phoneuse_runtime.kernel.registry import Contribution
from phoneuse_runtime.screen.selector import Selector

if TYPE_CHECKING:
    from phoneuse_runtime.kernel.events import Subscription
    from phoneuse_runtime.kernel.runtime import Runtime

log = logging.getLogger(__name__)

_BUTTON = {
    ("wait", "anr"): "android:id/aerr_wait",
    ("wait", "crash"): "android:id/aerr_close",
    ("close", "anr"): "android:id/aerr_close",
    ("close", "crash"): "android:id/aerr_close",
}


def answer_button(answer: str, kind: str) -> str | None:
    """The resource-id of the button the runtime presses on a dialog of `kind`; None: none."""
    return _BUTTON.get((answer, kind))


class ErrorDialogAnswers:
    """A component (served when `error_dialogs` is not `report`): an inside listener of
    SYSTEM_DIALOG that presses the owner's chosen button."""

    name = "error_dialogs"

    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.answered = 0
        self._sub: Subscription | None = None
        self._task: asyncio.Task[None] | None = None
        self._runtime: Runtime | None = None

    def contribution(self) -> Contribution:
        return Contribution()

    async def start(self, runtime: Runtime) -> None:
        self._runtime = runtime
        self._sub = runtime.bus.subscribe(self.name, ["SYSTEM_DIALOG"], scope=self.name, outside=False)
        self._task = asyncio.create_task(self._run(self._sub), name="error-dialog-answers")

    async def stop(self, *, grace_s: float) -> None:
        if self._runtime is not None and self._sub is not None:
            self._runtime.bus.unsubscribe(self._sub)
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _run(self, sub: Subscription) -> None:
        async for event in sub:
            payload = json.loads(event.payload_json)
            button = answer_button(self.answer, str(payload.get("kind", "")))
            if button is not None:
                await self._press(button, payload)

    async def _press(self, button: str, payload: dict[str, object]) -> None:
        assert self._runtime is not None
        runtime = self._runtime
        await runtime.turns.take()
        try:
            acted = await runtime.device.act_on(Selector(resource_id=button), ElementAct("tap"))
        except RuntimeFailure as exc:
            log.warning("answering the dialog %r failed: %s", payload.get("title"), exc)
            return
        finally:
            runtime.turns.give_back()
        if acted is None:
            log.info("the dialog %r was gone before it was answered", payload.get("title"))
            return
        self.answered += 1
        log.info(
            "answered the dialog %r with %s (error_dialogs=%s)", payload.get("title"), button, self.answer
        )
