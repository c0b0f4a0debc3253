"""docs/troubleshooting.md quotes the errors as the program prints them: every `### `-heading's
quoted message is a string the source holds (a literal, or the literal part of an f-string, as
Python joins them), so a message changed in the code fails here until the page follows. The
messages of pip, which the page marks `(pip)`, are held to the pip this Python runs."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pip

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "troubleshooting.md"
OURS = [ROOT / "phoneuse_runtime", ROOT / "actions", ROOT / "queries"]


def quoted() -> list[tuple[str, str]]:
    """(heading, message) for every message a heading quotes."""
    text = re.sub(r"```.*?```", "", PAGE.read_text(encoding="utf-8"), flags=re.S)
    found = []
    for heading in re.findall(r"^### (.+)$", text, flags=re.M):
        found += [(heading, message) for message in re.findall(r"`([^`]+)`", heading)]
    return found


@functools.cache
def strings(*folders: Path) -> frozenset[str]:
    """Every string constant of the Python files under `folders` (f-strings' literal parts too)."""
    found: set[str] = set()
    for folder in folders:
        for path in folder.rglob("*.py"):
            constants = [
                n
                for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                if isinstance(n, ast.Constant)
            ]
            found |= {n.value for n in constants if isinstance(n.value, str)}
    return frozenset(found)


def test_the_page_quotes_the_errors_people_meet() -> None:
    messages = [message for _, message in quoted()]
    assert len(messages) >= 25, messages
    for expected in ("timeout_ms must be > 0", "--nats-url needs nats-py", "is in use by another program"):
        assert expected in messages


def test_every_quoted_error_is_in_the_source() -> None:
    ours = strings(*OURS)
    pips = strings(Path(pip.__file__).parent)
    missing = [
        (heading, message)
        for heading, message in quoted()
        if not any(message in s for s in (pips if heading.endswith("(pip)") else ours))
    ]
    assert missing == [], "the page quotes messages the program does not print (any more)"
