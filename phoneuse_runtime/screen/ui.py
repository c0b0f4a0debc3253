"""The on-screen UI tree: parsing uiautomator's hierarchy dump, writing it back, and a compact view.

Every backend produces the same XML (uiautomator's `dumpWindowHierarchy` format), so
locating an element is done once, here, and behaves the same on every device.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from phoneuse_runtime.kernel.errors import InvalidParams
from phoneuse_runtime.kernel.limits import MAX_UI_DEPTH

if TYPE_CHECKING:
    from xml.etree import ElementTree

_BOUNDS = re.compile(r"\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]")

Bounds = tuple[int, int, int, int]


@dataclass
class UiNode:
    """One `<node>` of a hierarchy dump."""

    text: str = ""
    resource_id: str = ""
    class_name: str = ""
    package: str = ""
    description: str = ""
    hint: str = ""
    bounds: Bounds = (0, 0, 0, 0)
    clickable: bool = False
    long_clickable: bool = False
    focusable: bool = False
    focused: bool = False
    enabled: bool = True
    checkable: bool = False
    checked: bool = False
    scrollable: bool = False
    selected: bool = False
    password: bool = False
    visible: bool = True  # uiautomator2's `visible-to-user`; plain uiautomator lists only visible nodes
    display: int = 0  # uiautomator2's `display-id`
    index: int = 0
    children: list[UiNode] = field(default_factory=list)

    @property
    def center(self) -> tuple[int, int]:
        left, top, right, bottom = self.bounds
        return (left + right) // 2, (top + bottom) // 2

    @property
    def editable(self) -> bool:
        """A text field: EditText, or AutoCompleteTextView and its subclasses, which extend EditText."""
        return self.class_name.endswith(("EditText", "AutoCompleteTextView"))

    def walk(self) -> Iterator[UiNode]:
        """This node and all below it, in document order."""
        yield self
        for child in self.children:
            yield from child.walk()

    def contains(self, x: int, y: int) -> bool:
        left, top, right, bottom = self.bounds
        return left <= x < right and top <= y < bottom


def _flag(attrs: dict[str, str], name: str) -> bool:
    return attrs.get(name, "false") == "true"


def parse_bounds(text: str) -> Bounds:
    match = _BOUNDS.fullmatch(text.strip())
    if not match:
        raise ValueError(f"bad bounds {text!r}")
    left, top, right, bottom = (int(g) for g in match.groups())
    return left, top, right, bottom


def _node_from(elem: ElementTree.Element) -> UiNode:
    a = elem.attrib
    node = UiNode(
        text=a.get("text", ""),
        resource_id=a.get("resource-id", ""),
        class_name=a.get("class", ""),
        package=a.get("package", ""),
        description=a.get("content-desc", ""),
        hint=a.get("hint", ""),
        bounds=parse_bounds(a.get("bounds", "[0,0][0,0]")),
        clickable=_flag(a, "clickable"),
        long_clickable=_flag(a, "long-clickable"),
        focusable=_flag(a, "focusable"),
        focused=_flag(a, "focused"),
        enabled=a.get("enabled", "true") == "true",
        checkable=_flag(a, "checkable"),
        checked=_flag(a, "checked"),
        scrollable=_flag(a, "scrollable"),
        selected=_flag(a, "selected"),
        password=_flag(a, "password"),
        visible=a.get("visible-to-user", "true") != "false",
        display=int(a.get("display-id", "0") or 0),
        index=int(a.get("index", "0") or 0),
    )
    node.children = [_node_from(child) for child in elem if child.tag == "node"]
    return node


def _deeper_than(root: ElementTree.Element, limit: int) -> bool:
    """Whether `<node>`s nest more than `limit` levels under `root`, found without recursing."""
    stack = [(root, 0)]
    while stack:
        elem, depth = stack.pop()
        if elem.tag == "node":
            depth += 1
            if depth > limit:
                return True
        stack.extend((child, depth) for child in elem)
    return False


def _top_nodes(root: ElementTree.Element) -> list[ElementTree.Element]:
    """The windows: the `<node>`s under the root, also those a wrapper holds (one `<hierarchy>`
    or `<display>` per display, as some dumpers of several displays write)."""
    out: list[ElementTree.Element] = []
    for child in root:
        if child.tag == "node":
            out.append(child)
        else:
            out.extend(_top_nodes(child))
    return out


def parse_hierarchy(xml: str) -> UiNode:
    """Parses a uiautomator dump into a single root (a synthetic one when the dump has several windows)."""
    if "<!DOCTYPE" in xml or "<!ENTITY" in xml:
        # uiautomator never writes these; refusing them rules out entity-expansion attacks.
        raise InvalidParams("not a uiautomator hierarchy: DOCTYPE and ENTITY declarations are not allowed")
    from xml.etree import ElementTree  # loaded on first parse: it is not needed to serve

    try:
        root = ElementTree.fromstring(xml.strip())  # noqa: S314 (no DTDs reach the parser, see above)
    except ElementTree.ParseError as exc:
        raise InvalidParams(f"not a uiautomator hierarchy: {exc}") from exc
    if root.tag not in ("node", "hierarchy"):
        raise InvalidParams(f"not a uiautomator hierarchy: root element is <{root.tag}>")
    if _deeper_than(root, MAX_UI_DEPTH):  # before anything here recurses through it
        raise InvalidParams(f"not a uiautomator hierarchy: nodes nested deeper than {MAX_UI_DEPTH} levels")
    try:
        if root.tag == "node":
            return _node_from(root)
        windows = [_node_from(child) for child in _top_nodes(root)]
    except ValueError as exc:  # bad bounds or index
        raise InvalidParams(f"not a uiautomator hierarchy: {exc}") from exc
    if len(windows) == 1:
        return windows[0]
    right = max((w.bounds[2] for w in windows), default=0)
    bottom = max((w.bounds[3] for w in windows), default=0)
    return UiNode(class_name="hierarchy", bounds=(0, 0, right, bottom), children=windows)


def _b(value: bool) -> str:
    return "true" if value else "false"


# Characters XML cannot carry; uiautomator's dumper writes "." for them (stripInvalidXMLChars).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ufdd0-\ufddf\ufffe\uffff]")


def _esc(value: str) -> str:
    # Whitespace other than a space is written as a character reference, as Android's
    # serializer does: a parser turns literal tabs and newlines in an attribute into spaces.
    return (
        _NOT_XML.sub(".", value)
        .replace("&", "&amp;")
        .replace('"', "&quot;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace("\n", "&#10;")
        .replace("\r", "&#13;")
        .replace("\t", "&#9;")
    )


def _node_xml(node: UiNode, out: list[str], index: int) -> None:
    left, top, right, bottom = node.bounds
    out.append(
        f'<node index="{index}" text="{_esc(node.text)}" resource-id="{_esc(node.resource_id)}" '
        f'class="{_esc(node.class_name)}" package="{_esc(node.package)}" '
        f'content-desc="{_esc(node.description)}" checkable="{_b(node.checkable)}" '
        f'checked="{_b(node.checked)}" clickable="{_b(node.clickable)}" enabled="{_b(node.enabled)}" '
        f'focusable="{_b(node.focusable)}" focused="{_b(node.focused)}" '
        f'scrollable="{_b(node.scrollable)}" long-clickable="{_b(node.long_clickable)}" '
        f'password="{_b(node.password)}" selected="{_b(node.selected)}" '
        f'bounds="[{left},{top}][{right},{bottom}]" hint="{_esc(node.hint)}"'
    )
    if not node.children:
        out.append(" />")
        return
    out.append(">")
    for i, child in enumerate(node.children):
        _node_xml(child, out, i)
    out.append("</node>")


def to_hierarchy_xml(root: UiNode, *, rotation: int = 0) -> str:
    """Serialises a tree the way uiautomator's dumper writes it (on API 26+, with each node's `hint`)."""
    out = [f"<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"{rotation}\">"]
    windows = root.children if root.class_name == "hierarchy" else [root]
    for i, window in enumerate(windows):
        _node_xml(window, out, i)
    out.append("</hierarchy>")
    return "".join(out)


SYSTEM_UI = "com.android.systemui"


def front_package(root: UiNode) -> str:
    """The app on screen: System UI only when nothing else is shown (the shade, the lock screen)."""
    packages = [n.package for n in root.walk() if n.package]
    return next((p for p in packages if p != SYSTEM_UI), packages[0] if packages else "")


def focused_node(root: UiNode) -> UiNode | None:
    return next((node for node in root.walk() if node.focused and node.editable), None)


def _interesting(node: UiNode) -> bool:
    return bool(
        node.text
        or node.description
        or node.resource_id
        or node.clickable
        or node.focusable
        or node.scrollable
        or node.checkable
    )


def element_dict(node: UiNode) -> dict[str, object]:
    """One element as DUMP_UI and action results describe it."""
    return {
        "text": node.text,
        "resource_id": node.resource_id,
        "description": node.description,
        "class": node.class_name,
        "package": node.package,
        "bounds": list(node.bounds),
        "clickable": node.clickable,
        "focused": node.focused,
        "enabled": node.enabled,
        "checked": node.checked,
        "scrollable": node.scrollable,
    }


def compact_elements(root: UiNode) -> list[dict[str, object]]:
    """The elements an agent cares about, without layout-only containers."""
    return [
        element_dict(node) for node in root.walk() if node.class_name != "hierarchy" and _interesting(node)
    ]


def fingerprint(root: UiNode) -> str:
    """A short digest that changes whenever anything visible on the screen changes."""
    digest = hashlib.sha256()
    for node in root.walk():
        digest.update(
            "\x1f".join(
                (
                    node.class_name,
                    node.package,
                    node.text,
                    node.resource_id,
                    node.description,
                    repr(node.bounds),
                    _b(node.focused),
                    _b(node.checked),
                    _b(node.selected),
                    _b(node.enabled),
                )
            ).encode()
        )
        digest.update(b"\x1e")
    return digest.hexdigest()[:16]
