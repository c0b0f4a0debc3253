"""The owner's approval: actions on the approval list wait for a paired app's answer.

The policy holds a call through the runtime's approvals (`call.ask`): the hold is announced as
`APPROVAL_REQUESTED`, which the part shows on every device as `picker.approval` (`mirror.py`),
and the first `picker.select` answers it (`pickers.py`), bound to the digest of the exact call
shown. An answer of "deny" is `DENIED`; no answer by the call's deadline is `TIMEOUT`.

It runs after the configuration's deny and allow lists (they come first in the chain), so a
denied action is never offered. A call the owner makes from the app (a slash command) is the
owner's own decision and is not held.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...policies import PolicyCall

if TYPE_CHECKING:
    from .part import AgentPart

# "always": hold listed actions even with no app paired (they time out unanswered); "paired":
# once any app device is paired (a runtime nobody paired behaves as before); "off": never.
APPROVAL_MODES = ("always", "paired", "off")
OWNER_FRONTEND = "gateway"  # calls made from the app itself


class OwnerApproval:
    """The phone's owner approves the risky actions in the Iris app.

    A call whose effects include an action on the `approval_actions` setting (default
    `SEND_MESSAGE`, `MAKE_CALL`, `SHELL`, `START_INTENT`) is held (`APPROVAL_REQUESTED`), and every
    paired app device is asked with a `picker.approval`, again when it reconnects. The first
    answer wins: `approve` runs the call, `deny` makes it `DENIED`; no answer by the call's
    deadline makes it `TIMEOUT`. The answer is bound to the digest of the exact call shown.
    The `approvals` setting (`PHONEUSE_APPROVALS`) says when: `paired` (the default: once any app
    device is paired), `always`, or `off`. The deny and allow lists run first, so a denied
    action is never offered; calls the owner makes from the app (slash commands) are not held."""

    name = "owner-approval"

    def __init__(self, part: AgentPart) -> None:
        self.part = part

    async def check(self, call: PolicyCall) -> None:
        gateway = self.part.gateway
        settings = gateway.settings
        if settings.approvals == "off" or call.caller.frontend == OWNER_FRONTEND:
            return
        held = (call.effects or frozenset({call.name})) & settings.approval_actions
        if not held:
            return
        if settings.approvals == "paired" and not await gateway.paired_devices():
            return
        self.part.listen()  # the hold must reach the devices as a picker
        what = ", ".join(sorted(held))
        await call.ask(f"{what} needs the owner's approval in the Iris app")
