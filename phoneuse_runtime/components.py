"""Components: the parts an app serves besides the runtime itself (the gRPC server, the Iris
gateway, a plug-in's service). The composition root (`app.py`) starts them in order after the
runtime and stops them in reverse; each may contribute actions, queries, event types and
policies, and its handlers reach it through `ActionContext.component`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from .events import EventPayload
    from .policies import Policy
    from .registry import AnyActionSpec, AnyQuerySpec
    from .runtime import Runtime


@dataclass(frozen=True)
class Contribution:
    """What a component adds to the app. Its event payloads are documented in the spec."""

    actions: Sequence[AnyActionSpec] = ()
    queries: Sequence[AnyQuerySpec] = ()
    events: Sequence[type[EventPayload]] = ()
    policies: Sequence[Policy] = ()


class Component(Protocol):
    """A part of the app with a lifecycle. `name` is unique within an app."""

    name: str

    def contribution(self) -> Contribution:
        """Called once, while the app is assembled, before `start`."""
        ...

    async def start(self, runtime: Runtime) -> None:
        """The runtime is started; begin serving."""
        ...

    async def stop(self, *, grace_s: float) -> None:
        """Stop taking new work; let what is in flight finish within `grace_s`."""
        ...
