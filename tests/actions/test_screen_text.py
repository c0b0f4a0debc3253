"""DUMP_UI's compact form, its budget and its refs, through the real server on the sim."""

from __future__ import annotations

import base64
import io
import re
from pathlib import Path

import pytest

from phoneuse_runtime.screen.text import quote, visible_labels
from phoneuse_runtime.screen.ui import parse_hierarchy

from ..conftest import Client
from .conftest import CHROME, LAUNCHER, URL_BAR, _node, failure

# ../shared beside the checkout (a worktree sits one level deeper).
REAL_DUMPS = next(
    (
        d / "shared" / "realdata" / "uidump"
        for d in Path(__file__).resolve().parents[3:5]
        if (d / "shared" / "realdata" / "uidump").is_dir()
    ),
    Path("/nonexistent"),
)
QUOTED = r'"(?:[^"\\]|\\.)*"'
LINE = re.compile(
    rf"^( *)([a-z][a-z0-9]{{3}}) ([a-z]+)((?: {QUOTED})*)(?: hint={QUOTED})?(?: #\S+)? @\d+,\d+"
    r"((?: [a-z]+)*)$"
)
LIST = "com.example.list"


def _icon(i: int) -> str:
    bounds = f"[900,{100 + 80 * i}][1080,{180 + 80 * i}]"
    return _node(2, "android.widget.ImageButton", bounds, pkg=LIST, rid=f"{LIST}:id/call", clickable="true")


def _rows(names: list[str], *, icons: bool = False) -> str:
    """A list screen: one tappable row per name, each with its title and a subtitle (and with
    `icons`, a call button with no text of its own)."""
    rows = "".join(
        _node(
            i,
            "android.widget.LinearLayout",
            f"[0,{100 + 80 * i}][1080,{180 + 80 * i}]",
            pkg=LIST,
            rid=f"{LIST}:id/row",
            clickable="true",
            children=_node(
                0, "android.widget.TextView", f"[20,{100 + 80 * i}][800,{140 + 80 * i}]", pkg=LIST, text=name
            )
            + _node(
                1, "android.widget.TextView", f"[20,{140 + 80 * i}][800,{180 + 80 * i}]", pkg=LIST, text="Hi"
            )
            + (_icon(i) if icons else ""),
        )
        for i, name in enumerate(names)
    )
    inner = _node(
        0, "androidx.recyclerview.widget.RecyclerView", "[0,100][1080,2400]", pkg=LIST, children=rows
    )
    return (
        "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"
        + _node(0, "android.widget.FrameLayout", "[0,0][1080,2400]", pkg=LIST, children=inner)
        + "</hierarchy>"
    )


def _ref(screen: str, label: str) -> str:
    [line] = [line for line in screen.splitlines() if f'"{label}"' in line]
    return line.split()[0]


async def test_dump_ui_is_compact_by_default_and_json_on_request(client: Client) -> None:
    dump = await client.ok("DUMP_UI")
    assert dump["format"] == "compact" and dump["package"] == LAUNCHER and dump["elements"] is None
    lines = dump["screen"].splitlines()
    assert lines and all(LINE.match(line) or line.startswith("== ") for line in lines), lines
    assert dump["total"] == len([line for line in lines if not line.startswith("== ")])
    assert dump["omitted"] == 0 and dump["next_offset"] is None and dump["offset"] == 0
    # Every text the sim shows is there, quoted; the status bar and the app are separate windows.
    xml = (await client.ok("DUMP_UI", {"include_xml": "true"}))["xml"]
    assert all(
        quote(label) in dump["screen"] or quote(label)[1:-1] in dump["screen"]
        for label in visible_labels(parse_hierarchy(xml))
    )
    assert "== com.android.systemui" in dump["screen"]
    as_json = await client.ok("DUMP_UI", {"format": "json"})
    assert as_json["format"] == "json" and as_json["screen"] is None and as_json["elements"]
    assert as_json["ui_fingerprint"] == dump["ui_fingerprint"]


