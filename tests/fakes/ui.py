"""Screens as accessibility node trees: the XML the uiautomator2 server and `uiautomator dump`
write, u2's UiSelector matching, and hit-testing a tap.

A screen is a list of window roots (the app, the status bar, the navigation bar, ...), drawn in
list order, so the last window is on top. The formats follow androidx.test.uiautomator's
AccessibilityNodeInfoDumper (u2, indented, with drawing-order/hint/display-id) and the older
platform dumper behind `uiautomator dump` (one line, attributes up to bounds).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

Bounds = tuple[int, int, int, int]


@dataclass
class UiNode:
    """One AccessibilityNodeInfo. `key` names an editable field in its screen's state; `action`
    is what a click does (dispatched by apps.py). Neither appears in any dump."""

    class_name: str = "android.widget.FrameLayout"
    text: str = ""
    resource_id: str = ""
    package: str = ""
    content_desc: str = ""
    bounds: Bounds = (0, 0, 0, 0)
    checkable: bool = False
    checked: bool = False
    clickable: bool = False
    enabled: bool = True
    focusable: bool = False
    focused: bool = False
    scrollable: bool = False
    long_clickable: bool = False
    password: bool = False
    selected: bool = False
    hint: str = ""
    editable: bool = False
    action: str = ""
    key: str = ""
    children: list[UiNode] = field(default_factory=list)

    @property
    def a11y_text(self) -> str:
        """What getText() reports: an empty EditText reports its hint (TextView's
        getTextForAccessibility), which is why u2's get_text can return placeholder text."""
        if self.editable and not self.text:
            return self.hint
        return self.text

    @property
    def center(self) -> tuple[int, int]:
        left, top, right, bottom = self.bounds
        return (left + right) // 2, (top + bottom) // 2

    def walk(self) -> Iterator[UiNode]:
        yield self
        for child in self.children:
            yield from child.walk()

    def contains(self, x: float, y: float) -> bool:
        left, top, right, bottom = self.bounds
        return left <= x < right and top <= y < bottom


def bounds_str(bounds: Bounds) -> str:
    return f"[{bounds[0]},{bounds[1]}][{bounds[2]},{bounds[3]}]"


def _b(value: bool) -> str:
    return "true" if value else "false"


def _escape(value: str) -> str:
    out = []
    for ch in value:
        if ch == "&":
            out.append("&amp;")
        elif ch == "<":
            out.append("&lt;")
        elif ch == ">":
            out.append("&gt;")
        elif ch == '"':
            out.append("&quot;")
        elif ord(ch) < 0x20:
            out.append(f"&#{ord(ch)};")
        else:
            out.append(ch)
    return "".join(out)


def _naf(node: UiNode) -> bool:
    """Not Accessibility Friendly: clickable and enabled with no text or description anywhere."""
    if node.class_name.endswith(("GridView", "GridLayout", "ListView", "TableLayout")):
        return False
    if not (node.clickable and node.enabled) or node.a11y_text or node.content_desc:
        return False
    return not any(n.a11y_text or n.content_desc for n in node.walk() if n is not node)


def _attrs(node: UiNode, index: int, *, modern: bool) -> str:
    pairs = [("NAF", "true")] if _naf(node) else []
    pairs += [
        ("index", str(index)),
        ("text", node.a11y_text),
        ("resource-id", node.resource_id),
        ("class", node.class_name),
        ("package", node.package),
        ("content-desc", node.content_desc),
        ("checkable", _b(node.checkable)),
        ("checked", _b(node.checked)),
        ("clickable", _b(node.clickable)),
        ("enabled", _b(node.enabled)),
        ("focusable", _b(node.focusable)),
        ("focused", _b(node.focused)),
        ("scrollable", _b(node.scrollable)),
        ("long-clickable", _b(node.long_clickable)),
        ("password", _b(node.password)),
        ("selected", _b(node.selected)),
    ]
    if modern:
        pairs += [
            ("visible-to-user", "true"),
            ("bounds", bounds_str(node.bounds)),
            ("drawing-order", str(index + 1)),
            ("hint", node.hint),
            ("display-id", "0"),
        ]
    else:
        pairs.append(("bounds", bounds_str(node.bounds)))
    return " ".join(f'{name}="{_escape(value)}"' for name, value in pairs)


