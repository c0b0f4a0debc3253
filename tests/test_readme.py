"""The README as a new user follows it: the quick start works on a python that refuses pip
outside a venv, the test command is CI's, every link stays inside the repository, and every
action and event type that `serve` serves is named."""

from __future__ import annotations

import re
from pathlib import Path

from phoneuse_runtime.app import served_registry
from phoneuse_runtime.config.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _section(title: str) -> str:
    return README.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def _blocks(text: str) -> list[str]:
    return [b.strip() for b in re.findall(r"```(?:sh|console)?\n(.*?)```", text, flags=re.S)]


def test_the_quick_start_makes_a_venv_before_it_installs() -> None:
    blocks = _blocks(_section("Quick start"))
    assert blocks[0] == "python3 -m venv .venv && . .venv/bin/activate"
    assert blocks[1] == "python3 -m pip install . && phoneuse-runtime serve"  # one command still


def test_the_readme_test_command_is_what_ci_runs_verbatim() -> None:
    command = _blocks(_section("Quick start"))[2]
    assert command == "python3 -m pip install -q -e '.[dev]' && python3 -m pytest -q"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert any(line.startswith(f"{command} ||") for line in ci)


def test_every_relative_link_is_inside_the_repository() -> None:
    for doc in (ROOT / "README.md", ROOT / "docs" / "design.md"):
        text = doc.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text):
            if "://" in target:
                continue
            resolved = (doc.parent / target).resolve()
            assert resolved.is_relative_to(ROOT), (doc.name, target)
            assert resolved.exists(), (doc.name, target)
    assert "../shared" not in README


def test_the_readme_names_every_action_and_event_serve_serves() -> None:
    registry = served_registry(Settings())
    missing = [name for name in [*registry.actions, *registry.events] if f"`{name}`" not in README]
    assert missing == []


def test_the_termux_install_is_the_script_not_pypi() -> None:
    assert "then `pip install phoneuse-runtime`" not in README
    assert "[`termux/install.sh`](termux/install.sh)" in _section("A real phone over adb")


def test_the_client_example_is_linked_and_timeout_ms_is_called_out() -> None:
    assert "[`examples/client.py`](examples/client.py)" in README
    assert "timeout_ms must be > 0, got 0" in README


def test_the_client_examples_run_line_is_in_the_readme() -> None:
    """The example had no run line (issue 28 §10): the README's is the one tested with --sim."""
    assert "python3 examples/client.py --sim" in README
