"""The screen as a model reads it: one short line per element a person could see or act on.

DUMP_UI's default answer (and APP_STATE's `include_ui`). Each line is

    <indent><ref> <role>[ "<label>"...][ hint="<hint>"][ #<id>] @<x>,<y>[ <state>...]

- `ref`: the element's stable ref (`refs.py`), handed back as `ref=` to TAP and every action
  that takes a selector.
- `role`: what the element is, from its class and flags (ROLES below).
- labels: the element's text, then its content description, then the texts and descriptions of
  the plain elements folded into it (a tappable row carries its own lines of text), less those
  another label of the line contains; each one in
  double quotes, with `\\`, `"`, newlines, carriage returns and tabs escaped as `\\\\`, `\\"`,
  `\\n`, `\\r`, `\\t`, everything else as the app wrote it (emoji, CJK, Arabic, decoded entities).
- `hint="..."`: an empty text field's hint.
- `#id`: the resource-id without its `package:id/` prefix, shown when the element has no label
  (then it is its only name) and for text fields.
- `@x,y`: the element's centre in screen pixels (`TAP x=.. y=..` taps it).
- states, only those that are true: checked, selected, focused, disabled, scrollable, password,
  opaque (a web page or a drawn surface whose content the tree does not hold: `opaque` below).

Indentation (two spaces a level) shows nesting among listed elements only; containers that carry
nothing (no label, not actionable) are folded away. A dump of several windows (uiautomator2's, with
`display-id`) starts each window with a line `== <package>` (and ` display=<n>` off display 0).
"""

from __future__ import annotations

from dataclasses import dataclass

from phoneuse_runtime.screen.refs import __doc__ as _refs_doc
from phoneuse_runtime.screen.refs import element_refs
from phoneuse_runtime.screen.ui import UiNode

ROLES: dict[str, str] = {
    "Button": "button",
    "ImageButton": "button",
    "MaterialButton": "button",
    "AppCompatButton": "button",
    "FloatingActionButton": "button",
    "ExtendedFloatingActionButton": "button",
    "EditText": "input",
    "AutoCompleteTextView": "input",
    "MultiAutoCompleteTextView": "input",
    "TextInputEditText": "input",
    "AppCompatEditText": "input",
    "SearchAutoComplete": "input",
    "CheckBox": "checkbox",
    "AppCompatCheckBox": "checkbox",
    "MaterialCheckBox": "checkbox",
    "CheckedTextView": "checkbox",
    "Switch": "switch",
    "SwitchCompat": "switch",
    "SwitchMaterial": "switch",
    "MaterialSwitch": "switch",
    "ToggleButton": "switch",
    "RadioButton": "radio",
    "AppCompatRadioButton": "radio",
    "MaterialRadioButton": "radio",
    "ImageView": "image",
    "AppCompatImageView": "image",
    "TextView": "text",
    "AppCompatTextView": "text",
    "MaterialTextView": "text",
    "RecyclerView": "list",
    "ListView": "list",
    "GridView": "list",
    "ScrollView": "list",
    "HorizontalScrollView": "list",
    "NestedScrollView": "list",
    "AbsListView": "list",
    "ViewPager": "pager",
    "ViewPager2": "pager",
    "WebView": "web",
    "SurfaceView": "surface",
    "GLSurfaceView": "surface",
    "TextureView": "surface",
    "VideoView": "surface",
    "FlutterView": "surface",
    "FlutterSurfaceView": "surface",
    "FlutterTextureView": "surface",
    "SeekBar": "slider",
    "RatingBar": "slider",
    "ProgressBar": "progress",
    "Spinner": "dropdown",
    "TabWidget": "tabs",
    "TabLayout": "tabs",
    "TabView": "tab",
    "Tab": "tab",
}

# A tappable element folds in at most this many labels of plain elements inside it; past that it
# is a container (a card, a page) whose parts get their own lines.
MAX_FOLDED = 4

DEFAULT_MAX_ELEMENTS = 150
REFS_DOC = (_refs_doc or "").split("\n\n", 1)[1].strip()

STATES = ("checked", "selected", "focused", "disabled", "scrollable", "password", "opaque")

# The roles whose content an app draws itself: a web page, a game's or a video's surface, a Flutter
# view. With nothing below them in the tree (a WebView whose page exposes no accessibility nodes,
# a Flutter app without semantics, any game) the screen's content is only in its picture.
OPAQUE_ROLES = ("web", "surface")


