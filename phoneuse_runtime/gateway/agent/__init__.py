"""The agent part: the chat bridge to the agent (CHAT_* actions, CHAT_MESSAGE / AGENT_STOP /
AGENT_STEER events), the mirror of its work, phone events, approvals and slash commands.

Modules: `part.py` (the part), `seam.py` (what it needs of the chat part), `actions.py`
(CHAT_*), `events.py`, `mirror.py` (bus events to frames), `approvals.py` (the policy),
`pickers.py` (picker.select), `commands.py` (slash commands), `frames.py` (agent.stop/steer).
"""

from __future__ import annotations

from phoneuse_runtime.gateway.agent import commands, frames, pickers  # noqa: F401 (they register their frame handlers)
from phoneuse_runtime.gateway.agent.part import AgentPart
from phoneuse_runtime.gateway.agent.seam import ChatSeam

__all__ = ["AgentPart", "ChatSeam"]
