"""Selectors: finding elements in the UI tree by their attributes or by a ref.

Every backend produces the same XML, so locating an element is done once, here, and behaves
the same on every device (a backend that resolves selectors on the phone does so to the same rules).
"""

from __future__ import annotations

from dataclasses import dataclass

from phoneuse_runtime.kernel.errors import ElementNotFound
from phoneuse_runtime.kernel.limits import clip
from phoneuse_runtime.screen.refs import find_ref
from phoneuse_runtime.screen.ui import UiNode


@dataclass(frozen=True)
class Selector:
    """Finds elements by their attributes; `index` picks the n-th match (0-based) in document order."""

    text: str | None = None
    resource_id: str | None = None
    description: str | None = None
    class_name: str | None = None
    index: int | None = None
    ref: str | None = None  # DUMP_UI's ref (refs.py), resolved against the dump it is matched on
    package: str | None = None  # the element's app (not a param: refs.py's one-round-trip taps set it)

    def is_empty(self) -> bool:
        return not (
            self.text or self.resource_id or self.description or self.class_name or self.ref or self.package
        )

    def describe(self) -> str:
        parts = [  # what the caller sent, quoted short (clip): errors echo it
            f"{name}={clip(value) if isinstance(value, str) else repr(value)}"
            for name, value in (
                ("text", self.text),
                ("resource_id", self.resource_id),
                ("description", self.description),
                ("class_name", self.class_name),
                ("index", self.index),
                ("ref", self.ref),
                ("package", self.package),
            )
            if value is not None
        ]
        return ", ".join(parts) or "(empty selector)"

    def matches(self, node: UiNode) -> bool:
        if self.text is not None and node.text != self.text:
            return False
        if self.description is not None and node.description != self.description:
            return False
        if self.package is not None and node.package != self.package:
            return False
        if self.resource_id is not None and not (
            node.resource_id == self.resource_id or node.resource_id.endswith(":id/" + self.resource_id)
        ):
            return False
        return self.class_name is None or (
            node.class_name == self.class_name or node.class_name.rsplit(".", 1)[-1] == self.class_name
        )

    def find_all(self, root: UiNode) -> list[UiNode]:
        if self.ref is not None:
            node = find_ref(root, self.ref)
            return [node] if node is not None and self.matches(node) else []
        return [node for node in root.walk() if node.class_name != "hierarchy" and self.matches(node)]

    def find(self, root: UiNode) -> UiNode | None:
        """The match at `index` (default 0), or None."""
        found = self.find_all(root)
        position = self.index or 0
        return found[position] if position < len(found) else None

    def require(self, root: UiNode) -> UiNode:
        node = self.find(root)
        if node is None:
            count = len(self.find_all(root))
            extra = f" ({count} matched, index out of range)" if count else ""
            raise ElementNotFound(f"no element matches {self.describe()}{extra}")
        return node