def short_class(node: UiNode) -> str:
    return node.class_name.rsplit(".", 1)[-1].rsplit("$", 1)[-1]


def short_id(resource_id: str) -> str:
    """`com.app:id/send` -> `send`."""
    return resource_id.split(":id/", 1)[-1]


def role(node: UiNode) -> str:
    """What the element is to a person, from its class and flags."""
    name = short_class(node)
    found = ROLES.get(name)
    if found is None:
        if node.editable:
            found = "input"
        elif name.endswith("Button"):
            found = "button"
        elif "Switch" in name:
            found = "switch"
        elif name.endswith("CheckBox"):
            found = "checkbox"
        elif name.endswith(("RecyclerView", "ListView", "ScrollView", "GridView")):
            found = "list"
        elif name.endswith("ImageView"):
            found = "image"
        elif name.endswith("TextView"):
            found = "text"
        elif name.endswith("Tab") or name.endswith("TabView"):
            found = "tab"
        elif name.endswith(("WebView", "SurfaceView", "TextureView")):
            found = "web" if name.endswith("WebView") else "surface"
    if found is None or found in ("text", "image"):
        if node.checkable:
            return "checkbox"
        if node.clickable or node.long_clickable:
            return "button"
        if found is None:
            if node.scrollable:
                return "list"
            return "text" if node.text else ("image" if name == "Image" else "view")
    return found


def shown(node: UiNode) -> bool:
    """Whether a person could see it: on a display, with an area."""
    left, top, right, bottom = node.bounds
    return node.visible and right > left and bottom > top and node.class_name != "hierarchy"


def visible_labels(root: UiNode) -> list[str]:
    """Every text and content description a person could see: what the compact form must hold."""
    out: list[str] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if not node.visible:
            continue  # nor anything inside it
        if shown(node):
            out.extend(label for label in (node.text, node.description) if label)
        stack.extend(reversed(node.children))
    return out


# A SurfaceView, a TextureView and a Flutter view without semantics report themselves to
# accessibility as a plain View (none overrides getAccessibilityClassName): a bare one covering
# at least this share of a window that holds nothing else (no label, no action) is taken for one.
# Not in a window that has content: there bare Views are scrims, dividers and backgrounds.
OPAQUE_AREA = 0.5


def _area(bounds: tuple[int, int, int, int]) -> int:
    left, top, right, bottom = bounds
    return max(0, right - left) * max(0, bottom - top)


def opaque(node: UiNode, empty_window: UiNode | None = None) -> bool:
    """A web page or a drawn surface that shows something the tree does not hold: a `web` or
    `surface` element (OPAQUE_ROLES) with no text and nothing shown below it, or a bare
    `android.view.View` covering OPAQUE_AREA of `empty_window`, its window when that holds no
    label and no action (`bare`)."""
    if node.text or any(child.visible and shown(child) for child in node.children):
        return False
    if role(node) in OPAQUE_ROLES:
        return True
    return (
        empty_window is not None
        and node.class_name == "android.view.View"
        and _area(node.bounds) >= OPAQUE_AREA * _area(empty_window.bounds) > 0
    )


def bare(window: UiNode) -> bool:
    """A window with no label and no action in it: what a person sees there is only drawn."""
    return not any(shown(n) and (actionable(n) or _own_labels(n)) for n in window.walk())


def actionable(node: UiNode) -> bool:
    return node.clickable or node.long_clickable or node.checkable or node.scrollable or node.editable


def _folds(node: UiNode) -> bool:
    """A tappable element that takes the labels of the plain elements inside it."""
    return (node.clickable or node.long_clickable or node.checkable) and not node.scrollable


def quote(text: str) -> str:
    """A label as the compact form writes it: one line, in double quotes."""
    escaped = (
        text.replace("\\", "\\\\")
        .replace('"', '\\"')
        .replace("\n", "\\n")
        .replace("\r", "\\r")
        .replace("\t", "\\t")
    )
    return f'"{escaped}"'


def _own_labels(node: UiNode) -> list[str]:
    labels = []
    text = node.text
    if node.editable and node.hint and text == node.hint:
        text = ""  # an empty field reports its hint as its text
    if text:
        labels.append(text)
    if node.description and node.description != text:
        labels.append(node.description)
    return labels


