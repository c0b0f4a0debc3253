"""The runtime's own links to the phone, and the rule that no action cuts them.

Turning Wi-Fi off, or airplane mode on or off (which restarts the radios), while the runtime
reaches the phone over its Wi-Fi would leave nobody able to turn it back: the agent loses the
phone and the owner's Iris app loses the runtime. Those links are named by whoever holds them:
the device (`Device.network_links`: adb over TCP, Termux's own adb over wireless debugging) and
any component that `HoldsLinks` (the Iris gateway: an app connected from a non-loopback address).
A call that would cut one is refused before anything happens, before any hold, unless the owner
set `allow_cutting_link`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from phoneuse_runtime.kernel.errors import PermissionDenied

if TYPE_CHECKING:
    from phoneuse_runtime.device.base import Device


@runtime_checkable
class HoldsLinks(Protocol):
    """A component whose connections to its peers go over the network the phone may cut."""

    def network_links(self) -> list[str]: ...


def own_links(device: Device, components: Iterable[object]) -> list[str]:
    """Every link of the runtime's that goes over the phone's Wi-Fi, named, the device's first."""
    links = list(device.network_links())
    for component in components:
        if isinstance(component, HoldsLinks):
            links += component.network_links()
    return links


def refuse_cutting(what: str, links: list[str], *, allowed: bool) -> None:
    """PERMISSION_DENIED naming the links `what` would cut, unless there are none or the owner
    allowed it (`allow_cutting_link`)."""
    if not links or allowed:
        return
    raise PermissionDenied(
        f"{what} would cut the runtime's own link to the phone: {'; '.join(links)}. Change it on "
        "the phone yourself, or let the agent do it with allow_cutting_link = true in the settings",
        details={"links": links},
    )