async def test_compact_form_writes_one_line_per_element_and_only_true_states(client: Client) -> None:
    xml = (
        "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"
        + _node(
            0,
            "android.widget.FrameLayout",
            "[0,0][1080,2400]",
            children=_node(
                0,
                "android.widget.TextView",
                "[0,0][1080,100]",
                text="two&#10;lines &amp; &quot;quotes&quot; &#128690; 你好 مرحبا",
            )
            + _node(
                1,
                "android.widget.EditText",
                "[0,100][1080,200]",
                rid="com.example.bank:id/pin",
                focused="true",
                password="true",
            )
            + _node(2, "android.widget.ImageButton", "[0,200][100,300]", desc="Send", clickable="true"),
        )
        + "</hierarchy>"
    )
    await client.ok("SIM_SET_SCREEN", {"xml": xml})
    screen = (await client.ok("DUMP_UI"))["screen"]
    text, field, send = screen.splitlines()
    assert text.endswith(' text "two\\nlines & \\"quotes\\" 🚲 你好 مرحبا" @540,50')
    assert field.endswith(" input #pin @540,150 focused password")
    assert send.endswith(' button "Send" @50,250')


@pytest.mark.skipif(
    not REAL_DUMPS.is_dir(), reason="the real dumps (../shared/realdata) are not on this machine"
)
@pytest.mark.parametrize(
    "name", sorted(p.name for p in REAL_DUMPS.glob("*.xml")) if REAL_DUMPS.is_dir() else []
)
async def test_compact_form_covers_every_visible_text_of_real_dumps(client: Client, name: str) -> None:
    xml = (REAL_DUMPS / name).read_text()
    xml = xml[xml.index("<?xml") :]
    await client.ok("SIM_SET_SCREEN", {"xml": xml})
    dump = await client.ok("DUMP_UI", {"max_elements": "1000"})
    screen = dump["screen"]
    missing = [label for label in visible_labels(parse_hierarchy(xml)) if quote(label)[1:-1] not in screen]
    assert not missing
    assert all(LINE.match(line) or line.startswith("== ") for line in screen.splitlines())
    if name.startswith("u2-multiwindow"):
        assert screen.count("\n== ") + screen.startswith("== ") >= 2  # every window, read whole


async def test_a_long_list_is_paged_and_says_what_was_left_out(client: Client) -> None:
    names = [f"Contact {i}" for i in range(400)]
    await client.ok("SIM_SET_SCREEN", {"xml": _rows(names)})
    first = await client.ok("DUMP_UI")
    assert first["total"] == 400 and first["offset"] == 0  # the rows (the bare list is folded)
    assert first["omitted"] == 250 and first["next_offset"] == 150
    *lines, last = first["screen"].splitlines()
    assert len(lines) == 150 and last == "… 250 more elements: DUMP_UI offset=150"
    second = await client.ok("DUMP_UI", {"offset": "150", "max_elements": "300"})
    assert second["next_offset"] is None and second["omitted"] == 150 and second["total"] == 400
    refs = [line.split()[0] for line in lines + second["screen"].splitlines()]
    assert len(refs) == len(set(refs)) == 400
    end = await client.ok("DUMP_UI", {"offset": "399", "max_elements": "10"})
    assert '"Contact 399"' in end["screen"] and end["next_offset"] is None
    assert (await failure(client, "DUMP_UI", {"max_elements": "0"}))[0] == "INVALID_PARAMS"


async def test_refs_stay_when_a_row_appears_above_and_tap_ref_lands_inside(client: Client) -> None:
    await client.ok("SIM_SET_SCREEN", {"xml": _rows(["Ana", "Bruno", "Carla"])})
    before = (await client.ok("DUMP_UI"))["screen"]
    await client.ok("SIM_SET_SCREEN", {"xml": _rows(["Zoe", "Ana", "Bruno", "Carla"])})
    after = (await client.ok("DUMP_UI"))["screen"]
    for name in ("Ana", "Bruno", "Carla"):
        assert _ref(before, name) == _ref(after, name)
    ref = _ref(after, "Carla")
    tapped = await client.ok("TAP", {"ref": ref})
    assert tapped["element"]["ref"] == ref  # the result names the element by the ref given
    left, top, right, bottom = (await client.ok("WAIT_FOR", {"ref": ref}))["element"]["bounds"]
    assert left <= tapped["x"] < right and top <= tapped["y"] < bottom
    assert (top, bottom) == (100 + 80 * 3, 180 + 80 * 3)  # Carla's row, now the fourth
    assert (await client.ok("WAIT_FOR", {"ref": ref}))["element"]["bounds"] == [left, top, right, bottom]


async def test_a_stale_ref_is_element_not_found_never_a_tap_elsewhere(client: Client) -> None:
    await client.ok("SIM_SET_SCREEN", {"xml": _rows(["Ana", "Bruno"])})
    ref = _ref((await client.ok("DUMP_UI"))["screen"], "Bruno")
    await client.ok("SIM_SET_SCREEN", {"xml": _rows(["Ana", "Carla"])})
    assert (await failure(client, "TAP", {"ref": ref}))[0] == "ELEMENT_NOT_FOUND"
    assert (await failure(client, "LONG_PRESS", {"ref": ref}))[0] == "ELEMENT_NOT_FOUND"
    assert (await failure(client, "TAP", {"ref": "NOT-A-REF"}))[0] == "INVALID_PARAMS"


