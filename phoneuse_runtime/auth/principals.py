"""Principal names that belong to the runtime itself: "agent" is each runtime's own token's
principal, and `device:` prefixes a paired app's (`device:ID`). No fleet token and no pairing may
take one, in any case: `Agent` or `AGENT` beside `agent` would read as the agent itself in an
approval prompt ("Agent asks to ...")."""

from __future__ import annotations

RESERVED = ("agent",)
DEVICE_PREFIX = "device:"


def reserved(name: str) -> bool:
    """Whether `name` is one of the runtime's own principals, compared without regard to case
    (Unicode's casefold, so no look-alike case form slips by) and to surrounding blanks."""
    folded = name.strip().casefold()
    return folded in RESERVED or folded.startswith(DEVICE_PREFIX)


def reserved_problem(name: str, *, what: str) -> str | None:
    """Why `name` cannot name `what` (e.g. "a fleet token's principal"), or None."""
    if reserved(name):
        return (
            f"{name!r} is reserved: 'agent' (in any case) is each runtime's own token's principal "
            f"and 'device:' a paired app's; choose another name for {what}"
        )
    return None
