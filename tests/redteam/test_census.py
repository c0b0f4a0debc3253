"""The census: the table of docs/security.md, "The red team", says how many attacks each file of
tests/redteam runs, and this holds it to what pytest collects (parametrized cases counted one by
one). A file added here, or a test added to a file, fails it until the table says so; its message
prints the table as it should read."""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
PAGE = ROOT / "docs" / "security.md"
SECTION = "The red team"
ROW = re.compile(
    r"^\|\s*\[?`(?P<file>test_\w+\.py)`\]?(?:\([^)]*\))?\s*\|(?P<kind>[^|]*)\|\s*(?P<n>\d+)\s*\|$"
)
TOTAL = re.compile(r"^\|\s*\*\*all\*\*\s*\|[^|]*\|\s*\*\*(?P<n>\d+)\*\*\s*\|$")


def section() -> str:
    page = PAGE.read_text(encoding="utf-8")
    assert f"\n## {SECTION}\n" in page, f"docs/security.md has no '## {SECTION}' section"
    return page.split(f"\n## {SECTION}\n", 1)[1].split("\n## ", 1)[0]


def table() -> tuple[dict[str, tuple[str, int]], int | None]:
    """The page's rows, file -> (what the file attacks, how many), and its total."""
    rows: dict[str, tuple[str, int]] = {}
    total: int | None = None
    for line in section().splitlines():
        row = ROW.match(line.strip())
        if row:
            rows[row["file"]] = (row["kind"].strip(), int(row["n"]))
        elif found := TOTAL.match(line.strip()):
            total = int(found["n"])
    return rows, total


def collected() -> Counter[str]:
    """What pytest collects in tests/redteam, by file, as a separate run collects it."""
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-n",
            "0",
            "-p",
            "no:cacheprovider",
            str(HERE),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    ids = [line for line in run.stdout.splitlines() if "::" in line]
    return Counter(Path(i.split("::", 1)[0]).name for i in ids)


def rendered(counts: Counter[str], kinds: dict[str, tuple[str, int]]) -> str:
    lines = ["| File | Attacks | Tests |", "| --- | --- | ---: |"]
    for name in sorted(counts):
        kind = kinds.get(name, ("(say what it attacks)", 0))[0]
        lines.append(f"| [`{name}`](../tests/redteam/{name}) | {kind} | {counts[name]} |")
    lines.append(f"| **all** | | **{sum(counts.values())}** |")
    return "\n".join(lines)


def test_the_docs_count_every_attack_the_red_team_runs() -> None:
    """Each row's number, and the total, is what pytest collects in that file."""
    counts = collected()
    counts.pop(Path(__file__).name, None)  # the census itself is no attack
    rows, total = table()
    said = {name: n for name, (_, n) in rows.items()}
    assert said == dict(counts) and total == sum(counts.values()), (
        f"docs/security.md's '{SECTION}' table should read:\n\n{rendered(counts, rows)}\n"
    )


def test_every_file_of_the_red_team_is_a_kind_in_the_table() -> None:
    """Every file but the census has its row, saying what it attacks, and every row its file."""
    files = {p.name for p in HERE.glob("test_*.py")} - {Path(__file__).name}
    rows, _ = table()
    assert set(rows) == files, (
        f"files without a row: {sorted(files - set(rows))}; rows without a file: {sorted(set(rows) - files)}"
    )
    assert all(kind for kind, _ in rows.values()), "every row says what its file attacks"
