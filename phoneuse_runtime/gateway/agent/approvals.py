"""The owner's approval: actions on the approval list wait for a paired app's answer.

The policy holds a call through the runtime's approvals (`call.ask`): the hold is announced as
`APPROVAL_REQUESTED`, which the part shows on every device as `picker.approval` (`mirror.py`),
and the first `picker.select` answers it (`pickers.py`), bound to the digest of the exact call
shown. An answer of "deny" is `DENIED`; no answer by the call's deadline is `TIMEOUT`.

It runs after the configuration's deny and allow lists and every refusal that needs no person
(the runtime's checks come first), so a refused action is never offered. A call the owner makes
from the app (a slash command, `Caller.owner`) is the owner's own decision and is not held.

With `approve_ui_in` (e.g. `["com.whatsapp"]`) it also holds every UI action (TAP, TYPE_TEXT, ...)
while one of those packages is in front: the runtime asks `hold_in_front` once the action has its
turn on the phone and has read the front.
"""

from __future__ import annotations

import datetime
import logging
from typing import TYPE_CHECKING

from phoneuse_runtime.kernel.policies import PolicyCall

if TYPE_CHECKING:
    from phoneuse_runtime.gateway.pairing import Pairing

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from phoneuse_runtime.gateway.agent.part import AgentPart

# "always": hold listed actions even with no app paired (they time out unanswered); "paired":
# once any app device is paired (a runtime nobody paired behaves as before); "off": never.
OWNER_FRONTEND = "gateway"  # calls made from the app itself


class OwnerApproval:
    """The phone's owner approves the risky actions in the Iris app or from the terminal.

    A call whose effects include an action on the `approval_actions` setting (default
    `SEND_MESSAGE`, `MAKE_CALL`, `SHELL`, `START_INTENT`) is held (`APPROVAL_REQUESTED`), and every
    paired app device is asked with a `picker.approval`, again when it reconnects; the terminal
    answers too (`phoneuse-runtime approvals list`, `approve ID`, `deny ID`). The first answer
    wins: `approve` runs the call, `deny` makes it `DENIED`; no answer by the call's deadline
    makes it `TIMEOUT`. The answer is bound to the digest of the exact call shown. The
    picker's `command` shows the action, then its target (`to`, `number`, `url`, `package`,
    `component`, `action`, `data`, `command`, `name`, the app), never cut, then the other
    params, cut to 200 characters; control and bidi characters are stripped; the frame also
    carries `action`, `target`, `app_target`, `params` (every value, uncut), `digest`,
    `reason` and `deadline_ms`. With `approve_ui_in`, every UI action while one of its packages
    is in front is held too. The `approvals` setting (`PHONEUSE_APPROVALS`) says when: `paired`
    (the default: while any app device is paired; the log and `doctor` say when the last
    pairing has expired), `always`, or `off`. Every refusal that needs no person runs first, so
    a refused action is never offered; calls the owner makes from the app (slash commands) are
    not held. The `owner_actions` (INSTALL_APP, UNINSTALL_APP, GRANT_PERMISSION, REVOKE_PERMISSION)
    are held under `paired` even while nothing is paired (the terminal answers them), and their
    reason says what the spec's `describe` says of the call (the APK, its package, its permissions)."""

    name = "owner-approval"

    def __init__(self, part: AgentPart) -> None:
        self.part = part
        self.paired: bool | None = None  # whether an app device was paired at the last call

    async def _active(self, call: PolicyCall, *, owners: bool = False) -> bool:
        """Whether calls are held now: not for the owner, nor with approvals off, nor (paired)
        while no app device is paired, unless the call is one of the `owner_actions` (`owners`)."""
        gateway = self.part.gateway
        settings = gateway.settings
        if settings.approvals == "off" or call.caller.owner:
            return False
        if settings.approvals == "paired" and not owners:
            paired = bool(await gateway.paired_devices())
            if self.paired and not paired:
                log.warning(
                    'the last app pairing has expired or was revoked: with approvals = "paired" '
                    "nothing is held any more (%s runs unasked); `phoneuse-runtime pair new` pairs "
                    'the app again, approvals = "always" holds even with nothing paired',
                    call.name,
                )
            self.paired = paired
            if not paired:
                return False
        self.part.listen()  # the hold must reach the devices as a picker
        return True

    async def check(self, call: PolicyCall) -> None:
        settings = self.part.gateway.settings
        effects = call.effects or frozenset({call.name})
        owners = effects & settings.owner_actions
        held = effects & settings.approval_actions | owners
        if held and await self._active(call, owners=bool(owners)):
            what = ", ".join(sorted(held))
            about = f": {call.about}" if call.about else ""
            await call.ask(f"{what} needs the owner's approval{about}")

    async def hold_in_front(self, call: PolicyCall, package: str) -> str | None:
        if package not in self.part.gateway.settings.approve_ui_in or not await self._active(call):
            return None
        return f"{call.name} while {package} is in front needs the owner's approval (approve_ui_in)"


def unpaired_note(pairings: list[Pairing], now: int) -> str | None:
    """With approvals = "paired": why nothing is held, when no pairing works now (`pairings`
    empty: none was ever made); None when one works."""
    if any(p.state(now) == "paired" for p in pairings):
        return None
    if not pairings:
        return 'no app device is paired, so with approvals = "paired" nothing is held'
    last = max(pairings, key=lambda p: p.expires_ms or p.created_ms)
    when = ""
    if last.expires_ms is not None and not last.revoked:
        at = datetime.datetime.fromtimestamp(last.expires_ms / 1000, tz=datetime.timezone.utc)
        when = f" on {at:%Y-%m-%d %H:%M} UTC"
    return (
        f"the last app pairing {'was revoked' if last.revoked else 'expired'}{when}: with "
        'approvals = "paired" nothing is held any more'
    )


UNPAIRED_FIX = (
    '`phoneuse-runtime pair new --name PHONE` pairs the app again; approvals = "always" in config.toml '
    "holds the listed actions even with nothing paired (the terminal answers them: `approvals list`)"
)
