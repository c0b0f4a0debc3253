"""The house's shape, held against the code: the rooms docs/design.md draws, and no import circles.

Every import counts (module level, inside functions, under TYPE_CHECKING). Two circles are
plug-in tables by design and documented as such in docs/design.md: the sim's apps and their
screens (device/sim/), and the gateway's parts (gateway/).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Where each installed package's source lives in the checkout (setup.py maps the handler folders).
SOURCES = {
    "phoneuse_runtime": ROOT / "phoneuse_runtime",
    "phoneuse_runtime.actions": ROOT / "actions",
    "phoneuse_runtime.queries": ROOT / "queries",
}
TOP_LEVEL = {"__init__.py", "__main__.py", "app.py"}
PLUG_IN_TABLES = ("phoneuse_runtime.device.sim.", "phoneuse_runtime.gateway.")


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for prefix, folder in SOURCES.items():
        for path in folder.rglob("*.py"):
            if path.name.startswith("protocol_pb2"):
                continue
            parts = path.relative_to(folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join((prefix, *parts))] = path
    return found


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    def known(target: str) -> str | None:
        while target and target not in modules:
            target = target.rpartition(".")[0]
        return target or None

    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
            targets = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        for target in targets:
            hit = known(target)
            if hit is not None and hit != name:
                out.add(hit)
    return out


def _circles(edges: dict[str, set[str]]) -> list[set[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[set[str]] = []
    for start, first in edges.items():
        if start in index:
            continue
        work = [(start, iter(sorted(first)))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    circles.append(component)
    return circles


def test_no_import_circles_but_the_two_plug_in_tables() -> None:
    modules = _modules()
    edges = {name: _imports(name, path, modules) for name, path in modules.items()}
    circles = _circles(edges)
    unexpected = [
        sorted(circle)
        for circle in circles
        if not any(all(member.startswith(table) for member in circle) for table in PLUG_IN_TABLES)
    ]
    assert unexpected == [], f"import circles outside the plug-in tables: {unexpected}"
    assert len(circles) <= 2, f"more circles than the two plug-in tables: {[sorted(c) for c in circles]}"


def test_only_the_composition_root_sits_at_the_top_of_the_package() -> None:
    top = {path.name for path in (ROOT / "phoneuse_runtime").glob("*.py")}
    assert top <= TOP_LEVEL, f"modules at the package's top: {sorted(top - TOP_LEVEL)}"


def test_every_room_says_what_belongs_in_it() -> None:
    silent = [
        str(init.relative_to(ROOT))
        for folder in SOURCES.values()
        for init in folder.rglob("__init__.py")
        if not ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
    ]
    assert silent == [], f"packages whose __init__ has no docstring: {silent}"
