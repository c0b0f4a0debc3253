"""The element an action acted on, as its result names it: what names it, not all it is.

TAP, LONG_PRESS (`element`), TYPE_TEXT and CLEAR_TEXT (`field`) say which element they acted on.
A model reads that on every action, so it gets what DUMP_UI's compact form names an element by:
its ref, its text and description, and its resource-id only where the compact form writes `#id`
(an element with no text or description, a text field), without the `package:id/` prefix when
the id is its own app's. Empty fields are left out. Where it is, `x`/`y` say where the finger
went; DUMP_UI `format=json` (and WAIT_FOR's `element`) give an element whole.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from phoneuse_runtime.device.base import Device
from phoneuse_runtime.screen.refs import element_refs
from phoneuse_runtime.screen.ui import UiNode


def _empty(value: object) -> bool:
    return not value


class Target(BaseModel):
    """The element acted on, named as DUMP_UI's compact form names it (empty fields left out)."""

    model_config = ConfigDict(defer_build=True)
    ref: str = Field(
        default="",
        exclude_if=_empty,
        description="its ref on the screen last given to the caller (before the action), when it was on it",
    )
    text: str = Field(default="", exclude_if=_empty, description="its text (a field's, after the action)")
    description: str = Field(default="", exclude_if=_empty, description="its content description")
    resource_id: str = Field(
        default="",
        exclude_if=_empty,
        description="its resource-id where it names it (no text or description; a text field), without "
        "`package:id/` when the id is its own app's (`resource_id=` takes it so)",
    )


def short_resource_id(node: UiNode) -> str:
    """`com.android.mms:id/conversation_name` -> `conversation_name` for an element of
    com.android.mms; another package's id (`android:id/switch_widget`) whole."""
    own = node.package + ":id/"
    if node.package and node.resource_id.startswith(own):
        return node.resource_id[len(own) :]
    return node.resource_id


def named_id(node: UiNode) -> str:
    """The id where the compact form writes `#id`: an element with no text or description (it is
    then its only name) and a text field; "" otherwise."""
    if node.editable or not (node.text or node.description):
        return short_resource_id(node)
    return ""


def _same(a: UiNode, b: UiNode) -> bool:
    return (a.resource_id, a.description, a.class_name, a.package) == (
        b.resource_id,
        b.description,
        b.class_name,
        b.package,
    ) and (a.text == b.text or a.editable)


def ref_of(device: Device, node: UiNode, *, given: str | None = None) -> str:
    """The element's ref on the screen the device last gave a caller: the one the caller gave,
    else that screen's element with the same id, description, class and package (and text, but
    for a field, whose text typing changes), the one at the same bounds first; "" when none."""
    if given:
        return given
    screen = device.refs.screen
    if screen is None:
        return ""
    matches = [n for n in screen.walk() if _same(n, node)]
    if not matches:
        return ""
    best = next((n for n in matches if n.bounds == node.bounds), matches[0])
    return element_refs(screen).get(id(best), "")


def target_of(device: Device, node: UiNode, *, ref: str | None = None) -> Target:
    """`node` as the action's result names it."""
    return Target(
        ref=ref_of(device, node, given=ref),
        text=node.text,
        description=node.description,
        resource_id=named_id(node),
    )
