"""The pairing QR code as a terminal draws it, the same on a light theme as on a dark one.

A QR code drawn in the terminal's own colours (spaces and blocks, as segno's `compact` output
does) is only right on one of them: on the other, dark and light swap and scanners read nothing.
So every cell here sets both its colours, black and white from the 256-colour cube (16 and 231,
#000000 and #ffffff), which themes leave alone (they remap the 16 basic colours), and each line
ends with a reset. One character cell is one module wide and two high (an upper half block in
the top module's colour over a background in the bottom one's), and the quiet zone is the
4 light modules the standard asks for.
"""

from __future__ import annotations

import segno

DARK = 16  # xterm-256 #000000
LIGHT = 231  # xterm-256 #ffffff
QUIET_ZONE = 4
UPPER_HALF = "\u2580"
RESET = "\x1b[0m"


def modules(payload: str) -> list[list[bool]]:
    """The QR code of `payload` (error correction M), quiet zone included: True is dark."""
    code = segno.make(payload, error="m")
    return [[bool(m) for m in row] for row in code.matrix_iter(scale=1, border=QUIET_ZONE)]


def terminal(payload: str) -> str:
    """The QR code of `payload` as text with explicit ANSI colours, one line per two rows."""
    rows = modules(payload)
    if len(rows) % 2:
        rows.append([False] * len(rows[0]))  # one more light row: the quiet zone grows
    lines = []
    for top, bottom in zip(rows[::2], rows[1::2], strict=True):
        line, colours = [], (-1, -1)
        for upper, lower in zip(top, bottom, strict=True):
            want = (DARK if upper else LIGHT, DARK if lower else LIGHT)
            if want != colours:
                line.append(f"\x1b[38;5;{want[0]};48;5;{want[1]}m")
                colours = want
            line.append(UPPER_HALF)
        lines.append("".join(line) + RESET)
    return "\n".join(lines) + "\n"