def _compress(node: UiNode) -> list[UiNode]:
    """setCompressedLayoutHierarchy: layout-only nodes vanish and their children move up."""
    kids = [c for child in node.children for c in _compress(child)]
    boring = not (node.a11y_text or node.content_desc or node.resource_id or node.clickable)
    if boring and not node.scrollable and not node.editable and node.class_name.endswith("Layout"):
        return kids
    return [replace(node, children=kids)]


XML_HEAD = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>"


def dump_u2(
    windows: list[UiNode], *, rotation: int = 0, compressed: bool = False, max_depth: int = 50
) -> str:
    """dumpWindowHierarchy as the u2 server returns it (KXmlSerializer with indent-output)."""
    lines = [XML_HEAD, f'<hierarchy rotation="{rotation}">']

    def rec(node: UiNode, index: int, depth: int, level: int) -> None:
        pad = "  " * level
        kids = node.children if depth > 0 else []
        attrs = _attrs(node, index, modern=True)
        if not kids:
            lines.append(f"{pad}<node {attrs} />")
            return
        lines.append(f"{pad}<node {attrs}>")
        for i, child in enumerate(kids):
            rec(child, i, depth - 1, level + 1)
        lines.append(f"{pad}</node>")

    roots = [n for w in windows for n in (_compress(w) if compressed else [w])]
    for root in roots:
        rec(root, 0, max_depth, 1)
    if not roots:
        return XML_HEAD + "\r\n" + f'<hierarchy rotation="{rotation}" />'
    lines.append("</hierarchy>")
    return "\r\n".join(lines)


def dump_compact(window: UiNode, *, rotation: int = 0) -> str:
    """`uiautomator dump`: the active window only, on one line, attributes up to bounds."""
    parts: list[str] = [XML_HEAD, f'<hierarchy rotation="{rotation}">']

    def rec(node: UiNode, index: int) -> None:
        attrs = _attrs(node, index, modern=False)
        if not node.children:
            parts.append(f"<node {attrs} />")
            return
        parts.append(f"<node {attrs}>")
        for i, child in enumerate(node.children):
            rec(child, i)
        parts.append("</node>")

    rec(window, 0)
    parts.append("</hierarchy>")
    return "".join(parts)


_BOUNDS = re.compile(r"\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]")


def parse_hierarchy(xml: str) -> list[UiNode]:
    """Window roots from hierarchy XML (either dump format), for screens a test supplies."""
    root = ET.fromstring(xml.encode("utf-8"))

    def conv(el: ET.Element, path: str) -> UiNode:
        a = el.attrib
        m = _BOUNDS.fullmatch(a.get("bounds", "[0,0][0,0]"))
        bounds: Bounds = (int(m[1]), int(m[2]), int(m[3]), int(m[4])) if m else (0, 0, 0, 0)
        cls = a.get("class", "")
        node = UiNode(
            class_name=cls,
            text=a.get("text", ""),
            resource_id=a.get("resource-id", ""),
            package=a.get("package", ""),
            content_desc=a.get("content-desc", ""),
            bounds=bounds,
            checkable=a.get("checkable") == "true",
            checked=a.get("checked") == "true",
            clickable=a.get("clickable") == "true",
            enabled=a.get("enabled", "true") == "true",
            focusable=a.get("focusable") == "true",
            focused=a.get("focused") == "true",
            scrollable=a.get("scrollable") == "true",
            long_clickable=a.get("long-clickable") == "true",
            password=a.get("password") == "true",
            selected=a.get("selected") == "true",
            hint=a.get("hint", ""),
            editable="EditText" in cls,
        )
        if node.editable:
            node.key = node.resource_id or path
            if node.hint and node.text == node.hint:
                node.text = ""
        node.children = [conv(child, f"{path}/{i}") for i, child in enumerate(el.findall("node"))]
        return node

    return [conv(el, str(i)) for i, el in enumerate(root.findall("node"))]


