"""The agent part's frame table, and how its handlers and actions find the part."""

from __future__ import annotations

from typing import TYPE_CHECKING

from phoneuse_runtime.gateway.dispatch import Handlers
from phoneuse_runtime.kernel.errors import Unsupported

if TYPE_CHECKING:
    from phoneuse_runtime.gateway.agent.part import AgentPart
    from phoneuse_runtime.gateway.server import Gateway

HANDLERS = Handlers()


def agent_of(gateway: Gateway) -> AgentPart:
    """The gateway's agent part; Unsupported when it runs none (a gateway built without it)."""
    from phoneuse_runtime.gateway.agent.part import AgentPart

    for part in gateway.parts:
        if isinstance(part, AgentPart):
            return part
    raise Unsupported("this gateway runs no agent part")
