"""What the agent reads to see the screen: DUMP_UI's compact form vs mobile-mcp's
`mobile_list_elements_on_screen`, in cl100k_base tokens, over the same dumps in one run.

Dumps: every file in ../shared/realdata/uidump/ (or --dumps DIR) and the sim's own screens (its
home screen and each app on it). mobile-mcp's answers are made by its own code (installed with npm
into a temporary directory, or --mobile-mcp DIR holding node_modules), through
bench/mobile_mcp_elements.js; without node the mobile-mcp column is skipped, saying so.

Coverage: every non-empty text and content-desc of a visible node (visible-to-user not false,
with an area) must appear in the answer (ours: quoted as the compact form quotes it; mobile-mcp:
JSON-quoted, as it writes them).

Needs a tokenizer that bundles cl100k_base: `pip install -e '.[bench]'` (bpe-openai).
Run: python bench/bench_screen_tokens.py
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Protocol

from _common import REPO, table

from phoneuse_runtime.device.sim.catalog import HOME_APPS
from phoneuse_runtime.device.sim.device import SimDevice
from phoneuse_runtime.screen.text import DEFAULT_MAX_ELEMENTS, quote, render, visible_labels
from phoneuse_runtime.screen.ui import parse_hierarchy

# ../shared beside the checkout (a worktree sits one level deeper).
DUMPS = next(
    (
        d / "shared" / "realdata" / "uidump"
        for d in (REPO.parent, REPO.parent.parent)
        if (d / "shared").is_dir()
    ),
    REPO.parent / "shared" / "realdata" / "uidump",
)
TARGET = 0.6
NODE_SCRIPT = Path(__file__).resolve().parent / "mobile_mcp_elements.js"


class Encoding(Protocol):
    def encode(self, text: str) -> list[int]: ...


def _counter() -> Encoding:
    try:
        import bpe_openai
    except ImportError:
        sys.exit("needs bpe-openai (cl100k_base bundled, no download): pip install -e '.[bench]'")
    encoding: Encoding = bpe_openai.get_encoding("cl100k_base")
    return encoding


def coverage(labels: list[str], answer: str, *, quoted: bool) -> float:
    if not labels:
        return 1.0
    if quoted:
        found = sum(quote(label)[1:-1] in answer for label in labels)
    else:
        found = sum(json.dumps(label, ensure_ascii=False)[1:-1] in answer for label in labels)
    return found / len(labels)


async def sim_screens() -> list[tuple[str, str]]:
    device = SimDevice()
    await device.start(lambda event: None)
    try:
        screens = [("sim:home", await device.dump_hierarchy())]
        for package in HOME_APPS:
            await device.launch_app(package)
            screens.append((f"sim:{package.rsplit('.', 1)[-1]}", await device.dump_hierarchy()))
        return screens
    finally:
        await device.close()


def mobile_mcp_answers(xmls: list[str], modules: Path | None) -> list[str] | None:
    node = shutil.which("node")
    if node is None:
        print("node is not installed: the mobile-mcp column is skipped")
        return None
    with tempfile.TemporaryDirectory() as scratch:
        if modules is None:
            npm = shutil.which("npm")
            if npm is None:
                print("npm is not installed: the mobile-mcp column is skipped")
                return None
            subprocess.run(
                [npm, "install", "--silent", "--prefix", scratch, "@mobilenext/mobile-mcp"],
                check=True,
                stdout=subprocess.DEVNULL,
            )
            modules = Path(scratch) / "node_modules"
        version = json.loads((modules / "@mobilenext" / "mobile-mcp" / "package.json").read_text())["version"]
        print(f"mobile-mcp {version} (its AndroidRobot.getElementsOnScreen + formatElements 'text')")
        done = subprocess.run(
            [node, str(NODE_SCRIPT), str(modules)],
            input=json.dumps(xmls),
            capture_output=True,
            text=True,
            check=True,
        )
        answers: list[str] = json.loads(done.stdout)
        return answers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--dumps", type=Path, default=DUMPS)
    parser.add_argument("--mobile-mcp", type=Path, default=None, help="a node_modules dir holding it")
    parser.add_argument("--show", action="store_true", help="print our answer for each dump")
    args = parser.parse_args()
    enc = _counter()
    screens = (
        [(p.name, p.read_text()) for p in sorted(args.dumps.glob("*.xml"))] if args.dumps.is_dir() else []
    )
    if not screens:
        print(f"no dumps in {args.dumps}: only the sim's screens are measured")
    screens += asyncio.run(sim_screens())
    xmls = [xml for _, xml in screens]
    theirs = mobile_mcp_answers(xmls, args.mobile_mcp)
    rows = []
    total_ours = total_ours_json = total_theirs = 0
    labels_total = ours_found = theirs_found = 0
    both_ours = both_theirs = 0  # over the screens mobile-mcp lists anything of
    for i, (name, xml) in enumerate(screens):
        root = parse_hierarchy(xml[xml.find("<") :] if "<?xml" not in xml else xml[xml.find("<?xml") :])
        page = render(root, max_elements=DEFAULT_MAX_ELEMENTS)
        if args.show:
            print(f"== {name}\n{page.text}\n")
        labels = visible_labels(root)
        ours = len(enc.encode(page.text))
        as_json = len(enc.encode(json.dumps({"format": "compact", "screen": page.text}, ensure_ascii=False)))
        cov = coverage(labels, page.text, quoted=True)
        labels_total += len(labels)
        ours_found += round(cov * len(labels))
        total_ours += ours
        total_ours_json += as_json
        row = [name[:48], str(page.total), str(ours), str(as_json), f"{cov:.0%}"]
        if theirs is not None:
            mine = len(enc.encode(theirs[i]))
            their_cov = coverage(labels, theirs[i], quoted=False)
            theirs_found += round(their_cov * len(labels))
            total_theirs += mine
            if theirs[i].count("\n"):
                both_ours += ours
                both_theirs += mine
            row += [str(mine), f"{their_cov:.0%}", f"{ours / mine:.2f}" if mine else "-"]
        rows.append(row)
    headers = ["dump", "elements", "ours", "ours as JSON", "ours cov"]
    if theirs is not None:
        headers += ["mobile-mcp", "mcp cov", "ours/mcp"]
    total = ["TOTAL", "", str(total_ours), str(total_ours_json), f"{ours_found / max(1, labels_total):.1%}"]
    if theirs is not None:
        total += [
            str(total_theirs),
            f"{theirs_found / max(1, labels_total):.1%}",
            f"{total_ours / total_theirs:.2f}",
        ]
    rows.append(total)
    print(table(headers, rows))
    if theirs is not None:
        ratio = total_ours / total_theirs
        verdict = "meets" if ratio <= TARGET and ours_found == labels_total else "MISSES"
        print(
            f"\nover the screens both list: ours {both_ours}, mobile-mcp {both_theirs}, "
            f"ratio {both_ours / max(1, both_theirs):.2f}"
        )
        print(
            f"tokens ours/mobile-mcp {ratio:.2f} (target <= {TARGET}), coverage "
            f"{ours_found}/{labels_total}: {verdict}"
        )


if __name__ == "__main__":
    main()