# --- selectors ----------------------------------------------------------------------------

MASKS = {
    "text": 0x01,
    "textContains": 0x02,
    "textMatches": 0x04,
    "textStartsWith": 0x08,
    "className": 0x10,
    "classNameMatches": 0x20,
    "description": 0x40,
    "descriptionContains": 0x80,
    "descriptionMatches": 0x0100,
    "descriptionStartsWith": 0x0200,
    "checkable": 0x0400,
    "checked": 0x0800,
    "clickable": 0x1000,
    "longClickable": 0x2000,
    "scrollable": 0x4000,
    "enabled": 0x8000,
    "focusable": 0x010000,
    "focused": 0x020000,
    "selected": 0x040000,
    "packageName": 0x080000,
    "packageNameMatches": 0x100000,
    "resourceId": 0x200000,
    "resourceIdMatches": 0x400000,
    "index": 0x800000,
    "instance": 0x01000000,
}


def java_regex(pattern: str) -> str:
    """A java.util.regex pattern as Python's `re` reads it: `\\Q...\\E` quoting (which Python
    lacks) turned into escaped literals; the rest (lookaheads, classes) is the same in both."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("\\Q", i):
            end = pattern.find("\\E", i + 2)
            literal = pattern[i + 2 :] if end < 0 else pattern[i + 2 : end]
            out.append(re.escape(literal))
            i = len(pattern) if end < 0 else end + 2
        elif pattern[i] == "\\" and i + 1 < len(pattern):
            out.append(pattern[i : i + 2])
            i += 2
        else:
            out.append(pattern[i])
            i += 1
    return "".join(out)


def _full(pattern: Any, value: str) -> bool:
    try:
        return re.fullmatch(java_regex(str(pattern)), value, re.DOTALL) is not None
    except re.error:
        return False


def _matches(node: UiNode, sel: dict[str, Any], index: int) -> bool:
    mask = int(sel.get("mask", 0))
    text, desc = node.a11y_text, node.content_desc
    checks: dict[str, bool] = {}
    for name, bit in MASKS.items():
        if not mask & bit or name == "instance":
            continue
        want = sel.get(name)
        if name == "text":
            ok = text == want
        elif name == "textContains":
            ok = str(want) in text
        elif name == "textMatches":
            ok = _full(want, text)
        elif name == "textStartsWith":
            ok = text.startswith(str(want))
        elif name == "className":
            ok = node.class_name == want
        elif name == "classNameMatches":
            ok = _full(want, node.class_name)
        elif name == "description":
            ok = desc == want
        elif name == "descriptionContains":
            ok = str(want) in desc
        elif name == "descriptionMatches":
            ok = _full(want, desc)
        elif name == "descriptionStartsWith":
            ok = desc.startswith(str(want))
        elif name == "packageName":
            ok = node.package == want
        elif name == "packageNameMatches":
            ok = _full(want, node.package)
        elif name == "resourceId":
            ok = node.resource_id == want
        elif name == "resourceIdMatches":
            ok = _full(want, node.resource_id)
        elif name == "index":
            ok = index == int(str(want))
        else:
            attr = {"longClickable": "long_clickable"}.get(name, name)
            ok = bool(getattr(node, attr)) == bool(want)
        checks[name] = ok
    return all(checks.values())


def _candidates(roots: list[UiNode], sel: dict[str, Any]) -> list[UiNode]:
    found: list[UiNode] = []

    def rec(node: UiNode, index: int) -> None:
        if _matches(node, sel, index):
            found.append(node)
        for i, child in enumerate(node.children):
            rec(child, i)

    for root in roots:
        rec(root, 0)
    return found


def _with_parents(roots: list[UiNode]) -> dict[int, UiNode]:
    parents: dict[int, UiNode] = {}
    for root in roots:
        for node in root.walk():
            for child in node.children:
                parents[id(child)] = node
    return parents


def find(roots: list[UiNode], sel: dict[str, Any]) -> list[UiNode]:
    """All nodes u2's Selector picks, in document order (after `instance`, a list of one)."""
    matches = _candidates(roots, sel)
    relations = list(sel.get("childOrSibling") or [])
    subs = list(sel.get("childOrSiblingSelector") or [])
    parents = _with_parents(roots)
    for relation, sub in zip(relations, subs, strict=False):
        scopes: list[UiNode] = []
        for node in matches:
            if relation == "child":
                scopes.extend(node.children)
            else:
                parent = parents.get(id(node))
                scopes.extend(c for c in (parent.children if parent else []) if c is not node)
        seen: set[int] = set()
        next_matches: list[UiNode] = []
        for candidate in _candidates(scopes, sub):
            if id(candidate) not in seen:
                seen.add(id(candidate))
                next_matches.append(candidate)
        matches = next_matches
        if int(sub.get("mask", 0)) & MASKS["instance"]:
            matches = _nth(matches, int(sub.get("instance", 0)))
    if int(sel.get("mask", 0)) & MASKS["instance"] and not relations:
        matches = _nth(matches, int(sel.get("instance", 0)))
    return matches


