"""Components: the parts an app serves besides the runtime itself (the gRPC server, the Iris
gateway, a plug-in's service). The composition root (`app.py`) starts them in order after the
runtime and stops them in reverse; each may contribute actions, queries, event types and
policies, and its handlers reach it through `ActionContext.component`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from phoneuse_runtime.kernel.registry import Contributor

if TYPE_CHECKING:
    from phoneuse_runtime.kernel.runtime import Runtime


class Component(Contributor, Protocol):
    """A part of the app with a lifecycle. `name` is unique within an app."""

    async def start(self, runtime: Runtime) -> None:
        """The runtime is started; begin serving."""
        ...

    async def stop(self, *, grace_s: float) -> None:
        """Stop taking new work; let what is in flight finish within `grace_s`."""
        ...
