"""`pair new`'s QR code: it holds what the app must dial (the running gateway's real address, or
`--url`), and it reads the same on a light terminal as on a dark one. The CLI runs as a
subprocess beside a real `serve`; what it prints is drawn as a terminal would draw it, under a
light and a dark palette, then compared with the QR code of the expected payload and, where
zbar is installed, decoded by `zbarimg`."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import segno
from PIL import Image
from websockets.sync.client import connect

from tests.serving import EXE, ServeProcess, start_serve

RGB = tuple[int, int, int]


@dataclass(frozen=True)
class Palette:
    """A terminal theme: its default colours and its 16 basic ones (which themes remap)."""

    name: str
    fg: RGB
    bg: RGB
    basic: tuple[RGB, ...]


LIGHT = Palette("light", (0, 0, 0), (255, 255, 255), ((0, 0, 0),) * 8 + ((85, 85, 85),) * 8)
DARK = Palette("dark", (229, 229, 229), (30, 30, 30), ((7, 54, 66),) * 8 + ((253, 246, 227),) * 8)


def _xterm256(n: int, palette: Palette) -> RGB:
    if n < 16:
        return palette.basic[n]
    if n < 232:
        n -= 16
        levels = (0, 95, 135, 175, 215, 255)
        return levels[n // 36], levels[n // 6 % 6], levels[n % 6]
    grey = 8 + (n - 232) * 10
    return grey, grey, grey


SGR = re.compile(r"\x1b\[([0-9;]*)m")


def draw(text: str, palette: Palette) -> list[list[bool]]:
    """What a terminal with `palette` shows of `text`'s block characters, as rows of modules
    (True: dark), two rows per line: a small ANSI colour renderer (SGR 0, 7, 27, 30-49, 90-107,
    38/48;5;N, 38/48;2;R;G;B)."""
    rows: list[list[bool]] = []
    for line in text.splitlines():
        fg, bg, inverse = palette.fg, palette.bg, False
        top: list[bool] = []
        bottom: list[bool] = []
        pos = 0
        for match in [*SGR.finditer(line), None]:
            chunk = line[pos : match.start() if match else len(line)]
            for char in chunk:
                front, back = (bg, fg) if inverse else (fg, bg)
                upper, lower = {
                    " ": (back, back),
                    "\u2580": (front, back),
                    "\u2584": (back, front),
                    "\u2588": (front, front),
                }[char]
                top.append(sum(upper) < 3 * 128)
                bottom.append(sum(lower) < 3 * 128)
            if match is None:
                break
            pos = match.end()
            codes = [int(c) for c in match.group(1).split(";") if c] or [0]
            while codes:
                code = codes.pop(0)
                if code == 0:
                    fg, bg, inverse = palette.fg, palette.bg, False
                elif code in (7, 27):
                    inverse = code == 7
                elif code in (38, 48):
                    kind = codes.pop(0)
                    colour = _xterm256(codes.pop(0), palette) if kind == 5 else tuple(codes[:3])
                    del codes[: 0 if kind == 5 else 3]
                    if code == 38:
                        fg = colour  # type: ignore[assignment]
                    else:
                        bg = colour  # type: ignore[assignment]
                elif code == 39:
                    fg = palette.fg
                elif code == 49:
                    bg = palette.bg
                elif 30 <= code <= 37 or 90 <= code <= 97:
                    fg = palette.basic[code - 30 if code < 90 else code - 82]
                elif 40 <= code <= 47 or 100 <= code <= 107:
                    bg = palette.basic[code - 40 if code < 100 else code - 92]
        if top:
            rows += [top, bottom]
    return rows


def qr_lines(text: str) -> str:
    """The QR code's lines in what `pair new` printed: those made of block characters."""
    blocks = set(" \u2580\u2584\u2588")
    return "\n".join(
        line for line in text.splitlines() if SGR.sub("", line) and set(SGR.sub("", line)) <= blocks
    )


