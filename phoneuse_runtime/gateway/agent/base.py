"""The agent part's frame table, and how its handlers and actions find the part."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...errors import Unsupported
from ..dispatch import Handlers

if TYPE_CHECKING:
    from ..server import Gateway
    from .part import AgentPart

HANDLERS = Handlers()


def agent_of(gateway: Gateway) -> AgentPart:
    """The gateway's agent part; Unsupported when it runs none (a gateway built without it)."""
    from .part import AgentPart

    for part in gateway.parts:
        if isinstance(part, AgentPart):
            return part
    raise Unsupported("this gateway runs no agent part")
