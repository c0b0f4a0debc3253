"""Screens the tree or the picture cannot show, on the sim through the real server: a secure
window's black screenshot (SIM_SET_SCREEN secure=true) and opaque views in the compact form,
with the real dumps of a WebView page and a Flutter app as golden input."""

from __future__ import annotations

import base64
import io

import pytest
from PIL import Image, ImageDraw

from phoneuse_runtime.screen.image import Picture, black_screen
from phoneuse_runtime.screen.ui import parse_hierarchy

from ..conftest import Client
from .conftest import LOGIN_XML, _node
from .test_screen_text import REAL_DUMPS

NEEDS_DUMPS = pytest.mark.skipif(
    not REAL_DUMPS.is_dir(), reason="the real dumps (../shared/realdata) are not on this machine"
)


def _hierarchy(*windows: str) -> str:
    return (
        "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"
        + "".join(windows)
        + "</hierarchy>"
    )


async def test_a_secure_screen_is_said_and_its_tree_still_listed(client: Client) -> None:
    await client.ok("SIM_SET_SCREEN", {"xml": LOGIN_XML})
    plain = await client.ok("SCREENSHOT")
    assert (plain["secure"], plain["hint"]) == (False, None)
    await client.ok("SIM_SET_SCREEN", {"xml": LOGIN_XML, "secure": "true"})
    shot = await client.ok("SCREENSHOT")
    assert shot["secure"] is True and "FLAG_SECURE" in shot["hint"] and "DUMP_UI" in shot["hint"]
    image = Image.open(io.BytesIO(base64.b64decode(shot["image_base64"]))).convert("L")
    middle = image.getpixel((image.width // 2, image.height // 2))
    assert isinstance(middle, int) and middle < 12  # black, as a phone gives it
    marked = await client.ok("SCREENSHOT", {"marks": "true"})
    assert marked["secure"] is True  # the tree marks reads is the one the check uses
    screen = (await client.ok("DUMP_UI"))["screen"]
    assert '"Welcome back"' in screen  # the compact screen still lists what the tree has


def _drawn(size: tuple[int, int], background: int, text: int | None) -> bytes:
    image = Image.new("L", size, background)
    if text is not None:
        ImageDraw.Draw(image).text((70, 320), "Welcome back", fill=text)
    out = io.BytesIO()
    image.convert("RGB").save(out, "PNG")
    return out.getvalue()


def test_only_a_picture_that_shows_none_of_the_trees_labels_is_secure() -> None:
    root = parse_hierarchy(LOGIN_XML)
    assert black_screen(Picture(_drawn((1080, 2400), 0, None)), root)
    # A dark app (Material's #121212, or pure black with its text drawn) is not a secure one.
    assert not black_screen(Picture(_drawn((1080, 2400), 18, 230)), root)
    assert not black_screen(Picture(_drawn((1080, 2400), 0, 230)), root)
    # A black picture of a tree with nothing in it hides nothing.
    empty = _node(0, "android.widget.FrameLayout", "[0,0][1080,2400]")
    assert not black_screen(Picture(_drawn((1080, 2400), 0, None)), parse_hierarchy(_hierarchy(empty)))


async def test_opaque_views_are_listed_and_marked(client: Client) -> None:
    app = "com.example.game"
    web = _node(0, "android.webkit.WebView", "[0,200][1080,1200]", pkg=app)
    page = _node(
        1,
        "android.webkit.WebView",
        "[0,1200][1080,2000]",
        pkg=app,
        children=_node(0, "android.widget.TextView", "[0,1200][1080,1300]", pkg=app, text="A page"),
    )
    surface = _node(2, "android.view.SurfaceView", "[0,2000][1080,2400]", pkg=app)
    window = _node(
        0, "android.widget.FrameLayout", "[0,0][1080,2400]", pkg=app, children=web + page + surface
    )
    await client.ok("SIM_SET_SCREEN", {"xml": _hierarchy(window)})
    lines = (await client.ok("DUMP_UI"))["screen"].splitlines()
    assert [line.split()[1:] for line in lines] == [
        ["web", "@540,700", "opaque"],  # a WebView without children: its page is only in the picture
        ["text", '"A', 'page"', "@540,1250"],  # one whose page gives nodes is read as ever
        ["surface", "@540,2200", "opaque"],
    ]


async def test_a_flutter_or_game_window_without_semantics_is_opaque_not_empty(client: Client) -> None:
    # A SurfaceView or a Flutter view without semantics reports itself as a bare android.view.View.
    app = "com.example.flutter"
    bare = _node(0, "android.view.View", "[0,0][1080,2400]", pkg=app)
    window = _node(0, "android.widget.FrameLayout", "[0,0][1080,2400]", pkg=app, children=bare)
    await client.ok("SIM_SET_SCREEN", {"xml": _hierarchy(window)})
    dump = await client.ok("DUMP_UI")
    assert dump["screen"].split()[1:] == ["view", "@540,1200", "opaque"]
    # In a window that has content, a bare View is a background or a scrim: not marked.
    label = _node(1, "android.widget.TextView", "[0,0][1080,100]", pkg=app, text="Score")
    window = _node(0, "android.widget.FrameLayout", "[0,0][1080,2400]", pkg=app, children=bare + label)
    await client.ok("SIM_SET_SCREEN", {"xml": _hierarchy(window)})
    assert "opaque" not in (await client.ok("DUMP_UI"))["screen"]


@NEEDS_DUMPS
async def test_the_real_webview_page_is_opaque_and_the_flutter_app_with_semantics_is_read(
    client: Client,
) -> None:
    brella = (REAL_DUMPS / "u2-multiwindow_brella_webview_1080x2400.xml").read_text(encoding="utf-8")
    await client.ok("SIM_SET_SCREEN", {"xml": brella})
    screen = (await client.ok("DUMP_UI", {"max_elements": "500"}))["screen"]
    opaque = [line.split()[1:] for line in screen.splitlines() if line.endswith(" opaque")]
    # Of the two nested WebViews, the inner one (no children) holds the page the tree lacks.
    assert opaque == [["web", "@540,1111", "focused", "opaque"]]
    flutter = (REAL_DUMPS / "flutter-login_ar_password-field_1080x1920.xml").read_text(encoding="utf-8")
    await client.ok("SIM_SET_SCREEN", {"xml": flutter})
    screen = (await client.ok("DUMP_UI"))["screen"]
    # Its semantics give the tree what it shows: nothing is opaque.
    assert "opaque" not in screen and '"تسجيل الدخول"' in screen and "password" in screen