@dataclass
class Line:
    """One element of the compact form."""

    node: UiNode
    ref: str
    depth: int
    labels: list[str]
    window: int = 0
    opaque: bool = False

    def render(self) -> str:
        node = self.node
        parts = [self.ref, role(node)]
        parts.extend(quote(label) for label in self.labels)
        if node.editable and node.hint and node.text in ("", node.hint):
            parts.append("hint=" + quote(node.hint))
        if node.resource_id and (not self.labels or node.editable):
            parts.append("#" + short_id(node.resource_id))
        x, y = node.center
        parts.append(f"@{x},{y}")
        states = {
            "checked": node.checked,
            "selected": node.selected,
            "focused": node.focused,
            "disabled": not node.enabled,
            "scrollable": node.scrollable,
            "password": node.password,
            "opaque": self.opaque,
        }
        parts.extend(name for name in STATES if states[name])
        return "  " * self.depth + " ".join(parts)


def _passive_labels(node: UiNode) -> list[str] | None:
    """The labels of the plain (not actionable) visible elements below `node`, down to the next
    actionable one; None when there are more than MAX_FOLDED."""
    out: list[str] = []
    stack = list(reversed(node.children))
    while stack:
        child = stack.pop()
        if not child.visible or actionable(child):
            continue
        if shown(child):
            out.extend(_own_labels(child))
            if len(out) > MAX_FOLDED:
                return None
        stack.extend(reversed(child.children))
    return out


def _unique(labels: list[str]) -> list[str]:
    """The labels less those another one holds (a row's description often repeats its lines)."""
    labels = list(dict.fromkeys(labels))
    return [a for a in labels if not any(a != b and a in b for b in labels)]


def _wrapper(node: UiNode) -> bool:
    """A tappable element with no name of its own that holds other listed elements: its parts are
    listed (and tapping one lands inside it), so it is folded away."""
    if node.scrollable or node.editable or node.checkable:
        return False
    return any(shown(n) and (actionable(n) or _own_labels(n)) for n in node.walk() if n is not node)


def lines(root: UiNode) -> list[Line]:
    """The elements of the compact form, in document order, each with its ref and depth."""
    refs = element_refs(root)
    out: list[Line] = []

    def visit(node: UiNode, depth: int, folded: bool, window: int) -> None:
        if not node.visible:
            return
        child_depth = depth
        child_folded = folded
        hidden = shown(node) and opaque(node, empty[window])
        if shown(node) and not (folded and not actionable(node) and not hidden):
            labels = _unique(_own_labels(node))
            if actionable(node) or labels or hidden:
                extra = _passive_labels(node) if _folds(node) else None
                if extra is not None:
                    labels = _unique(labels + extra)
                    child_folded = True
                if labels or not _wrapper(node):
                    ref = refs[id(node)]
                    out.append(Line(node, ref, depth, labels, window=window, opaque=hidden))
                    child_depth = depth + 1
        for child in node.children:
            visit(child, child_depth, child_folded and not actionable(child), window)

    windows = root.children if root.class_name == "hierarchy" else [root]
    empty = [window if bare(window) else None for window in windows]
    for i, window in enumerate(windows):
        visit(window, 0, False, i)
    return out


@dataclass(frozen=True)
class Page:
    """One page of the compact form."""

    text: str
    total: int
    offset: int
    shown: int

    @property
    def omitted(self) -> int:
        return self.total - self.shown

    @property
    def next_offset(self) -> int | None:
        end = self.offset + self.shown
        return end if end < self.total else None


def render(root: UiNode, *, max_elements: int, offset: int = 0) -> Page:
    """The compact form of `root`, elements `offset` to `offset + max_elements`; the last line
    says how many come after and how to get them."""
    elements = lines(root)
    page = elements[offset : offset + max_elements]
    windows = root.children if root.class_name == "hierarchy" else []
    header: dict[int, str] = {}
    seen: set[int] = set()
    if len(windows) > 1:
        for i, line in enumerate(elements):
            if line.window not in seen:
                seen.add(line.window)
                window = windows[line.window]
                extra = f" display={window.display}" if window.display else ""
                header[i] = f"== {window.package}{extra}"
    text_lines = []
    for i, line in enumerate(page, start=offset):
        if i in header:
            text_lines.append(header[i])
        text_lines.append(line.render())
    after = len(elements) - offset - len(page)
    if after > 0:
        text_lines.append(
            f"… {after} more elements: DUMP_UI offset={offset + len(page)}"
            + (f" max_elements={max_elements}" if max_elements != DEFAULT_MAX_ELEMENTS else "")
        )
    return Page(text="\n".join(text_lines), total=len(elements), offset=offset, shown=len(page))


