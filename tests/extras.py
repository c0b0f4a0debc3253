"""A component that contributes what a test needs (actions, queries, events, policies), the way
the gateway or a plug-in's service will: through the composition root, never by patching."""

from __future__ import annotations

from collections.abc import Sequence

from phoneuse_runtime.kernel.events import EventPayload
from phoneuse_runtime.kernel.policies import Policy
from phoneuse_runtime.kernel.registry import AnyActionSpec, AnyQuerySpec, Contribution
from phoneuse_runtime.kernel.runtime import Runtime


class Extra:
    """Contributes what it is given, and records its lifecycle (for the composition root's tests)."""

    def __init__(
        self,
        *actions: AnyActionSpec,
        name: str = "extra",
        queries: Sequence[AnyQuerySpec] = (),
        events: Sequence[type[EventPayload]] = (),
        policies: Sequence[Policy] = (),
        log: list[str] | None = None,
    ) -> None:
        self.name = name
        self._contribution = Contribution(actions=actions, queries=queries, events=events, policies=policies)
        self.log = [] if log is None else log
        self.runtime: Runtime | None = None

    def contribution(self) -> Contribution:
        self.log.append(f"contribution {self.name}")
        return self._contribution

    async def start(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.log.append(f"start {self.name}")

    async def stop(self, *, grace_s: float) -> None:
        self.log.append(f"stop {self.name}")
