"""Built as wheels, as pip installs them: ours keeps the handler folders under the package's name,
and a third party's plug-in, written as docs/writing-an-action.md says, is served.

Both wheels are built offline (`pip wheel --no-build-isolation`, with the setuptools this Python
has), from copies in a temporary directory, so the checkout gains no build/ or egg-info.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import ServerFactory

ROOT = Path(__file__).resolve().parents[1]


def _wheel(project: Path, out: Path) -> Path:
    build = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
    done = subprocess.run(
        [*build, "-w", str(out), "."], cwd=project, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    (wheel,) = out.glob("*.whl")
    return wheel


def test_our_wheel_installs_actions_and_queries_under_the_package_name(tmp_path: Path) -> None:
    project = tmp_path / "src"
    project.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy(ROOT / name, project / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for folder in ("phoneuse_runtime", "actions", "queries"):
        shutil.copytree(ROOT / folder, project / folder, ignore=ignore)
    with zipfile.ZipFile(_wheel(project, tmp_path / "dist")) as wheel:
        names = wheel.namelist()
        (entry_points,) = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
        points = wheel.read(entry_points).decode()
    tops = {name.split("/", 1)[0] for name in names}
    assert {top for top in tops if not top.endswith(".dist-info")} == {"phoneuse_runtime"}, sorted(tops)
    assert "phoneuse_runtime/actions/ui.py" in names
    assert "phoneuse_runtime/queries/contacts.py" in names
    assert "phoneuse_runtime/rpc/protocol_pb2.pyi" in names, "the stubs' types ship too"
    # Every built-in handler module is named by its installed name, and each one is in the wheel.
    modules = re.findall(r"= (phoneuse_runtime\.(?:actions|queries)\.\w+)", points)
    assert len(modules) >= 14, points
    for module in modules:
        assert module.replace(".", "/") + ".py" in names, module
    assert not re.search(r"= (actions|queries)\.", points), points


PAGE = ROOT / "docs" / "writing-an-action.md"


def _documented_plugin() -> str:
    """The module docs/writing-an-action.md gives, as a reader would copy it."""
    page = PAGE.read_text(encoding="utf-8")
    return page.split("```python\n", 1)[1].split("```", 1)[0]


@pytest.fixture
def target(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "site"
    yield path
    if str(path) in sys.path:
        sys.path.remove(str(path))
    for name in [m for m in sys.modules if m.startswith("acme_actions")]:
        del sys.modules[name]


async def test_a_third_party_wheel_written_as_the_docs_say_is_served(
    tmp_path: Path, target: Path, make_client: ServerFactory
) -> None:
    project = tmp_path / "acme"
    project.mkdir()
    (project / "acme_actions.py").write_text(_documented_plugin(), encoding="utf-8")
    (project / "pyproject.toml").write_text(
        textwrap.dedent(
            """
            [build-system]
            requires = ["setuptools>=68"]
            build-backend = "setuptools.build_meta"

            [project]
            name = "acme-actions"
            version = "1.0"

            [tool.setuptools]
            py-modules = ["acme_actions"]

            """
        )
        + _documented_entry_points(),
        encoding="utf-8",
    )
    wheel = _wheel(project, tmp_path / "dist")
    installed = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(wheel)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert installed.returncode == 0, installed.stderr[-2000:]

    # `phoneuse-runtime actions` lists it, from the installed wheel alone.
    listed = subprocess.run(
        [sys.executable, "-m", "phoneuse_runtime", "actions", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**_environ(), "PYTHONPATH": str(target)},
    )
    assert listed.returncode == 0, listed.stderr[-2000:]
    assert "ACME_ECHO" in json.dumps(json.loads(listed.stdout)), listed.stdout[:2000]

    # And the real server serves it over gRPC.
    sys.path.insert(0, str(target))
    client = await make_client()
    assert await client.ok("ACME_ECHO", {"word": "hi", "times": "2"}) == {"via": "plugin", "echoed": "hi hi"}
    assert await client.fail("ACME_ECHO", {"times": "2"}) == "INVALID_PARAMS"


def _documented_entry_points() -> str:
    """The entry-point table docs/writing-an-action.md gives."""
    page = PAGE.read_text(encoding="utf-8")
    found = re.search(r"```toml\n(\[project\.entry-points[^`]*)```", page)
    assert found is not None, "docs/writing-an-action.md gives no entry-point table"
    return found.group(1)


def _environ() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("PHONEUSE_")}
