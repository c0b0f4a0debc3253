"""Element refs: short names for on-screen elements that stay the same across dumps of a screen.

A ref is 4 characters (a letter, then three of `a-z0-9`) taken from a hash of the element's
identity, which holds no index and no position, so a row appearing above an element does not
change its ref:

- its window's package;
- the path of (class, resource-id) of its ancestors, and its own class and resource-id;
- its text and content description (a text field's hint instead of its text, which typing
  changes); an element with neither is named by the first texts of what it holds (a row by its
  lines), and one that holds none either by the name of its nearest named ancestor (a row's
  icon by its row);
- when several elements of one dump have the same identity, the n-th of them in document order
  (n > 0) adds n to it.

Acting on a ref never taps a stored position. An action (TAP, LONG_PRESS, TYPE_TEXT's and
CLEAR_TEXT's field) on a ref alone, whose element the last screen given to the caller (DUMP_UI,
APP_STATE's screen, a settled action's) picked alone by its text, description, resource-id,
class and package, acts with that selector (`Device.act_on`): one device round trip where the
phone resolves selectors (adb: a uiautomator2 JSON-RPC batch, `objInfo` and `click` with that
selector), so an element that moved is acted on where it is now, and one that is gone is not
acted on at all (ELEMENT_NOT_FOUND). Every other use of a ref (a ref the last screen did not
hold, an element its attributes do not pick alone) reads the screen afresh and resolves the ref
on it: an element that is gone, or whose identity changed (its text, say), answers
ELEMENT_NOT_FOUND.
"""

from __future__ import annotations

import hashlib
import re

from phoneuse_runtime.screen.ui import UiNode

_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"
REF_PATTERN = re.compile(r"^[a-z][a-z0-9]{3}$")
# Texts of what an unnamed element holds that go into its identity.
_CONTENT_TEXTS = 3


def _short_class(node: UiNode) -> str:
    return node.class_name.rsplit(".", 1)[-1]


def _short_id(node: UiNode) -> str:
    return node.resource_id.split(":id/", 1)[-1]


def _own_name(node: UiNode) -> list[str]:
    text = node.hint if node.editable else node.text
    return [text, node.description] if text or node.description else []


def _content_name(node: UiNode) -> list[str]:
    out: list[str] = []
    stack = list(reversed(node.children))
    while stack and len(out) < _CONTENT_TEXTS:
        child = stack.pop()
        label = child.text if not child.editable else child.hint
        label = label or child.description
        if label:
            out.append(label)
        stack.extend(reversed(child.children))
    return out


def _code(digest: bytes) -> str:
    value = int.from_bytes(digest[:8], "big")
    chars = [_ALPHABET[value % 26]]
    value //= 26
    for _ in range(3):
        chars.append(_ALPHABET[value % 36])
        value //= 36
    return "".join(chars)


def element_refs(root: UiNode) -> dict[int, str]:
    """Every node's ref, keyed by `id(node)`, in one pass over the tree."""
    refs: dict[int, str] = {}
    seen: dict[str, int] = {}
    taken: set[str] = set()
    windows = root.children if root.class_name == "hierarchy" else [root]
    for window in windows:
        stack: list[tuple[UiNode, str, list[str]]] = [(window, window.package, [])]
        while stack:
            node, path, context = stack.pop()
            here = f"{path}/{_short_class(node)}#{_short_id(node)}"
            name = _own_name(node) or _content_name(node)
            # Nameless and holding no text (a row's icon): named by the nearest ancestor that is.
            shown_name = name or ["\x1d", *context]
            identity = here + "\x1f" + "\x1e".join(shown_name)
            count = seen.get(identity, 0)
            seen[identity] = count + 1
            key = identity if count == 0 else f"{identity}\x1d{count}"
            ref = _code(hashlib.blake2b(key.encode(), digest_size=8).digest())
            salt = 0
            while ref in taken:  # a collision between two identities: rare, settled in document order
                salt += 1
                ref = _code(hashlib.blake2b(f"{key}\x1c{salt}".encode(), digest_size=8).digest())
            taken.add(ref)
            refs[id(node)] = ref
            stack.extend((child, here, name or context) for child in reversed(node.children))
    return refs


def find_ref(root: UiNode, ref: str) -> UiNode | None:
    """The element of `root` whose ref is `ref`, or None."""
    refs = element_refs(root)
    return next((node for node in root.walk() if refs.get(id(node)) == ref), None)