def spec_section() -> str:
    """The compact form, exactly, for docs/protocol_spec.md (and so for an agent's prompt)."""
    by_role: dict[str, list[str]] = {}
    for name, found in ROLES.items():
        by_role.setdefault(found, []).append(name)
    roles = "\n".join(f"| `{r}` | {', '.join(f'`{c}`' for c in classes)} |" for r, classes in by_role.items())
    return f"""## The compact screen form

DUMP_UI's `screen` (its default, `format=compact`) and APP_STATE's `screen` (`include_ui=true`)
are text made for a model: one line per element a person could see or act on, in screen
(document) order. Each line is

    <indent><ref> <role>[ "<label>"...][ hint="<hint>"][ #<id>] @<x>,<y>[ <state>...]

- `<ref>`: 4 characters, a letter then three of `a-z0-9`. Give it back as `ref=<ref>` to TAP,
  LONG_PRESS, WAIT_FOR, SCROLL, TYPE_TEXT, CLEAR_TEXT (every action that takes a selector); see
  *Refs* below.
- `<role>`: `button` (anything tappable without a more precise role), `input` (a text field),
  `checkbox`, `switch`, `radio`, `text`, `image`, `list` (scrollable), `pager`, `web`, `surface`
  (a view an app draws itself: a game, a video, a Flutter view), `slider`, `progress`, `dropdown`,
  `tabs`, `tab`, `view` (anything else). From the class's simple name:

| role | classes |
|---|---|
{roles}

  A `text` or `image` (or an unknown class) that is clickable is a `button`, checkable a
  `checkbox`; a class ending in `Button`, `EditText`, `CheckBox`, `ImageView`, `TextView`,
  `ListView`/`RecyclerView`/`ScrollView`/`GridView`, `WebView`, `SurfaceView`/`TextureView`
  (`surface`), or holding `Switch`, takes that role.
- labels, each in double quotes: the element's text, then its content description, then the
  texts and descriptions of the plain elements folded into it (a tappable row carries the lines
  of text it holds, at most {MAX_FOLDED}; past that they get their own lines), in that order,
  leaving out a label that another of the line's labels contains (a row's description often
  repeats its lines).
  Inside the quotes `\\` `"` newline, carriage return and tab are written `\\\\` `\\"`
  `\\n` `\\r` `\\t`; everything else is the app's text as is (XML entities decoded; emoji, CJK,
  Arabic unchanged). A text field's text is its content; an empty field shows `hint="..."`.
- `#<id>`: the resource-id without its `package:id/` prefix, written when the element has no
  label (it is then its only name) and for text fields.
- `@<x>,<y>`: the centre of the element's bounds, in screen pixels (`TAP x=<x> y=<y>`).
- states, only when true, in this order: `checked`, `selected`, `focused`, `disabled`,
  `scrollable`, `password`, `opaque`.
- `opaque`: a `web` or `surface` element with no text and nothing below it in the tree (a WebView
  whose page gives no accessibility nodes, a game, a video), or, in a window with no label and no
  action at all, a bare `android.view.View` covering at least half of it (a SurfaceView, a
  TextureView and a Flutter app without semantics report themselves so). It is listed even with
  no label: what it shows is only in the picture, so the screen is not empty; take a SCREENSHOT
  (`marks=true` boxes it with its ref) and tap by its coordinates (`scale` maps the image's
  back to the screen's).
- indentation: two spaces per listed ancestor. Containers with no label that are not
  actionable are left out (their children move up), and so are tappable wrappers with no label
  that hold listed elements. Elements that are not visible (`visible-to-user="false"`, or with no
  area) are not listed.
- windows: when the dump holds several windows (uiautomator2's form, with `display-id`), each
  window's first element is preceded by a line `== <package>` (` display=<n>` added off display 0);
  a page that starts inside a window does not repeat its line.
- the budget: a page holds `max_elements` elements (default {DEFAULT_MAX_ELEMENTS}) from `offset`
  (default 0). When elements follow the page, its last line is
  `… <n> more elements: DUMP_UI offset=<next>` (with ` max_elements=<m>` when not the default);
  the result's `total`, `omitted` and `next_offset` say the same in numbers.

Example:

    == com.android.systemui
    kq3a text "12:30" @64,33
    == com.whatsapp
    w0kn button "Grupos" @424,268 selected
    c4pz list #list @360,731 scrollable
      n2ns button "Amor" "20:17" "Pegou uma surra" @360,472
    p9dq input hint="Mensagem" #entry @300,1400 focused
    r7tb web @360,2000 opaque

### Refs

{REFS_DOC}
"""
