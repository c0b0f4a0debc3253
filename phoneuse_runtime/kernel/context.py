"""What a handler is given: the phone, the caller, the settings and the app's components."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from phoneuse_runtime.kernel.errors import Unsupported

if TYPE_CHECKING:
    from phoneuse_runtime.config.settings import Settings
    from phoneuse_runtime.device.base import Device
    from phoneuse_runtime.kernel.callers import Caller

C = TypeVar("C")


@dataclass(slots=True)
class QueryContext:
    name: str  # the action_type or query type being served
    device: Device
    settings: Settings
    caller: Caller
    components: Mapping[str, object]  # the app's components by name (kernel/components.py)

    def component(self, kind: type[C]) -> C:
        """The app's component of this class; Unsupported when the app serves none."""
        for component in self.components.values():
            if isinstance(component, kind):
                return component
        raise Unsupported(f"this server runs no {kind.__name__} component")

    def require(self, *capabilities: str) -> None:
        """Unsupported, with the device's hint, unless the device has every capability named;
        for a handler whose need depends on its params (e.g. a chat app's UI)."""
        for capability in capabilities:
            if capability not in self.device.capabilities:
                raise Unsupported(f"{self.name}: {missing_capability(self.device, capability)}")


@dataclass(slots=True)
class ActionContext(QueryContext):
    app_target: str | None
    request_id: str
    deadline: float  # loop.time() at which the call times out
    about: str = ""  # the spec's `describe` of the call, what an approver read


def missing_capability(device: Device, capability: str) -> str:
    return (
        f"this device ({device.kind}) lacks the {capability!r} capability: "
        f"{device.capability_hint(capability)}"
    )