def _nth(nodes: list[UiNode], n: int) -> list[UiNode]:
    return [nodes[n]] if 0 <= n < len(nodes) else []


def describe_selector(sel: dict[str, Any]) -> str:
    """UiSelector.toString(), e.g. UiSelector[TEXT=Send, RESOURCE_ID=...]."""
    names = {
        "text": "TEXT",
        "textContains": "CONTAINS_TEXT",
        "textMatches": "TEXT_REGEX",
        "textStartsWith": "START_TEXT",
        "className": "CLASS",
        "classNameMatches": "CLASS_REGEX",
        "description": "DESCRIPTION",
        "descriptionContains": "CONTAINS_DESCRIPTION",
        "descriptionMatches": "DESCRIPTION_REGEX",
        "descriptionStartsWith": "START_DESCRIPTION",
        "packageName": "PACKAGE_NAME",
        "resourceId": "RESOURCE_ID",
        "resourceIdMatches": "RESOURCE_ID_REGEX",
        "index": "INDEX",
        "instance": "INSTANCE",
    }
    mask = int(sel.get("mask", 0))
    parts = [f"{label}={sel.get(key)}" for key, label in names.items() if mask & MASKS[key]] + [
        f"{key.upper()}={_b(bool(sel.get(key)))}" for key in MASKS if key not in names and mask & MASKS[key]
    ]
    return "UiSelector[" + ", ".join(parts) + "]"


def hit(windows: list[UiNode], x: float, y: float) -> UiNode | None:
    """The view that consumes a tap at (x, y): the innermost clickable (or editable) node under
    the point in the topmost window that contains it."""
    for window in reversed(windows):
        if not window.contains(x, y):
            continue
        best: UiNode | None = None

        def rec(node: UiNode) -> None:
            nonlocal best
            if not node.contains(x, y):
                return
            if (node.clickable or node.editable) and node.enabled:
                best = node
            for child in node.children:
                rec(child)

        rec(window)
        return best
    return None


def obj_info(node: UiNode) -> dict[str, object]:
    """ObjInfo as Jackson serialises it for a UiObject2 (nulls for empty strings)."""
    left, top, right, bottom = node.bounds
    rect = {"bottom": bottom, "left": left, "right": right, "top": top}
    return {
        "bounds": rect,
        "childCount": len(node.children),
        "className": node.class_name,
        "contentDescription": node.content_desc or None,
        "packageName": node.package,
        "resourceName": node.resource_id or None,
        "text": node.a11y_text or None,
        "visibleBounds": dict(rect),
        "checkable": node.checkable,
        "checked": node.checked,
        "clickable": node.clickable,
        "enabled": node.enabled,
        "focusable": node.focusable,
        "focused": node.focused,
        "longClickable": node.long_clickable,
        "scrollable": node.scrollable,
        "selected": node.selected,
    }
