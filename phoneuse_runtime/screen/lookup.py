"""Picking an element on the screen: the selector params handlers share, the screen read, the
lookup of one element, and the element as a result names it.

Third-party handlers may use these too; they depend only on the `Device` primitives.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from phoneuse_runtime.device.base import Device
from phoneuse_runtime.kernel.errors import InvalidParams
from phoneuse_runtime.kernel.params import Params
from phoneuse_runtime.screen.selector import Selector
from phoneuse_runtime.screen.ui import UiNode, element_dict, parse_hierarchy


class SelectorFields(Params):
    """The fields that pick an on-screen element besides its text, and the one way to build a
    `Selector` from params; `index` chooses among several matches (0-based)."""

    resource_id: str | None = None
    description: str | None = None
    class_name: str | None = None
    index: int | None = Field(default=None, ge=0)
    ref: str | None = Field(
        default=None,
        pattern=r"^[a-z][a-z0-9]{3}$",
        description="an element's ref from DUMP_UI's compact form; resolved on a fresh read of the "
        "screen, ELEMENT_NOT_FOUND when that element is gone",
    )

    def selector_text(self) -> str | None:
        """The text the element shows, from whichever field a subclass keeps it in."""
        return None

    def selector(self) -> Selector:
        return Selector(
            text=self.selector_text(),
            resource_id=self.resource_id,
            description=self.description,
            class_name=self.class_name,
            index=self.index,
            ref=self.ref,
        )


class SelectorParams(SelectorFields):
    """Picks an on-screen element by its text or the other selector fields."""

    text: str | None = None
    wait_ms: int = Field(default=0, ge=0, description="keep looking this long for the element before failing")

    def selector_text(self) -> str | None:
        return self.text


async def screen(device: Device) -> UiNode:
    return parse_hierarchy(await device.dump_hierarchy())


async def find_element(
    device: Device, selector: Selector, *, wait_ms: int, interval_ms: int | None = None
) -> UiNode:
    """The element, looked for up to `wait_ms` by the device itself (`Device.find`: one round trip
    where the backend resolves selectors on the phone); ElementNotFound after that, with the
    precise reason read from one last dump. `interval_ms` is no longer used: a device that must
    poll does so at its own `find_poll_ms` (the server's wait_poll_ms)."""
    if selector.is_empty():
        raise InvalidParams("give a selector: ref, text, resource_id, description or class_name")
    node = await device.find(selector, timeout_ms=wait_ms)
    if node is None:
        # Raises with the reason ("N matched, index out of range"), or finds what just appeared.
        node = selector.require(await screen(device))
    return node


class Element(BaseModel):
    """An on-screen element; `bounds` is [left, top, right, bottom] in screen pixels."""

    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True, defer_build=True)
    text: str
    resource_id: str
    description: str
    class_: str = Field(alias="class")
    package: str
    bounds: list[int]
    clickable: bool
    focused: bool
    enabled: bool
    checked: bool
    scrollable: bool

    @classmethod
    def of(cls, node: UiNode) -> Element:
        return cls.model_validate(element_dict(node))