def expected_modules(payload: dict[str, object]) -> list[list[bool]]:
    code = segno.make(json.dumps(payload, separators=(",", ":")), error="m")
    return [[bool(m) for m in row] for row in code.matrix_iter(scale=1, border=4)]


def image(rows: list[list[bool]], path: Path, *, scale: int = 6) -> Path:
    img = Image.new("L", (len(rows[0]) * scale, len(rows) * scale), 255)
    pixels = img.load()
    assert pixels is not None
    for y, row in enumerate(rows):
        for x, dark in enumerate(row):
            if dark:
                for dy in range(scale):
                    for dx in range(scale):
                        pixels[x * scale + dx, y * scale + dy] = 0
    img.save(path)
    return path


@dataclass
class Issued:
    token: str
    url: str
    out: str


def env_without_gateway_setting(data_dir: Path) -> dict[str, str]:
    """As an owner's shell: no PHONEUSE_GATEWAY_LISTEN (the settings say 127.0.0.1:8765)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PHONEUSE_")}
    env["PHONEUSE_DATA_DIR"] = str(data_dir)
    return env


def pair_new(data_dir: Path, *extra: str, name: str = "phone") -> Issued:
    done = subprocess.run(
        [*EXE, "pair", "new", "--name", name, *extra],
        capture_output=True,
        text=True,
        env=env_without_gateway_setting(data_dir),
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    token = done.stdout.split("shown only this once:")[1].split()[0]
    url = done.stdout.split("the app dials ")[1].split()[0]
    return Issued(token, url, done.stdout)


def hello(url: str, token: str) -> str:
    """An app dials `url` and says hello with `token`; the answer's type."""
    with connect(url) as ws:
        ws.send(json.dumps({"v": 1, "id": 1, "type": "hello", "payload": {"token": token, "device_id": "d"}}))
        answer: str = json.loads(ws.recv(timeout=10))["type"]
    return answer


@pytest.fixture
def gateway_on_port_0(tmp_path: Path) -> Iterator[ServeProcess]:
    s = start_serve(tmp_path / "data", "--gateway-listen", "127.0.0.1:0")
    yield s
    s.proc.kill()
    s.proc.wait()


@pytest.mark.parametrize("palette", [LIGHT, DARK], ids=lambda p: p.name)
def test_the_qr_code_holds_the_running_gateways_real_address_on_any_terminal(
    gateway_on_port_0: ServeProcess, palette: Palette
) -> None:
    issued = pair_new(gateway_on_port_0.data_dir)
    shown = draw(qr_lines(issued.out), palette)
    payload = {"v": 1, "url": issued.url, "token": issued.token, "name": "phone"}
    modules = expected_modules(payload)
    assert shown[: len(modules)] == modules  # (a last light row may pad the quiet zone)
    assert not any(any(row) for row in shown[len(modules) :])
    # The URL is the running gateway's: an app that dials it with the token is let in.
    assert issued.url.startswith("ws://127.0.0.1:") and not issued.url.endswith(":8765/ws")
    assert hello(issued.url, issued.token) == "hello.ack"