async def test_every_selector_action_takes_a_ref(client: Client) -> None:
    await client.ok("OPEN_APP", {"package": CHROME})
    screen = (await client.ok("DUMP_UI"))["screen"]
    [bar] = [line.split()[0] for line in screen.splitlines() if "#url_bar" in line]
    typed = await client.ok("TYPE_TEXT", {"ref": bar, "text": "héllo 你好 🚲"})
    assert typed["verified"] is True and typed["field"] == {
        "ref": bar,
        "text": "héllo 你好 🚲",
        "resource_id": "url_bar",
    }
    cleared = await client.ok("CLEAR_TEXT", {"ref": bar})
    assert cleared["verified"] is True
    waited = await client.ok("WAIT_FOR", {"ref": bar})
    assert waited["element"]["resource_id"] == URL_BAR
    pressed = await client.ok("LONG_PRESS", {"ref": bar, "duration_ms": "100"})
    assert pressed["element"]["resource_id"] == "url_bar" and pressed["element"]["ref"] == bar
    scrolled = await client.ok("SCROLL", {"ref": bar})
    assert scrolled["swipes"] == 0 and scrolled["element"]["resource_id"] == URL_BAR
    gone = await client.ok("WAIT_FOR", {"ref": "zzzz", "gone": "true"})  # no element has that ref
    assert gone["gone"] is True


async def test_screenshot_marks_draws_dump_ui_refs_boxes(client: Client) -> None:
    from PIL import Image, ImageColor

    from phoneuse_runtime.screen.marks import _COLOURS

    await client.ok("SIM_SET_SCREEN", {"xml": _rows(["Ana", "Bruno", "Carla"])})
    plain = await client.ok("SCREENSHOT", {"format": "png"})
    marked = await client.ok("SCREENSHOT", {"marks": "true", "format": "png"})
    assert marked["format"] == "png" and (marked["width"], marked["height"]) == (
        plain["width"],
        plain["height"],
    )
    image = Image.open(io.BytesIO(base64.b64decode(marked["image_base64"]))).convert("RGB")
    scale = image.width / 1080
    screen = (await client.ok("DUMP_UI"))["screen"]
    for i, name in enumerate(["Ana", "Bruno", "Carla"]):
        ref = _ref(screen, name)
        colour = ImageColor.getrgb(_COLOURS[sum(ref.encode()) % len(_COLOURS)])
        # The row's left edge, halfway down, is drawn in its ref's colour.
        assert image.getpixel((1, round((140 + 80 * i) * scale))) == colour
    assert marked["image_base64"] != plain["image_base64"]


async def test_a_dump_of_several_displays_is_read_whole(client: Client) -> None:
    def window(display: int, text: str) -> str:
        return _node(
            0, "android.widget.TextView", "[0,0][1080,100]", pkg=f"com.example.d{display}", text=text
        )

    xml = (
        "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"
        + f'<hierarchy display-id="0">{window(0, "main")}</hierarchy>'
        + f'<hierarchy display-id="1">{window(1, "second")}</hierarchy>'
        + "</hierarchy>"
    )
    await client.ok("SIM_SET_SCREEN", {"xml": xml})
    screen = (await client.ok("DUMP_UI"))["screen"]
    assert "== com.example.d0" in screen and "== com.example.d1" in screen
    assert '"main"' in screen and '"second"' in screen


async def test_a_nameless_icon_keeps_its_ref_when_a_row_appears_above(client: Client) -> None:
    def icons(screen: str) -> list[str]:
        return [line.split()[0] for line in screen.splitlines() if "#call" in line]

    await client.ok("SIM_SET_SCREEN", {"xml": _rows(["Ana", "Bruno"], icons=True)})
    before = icons((await client.ok("DUMP_UI"))["screen"])
    await client.ok("SIM_SET_SCREEN", {"xml": _rows(["Zoe", "Ana", "Bruno"], icons=True)})
    after = icons((await client.ok("DUMP_UI"))["screen"])
    assert len(set(after)) == 3 and after[1:] == before  # Ana's and Bruno's call buttons
    tapped = await client.ok("TAP", {"ref": after[2]})
    assert (tapped["x"], tapped["y"]) == (990, 300)  # Bruno's, now the third row
