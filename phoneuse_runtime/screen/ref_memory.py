"""The refs of the last screen a caller was given, and the selector that picks each alone.

An action on a ref alone, whose element that screen picked alone by its attributes, acts with
that selector in one device round trip (see refs.py for the whole rule).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from phoneuse_runtime.screen.refs import element_refs
from phoneuse_runtime.screen.selector import Selector
from phoneuse_runtime.screen.stale import SeenScreen, seen_screen
from phoneuse_runtime.screen.ui import UiNode


@dataclass(frozen=True)
class RefTarget:
    """What the last screen showed under a ref: the element, and the selector that picked it alone
    on that screen (None when none did), for a tap the phone resolves in the same round trip."""

    node: UiNode
    selector: Selector | None


def _alone(root: UiNode, node: UiNode) -> Selector | None:
    """The element's text, description, resource-id, class and package as a selector, when that
    picks `node` alone in `root` and names more than its class."""
    if not (node.text or node.description or node.resource_id) or node.editable:
        return None  # a field's text changes as it is typed into
    selector = Selector(
        text=node.text or None,
        description=node.description or None,
        resource_id=node.resource_id or None,
        class_name=node.class_name or None,
        package=node.package or None,
    )
    found = selector.find_all(root)
    return selector if len(found) == 1 and found[0] is node else None


# The callers whose last screen is kept (for STALE_SCREEN, stale.py), the most recent.
SEEN_CALLERS_MAX = 64


class RefMemory:
    """The refs of the last screen a caller was given (DUMP_UI, APP_STATE's screen), per device;
    and, per caller (its principal), the windows of the last screen that caller was given."""

    def __init__(self, on_screen: Callable[[UiNode], None] = lambda _root: None) -> None:
        self._root: UiNode | None = None
        self._refs: dict[str, UiNode] = {}
        self._seen: OrderedDict[str, SeenScreen] = OrderedDict()
        self._on_screen = on_screen  # the device's look at each screen given (its dialogs)

    def remember(self, root: UiNode, *, by: str) -> None:
        """`root` was given to the caller `by` (its principal)."""
        refs = element_refs(root)
        self._root = root
        self._refs = {refs[id(node)]: node for node in root.walk() if id(node) in refs}
        self._seen[by] = seen_screen(root)
        self._seen.move_to_end(by)
        while len(self._seen) > SEEN_CALLERS_MAX:
            self._seen.popitem(last=False)
        self._on_screen(root)

    def seen_by(self, caller: str) -> SeenScreen | None:
        """The last screen `caller` was given, or None before its first."""
        return self._seen.get(caller)

    @property
    def screen(self) -> UiNode | None:
        """The last screen given to a caller, or None before the first."""
        return self._root

    def get(self, ref: str) -> RefTarget | None:
        node = self._refs.get(ref)
        if node is None or self._root is None:
            return None
        return RefTarget(node=node, selector=_alone(self._root, node))