@pytest.mark.skipif(shutil.which("zbarimg") is None, reason="zbarimg is not installed (apt: zbar-tools)")
@pytest.mark.parametrize("palette", [LIGHT, DARK], ids=lambda p: p.name)
def test_zbar_reads_the_qr_code_as_drawn_on_a_light_and_a_dark_terminal(
    gateway_on_port_0: ServeProcess, palette: Palette, tmp_path: Path
) -> None:
    issued = pair_new(gateway_on_port_0.data_dir)
    picture = image(draw(qr_lines(issued.out), palette), tmp_path / f"{palette.name}.png")
    read = subprocess.run(
        ["zbarimg", "--quiet", "--raw", "-Sdisable", "-Sqrcode.enable", str(picture)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert read.returncode == 0, (read.returncode, read.stderr)
    scanned = json.loads(read.stdout)
    assert scanned == {"v": 1, "url": issued.url, "token": issued.token, "name": "phone"}
    assert hello(scanned["url"], scanned["token"]) == "hello.ack"


def test_a_wildcard_bind_gives_the_loopback_and_says_how_to_give_the_lans_url(tmp_path: Path) -> None:
    s = start_serve(tmp_path / "data", "--gateway-listen", "0.0.0.0:0")
    try:
        issued = pair_new(s.data_dir)
        assert re.fullmatch(r"ws://127\.0\.0\.1:\d+/ws", issued.url), issued.url
        assert "0.0.0.0" not in issued.url
        assert "--url ws://ADDRESS:" in issued.out  # the hint for a phone on the LAN or a tailnet
        assert hello(issued.url, issued.token) == "hello.ack"
    finally:
        s.proc.kill()
        s.proc.wait()


def test_url_names_what_the_app_dials(gateway_on_port_0: ServeProcess) -> None:
    issued = pair_new(gateway_on_port_0.data_dir, "--url", "wss://phone.tailnet.example/iris/ws")
    assert issued.url == "wss://phone.tailnet.example/iris/ws"
    payload = {"v": 1, "url": issued.url, "token": issued.token, "name": "phone"}
    assert draw(qr_lines(issued.out), LIGHT)[: len(expected_modules(payload))] == expected_modules(payload)
    bare = pair_new(gateway_on_port_0.data_dir, "--url", "ws://192.168.1.20:8765")
    assert bare.url == "ws://192.168.1.20:8765/ws"  # no path: the gateway's /ws


@pytest.mark.parametrize(
    "url",
    [
        "http://192.168.1.20:8765/ws",
        "ws:///ws",
        "ws://user:secret@host:8765/ws",
        "ws://host:8765/ws?token=abc",
        "ws://host:99999/ws",
        "ws://" + "h" * 600 + "/ws",
    ],
)
def test_a_bad_url_is_refused_and_issues_nothing(tmp_path: Path, url: str) -> None:
    data_dir = tmp_path / "data"
    env = env_without_gateway_setting(data_dir)
    done = subprocess.run(
        [*EXE, "pair", "new", "--name", "x", "--url", url],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 2, done
    assert done.stderr.startswith("phoneuse-runtime: --url ") and "Traceback" not in done.stderr
    assert done.stdout == ""
    listed = subprocess.run(
        [*EXE, "pair", "list", "--json"], capture_output=True, text=True, env=env, timeout=60, check=True
    )
    assert json.loads(listed.stdout) == []


def test_with_no_server_the_settings_address_is_used_and_said_so(tmp_path: Path) -> None:
    issued = pair_new(tmp_path / "data")
    assert issued.url == "ws://127.0.0.1:8765/ws"
    assert "no server is running" in issued.out
    # A port the server picks when it starts cannot be known before: the CLI says so.
    env = {**env_without_gateway_setting(tmp_path / "data"), "PHONEUSE_GATEWAY_LISTEN": "127.0.0.1:0"}
    done = subprocess.run(
        [*EXE, "pair", "new", "--name", "y"], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 2 and "--url" in done.stderr, done


def test_a_qr_code_in_the_terminals_own_colours_reads_inverted_on_a_light_theme() -> None:
    """What the test's renderer catches: segno's compact output (the terminal's own colours,
    what `pair new` printed before) is right on a dark theme and inverted on a light one."""
    from io import StringIO

    text = StringIO()
    payload = {"v": 1, "url": "ws://127.0.0.1:1/ws", "token": "t", "name": "n"}
    segno.make(json.dumps(payload, separators=(",", ":")), error="m").terminal(out=text, compact=True)
    modules = expected_modules(payload)
    assert draw(text.getvalue(), DARK)[: len(modules)] == modules
    light = draw(text.getvalue(), LIGHT)[: len(modules)]
    assert light == [[not m for m in row] for row in modules]
